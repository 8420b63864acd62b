#include "config.h"

#include "catchup-plugin-private.h"

#include <string.h>

#include <connection.h>
#include <debug.h>
#include <eventloop.h>
#include <prefs.h>
#include <prpl.h>
#include <xmlnode.h>

/*
 * "Last present" on the main loop, for what must be decided before the writer could answer: the history an
 * XMPP room plays back on join, and whether an IRC rejoin left a gap. A client that asks for no history gets
 * the server's default (20 lines in prosody), so a longer absence would lose lines; joining with
 * <history since="last present"/> asks for everything said since, as far as the room keeps it.
 *
 * The cache is read from the store when the plugin loads, before any account connects (an autojoin right
 * after signing on must find it), and moved forward wherever presence is recorded. While the client runs, a
 * heartbeat stores the time of every joined room ("alive"), so that after a crash or a kill the next session
 * still knows when the client was last in the room; the time of the newest stored line counts as well.
 */

#define NS_MUC "http://jabber.org/protocol/muc"
/* A room setting of the store, beside the dialog's. */
#define ALIVE_KEY "presence-alive"
/* Shorter absences are reconnects, not worth a word. */
#define GAP_MIN_SECONDS 60

typedef struct {
  gint64 present;       /* last known presence: leaving, speaking, a catch-up */
  gint64 alive;         /* the last heartbeat while joined: the client was in the room, the user maybe not */
  gint64 gap_from;      /* the last absence this session could not see: from, to; 0 when none */
  gint64 gap_to;
  gboolean gap_filled;  /* a bouncer played it back */
  guint tell_id;        /* the absence is told once playback would have arrived */
  CatchupRoomKey *key;
} Presence;

static void
presence_free (Presence *p)
{
  if (p->tell_id != 0)
    purple_timeout_remove (p->tell_id);
  catchup_room_key_free (p->key);
  g_free (p);
}

static GHashTable *rooms; /* room spec -> Presence */
static guint heartbeat_id;

static Presence *
presence_of (const CatchupRoomKey *key, gboolean create)
{
  g_autofree char *spec = NULL;
  Presence *p;

  if (rooms == NULL)
    return NULL;
  spec = catchup_room_key_spec (key);
  p = g_hash_table_lookup (rooms, spec);
  if (p == NULL && create)
    {
      p = g_new0 (Presence, 1);
      p->key = catchup_room_key_copy (key);
      g_hash_table_insert (rooms, g_steal_pointer (&spec), p);
    }
  return p;
}

void
catchup_presence_note (const CatchupRoomKey *key, gint64 ts)
{
  Presence *p = presence_of (key, TRUE);

  if (p != NULL)
    p->present = MAX (p->present, ts);
}

/* Since when this client has not been in the room. */
static gint64
last_in_room (const Presence *p)
{
  return p ? MAX (p->present, p->alive) : 0;
}

/* ---------- the XMPP join ---------- */

/* The room's bare JID when packet is a MUC join; NULL otherwise. */
static char *
muc_join_room (xmlnode *packet, xmlnode **muc)
{
  const char *to = xmlnode_get_attrib (packet, "to");
  const char *slash;

  if (g_strcmp0 (packet->name, "presence") != 0 || xmlnode_get_attrib (packet, "type") != NULL || to == NULL
      || (slash = strchr (to, '/')) == NULL)
    return NULL;
  *muc = xmlnode_get_child_with_namespace (packet, "x", NS_MUC);
  if (*muc == NULL || xmlnode_get_child (*muc, "history") != NULL)
    return NULL;
  return g_strndup (to, slash - to);
}

static void
on_sending_xmlnode (PurpleConnection *gc, xmlnode **packet, gpointer data)
{
  xmlnode *muc = NULL;
  g_autofree char *room = NULL;
  g_autoptr (CatchupRoomKey) key = NULL;
  g_autofree char *since = NULL;
  Presence *p;

  if (packet == NULL || *packet == NULL || (room = muc_join_room (*packet, &muc)) == NULL)
    return;
  key = catchup_room_key_new_for (purple_connection_get_account (gc), room, PURPLE_CONV_TYPE_CHAT);
  p = presence_of (key, FALSE);
  if (last_in_room (p) <= 0 || (since = catchup_time_format_iso (last_in_room (p))) == NULL)
    return;
  xmlnode_set_attrib (xmlnode_new_child (muc, "history"), "since", since);
}

/* ---------- absences a protocol without history cannot fill ---------- */

static gboolean
keeps_history (PurpleConversation *conv)
{
  /* IRC servers play nothing back; XMPP rooms do (and a bouncer's playback arrives as ordinary lines). */
  return g_strcmp0 (purple_account_get_protocol_id (purple_conversation_get_account (conv)), "prpl-irc") != 0;
}

static char *
format_clock (gint64 ts, gint64 reference)
{
  g_autoptr (GDateTime) when = g_date_time_new_from_unix_local (ts);
  g_autoptr (GDateTime) ref = g_date_time_new_from_unix_local (reference);

  if (when == NULL || ref == NULL)
    return g_strdup ("?");
  /* The day only when it is not the reference's. */
  if (g_date_time_get_day_of_year (when) == g_date_time_get_day_of_year (ref)
      && g_date_time_get_year (when) == g_date_time_get_year (ref))
    return g_date_time_format (when, "%H:%M");
  return g_date_time_format (when, "%a %d %b %H:%M");
}

static char *
format_span (gint64 seconds)
{
  gint64 minutes = MAX (seconds / 60, 1), hours = minutes / 60, days = hours / 24;
  gint64 n = days >= 2 ? days : hours >= 2 ? hours : minutes;
  g_autofree char *number = g_strdup_printf ("%" G_GINT64_FORMAT, n);
  gulong plural = (gulong) MIN (n, G_MAXLONG);

  if (days >= 2)
    return g_strdup_printf (ngettext ("%s day", "%s days", plural), number);
  if (hours >= 2)
    return g_strdup_printf (ngettext ("%s hour", "%s hours", plural), number);
  return g_strdup_printf (ngettext ("%s minute", "%s minutes", plural), number);
}

/* After the join's playback would have arrived: the absence, unless a bouncer filled it. */
static gboolean
tell_absence (gpointer data)
{
  Presence *p = data;
  PurpleConversation *conv = catchup_room_key_find_conv (p->key);
  gint64 now = time (NULL);
  g_autofree char *from = NULL, *to = NULL, *span = NULL, *line = NULL;

  p->tell_id = 0;
  if (conv == NULL || p->gap_filled)
    return FALSE;
  from = format_clock (p->gap_from, now);
  to = format_clock (p->gap_to, now);
  span = format_span (p->gap_to - p->gap_from);
  /* TRANSLATORS: "You were away from 09:14 to 10:02 (48 minutes)." ZNC and soju are program names. */
  line = g_strdup_printf (_("You were away from %s to %s (%s). What was said meanwhile did not reach this client: "
                            "IRC servers keep no history. A bouncer with playback (for example ZNC's playback "
                            "module, or soju) fills such gaps."),
                          from, to, span);
  catchup_output_local (conv, line);
  return FALSE;
}

gint64
catchup_presence_joined (PurpleConversation *conv)
{
  g_autoptr (CatchupRoomKey) key = catchup_room_key_new (conv);
  Presence *p = presence_of (key, TRUE);
  gint64 now = time (NULL);
  gint64 since = last_in_room (p);

  if (since <= 0)
    return 0;
  if (keeps_history (conv) || now - since <= GAP_MIN_SECONDS || p->gap_from == since)
    return since;
  /* Once per absence: a second join signal for the same one says nothing. */
  p->gap_from = since;
  p->gap_to = now;
  p->gap_filled = FALSE;
  if (p->tell_id != 0)
    purple_timeout_remove (p->tell_id);
  p->tell_id = purple_timeout_add (MAX (purple_prefs_get_int (CATCHUP_PREF_SETTLE_MS), 1), tell_absence, p);
  return since;
}

void
catchup_presence_played_back (PurpleConversation *conv)
{
  g_autoptr (CatchupRoomKey) key = catchup_room_key_new (conv);
  Presence *p = presence_of (key, FALSE);

  if (p != NULL)
    p->gap_filled = TRUE;
}

char *
catchup_presence_gap_text (PurpleConversation *conv)
{
  g_autoptr (CatchupRoomKey) key = catchup_room_key_new (conv);
  Presence *p = presence_of (key, FALSE);
  g_autofree char *rejoined = NULL, *span = NULL;

  /* Only while nothing since the rejoin (a catch-up, a line of one's own) moved presence past it. */
  if (p == NULL || p->gap_from == 0 || p->gap_filled || p->present > p->gap_to)
    return NULL;
  rejoined = format_clock (p->gap_to, time (NULL));
  span = format_span (p->gap_to - p->gap_from);
  /* TRANSLATORS: "Nothing new since you rejoined at 10:02; the 48 minutes before were not received." */
  return g_strdup_printf (_("Nothing new since you rejoined at %s; the %s before were not received."), rejoined,
                          span);
}

/* ---------- the heartbeat ---------- */

/* On the writer: the heartbeat of every room in keys (CatchupRoomKey), as a setting of its own. */
static gpointer
store_alive (CatchupStore *store, gpointer data, GError **error)
{
  GPtrArray *keys = data;
  g_autofree char *now = g_strdup_printf ("%" G_GINT64_FORMAT, (gint64) time (NULL));

  for (guint i = 0; i < keys->len; i++)
    {
      CatchupRoomKey *key = keys->pdata[i];
      gint64 room = catchup_store_ensure_room (store, key->protocol, key->account, key->name, error);

      if (room == 0 || !catchup_store_set_setting (store, room, ALIVE_KEY, now, error))
        return NULL;
    }
  return GINT_TO_POINTER (1);
}

static gboolean
heartbeat (gpointer data)
{
  GPtrArray *keys = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_room_key_free);

  for (GList *l = purple_get_chats (); l != NULL; l = l->next)
    if (!purple_conv_chat_has_left (PURPLE_CONV_CHAT (l->data)))
      {
        CatchupRoomKey *key = catchup_room_key_new (l->data);
        Presence *p = presence_of (key, TRUE);

        p->alive = MAX (p->alive, (gint64) time (NULL));
        g_ptr_array_add (keys, key);
      }
  if (keys->len == 0 || catchup_plugin.writer == NULL)
    g_ptr_array_unref (keys);
  else
    catchup_writer_call_async (catchup_plugin.writer, store_alive, keys, (GDestroyNotify) g_ptr_array_unref, NULL,
                               NULL, NULL, NULL);
  return TRUE;
}

static void
heartbeat_restart (const char *name, PurplePrefType type, gconstpointer value, gpointer data)
{
  if (heartbeat_id != 0)
    purple_timeout_remove (heartbeat_id);
  heartbeat_id = purple_timeout_add_seconds (MAX (purple_prefs_get_int (CATCHUP_PREF_HEARTBEAT), 1), heartbeat,
                                             NULL);
}

/* ---------- load ---------- */

/* Every room's last presence, heartbeat and newest line, read at once on a connection of its own: one short
 * query while the plugin loads, before any account has connected. */
static void
load_rooms (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = catchup_store_open (catchup_writer_get_path (catchup_plugin.writer), &error);
  g_autoptr (GPtrArray) infos = store ? catchup_store_list_rooms (store, &error) : NULL;

  if (infos == NULL)
    {
      purple_debug_warning ("catchup", "last presence not read: %s\n", error ? error->message : "?");
      return;
    }
  for (guint i = 0; i < infos->len; i++)
    {
      CatchupRoomInfo *info = infos->pdata[i];
      CatchupRoomKey key = { info->protocol, info->account, info->name, PURPLE_CONV_TYPE_CHAT };
      g_autofree char *alive = catchup_store_get_setting (store, info->id, ALIVE_KEY, NULL);
      gint64 ts = MAX (info->last_present, info->last_ts);

      if (alive != NULL)
        ts = MAX (ts, g_ascii_strtoll (alive, NULL, 10));
      if (ts > 0)
        catchup_presence_note (&key, ts);
    }
}

void
catchup_presence_start (PurplePlugin *plugin)
{
  PurplePlugin *jabber = purple_find_prpl ("prpl-jabber");

  rooms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) presence_free);
  if (jabber != NULL)
    purple_signal_connect (jabber, "jabber-sending-xmlnode", plugin, PURPLE_CALLBACK (on_sending_xmlnode), NULL);
  if (catchup_plugin.writer == NULL)
    return;
  load_rooms ();
  heartbeat_restart (NULL, PURPLE_PREF_INT, NULL, NULL);
  purple_prefs_connect_callback (plugin, CATCHUP_PREF_HEARTBEAT, heartbeat_restart, NULL);
}

void
catchup_presence_stop (void)
{
  if (heartbeat_id != 0)
    purple_timeout_remove (heartbeat_id);
  heartbeat_id = 0;
  g_clear_pointer (&rooms, g_hash_table_unref);
}
