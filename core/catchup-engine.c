#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-ask.h"
#include "catchup-ask-answer.h"
#include "catchup-embed-cache.h"
#include "catchup-engine.h"
#include "catchup-error.h"
#include "catchup-llm-embed.h"
#include "catchup-llm-gaps.h"
#include "catchup-llm-select.h"
#include "catchup-llm-summary.h"
#include "catchup-text.h"

void
catchup_options_init (CatchupOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  catchup_memory_options_init (&opts->memory);
  opts->length = CATCHUP_LENGTH_NORMAL;
}

void
catchup_model_report_clear (CatchupModelReport *report)
{
  g_clear_pointer (&report->notice, g_free);
}

void
catchup_result_free (CatchupResult *result)
{
  if (result == NULL)
    return;
  catchup_model_report_clear (&result->model);
  g_clear_pointer (&result->window, g_ptr_array_unref);
  g_clear_pointer (&result->memory, catchup_memory_free);
  g_clear_pointer (&result->summary, catchup_summary_free);
  g_free (result);
}

/* total: the turns before the cap kept the newest */
static GPtrArray *
engine_window (CatchupStore *store, gint64 room, const CatchupWindow *window, guint *total, GError **error)
{
  CatchupWindowInfo info;
  g_autoptr (GPtrArray) msgs = catchup_window_resolve (store, room, window, &info, error);

  if (msgs == NULL)
    return NULL;
  if (total)
    *total = info.total;
  if (msgs->len == 0)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("There is nothing to catch up on in that window."));
      return NULL;
    }
  return g_steal_pointer (&msgs);
}

GPtrArray *
catchup_engine_window (CatchupStore *store, gint64 room, const CatchupWindow *window, GError **error)
{
  return engine_window (store, room, window, NULL, error);
}

/* ---------- the model path ---------- */

/* Counts what a catch-up embeds, so that "nothing but the queries" is measured, not assumed. */
typedef struct {
  CatchupEmbedder parent;
  CatchupEmbedder *inner;
  CatchupModelReport *report;
} CountingEmbedder;

static gboolean
counting_embed (CatchupEmbedder *self, const char *const *texts, guint n, gboolean is_query, float *out,
                GCancellable *cancellable, GError **error)
{
  CountingEmbedder *c = (CountingEmbedder *) self;

  if (is_query)
    c->report->query_embeddings += n;
  else
    c->report->history_embeddings += n;
  return c->inner->embed (c->inner, texts, n, is_query, out, cancellable, error);
}

static void
counting_free (CatchupEmbedder *self)
{
  catchup_embedder_free (((CountingEmbedder *) self)->inner);
  g_free (self);
}

static CatchupEmbedder *
counting_new (CatchupEmbedder *inner, CatchupModelReport *report)
{
  CountingEmbedder *c = g_new0 (CountingEmbedder, 1);

  c->inner = inner;
  c->report = report;
  c->parent.name = inner->name;
  c->parent.dim = inner->dim;
  c->parent.embed = counting_embed;
  c->parent.free = counting_free;
  return &c->parent;
}

/* One catch-up's use of the model: its own client, and what went wrong on the way. */
typedef struct {
  CatchupLlm *llm;
  CatchupEmbedder *embedder;  /* stored vectors of the room's model exist: dense retrieval can use them */
  CatchupModelReport *report;
  char *broken;               /* the endpoint failed (down, slow, refused us): later steps do not try again */
  char *gaps_failure, *retrieval_failure, *selection_failure, *summary_failure;
} ModelSession;

static gboolean
has_text (const char *s)
{
  return s != NULL && *s != '\0';
}

/* One line, whatever the server put into its error text. */
static char *
one_line (const char *text)
{
  char *line = g_strstrip (g_strdelimit (g_strdup (text), "\r\n", ' '));
  gsize len = strlen (line);

  /* the notice goes on after the reason: "…; this is the built-in summary." */
  if (len > 0 && line[len - 1] == '.')
    line[len - 1] = '\0';
  return line;
}

/* Records why a step fell back; an endpoint failure (anything but an unusable answer) also stops the later
 * steps, so that a dead or slow endpoint costs one timeout per catch-up, not one per step. */
static void
session_fail (ModelSession *ms, char **slot, const GError *error)
{
  g_autofree char *reason = one_line (error->message);

  if (!g_error_matches (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL) && ms->broken == NULL)
    ms->broken = g_strdup (reason);
  if (*slot == NULL)
    *slot = g_steal_pointer (&reason);
}

/* TRUE when the step may call the model; else its slot says why not. */
static gboolean
session_may_call (ModelSession *ms, char **slot)
{
  if (ms->llm != NULL && ms->broken == NULL)
    return TRUE;
  if (*slot == NULL && ms->broken != NULL)
    *slot = g_strdup (ms->broken);
  return FALSE;
}

static gboolean
is_cancel (const GError *error, GCancellable *cancellable)
{
  return g_cancellable_is_cancelled (cancellable) || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

/* The model embedder of the vectors stored for this model; the dimension comes from the store, so opening
 * it asks the server nothing. */
static void
session_open_embedder (ModelSession *ms, CatchupStore *store)
{
  const CatchupLlmConfig *config = catchup_llm_get_config (ms->llm);
  /* the name catchup_llm_embedder_new gives its embedder, "openai:MODEL:DIM", without the dimension */
  g_autofree char *prefix = g_strdup_printf ("openai:%s:", config->embed_model);
  g_autoptr (GError) error = NULL;
  CatchupEmbedder *inner;
  guint dim = catchup_embed_cache_stored_dim (store, prefix, &error);

  if (dim == 0)
    {
      ms->retrieval_failure = error ? one_line (error->message)
                                    : g_strdup (_("no stored embeddings of this model yet (“catchup embed” computes "
                                                  "them)"));
      return;
    }
  inner = catchup_llm_embedder_new (ms->llm, dim, NULL, &error);
  if (inner == NULL)
    session_fail (ms, &ms->retrieval_failure, error);
  else
    ms->embedder = counting_new (inner, ms->report);
}

static void
session_open (ModelSession *ms, const CatchupLlmConfig *config, CatchupStore *store, CatchupModelReport *report)
{
  g_autoptr (GError) error = NULL;

  memset (ms, 0, sizeof *ms);
  memset (report, 0, sizeof *report);
  ms->report = report;
  if (config == NULL || !has_text (config->base_url))
    return;
  report->configured = TRUE;
  ms->llm = catchup_llm_new (config, &error);
  if (ms->llm == NULL)
    {
      session_fail (ms, &ms->summary_failure, error);
      return;
    }
  if (has_text (config->embed_model))
    session_open_embedder (ms, store);
}

static gboolean
session_has_chat (ModelSession *ms)
{
  return ms->report->configured && (ms->llm == NULL || has_text (catchup_llm_get_config (ms->llm)->chat_model));
}

/* "Model not used …" for the steps that fell back, in one line; the summary's own reason says it all. */
static char *
session_notice (ModelSession *ms)
{
  g_autoptr (GString) s = g_string_new (NULL);

  if (ms->summary_failure != NULL)
    {
      g_string_append_printf (s, _("Model not used: %s; this is the built-in summary."), ms->summary_failure);
      return g_string_free (g_steal_pointer (&s), FALSE);
    }
  if (ms->gaps_failure != NULL)
    g_string_append_printf (s, _("Model not used for gap detection: %s; the built-in detector found the gaps."),
                            ms->gaps_failure);
  if (ms->retrieval_failure != NULL)
    {
      if (s->len)
        g_string_append_c (s, ' ');
      g_string_append_printf (s, _("Model embeddings not used: %s; the built-in retrieval was used."),
                              ms->retrieval_failure);
    }
  if (ms->selection_failure != NULL)
    {
      if (s->len)
        g_string_append_c (s, ' ');
      g_string_append_printf (s, _("Model not used to choose the evidence: %s; the built-in ranking chose it."),
                              ms->selection_failure);
    }
  return s->len ? g_string_free (g_steal_pointer (&s), FALSE) : NULL;
}

static void
session_close (ModelSession *ms)
{
  if (ms->llm != NULL)
    catchup_llm_get_stats (ms->llm, &ms->report->stats);
  ms->report->used = ms->report->gaps_used || ms->report->retrieval_used || ms->report->selection_used ||
                     ms->report->summary_used || ms->report->answer_used;
  g_free (ms->report->notice);
  ms->report->notice = session_notice (ms);
  g_clear_pointer (&ms->embedder, catchup_embedder_free);
  g_clear_pointer (&ms->llm, catchup_llm_unref);
  g_free (ms->broken);
  g_free (ms->gaps_failure);
  g_free (ms->retrieval_failure);
  g_free (ms->selection_failure);
  g_free (ms->summary_failure);
}

static gboolean
method_has_gaps (CatchupMethod method)
{
  return method == CATCHUP_METHOD_REMEMBER || method == CATCHUP_METHOD_GAPS;
}

/* The model's gaps for the window, or NULL for the embedded detector. */
static GPtrArray *
session_gaps (ModelSession *ms, GPtrArray *window, const CatchupMemoryOptions *mopts, GCancellable *cancellable,
              GError **error)
{
  g_autoptr (GError) local = NULL;
  GPtrArray *gaps;

  if (!session_has_chat (ms) || mopts->gaps != NULL || !method_has_gaps (mopts->method) ||
      !session_may_call (ms, &ms->gaps_failure))
    return NULL;
  gaps = catchup_llm_gaps_detect (ms->llm, window, mopts->max_gaps, cancellable, &local);
  if (gaps == NULL && is_cancel (local, cancellable))
    g_propagate_error (error, g_steal_pointer (&local));
  else if (gaps == NULL)
    session_fail (ms, &ms->gaps_failure, local);
  else if (gaps->len == 0)
    {
      ms->gaps_failure = g_strdup (_("it found no usable gap"));
      g_clear_pointer (&gaps, g_ptr_array_unref);
    }
  else
    ms->report->gaps_used = TRUE;
  return gaps;
}

/* Builds with the model's vectors when there are some, and again without them when the query embedding
 * fails: a catch-up never fails because of the model. */
static CatchupMemory *
session_build (ModelSession *ms, CatchupStore *store, gint64 room, GPtrArray *window, const char *query,
               const CatchupMemoryOptions *mopts, GCancellable *cancellable, GError **error)
{
  CatchupMemoryOptions o = *mopts;
  g_autoptr (GError) local = NULL;
  CatchupMemory *mem = NULL;

  /* an embedding model asked for and then not used is worth a word, not silence */
  if (ms->embedder != NULL && !method_has_gaps (mopts->method) && ms->retrieval_failure == NULL)
    ms->retrieval_failure = g_strdup_printf (_("the method “%s” does not use them (“remember” does)"),
                                             catchup_method_to_string (mopts->method));
  if (ms->embedder != NULL && method_has_gaps (mopts->method) && session_may_call (ms, &ms->retrieval_failure))
    {
      o.embedder = ms->embedder;
      mem = window ? catchup_memory_build (store, room, window, &o, cancellable, &local)
                   : catchup_memory_recall (store, room, query, &o, cancellable, &local);
      if (mem != NULL)
        {
          ms->report->retrieval_used = TRUE;
          return mem;
        }
      if (is_cancel (local, cancellable))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      session_fail (ms, &ms->retrieval_failure, local);
    }
  o.embedder = mopts->embedder;
  return window ? catchup_memory_build (store, room, window, &o, cancellable, error)
                : catchup_memory_recall (store, room, query, &o, cancellable, error);
}

/* Whether the model will be asked to choose the evidence of a window's memory. */
static gboolean
session_selects (ModelSession *ms, GPtrArray *window, const CatchupMemoryOptions *mopts)
{
  return window != NULL && session_has_chat (ms) && method_has_gaps (mopts->method) && ms->llm != NULL &&
         ms->broken == NULL;
}

/* The model chooses the evidence from the pools; when it cannot, the built-in ranking's memory stays. FALSE
 * only for a cancellation. */
static gboolean
session_select (ModelSession *ms, CatchupMemory *mem, GPtrArray *window, const CatchupMemoryOptions *mopts,
                GCancellable *cancellable, GError **error)
{
  g_autoptr (GError) local = NULL;
  CatchupSelectInfo info;

  if (mem->gaps->len == 0 || !session_may_call (ms, &ms->selection_failure))
    return TRUE;
  if (catchup_llm_select_evidence (ms->llm, mem, window, mopts->budget, &info, cancellable, &local))
    ms->report->selection_used = TRUE;
  else if (is_cancel (local, cancellable))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  else
    session_fail (ms, &ms->selection_failure, local);
  ms->report->selection_candidates = info.candidates;
  ms->report->selection_prompt_tokens = info.prompt_tokens;
  return TRUE;
}

static CatchupMemory *
session_memory (ModelSession *ms, CatchupStore *store, gint64 room, GPtrArray *window, const char *query,
                const CatchupOptions *opts, GCancellable *cancellable, GError **error)
{
  CatchupMemoryOptions mopts = opts->memory;
  g_autoptr (GPtrArray) gaps = NULL;
  g_autoptr (GError) local = NULL;
  g_autoptr (CatchupMemory) mem = NULL;
  gboolean selects;

  if (window != NULL)
    {
      gaps = session_gaps (ms, window, &opts->memory, cancellable, &local);
      if (local != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (gaps != NULL)
        mopts.gaps = gaps;
    }
  selects = session_selects (ms, window, &mopts);
  if (selects && mopts.pool_size == 0)
    mopts.pool_size = CATCHUP_DEFAULT_POOL;
  mem = session_build (ms, store, room, window, query, &mopts, cancellable, error);
  if (mem != NULL && selects && !session_select (ms, mem, window, &mopts, cancellable, error))
    return NULL;
  return g_steal_pointer (&mem);
}

static CatchupSummary *
session_summary (ModelSession *ms, GPtrArray *window, CatchupMemory *mem, GPtrArray *records,
                 const CatchupOptions *opts, GCancellable *cancellable, GError **error)
{
  g_autoptr (GError) local = NULL;
  CatchupSummary *summary = NULL;

  if (session_has_chat (ms) && session_may_call (ms, &ms->summary_failure))
    {
      summary = catchup_llm_summarize (ms->llm, window, mem, opts->length, opts->language, cancellable, &local);
      if (summary == NULL && is_cancel (local, cancellable))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (summary == NULL)
        session_fail (ms, &ms->summary_failure, local);
      else
        ms->report->summary_used = TRUE;
    }
  if (summary == NULL)
    {
      CatchupSummaryOptions sopts = { .length = opts->length, .me = opts->me, .records = records };

      return catchup_summary_extractive (window, mem, &sopts);
    }
  catchup_summary_mark_for_you (summary, window, opts->me);
  catchup_summary_apply_records (summary, window, records, opts->me);
  return summary;
}

/* The summary's notice keeps what the model's post-check said and adds why a step fell back. */
static void
summary_add_notice (CatchupSummary *summary, const char *notice)
{
  char *joined;

  if (notice == NULL)
    return;
  joined = summary->notice ? g_strconcat (summary->notice, " ", notice, NULL) : g_strdup (notice);
  g_free (summary->notice);
  summary->notice = joined;
}

static CatchupMemory *
engine_memory (CatchupStore *store, gint64 room, GPtrArray *window, const char *query, const CatchupOptions *opts,
               CatchupModelReport *report, GCancellable *cancellable, GError **error)
{
  CatchupModelReport own = { 0 };
  ModelSession ms;
  CatchupMemory *mem;

  session_open (&ms, opts->model, store, report ? report : &own);
  mem = session_memory (&ms, store, room, window, query, opts, cancellable, error);
  session_close (&ms);
  catchup_model_report_clear (&own);
  return mem;
}

CatchupMemory *
catchup_engine_memory (CatchupStore *store, gint64 room, GPtrArray *window, const CatchupOptions *opts,
                       CatchupModelReport *report, GCancellable *cancellable, GError **error)
{
  return engine_memory (store, room, window, NULL, opts, report, cancellable, error);
}

static CatchupAskResult *
ask_evidence (ModelSession *ms, CatchupStore *store, gint64 room, const char *question, const CatchupOptions *opts,
              GCancellable *cancellable, GError **error)
{
  CatchupAskQuery *q = catchup_ask_compile_for_room (store, room, question, error);
  g_autoptr (GPtrArray) named = g_ptr_array_new ();
  CatchupOptions qopts = *opts;
  CatchupMemory *mem;
  gboolean per_person = FALSE;

  if (q == NULL)
    return NULL;
  if (!catchup_ask_per_person (store, room, q, &per_person, error))
    {
      catchup_ask_query_free (q);
      return NULL;
    }
  if (per_person)
    return catchup_ask_people (store, room, q, opts->memory.budget, error);
  /* the verbatim track's recall, with the model's embeddings when there is one; the people the question
   * names are whose turns it asks for */
  g_ptr_array_extend (named, q->people, NULL, NULL);
  g_ptr_array_add (named, NULL);
  qopts.memory.speakers = (const char *const *) named->pdata;
  qopts.memory.since = q->since;
  qopts.memory.until = q->until;
  mem = session_memory (ms, store, room, NULL, question, &qopts, cancellable, error);
  if (mem == NULL)
    {
      catchup_ask_query_free (q);
      return NULL;
    }
  return catchup_ask_from_memory (q, mem);
}

/* The model's short answer beside the evidence; a model that cannot answer leaves the evidence and a notice.
 * FALSE only for a cancellation. */
static gboolean
session_answer (ModelSession *ms, CatchupAskResult *res, GCancellable *cancellable, GError **error)
{
  g_autofree char *reason = NULL;

  if (!session_has_chat (ms))
    return TRUE;
  if (session_may_call (ms, &reason))
    {
      if (!catchup_ask_answer (ms->llm, res, cancellable, error))
        return FALSE;
      ms->report->answer_used = res->answer != NULL;
      return TRUE;
    }
  if (reason == NULL && ms->summary_failure != NULL)
    reason = g_strdup (ms->summary_failure);
  g_free (res->notice);
  res->notice = g_strdup_printf (_("Model not used for the answer: %s; this is the evidence."),
                                 reason ? reason : _("no client"));
  return TRUE;
}

static CatchupAskResult *
engine_ask (CatchupStore *store, gint64 room, const char *question, const CatchupOptions *opts, gboolean answer,
            CatchupModelReport *report, GCancellable *cancellable, GError **error)
{
  CatchupModelReport own = { 0 };
  g_autoptr (CatchupAskResult) res = NULL;
  ModelSession ms;

  session_open (&ms, opts->model, store, report ? report : &own);
  res = ask_evidence (&ms, store, room, question, opts, cancellable, error);
  if (res != NULL && answer && !session_answer (&ms, res, cancellable, error))
    g_clear_pointer (&res, catchup_ask_result_free);
  session_close (&ms);
  catchup_model_report_clear (&own);
  return g_steal_pointer (&res);
}

CatchupAskResult *
catchup_engine_ask (CatchupStore *store, gint64 room, const char *question, const CatchupOptions *opts,
                    CatchupModelReport *report, GCancellable *cancellable, GError **error)
{
  return engine_ask (store, room, question, opts, TRUE, report, cancellable, error);
}

CatchupMemory *
catchup_engine_recall (CatchupStore *store, gint64 room, const char *query, const CatchupOptions *opts,
                       CatchupModelReport *report, GCancellable *cancellable, GError **error)
{
  g_autoptr (CatchupAskResult) res = NULL;

  /* the best method asks the room: per person where the question names people, the plain recall otherwise */
  if (opts->memory.method != CATCHUP_METHOD_REMEMBER)
    return engine_memory (store, room, NULL, query, opts, report, cancellable, error);
  res = engine_ask (store, room, query, opts, FALSE, report, cancellable, error);
  return res ? g_steal_pointer (&res->memory) : NULL;
}

CatchupResult *
catchup_engine_run (CatchupStore *store, gint64 room, const CatchupWindow *window, const CatchupOptions *opts,
                    GCancellable *cancellable, GError **error)
{
  g_autoptr (CatchupResult) res = g_new0 (CatchupResult, 1);
  g_autoptr (GPtrArray) records = NULL;
  ModelSession ms;

  res->window = engine_window (store, room, window, &res->window_total, error);
  if (res->window == NULL)
    return NULL;
  for (guint i = 0; i < res->window->len; i++)
    {
      CatchupMessage *m = res->window->pdata[i];

      res->window_tokens += catchup_text_count_turn (m->speaker, m->text);
    }
  /* the derived track says what is still open and which decision replaced which; a catch-up without it is
   * still a catch-up */
  records = catchup_summary_records_load (store, room, res->window, opts->me, NULL);
  session_open (&ms, opts->model, store, &res->model);
  res->memory = session_memory (&ms, store, room, res->window, NULL, opts, cancellable, error);
  if (res->memory != NULL)
    res->summary = session_summary (&ms, res->window, res->memory, records, opts, cancellable, error);
  session_close (&ms);
  if (res->summary == NULL)
    return NULL;
  catchup_summary_set_head (res->summary, res->window, res->window_total);
  summary_add_notice (res->summary, res->model.notice);
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
  g_free (job->opts.me);
  if (job->opts.memory.gaps)
    g_ptr_array_unref (job->opts.memory.gaps);
  catchup_llm_config_free ((CatchupLlmConfig *) job->opts.model);
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
  job->opts.me = g_strdup (opts->me);
  /* the embedder belongs to the caller's thread; the worker makes its own default one */
  job->opts.memory.embedder = NULL;
  if (opts->memory.gaps)
    job->opts.memory.gaps = g_ptr_array_ref (opts->memory.gaps);
  /* the worker makes its own client from the copy: one per catch-up, so its counters are this one's */
  job->opts.model = catchup_llm_config_dup (opts->model);
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
