#include "config.h"

#include "catchup-plugin-private.h"

#include <connection.h>

/* libpurple's signals, each handed to the module whose job it is: indexing, the automatic catch-up on rejoin,
 * renames; and presence, which a leave, a sign-off and an unload end. */

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
on_wrote_chat (PurpleAccount *account, const char *who, const char *message, PurpleConversation *conv,
               PurpleMessageFlags flags, gpointer data)
{
  catchup_indexing_add (conv, who, message, flags);
  catchup_rejoin_activity (conv);
}

static void
on_wrote_im (PurpleAccount *account, const char *who, const char *message, PurpleConversation *conv,
             PurpleMessageFlags flags, gpointer data)
{
  catchup_indexing_add (conv, who, message, flags);
}

static void
on_chat_joined (PurpleConversation *conv, gpointer data)
{
  catchup_rejoin_joined (conv);
}

static void
on_chat_left (PurpleConversation *conv, gpointer data)
{
  catchup_rejoin_left (conv);
  catchup_signals_mark_present (conv);
}

static void
on_deleting_conversation (PurpleConversation *conv, gpointer data)
{
  if (purple_conversation_get_type (conv) != PURPLE_CONV_TYPE_CHAT)
    return;
  catchup_nicks_conversation_closed (conv);
  /* Closing the window leaves the room, without a chat-left signal. */
  on_chat_left (conv, NULL);
}

static void
on_buddy_joined (PurpleConversation *conv, const char *name, PurpleConvChatBuddyFlags flags, gboolean new_arrival,
                 gpointer data)
{
  catchup_nicks_buddy_joined (conv, name);
}

static gboolean
on_buddy_leaving (PurpleConversation *conv, const char *name, const char *reason, gpointer data)
{
  catchup_nicks_buddy_leaving (conv, name);
  return FALSE; /* never hides the part notice */
}

static void
on_deleting_chat_buddy (PurpleConvChatBuddy *cb, gpointer data)
{
  catchup_nicks_buddy_deleting (cb);
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

  catchup_rejoin_start ();
  catchup_nicks_start ();
  purple_signal_connect (convs, "wrote-chat-msg", plugin, PURPLE_CALLBACK (on_wrote_chat), NULL);
  purple_signal_connect (convs, "wrote-im-msg", plugin, PURPLE_CALLBACK (on_wrote_im), NULL);
  purple_signal_connect (convs, "chat-joined", plugin, PURPLE_CALLBACK (on_chat_joined), NULL);
  purple_signal_connect (convs, "chat-left", plugin, PURPLE_CALLBACK (on_chat_left), NULL);
  purple_signal_connect (convs, "deleting-conversation", plugin, PURPLE_CALLBACK (on_deleting_conversation), NULL);
  purple_signal_connect (convs, "chat-buddy-joined", plugin, PURPLE_CALLBACK (on_buddy_joined), NULL);
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
  catchup_rejoin_stop ();
  catchup_nicks_stop ();
}
