#include "config.h"

#include "catchup-plugin-private.h"

#include <core.h>
#include <debug.h>
#include <version.h>

CatchupPlugin catchup_plugin;

/* ---------- room identity ---------- */

CatchupRoomKey *
catchup_room_key_new_for (PurpleAccount *account, const char *name, PurpleConversationType type)
{
  CatchupRoomKey *key = g_new0 (CatchupRoomKey, 1);

  key->protocol = g_strdup (purple_account_get_protocol_id (account));
  /* Normalised, so that an XMPP resource or a changed case does not split one room's history in two. */
  key->account = g_strdup (purple_normalize (account, purple_account_get_username (account)));
  key->name = g_strdup (name);
  key->type = type;
  return key;
}

CatchupRoomKey *
catchup_room_key_new (PurpleConversation *conv)
{
  return catchup_room_key_new_for (purple_conversation_get_account (conv), purple_conversation_get_name (conv),
                                   purple_conversation_get_type (conv));
}

CatchupRoomKey *
catchup_room_key_copy (const CatchupRoomKey *key)
{
  CatchupRoomKey *copy = g_new0 (CatchupRoomKey, 1);

  copy->protocol = g_strdup (key->protocol);
  copy->account = g_strdup (key->account);
  copy->name = g_strdup (key->name);
  copy->type = key->type;
  return copy;
}

void
catchup_room_key_free (CatchupRoomKey *key)
{
  if (key == NULL)
    return;
  g_free (key->protocol);
  g_free (key->account);
  g_free (key->name);
  g_free (key);
}

char *
catchup_room_key_spec (const CatchupRoomKey *key)
{
  return g_strdup_printf ("%s/%s/%s", key->protocol, key->account, key->name);
}

PurpleConversation *
catchup_room_key_find_conv (const CatchupRoomKey *key)
{
  for (GList *l = purple_get_conversations (); l != NULL; l = l->next)
    {
      PurpleConversation *conv = l->data;
      g_autoptr (CatchupRoomKey) other = NULL;

      if (purple_conversation_get_type (conv) != key->type)
        continue;
      other = catchup_room_key_new (conv);
      if (g_strcmp0 (other->protocol, key->protocol) == 0 && g_strcmp0 (other->account, key->account) == 0
          && g_strcmp0 (other->name, key->name) == 0)
        return conv;
    }
  return NULL;
}

gpointer
catchup_room_call_finish (GAsyncResult *res, const CatchupRoomKey *key, PurpleConversation **conv, GError **error)
{
  gpointer result;

  *conv = NULL;
  /* cancelled on unload: the writer is gone and nobody is to be told */
  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (res))))
    return NULL;
  result = catchup_writer_call_finish (catchup_plugin.writer, res, error);
  *conv = catchup_room_key_find_conv (key);
  return result;
}

/* ---------- load / unload ---------- */

static void
on_quitting (gpointer data)
{
  /* The core tears conversations down without chat-left: record presence and write everything now. */
  for (GList *l = purple_get_chats (); l != NULL; l = l->next)
    catchup_signals_mark_present (l->data);
  if (catchup_plugin.writer != NULL)
    catchup_writer_flush (catchup_plugin.writer);
}

static gboolean
plugin_load (PurplePlugin *plugin)
{
  g_autofree char *db_path = catchup_prefs_db_path ();
  g_autoptr (GError) error = NULL;

  /* Worker threads of an unloaded plugin may still be finishing: its code must stay mapped. */
  if (plugin->handle != NULL)
    g_module_make_resident (plugin->handle);

  catchup_log_start ();
  catchup_plugin.plugin = plugin;
  catchup_plugin.cancellable = g_cancellable_new ();
  catchup_plugin.writer = catchup_writer_new (db_path, &error);
  if (catchup_plugin.writer == NULL)
    purple_debug_error ("catchup", "history database %s: %s; nothing will be indexed\n", db_path, error->message);

  catchup_save_status_start ();
  catchup_presence_start (plugin);
  catchup_signals_start (plugin);
  catchup_commands_start (plugin);
  catchup_room_settings_start (plugin);
  catchup_model_start ();
  catchup_retention_start (plugin);
  purple_signal_connect (purple_get_core (), "quitting", plugin, PURPLE_CALLBACK (on_quitting), NULL);
  return TRUE;
}

static gboolean
plugin_unload (PurplePlugin *plugin)
{
  g_cancellable_cancel (catchup_plugin.cancellable);
  catchup_commands_stop ();
  catchup_model_stop ();
  catchup_retention_stop ();
  catchup_backfill_stop ();
  catchup_privacy_stop ();
  catchup_output_stop ();
  catchup_room_settings_stop ();
  /* Last: it records presence in the still open rooms through the writer. */
  catchup_signals_stop ();
  catchup_presence_stop ();
  catchup_save_status_stop ();
  g_clear_object (&catchup_plugin.cancellable);
  catchup_plugin.plugin = NULL;
  catchup_log_stop ();
  return TRUE;
}

static PurplePluginUiInfo prefs_info = {
  catchup_prefs_frame, 0, NULL, NULL, NULL, NULL, NULL
};

static PurplePluginInfo info = {
  PURPLE_PLUGIN_MAGIC, PURPLE_MAJOR_VERSION, PURPLE_MINOR_VERSION,
  PURPLE_PLUGIN_STANDARD, NULL, 0, NULL, PURPLE_PRIORITY_DEFAULT,
  CATCHUP_PLUGIN_ID, NULL, PACKAGE_VERSION, NULL, NULL, NULL, NULL,
  plugin_load, plugin_unload, NULL, NULL, NULL, &prefs_info, catchup_backfill_actions,
  NULL, NULL, NULL, NULL
};

static void
init_plugin (PurplePlugin *plugin)
{
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  info.name = _("Catch-up");
  info.summary = _("Summaries of what you missed in group chats");
  /* Translators: "/catchup" is the command the user types; keep it as it is. */
  info.description = _("Type /catchup in a group chat, or rejoin a room, to get a short summary of what was said "
                       "while you were away, with earlier context spelled out.");
  catchup_prefs_init ();
}

PURPLE_INIT_PLUGIN (catchup, init_plugin, info)
