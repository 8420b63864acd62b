#include "config.h"

#include <math.h>
#include <string.h>

#include "catchup-embed-cache.h"
#include "catchup-index.h"
#include "catchup-retrieve.h"
#include "catchup-text.h"

/* Longer queries (a whole window) are cut to this many distinct terms, rarest-looking (longest) first. */
#define MAX_QUERY_TERMS 96

static gint
cmp_len_desc (gconstpointer a, gconstpointer b)
{
  return (gint) strlen (*(const char *const *) b) - (gint) strlen (*(const char *const *) a);
}

/* The distinct terms of a query (borrowed), at most MAX_QUERY_TERMS. */
static GPtrArray *
query_terms (GPtrArray *terms)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *uniq = g_ptr_array_new ();

  for (guint i = 0; i < terms->len; i++)
    if (g_hash_table_add (seen, terms->pdata[i]))
      g_ptr_array_add (uniq, terms->pdata[i]);
  if (uniq->len > MAX_QUERY_TERMS)
    {
      g_ptr_array_sort (uniq, cmp_len_desc);
      g_ptr_array_set_size (uniq, MAX_QUERY_TERMS);
    }
  return uniq;
}

/* An FTS5 expression over stemmed terms as the chunk index holds them; each term a quoted phrase. */
static char *
chunk_query (GPtrArray *terms)
{
  g_autoptr (GPtrArray) uniq = query_terms (terms);

  return catchup_text_fts_or (uniq, G_MAXUINT);
}

/* The terms of a space-separated list (borrowed from split). */
static GPtrArray *
split_terms (char **split)
{
  GPtrArray *list = g_ptr_array_new ();

  for (guint i = 0; split[i]; i++)
    if (*split[i])
      g_ptr_array_add (list, split[i]);
  return list;
}

static GArray *
sparse_for_terms (CatchupStore *store, gint64 room, GPtrArray *terms, const CatchupPos *before, guint top,
                  GError **error)
{
  g_autofree char *match = chunk_query (terms);

  if (match == NULL)
    return g_array_new (FALSE, FALSE, sizeof (CatchupHit));
  return catchup_index_search (store, room, match, before, top, error);
}

GArray *
catchup_retrieve_sparse (CatchupStore *store, gint64 room, const char *query, const CatchupPos *before,
                         guint top, GError **error)
{
  g_autoptr (GPtrArray) terms = catchup_text_terms (query, TRUE);

  return sparse_for_terms (store, room, terms, before, top, error);
}

GArray *
catchup_retrieve_sparse_terms (CatchupStore *store, gint64 room, const char *terms, const CatchupPos *before,
                               guint top, GError **error)
{
  g_auto (GStrv) split = g_strsplit (terms ? terms : "", " ", -1);
  g_autoptr (GPtrArray) list = split_terms (split);

  return sparse_for_terms (store, room, list, before, top, error);
}

static gint
cmp_hit_desc (gconstpointer a, gconstpointer b)
{
  double x = ((const CatchupHit *) a)->score, y = ((const CatchupHit *) b)->score;

  return x < y ? 1 : x > y ? -1 : 0;
}

/* Keeps the best `top` hits of a list sorted best first: most chunks lose to the current last place, so
 * the insertion is rarely paid. */
static void
keep_top (GArray *hits, guint top, CatchupHit h)
{
  guint i;

  if (hits->len == top && g_array_index (hits, CatchupHit, top - 1).score >= h.score)
    return;
  if (hits->len == top)
    g_array_set_size (hits, top - 1);
  for (i = hits->len; i > 0 && g_array_index (hits, CatchupHit, i - 1).score < h.score; i--)
    ;
  g_array_insert_val (hits, i, h);
}

/* The queries of one dense pass and their hit lists. */
typedef struct {
  const gint8 *qq;     /* quantized queries, CATCHUP_EMBED_DIM each */
  const float *qvecs;  /* or float queries of dim each */
  guint dim;
  guint n_queries;
  guint top;
  GArray **out;
} DensePass;

static void
dense_pass_init (DensePass *pass, guint n_queries, guint top, GArray **out)
{
  pass->n_queries = n_queries;
  pass->top = top;
  pass->out = out;
  for (guint q = 0; q < n_queries; q++)
    out[q] = g_array_sized_new (FALSE, FALSE, sizeof (CatchupHit), top + 1);
}

/* Ends a dense pass: on failure no query keeps a partial list. */
static gboolean
dense_finish (DensePass *pass, gboolean ok)
{
  if (!ok)
    for (guint q = 0; q < pass->n_queries; q++)
      g_clear_pointer (&pass->out[q], g_array_unref);
  return ok;
}

static void
dense_quantized_hit (gint64 chunk, const gint8 *vec, gpointer data)
{
  DensePass *pass = data;

  for (guint q = 0; q < pass->n_queries; q++)
    {
      CatchupHit h = { chunk, catchup_vec_dot_qq (pass->qq + (gsize) q * CATCHUP_EMBED_DIM, vec) };

      if (h.score > 0)
        keep_top (pass->out[q], pass->top, h);
    }
}

gboolean
catchup_retrieve_dense_multi (CatchupStore *store, gint64 room, const float *qvecs, guint n_queries,
                              const CatchupPos *before, guint top, GArray **out, GError **error)
{
  g_autofree gint8 *qq = g_new (gint8, (gsize) MAX (n_queries, 1) * CATCHUP_EMBED_DIM);
  DensePass pass = { .qq = qq };

  dense_pass_init (&pass, n_queries, top, out);
  for (guint q = 0; q < n_queries; q++)
    catchup_vec_quantize (qvecs + (gsize) q * CATCHUP_EMBED_DIM, qq + (gsize) q * CATCHUP_EMBED_DIM,
                          CATCHUP_EMBED_DIM);
  if (top == 0)
    return TRUE;
  /* one pass over the room's vectors serves every query: reading them costs more than the dot products */
  return dense_finish (&pass, catchup_index_foreach_vec (store, room, before, dense_quantized_hit, &pass, error));
}

static void
dense_model_hit (gint64 chunk, const float *vec, gpointer data)
{
  DensePass *pass = data;

  for (guint q = 0; q < pass->n_queries; q++)
    {
      CatchupHit h = { chunk, catchup_vec_dot (pass->qvecs + (gsize) q * pass->dim, vec, pass->dim) };

      if (h.score > 0)
        keep_top (pass->out[q], pass->top, h);
    }
}

gboolean
catchup_retrieve_dense_model (CatchupStore *store, gint64 room, const char *model, guint dim, const float *qvecs,
                              guint n_queries, const CatchupPos *before, guint top, GArray **out, GError **error)
{
  DensePass pass = { .qvecs = qvecs, .dim = dim };

  dense_pass_init (&pass, n_queries, top, out);
  if (top == 0)
    return TRUE;
  /* chunks without a stored vector are simply absent: nothing is embedded here */
  return dense_finish (&pass, catchup_embed_cache_foreach_chunk (store, room, model, dim, before, dense_model_hit,
                                                                 &pass, error));
}

GArray *
catchup_retrieve_dense (CatchupStore *store, gint64 room, const float *qvec, const CatchupPos *before,
                        guint top, GError **error)
{
  GArray *hits = NULL;

  return catchup_retrieve_dense_multi (store, room, qvec, 1, before, top, &hits, error) ? hits : NULL;
}

GArray *
catchup_retrieve_fuse (GArray *const *lists, guint n_lists, guint k, guint top)
{
  g_autoptr (GHashTable) score = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (CatchupHit));
  GHashTableIter it;
  gpointer key, val;

  for (guint l = 0; l < n_lists; l++)
    for (guint r = 0; lists[l] && r < lists[l]->len; r++)
      {
        gint64 id = g_array_index (lists[l], CatchupHit, r).chunk;
        double *s = g_hash_table_lookup (score, &id);

        if (s == NULL)
          {
            s = g_new0 (double, 1);
            g_hash_table_insert (score, g_memdup2 (&id, sizeof id), s);
          }
        *s += 1.0 / (k + r + 1);
      }
  g_hash_table_iter_init (&it, score);
  while (g_hash_table_iter_next (&it, &key, &val))
    {
      CatchupHit h = { *(gint64 *) key, *(double *) val };

      g_array_append_val (out, h);
    }
  g_array_sort (out, cmp_hit_desc);
  if (out->len > top)
    g_array_set_size (out, top);
  return out;
}

/* The number of chunks, remembered in df_cache under the empty string (never a term) so that the queries of
 * one catch-up count them once. */
static double
collection_size (CatchupStore *store, GHashTable *df_cache, GError **error)
{
  gpointer cached;
  double n = 0;

  if (df_cache && g_hash_table_lookup_extended (df_cache, "", NULL, &cached))
    return GPOINTER_TO_SIZE (cached);
  if (!catchup_index_count_chunks (store, &n, error))
    return -1;
  if (df_cache)
    g_hash_table_insert (df_cache, g_strdup (""), GSIZE_TO_POINTER ((gsize) n));
  return n;
}

/* The document frequency of every distinct term: term (borrowed) -> df as a pointer-sized integer, from
 * df_cache (may be NULL) or, for the terms it does not hold yet, from the index in one go. */
static GHashTable *
term_docs (CatchupStore *store, GPtrArray *terms, GHashTable *df_cache, GError **error)
{
  g_autoptr (GHashTable) docs = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) missing = g_ptr_array_new ();
  g_autofree double *df = NULL;

  for (guint i = 0; i < terms->len; i++)
    {
      const char *t = terms->pdata[i];
      gpointer cached;

      if (g_hash_table_contains (docs, t))
        continue;
      if (df_cache && g_hash_table_lookup_extended (df_cache, t, NULL, &cached))
        g_hash_table_insert (docs, (gpointer) t, cached);
      else
        {
          g_hash_table_insert (docs, (gpointer) t, NULL);
          g_ptr_array_add (missing, (gpointer) t);
        }
    }
  df = g_new (double, MAX (missing->len, 1));
  if (!catchup_index_term_docs (store, (const char *const *) missing->pdata, missing->len, df, error))
    return NULL;
  for (guint i = 0; i < missing->len; i++)
    {
      gpointer value = GSIZE_TO_POINTER ((gsize) df[i]);

      g_hash_table_insert (docs, missing->pdata[i], value);
      if (df_cache)
        g_hash_table_insert (df_cache, g_strdup (missing->pdata[i]), value);
    }
  return g_steal_pointer (&docs);
}

/* The idf table of a query's terms, their document frequencies in docs and n chunks in all. */
static GHashTable *
idf_table (GPtrArray *terms, GHashTable *docs, double n)
{
  g_autoptr (GHashTable) idf = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) base = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  for (guint i = 0; i < terms->len; i++)
    {
      const char *t = terms->pdata[i];
      double df = GPOINTER_TO_SIZE (g_hash_table_lookup (docs, t)), *v;

      if ((v = g_hash_table_lookup (idf, t)) != NULL)
        {
          /* a term the query repeats weighs more, as BM25's query term frequency would have it */
          *v += *(double *) g_hash_table_lookup (base, t);
          continue;
        }
      v = g_new (double, 1);
      *v = log (1.0 + (n - df + 0.5) / (df + 0.5));
      g_hash_table_insert (idf, g_strdup (t), v);
      g_hash_table_insert (base, g_strdup (t), g_memdup2 (v, sizeof *v));
    }
  return g_steal_pointer (&idf);
}

gboolean
catchup_retrieve_idf_multi (CatchupStore *store, const char *const *queries, guint n_queries,
                            GHashTable *df_cache, GHashTable **out, GError **error)
{
  g_autoptr (GPtrArray) terms = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  g_autoptr (GPtrArray) all = g_ptr_array_new ();
  g_autoptr (GHashTable) docs = NULL;
  double n = collection_size (store, df_cache, error);

  if (n < 0)
    return FALSE;
  for (guint q = 0; q < n_queries; q++)
    {
      g_ptr_array_add (terms, catchup_text_terms (queries[q], TRUE));
      g_ptr_array_extend (all, terms->pdata[q], NULL, NULL);
    }
  /* the terms of every query in one look-up: queries of one catch-up share many */
  if ((docs = term_docs (store, all, df_cache, error)) == NULL)
    return FALSE;
  for (guint q = 0; q < n_queries; q++)
    out[q] = idf_table (terms->pdata[q], docs, n);
  return TRUE;
}

GHashTable *
catchup_retrieve_idf (CatchupStore *store, const char *query, GHashTable *df_cache, GError **error)
{
  GHashTable *idf = NULL;

  return catchup_retrieve_idf_multi (store, &query, 1, df_cache, &idf, error) ? idf : NULL;
}

/* FTS5's bm25() constants */
#define BM25_K1 1.2
#define BM25_B 0.75

/* A query joins its predecessor's FTS5 pass when at least this share of its terms is in it already:
 * neighbouring gaps often share their context words, and a shared pass reads each chunk they both match
 * once, while every term a pass adds costs on every chunk it reads. */
#ifndef SPARSE_SHARED
#define SPARSE_SHARED 0.5
#endif

/* A group of queries sharing one FTS5 pass over an OR of their terms, and their hit lists. */
typedef struct {
  GPtrArray *phrases;   /* the expression's terms, in its order (borrowed) */
  GHashTable *docs;     /* term -> df, for every term */
  double *idf;          /* per phrase: bm25()'s, from the first match's collection size */
  GArray **phrase_of;   /* per query: indices into phrases (guint), in the query's order */
  GArray **out;
  guint n_queries;
  guint top;
} SparsePass;

static void
sparse_pass_idf (SparsePass *pass, double rows)
{
  pass->idf = g_new (double, MAX (pass->phrases->len, 1));
  for (guint p = 0; p < pass->phrases->len; p++)
    {
      double df = GPOINTER_TO_SIZE (g_hash_table_lookup (pass->docs, pass->phrases->pdata[p]));
      double idf = log ((rows - df + 0.5) / (df + 0.5));

      pass->idf[p] = idf <= 0.0 ? 1e-6 : idf;
    }
}

/* Every query's BM25 of one matching chunk, as bm25() sums it: phrase by phrase in the query's order. */
static void
sparse_hit (const CatchupIndexMatch *m, gpointer data)
{
  SparsePass *pass = data;
  double avgdl = (double) m->index_tokens / (double) m->index_rows;
  double norm = BM25_K1 * (1 - BM25_B + BM25_B * (double) m->tokens / avgdl);

  if (pass->idf == NULL)
    sparse_pass_idf (pass, (double) m->index_rows);
  for (guint q = 0; q < pass->n_queries; q++)
    {
      GArray *phrases = pass->phrase_of[q];
      CatchupHit h = { m->chunk, 0 };
      gboolean matched = FALSE;

      for (guint i = 0; i < phrases->len; i++)
        {
          guint p = g_array_index (phrases, guint, i);
          double tf = (double) m->tf[p];

          matched = matched || tf > 0;
          h.score += pass->idf[p] * (tf * (BM25_K1 + 1.0)) / (tf + norm);
        }
      if (matched)
        keep_top (pass->out[q], pass->top, h);
    }
}

/* One group's FTS5 pass: queries[q] holds query q's distinct terms. */
static gboolean
sparse_pass_run (CatchupStore *store, gint64 room, GPtrArray **queries, guint n, GHashTable *docs,
                 const CatchupPos *before, guint top, GArray **out, GError **error)
{
  g_autoptr (GPtrArray) phrases = g_ptr_array_new ();
  g_autoptr (GHashTable) index_of = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree GArray **phrase_of = g_new0 (GArray *, n);
  g_autofree char *match = NULL;
  SparsePass pass = { phrases, docs, NULL, phrase_of, out, n, top };
  gboolean ok;

  for (guint q = 0; q < n; q++)
    {
      phrase_of[q] = g_array_sized_new (FALSE, FALSE, sizeof (guint), queries[q]->len);
      for (guint i = 0; i < queries[q]->len; i++)
        {
          gpointer found;
          guint p = phrases->len;

          if (g_hash_table_lookup_extended (index_of, queries[q]->pdata[i], NULL, &found))
            p = GPOINTER_TO_UINT (found);
          else
            {
              g_ptr_array_add (phrases, queries[q]->pdata[i]);
              g_hash_table_insert (index_of, queries[q]->pdata[i], GUINT_TO_POINTER (p));
            }
          g_array_append_val (phrase_of[q], p);
        }
    }
  match = catchup_text_fts_or (phrases, G_MAXUINT);
  ok = match == NULL || top == 0 ||
       catchup_index_match_foreach (store, room, match, phrases->len, before, sparse_hit, &pass, error);
  for (guint q = 0; q < n; q++)
    g_array_unref (phrase_of[q]);
  g_free (pass.idf);
  return ok;
}

/* How many queries from the first-th on share one pass (terms: each query's distinct terms). */
static guint
sparse_group (GPtrArray *terms, guint first)
{
  g_autoptr (GHashTable) group = g_hash_table_new (g_str_hash, g_str_equal);
  guint n = 0;

  for (guint q = first; q < terms->len; q++, n++)
    {
      GPtrArray *t = terms->pdata[q];
      guint shared = 0;

      for (guint i = 0; i < t->len; i++)
        shared += g_hash_table_contains (group, t->pdata[i]);
      if (n > 0 && shared < SPARSE_SHARED * t->len)
        break;
      for (guint i = 0; i < t->len; i++)
        g_hash_table_add (group, t->pdata[i]);
    }
  return MAX (n, 1);
}


gboolean
catchup_retrieve_sparse_multi (CatchupStore *store, gint64 room, const char *const *queries, guint n_queries,
                               GHashTable *df_cache, const CatchupPos *before, guint top, GArray **out,
                               GError **error)
{
  g_autoptr (GPtrArray) splits = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  g_autoptr (GPtrArray) terms = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  g_autoptr (GPtrArray) all = g_ptr_array_new ();
  g_autoptr (GHashTable) docs = NULL;
  gboolean ok;

  for (guint q = 0; q < n_queries; q++)
    {
      char **split = g_strsplit (queries[q] ? queries[q] : "", " ", -1);
      g_autoptr (GPtrArray) list = split_terms (split);

      g_ptr_array_add (splits, split);
      g_ptr_array_add (terms, query_terms (list));
      g_ptr_array_extend (all, terms->pdata[q], NULL, NULL);
      out[q] = g_array_sized_new (FALSE, FALSE, sizeof (CatchupHit), top + 1);
    }
  ok = (docs = term_docs (store, all, df_cache, error)) != NULL;
  for (guint q = 0, n; ok && q < n_queries; q += n)
    {
      n = sparse_group (terms, q);
      ok = sparse_pass_run (store, room, (GPtrArray **) terms->pdata + q, n, docs, before, top, out + q, error);
    }
  for (guint q = 0; !ok && q < n_queries; q++)
    g_clear_pointer (&out[q], g_array_unref);
  return ok;
}

#define TURN_AVG_TERMS 12.0

double
catchup_retrieve_terms_bm25 (GHashTable *idf, GPtrArray *terms)
{
  g_autoptr (GHashTable) tf = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter it;
  gpointer key, val;
  double score = 0, norm = 1.2 * (0.25 + 0.75 * terms->len / TURN_AVG_TERMS);

  for (guint i = 0; i < terms->len; i++)
    if (g_hash_table_contains (idf, terms->pdata[i]))
      g_hash_table_insert (tf, terms->pdata[i],
                           GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (tf, terms->pdata[i])) + 1));
  g_hash_table_iter_init (&it, tf);
  while (g_hash_table_iter_next (&it, &key, &val))
    {
      double f = GPOINTER_TO_UINT (val);

      score += *(double *) g_hash_table_lookup (idf, key) * f * 2.2 / (f + norm);
    }
  return score;
}

double
catchup_retrieve_turn_bm25 (GHashTable *idf, const char *text)
{
  g_autoptr (GPtrArray) terms = catchup_text_terms (text, TRUE);

  return catchup_retrieve_terms_bm25 (idf, terms);
}

static gint
cmp_weight_desc (gconstpointer a, gconstpointer b, gpointer idf)
{
  double x = *(double *) g_hash_table_lookup (idf, *(const char *const *) a);
  double y = *(double *) g_hash_table_lookup (idf, *(const char *const *) b);

  return x < y ? 1 : x > y ? -1 : strcmp (*(const char *const *) a, *(const char *const *) b);
}

char *
catchup_retrieve_focus (GHashTable *idf, guint max_terms)
{
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;

  g_hash_table_iter_init (&it, idf);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (keys, key);
  g_ptr_array_sort_with_data (keys, cmp_weight_desc, idf);
  if (keys->len > max_terms)
    g_ptr_array_set_size (keys, max_terms);
  g_ptr_array_add (keys, NULL);
  return g_strjoinv (" ", (char **) keys->pdata);
}
