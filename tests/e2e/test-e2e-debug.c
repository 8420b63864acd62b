/* The core library's log messages reach libpurple's debug log while the plugin is loaded — from the main thread
 * at once, from a worker thread through the main loop — and no longer once it is unloaded. */
#include <debug.h>

#include "e2e-client.h"
#include "../test-util.h"

static GPtrArray *debug_lines; /* "category|text" of every purple_debug line */
static GThread *main_thread;
static gboolean printed_off_main;

static void
debug_print (PurpleDebugLevel level, const char *category, const char *text)
{
  if (g_thread_self () != main_thread)
    printed_off_main = TRUE;
  g_ptr_array_add (debug_lines, g_strdup_printf ("%s|%s", category ? category : "", text));
}

static gboolean
debug_is_enabled (PurpleDebugLevel level, const char *category)
{
  return TRUE;
}

static PurpleDebugUiOps debug_ops = { debug_print, debug_is_enabled, NULL, NULL, NULL, NULL };

static gboolean
debug_has (gpointer text)
{
  for (guint i = 0; i < debug_lines->len; i++)
    if (strstr (debug_lines->pdata[i], text) != NULL && g_str_has_prefix (debug_lines->pdata[i], "catchup|"))
      return TRUE;
  return FALSE;
}

static gpointer
log_from_worker (gpointer data)
{
  g_log ("catchup", G_LOG_LEVEL_MESSAGE, "from a worker thread");
  return NULL;
}

static void
test_core_log_reaches_debug (void)
{
  g_autofree char *dir = test_tmp_dir ("catchup-e2e-debug-XXXXXX");
  PurplePlugin *plugin;
  GThread *worker;

  main_thread = g_thread_self ();
  debug_lines = g_ptr_array_new_with_free_func (g_free);
  e2e_client_init (dir);
  purple_debug_set_ui_ops (&debug_ops);
  plugin = e2e_load_plugin ();

  g_log ("catchup", G_LOG_LEVEL_MESSAGE, "from the main thread");
  g_assert_true (debug_has ("from the main thread"));

  worker = g_thread_new ("log", log_from_worker, NULL);
  g_thread_join (worker);
  g_assert_true (e2e_wait (debug_has, "from a worker thread", 5000));
  g_assert_false (printed_off_main);

  g_assert_true (purple_plugin_unload (plugin));
  g_test_expect_message ("catchup", G_LOG_LEVEL_MESSAGE, "after unload");
  g_log ("catchup", G_LOG_LEVEL_MESSAGE, "after unload");
  g_test_assert_expected_messages ();
  g_assert_false (debug_has ("after unload"));

  purple_debug_set_ui_ops (NULL);
  e2e_client_quit ();
  g_clear_pointer (&debug_lines, g_ptr_array_unref);
  test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/e2e/debug/core-log-reaches-debug", test_core_log_reaches_debug);
  return g_test_run ();
}
