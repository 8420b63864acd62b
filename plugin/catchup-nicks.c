#include "config.h"

#include "catchup-plugin-private.h"

/* Renames. libpurple 2.x emits no signal for a rename (purple_conv_chat_rename_user): it adds the new chat buddy
 * at the head of the room's list, then destroys the old one, which emits "deleting-chat-buddy" with no room. A
 * part emits "chat-buddy-leaving" first and closing a room drops it from the chat list first, so a buddy deleted
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

  if (catchup_plugin.writer == NULL || !catchup_indexing_wanted (conv))
    return;
  g_autofree char *old_clean = catchup_text_clean (old_nick, -1, CATCHUP_TEXT_ONE_LINE);
  g_autofree char *new_clean = catchup_text_clean (new_nick, -1, CATCHUP_TEXT_ONE_LINE);

  key = catchup_room_key_new (conv);
  catchup_writer_add_nick_change (catchup_plugin.writer, key->protocol, key->account, key->name, time (NULL),
                                  old_clean, new_clean);
}

void
catchup_nicks_buddy_deleting (PurpleConvChatBuddy *cb)
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

void
catchup_nicks_buddy_leaving (PurpleConversation *conv, const char *name)
{
  GHashTable *set = g_hash_table_lookup (members, conv);

  if (set != NULL)
    g_hash_table_remove (set, name);
}

void
catchup_nicks_buddy_joined (PurpleConversation *conv, const char *name)
{
  g_hash_table_add (members_of (conv), g_strdup (name));
}

void
catchup_nicks_conversation_closed (PurpleConversation *conv)
{
  g_hash_table_remove (members, conv);
}

void
catchup_nicks_start (void)
{
  members = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) g_hash_table_unref);
  /* Rooms open before the plugin was loaded get no joins. */
  for (GList *l = purple_get_chats (); l != NULL; l = l->next)
    members_add_all (l->data);
}

void
catchup_nicks_stop (void)
{
  g_clear_pointer (&members, g_hash_table_unref);
}
