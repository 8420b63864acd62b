#include "config.h"

#include "catchup-plugin-private.h"

#include <debug.h>

/* The core library logs to GLib's "catchup" domain, which Pidgin's and Finch's debug windows never show. While
 * the plugin is loaded its messages go to purple_debug instead. libpurple is not thread-safe and the core logs
 * from worker threads too, so a message from another thread is handed to the main loop first. */

static guint log_handler_id;
static GThread *main_thread; /* libpurple's: the plugin is loaded on it */

typedef struct {
  GLogLevelFlags level;
  char *text;
} LogLine;

static void
log_line_write (const LogLine *line)
{
  PurpleDebugLevel level = PURPLE_DEBUG_MISC;

  if (line->level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
    level = PURPLE_DEBUG_ERROR;
  else if (line->level & G_LOG_LEVEL_WARNING)
    level = PURPLE_DEBUG_WARNING;
  else if (line->level & (G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO))
    level = PURPLE_DEBUG_INFO;
  purple_debug (level, "catchup", "%s\n", line->text);
}

static void
log_line_free (LogLine *line)
{
  g_free (line->text);
  g_free (line);
}

static gboolean
log_line_write_idle (gpointer data)
{
  log_line_write (data);
  return G_SOURCE_REMOVE;
}

static void
on_core_log (const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  LogLine line = { level, (char *) message };

  /* Not g_main_context_invoke: it runs the function in the calling thread whenever the main loop is idle. */
  if (g_thread_self () == main_thread)
    {
      log_line_write (&line);
      return;
    }
  line.text = g_strdup (message);
  g_idle_add_full (G_PRIORITY_DEFAULT, log_line_write_idle, g_memdup2 (&line, sizeof line),
                   (GDestroyNotify) log_line_free);
}

void
catchup_log_start (void)
{
  main_thread = g_thread_self ();
  if (log_handler_id == 0)
    log_handler_id = g_log_set_handler (G_LOG_DOMAIN, G_LOG_LEVEL_MASK | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION,
                                        on_core_log, NULL);
}

void
catchup_log_stop (void)
{
  if (log_handler_id != 0)
    g_log_remove_handler (G_LOG_DOMAIN, log_handler_id);
  log_handler_id = 0;
}
