#pragma once

#include "catchup-embed.h"
#include "catchup-gaps.h"
#include "catchup-store.h"

G_BEGIN_DECLS

#define CATCHUP_DEFAULT_BUDGET 1024

/* Memory-building methods, side by side for comparison. */
typedef enum {
  CATCHUP_METHOD_NONE,
  CATCHUP_METHOD_RECENT,    /* the turns just before the window */
  CATCHUP_METHOD_FULL,      /* the whole history, ignoring the budget */
  CATCHUP_METHOD_SPARSE,    /* BM25 with the window as query */
  CATCHUP_METHOD_DENSE,     /* default embedder with the window as query */
  CATCHUP_METHOD_HYBRID,    /* top 4 chunks of each, fused */
  CATCHUP_METHOD_REMEMBER,  /* gap-conditioned memory (the default) */
  CATCHUP_METHOD_GAPS,      /* remember without the lead-in: what gap retrieval alone contributes */
} CatchupMethod;

gboolean catchup_method_from_string (const char *name, CatchupMethod *out);
const char *catchup_method_to_string (CatchupMethod method);
const char *const *catchup_method_names (void);

typedef struct {
  CatchupMethod method;
  guint budget;                /* tokens of "speaker: text" over all memory turns */
  guint max_gaps;
  guint lead_in;               /* tokens of the turns just before the window kept first (remember) */
  guint chunks_per_gap;        /* K: chunks kept per gap after fusion (0: budget / chunk size) */
  CatchupEmbedder *embedder;   /* NULL: the default */
  GPtrArray *gaps;             /* CatchupGap: use these instead of the embedded detector (model path); may be NULL */
  guint pool_size;             /* remember: also keep each gap's best candidate turns, up to this many (0: none) */
  const char *const *speakers; /* a question's: the people it names (NULL-terminated, borrowed; may be NULL) */
  gint64 since, until;         /* a question's: the day or month it names, [since, until); until 0: none */
} CatchupMemoryOptions;

/* Candidate turns per gap for the model to choose the evidence from: the measured knee (docs/benchmarks.md). */
#define CATCHUP_DEFAULT_POOL 30

void catchup_memory_options_init (CatchupMemoryOptions *opts);

typedef struct {
  GPtrArray *turns;   /* CatchupMessage, chronological */
  GPtrArray *gaps;    /* CatchupGap used */
  GPtrArray *detected;/* CatchupGap: every gap the embedded detector found in the window, strongest first (gaps
                       * holds the first max_gaps); NULL when the gaps came from elsewhere (a model) */
  guint tokens;
  GHashTable *gap_of; /* message id -> index of the gap it was kept for (-1: lead-in) as GINT_TO_POINTER(i+1) */
  GPtrArray *pools;   /* with pool_size: per gap, a GPtrArray of candidate CatchupMessage, best first; else NULL */
  GPtrArray *selected;/* after catchup_memory_select: per gap, a GPtrArray of the chosen ids; else NULL */
} CatchupMemory;

void catchup_memory_free (CatchupMemory *mem);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupMemory, catchup_memory_free)

CatchupMemory *catchup_memory_new (void);
/* Adds a copy of m unless it is there already or would break the budget. gap: index of the gap it serves,
 * -1 for the lead-in. */
gboolean catchup_memory_add (CatchupMemory *mem, const CatchupMessage *m, int gap, guint budget);

/* Memory for a window (GPtrArray of CatchupMessage, all stored in room) from the history before it. */
CatchupMemory *catchup_memory_build (CatchupStore *store, gint64 room, GPtrArray *window,
                                     const CatchupMemoryOptions *opts, GCancellable *cancellable,
                                     GError **error);
/* Replaces the gap turns of mem by the turns chosen from its pools (selected: per gap of mem->gaps, a
 * GPtrArray of ids, best first; ids not in any pool are ignored): the lead-in stays, then round d adds the
 * d-th choice of every gap, within budget. Keeps a reference to selected in mem->selected. Returns how many
 * chosen turns went in. */
guint catchup_memory_select (CatchupMemory *mem, GPtrArray *selected, guint budget);

/* Memory for a free-text question over the whole history. */
CatchupMemory *catchup_memory_recall (CatchupStore *store, gint64 room, const char *query,
                                      const CatchupMemoryOptions *opts, GCancellable *cancellable,
                                      GError **error);

G_END_DECLS
