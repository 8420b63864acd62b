#include "config.h"

#include "catchup-plugin-private.h"

#include <debug.h>
#include <notify.h>

/*
 * What the user hears when history cannot be saved: the writer keeps the messages and retries; each
 * conversation whose messages are kept is told once per fault, and again when they are saved. At unload,
 * whatever could not be written is said in the debug log and in a notice, never dropped silently.
 */

/* Rooms told of the current fault: "protocol\x1faccount\x1fname". Main loop only. */
static GHashTable *told;

static char *
told_key (const char *protocol, const char *account, const char *name)
{
  return g_strjoin ("\x1f", protocol, account, name, NULL);
}

/* The open conversation of a stored room: a chat, or an IM when IMs are indexed. */
static PurpleConversation *
find_conv (const char *protocol, const char *account, const char *name)
{
  CatchupRoomKey key = { (char *) protocol, (char *) account, (char *) name, PURPLE_CONV_TYPE_CHAT };
  PurpleConversation *conv = catchup_room_key_find_conv (&key);

  if (conv != NULL)
    return conv;
  key.type = PURPLE_CONV_TYPE_IM;
  return catchup_room_key_find_conv (&key);
}

static char *
fault_text (const CatchupWriterStatus *status, guint64 n_kept)
{
  gulong n = (gulong) MIN (n_kept, G_MAXULONG);

  switch (status->fault)
    {
    case CATCHUP_WRITER_FULL:
      return g_strdup_printf (
        dngettext (GETTEXT_PACKAGE,
                   "Catch-up could not save history: disk full; %lu message is kept and will be saved when space "
                   "is free",
                   "Catch-up could not save history: disk full; %lu messages are kept and will be saved when space "
                   "is free", n), n);
    case CATCHUP_WRITER_BUSY:
      return g_strdup_printf (
        dngettext (GETTEXT_PACKAGE,
                   "Catch-up could not save history: another program keeps the database locked; %lu message is "
                   "kept and will be saved when it is free",
                   "Catch-up could not save history: another program keeps the database locked; %lu messages are "
                   "kept and will be saved when it is free", n), n);
    default:
      return g_strdup_printf (
        dngettext (GETTEXT_PACKAGE,
                   "Catch-up could not save history: the disk fails (%s); %lu message is kept and will be saved "
                   "when it works again",
                   "Catch-up could not save history: the disk fails (%s); %lu messages are kept and will be saved "
                   "when it works again", n), status->detail ? status->detail : "?", n);
    }
}

static void
tell_fault (const CatchupWriterStatus *status)
{
  purple_debug_warning ("catchup", "history cannot be saved (%s); %" G_GUINT64_FORMAT " messages kept\n",
                        status->detail ? status->detail : "?", status->n_kept);
  for (guint i = 0; i < status->rooms->len; i++)
    {
      const CatchupWriterRoom *room = status->rooms->pdata[i];
      char *key = told_key (room->protocol, room->account, room->name);
      PurpleConversation *conv;
      g_autofree char *text = NULL;

      if (!g_hash_table_add (told, key))
        continue;
      conv = find_conv (room->protocol, room->account, room->name);
      if (conv == NULL)
        continue;
      text = fault_text (status, room->n_kept);
      catchup_output_local (conv, text);
    }
}

static void
tell_recovery (const CatchupWriterStatus *status)
{
  gulong n = (gulong) MIN (status->n_saved, G_MAXULONG);
  g_autofree char *text = g_strdup_printf (
    dngettext (GETTEXT_PACKAGE, "Catch-up saves history again: the %lu kept message is saved",
               "Catch-up saves history again: the %lu kept messages are saved", n), n);
  GHashTableIter iter;
  gpointer key;

  purple_debug_info ("catchup", "history is saved again; %lu kept messages written\n", n);
  g_hash_table_iter_init (&iter, told);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      g_auto (GStrv) parts = g_strsplit (key, "\x1f", 3);
      PurpleConversation *conv = g_strv_length (parts) == 3 ? find_conv (parts[0], parts[1], parts[2]) : NULL;

      if (conv != NULL)
        catchup_output_local (conv, text);
    }
  g_hash_table_remove_all (told);
}

static void
on_status (const CatchupWriterStatus *status, gpointer data)
{
  if (status->fault == CATCHUP_WRITER_OK)
    tell_recovery (status);
  else
    tell_fault (status);
}

void
catchup_save_status_start (void)
{
  told = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (catchup_plugin.writer != NULL)
    catchup_writer_set_status_func (catchup_plugin.writer, on_status, NULL, NULL);
}

/* Stops the writer (within about a second) and says what it could not write. */
void
catchup_save_status_stop (void)
{
  g_autofree char *reason = NULL;
  g_autofree char *secondary = NULL;
  guint64 n_unsaved;
  gulong n;

  g_clear_pointer (&told, g_hash_table_unref);
  if (catchup_plugin.writer == NULL)
    return;
  n_unsaved = catchup_writer_stop (catchup_plugin.writer, &reason);
  g_clear_pointer (&catchup_plugin.writer, catchup_writer_unref);
  if (n_unsaved == 0)
    return;
  n = (gulong) MIN (n_unsaved, G_MAXULONG);
  purple_debug_error ("catchup", "%lu messages could not be written to the history database: %s\n", n,
                      reason ? reason : "?");
  secondary = g_strdup_printf (
    dngettext (GETTEXT_PACKAGE,
               "%lu message could not be saved to the catch-up history (%s). It will be missing from later catch-ups.",
               "%lu messages could not be saved to the catch-up history (%s). They will be missing from later "
               "catch-ups.", n), n, reason ? reason : "?");
  /* no plugin handle: the plugin's notices are closed right after its unload */
  purple_notify_warning (NULL, _("Catch-up"), _("Catch-up could not save all history"), secondary);
}
