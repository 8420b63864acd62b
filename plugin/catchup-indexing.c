#include "config.h"

#include "catchup-plugin-private.h"

#include <stdlib.h>
#include <string.h>

#include <util.h>

/* A line written into a conversation becomes a message of its room's history, cleaned of markup and of what no
 * terminal should see, with the time the server gave it. */

/* Lines that are never chat turns: libpurple's own notices, errors, and whatever asked not to be logged
 * (OTR and similar plugins, and this plugin's own output). */
#define NEVER_INDEXED (PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_ERROR | PURPLE_MESSAGE_NO_LOG)

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

gboolean
catchup_indexing_wanted (PurpleConversation *conv)
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
  gint64 joined = catchup_rejoin_joined_at (conv);
  g_autoptr (GMatchInfo) m = NULL;
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autoptr (GDateTime) when = NULL;
  g_autofree char *h = NULL, *mi = NULL, *sec = NULL, *rest = NULL;
  gint64 ts;

  if (joined == 0 || g_get_monotonic_time () - joined > PLAYBACK_WINDOW
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

void
catchup_indexing_add (PurpleConversation *conv, const char *who, const char *markup, PurpleMessageFlags flags)
{
  g_autoptr (CatchupRoomKey) key = NULL;
  CatchupMessage *msg;

  if (catchup_plugin.writer == NULL || (flags & NEVER_INDEXED) || who == NULL || *who == '\0' || markup == NULL)
    return;
  if (!catchup_indexing_wanted (conv))
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

