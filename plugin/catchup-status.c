#include "config.h"

#include "catchup-plugin-private.h"

#include <prefs.h>
#include <request.h>

/* /catchup status (what is kept of the room, which summariser, write errors) and /catchup forget. */


static gpointer
room_info_call (CatchupStore *store, gpointer data, GError **error)
{
  gint64 room = catchup_store_find_room (store, data, NULL);

  return room ? catchup_store_room_info (store, room, error) : NULL;
}

static void
status_done (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (CatchupRoomKey) key = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupRoomInfo) info = NULL;
  g_autoptr (GString) text = g_string_new (NULL);
  g_autofree char *last_error = NULL;
  const char *endpoint = purple_prefs_get_string (CATCHUP_PREF_ENDPOINT);
  PurpleConversation *conv;
  guint64 n_errors = 0;

  info = catchup_room_call_finish (res, key, &conv, &error);
  if (conv == NULL)
    return;
  if (info == NULL || info->n_messages == 0)
    g_string_append (text, _("Nothing of this room is indexed yet."));
  else
    {
      g_autofree char *first = catchup_render_time (info->first_ts);
      g_autofree char *last = catchup_render_time (info->last_ts);
      g_autofree char *count = catchup_render_count (info->n_messages);

      g_string_append_printf (text, ngettext ("%s message indexed, from %s to %s.",
                                              "%s messages indexed, from %s to %s.", catchup_render_plural (info->n_messages)),
                              count, first, last);
      if (info->last_present != 0)
        {
          g_autofree char *present = catchup_render_time (info->last_present);

          g_string_append_c (text, ' ');
          g_string_append_printf (text, _("Last present: %s."), present);
        }
    }
  g_string_append_c (text, '\n');
  if (endpoint == NULL || *endpoint == '\0')
    g_string_append (text, _("Summaries: built-in (no language model configured)."));
  else
    g_string_append_printf (text, _("Summaries: %s at %s."), purple_prefs_get_string (CATCHUP_PREF_CHAT_MODEL),
                            endpoint);
  g_string_append_c (text, '\n');
  {
    g_autofree char *kept = catchup_privacy_status_text (conv);
    g_string_append (text, kept);
  }
  catchup_writer_get_stats (catchup_plugin.writer, NULL, &n_errors, &last_error);
  if (n_errors != 0)
    {
      g_autofree char *count = g_strdup_printf ("%" G_GUINT64_FORMAT, n_errors);

      g_string_append_c (text, '\n');
      g_string_append_printf (text, _("Write errors: %s (last: %s)"), count, last_error);
    }
  catchup_output_local (conv, text->str);
}

static gpointer
forget_call (CatchupStore *store, gpointer data, GError **error)
{
  gint64 room = catchup_store_find_room (store, data, NULL);
  CatchupRoomInfo *info;

  if (room == 0)
    return g_new0 (CatchupRoomInfo, 1);
  info = catchup_store_room_info (store, room, error);
  if (info != NULL && !catchup_retention_forget_room (store, room, error))
    g_clear_pointer (&info, catchup_room_info_free);
  return info;
}

static void
forget_done (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (CatchupRoomKey) key = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupRoomInfo) info = NULL;
  g_autofree char *line = NULL;
  PurpleConversation *conv;

  info = catchup_room_call_finish (res, key, &conv, &error);
  if (conv == NULL)
    return;
  if (info == NULL)
    line = g_strdup_printf (_("Could not forget this room's history: %s"), error->message);
  else
    {
      g_autofree char *count = catchup_render_count (info->n_messages);

      line = g_strdup_printf (ngettext ("Forgot %s message of this room.", "Forgot %s messages of this room.",
                                        catchup_render_plural (info->n_messages)),
                              count);
    }
  catchup_output_local (conv, line);
}

static void
room_call (CatchupRoomKey *key, CatchupWriterFunc func, GAsyncReadyCallback done)
{
  catchup_writer_call_async (catchup_plugin.writer, func, catchup_room_key_spec (key), g_free,
                             (GDestroyNotify) catchup_room_info_free, catchup_plugin.cancellable, done, key);
}

static void
forget_confirmed (CatchupRoomKey *key, int action)
{
  if (catchup_plugin.writer != NULL)
    room_call (key, forget_call, forget_done);
  else
    catchup_room_key_free (key);
}

static void
forget_cancelled (CatchupRoomKey *key, int action)
{
  catchup_room_key_free (key);
}

void
catchup_status_ask_forget (PurpleConversation *conv)
{
  g_autofree char *primary = g_strdup_printf (_("Forget the catch-up history of %s?"),
                                              purple_conversation_get_name (conv));

  purple_request_action (catchup_plugin.plugin, _("Forget room history"), primary,
                         _("Every indexed message of this room is deleted. Your chat logs are not touched."), 1,
                         purple_conversation_get_account (conv), NULL, conv, catchup_room_key_new (conv), 2,
                         _("_Forget"), PURPLE_CALLBACK (forget_confirmed),
                         _("_Cancel"), PURPLE_CALLBACK (forget_cancelled));
}

void
catchup_status_show (PurpleConversation *conv)
{
  if (catchup_plugin.writer != NULL)
    room_call (catchup_room_key_new (conv), room_info_call, status_done);
}
