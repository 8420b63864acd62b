#pragma once

#include <gio/gio.h>

#include "catchup-ask.h"
#include "catchup-llm.h"
#include "catchup-memory.h"
#include "catchup-summary.h"
#include "catchup-window.h"

G_BEGIN_DECLS

typedef struct {
  CatchupMemoryOptions memory;
  CatchupLength length;
  char *language;           /* NULL: the room's */
  char *me;                 /* the user's nick in the room, for the summary's "For you"; NULL: none */
  /* NULL or without base_url: the embedded default only. Otherwise every catch-up makes its own client from
   * it (so its calls and tokens are its own): chat_model for gap detection and the summary, embed_model for
   * dense retrieval over the vectors catchup_embed_cache_fill_rooms stored. Borrowed; the async run copies it. */
  const CatchupLlmConfig *model;
} CatchupOptions;

void catchup_options_init (CatchupOptions *opts);

/* What the model did for one catch-up. */
typedef struct {
  gboolean configured;      /* opts->model named an endpoint */
  gboolean used;            /* at least one step used the model's answer */
  gboolean gaps_used, retrieval_used, summary_used;
  gboolean selection_used;  /* the model chose the memory's evidence from the candidate pools */
  gboolean answer_used;     /* a question got the model's short answer (catchup_engine_ask) */
  guint selection_candidates;    /* distinct candidate turns shown to it (0: not asked) */
  guint selection_prompt_tokens; /* the selection prompt, by the library's counter */
  char *notice;             /* one line: why a configured step did not use the model; NULL when all did */
  CatchupLlmStats stats;    /* HTTP calls and tokens of this catch-up */
  guint query_embeddings;   /* texts embedded at catch-up time: the gap queries or the question */
  guint history_embeddings; /* chunk or turn texts embedded at catch-up time: stored vectors make this 0 */
} CatchupModelReport;

void catchup_model_report_clear (CatchupModelReport *report);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CatchupModelReport, catchup_model_report_clear)

typedef struct {
  GPtrArray *window;        /* CatchupMessage */
  CatchupMemory *memory;
  CatchupSummary *summary;
  guint window_tokens;
  guint window_total;       /* messages the window held before the cap (window->max_messages) */
  CatchupModelReport model;
} CatchupResult;

void catchup_result_free (CatchupResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupResult, catchup_result_free)

/* A window's messages as catchup_window_resolve finds them, CATCHUP_ERROR_INVALID when there are none. */
GPtrArray *catchup_engine_window (CatchupStore *store, gint64 room, const CatchupWindow *window, GError **error);

/* Memory for a window or a question the way a catch-up builds it, with the model's gap detection, stored
 * vectors and (for a window) evidence selection from a wide candidate pool when opts->model says so (a failing
 * model step falls back to the embedded one, said in report->notice). report may be NULL; else it is filled in and must be cleared. */
CatchupMemory *catchup_engine_memory (CatchupStore *store, gint64 room, GPtrArray *window,
                                      const CatchupOptions *opts, CatchupModelReport *report,
                                      GCancellable *cancellable, GError **error);
/* A question to the room (catchup-ask.h): per person when it names people, else the recall of the verbatim
 * track with the model's embeddings when one is configured; with a chat model, its short answer beside the
 * evidence (catchup-ask-answer.h; when it cannot answer, res->notice says why). */
CatchupAskResult *catchup_engine_ask (CatchupStore *store, gint64 room, const char *question,
                                      const CatchupOptions *opts, CatchupModelReport *report,
                                      GCancellable *cancellable, GError **error);
CatchupMemory *catchup_engine_recall (CatchupStore *store, gint64 room, const char *query,
                                      const CatchupOptions *opts, CatchupModelReport *report,
                                      GCancellable *cancellable, GError **error);

/* The whole catch-up, synchronously, on the calling thread's own store. */
CatchupResult *catchup_engine_run (CatchupStore *store, gint64 room, const CatchupWindow *window,
                                   const CatchupOptions *opts, GCancellable *cancellable, GError **error);

/* The same off the caller's thread: opens its own connection to db_path in a worker and finds the room by
 * spec (see catchup_store_find_room). The callback runs on the caller's thread-default main context. */
void catchup_engine_run_async (const char *db_path, const char *room_spec, const CatchupWindow *window,
                               const CatchupOptions *opts, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data);
CatchupResult *catchup_engine_run_finish (GAsyncResult *result, GError **error);

G_END_DECLS
