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
/* A speaker in a text log: longer or wordier "name: " prefixes are system lines ("The topic is: ..."). */
#define MAX_NICK_BYTES 64
#define MAX_NICK_SPACES 2
/* The HTML logger's colour of the user's own lines. */
#define HTML_OWN_COLOR "#16569E"

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

/* ---------- parsing a log's text ---------- */

/* libpurple's loggers write a line's date too when the line is older than this at writing time (history
 * playback), so a line with a bare time was written at most this long after it was said. */
#define UNDATED_MAX_AGE (20 * 60)

typedef struct {
  GTimeZone *zone;      /* the log's own offset when the logger kept it */
  gint64 reference;     /* the latest line with a bare time; the log's start at first */
  GRegex *stamp_re;
} Clock;

static int
year_of (const char *text)
{
  int y = atoi (text);

  return y < 100 ? 2000 + y : y;
}

/* A date as the logger wrote it with %x: ISO (Y-M-D), US and the C locale's (M/D/Y) or European (D.M.Y); the
 * stamp pattern has three groups for each, in that order. */
static gboolean
match_date (GMatchInfo *m, int *y, int *mo, int *d)
{
  static const struct { int year, month, day; } orders[] = { { 1, 2, 3 }, { 6, 4, 5 }, { 9, 8, 7 } };

  for (guint i = 0; i < G_N_ELEMENTS (orders); i++)
    {
      g_autofree char *year = g_match_info_fetch (m, orders[i].year);
      g_autofree char *month = g_match_info_fetch (m, orders[i].month);
      g_autofree char *day = g_match_info_fetch (m, orders[i].day);

      if (year == NULL || *year == '\0')
        continue;
      *y = year_of (year);
      *mo = atoi (month);
      *d = atoi (day);
      return TRUE;
    }
  return FALSE;
}

/* A line's "(HH:MM:SS)" or "(date HH:MM:SS)" as seconds. Lines with a bare time are in writing order, give or
 * take playback of the last minutes: one clearly earlier than the latest such line is on the next day. */
static gboolean
parse_stamp (Clock *clock, const char *stamp, gint64 *ts)
{
  g_autoptr (GMatchInfo) m = NULL;
  g_autoptr (GDateTime) ref_utc = NULL;
  g_autoptr (GDateTime) ref = NULL;
  g_autoptr (GDateTime) when = NULL;
  g_autofree char *hs = NULL, *ms = NULL, *ss = NULL, *ampm = NULL;
  int y, mo, d, h;
  gboolean dated;

  if (!g_regex_match (clock->stamp_re, stamp, 0, &m))
    return FALSE;
  hs = g_match_info_fetch (m, 10);
  ms = g_match_info_fetch (m, 11);
  ss = g_match_info_fetch (m, 12);
  ampm = g_match_info_fetch (m, 13);
  h = atoi (hs);
  if (ampm != NULL && *ampm != '\0')
    h = h % 12 + (g_ascii_tolower (*ampm) == 'p' ? 12 : 0);
  ref_utc = g_date_time_new_from_unix_utc (clock->reference);
  ref = ref_utc ? g_date_time_to_timezone (ref_utc, clock->zone) : NULL;
  if (ref == NULL)
    return FALSE;
  dated = match_date (m, &y, &mo, &d);
  if (!dated)
    g_date_time_get_ymd (ref, &y, &mo, &d);
  when = g_date_time_new (clock->zone, y, mo, d, h, atoi (ms), atoi (ss));
  if (when == NULL)
    return FALSE;
  *ts = g_date_time_to_unix (when);
  if (dated)
    return TRUE;
  if (*ts < clock->reference - UNDATED_MAX_AGE)
    *ts += 86400;
  else if (*ts > clock->reference + 12 * 3600)
    *ts -= 86400; /* said just before a log that started after midnight */
  clock->reference = MAX (clock->reference, *ts);
  return TRUE;
}

static CatchupMessage *
new_message (gint64 ts, const char *nick, const char *body, guint flags)
{
  g_autofree char *text = g_strstrip (g_strdup (body));
  CatchupMessage *msg;

  if (*nick == '\0' || *text == '\0')
    return NULL;
  msg = catchup_message_new (NULL, ts, nick, text);
  msg->flags = flags;
  return msg;
}

static gboolean
plausible_nick (const char *nick)
{
  guint spaces = 0;

  if (*nick == '\0' || strlen (nick) > MAX_NICK_BYTES || strpbrk (nick, "()<>[]") != NULL)
    return FALSE;
  for (const char *p = nick; *p; p++)
    if (*p == ' ')
      spaces++;
  return spaces <= MAX_NICK_SPACES;
}

/* "nick: text" or "***nick text" (an action) after the time of a plain-text line; NULL for system lines. */
static CatchupMessage *
parse_text_rest (gint64 ts, const char *rest)
{
  const char *colon;

  if (g_str_has_prefix (rest, "***"))
    {
      const char *space = strchr (rest + 3, ' ');
      g_autofree char *nick = space ? g_strndup (rest + 3, space - rest - 3) : NULL;

      return nick ? new_message (ts, nick, space + 1, CATCHUP_MESSAGE_ACTION) : NULL;
    }
  colon = strstr (rest, ": ");
  if (colon == NULL)
    return NULL;
  {
    g_autofree char *nick = g_strndup (rest, colon - rest);

    return plausible_nick (nick) ? new_message (ts, nick, colon + 2, 0) : NULL;
  }
}

/* The HTML logger's line after the time: ' <b>nick:</b></font> text' or ' <b>***nick</b></font> text';
 * system lines have '<b> text</b>'. */
static CatchupMessage *
parse_html_rest (GRegex *re, gint64 ts, const char *line, const char *rest)
{
  g_autoptr (GMatchInfo) m = NULL;
  g_autofree char *who = NULL, *body_html = NULL, *nick = NULL, *body = NULL;
  guint flags = 0;
  gsize len;

  if (!g_regex_match (re, rest, 0, &m))
    return NULL;
  who = g_match_info_fetch (m, 1);
  body_html = g_match_info_fetch (m, 2);
  len = strlen (who);
  if (g_str_has_prefix (who, "***"))
    {
      flags |= CATCHUP_MESSAGE_ACTION;
      nick = purple_unescape_html (who + 3);
    }
  else if (len > 1 && who[len - 1] == ':' && who[0] != ' ')
    {
      who[len - 1] = '\0';
      nick = purple_unescape_html (who);
    }
  else
    return NULL;
  if (strstr (line, HTML_OWN_COLOR) != NULL)
    flags |= CATCHUP_MESSAGE_OWN;
  body = purple_markup_strip_html (body_html);
  return new_message (ts, nick, body, flags);
}

static GPtrArray *
parse_log (const char *text, gboolean html, gint64 start, GTimeZone *zone)
{
  g_autoptr (GRegex) line_re = NULL;
  g_autoptr (GRegex) html_re = NULL;
  GPtrArray *msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  Clock clock = { zone, start, NULL };
  CatchupMessage *last = NULL;   /* a multi-line message continues on lines without a time */

  if (html)
    {
      line_re = g_regex_new ("^(?:<[^>]+>)*\\(([^()]{5,40})\\)</font>(.*)$", 0, 0, NULL);
      html_re = g_regex_new ("^ <b>([^<]+)</b></font> ?(.*?)(<br ?/?>)?$", 0, 0, NULL);
    }
  else
    line_re = g_regex_new ("^\\(([^()]{5,40})\\) (.*)$", 0, 0, NULL);
  clock.stamp_re = g_regex_new ("^(?:(\\d{4})-(\\d\\d)-(\\d\\d)|(\\d{1,2})/(\\d{1,2})/(\\d{2,4})"
                                "|(\\d{1,2})\\.(\\d{1,2})\\.(\\d{2,4}))?\\s*"
                                "(\\d{1,2}):(\\d\\d):(\\d\\d)\\s*([AaPp])?\\.?[Mm]?\\.?$",
                                0, 0, NULL);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr (GMatchInfo) m = NULL;
      g_autofree char *stamp = NULL, *rest = NULL;
      gint64 ts = 0;

      /* Text logs come back escaped and linkified; stripping turns newlines into spaces, so line by line. */
      if (!html)
        {
          char *plain = purple_markup_strip_html (lines[i]);
          g_free (lines[i]);
          lines[i] = plain;
        }
      g_strchomp (lines[i]);
      if (!g_regex_match (line_re, lines[i], 0, &m))
        {
          if (!html && last != NULL && *lines[i] != '\0')
            {
              char *joined = g_strconcat (last->text, "\n", lines[i], NULL);
              g_free (last->text);
              last->text = joined;
            }
          continue;
        }
      stamp = g_match_info_fetch (m, 1);
      rest = g_match_info_fetch (m, 2);
      last = NULL;
      if (!parse_stamp (&clock, stamp, &ts))
        continue;
      last = html ? parse_html_rest (html_re, ts, lines[i], rest) : parse_text_rest (ts, rest);
      if (last != NULL)
        g_ptr_array_add (msgs, last);
    }
  g_regex_unref (clock.stamp_re);
  return msgs;
}

static GPtrArray *
read_log (PurpleLog *log)
{
  PurpleLogReadFlags flags = 0;
  g_autofree char *text = purple_log_read (log, &flags);
  g_autoptr (GTimeZone) zone = NULL;

  /* Only the HTML logger keeps its lines' markup (and no newlines); the others are text, escaped. */
#ifdef __USE_MISC
  if (log->tm != NULL)
    zone = g_time_zone_new_offset (log->tm->tm_gmtoff);
#endif
  if (zone == NULL)
    zone = g_time_zone_new_local ();
  return parse_log (text ? text : "", (flags & PURPLE_LOG_READ_NO_NEWLINE) != 0, log->time, zone);
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
  GPtrArray *msgs;
} Batch;

static void
batch_free (gpointer data)
{
  Batch *batch = data;

  catchup_room_key_free (batch->key);
  g_ptr_array_unref (batch->msgs);
  g_free (batch);
}

/* On the writer thread: how many of the batch were new. */
static gpointer
store_batch (CatchupStore *store, gpointer data, GError **error)
{
  Batch *batch = data;
  gint64 room = catchup_store_ensure_room (store, batch->key->protocol, batch->key->account, batch->key->name,
                                           error);
  guint *inserted;

  if (room == 0)
    return NULL;
  inserted = g_new0 (guint, 1);
  if (!catchup_store_add_batch (store, room, batch->msgs, inserted, error))
    g_clear_pointer (&inserted, g_free);
  return inserted;
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
  g_autoptr (GPtrArray) msgs = NULL;
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
  msgs = read_log (log);
  purple_log_free (log);
  room->n_read++;
  if (g_get_monotonic_time () - backfill->last_report >= PROGRESS_INTERVAL)
    {
      backfill->last_report = g_get_monotonic_time ();
      report_progress (room);
    }
  if (msgs->len == 0)
    {
      step_later ();
      return FALSE;
    }
  batch = g_new0 (Batch, 1);
  batch->key = catchup_room_key_copy (room->key);
  batch->msgs = g_steal_pointer (&msgs);
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
