#include "config.h"

#include "catchup-plugin-private.h"

#include <stdlib.h>
#include <string.h>

#include <debug.h>
#include <eventloop.h>
#include <log.h>
#include <notify.h>
#include <util.h>

/*
 * Backfill: the user's existing Pidgin/Finch chat logs into the store, so that a fresh install can catch up on
 * rooms it was not present for. Logs are read through libpurple's log API (so every logger works: text, HTML,
 * the old formats), one log per idle callback on the main loop because purple_log_read must run there; each
 * log's messages go to the writer thread as one batch. Ids are derived from time, speaker and text as for live
 * lines, and logs carry the same timestamps, so lines indexed live and lines imported twice are stored once.
 */

/* How often a long import says how far it got. */
#define PROGRESS_INTERVAL (3 * G_USEC_PER_SEC)

typedef struct {
  CatchupRoomKey *key;
  PurpleAccount *account;
  GList *logs;          /* PurpleLog, oldest first, not yet read */
  guint n_logs;
  guint n_read;
  guint64 inserted;
} RoomImport;

typedef struct {
  GQueue rooms;         /* RoomImport, waiting */
  RoomImport *room;     /* being read */
  gboolean notify;      /* started from a menu: the result goes into a notification */
  guint idle_id;
  guint n_rooms, n_logs;
  guint64 inserted;
  gint64 last_report;
} Backfill;

static Backfill *backfill;

static void
room_import_free (RoomImport *room)
{
  if (room == NULL)
    return;
  g_list_free_full (room->logs, (GDestroyNotify) purple_log_free);
  catchup_room_key_free (room->key);
  g_free (room);
}

static void
backfill_free (Backfill *b)
{
  if (b->idle_id != 0)
    purple_timeout_remove (b->idle_id);
  g_queue_clear_full (&b->rooms, (GDestroyNotify) room_import_free);
  room_import_free (b->room);
  g_free (b);
}

/* ---------- reading a log ---------- */

static const char *
translate_purple (const char *format, gpointer data)
{
  /* libpurple's own catalogue: the logs were written in the language the client showed its notices in. */
  return g_dgettext ("pidgin", format);
}

/* The nick the user had in the room when the logger wrote it: the connection's, else what the protocols
 * derive from the account name (an IRC nick, an XMPP node). */
static char *
own_nick (PurpleAccount *account)
{
  PurpleConnection *gc = purple_account_get_connection (account);
  const char *display = gc ? purple_connection_get_display_name (gc) : NULL;
  const char *user = purple_account_get_username (account);

  if (display != NULL && *display != '\0' && strchr (display, '@') == NULL)
    return g_strdup (display);
  return g_strndup (user, strcspn (user, "@/"));
}

/* The log's text as its file has it (header line first) and how to read it. The common loggers' files are
 * read directly: the text logger's reader escapes and marks up links, which would only have to be undone. */
static char *
log_text (PurpleLog *log, CatchupChatlogFormat *format)
{
  PurpleLogCommonLoggerData *data = log->logger_data;
  const char *id = log->logger ? log->logger->id : NULL;
  PurpleLogReadFlags flags = 0;
  g_autofree char *read = NULL;
  char *text = NULL;

  if ((g_strcmp0 (id, "txt") == 0 || g_strcmp0 (id, "html") == 0) && data != NULL && data->path != NULL
      && g_file_get_contents (data->path, &text, NULL, NULL))
    {
      *format = g_strcmp0 (id, "html") == 0 ? CATCHUP_CHATLOG_HTML : CATCHUP_CHATLOG_TEXT;
      return text;
    }
  /* Any other logger, through libpurple: HTML when it keeps no newlines, else escaped text. */
  read = purple_log_read (log, &flags);
  if (read == NULL)
    return NULL;
  *format = (flags & PURPLE_LOG_READ_NO_NEWLINE) ? CATCHUP_CHATLOG_HTML : CATCHUP_CHATLOG_TEXT;
  if (*format == CATCHUP_CHATLOG_HTML)
    return g_strconcat ("\n", read, NULL);
  {
    g_auto (GStrv) lines = g_strsplit (read, "\n", -1);
    GString *plain = g_string_new ("\n");

    for (guint i = 0; lines[i] != NULL; i++)
      {
        g_autofree char *line = purple_markup_strip_html (lines[i]);
        g_string_append_printf (plain, "%s\n", line);
      }
    return g_string_free (plain, FALSE);
  }
}

/* The names the logger writes for the account's buddies (their aliases), back to their nicks. */
static GHashTable *
buddy_nicks (PurpleAccount *account)
{
  GHashTable *nicks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  GSList *buddies = purple_find_buddies (account, NULL);

  for (GSList *l = buddies; l != NULL; l = l->next)
    {
      const char *name = purple_buddy_get_name (l->data);
      const char *alias = purple_buddy_get_contact_alias (l->data);

      if (name != NULL && alias != NULL && strcmp (name, alias) != 0)
        g_hash_table_insert (nicks, g_strdup (alias), g_strdup (name));
    }
  g_slist_free (buddies);
  return nicks;
}

static GPtrArray *
read_log (PurpleLog *log, const char *room, PurpleAccount *account)
{
  g_autofree char *nick = own_nick (account);
  g_autoptr (GHashTable) nicks = buddy_nicks (account);
  const char *alias = purple_account_get_alias (account);
  const char *names[] = { alias, NULL };
  CatchupChatlogContext ctx = {
    .start = log->time, .room = room, .own_nick = nick, .own_names = names, .nicks = nicks,
    .translate = translate_purple,
  };
  CatchupChatlogFormat format = CATCHUP_CHATLOG_TEXT;
  g_autofree char *text = log_text (log, &format);
  g_autoptr (GTimeZone) zone = g_time_zone_new_local ();

  /* The file name keeps the offset of the log's start; the local zone is the better guess when it agrees,
   * as it also knows a change to summer time in the middle of a long log. */
#ifdef __USE_MISC
  if (log->tm != NULL)
    {
      ctx.utc_offset = (int) log->tm->tm_gmtoff;
      if (g_time_zone_get_offset (zone, g_time_zone_find_interval (zone, G_TIME_TYPE_UNIVERSAL, log->time))
          == ctx.utc_offset)
        ctx.zone = zone;
    }
  else
#endif
    ctx.zone = zone;
  return catchup_chatlog_parse (text ? text : "", format, &ctx);
}

/* ---------- reporting ---------- */

static char *
count_text (guint64 n)
{
  g_autofree char *number = g_strdup_printf ("%" G_GUINT64_FORMAT, n);

  return g_strdup_printf (ngettext ("%s new message", "%s new messages", (gulong) MIN (n, G_MAXULONG)), number);
}

/* Into the room's conversation when it is open, and always into the debug log. */
static void
report (const CatchupRoomKey *key, const char *text)
{
  PurpleConversation *conv = catchup_room_key_find_conv (key);

  purple_debug_info ("catchup", "log import: %s\n", text);
  if (conv != NULL)
    catchup_output_local (conv, text);
}

static void
report_progress (RoomImport *room)
{
  g_autofree char *news = count_text (room->inserted);
  g_autofree char *line = g_strdup_printf (_("Importing the chat logs of %s: %u of %u read, %s so far…"),
                                           room->key->name, room->n_read, room->n_logs, news);

  report (room->key, line);
}

static void
report_room_done (RoomImport *room)
{
  g_autofree char *news = count_text (room->inserted);
  g_autofree char *line = NULL;

  if (room->n_logs == 0)
    line = g_strdup_printf (_("No chat logs of %s were found."), room->key->name);
  else
    line = g_strdup_printf (ngettext ("Imported the chat log of %s: %s.", "Imported the chat logs of %s: %s.",
                                      room->n_logs),
                            room->key->name, news);
  report (room->key, line);
}

static void
report_all_done (Backfill *b)
{
  g_autofree char *news = count_text (b->inserted);
  g_autofree char *logs = g_strdup_printf (ngettext ("%u chat log", "%u chat logs", b->n_logs), b->n_logs);
  g_autofree char *rooms = g_strdup_printf (ngettext ("%u room", "%u rooms", b->n_rooms), b->n_rooms);
  /* Translators: "12 chat logs of 3 rooms read: 540 new messages." */
  g_autofree char *text = g_strdup_printf (_("%s of %s read: %s."), logs, rooms, news);

  purple_debug_info ("catchup", "log import: %s\n", text);
  if (b->notify)
    purple_notify_info (catchup_plugin.plugin, _("Catch-up"), _("Chat logs imported"), text);
}

/* ---------- the import loop: one log per main-loop turn ---------- */

typedef struct {
  CatchupRoomKey *key;
  GPtrArray *lines;     /* CatchupChatlogLine of one log */
} Batch;

static void
batch_free (gpointer data)
{
  Batch *batch = data;

  catchup_room_key_free (batch->key);
  g_ptr_array_unref (batch->lines);
  g_free (batch);
}

/* A nick change of the log, as the live signals record them; joins and parts are not kept. */
static gboolean
store_event (CatchupStore *store, gint64 room, const CatchupChatlogLine *line, GError **error)
{
  if (line->kind != CATCHUP_CHATLOG_NICK)
    return TRUE;
  return catchup_store_add_nick_change (store, room, line->ts, line->nick, line->text, error);
}

/* On the writer thread, in one transaction: the log's renames, then its messages; how many of those were new. */
static gpointer
store_batch (CatchupStore *store, gpointer data, GError **error)
{
  Batch *batch = data;
  g_autoptr (GPtrArray) msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  gint64 room = catchup_store_ensure_room (store, batch->key->protocol, batch->key->account, batch->key->name,
                                           error);
  g_autofree guint *inserted = g_new0 (guint, 1);

  if (room == 0 || !catchup_store_begin (store, error))
    return NULL;
  for (guint i = 0; i < batch->lines->len; i++)
    {
      CatchupChatlogLine *line = batch->lines->pdata[i];
      g_autofree char *nick = NULL, *text = NULL;
      CatchupMessage *msg;

      if (line->kind != CATCHUP_CHATLOG_MESSAGE)
        {
          if (!store_event (store, room, line, error))
            goto failed;
          continue;
        }
      /* No id: derived from time, speaker and text as for live lines, so both are stored once; cleaned as live
       * lines are (an entity in a log can decode to a control character). */
      nick = catchup_text_clean (line->nick, -1, CATCHUP_TEXT_ONE_LINE);
      text = catchup_text_clean (line->text, -1, CATCHUP_TEXT_MULTI_LINE);
      msg = catchup_message_new (NULL, line->ts, nick, text);
      msg->flags = line->flags;
      g_ptr_array_add (msgs, msg);
    }
  if (!catchup_store_add_batch (store, room, msgs, inserted, error) || !catchup_index_update (store, room, error))
    goto failed;
  /* A failed commit has rolled back already. */
  return catchup_store_commit (store, error) ? g_steal_pointer (&inserted) : NULL;

failed:
  catchup_store_rollback (store);
  return NULL;
}

static gboolean step (gpointer data);

static void
step_later (void)
{
  backfill->idle_id = purple_timeout_add (0, step, NULL);
}

static void
stored (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree guint *inserted = NULL;

  /* Unloading cancels: the import is gone by then. */
  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (res))) || backfill == NULL)
    return;
  inserted = catchup_writer_call_finish (catchup_plugin.writer, res, &error);
  if (inserted != NULL)
    {
      backfill->room->inserted += *inserted;
      backfill->inserted += *inserted;
    }
  else if (error != NULL)
    purple_debug_warning ("catchup", "log import of %s: %s\n", backfill->room->key->name, error->message);
  step_later ();
}

static void
finish_room (void)
{
  report_room_done (backfill->room);
  g_clear_pointer (&backfill->room, room_import_free);
}

static void
next_room (void)
{
  backfill->room = g_queue_pop_head (&backfill->rooms);
  if (backfill->room == NULL)
    return;
  /* The account may have been deleted since the import started. */
  if (g_list_find (purple_accounts_get_all (), backfill->room->account) != NULL)
    backfill->room->logs = g_list_reverse (purple_log_get_logs (PURPLE_LOG_CHAT, backfill->room->key->name,
                                                                backfill->room->account));
  backfill->room->n_logs = g_list_length (backfill->room->logs);
  backfill->n_logs += backfill->room->n_logs;
  backfill->last_report = g_get_monotonic_time ();
}

/* Reads one log and hands its messages to the writer; the next step follows its write. */
static gboolean
step (gpointer data)
{
  RoomImport *room;
  PurpleLog *log;
  g_autoptr (GPtrArray) lines = NULL;
  Batch *batch;

  backfill->idle_id = 0;
  if (backfill->room != NULL && backfill->room->logs == NULL)
    finish_room ();
  if (backfill->room == NULL)
    next_room ();
  if ((room = backfill->room) == NULL)
    {
      report_all_done (backfill);
      g_clear_pointer (&backfill, backfill_free);
      return FALSE;
    }
  if (room->logs == NULL)
    {
      step_later ();
      return FALSE;
    }
  log = room->logs->data;
  room->logs = g_list_delete_link (room->logs, room->logs);
  lines = read_log (log, room->key->name, room->account);
  purple_log_free (log);
  room->n_read++;
  if (g_get_monotonic_time () - backfill->last_report >= PROGRESS_INTERVAL)
    {
      backfill->last_report = g_get_monotonic_time ();
      report_progress (room);
    }
  if (lines->len == 0)
    {
      step_later ();
      return FALSE;
    }
  batch = g_new0 (Batch, 1);
  batch->key = catchup_room_key_copy (room->key);
  batch->lines = g_steal_pointer (&lines);
  catchup_writer_call_async (catchup_plugin.writer, store_batch, batch, batch_free, g_free,
                             catchup_plugin.cancellable, stored, NULL);
  return FALSE;
}

/* ---------- starting ---------- */

static gboolean
can_start (PurpleConversation *conv)
{
  const char *problem = NULL;

  if (catchup_plugin.writer == NULL)
    problem = _("The catch-up history database could not be opened; see the debug log.");
  else if (backfill != NULL)
    problem = _("Chat logs are being imported already; wait until that is done.");
  if (problem == NULL)
    return TRUE;
  if (conv != NULL)
    catchup_output_local (conv, problem);
  else
    purple_notify_error (catchup_plugin.plugin, _("Catch-up"), _("Cannot import chat logs"), problem);
  return FALSE;
}

static void
add_room (Backfill *b, PurpleAccount *account, const char *name)
{
  RoomImport *room = g_new0 (RoomImport, 1);

  room->key = catchup_room_key_new_for (account, name, PURPLE_CONV_TYPE_CHAT);
  room->account = account;
  g_queue_push_tail (&b->rooms, room);
  b->n_rooms++;
}

void
catchup_backfill_room (PurpleAccount *account, const char *name, PurpleConversation *conv)
{
  if (!can_start (conv))
    return;
  backfill = g_new0 (Backfill, 1);
  backfill->notify = conv == NULL;
  add_room (backfill, account, name);
  if (conv != NULL)
    {
      g_autofree char *line = g_strdup_printf (_("Importing the chat logs of %s…"), name);
      catchup_output_local (conv, line);
    }
  step_later ();
}

/* A room's name as its conversation carries it (the log folder's name is normalised). */
static const char *
room_name (const PurpleLogSet *set)
{
  PurpleConversation *conv = purple_find_conversation_with_account (PURPLE_CONV_TYPE_CHAT, set->name, set->account);

  return conv != NULL ? purple_conversation_get_name (conv) : set->name;
}

static void
add_set (gpointer key, gpointer value, gpointer data)
{
  PurpleLogSet *set = key;

  if (set->type == PURPLE_LOG_CHAT && set->account != NULL)
    add_room (data, set->account, room_name (set));
}

void
catchup_backfill_all (void)
{
  GHashTable *sets;

  if (!can_start (NULL))
    return;
  backfill = g_new0 (Backfill, 1);
  backfill->notify = TRUE;
  sets = purple_log_get_log_sets ();
  g_hash_table_foreach (sets, add_set, backfill);
  g_hash_table_destroy (sets);
  step_later ();
}

static void
all_action (PurplePluginAction *action)
{
  catchup_backfill_all ();
}

GList *
catchup_backfill_actions (PurplePlugin *plugin, gpointer context)
{
  return g_list_append (NULL, purple_plugin_action_new (_("Import all chat logs into catch-up"), all_action));
}

void
catchup_backfill_stop (void)
{
  g_clear_pointer (&backfill, backfill_free);
}
