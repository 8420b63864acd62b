#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-engine.h"
#include "catchup-error.h"
#include "catchup-text.h"

void
catchup_options_init (CatchupOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  catchup_memory_options_init (&opts->memory);
  opts->length = CATCHUP_LENGTH_NORMAL;
}

void
catchup_result_free (CatchupResult *result)
{
  if (result == NULL)
    return;
  g_clear_pointer (&result->window, g_ptr_array_unref);
  g_clear_pointer (&result->memory, catchup_memory_free);
  g_clear_pointer (&result->summary, catchup_summary_free);
  g_free (result);
}

static CatchupMessage *
message_or_error (CatchupStore *store, gint64 room, const char *id, GError **error)
{
  g_autoptr (GError) local = NULL;
  CatchupMessage *m = catchup_store_get_message (store, room, id, &local);

  if (m == NULL && (local == NULL || g_error_matches (local, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND)))
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND, _("No message with id “%s” in this room."), id);
  else if (m == NULL)
    g_propagate_error (error, g_steal_pointer (&local));
  return m;
}

static GPtrArray *
window_between (CatchupStore *store, gint64 room, const char *first_id, const char *last_id, GError **error)
{
  g_autoptr (CatchupMessage) a = NULL, b = NULL;
  CatchupPos pa, pb;

  if (first_id == NULL || last_id == NULL)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("A window needs a first and a last message id."));
      return NULL;
    }
  if ((a = message_or_error (store, room, first_id, error)) == NULL ||
      (b = message_or_error (store, room, last_id, error)) == NULL)
    return NULL;
  pa = catchup_pos_of (a);
  pb = catchup_pos_of (b);
  if (catchup_pos_cmp (&pa, &pb) > 0)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("The window's first message (%s) comes after its "
                   "last (%s)."), first_id, last_id);
      return NULL;
    }
  return catchup_store_range (store, room, &pa, &pb, 0, error);
}

/* Keeps only conversational turns, and at most max of the newest. */
static void
trim_window (GPtrArray *msgs, guint max)
{
  for (guint i = msgs->len; i-- > 0;)
    if (((CatchupMessage *) msgs->pdata[i])->flags & CATCHUP_MESSAGE_EVENT)
      g_ptr_array_remove_index (msgs, i);
  if (max && msgs->len > max)
    g_ptr_array_remove_range (msgs, 0, msgs->len - max);
}

GPtrArray *
catchup_engine_window (CatchupStore *store, gint64 room, const CatchupWindow *window, GError **error)
{
  g_autoptr (GPtrArray) msgs = NULL;

  switch (window->kind)
    {
    case CATCHUP_WINDOW_LAST:
      msgs = catchup_store_before (store, room, NULL, MAX (window->last_n, 1), error);
      break;
    case CATCHUP_WINDOW_SINCE:
      msgs = catchup_store_since (store, room, window->since, error);
      break;
    case CATCHUP_WINDOW_BETWEEN:
      msgs = window_between (store, room, window->first_id, window->last_id, error);
      break;
    }
  if (msgs == NULL)
    return NULL;
  trim_window (msgs, window->max_messages);
  if (msgs->len == 0)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("There is nothing to catch up on in that window."));
      return NULL;
    }
  return g_steal_pointer (&msgs);
}

CatchupResult *
catchup_engine_run (CatchupStore *store, gint64 room, const CatchupWindow *window, const CatchupOptions *opts,
                    GCancellable *cancellable, GError **error)
{
  g_autoptr (CatchupResult) res = g_new0 (CatchupResult, 1);

  res->window = catchup_engine_window (store, room, window, error);
  if (res->window == NULL)
    return NULL;
  for (guint i = 0; i < res->window->len; i++)
    {
      CatchupMessage *m = res->window->pdata[i];

      res->window_tokens += catchup_text_count_turn (m->speaker, m->text);
    }
  res->memory = catchup_memory_build (store, room, res->window, &opts->memory, cancellable, error);
  if (res->memory == NULL)
    return NULL;
  res->summary = catchup_summary_extractive (res->window, res->memory, opts->length);
  return g_steal_pointer (&res);
}

typedef struct {
  char *db_path;
  char *room_spec;
  CatchupWindow window;
  CatchupOptions opts;
} AsyncJob;

static void
async_job_free (AsyncJob *job)
{
  g_free (job->db_path);
  g_free (job->room_spec);
  g_free (job->window.first_id);
  g_free (job->window.last_id);
  g_free (job->opts.language);
  if (job->opts.memory.gaps)
    g_ptr_array_unref (job->opts.memory.gaps);
  g_free (job);
}

static void
run_in_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  AsyncJob *job = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = catchup_store_open (job->db_path, &error);
  gint64 room = store ? catchup_store_find_room (store, job->room_spec, &error) : 0;
  CatchupResult *res = room ? catchup_engine_run (store, room, &job->window, &job->opts, cancellable, &error) : NULL;

  if (res)
    g_task_return_pointer (task, res, (GDestroyNotify) catchup_result_free);
  else
    g_task_return_error (task, g_steal_pointer (&error));
}

void
catchup_engine_run_async (const char *db_path, const char *room_spec, const CatchupWindow *window,
                          const CatchupOptions *opts, GCancellable *cancellable, GAsyncReadyCallback callback,
                          gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  AsyncJob *job = g_new0 (AsyncJob, 1);

  job->db_path = g_strdup (db_path);
  job->room_spec = g_strdup (room_spec);
  job->window = *window;
  job->window.first_id = g_strdup (window->first_id);
  job->window.last_id = g_strdup (window->last_id);
  job->opts = *opts;
  job->opts.language = g_strdup (opts->language);
  /* the embedder belongs to the caller's thread; the worker makes its own default one */
  job->opts.memory.embedder = NULL;
  if (opts->memory.gaps)
    job->opts.memory.gaps = g_ptr_array_ref (opts->memory.gaps);
  g_task_set_source_tag (task, catchup_engine_run_async);
  g_task_set_task_data (task, job, (GDestroyNotify) async_job_free);
  g_task_set_return_on_cancel (task, FALSE);
  g_task_run_in_thread (task, run_in_thread);
}

CatchupResult *
catchup_engine_run_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
