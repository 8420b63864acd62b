#include "config.h"

#include "catchup-plugin-private.h"

#include <debug.h>
#include <eventloop.h>
#include <prefs.h>

/* The automatic catch-up on rejoin: history playback arrives in a burst right after a join, so a quiet period
 * passes first; then, when others said at least the room's threshold since the user was last present (and no
 * automatic catch-up of the room ran within the cooldown), the catch-up runs as /catchup would. */

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

typedef struct {
  char *spec;
  CatchupWindow window;   /* unread, since the absence's start as the join knew it (0: the store's) */
} CountJob;

static void
count_job_free (gpointer data)
{
  CountJob *job = data;

  g_free (job->spec);
  g_free (job);
}

/* On the writer thread: where the unread window starts and how many turns of others it holds. */
static gpointer
count_unread (CatchupStore *store, gpointer data, GError **error)
{
  CountJob *job = data;
  CatchupWindowInfo *info = g_new0 (CatchupWindowInfo, 1);
  g_autoptr (GPtrArray) msgs = NULL;
  gint64 room = catchup_store_find_room (store, job->spec, NULL);

  if (room != 0 && (msgs = catchup_window_resolve (store, room, &job->window, info, error)) == NULL)
    g_clear_pointer (&info, g_free);
  return info;
}

static gboolean
cooled_down (const RoomState *state)
{
  return state->last_auto == 0
         || g_get_monotonic_time () - state->last_auto
            >= (gint64) purple_prefs_get_int (CATCHUP_PREF_COOLDOWN) * G_USEC_PER_SEC;
}

static void
count_done (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (CatchupRoomKey) key = data;
  g_autoptr (GError) error = NULL;
  g_autofree CatchupWindowInfo *info = NULL;
  CatchupRoomSettings settings;
  PurpleConversation *conv;
  RoomState *state;

  info = catchup_room_call_finish (res, key, &conv, &error);
  /* without a known presence there is no absence to catch up on */
  if (info == NULL || conv == NULL || info->since == 0)
    return;
  catchup_room_settings_get (conv, &settings);
  state = room_state (conv, TRUE);
  purple_debug_info ("catchup", "%s: %u messages since last present (threshold %d)\n", key->name, info->others,
                     settings.threshold);
  if (settings.auto_catchup && info->others >= (guint) MAX (settings.threshold, 0) && cooled_down (state))
    {
      CatchupWindow window = { .kind = CATCHUP_WINDOW_UNREAD, .since = info->since };

      state->last_auto = g_get_monotonic_time ();
      catchup_run (conv, &window, NULL, FALSE, TRUE);
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
  job->spec = catchup_room_key_spec (state->key);
  job->window.kind = CATCHUP_WINDOW_UNREAD;
  job->window.since = state->absent_since;
  catchup_writer_call_async (catchup_plugin.writer, count_unread, job, count_job_free, g_free,
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

void
catchup_rejoin_joined (PurpleConversation *conv)
{
  CatchupRoomSettings settings;
  RoomState *state = room_state (conv, TRUE);

  /* Before anything of this session counts as presence. */
  state->absent_since = catchup_presence_joined (conv);
  state->joined = g_get_monotonic_time ();
  catchup_room_settings_prefetch (conv);
  catchup_room_settings_get (conv, &settings);
  if (settings.auto_catchup)
    settle_later (state);
  catchup_room_settings_clear (&settings);
}

void
catchup_rejoin_activity (PurpleConversation *conv)
{
  RoomState *state = room_state (conv, FALSE);

  if (state != NULL && state->settle_id != 0)
    settle_later (state);
}

void
catchup_rejoin_left (PurpleConversation *conv)
{
  RoomState *state = room_state (conv, FALSE);

  if (state != NULL && state->settle_id != 0)
    {
      purple_timeout_remove (state->settle_id);
      state->settle_id = 0;
    }
}

gint64
catchup_rejoin_joined_at (PurpleConversation *conv)
{
  RoomState *state = room_state (conv, FALSE);

  return state ? state->joined : 0;
}

void
catchup_rejoin_start (void)
{
  room_states = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) room_state_free);
}

void
catchup_rejoin_stop (void)
{
  g_clear_pointer (&room_states, g_hash_table_unref);
}
