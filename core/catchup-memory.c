#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-chunk.h"
#include "catchup-embed-cache.h"
#include "catchup-error.h"
#include "catchup-index.h"
#include "catchup-memory.h"
#include "catchup-retrieve.h"
#include "catchup-text.h"

#define DEFAULT_MAX_GAPS 12
/* Half the default budget: the knee of the dev sweep (docs/benchmarks.md), where the lead-in has taken every
 * near gap and the gaps still keep what they find far away. */
#define DEFAULT_LEAD_IN 512

/* Turn refinement scores a turn by BM25 against the gap query plus COSINE_WEIGHT times the default
 * embedder's cosine (which catches word variants BM25 misses). Measured on the dev windows. */
#define COSINE_WEIGHT 2.0
/* FTS5's cost grows with every OR-ed term and the rarest carry the retrieval. Measured on the dev windows and
 * the LoCoMo questions: 8, 10 and 16 terms give the same recall (12 is one gap lower, within noise), and a
 * catch-up on a 160K-token room takes 16.6 ms with 10 against 20.9 ms with 16. */
#define FOCUS_TERMS 10
/* A candidate pool draws on every chunk the sparse and dense lists fused (each CATCHUP_RETRIEVE_TOP long). */
#define POOL_CHUNKS (2 * CATCHUP_RETRIEVE_TOP)
/* The turns of a day or month a question names that are read beside its chunks, at most. */
#define SPAN_TURNS 2000
/* A candidate this short ("ok, agreed", "yes do it", counted with its speaker) means little without the turn
 * before it. */
#define SHORT_TURN_TOKENS 6

static const char *const method_names[] = {
  "none", "recent", "full", "sparse", "dense", "hybrid", "remember", "gaps", NULL,
};

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
  return method <= CATCHUP_METHOD_GAPS ? method_names[method] : "remember";
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
  g_clear_pointer (&mem->detected, g_ptr_array_unref);
  g_clear_pointer (&mem->gap_of, g_hash_table_unref);
  g_clear_pointer (&mem->pools, g_ptr_array_unref);
  g_clear_pointer (&mem->selected, g_ptr_array_unref);
  g_free (mem);
}

CatchupMemory *
catchup_memory_new (void)
{
  CatchupMemory *mem = g_new0 (CatchupMemory, 1);

  mem->turns = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  mem->gaps = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_gap_free);
  mem->gap_of = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return mem;
}

gboolean
catchup_memory_add (CatchupMemory *mem, const CatchupMessage *m, int gap, guint budget)
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
  /* a turn is at least three tokens ("a: b"), so this many turns always fill the allowance */
  g_autoptr (GPtrArray) before = catchup_store_before (store, room, pos, tokens / 3 + 1, error);
  guint used = 0;

  if (before == NULL)
    return FALSE;
  for (guint i = before->len; i-- > 0;)
    {
      CatchupMessage *m = before->pdata[i];
      guint t = catchup_text_count_turn (m->speaker, m->text);

      if (used + t > tokens)
        break;
      if (catchup_memory_add (mem, m, -1, budget))
        used += t;
    }
  return TRUE;
}

typedef struct {
  CatchupStore *store;
  gint64 room;
  const CatchupPos *before;
  CatchupEmbedder *embedder;
  GCancellable *cancellable;
  GHashTable *chunks;   /* chunk id -> CachedChunk */
  GHashTable *df;       /* term -> document frequency, shared by the queries of one build */
  gboolean model;       /* embedder is a model's: chunk and turn vectors come from the embedding cache */
  GPtrArray *pool_lists;/* with a pool: per gap, the turns of all fused chunks, ranked (GArray of Scored) */
} Ctx;

static gboolean
embed_one (Ctx *ctx, const char *text, gboolean is_query, float *out, GError **error)
{
  const char *texts[] = { text };

  return ctx->embedder->embed (ctx->embedder, texts, 1, is_query, out, ctx->cancellable, error);
}

/* Chunks for a query (stemmed terms, space-separated): its sparse list (when asked) and the given dense list,
 * fused by RRF, best `keep`. */
static GArray *
chunks_for (Ctx *ctx, const char *query, gboolean sparse, GArray *dense, guint top, guint keep, GError **error)
{
  g_autoptr (GArray) s = NULL;
  GArray *lists[2] = { NULL, NULL };
  guint n = 0;

  if (sparse && (s = catchup_retrieve_sparse_terms (ctx->store, ctx->room, query, ctx->before, top, error)) == NULL)
    return NULL;
  if (s)
    lists[n++] = s;
  if (dense)
    lists[n++] = dense;
  return catchup_retrieve_fuse (lists, n, CATCHUP_RRF_K, keep);
}

/* A chunk's turns before the window with their vectors, loaded once per build: gaps share chunks. */
typedef struct {
  GPtrArray *turns;   /* CatchupMessage */
  GPtrArray *lines;   /* "speaker: text" */
  GPtrArray *terms;   /* GPtrArray of the line's retrieval terms */
  float *vecs;        /* turns->len * CATCHUP_EMBED_DIM */
} CachedChunk;

static void
cached_chunk_free (CachedChunk *c)
{
  g_ptr_array_unref (c->turns);
  g_ptr_array_unref (c->lines);
  g_ptr_array_unref (c->terms);
  g_free (c->vecs);
  g_free (c);
}

/* The model path never embeds history at catch-up time: a turn without a stored vector scores cosine 0. */
static gboolean
model_turn_vectors (Ctx *ctx, CachedChunk *c, GError **error)
{
  guint dim = ctx->embedder->dim;
  g_autofree float *vecs = catchup_embed_cache_lookup (ctx->store, ctx->embedder->name, dim,
                                                       (const char *const *) c->lines->pdata, c->lines->len,
                                                       NULL, error);

  if (vecs == NULL)
    return FALSE;
  memcpy (c->vecs, vecs, sizeof (float) * c->lines->len * dim);
  return TRUE;
}

/* The default embedder's vectors of a chunk's turns; its own embedder works from the terms already cut for
 * BM25 instead of tokenising every line again. */
static gboolean
default_turn_vectors (Ctx *ctx, CachedChunk *c, GError **error)
{
  if (!catchup_embedder_is_default (ctx->embedder))
    return ctx->embedder->embed (ctx->embedder, (const char *const *) c->lines->pdata, c->lines->len, FALSE,
                                 c->vecs, ctx->cancellable, error);
  for (guint i = 0; i < c->terms->len; i++)
    catchup_embed_hashed_terms (c->terms->pdata[i], c->vecs + (gsize) i * CATCHUP_EMBED_DIM);
  return TRUE;
}

static CachedChunk *
chunk_load (Ctx *ctx, gint64 id, GError **error)
{
  CachedChunk *c = g_hash_table_lookup (ctx->chunks, &id);
  g_autoptr (GPtrArray) all = NULL;

  if (c != NULL)
    return c;
  if ((all = catchup_index_chunk_turns (ctx->store, id, error)) == NULL)
    return NULL;
  c = g_new0 (CachedChunk, 1);
  c->turns = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  c->lines = g_ptr_array_new_with_free_func (g_free);
  c->terms = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  for (guint i = 0; i < all->len; i++)
    {
      CatchupMessage *m = all->pdata[i];
      CatchupPos p = catchup_pos_of (m);

      if (ctx->before && catchup_pos_cmp (&p, ctx->before) >= 0)
        continue;
      /* the line stored model vectors are keyed by */
      g_ptr_array_add (c->lines, catchup_embed_turn_text (m));
      g_ptr_array_add (c->terms, catchup_text_terms (c->lines->pdata[c->lines->len - 1], TRUE));
      g_ptr_array_add (c->turns, g_ptr_array_steal_index (all, i--));
    }
  c->vecs = g_new (float, (gsize) MAX (c->turns->len, 1) * ctx->embedder->dim);
  if (c->turns->len && !(ctx->model ? model_turn_vectors (ctx, c, error) : default_turn_vectors (ctx, c, error)))
    {
      cached_chunk_free (c);
      return NULL;
    }
  g_hash_table_insert (ctx->chunks, g_memdup2 (&id, sizeof id), c);
  return c;
}

typedef struct {
  const CatchupMessage *msg;   /* owned by the chunk cache */
  float score;
  const CachedChunk *chunk;    /* where it came from, and its position there: for its neighbours */
  guint index;
} Scored;

static gint
cmp_scored (gconstpointer a, gconstpointer b)
{
  float x = ((const Scored *) a)->score, y = ((const Scored *) b)->score;

  return x < y ? 1 : x > y ? -1 : 0;
}

/* Turn refinement: the turns of the kept chunks (before the window only), each scored against the query
 * by turn-level BM25 plus the embedder's cosine, and by its chunk's rank when chunk_prior > 0; best first. */
static GArray *
refine_turns (Ctx *ctx, GArray *chunks, GHashTable *idf, const float *qvec, double chunk_prior, GError **error)
{
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (Scored));
  g_autoptr (GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  guint dim = ctx->embedder->dim;

  for (guint c = 0; c < chunks->len; c++)
    {
      CachedChunk *cc = chunk_load (ctx, g_array_index (chunks, CatchupHit, c).chunk, error);

      if (cc == NULL)
        return NULL;
      for (guint i = 0; i < cc->turns->len; i++)
        {
          const CatchupMessage *m = cc->turns->pdata[i];
          Scored s = { m, 0, cc, i };

          /* overlapping chunks hold the same turn twice */
          if (!g_hash_table_add (seen, GSIZE_TO_POINTER ((gsize) m->row)))
            continue;
          s.score = COSINE_WEIGHT * catchup_vec_dot (qvec, cc->vecs + (gsize) i * dim, dim) +
                    catchup_retrieve_terms_bm25 (idf, cc->terms->pdata[i]) +
                    chunk_prior * (double) (chunks->len - c) / chunks->len;
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
              catchup_memory_add (mem, g_array_index (l, Scored, d).msg, (int) g, budget);
            }
        }
    }
}

/*
 * Two uses, tuned apart on the benchmarks: a gap query fuses BM25 with the embedder (its trigrams find the
 * variants of a referent's words) and ranks single turns; a question is answered better by BM25 alone with
 * the chunk's rank dominating (the answer's context shares the question's words more than the answer does).
 * sparse holds the chunks of the query's focus terms (catchup_retrieve_focus of idf).
 */
static GArray *
turns_for (Ctx *ctx, GHashTable *idf, GArray *sparse, const float *qvec, GArray *dense, guint keep,
           double chunk_prior, GError **error)
{
  GArray *lists[2] = { sparse, dense };
  /* a pool takes the turns of every fused chunk; the ranking proper only those of the best `keep` */
  guint wide = ctx->pool_lists ? MAX (keep, POOL_CHUNKS) : keep;
  g_autoptr (GArray) chunks = catchup_retrieve_fuse (lists, dense ? 2 : 1, CATCHUP_RRF_K, wide);
  GArray *pool;

  if (ctx->pool_lists != NULL)
    {
      if ((pool = refine_turns (ctx, chunks, idf, qvec, chunk_prior, error)) == NULL)
        return NULL;
      g_ptr_array_add (ctx->pool_lists, pool);
      g_array_set_size (chunks, MIN (chunks->len, keep));
    }
  return refine_turns (ctx, chunks, idf, qvec, chunk_prior, error);
}

/* The idf tables of n queries and their sparse lists, from one FTS5 pass over all their focus terms. */
static gboolean
sparse_lists (Ctx *ctx, const char *const *queries, guint n, GHashTable **idf, GArray **sparse, GError **error)
{
  g_autoptr (GPtrArray) focus = g_ptr_array_new_with_free_func (g_free);

  if (!catchup_retrieve_idf_multi (ctx->store, queries, n, ctx->df, idf, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (focus, catchup_retrieve_focus (idf[i], FOCUS_TERMS));
  return catchup_retrieve_sparse_multi (ctx->store, ctx->room, (const char *const *) focus->pdata, n, ctx->df,
                                        ctx->before, CATCHUP_RETRIEVE_TOP, sparse, error);
}

/* The question's ranked turns; *idf gets its idf table (for the turns add_span scores). */
static GArray *
turns_for_question (Ctx *ctx, const char *query, GHashTable **idf, GError **error)
{
  g_autofree float *qvec = g_new (float, ctx->embedder->dim);
  g_autoptr (GArray) sparse = NULL;

  if (!embed_one (ctx, query, TRUE, qvec, error) || !sparse_lists (ctx, &query, 1, idf, &sparse, error))
    return NULL;
  return turns_for (ctx, *idf, sparse, qvec, NULL, CATCHUP_RETRIEVE_TOP, 10.0, error);
}

static guint
chunks_per_gap (const CatchupMemoryOptions *opts)
{
  return opts->chunks_per_gap ? opts->chunks_per_gap : MAX (1, opts->budget / CATCHUP_CHUNK_TOKENS);
}

static gboolean
gap_lists (Ctx *ctx, GPtrArray *gaps, guint keep, GPtrArray *lists, GError **error)
{
  guint n = gaps->len, dim = ctx->embedder->dim;
  g_autofree float *qvecs = g_new (float, (gsize) MAX (n, 1) * dim);
  g_autofree const char **queries = g_new0 (const char *, n + 1);
  g_autofree GArray **dense = g_new0 (GArray *, MAX (n, 1));
  g_autofree GArray **sparse = g_new0 (GArray *, MAX (n, 1));
  g_autofree GHashTable **idf = g_new0 (GHashTable *, MAX (n, 1));
  gboolean ok;

  for (guint i = 0; i < n; i++)
    queries[i] = ((CatchupGap *) gaps->pdata[i])->query;
  if (n == 0)
    return TRUE;
  ok = ctx->embedder->embed (ctx->embedder, queries, n, TRUE, qvecs, ctx->cancellable, error) &&
       (ctx->model ? catchup_retrieve_dense_model (ctx->store, ctx->room, ctx->embedder->name, dim, qvecs, n,
                                                   ctx->before, CATCHUP_RETRIEVE_TOP, dense, error)
                   : catchup_retrieve_dense_multi (ctx->store, ctx->room, qvecs, n, ctx->before,
                                                   CATCHUP_RETRIEVE_TOP, dense, error)) &&
       sparse_lists (ctx, queries, n, idf, sparse, error);
  for (guint i = 0; i < n; i++)
    {
      GArray *l = ok ? turns_for (ctx, idf[i], sparse[i], qvecs + (gsize) i * dim, dense[i], keep, 0.0, error)
                     : NULL;

      ok = ok && l != NULL;
      if (l)
        g_ptr_array_add (lists, l);
      g_clear_pointer (&dense[i], g_array_unref);
      g_clear_pointer (&sparse[i], g_array_unref);
      g_clear_pointer (&idf[i], g_hash_table_unref);
    }
  return ok;
}

/* Adds a copy of m to pool unless it is there already or in the lead-in (which the memory holds anyway). */
static void
pool_add (GPtrArray *pool, GHashTable *in_pool, const CatchupMemory *mem, const CatchupMessage *m)
{
  gpointer gap;

  if (g_hash_table_lookup_extended (mem->gap_of, m->id, NULL, &gap) && GPOINTER_TO_INT (gap) == 0)
    return;
  if (!g_hash_table_add (in_pool, (gpointer) m))
    return;
  g_ptr_array_add (pool, catchup_message_copy (m));
}

static gboolean
completes (const CatchupMessage *m)
{
  gsize len = m->text ? strlen (m->text) : 0;

  return len > 0 && m->text[len - 1] == '?';
}

/* One gap's pool: its best turns, each with the neighbour that completes it (the answer after a question,
 * the turn before a short reply), at most size turns in all. */
static GPtrArray *
pool_of (const CatchupMemory *mem, GArray *ranked, guint size)
{
  GPtrArray *pool = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  g_autoptr (GHashTable) in_pool = g_hash_table_new (g_direct_hash, g_direct_equal);

  for (guint i = 0; i < ranked->len && pool->len < size; i++)
    {
      const Scored *s = &g_array_index (ranked, Scored, i);
      GPtrArray *turns = s->chunk->turns;

      if (catchup_text_count_turn (s->msg->speaker, s->msg->text) <= SHORT_TURN_TOKENS && s->index > 0)
        pool_add (pool, in_pool, mem, turns->pdata[s->index - 1]);
      if (pool->len < size)
        pool_add (pool, in_pool, mem, s->msg);
      if (completes (s->msg) && s->index + 1 < turns->len && pool->len < size)
        pool_add (pool, in_pool, mem, turns->pdata[s->index + 1]);
    }
  return pool;
}

static void
build_pools (CatchupMemory *mem, GPtrArray *ranked, guint size)
{
  mem->pools = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  for (guint g = 0; g < ranked->len; g++)
    g_ptr_array_add (mem->pools, pool_of (mem, ranked->pdata[g], size));
}

static gboolean
build_remember (Ctx *ctx, GPtrArray *window, const CatchupMemoryOptions *opts, CatchupMemory *mem,
                GError **error)
{
  g_autoptr (GPtrArray) lists = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  guint lead_in = opts->method == CATCHUP_METHOD_GAPS ? 0 : MIN (opts->lead_in, opts->budget);

  if (opts->gaps)
    for (guint i = 0; i < opts->gaps->len; i++)
      g_ptr_array_add (mem->gaps, catchup_gap_copy (opts->gaps->pdata[i]));
  else
    {
      /* all of them, once: the summary looks up the references of every line, the memory retrieves for the
       * strongest (the detector's order is stable, so they are what a detection of max_gaps returns) */
      g_clear_pointer (&mem->detected, g_ptr_array_unref);
      mem->detected = catchup_gaps_detect (window, 0);
      for (guint i = 0; i < mem->detected->len && (opts->max_gaps == 0 || i < opts->max_gaps); i++)
        g_ptr_array_add (mem->gaps, catchup_gap_copy (mem->detected->pdata[i]));
    }
  if (opts->pool_size > 0)
    ctx->pool_lists = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  if (!add_recent (ctx->store, ctx->room, ctx->before, mem, lead_in, opts->budget, error) ||
      !gap_lists (ctx, mem->gaps, chunks_per_gap (opts), lists, error))
    return FALSE;
  accumulate (mem, lists, opts->budget);
  if (ctx->pool_lists != NULL)
    build_pools (mem, ctx->pool_lists, opts->pool_size);
  return TRUE;
}

/* Baselines with one query (the window, or a question): chunks in fused rank order, their turns in order. */
static gboolean
build_single_query (Ctx *ctx, const char *query, CatchupMethod method, guint budget, CatchupMemory *mem,
                    GError **error)
{
  float qvec[CATCHUP_EMBED_DIM];
  g_autoptr (GArray) chunks = NULL, dense = NULL;
  guint top = method == CATCHUP_METHOD_HYBRID ? 4 : CATCHUP_RETRIEVE_TOP;
  g_autofree char *terms = catchup_text_terms_joined (query, TRUE);

  if (method != CATCHUP_METHOD_SPARSE &&
      (!embed_one (ctx, query, TRUE, qvec, error) ||
       (dense = catchup_retrieve_dense (ctx->store, ctx->room, qvec, ctx->before, top, error)) == NULL))
    return FALSE;
  chunks = chunks_for (ctx, terms, method != CATCHUP_METHOD_DENSE, dense, top, CATCHUP_RETRIEVE_TOP, error);
  if (chunks == NULL)
    return FALSE;
  for (guint c = 0; c < chunks->len; c++)
    {
      g_autoptr (GPtrArray) turns = catchup_index_chunk_turns (ctx->store, g_array_index (chunks, CatchupHit,
                                                                                            c).chunk, error);

      if (turns == NULL)
        return FALSE;
      for (guint i = 0; i < turns->len; i++)
        {
          CatchupMessage *m = turns->pdata[i];
          CatchupPos p = catchup_pos_of (m);

          if (!ctx->before || catchup_pos_cmp (&p, ctx->before) < 0)
            catchup_memory_add (mem, m, 0, budget);
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

      if (!ctx->before || catchup_pos_cmp (&p, ctx->before) < 0)
        catchup_memory_add (mem, m, -1, G_MAXUINT);
    }
  return TRUE;
}

/* How much of what a question asks for a turn is: 2 in the day or month it names (the span), 1 by one of the
 * people it names (on LoCoMo 96% of the evidence of a question that names one speaker is that speaker's own
 * turns), both, or neither. */
static guint
asked_level (const CatchupMessage *m, const CatchupMemoryOptions *opts)
{
  gboolean by = opts->speakers != NULL && opts->speakers[0] != NULL && g_strv_contains (opts->speakers, m->speaker);
  gboolean in = opts->until != 0 && m->ts >= opts->since && m->ts < opts->until;

  return 2 * in + by;
}

/* The ranked turns of a question, what it asks for first: by level, each level in rank order. */
static void
asked_first (GArray *ranked, const CatchupMemoryOptions *opts)
{
  g_autoptr (GArray) by_level = g_array_sized_new (FALSE, FALSE, sizeof (Scored), ranked->len);

  for (int level = 3; level >= 0; level--)
    for (guint i = 0; i < ranked->len; i++)
      if (asked_level (g_array_index (ranked, Scored, i).msg, opts) == (guint) level)
        g_array_append_val (by_level, g_array_index (ranked, Scored, i));
  g_array_set_size (ranked, 0);
  g_array_append_vals (ranked, by_level->data, by_level->len);
}

/* The turns of the day or month a question names that its chunks missed, after the ranked ones and by
 * their own BM25: the chunks rank by the question's words, and "what did bob say on 3 June" may share few.
 * span keeps the messages. */
static gboolean
add_span (Ctx *ctx, GHashTable *idf, const CatchupMemoryOptions *opts, GArray *ranked, GPtrArray **span,
          GError **error)
{
  CatchupPos first = { opts->since, G_MININT64 }, last = { opts->until - 1, G_MAXINT64 };
  g_autoptr (GHashTable) seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GArray) extra = g_array_new (FALSE, FALSE, sizeof (Scored));

  if (opts->until == 0)
    return TRUE;
  if ((*span = catchup_store_range (ctx->store, ctx->room, &first, &last, SPAN_TURNS, error)) == NULL)
    return FALSE;
  for (guint i = 0; i < ranked->len; i++)
    g_hash_table_add (seen, (gpointer) &g_array_index (ranked, Scored, i).msg->row);
  for (guint i = 0; i < (*span)->len; i++)
    {
      const CatchupMessage *m = (*span)->pdata[i];
      Scored s = { m, 0, NULL, 0 };
      CatchupPos p = catchup_pos_of (m);

      if (g_hash_table_contains (seen, &m->row) || (ctx->before && catchup_pos_cmp (&p, ctx->before) >= 0))
        continue;
      s.score = catchup_retrieve_turn_bm25 (idf, m->text);
      g_array_append_val (extra, s);
    }
  g_array_sort (extra, cmp_scored);
  g_array_append_vals (ranked, extra->data, extra->len);
  return TRUE;
}

/* A question is one gap whose own words are the evidence query. */
static gboolean
build_question (Ctx *ctx, const char *query, const CatchupMemoryOptions *opts, CatchupMemory *mem,
                GError **error)
{
  g_autoptr (GPtrArray) lists = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autoptr (GPtrArray) span = NULL;
  g_autoptr (GHashTable) idf = NULL;
  GArray *l = turns_for_question (ctx, query, &idf, error);

  if (l == NULL)
    return FALSE;
  g_ptr_array_add (lists, l);
  if (!add_span (ctx, idf, opts, l, &span, error))
    return FALSE;
  asked_first (l, opts);
  accumulate (mem, lists, opts->budget);
  return TRUE;
}

static gboolean
build_method (Ctx *ctx, GPtrArray *window, const char *query, const CatchupMemoryOptions *opts,
              CatchupMemory *mem, GError **error)
{
  switch (opts->method)
    {
    case CATCHUP_METHOD_NONE:
      return TRUE;
    case CATCHUP_METHOD_RECENT:
      /* without a window "recent" has nothing to be recent to: the question's best chunks stand in */
      return ctx->before ? add_recent (ctx->store, ctx->room, ctx->before, mem, opts->budget, opts->budget, error)
                         : build_single_query (ctx, query, CATCHUP_METHOD_SPARSE, opts->budget, mem, error);
    case CATCHUP_METHOD_FULL:
      return build_full (ctx, mem, error);
    case CATCHUP_METHOD_SPARSE:
    case CATCHUP_METHOD_DENSE:
    case CATCHUP_METHOD_HYBRID:
      return build_single_query (ctx, query, opts->method, opts->budget, mem, error);
    case CATCHUP_METHOD_REMEMBER:
    case CATCHUP_METHOD_GAPS:
      return window ? build_remember (ctx, window, opts, mem, error)
                    : build_question (ctx, query, opts, mem, error);
    }
  return TRUE;
}

static CatchupMemory *
build (Ctx *ctx, GPtrArray *window, const char *query, const CatchupMemoryOptions *opts, GError **error)
{
  g_autoptr (CatchupMemory) mem = catchup_memory_new ();
  g_autoptr (CatchupEmbedder) own = NULL;
  g_autoptr (GHashTable) chunks = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                          (GDestroyNotify) cached_chunk_free);
  g_autoptr (GHashTable) df = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  /* a model's vectors serve the gap-conditioned path; the baselines stay on the default embedder */
  ctx->model = !catchup_embedder_is_default (ctx->embedder) &&
               (opts->method == CATCHUP_METHOD_REMEMBER || opts->method == CATCHUP_METHOD_GAPS);
  if (ctx->embedder == NULL || (!ctx->model && !catchup_embedder_is_default (ctx->embedder)))
    ctx->embedder = own = catchup_embedder_new_default ();
  ctx->chunks = chunks;
  ctx->df = df;
  ctx->pool_lists = NULL;
  if (!build_method (ctx, window, query, opts, mem, error) ||
      g_cancellable_set_error_if_cancelled (ctx->cancellable, error))
    {
      g_clear_pointer (&ctx->pool_lists, g_ptr_array_unref);
      return NULL;
    }
  g_clear_pointer (&ctx->pool_lists, g_ptr_array_unref);
  g_ptr_array_sort (mem->turns, cmp_chrono);
  return g_steal_pointer (&mem);
}

CatchupMemory *
catchup_memory_build (CatchupStore *store, gint64 room, GPtrArray *window, const CatchupMemoryOptions *opts,
                      GCancellable *cancellable, GError **error)
{
  g_autofree char *query = NULL;
  CatchupPos first;
  Ctx ctx = { store, room, &first, opts->embedder, cancellable, NULL, NULL };

  if (window == NULL || window->len == 0)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("The window is empty."));
      return NULL;
    }
  first = catchup_pos_of (window->pdata[0]);
  /* the window as "speaker: text" lines, as a chunk is indexed */
  query = catchup_index_chunk_text (window);
  return build (&ctx, window, query, opts, error);
}

static CatchupMessage *
pooled (const CatchupMemory *mem, const char *id)
{
  for (guint g = 0; mem->pools != NULL && g < mem->pools->len; g++)
    {
      GPtrArray *pool = mem->pools->pdata[g];

      for (guint i = 0; i < pool->len; i++)
        if (g_strcmp0 (((CatchupMessage *) pool->pdata[i])->id, id) == 0)
          return pool->pdata[i];
    }
  return NULL;
}

guint
catchup_memory_select (CatchupMemory *mem, GPtrArray *selected, guint budget)
{
  g_autoptr (GPtrArray) old = NULL;
  g_autoptr (GHashTable) old_gap_of = NULL;
  gboolean more = TRUE;
  guint added = 0;

  g_return_val_if_fail (mem != NULL && selected != NULL, 0);

  old = g_steal_pointer (&mem->turns);
  old_gap_of = g_steal_pointer (&mem->gap_of);
  mem->turns = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  mem->gap_of = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  mem->tokens = 0;
  /* the lead-in stays as it was; the gap turns make room for the chosen ones */
  for (guint i = 0; i < old->len; i++)
    {
      CatchupMessage *m = old->pdata[i];
      gpointer gap;

      if (g_hash_table_lookup_extended (old_gap_of, m->id, NULL, &gap) && GPOINTER_TO_INT (gap) == 0)
        catchup_memory_add (mem, m, -1, G_MAXUINT);
    }
  for (guint d = 0; more; d++)
    {
      more = FALSE;
      for (guint g = 0; g < selected->len; g++)
        {
          GPtrArray *ids = selected->pdata[g];
          const CatchupMessage *m;

          if (ids == NULL || d >= ids->len)
            continue;
          more = TRUE;
          m = pooled (mem, ids->pdata[d]);
          if (m != NULL && catchup_memory_add (mem, m, (int) g, budget))
            added++;
        }
    }
  g_ptr_array_sort (mem->turns, cmp_chrono);
  g_clear_pointer (&mem->selected, g_ptr_array_unref);
  mem->selected = g_ptr_array_ref (selected);
  return added;
}

CatchupMemory *
catchup_memory_recall (CatchupStore *store, gint64 room, const char *query, const CatchupMemoryOptions *opts,
                       GCancellable *cancellable, GError **error)
{
  Ctx ctx = { store, room, NULL, opts->embedder, cancellable, NULL, NULL };

  return build (&ctx, NULL, query, opts, error);
}
