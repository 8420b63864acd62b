#include "config.h"

#include "catchup-plugin-private.h"

/* One catch-up: the window resolved on the writer (so it includes what is still queued), a first line saying what
 * it covers, then the engine on its own connection, then the result. */

typedef struct {
  CatchupRoomKey *key;
  char *spec;
  char *arg;                /* the window as typed ("2h", "50"); NULL for a plain /catchup */
  CatchupWindow window;
  gboolean post, automatic;
  CatchupRoomSettings settings;
} Job;

typedef struct {
  CatchupWindowInfo info;
  guint count;              /* turns the catch-up covers */
  gint64 first_ts;          /* the first covered turn */
} Preview;

static void
job_free (Job *job)
{
  catchup_room_key_free (job->key);
  g_free (job->spec);
  g_free (job->arg);
  g_free (job->window.first_id);
  g_free (job->window.last_id);
  catchup_room_settings_clear (&job->settings);
  g_free (job);
}

/* On the writer thread, after every queued message is written: what the window holds, and what the room's
 * maximum leaves out of it. */
static gpointer
preview_window (CatchupStore *store, gpointer data, GError **error)
{
  Job *job = data;
  g_autofree Preview *preview = g_new0 (Preview, 1);
  g_autoptr (GPtrArray) msgs = NULL;
  gint64 room = catchup_store_find_room (store, job->spec, NULL);

  preview->info.room_empty = TRUE;
  if (room == 0)
    return g_steal_pointer (&preview);
  if ((msgs = catchup_window_resolve (store, room, &job->window, &preview->info, error)) == NULL)
    return NULL;
  preview->count = msgs->len;
  preview->first_ts = msgs->len ? ((CatchupMessage *) msgs->pdata[0])->ts : 0;
  return g_steal_pointer (&preview);
}

static void
engine_done (GObject *source, GAsyncResult *res, gpointer data)
{
  Job *job = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupResult) result = NULL;
  PurpleConversation *conv;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (res))))
    {
      job_free (job);
      return;
    }
  result = catchup_engine_run_finish (res, &error);
  /* The conversation may have been closed while the engine worked: never keep a pointer across that. */
  conv = catchup_room_key_find_conv (job->key);
  if (conv == NULL)
    ;
  else if (result == NULL)
    {
      g_autofree char *line = g_strdup_printf (_("Catch-up failed: %s"), error ? error->message : _("unknown error"));
      catchup_output_local (conv, line);
    }
  else
    {
      catchup_output_result (conv, result);
      if (job->post)
        catchup_output_ask_post (conv, result);
      /* A catch-up counts as being present: the next one starts here. */
      catchup_signals_mark_present (conv);
    }
  job_free (job);
}

/* The first line of a catch-up: what it covers and, when the room's maximum cut the window, what it left out. */
static char *
start_line (const Preview *preview)
{
  g_autofree char *count = catchup_render_count (preview->count);

  if (preview->info.total > preview->count)
    {
      g_autofree char *total = catchup_render_count (preview->info.total);
      g_autofree char *when = catchup_render_time (preview->info.start_ts);

      /* Translators: "the last 100 of 512 messages since Tue 09:14 (the room's maximum; /catchup 512 for all)";
       * keep "/catchup" as it is. */
      return g_strdup_printf (ngettext ("Catching up on the last %s of %s message since %s (the room's maximum; "
                                        "/catchup %s for all)…",
                                        "Catching up on the last %s of %s messages since %s (the room's maximum; "
                                        "/catchup %s for all)…",
                                        catchup_render_plural (preview->info.total)),
                              count, total, when, total);
    }
  {
    g_autofree char *when = catchup_render_time (preview->first_ts);

    return g_strdup_printf (ngettext ("Catching up on %s message since %s…", "Catching up on %s messages since %s…",
                                      catchup_render_plural (preview->count)),
                            count, when);
  }
}

/* What an empty window means, in words that say what would work instead. */
static char *
empty_line (const Job *job, const Preview *preview)
{
  if (preview->info.room_empty)
    return g_strdup (_("Nothing of this room is indexed yet."));
  if (preview->info.since != 0)
    {
      g_autofree char *when = catchup_render_time (preview->info.since);

      /* Translators: keep "/catchup" as it is. */
      return g_strdup_printf (_("Nothing new since you were last here (%s); /catchup 50 shows the last 50 messages."),
                              when);
    }
  if (job->arg != NULL)
    /* Translators: %s is the span typed, e.g. "2h"; keep "/catchup" as it is. */
    return g_strdup_printf (_("Nothing was said here in the last %s; /catchup 50 shows the last 50 messages."),
                            job->arg);
  return g_strdup (_("Nothing to catch up on here yet."));
}

static void
start_engine (PurpleConversation *conv, Job *job, const Preview *preview)
{
  g_autofree char *line = start_line (preview);
  g_autofree char *db_path = g_strdup (catchup_writer_get_path (catchup_plugin.writer));
  CatchupLlmConfig *model = catchup_model_config_from_prefs ();
  CatchupOptions opts;

  /* the engine covers what the preview counted, even if the user is marked present meanwhile */
  catchup_window_settle (&job->window, &preview->info);
  catchup_output_local (conv, line);

  catchup_options_init (&opts);
  opts.memory.budget = job->settings.budget;
  opts.length = job->settings.length;
  opts.language = job->settings.language;
  /* the user's nick in this room: lines that name them go under "For you" */
  if (purple_conversation_get_type (conv) == PURPLE_CONV_TYPE_CHAT)
    opts.me = (char *) purple_conv_chat_get_nick (PURPLE_CONV_CHAT (conv));
  /* the run copies the settings and makes its own client */
  opts.model = model;
  catchup_engine_run_async (db_path, job->spec, &job->window, &opts, catchup_plugin.cancellable, engine_done, job);
  catchup_llm_config_free (model);
}

static void
preview_done (GObject *source, GAsyncResult *res, gpointer data)
{
  Job *job = data;
  g_autoptr (GError) error = NULL;
  g_autofree Preview *preview = NULL;
  PurpleConversation *conv;

  preview = catchup_room_call_finish (res, job->key, &conv, &error);
  if (conv == NULL || (preview == NULL && job->automatic))
    {
      job_free (job);
      return;
    }
  if (preview == NULL || preview->count == 0)
    {
      /* After an absence IRC could not show, "nothing" would be untrue: say what was not received. */
      g_autofree char *gap = preview ? catchup_presence_gap_text (conv) : NULL;
      g_autofree char *line = gap ? g_steal_pointer (&gap) : preview ? empty_line (job, preview) : g_strdup (error->message);

      if (!job->automatic)
        catchup_output_local (conv, line);
      job_free (job);
      return;
    }
  start_engine (conv, job, preview);
}

void
catchup_run (PurpleConversation *conv, const CatchupWindow *window, const char *arg, gboolean post,
             gboolean automatic)
{
  Job *job;

  if (catchup_plugin.writer == NULL)
    {
      catchup_output_local (conv, _("The catch-up history database could not be opened; see the debug log."));
      return;
    }
  job = g_new0 (Job, 1);
  job->key = catchup_room_key_new (conv);
  job->spec = catchup_room_key_spec (job->key);
  job->arg = g_strdup (arg);
  job->window = *window;
  job->window.first_id = g_strdup (window->first_id);
  job->window.last_id = g_strdup (window->last_id);
  job->post = post;
  job->automatic = automatic;
  catchup_room_settings_get (conv, &job->settings);
  catchup_window_cap (&job->window, (guint) MAX (job->settings.max_window, 0));
  /* The preview runs after the messages still queued for writing, so the window includes them. */
  catchup_writer_call_async (catchup_plugin.writer, preview_window, job, NULL, g_free, catchup_plugin.cancellable,
                             preview_done, job);
}
