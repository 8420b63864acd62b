#include "config.h"

#include <math.h>
#include <string.h>

#include "catchup-error.h"
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

/* An FTS5 expression over the stemmed terms the chunk index holds; each term a quoted phrase. */
static char *
chunk_query (const char *text)
{
  g_autoptr (GPtrArray) terms = catchup_text_terms (text, TRUE);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) uniq = g_ptr_array_new ();
  g_autoptr (GString) q = g_string_new (NULL);

  for (guint i = 0; i < terms->len; i++)
    if (g_hash_table_add (seen, terms->pdata[i]))
      g_ptr_array_add (uniq, terms->pdata[i]);
  if (uniq->len > MAX_QUERY_TERMS)
    {
      g_ptr_array_sort (uniq, cmp_len_desc);
      g_ptr_array_set_size (uniq, MAX_QUERY_TERMS);
    }
  for (guint i = 0; i < uniq->len; i++)
    g_string_append_printf (q, "%s\"%s\"", i ? " OR " : "", (const char *) uniq->pdata[i]);
  return uniq->len ? g_string_free (g_steal_pointer (&q), FALSE) : NULL;
}

GArray *
catchup_retrieve_sparse (CatchupStore *store, gint64 room, const char *query, const CatchupPos *before,
                         guint top, GError **error)
{
  g_autofree char *match = chunk_query (query);
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

static gint
cmp_hit_desc (gconstpointer a, gconstpointer b)
{
  double x = ((const CatchupHit *) a)->score, y = ((const CatchupHit *) b)->score;

  return x < y ? 1 : x > y ? -1 : 0;
}

GArray *
catchup_retrieve_dense (CatchupStore *store, gint64 room, const float *qvec, const CatchupPos *before,
                        guint top, GError **error)
{
  g_autoptr (GArray) hits = g_array_new (FALSE, FALSE, sizeof (CatchupHit));
  sqlite3_stmt *st = catchup_store_prepare (store,
      "SELECT id, vec FROM chunks WHERE room = ?1 AND (last_ts < ?2 OR (last_ts = ?2 AND last_row < ?3))",
      error);
  int rc;

  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, before ? before->ts : G_MAXINT64);
  sqlite3_bind_int64 (st, 3, before ? before->row : G_MAXINT64);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      CatchupHit h = { sqlite3_column_int64 (st, 0), 0 };

      if (sqlite3_column_bytes (st, 1) != CATCHUP_EMBED_DIM)
        continue;
      h.score = catchup_vec_dot_q (qvec, sqlite3_column_blob (st, 1), CATCHUP_EMBED_DIM);
      if (h.score > 0)
        g_array_append_val (hits, h);
    }
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    {
      catchup_store_set_error (store, rc, error, "dense retrieval");
      return NULL;
    }
  g_array_sort (hits, cmp_hit_desc);
  if (hits->len > top)
    g_array_set_size (hits, top);
  return g_steal_pointer (&hits);
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
  g_autoptr (GPtrArray) turns = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  g_autoptr (GBytes) rows = NULL;
  sqlite3_stmt *st = catchup_store_prepare (store, "SELECT rows FROM chunks WHERE id = ?", error);
  gsize bytes;
  const gint64 *data;
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
  for (gsize i = 0; i < bytes / sizeof (gint64); i++)
    {
      gint64 row;
      CatchupMessage *m;

      memcpy (&row, data + i, sizeof row);
      m = catchup_store_get_message_by_row (store, GINT64_FROM_LE (row), error);
      if (m == NULL)
        return NULL;
      g_ptr_array_add (turns, m);
    }
  return g_steal_pointer (&turns);
}

GHashTable *
catchup_retrieve_idf (CatchupStore *store, const char *query, GError **error)
{
  g_autoptr (GHashTable) idf = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) base = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GPtrArray) terms = catchup_text_terms (query, TRUE);
  sqlite3_stmt *st;
  double n = 0;

  /* fts5vocab reads document frequencies straight from the FTS index; a temp table touches no schema */
  if (!catchup_store_exec (store, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab USING "
                                  "fts5vocab (main, chunks_fts, row)", error))
    return NULL;
  if ((st = catchup_store_prepare (store, "SELECT count(*) FROM chunks", error)) == NULL)
    return NULL;
  if (sqlite3_step (st) == SQLITE_ROW)
    n = sqlite3_column_double (st, 0);
  sqlite3_reset (st);
  if ((st = catchup_store_prepare (store, "SELECT doc FROM temp.chunks_vocab WHERE term = ?", error)) == NULL)
    return NULL;
  for (guint i = 0; i < terms->len; i++)
    {
      const char *t = terms->pdata[i];
      double df = 0, *v;

      if ((v = g_hash_table_lookup (idf, t)) != NULL)
        {
          /* a term the query repeats weighs more, as BM25's query term frequency would have it */
          *v += *(double *) g_hash_table_lookup (base, t);
          continue;
        }
      sqlite3_bind_text (st, 1, t, -1, SQLITE_STATIC);
      if (sqlite3_step (st) == SQLITE_ROW)
        df = sqlite3_column_double (st, 0);
      sqlite3_reset (st);
      v = g_new (double, 1);
      *v = log (1.0 + (n - df + 0.5) / (df + 0.5));
      g_hash_table_insert (idf, g_strdup (t), v);
      g_hash_table_insert (base, g_strdup (t), g_memdup2 (v, sizeof *v));
    }
  return g_steal_pointer (&idf);
}

#define TURN_AVG_TERMS 12.0

double
catchup_retrieve_turn_bm25 (GHashTable *idf, const char *text)
{
  g_autoptr (GPtrArray) terms = catchup_text_terms (text, TRUE);
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
