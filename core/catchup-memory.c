#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-chunk.h"
#include "catchup-error.h"
#include "catchup-memory.h"
#include "catchup-retrieve.h"
#include "catchup-text.h"

#define DEFAULT_MAX_GAPS 12
#define DEFAULT_LEAD_IN 384
/* how far back the lead-in and the recent method look, in turns, before the budget stops them */
#define MAX_BACK_TURNS 2000

/* Turn refinement scores a turn by BM25 against the gap query plus COSINE_WEIGHT times the default
 * embedder's cosine (which catches word variants BM25 misses). Measured on the dev windows. */
#define COSINE_WEIGHT 2.0

static const char *const method_names[] = { "none", "recent", "full", "sparse", "dense", "hybrid", "remember", NULL };

const char *const *
catchup_method_names (void)
{
  return method_names;
}

gboolean
catchup_method_from_string (const char *name, CatchupMethod *out)
{
  for (guint i = 0; name && method_names[i]; i++)
    if (strcmp (name, method_names[i]) == 0)
      {
        *out = i;
        return TRUE;
      }
  return FALSE;
}

const char *
catchup_method_to_string (CatchupMethod method)
{
  return method <= CATCHUP_METHOD_REMEMBER ? method_names[method] : "remember";
}

void
catchup_memory_options_init (CatchupMemoryOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->method = CATCHUP_METHOD_REMEMBER;
  opts->budget = CATCHUP_DEFAULT_BUDGET;
  opts->max_gaps = DEFAULT_MAX_GAPS;
  opts->lead_in = DEFAULT_LEAD_IN;
}

void
catchup_memory_free (CatchupMemory *mem)
{
  if (mem == NULL)
    return;
  g_clear_pointer (&mem->turns, g_ptr_array_unref);
  g_clear_pointer (&mem->gaps, g_ptr_array_unref);
  g_clear_pointer (&mem->gap_of, g_hash_table_unref);
  g_free (mem);
}

static CatchupMemory *
memory_new (void)
{
  CatchupMemory *mem = g_new0 (CatchupMemory, 1);

  mem->turns = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  mem->gaps = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_gap_free);
  mem->gap_of = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return mem;
}

/* Adds a copy of m unless it is there already or would break the budget. gap: index of the gap it serves,
 * -1 for the lead-in. */
static gboolean
memory_add (CatchupMemory *mem, const CatchupMessage *m, int gap, guint budget)
{
  guint t = catchup_text_count_turn (m->speaker, m->text);

  if (g_hash_table_contains (mem->gap_of, m->id) || mem->tokens + t > budget)
    return FALSE;
  g_ptr_array_add (mem->turns, catchup_message_copy (m));
  g_hash_table_insert (mem->gap_of, g_strdup (m->id), GINT_TO_POINTER (gap + 1));
  mem->tokens += t;
  return TRUE;
}

static gint
cmp_chrono (gconstpointer a, gconstpointer b)
{
  const CatchupMessage *x = *(CatchupMessage *const *) a, *y = *(CatchupMessage *const *) b;
  CatchupPos p = catchup_pos_of (x), q = catchup_pos_of (y);

  return catchup_pos_cmp (&p, &q);
}

/* The newest turns before pos that fit in `tokens`, added newest first so the budget keeps the closest. */
static gboolean
add_recent (CatchupStore *store, gint64 room, const CatchupPos *pos, CatchupMemory *mem, guint tokens,
            guint budget, GError **error)
{
  g_autoptr (GPtrArray) before = catchup_store_before (store, room, pos, MAX_BACK_TURNS, error);
  guint used = 0;

  if (before == NULL)
    return FALSE;
  for (guint i = before->len; i-- > 0;)
    {
      CatchupMessage *m = before->pdata[i];
      guint t = catchup_text_count_turn (m->speaker, m->text);

      if (m->flags & CATCHUP_MESSAGE_EVENT)
        continue;
      if (used + t > tokens)
        break;
      if (memory_add (mem, m, -1, budget))
        used += t;
    }
  return TRUE;
}

static char *
window_text (GPtrArray *window)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < window->len; i++)
    {
      CatchupMessage *m = window->pdata[i];

      g_string_append_printf (s, "%s: %s\n", m->speaker, m->text);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

typedef struct {
  CatchupStore *store;
  gint64 room;
  const CatchupPos *before;
  CatchupEmbedder *embedder;
  GCancellable *cancellable;
} Ctx;

static gboolean
embed_one (Ctx *ctx, const char *text, gboolean is_query, float *out, GError **error)
{
  const char *texts[] = { text };

  return ctx->embedder->embed (ctx->embedder, texts, 1, is_query, out, ctx->cancellable, error);
}

/* Chunks for a query: sparse and/or dense top lists, fused by RRF, best `keep`. */
static GArray *
chunks_for (Ctx *ctx, const char *query, const float *qvec, gboolean sparse, gboolean dense, guint top,
            guint keep, GError **error)
{
  g_autoptr (GArray) s = NULL, d = NULL;
  GArray *lists[2] = { NULL, NULL };
  guint n = 0;

  if (sparse && (s = catchup_retrieve_sparse (ctx->store, ctx->room, query, ctx->before, top, error)) == NULL)
    return NULL;
  if (dense && (d = catchup_retrieve_dense (ctx->store, ctx->room, qvec, ctx->before, top, error)) == NULL)
    return NULL;
  if (s)
    lists[n++] = s;
  if (d)
    lists[n++] = d;
  return catchup_retrieve_fuse (lists, n, CATCHUP_RRF_K, keep);
}

typedef struct {
  CatchupMessage *msg;
  float score;
} Scored;

static gint
cmp_scored (gconstpointer a, gconstpointer b)
{
  float x = ((const Scored *) a)->score, y = ((const Scored *) b)->score;

  return x < y ? 1 : x > y ? -1 : 0;
}

static void
scored_clear (gpointer p)
{
  catchup_message_free (((Scored *) p)->msg);
}

/* Turn refinement: the turns of the kept chunks (before the window only), each scored against the query
 * by cosine, best first. */
static GArray *
refine_turns (Ctx *ctx, GArray *chunks, const char *query, const float *qvec, double chunk_prior,
              GError **error)
{
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (Scored));
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) idf = catchup_retrieve_idf (ctx->store, query, error);

  if (idf == NULL)
    return NULL;

  g_array_set_clear_func (out, scored_clear);
  for (guint c = 0; c < chunks->len; c++)
    {
      g_autoptr (GPtrArray) turns = catchup_retrieve_chunk_turns (ctx->store, g_array_index (chunks, CatchupHit,
                                                                                            c).chunk, error);

      if (turns == NULL)
        return NULL;
      for (guint i = 0; i < turns->len; i++)
        {
          CatchupMessage *m = turns->pdata[i];
          CatchupPos p = catchup_pos_of (m);
          g_autofree char *line = NULL;
          float v[CATCHUP_EMBED_DIM];
          Scored s;

          if ((ctx->before && catchup_pos_cmp (&p, ctx->before) >= 0) || !g_hash_table_add (seen, g_strdup (m->id)))
            continue;
          line = g_strdup_printf ("%s: %s", m->speaker, m->text);
          if (!embed_one (ctx, line, FALSE, v, error))
            return NULL;
          s.score = COSINE_WEIGHT * catchup_vec_dot (qvec, v, CATCHUP_EMBED_DIM) +
                    catchup_retrieve_turn_bm25 (idf, line) + chunk_prior * (double) (chunks->len - c) / chunks->len;
          s.msg = g_ptr_array_steal_index (turns, i--);
          g_array_append_val (out, s);
        }
    }
  g_array_sort (out, cmp_scored);
  return g_steal_pointer (&out);
}

/* Gap-balanced accumulation: round d adds the d-th best turn of every gap, until nothing more fits. */
static void
accumulate (CatchupMemory *mem, GPtrArray *lists, guint budget)
{
  gboolean more = TRUE;

  for (guint d = 0; more; d++)
    {
      more = FALSE;
      for (guint g = 0; g < lists->len; g++)
        {
          GArray *l = lists->pdata[g];

          if (d < l->len)
            {
              more = TRUE;
              memory_add (mem, g_array_index (l, Scored, d).msg, (int) g, budget);
            }
        }
    }
}

/*
 * Two uses, tuned apart on the benchmarks: a gap query fuses BM25 with the embedder (its trigrams find the
 * variants of a referent's words) and ranks single turns; a question is answered better by BM25 alone with
 * the chunk's rank dominating (the answer's context shares the question's words more than the answer does).
 */
typedef enum { QUERY_GAP, QUERY_QUESTION } QueryKind;

static GArray *
turns_for_query (Ctx *ctx, const char *query, guint keep, QueryKind kind, GError **error)
{
  float qvec[CATCHUP_EMBED_DIM];
  g_autoptr (GArray) chunks = NULL;

  if (!embed_one (ctx, query, TRUE, qvec, error))
    return NULL;
  chunks = chunks_for (ctx, query, qvec, TRUE, kind == QUERY_GAP, CATCHUP_RETRIEVE_TOP, keep, error);
  if (chunks == NULL)
    return NULL;
  return refine_turns (ctx, chunks, query, qvec, kind == QUERY_GAP ? 0.0 : 10.0, error);
}

static guint
chunks_per_gap (const CatchupMemoryOptions *opts)
{
  return opts->chunks_per_gap ? opts->chunks_per_gap : MAX (1, opts->budget / CATCHUP_CHUNK_TOKENS);
}

static gboolean
build_remember (Ctx *ctx, GPtrArray *window, const CatchupMemoryOptions *opts, CatchupMemory *mem,
                GError **error)
{
  g_autoptr (GPtrArray) lists = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);

  if (opts->gaps)
    for (guint i = 0; i < opts->gaps->len; i++)
      {
        CatchupGap *g = opts->gaps->pdata[i];
        CatchupGap *copy = catchup_gap_new ();

        *copy = *g;
        copy->utterance_id = g_strdup (g->utterance_id);
        copy->expression = g_strdup (g->expression);
        copy->reason = g_strdup (g->reason);
        copy->evidence = g_strdup (g->evidence);
        copy->anchors = g_strdup (g->anchors);
        copy->query = g_strdup (g->query);
        g_ptr_array_add (mem->gaps, copy);
      }
  else
    {
      g_autoptr (GPtrArray) found = catchup_gaps_detect (window, opts->max_gaps);

      g_ptr_array_extend_and_steal (mem->gaps, g_steal_pointer (&found));
    }
  if (!add_recent (ctx->store, ctx->room, ctx->before, mem, MIN (opts->lead_in, opts->budget), opts->budget,
                   error))
    return FALSE;
  for (guint i = 0; i < mem->gaps->len; i++)
    {
      CatchupGap *g = mem->gaps->pdata[i];
      GArray *l = turns_for_query (ctx, g->query, chunks_per_gap (opts), QUERY_GAP, error);

      if (l == NULL)
        return FALSE;
      g_ptr_array_add (lists, l);
    }
  accumulate (mem, lists, opts->budget);
  return TRUE;
}

/* Baselines with one query (the window, or a question): chunks in fused rank order, their turns in order. */
static gboolean
build_single_query (Ctx *ctx, const char *query, CatchupMethod method, guint budget, CatchupMemory *mem,
                    GError **error)
{
  float qvec[CATCHUP_EMBED_DIM];
  g_autoptr (GArray) chunks = NULL;
  gboolean hybrid = method == CATCHUP_METHOD_HYBRID;
  guint top = hybrid ? 4 : CATCHUP_RETRIEVE_TOP;

  if (!embed_one (ctx, query, TRUE, qvec, error))
    return FALSE;
  chunks = chunks_for (ctx, query, qvec, method != CATCHUP_METHOD_DENSE, method != CATCHUP_METHOD_SPARSE, top,
                       CATCHUP_RETRIEVE_TOP, error);
  if (chunks == NULL)
    return FALSE;
  for (guint c = 0; c < chunks->len; c++)
    {
      g_autoptr (GPtrArray) turns = catchup_retrieve_chunk_turns (ctx->store, g_array_index (chunks, CatchupHit,
                                                                                            c).chunk, error);

      if (turns == NULL)
        return FALSE;
      for (guint i = 0; i < turns->len; i++)
        {
          CatchupMessage *m = turns->pdata[i];
          CatchupPos p = catchup_pos_of (m);

          if (!ctx->before || catchup_pos_cmp (&p, ctx->before) < 0)
            memory_add (mem, m, 0, budget);
        }
    }
  return TRUE;
}

static gboolean
build_full (Ctx *ctx, CatchupMemory *mem, GError **error)
{
  g_autoptr (GPtrArray) all = catchup_store_range (ctx->store, ctx->room, NULL, NULL, 0, error);

  if (all == NULL)
    return FALSE;
  for (guint i = 0; i < all->len; i++)
    {
      CatchupMessage *m = all->pdata[i];
      CatchupPos p = catchup_pos_of (m);

      if (!(m->flags & CATCHUP_MESSAGE_EVENT) && (!ctx->before || catchup_pos_cmp (&p, ctx->before) < 0))
        memory_add (mem, m, -1, G_MAXUINT);
    }
  return TRUE;
}

static CatchupMemory *
build (Ctx *ctx, GPtrArray *window, const char *query, const CatchupMemoryOptions *opts, GError **error)
{
  g_autoptr (CatchupMemory) mem = memory_new ();
  g_autoptr (CatchupEmbedder) own = NULL;
  gboolean ok = TRUE;

  if (ctx->embedder == NULL)
    ctx->embedder = own = catchup_embedder_new_default ();
  switch (opts->method)
    {
    case CATCHUP_METHOD_NONE:
      break;
    case CATCHUP_METHOD_RECENT:
      ok = ctx->before ? add_recent (ctx->store, ctx->room, ctx->before, mem, opts->budget, opts->budget, error)
                       : build_single_query (ctx, query, CATCHUP_METHOD_SPARSE, opts->budget, mem, error);
      break;
    case CATCHUP_METHOD_FULL:
      ok = build_full (ctx, mem, error);
      break;
    case CATCHUP_METHOD_SPARSE:
    case CATCHUP_METHOD_DENSE:
    case CATCHUP_METHOD_HYBRID:
      ok = build_single_query (ctx, query, opts->method, opts->budget, mem, error);
      break;
    case CATCHUP_METHOD_REMEMBER:
      ok = build_remember (ctx, window, opts, mem, error);
      break;
    }
  if (ok && g_cancellable_set_error_if_cancelled (ctx->cancellable, error))
    ok = FALSE;
  if (!ok)
    return NULL;
  g_ptr_array_sort (mem->turns, cmp_chrono);
  return g_steal_pointer (&mem);
}

CatchupMemory *
catchup_memory_build (CatchupStore *store, gint64 room, GPtrArray *window, const CatchupMemoryOptions *opts,
                      GCancellable *cancellable, GError **error)
{
  g_autofree char *query = NULL;
  CatchupPos first;
  Ctx ctx = { store, room, &first, opts->embedder, cancellable };

  if (window == NULL || window->len == 0)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("The window is empty."));
      return NULL;
    }
  first = catchup_pos_of (window->pdata[0]);
  query = window_text (window);

  return build (&ctx, window, query, opts, error);
}

CatchupMemory *
catchup_memory_recall (CatchupStore *store, gint64 room, const char *query, const CatchupMemoryOptions *opts,
                       GCancellable *cancellable, GError **error)
{
  Ctx ctx = { store, room, NULL, opts->embedder, cancellable };
  g_autoptr (CatchupMemory) mem = NULL;

  if (opts->method != CATCHUP_METHOD_REMEMBER)
    return build (&ctx, NULL, query, opts, error);
  /* a question is one gap: its own words are the evidence query */
  mem = memory_new ();
  {
    g_autoptr (CatchupEmbedder) own = ctx.embedder ? NULL : catchup_embedder_new_default ();
    g_autoptr (GPtrArray) lists = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
    GArray *l;

    if (own)
      ctx.embedder = own;
    l = turns_for_query (&ctx, query, CATCHUP_RETRIEVE_TOP, QUERY_QUESTION, error);
    if (l == NULL)
      return NULL;
    g_ptr_array_add (lists, l);
    accumulate (mem, lists, opts->budget);
  }
  g_ptr_array_sort (mem->turns, cmp_chrono);
  return g_steal_pointer (&mem);
}
