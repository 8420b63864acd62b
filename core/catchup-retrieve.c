#include "config.h"

#include <math.h>
#include <string.h>

#include "catchup-embed-cache.h"
#include "catchup-error.h"
#include "catchup-index.h"
#include "catchup-retrieve.h"
#include "catchup-store-private.h"
#include "catchup-text.h"

/* Longer queries (a whole window) are cut to this many distinct terms, rarest-looking (longest) first. */
#define MAX_QUERY_TERMS 96

static gint
cmp_len_desc (gconstpointer a, gconstpointer b)
{
  return (gint) strlen (*(const char *const *) b) - (gint) strlen (*(const char *const *) a);
}

/* An FTS5 expression over stemmed terms as the chunk index holds them; each term a quoted phrase. */
static char *
chunk_query (GPtrArray *terms)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) uniq = g_ptr_array_new ();

  for (guint i = 0; i < terms->len; i++)
    if (g_hash_table_add (seen, terms->pdata[i]))
      g_ptr_array_add (uniq, terms->pdata[i]);
  if (uniq->len > MAX_QUERY_TERMS)
    {
      g_ptr_array_sort (uniq, cmp_len_desc);
      g_ptr_array_set_size (uniq, MAX_QUERY_TERMS);
    }
  return catchup_text_fts_or (uniq, G_MAXUINT);
}

static GArray *
sparse_for_terms (CatchupStore *store, gint64 room, GPtrArray *terms, const CatchupPos *before, guint top,
                  GError **error)
{
  g_autofree char *match = chunk_query (terms);
  g_autoptr (GArray) hits = g_array_new (FALSE, FALSE, sizeof (CatchupHit));
  sqlite3_stmt *st;
  int rc;

  if (match == NULL)
    return g_steal_pointer (&hits);
  st = catchup_store_prepare (store,
      "SELECT c.id, bm25(chunks_fts) AS s FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
      "WHERE chunks_fts MATCH ?1 AND c.room = ?2 AND (c.last_ts < ?3 OR (c.last_ts = ?3 AND c.last_row < ?4)) "
      "ORDER BY s LIMIT ?5", error);
  if (st == NULL)
    return NULL;
  sqlite3_bind_text (st, 1, match, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 2, room);
  sqlite3_bind_int64 (st, 3, before ? before->ts : G_MAXINT64);
  sqlite3_bind_int64 (st, 4, before ? before->row : G_MAXINT64);
  sqlite3_bind_int (st, 5, (int) top);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      /* bm25() is lower-is-better; flip it so every hit list is higher-is-better */
      CatchupHit h = { sqlite3_column_int64 (st, 0), -sqlite3_column_double (st, 1) };

      g_array_append_val (hits, h);
    }
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    {
      catchup_store_set_error (store, rc, error, "sparse retrieval");
      return NULL;
    }
  return g_steal_pointer (&hits);
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
  g_autoptr (GPtrArray) list = g_ptr_array_new ();

  for (guint i = 0; split[i]; i++)
    if (*split[i])
      g_ptr_array_add (list, split[i]);
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

/* Ends a dense pass that stopped at step result rc: on failure no query keeps a partial list. */
static gboolean
dense_finish (CatchupStore *store, sqlite3_stmt *st, int rc, GArray **out, guint n_queries, GError **error)
{
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    {
      for (guint q = 0; q < n_queries; q++)
        g_clear_pointer (&out[q], g_array_unref);
      catchup_store_set_error (store, rc, error, "dense retrieval");
      return FALSE;
    }
  return TRUE;
}

gboolean
catchup_retrieve_dense_multi (CatchupStore *store, gint64 room, const float *qvecs, guint n_queries,
                              const CatchupPos *before, guint top, GArray **out, GError **error)
{
  sqlite3_stmt *st = catchup_store_prepare (store,
      "SELECT id, vec FROM chunks WHERE room = ?1 AND (last_ts < ?2 OR (last_ts = ?2 AND last_row < ?3))",
      error);
  int rc;

  g_autofree gint8 *qq = g_new (gint8, (gsize) MAX (n_queries, 1) * CATCHUP_EMBED_DIM);

  if (st == NULL)
    return FALSE;
  for (guint q = 0; q < n_queries; q++)
    {
      out[q] = g_array_sized_new (FALSE, FALSE, sizeof (CatchupHit), top + 1);
      catchup_vec_quantize (qvecs + (gsize) q * CATCHUP_EMBED_DIM, qq + (gsize) q * CATCHUP_EMBED_DIM,
                            CATCHUP_EMBED_DIM);
    }
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, before ? before->ts : G_MAXINT64);
  sqlite3_bind_int64 (st, 3, before ? before->row : G_MAXINT64);
  /* one pass over the room's vectors serves every query: reading them costs more than the dot products */
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      const gint8 *vec = sqlite3_column_blob (st, 1);

      if (top == 0 || sqlite3_column_bytes (st, 1) != CATCHUP_EMBED_DIM)
        continue;
      for (guint q = 0; q < n_queries; q++)
        {
          CatchupHit h = { sqlite3_column_int64 (st, 0), catchup_vec_dot_qq (qq + (gsize) q * CATCHUP_EMBED_DIM, vec) };

          if (h.score > 0)
            keep_top (out[q], top, h);
        }
    }
  return dense_finish (store, st, rc, out, n_queries, error);
}

gboolean
catchup_retrieve_dense_model (CatchupStore *store, gint64 room, const char *model, guint dim, const float *qvecs,
                              guint n_queries, const CatchupPos *before, guint top, GArray **out, GError **error)
{
  sqlite3_stmt *st = catchup_store_prepare (store,
      "SELECT c.id, e.vec FROM chunks c JOIN embeddings e ON e.model = ?4 AND e.hash = c.text_hash "
      "WHERE c.room = ?1 AND (c.last_ts < ?2 OR (c.last_ts = ?2 AND c.last_row < ?3))", error);
  g_autofree float *vec = g_new (float, MAX (dim, 1));
  int rc;

  if (st == NULL)
    return FALSE;
  for (guint q = 0; q < n_queries; q++)
    out[q] = g_array_sized_new (FALSE, FALSE, sizeof (CatchupHit), top + 1);
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, before ? before->ts : G_MAXINT64);
  sqlite3_bind_int64 (st, 3, before ? before->row : G_MAXINT64);
  sqlite3_bind_text (st, 4, model, -1, SQLITE_STATIC);
  /* chunks without a stored vector are simply absent: nothing is embedded here */
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      if (top == 0 || (guint) sqlite3_column_bytes (st, 1) != dim * sizeof (float))
        continue;
      catchup_embed_cache_vec_decode (sqlite3_column_blob (st, 1), dim, vec);
      for (guint q = 0; q < n_queries; q++)
        {
          CatchupHit h = { sqlite3_column_int64 (st, 0), catchup_vec_dot (qvecs + (gsize) q * dim, vec, dim) };

          if (h.score > 0)
            keep_top (out[q], top, h);
        }
    }
  return dense_finish (store, st, rc, out, n_queries, error);
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

GPtrArray *
catchup_retrieve_chunk_turns (CatchupStore *store, gint64 chunk, GError **error)
{
  g_autoptr (GBytes) rows = NULL;
  sqlite3_stmt *st = catchup_store_prepare (store, "SELECT rows FROM chunks WHERE id = ?", error);
  gsize bytes;
  const void *data;
  int rc;

  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, chunk);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    rows = g_bytes_new (sqlite3_column_blob (st, 0), sqlite3_column_bytes (st, 0));
  sqlite3_reset (st);
  if (rows == NULL)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND, "chunk %" G_GINT64_FORMAT " not found", chunk);
      return NULL;
    }
  data = g_bytes_get_data (rows, &bytes);
  return catchup_index_rows_turns (store, data, (int) bytes, error);
}

/* The number of chunks, remembered in df_cache under the empty string (never a term) so that the queries of
 * one catch-up count them once. */
static double
collection_size (CatchupStore *store, GHashTable *df_cache, GError **error)
{
  gpointer cached;
  sqlite3_stmt *st;
  double n = 0;

  if (df_cache && g_hash_table_lookup_extended (df_cache, "", NULL, &cached))
    return GPOINTER_TO_SIZE (cached);
  /* fts5vocab reads document frequencies straight from the FTS index; a temp table touches no schema */
  if (!catchup_store_exec (store, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab USING "
                                  "fts5vocab (main, chunks_fts, row)", error) ||
      (st = catchup_store_prepare (store, "SELECT count(*) FROM chunks", error)) == NULL)
    return -1;
  if (sqlite3_step (st) == SQLITE_ROW)
    n = sqlite3_column_double (st, 0);
  sqlite3_reset (st);
  if (df_cache)
    g_hash_table_insert (df_cache, g_strdup (""), GSIZE_TO_POINTER ((gsize) n));
  return n;
}

GHashTable *
catchup_retrieve_idf (CatchupStore *store, const char *query, GHashTable *df_cache, GError **error)
{
  g_autoptr (GHashTable) idf = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) base = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GPtrArray) terms = catchup_text_terms (query, TRUE);
  sqlite3_stmt *st;
  double n = collection_size (store, df_cache, error);

  if (n < 0)
    return NULL;
  if ((st = catchup_store_prepare (store, "SELECT doc FROM temp.chunks_vocab WHERE term = ?", error)) == NULL)
    return NULL;
  for (guint i = 0; i < terms->len; i++)
    {
      const char *t = terms->pdata[i];
      double df = 0, *v;
      gpointer cached;

      if ((v = g_hash_table_lookup (idf, t)) != NULL)
        {
          /* a term the query repeats weighs more, as BM25's query term frequency would have it */
          *v += *(double *) g_hash_table_lookup (base, t);
          continue;
        }
      if (df_cache && g_hash_table_lookup_extended (df_cache, t, NULL, &cached))
        df = GPOINTER_TO_SIZE (cached);
      else
        {
          sqlite3_bind_text (st, 1, t, -1, SQLITE_STATIC);
          if (sqlite3_step (st) == SQLITE_ROW)
            df = sqlite3_column_double (st, 0);
          sqlite3_reset (st);
          if (df_cache)
            g_hash_table_insert (df_cache, g_strdup (t), GSIZE_TO_POINTER ((gsize) df));
        }
      v = g_new (double, 1);
      *v = log (1.0 + (n - df + 0.5) / (df + 0.5));
      g_hash_table_insert (idf, g_strdup (t), v);
      g_hash_table_insert (base, g_strdup (t), g_memdup2 (v, sizeof *v));
    }
  return g_steal_pointer (&idf);
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
