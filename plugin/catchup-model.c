#include "config.h"

#include "catchup-plugin-private.h"

#include <debug.h>
#include <eventloop.h>
#include <prefs.h>

#include "catchup-embed-cache.h"
#include "catchup-llm-embed.h"

/*
 * The language model as the preferences configure it, and the background work it needs: a catch-up with an
 * embedding model reads stored vectors only, so they are computed here, off the main loop, as history
 * arrives — from live messages, rejoin playback and imported logs alike, since every pass fills whatever
 * has no vector yet (a fill that finds nothing to do costs a couple of queries per room). With a chat model,
 * a second job writes the records of new messages with the model the same way (catchup-records-model.h):
 * bounded in calls and time per pass, its writes through the history writer.
 */

/* How often the background fill looks for history without vectors. */
#define FILL_INTERVAL_S 60

static guint fill_timer;
static gboolean fill_running, records_running;
/* The embedding model's dimension, learnt from the server once per model and endpoint rather than once a
 * minute: "endpoint model" -> dimension. Main loop only. */
static char *known_model;
static guint known_dim;

CatchupLlmConfig *
catchup_model_config_from_prefs (void)
{
  const char *endpoint = purple_prefs_get_string (CATCHUP_PREF_ENDPOINT);
  const char *key = purple_prefs_get_string (CATCHUP_PREF_API_KEY);
  CatchupLlmConfig *config;

  if (endpoint == NULL || *endpoint == '\0')
    return NULL;
  config = g_new0 (CatchupLlmConfig, 1);
  catchup_llm_config_init (config);
  config->base_url = g_strdup (endpoint);
  config->chat_model = g_strdup (purple_prefs_get_string (CATCHUP_PREF_CHAT_MODEL));
  config->embed_model = g_strdup (purple_prefs_get_string (CATCHUP_PREF_EMBED_MODEL));
  /* an empty key field leaves the client to read $CATCHUP_API_KEY */
  config->api_key = key != NULL && *key != '\0' ? g_strdup (key) : NULL;
  config->timeout_ms = (guint) CLAMP (purple_prefs_get_int (CATCHUP_PREF_TIMEOUT), 1, 3600) * 1000u;
  config->thinking = purple_prefs_get_bool (CATCHUP_PREF_THINKING);
  return config;
}

typedef struct {
  char *db_path;
  CatchupWriter *writer;  /* a reference: the fill may outlive the plugin's unload by a moment */
  CatchupLlmConfig *config;
  char *model_key;
  guint dim;          /* 0: ask the server; the worker leaves the answer here */
} FillJob;

static void
fill_job_free (FillJob *job)
{
  g_free (job->db_path);
  catchup_writer_unref (job->writer);
  g_free (job->model_key);
  catchup_llm_config_free (job->config);
  g_free (job);
}

static GArray *
room_ids (CatchupStore *store, GError **error)
{
  g_autoptr (GPtrArray) infos = catchup_store_list_rooms (store, error);
  GArray *ids;

  if (infos == NULL)
    return NULL;
  ids = g_array_sized_new (FALSE, FALSE, sizeof (gint64), infos->len);
  for (guint i = 0; i < infos->len; i++)
    g_array_append_val (ids, ((CatchupRoomInfo *) infos->pdata[i])->id);
  return ids;
}

/* In a worker: reads with a connection of its own, embeds without holding any lock, and stores every vector
 * through the history writer, the database's one writer. Then the vectors of other models go. */
static gboolean
fill_all (FillJob *job, GCancellable *cancellable, guint *computed, GError **error)
{
  g_autoptr (CatchupStore) store = catchup_store_open (job->db_path, error);
  g_autoptr (CatchupLlm) llm = store ? catchup_llm_new (job->config, error) : NULL;
  g_autoptr (CatchupEmbedder) embedder = llm ? catchup_llm_embedder_new (llm, job->dim, cancellable, error) : NULL;
  g_autoptr (GArray) rooms = embedder ? room_ids (store, error) : NULL;

  *computed = 0;
  if (rooms == NULL)
    return FALSE;
  job->dim = embedder->dim;
  return catchup_embed_cache_fill_rooms (store, rooms, embedder, TRUE, catchup_writer_embed_sink, job->writer,
                                         cancellable, computed, error);
}

static void
fill_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  g_autoptr (GError) error = NULL;
  guint computed = 0;

  if (fill_all (data, cancellable, &computed, &error))
    g_task_return_int (task, computed);
  else
    g_task_return_error (task, g_steal_pointer (&error));
}

static void
fill_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  FillJob *job = g_task_get_task_data (G_TASK (result));
  gssize computed = g_task_propagate_int (G_TASK (result), &error);

  fill_running = FALSE;
  /* a failure may mean the model changed under its name: ask again next time */
  g_free (known_model);
  known_model = computed >= 0 ? g_strdup (job->model_key) : NULL;
  known_dim = computed >= 0 ? job->dim : 0;
  if (computed < 0 && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    purple_debug_warning ("catchup", "embedding the history failed: %s\n", error->message);
  else if (computed > 0)
    purple_debug_info ("catchup", "embedded %" G_GSSIZE_FORMAT " texts of the history\n", computed);
}

/* In a worker: the model writes the records of the messages new since its last pass. */
static gboolean
records_all (FillJob *job, GCancellable *cancellable, CatchupRecordsModelStats *stats, GError **error)
{
  g_autoptr (CatchupStore) store = catchup_store_open (job->db_path, error);
  g_autoptr (CatchupLlm) llm = store ? catchup_llm_new (job->config, error) : NULL;
  g_autoptr (GArray) rooms = llm ? room_ids (store, error) : NULL;
  CatchupRecordsModelLimits limits;

  if (rooms == NULL)
    return FALSE;
  catchup_records_model_limits_init (&limits);
  return catchup_records_model_fill (store, rooms, llm, &limits, catchup_writer_records_sink, job->writer, stats,
                                     cancellable, error);
}

static void
records_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  g_autoptr (GError) error = NULL;
  CatchupRecordsModelStats stats;

  if (records_all (data, cancellable, &stats, &error))
    g_task_return_pointer (task, g_memdup2 (&stats, sizeof stats), g_free);
  else
    g_task_return_error (task, g_steal_pointer (&error));
}

static void
records_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree CatchupRecordsModelStats *stats = g_task_propagate_pointer (G_TASK (result), &error);

  records_running = FALSE;
  if (stats == NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    purple_debug_warning ("catchup", "writing records with the model failed: %s\n", error->message);
  else if (stats != NULL && stats->calls > 0)
    purple_debug_info ("catchup", "the model wrote %u records (%u actions dropped) in %u calls\n", stats->applied,
                       stats->dropped, stats->calls);
}

static gboolean
has_text (const char *s)
{
  return s != NULL && *s != '\0';
}

/* A background job of the model's on its own worker, with its own copy of the settings. */
static void
start_job (CatchupLlmConfig *config, char *model_key, gboolean *running, GAsyncReadyCallback done,
           GTaskThreadFunc thread)
{
  g_autoptr (GTask) task = NULL;
  FillJob *job = g_new0 (FillJob, 1);

  job->db_path = g_strdup (catchup_writer_get_path (catchup_plugin.writer));
  job->writer = catchup_writer_ref (catchup_plugin.writer);
  job->config = config;
  job->model_key = model_key;
  job->dim = g_strcmp0 (job->model_key, known_model) == 0 ? known_dim : 0;
  *running = TRUE;
  task = g_task_new (NULL, catchup_plugin.cancellable, done, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) fill_job_free);
  g_task_run_in_thread (task, thread);
}

/* One job of each kind at a time: a slow server must not pile up workers. */
static gboolean
fill_tick (gpointer data)
{
  CatchupLlmConfig *config = catchup_model_config_from_prefs ();

  if (config == NULL || catchup_plugin.writer == NULL)
    {
      catchup_llm_config_free (config);
      return G_SOURCE_CONTINUE;
    }
  if (has_text (config->embed_model) && !fill_running)
    start_job (catchup_llm_config_dup (config), g_strconcat (config->base_url, " ", config->embed_model, NULL),
               &fill_running, fill_done, fill_thread);
  if (has_text (config->chat_model) && !records_running)
    start_job (catchup_llm_config_dup (config), g_strconcat (config->base_url, " ", config->chat_model, NULL),
               &records_running, records_done, records_thread);
  catchup_llm_config_free (config);
  return G_SOURCE_CONTINUE;
}

void
catchup_model_start (void)
{
  fill_timer = purple_timeout_add_seconds (FILL_INTERVAL_S, fill_tick, NULL);
}

void
catchup_model_stop (void)
{
  if (fill_timer != 0)
    purple_timeout_remove (fill_timer);
  fill_timer = 0;
  g_clear_pointer (&known_model, g_free);
  known_dim = 0;
}
