#include "config.h"

#include "catchup-plugin-private.h"

#include <string.h>

#include <connection.h>
#include <prpl.h>
#include <xmlnode.h>

/*
 * "Last present" on the main loop, for what must be decided before the writer could answer: the history an
 * XMPP room plays back on join. A client that asks for none gets the server's default (20 lines in prosody,
 * whatever the room keeps), so a longer absence would lose lines; joining with <history since="last present"/>
 * asks for everything said since, as far as the room keeps it. The store stays the truth: this cache is filled
 * from it on load and moved forward wherever presence is recorded.
 */

#define NS_MUC "http://jabber.org/protocol/muc"

static GHashTable *last_present; /* room spec -> gint64 * */

void
catchup_presence_note (const CatchupRoomKey *key, gint64 ts)
{
  g_autofree char *spec = NULL;
  gint64 *known;

  if (last_present == NULL)
    return;
  spec = catchup_room_key_spec (key);
  known = g_hash_table_lookup (last_present, spec);
  if (known != NULL)
    *known = MAX (*known, ts);
  else
    g_hash_table_insert (last_present, g_steal_pointer (&spec), g_memdup2 (&ts, sizeof ts));
}

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
  g_autofree char *spec = NULL;
  g_autofree char *since = NULL;
  gint64 *known;

  if (packet == NULL || *packet == NULL || (room = muc_join_room (*packet, &muc)) == NULL)
    return;
  key = catchup_room_key_new_for (purple_connection_get_account (gc), room, PURPLE_CONV_TYPE_CHAT);
  spec = catchup_room_key_spec (key);
  known = g_hash_table_lookup (last_present, spec);
  if (known == NULL || *known <= 0 || (since = catchup_time_format_iso (*known)) == NULL)
    return;
  xmlnode_set_attrib (xmlnode_new_child (muc, "history"), "since", since);
}

/* On the writer: every room's last presence. */
static gpointer
list_rooms (CatchupStore *store, gpointer data, GError **error)
{
  return catchup_store_list_rooms (store, error);
}

static void
rooms_listed (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GPtrArray) rooms = NULL;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (res))))
    return;
  rooms = catchup_writer_call_finish (catchup_plugin.writer, res, NULL);
  for (guint i = 0; rooms != NULL && i < rooms->len; i++)
    {
      CatchupRoomInfo *info = rooms->pdata[i];
      CatchupRoomKey key = { info->protocol, info->account, info->name, PURPLE_CONV_TYPE_CHAT };

      if (info->last_present > 0)
        catchup_presence_note (&key, info->last_present);
    }
}

void
catchup_presence_start (PurplePlugin *plugin)
{
  PurplePlugin *jabber = purple_find_prpl ("prpl-jabber");

  last_present = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  if (jabber != NULL)
    purple_signal_connect (jabber, "jabber-sending-xmlnode", plugin, PURPLE_CALLBACK (on_sending_xmlnode), NULL);
  if (catchup_plugin.writer != NULL)
    catchup_writer_call_async (catchup_plugin.writer, list_rooms, NULL, NULL, (GDestroyNotify) g_ptr_array_unref,
                               catchup_plugin.cancellable, rooms_listed, NULL);
}

void
catchup_presence_stop (void)
{
  g_clear_pointer (&last_present, g_hash_table_unref);
}
