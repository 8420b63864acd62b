#include "config.h"

#include "catchup-plugin-private.h"

#include <stdlib.h>
#include <string.h>

#include <connection.h>
#include <debug.h>
#include <eventloop.h>
#include <prefs.h>
#include <util.h>

/* Lines that are never chat turns: libpurple's own notices, errors, and whatever asked not to be logged
 * (OTR and similar plugins, and this plugin's own output). */
#define NEVER_INDEXED (PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_ERROR | PURPLE_MESSAGE_NO_LOG)

/* What the automatic catch-up remembers about a room while the plugin is loaded. */
typedef struct {
  CatchupRoomKey *key;
  guint settle_id;      /* quiet-period timer after a join; 0 when not waiting */
  gint64 absent_since;  /* when the client was last in the room before this join; 0 when unknown */
  gint64 joined;        /* monotonic microseconds of the last join */
  gint64 last_auto;     /* monotonic microseconds of the last automatic catch-up */
} RoomState;

static GHashTable *room_states; /* room spec -> RoomState */

static void
room_state_free (RoomState *state)
{
  if (state->settle_id != 0)
    purple_timeout_remove (state->settle_id);
  catchup_room_key_free (state->key);
  g_free (state);
}

static RoomState *
room_state (PurpleConversation *conv, gboolean create)
{
  g_autoptr (CatchupRoomKey) key = catchup_room_key_new (conv);
  g_autofree char *spec = catchup_room_key_spec (key);
  RoomState *state = g_hash_table_lookup (room_states, spec);

  if (state == NULL && create)
    {
      state = g_new0 (RoomState, 1);
      state->key = g_steal_pointer (&key);
      g_hash_table_insert (room_states, g_steal_pointer (&spec), state);
    }
  return state;
}

/* ---------- indexing ---------- */

/* The time the message was sent: no signal carries the server's timestamp (XMPP playback keeps the original
 * one), but the conversation's newest history entry, added just before wrote-*-msg, does. */
static gint64
message_time (PurpleConversation *conv, PurpleMessageFlags flags)
{
  GList *history = purple_conversation_get_message_history (conv);
  PurpleConvMessage *newest = history ? history->data : NULL;

  if (newest != NULL && purple_conversation_message_get_flags (newest) == flags)
    return purple_conversation_message_get_timestamp (newest);
  return time (NULL);
}

static char *
speaker_alias (PurpleConversation *conv, const char *who)
{
  PurpleConvChatBuddy *cb;
  const char *alias = NULL;

  if (purple_conversation_get_type (conv) == PURPLE_CONV_TYPE_CHAT)
    {
      cb = purple_conv_chat_cb_find (PURPLE_CONV_CHAT (conv), who);
      alias = cb ? cb->alias : NULL;
    }
  return alias && *alias && g_strcmp0 (alias, who) != 0 ? catchup_text_clean (alias, -1, CATCHUP_TEXT_ONE_LINE) : NULL;
}

static CatchupMessage *
message_from (PurpleConversation *conv, const char *who, const char *markup, PurpleMessageFlags flags)
{
  g_autofree char *stripped = purple_markup_strip_html (markup);
  /* what a peer or a server sends is untrusted: invalid UTF-8 crashed the gap detector later, and control
   * characters would reach every terminal and conversation the text is shown in */
  g_autofree char *text = catchup_text_clean (stripped, -1, CATCHUP_TEXT_MULTI_LINE);
  g_autofree char *speaker = catchup_text_clean (who, -1, CATCHUP_TEXT_ONE_LINE);
  CatchupMessage *msg;
  guint mflags = 0;
  const char *body;

  g_strstrip (text);
  body = text;
  if (g_str_has_prefix (body, "/me "))
    {
      mflags |= CATCHUP_MESSAGE_ACTION;
      body += strlen ("/me ");
    }
  if (*body == '\0')
    return NULL;
  if (flags & PURPLE_MESSAGE_SEND)
    mflags |= CATCHUP_MESSAGE_OWN;
  if (flags & PURPLE_MESSAGE_DELAYED)
    mflags |= CATCHUP_MESSAGE_DELAYED;
  /* No id: the store derives a stable one from time, speaker and text, so playback is stored once. */
  msg = catchup_message_new (NULL, message_time (conv, flags), speaker, body);
  msg->alias = speaker_alias (conv, who);
  msg->flags = mflags;
  return msg;
}

static gboolean
wants_index (PurpleConversation *conv)
{
  CatchupRoomSettings settings;
  gboolean index;

  if (purple_conversation_get_type (conv) == PURPLE_CONV_TYPE_IM
      && !purple_prefs_get_bool (CATCHUP_PREF_INDEX_IMS))
    return FALSE;
  /* IMs are indexed only when the user turned that on themselves; chats only with logging on or consent. */
  if (purple_conversation_get_type (conv) == PURPLE_CONV_TYPE_CHAT && !catchup_privacy_allows_index ())
    return FALSE;
  catchup_room_settings_get (conv, &settings);
  index = settings.index;
  catchup_room_settings_clear (&settings);
  return index;
}

/* ---------- IRC bouncer playback ----------
 * libpurple's IRC asks for no server-time, so a bouncer (ZNC's buffer) plays a channel's backlog back right
 * after the join as ordinary lines with the time prefixed to the text: "[10:02:33] text". Those get their own
 * time and are marked as playback, so that they sort where they were said and are stored once. */

/* How long after a join lines can be playback. */
#define PLAYBACK_WINDOW (30 * G_USEC_PER_SEC)

static gboolean
bouncer_playback (PurpleConversation *conv, CatchupMessage *msg)
{
  g_autoptr (GRegex) stamp_re = NULL;
  RoomState *state = room_state (conv, FALSE);
  g_autoptr (GMatchInfo) m = NULL;
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autoptr (GDateTime) when = NULL;
  g_autofree char *h = NULL, *mi = NULL, *sec = NULL, *rest = NULL;
  gint64 ts;

  if (state == NULL || g_get_monotonic_time () - state->joined > PLAYBACK_WINDOW
      || g_strcmp0 (purple_account_get_protocol_id (purple_conversation_get_account (conv)), "prpl-irc") != 0)
    return FALSE;
  stamp_re = g_regex_new ("^\\[(\\d\\d):(\\d\\d)(?::(\\d\\d))?\\] (.+)$", G_REGEX_DOTALL, 0, NULL);
  if (!g_regex_match (stamp_re, msg->text, 0, &m))
    return FALSE;
  h = g_match_info_fetch (m, 1);
  mi = g_match_info_fetch (m, 2);
  sec = g_match_info_fetch (m, 3);
  rest = g_match_info_fetch (m, 4);
  when = g_date_time_new_local (g_date_time_get_year (now), g_date_time_get_month (now),
                                g_date_time_get_day_of_month (now), atoi (h), atoi (mi), sec && *sec ? atoi (sec) : 0);
  if (when == NULL)
    return FALSE;
  ts = g_date_time_to_unix (when);
  /* A time later than now was yesterday's. */
  if (ts > g_date_time_to_unix (now) + 60)
    ts -= 86400;
  msg->ts = ts;
  g_free (msg->text);
  msg->text = g_steal_pointer (&rest);
  msg->flags |= CATCHUP_MESSAGE_DELAYED;
  return TRUE;
}

static void
index_message (PurpleConversation *conv, const char *who, const char *markup, PurpleMessageFlags flags)
{
  g_autoptr (CatchupRoomKey) key = NULL;
  CatchupMessage *msg;

  if (catchup_plugin.writer == NULL || (flags & NEVER_INDEXED) || who == NULL || *who == '\0' || markup == NULL)
    return;
  if (!wants_index (conv))
    return;
  /* A bouncer's own notices ("Buffer Playback...") come from "***", which no IRC nick can be. */
  if (strcmp (who, "***") == 0)
    return;
  msg = message_from (conv, who, markup, flags);
  if (msg == NULL)
    return;
  if (!(flags & PURPLE_MESSAGE_SEND) && bouncer_playback (conv, msg))
    catchup_presence_played_back (conv);
  if ((flags & PURPLE_MESSAGE_SEND) && catchup_output_take_echo (conv, msg->text))
    {
      catchup_message_free (msg);
      return;
    }
  key = catchup_room_key_new (conv);
  /* Speaking is being present; playback of old own lines only moves it forward if they are newer. */
  if (flags & PURPLE_MESSAGE_SEND)
    {
      catchup_writer_mark_present (catchup_plugin.writer, key->protocol, key->account, key->name, msg->ts);
      catchup_presence_note (key, msg->ts);
    }
  catchup_writer_add (catchup_plugin.writer, key->protocol, key->account, key->name, msg);
}

/* ---------- the automatic catch-up on rejoin ---------- */

typedef struct {
  CatchupRoomKey *key;
  char *spec;
  gint64 since;         /* the absence's start as the join knew it; 0: the store's last presence */
} CountJob;

typedef struct {
  gint64 last_present;
  gint64 count;
} CountResult;

static void
count_job_free (gpointer data)
{
  CountJob *job = data;

  catchup_room_key_free (job->key);
  g_free (job->spec);
  g_free (job);
}

/* On the writer thread: how many turns of others arrived since the user was last present. */
static gpointer
count_since_present (CatchupStore *store, gpointer data, GError **error)
{
  CountJob *job = data;
  g_autoptr (CatchupRoomInfo) info = NULL;
  g_autoptr (GPtrArray) since = NULL;
  CountResult *result = g_new0 (CountResult, 1);
  gint64 room = catchup_store_find_room (store, job->spec, NULL);

  if (room == 0 || (info = catchup_store_room_info (store, room, NULL)) == NULL)
    return result;
  /* The join's view wins: after a crash the store's last presence is older than the client's last heartbeat. */
  result->last_present = job->since > 0 ? job->since : info->last_present;
  if (result->last_present == 0)
    return result;
  since = catchup_store_since (store, room, result->last_present, error);
  if (since == NULL)
    {
      g_free (result);
      return NULL;
    }
  for (guint i = 0; i < since->len; i++)
    if (!(((CatchupMessage *) since->pdata[i])->flags & (CATCHUP_MESSAGE_OWN | CATCHUP_MESSAGE_EVENT)))
      result->count++;
  return result;
}

static void
count_done (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (CatchupRoomKey) key = data;
  g_autoptr (GError) error = NULL;
  g_autofree CountResult *result = NULL;
  CatchupRoomSettings settings;
  PurpleConversation *conv;
  RoomState *state;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (res))))
    return;
  result = catchup_writer_call_finish (catchup_plugin.writer, res, &error);
  conv = catchup_room_key_find_conv (key);
  if (result == NULL || conv == NULL || result->last_present == 0)
    return;
  catchup_room_settings_get (conv, &settings);
  state = room_state (conv, TRUE);
  purple_debug_info ("catchup", "%s: %" G_GINT64_FORMAT " messages since last present (threshold %d)\n",
                     key->name, result->count, settings.threshold);
  if (settings.auto_catchup && result->count >= settings.threshold
      && (state->last_auto == 0
          || g_get_monotonic_time () - state->last_auto
             >= (gint64) purple_prefs_get_int (CATCHUP_PREF_COOLDOWN) * G_USEC_PER_SEC))
    {
      CatchupWindow window = { .kind = CATCHUP_WINDOW_SINCE, .since = result->last_present,
                               .max_messages = settings.max_window };

      state->last_auto = g_get_monotonic_time ();
      catchup_run (conv, &window, FALSE, TRUE);
    }
  catchup_room_settings_clear (&settings);
}

static gboolean
settled (gpointer data)
{
  RoomState *state = data;
  CountJob *job;

  state->settle_id = 0;
  if (catchup_plugin.writer == NULL)
    return FALSE;
  job = g_new0 (CountJob, 1);
  job->key = catchup_room_key_copy (state->key);
  job->spec = catchup_room_key_spec (state->key);
  job->since = state->absent_since;
  catchup_writer_call_async (catchup_plugin.writer, count_since_present, job, count_job_free, g_free,
                             catchup_plugin.cancellable, count_done, catchup_room_key_copy (state->key));
  return FALSE;
}

/* (Re)starts the quiet period: history playback arrives in a burst right after joining. */
static void
settle_later (RoomState *state)
{
  if (state->settle_id != 0)
    purple_timeout_remove (state->settle_id);
  state->settle_id = purple_timeout_add (MAX (purple_prefs_get_int (CATCHUP_PREF_SETTLE_MS), 1), settled, state);
}

/* ---------- presence ---------- */

void
catchup_signals_mark_present (PurpleConversation *conv)
{
  g_autoptr (CatchupRoomKey) key = NULL;

  if (catchup_plugin.writer == NULL || purple_conversation_get_type (conv) != PURPLE_CONV_TYPE_CHAT)
    return;
  key = catchup_room_key_new (conv);
  catchup_writer_mark_present (catchup_plugin.writer, key->protocol, key->account, key->name, time (NULL));
  catchup_presence_note (key, time (NULL));
}

static void
record_event (PurpleConversation *conv, CatchupRoomEventKind kind, const char *nick, const char *detail)
{
  g_autoptr (CatchupRoomKey) key = NULL;

  if (catchup_plugin.writer == NULL || nick == NULL || !wants_index (conv))
    return;
  g_autofree char *clean_nick = catchup_text_clean (nick, -1, CATCHUP_TEXT_ONE_LINE);
  g_autofree char *clean_detail = detail ? catchup_text_clean (detail, -1, CATCHUP_TEXT_ONE_LINE) : NULL;

  key = catchup_room_key_new (conv);
  catchup_writer_add_event (catchup_plugin.writer, key->protocol, key->account, key->name, time (NULL), kind,
                            clean_nick, clean_detail);
}

/* ---------- nick changes ----------
 * libpurple 2.x emits no signal for a rename (purple_conv_chat_rename_user): it adds the new chat buddy at the
 * head of the room's list, then destroys the old one, which emits "deleting-chat-buddy" with no room. A part
 * emits "chat-buddy-leaving" first and closing a room drops it from the chat list first, so a buddy deleted
 * while still on our own member list of a room that no longer has it was renamed, to that room's newest buddy. */

static GHashTable *members; /* PurpleConversation * -> set of its buddy names */

static GHashTable *
members_of (PurpleConversation *conv)
{
  GHashTable *set = g_hash_table_lookup (members, conv);

  if (set == NULL)
    {
      set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_hash_table_insert (members, conv, set);
    }
  return set;
}

static void
members_add_all (PurpleConversation *conv)
{
  GHashTable *set = members_of (conv);

  for (GList *l = purple_conv_chat_get_users (PURPLE_CONV_CHAT (conv)); l != NULL; l = l->next)
    g_hash_table_add (set, g_strdup (purple_conv_chat_cb_get_name (l->data)));
}

static void
record_nick_change (PurpleConversation *conv, const char *old_nick, const char *new_nick)
{
  g_autoptr (CatchupRoomKey) key = NULL;

  if (catchup_plugin.writer == NULL || !wants_index (conv))
    return;
  g_autofree char *old_clean = catchup_text_clean (old_nick, -1, CATCHUP_TEXT_ONE_LINE);
  g_autofree char *new_clean = catchup_text_clean (new_nick, -1, CATCHUP_TEXT_ONE_LINE);

  key = catchup_room_key_new (conv);
  catchup_writer_add_nick_change (catchup_plugin.writer, key->protocol, key->account, key->name, time (NULL),
                                  old_clean, new_clean);
}

static void
on_deleting_chat_buddy (PurpleConvChatBuddy *cb, gpointer data)
{
  const char *old_nick = purple_conv_chat_cb_get_name (cb);

  for (GList *l = purple_get_chats (); l != NULL; l = l->next)
    {
      PurpleConversation *conv = l->data;
      PurpleConvChat *chat = PURPLE_CONV_CHAT (conv);
      GHashTable *set = g_hash_table_lookup (members, conv);
      GList *newest = purple_conv_chat_get_users (chat);
      const char *new_nick;

      if (set == NULL || !g_hash_table_contains (set, old_nick) || purple_conv_chat_cb_find (chat, old_nick) != NULL
          || newest == NULL || newest->data == cb)
        continue;
      new_nick = purple_conv_chat_cb_get_name (newest->data);
      if (g_hash_table_contains (set, new_nick))
        continue;
      record_nick_change (conv, old_nick, new_nick);
      g_hash_table_remove (set, old_nick);
      g_hash_table_add (set, g_strdup (new_nick));
    }
}

static gboolean
on_buddy_leaving (PurpleConversation *conv, const char *name, const char *reason, gpointer data)
{
  GHashTable *set = g_hash_table_lookup (members, conv);

  if (set != NULL)
    g_hash_table_remove (set, name);
  return FALSE; /* never hides the part notice */
}

/* ---------- signal handlers ---------- */

static void
on_wrote_chat (PurpleAccount *account, const char *who, const char *message, PurpleConversation *conv,
               PurpleMessageFlags flags, gpointer data)
{
  RoomState *state = room_state (conv, FALSE);

  index_message (conv, who, message, flags);
  if (state != NULL && state->settle_id != 0)
    settle_later (state);
}

static void
on_wrote_im (PurpleAccount *account, const char *who, const char *message, PurpleConversation *conv,
             PurpleMessageFlags flags, gpointer data)
{
  index_message (conv, who, message, flags);
}

static void
on_chat_joined (PurpleConversation *conv, gpointer data)
{
  CatchupRoomSettings settings;

  RoomState *state = room_state (conv, TRUE);

  /* Before anything of this session counts as presence. */
  state->absent_since = catchup_presence_joined (conv);
  state->joined = g_get_monotonic_time ();
  catchup_room_settings_prefetch (conv);
  catchup_room_settings_get (conv, &settings);
  if (settings.auto_catchup)
    settle_later (room_state (conv, TRUE));
  catchup_room_settings_clear (&settings);
}

static void
on_chat_left (PurpleConversation *conv, gpointer data)
{
  RoomState *state = room_state (conv, FALSE);

  if (state != NULL && state->settle_id != 0)
    {
      purple_timeout_remove (state->settle_id);
      state->settle_id = 0;
    }
  catchup_signals_mark_present (conv);
}

static void
on_deleting_conversation (PurpleConversation *conv, gpointer data)
{
  if (purple_conversation_get_type (conv) != PURPLE_CONV_TYPE_CHAT)
    return;
  g_hash_table_remove (members, conv);
  /* Closing the window leaves the room, without a chat-left signal. */
  on_chat_left (conv, NULL);
}

static void
on_buddy_joined (PurpleConversation *conv, const char *name, PurpleConvChatBuddyFlags flags, gboolean new_arrival,
                 gpointer data)
{
  g_hash_table_add (members_of (conv), g_strdup (name));
  /* The roster sent on our own join is not news. */
  if (new_arrival)
    record_event (conv, CATCHUP_ROOM_EVENT_JOIN, name, NULL);
}

static void
on_buddy_left (PurpleConversation *conv, const char *name, const char *reason, gpointer data)
{
  record_event (conv, CATCHUP_ROOM_EVENT_PART, name, reason);
}

static void
on_signing_off (PurpleConnection *gc, gpointer data)
{
  PurpleAccount *account = purple_connection_get_account (gc);

  for (GList *l = purple_get_chats (); l != NULL; l = l->next)
    if (purple_conversation_get_account (l->data) == account)
      catchup_signals_mark_present (l->data);
}

void
catchup_signals_start (PurplePlugin *plugin)
{
  void *convs = purple_conversations_get_handle ();

  room_states = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) room_state_free);
  members = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) g_hash_table_unref);
  /* Rooms open before the plugin was loaded get no joins. */
  for (GList *l = purple_get_chats (); l != NULL; l = l->next)
    members_add_all (l->data);
  purple_signal_connect (convs, "wrote-chat-msg", plugin, PURPLE_CALLBACK (on_wrote_chat), NULL);
  purple_signal_connect (convs, "wrote-im-msg", plugin, PURPLE_CALLBACK (on_wrote_im), NULL);
  purple_signal_connect (convs, "chat-joined", plugin, PURPLE_CALLBACK (on_chat_joined), NULL);
  purple_signal_connect (convs, "chat-left", plugin, PURPLE_CALLBACK (on_chat_left), NULL);
  purple_signal_connect (convs, "deleting-conversation", plugin, PURPLE_CALLBACK (on_deleting_conversation), NULL);
  purple_signal_connect (convs, "chat-buddy-joined", plugin, PURPLE_CALLBACK (on_buddy_joined), NULL);
  purple_signal_connect (convs, "chat-buddy-left", plugin, PURPLE_CALLBACK (on_buddy_left), NULL);
  purple_signal_connect (convs, "chat-buddy-leaving", plugin, PURPLE_CALLBACK (on_buddy_leaving), NULL);
  purple_signal_connect (convs, "deleting-chat-buddy", plugin, PURPLE_CALLBACK (on_deleting_chat_buddy), NULL);
  purple_signal_connect (purple_connections_get_handle (), "signing-off", plugin, PURPLE_CALLBACK (on_signing_off),
                         NULL);
}

void
catchup_signals_stop (void)
{
  /* Unloading ends presence in every open room just as leaving would. */
  for (GList *l = purple_get_chats (); l != NULL; l = l->next)
    catchup_signals_mark_present (l->data);
  g_clear_pointer (&room_states, g_hash_table_unref);
  g_clear_pointer (&members, g_hash_table_unref);
}
