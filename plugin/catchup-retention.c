#include "config.h"

#include "catchup-plugin-private.h"

#include <debug.h>
#include <eventloop.h>
#include <prefs.h>

/*
 * History retention: when the preference keeps history for a number of days, the writer's worker deletes
 * what is older, on load, once a day after, and soon after the preference changes. The prune is a writer
 * job, so it runs in queue order off the main loop; it is quiet apart from a debug line.
 */

#define PRUNE_INTERVAL_S (24 * 60 * 60)
/* A spin button reports every step it takes: prune once the value has settled. */
#define PRUNE_AFTER_CHANGE_S 2

static guint daily_timer;
static guint change_timer;
static guint pref_callback;

static void
prune_done (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  guint64 n_deleted = 0;

  /* Unloading cancels: the writer may be gone by then. */
  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (res))))
    return;
  if (catchup_writer_prune_finish (catchup_plugin.writer, res, &n_deleted, &error))
    purple_debug_info ("catchup", "retention of %d days: deleted %" G_GUINT64_FORMAT " messages\n",
                       GPOINTER_TO_INT (data), n_deleted);
  else
    purple_debug_warning ("catchup", "retention: %s\n", error->message);
}

static void
prune_now (void)
{
  int days = purple_prefs_get_int (CATCHUP_PREF_RETENTION_DAYS);
  gint64 now = g_get_real_time () / G_USEC_PER_SEC;

  if (days <= 0 || catchup_plugin.writer == NULL)
    return;
  catchup_writer_prune_async (catchup_plugin.writer, now - (gint64) days * 24 * 60 * 60, catchup_plugin.cancellable,
                              prune_done, GINT_TO_POINTER (days));
}

static gboolean
daily_tick (gpointer data)
{
  prune_now ();
  return G_SOURCE_CONTINUE;
}

static gboolean
change_settled (gpointer data)
{
  change_timer = 0;
  prune_now ();
  return G_SOURCE_REMOVE;
}

static void
retention_changed (const char *name, PurplePrefType type, gconstpointer value, gpointer data)
{
  if (change_timer != 0)
    purple_timeout_remove (change_timer);
  change_timer = purple_timeout_add_seconds (PRUNE_AFTER_CHANGE_S, change_settled, NULL);
}

void
catchup_retention_start (PurplePlugin *plugin)
{
  pref_callback = purple_prefs_connect_callback (plugin, CATCHUP_PREF_RETENTION_DAYS, retention_changed, NULL);
  daily_timer = purple_timeout_add_seconds (PRUNE_INTERVAL_S, daily_tick, NULL);
  prune_now ();
}

void
catchup_retention_stop (void)
{
  if (pref_callback != 0)
    purple_prefs_disconnect_callback (pref_callback);
  if (daily_timer != 0)
    purple_timeout_remove (daily_timer);
  if (change_timer != 0)
    purple_timeout_remove (change_timer);
  pref_callback = daily_timer = change_timer = 0;
}
