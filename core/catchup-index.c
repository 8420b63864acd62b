#include "config.h"

#include <string.h>

#include "catchup-chunk.h"
#include "catchup-embed.h"
#include "catchup-error.h"
#include "catchup-index.h"
#include "catchup-text.h"

/* The text a chunk is indexed and embedded as: its turns as "speaker: text" lines, so that names are
 * searchable ("the trick ravi found"). */
char *
catchup_index_chunk_text (GPtrArray *turns)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < turns->len; i++)
    {
      CatchupMessage *m = turns->pdata[i];

      g_string_append_printf (s, "%s: %s\n", m->speaker, m->text);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

GPtrArray *
catchup_index_rows_turns (CatchupStore *store, const void *blob, int bytes, GError **error)
{
  g_autoptr (GPtrArray) turns = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  guint n = bytes / sizeof (gint64);

  for (guint i = 0; i < n; i++)
    {
      gint64 row;
      CatchupMessage *m;

      memcpy (&row, (const char *) blob + i * sizeof (gint64), sizeof row);
      m = catchup_store_get_message_by_row (store, GINT64_FROM_LE (row), error);
      if (m == NULL)
        return NULL;
      g_ptr_array_add (turns, m);
    }
  return g_steal_pointer (&turns);
}

/* Contentless FTS5 rows are deleted by handing back exactly the terms they were indexed with. */
static gboolean
delete_chunk (CatchupStore *store, gint64 id, const void *blob, int bytes, GError **error)
{
  g_autoptr (GPtrArray) turns = catchup_index_rows_turns (store, blob, bytes, error);
  g_autofree char *text = NULL, *terms = NULL;
  sqlite3_stmt *st;
  int rc;

  if (turns == NULL)
    return FALSE;
  text = catchup_index_chunk_text (turns);
  terms = catchup_text_terms_joined (text, TRUE);
  st = catchup_db_prepare (catchup_store_db (store), "INSERT INTO chunks_fts (chunks_fts, rowid, terms) VALUES ('delete', ?, ?)",
                              error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, id);
  sqlite3_bind_text (st, 2, terms, -1, SQLITE_STATIC);
  rc = sqlite3_step (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "chunk delete"), FALSE;
  st = catchup_db_prepare (catchup_store_db (store), "DELETE FROM chunks WHERE id = ?", error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, id);
  rc = sqlite3_step (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "chunk delete"), FALSE;
  return TRUE;
}

/* Deletes the room's chunks whose first turn sorts at or after `from` (NULL: all of them). */
static gboolean
delete_chunks_from (CatchupStore *store, gint64 room, const CatchupPos *from, GError **error)
{
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GPtrArray) blobs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  /* a chunk's last turn never sorts before its first: the range on the last turn, redundant, lets the index on
   * it find the few chunks at the tail instead of reading every chunk of the room */
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
      "SELECT id, rows FROM chunks WHERE room = ?1 AND (last_ts, last_row) >= (?2, ?3) "
      "AND (first_ts > ?2 OR (first_ts = ?2 AND first_row >= ?3))",
      error);
  int rc;

  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, from ? from->ts : G_MININT64);
  sqlite3_bind_int64 (st, 3, from ? from->row : G_MININT64);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (st, 0);

      g_array_append_val (ids, id);
      g_ptr_array_add (blobs, g_bytes_new (sqlite3_column_blob (st, 1), sqlite3_column_bytes (st, 1)));
    }
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "chunk scan"), FALSE;
  for (guint i = 0; i < ids->len; i++)
    {
      gsize bytes;
      const void *data = g_bytes_get_data (blobs->pdata[i], &bytes);

      if (!delete_chunk (store, g_array_index (ids, gint64, i), data, (int) bytes, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
insert_chunk (CatchupStore *store, gint64 room, GPtrArray *turns, guint first, guint n, guint tokens,
              GError **error)
{
  g_autoptr (GPtrArray) part = g_ptr_array_new ();
  g_autofree gint64 *rows = g_new (gint64, n);
  g_autofree char *text = NULL, *terms = NULL;
  g_autoptr (GPtrArray) all_terms = NULL;
  float vec[CATCHUP_EMBED_DIM];
  gint8 q[CATCHUP_EMBED_DIM];
  guint8 hash[CATCHUP_TEXT_HASH_LEN];
  CatchupMessage *head = turns->pdata[first], *tail = turns->pdata[first + n - 1];
  sqlite3_stmt *st;
  int rc;

  for (guint i = 0; i < n; i++)
    {
      CatchupMessage *m = turns->pdata[first + i];

      g_ptr_array_add (part, m);
      rows[i] = GINT64_TO_LE (m->row);
    }
  text = catchup_index_chunk_text (part);
  /* one tokenising serves the FTS5 row and the vector */
  all_terms = catchup_text_terms (text, TRUE);
  terms = catchup_text_join (all_terms);
  catchup_embed_hashed_terms (all_terms, vec);
  catchup_vec_quantize (vec, q, CATCHUP_EMBED_DIM);
  catchup_index_text_hash (text, hash);
  st = catchup_db_prepare (catchup_store_db (store),
      "INSERT INTO chunks (room, first_ts, first_row, last_ts, last_row, tokens, rows, vec, text_hash) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, head->ts);
  sqlite3_bind_int64 (st, 3, head->row);
  sqlite3_bind_int64 (st, 4, tail->ts);
  sqlite3_bind_int64 (st, 5, tail->row);
  sqlite3_bind_int (st, 6, (int) tokens);
  sqlite3_bind_blob (st, 7, rows, (int) (n * sizeof (gint64)), SQLITE_STATIC);
  sqlite3_bind_blob (st, 8, q, sizeof q, SQLITE_STATIC);
  sqlite3_bind_blob (st, 9, hash, sizeof hash, SQLITE_STATIC);
  rc = sqlite3_step (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "chunk insert"), FALSE;
  st = catchup_db_prepare (catchup_store_db (store), "INSERT INTO chunks_fts (rowid, terms) VALUES (?, ?)", error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, catchup_db_last_insert_rowid (catchup_store_db (store)));
  sqlite3_bind_text (st, 2, terms, -1, SQLITE_STATIC);
  rc = sqlite3_step (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "chunk index"), FALSE;
  return TRUE;
}

/* Chunks every conversational turn from `from` on (NULL: the start of the room). */
static gboolean
chunk_from (CatchupStore *store, gint64 room, const CatchupPos *from, GError **error)
{
  g_autoptr (GPtrArray) turns = catchup_store_range (store, room, from, NULL, 0, error);
  g_autofree guint *tokens = NULL;
  g_autoptr (GArray) spans = NULL;

  if (turns == NULL)
    return FALSE;
  tokens = g_new (guint, turns->len + 1);
  for (guint i = 0; i < turns->len; i++)
    {
      CatchupMessage *m = turns->pdata[i];

      tokens[i] = catchup_text_count_turn (m->speaker, m->text);
    }
  spans = catchup_chunk_spans (tokens, turns->len, CATCHUP_CHUNK_TOKENS, CATCHUP_CHUNK_OVERLAP);
  for (guint i = 0; i < spans->len; i++)
    {
      CatchupChunkSpan *s = &g_array_index (spans, CatchupChunkSpan, i);

      if (!insert_chunk (store, room, turns, s->first, s->n, s->tokens, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
query_pos (CatchupStore *store, const char *sql, gint64 room, gint64 arg, CatchupPos *out, gboolean *found,
           GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), sql, error);
  int rc;

  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, arg);
  rc = sqlite3_step (st);
  *found = rc == SQLITE_ROW && sqlite3_column_type (st, 0) != SQLITE_NULL;
  if (*found)
    {
      out->ts = sqlite3_column_int64 (st, 0);
      out->row = sqlite3_column_int64 (st, 1);
    }
  sqlite3_reset (st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "index state"), FALSE;
  return TRUE;
}

/* The first turn of the chunk that sorts first (last) among the room's chunks whose last turn sorts after
 * (before) pos; found tells whether there is one. A room's chunks are the spans of catchup_chunk_spans(),
 * whose first and last turns both increase from chunk to chunk, so the index on the last turn orders them as
 * the first turns do, and each lookup reads one index entry instead of sorting the room's chunks. */
static gboolean
chunk_next_to (CatchupStore *store, gint64 room, const CatchupPos *pos, gboolean after, CatchupPos *first,
               CatchupPos *last, gboolean *found, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), after
      ? "SELECT first_ts, first_row, last_ts, last_row FROM chunks WHERE room = ?1 AND (last_ts, last_row) > (?2, ?3) "
        "ORDER BY last_ts, last_row LIMIT 1"
      : "SELECT first_ts, first_row, last_ts, last_row FROM chunks WHERE room = ?1 AND (last_ts, last_row) < (?2, ?3) "
        "ORDER BY last_ts DESC, last_row DESC LIMIT 1", error);
  int rc;

  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, pos->ts);
  sqlite3_bind_int64 (st, 3, pos->row);
  rc = sqlite3_step (st);
  *found = rc == SQLITE_ROW;
  if (*found)
    {
      *first = (CatchupPos) { sqlite3_column_int64 (st, 0), sqlite3_column_int64 (st, 1) };
      *last = (CatchupPos) { sqlite3_column_int64 (st, 2), sqlite3_column_int64 (st, 3) };
    }
  sqlite3_reset (st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "index restart"), FALSE;
  return TRUE;
}

/* Where re-chunking must start so that the result equals chunking the whole room afresh: the chunk before
 * the first chunk that ends after the earliest new message (the new turn may fit at that chunk's end, or
 * take the place of the turn that ended it), or the start when there is none (the new turn may come before
 * every chunk); else the last chunk (it may grow). */
static gboolean
restart_pos (CatchupStore *store, gint64 room, const CatchupPos *earliest_new, CatchupPos *out,
             gboolean *from_start, GError **error)
{
  CatchupPos last;
  const CatchupPos end = { G_MAXINT64, G_MAXINT64 };
  gboolean found;

  if (!chunk_next_to (store, room, earliest_new, TRUE, out, &last, &found, error))
    return FALSE;
  if (!found)
    {
      if (!chunk_next_to (store, room, &end, FALSE, out, &last, &found, error))
        return FALSE;
      *from_start = !found;
      return TRUE;
    }
  if (!chunk_next_to (store, room, &last, FALSE, out, &last, &found, error))
    return FALSE;
  *from_start = !found;
  return TRUE;
}

/* Chunks indexed before text hashes existed (schema v3) get theirs the first time this connection updates
 * their room, so that their stored model vectors can be found without re-chunking the room; the rooms checked
 * are remembered with the connection, so the scan is paid once. */
#define HASHED_ROOMS_KEY "catchup-index-hashed-rooms"

static gboolean
hash_chunks (CatchupStore *store, GArray *ids, GError **error)
{
  for (guint i = 0; i < ids->len; i++)
    {
      gint64 id = g_array_index (ids, gint64, i);
      g_autoptr (GPtrArray) turns = catchup_index_chunk_turns (store, id, error);
      g_autofree char *text = NULL;
      guint8 hash[CATCHUP_TEXT_HASH_LEN];
      sqlite3_stmt *st;
      int rc;

      if (turns == NULL)
        return FALSE;
      text = catchup_index_chunk_text (turns);
      catchup_index_text_hash (text, hash);
      if ((st = catchup_db_prepare (catchup_store_db (store), "UPDATE chunks SET text_hash = ? WHERE id = ?", error)) == NULL)
        return FALSE;
      sqlite3_bind_blob (st, 1, hash, sizeof hash, SQLITE_STATIC);
      sqlite3_bind_int64 (st, 2, id);
      if ((rc = sqlite3_step (st)) != SQLITE_DONE)
        return catchup_db_set_error (catchup_store_db (store), rc, error, "chunk hashes"), FALSE;
    }
  return TRUE;
}

static gboolean
fill_text_hashes (CatchupStore *store, gint64 room, GError **error)
{
  GHashTable *hashed = catchup_db_get_data (catchup_store_db (store), HASHED_ROOMS_KEY);
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  sqlite3_stmt *st;
  int rc;

  if (hashed != NULL && g_hash_table_contains (hashed, &room))
    return TRUE;
  st = catchup_db_prepare (catchup_store_db (store), "SELECT id FROM chunks WHERE room = ?1 AND text_hash IS NULL", error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (st, 0);

      g_array_append_val (ids, id);
    }
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "chunk hashes"), FALSE;
  if (!hash_chunks (store, ids, error))
    return FALSE;
  /* only once the hashes are in: a failed fill is tried again (a rollback of the surrounding transaction after
   * it leaves the room unhashed until the next connection) */
  if (hashed == NULL)
    {
      hashed = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
      catchup_db_set_data (catchup_store_db (store), HASHED_ROOMS_KEY, hashed, (GDestroyNotify) g_hash_table_unref);
    }
  g_hash_table_add (hashed, g_memdup2 (&room, sizeof room));
  return TRUE;
}

/* Rows after the room's indexed ones that new_rows() reads in row order before it asks the room's own order
 * instead: a live room's few new rows are the last of the table, but a quiet room among busy ones may have many
 * other rooms' rows after its own. */
#define NEW_ROWS_SCAN 16384

/* The room's rows after `seen` by the messages' primary key: earliest (ts, row) and the largest row among them.
 * *complete is FALSE when more than NEW_ROWS_SCAN rows of any room follow `seen`. */
static gboolean
new_rows_scan (CatchupStore *store, gint64 room, gint64 seen, CatchupPos *earliest, gint64 *max_row,
               gboolean *found, gboolean *complete, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
      "SELECT room, ts, row FROM messages WHERE row > ?1 ORDER BY row LIMIT ?2", error);
  guint n = 0;
  int rc;

  if (st == NULL)
    return FALSE;
  *found = FALSE;
  sqlite3_bind_int64 (st, 1, seen);
  sqlite3_bind_int (st, 2, NEW_ROWS_SCAN + 1);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW && ++n <= NEW_ROWS_SCAN)
    {
      CatchupPos pos = { sqlite3_column_int64 (st, 1), sqlite3_column_int64 (st, 2) };

      if (sqlite3_column_int64 (st, 0) != room)
        continue;
      if (!*found || pos.ts < earliest->ts || (pos.ts == earliest->ts && pos.row < earliest->row))
        *earliest = pos;
      *max_row = pos.row;
      *found = TRUE;
    }
  sqlite3_reset (st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "index state"), FALSE;
  *complete = n <= NEW_ROWS_SCAN;
  return TRUE;
}

/* The room's messages not indexed yet (row > seen): the earliest in the room's order and the largest row. */
static gboolean
new_rows (CatchupStore *store, gint64 room, gint64 seen, CatchupPos *earliest, CatchupPos *max, gboolean *found,
          GError **error)
{
  gboolean complete;

  if (!new_rows_scan (store, room, seen, earliest, &max->row, found, &complete, error))
    return FALSE;
  if (complete)
    return TRUE;
  /* both walk the room's messages in its order: once in a long while, after many other rooms' messages */
  return query_pos (store, "SELECT ts, row FROM messages WHERE room = ?1 AND row > ?2 ORDER BY ts, row LIMIT 1",
                    room, seen, earliest, found, error) &&
         (!*found || query_pos (store, "SELECT 0, max(row) FROM messages WHERE room = ?1 AND ?2 = ?2", room, 0, max,
                                found, error));
}

static gboolean
index_update_locked (CatchupStore *store, gint64 room, GError **error)
{
  CatchupPos earliest = { 0, 0 }, max = { 0, 0 }, start = { 0, 0 };
  gboolean found, from_start;
  gint64 seen = 0;
  sqlite3_stmt *st;

  if (!fill_text_hashes (store, room, error) ||
      (st = catchup_db_prepare (catchup_store_db (store), "SELECT max_row FROM index_state WHERE room = ?", error)) == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  if (sqlite3_step (st) == SQLITE_ROW)
    seen = sqlite3_column_int64 (st, 0);
  sqlite3_reset (st);
  if (!new_rows (store, room, seen, &earliest, &max, &found, error))
    return FALSE;
  if (!found)
    return TRUE;
  if (!restart_pos (store, room, &earliest, &start, &from_start, error) ||
      !delete_chunks_from (store, room, from_start ? NULL : &start, error) ||
      !chunk_from (store, room, from_start ? NULL : &start, error))
    return FALSE;
  st = catchup_db_prepare (catchup_store_db (store), "INSERT OR REPLACE INTO index_state (room, max_row) VALUES (?, ?)", error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, max.row);
  return catchup_db_step_done (catchup_store_db (store), st, error);
}

gboolean
catchup_index_update (CatchupStore *store, gint64 room, GError **error)
{
  if (!catchup_store_begin (store, error))
    return FALSE;
  if (!index_update_locked (store, room, error))
    {
      catchup_store_rollback (store);
      return FALSE;
    }
  return catchup_store_commit (store, error);
}

gboolean
catchup_index_clear (CatchupStore *store, gint64 room, GError **error)
{
  sqlite3_stmt *st;

  if (!catchup_store_begin (store, error))
    return FALSE;
  if (!delete_chunks_from (store, room, NULL, error) ||
      (st = catchup_db_prepare (catchup_store_db (store), "DELETE FROM index_state WHERE room = ?", error)) == NULL)
    {
      catchup_store_rollback (store);
      return FALSE;
    }
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_step (st);
  return catchup_store_commit (store, error);
}

void
catchup_index_text_hash (const char *text, guint8 *out)
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 digest[32];
  gsize len = sizeof digest;

  g_checksum_update (sum, (const guchar *) text, -1);
  g_checksum_get_digest (sum, digest, &len);
  memcpy (out, digest, CATCHUP_TEXT_HASH_LEN);
}

GPtrArray *
catchup_index_chunk_turns (CatchupStore *store, gint64 chunk, GError **error)
{
  g_autoptr (GBytes) rows = NULL;
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), "SELECT rows FROM chunks WHERE id = ?", error);
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

/* ---------- readers for retrieval ---------- */


/* The per-row figures of catchup_tf(): rows and tokens of the whole index, then one count per phrase. */
#define TF_HEAD 2
/* Phrases counted without a heap buffer; longer expressions are rare (a whole window's terms). */
#define TF_STACK_PHRASES 256
G_STATIC_ASSERT (sizeof (sqlite3_int64) == sizeof (gint64));

/*
 * FTS5 auxiliary function catchup_tf (chunks_fts): a blob of 64-bit integers, TF_HEAD figures and then how
 * often each phrase of the MATCH expression occurs in the current row, for a caller that scores BM25 itself.
 * bm25() walks every phrase's doclist again on each query to count its documents, which the caller has
 * already, and reads each row's length through a statement of its own, which a join reads cheaper.
 */
static void
tf_function (const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int n_args, sqlite3_value **args)
{
  int n = api->xPhraseCount (fts), rc;
  sqlite3_int64 stack[TF_HEAD + TF_STACK_PHRASES];
  g_autofree sqlite3_int64 *heap = n > TF_STACK_PHRASES ? g_new (sqlite3_int64, TF_HEAD + n) : NULL;
  sqlite3_int64 *out = heap ? heap : stack;
  sqlite3_int64 *totals = api->xGetAuxdata (fts, 0);

  (void) n_args;
  (void) args;
  /* the index's totals are the same for every row of a query: read once, kept with the query */
  if (totals == NULL)
    {
      sqlite3_int64 rows, tokens;

      if ((rc = api->xRowCount (fts, &rows)) != SQLITE_OK
          || (rc = api->xColumnTotalSize (fts, -1, &tokens)) != SQLITE_OK)
        {
          sqlite3_result_error_code (ctx, rc);
          return;
        }
      totals = g_new (sqlite3_int64, 2);
      totals[0] = rows;
      totals[1] = tokens;
      /* on failure xSetAuxdata frees totals itself */
      if ((rc = api->xSetAuxdata (fts, totals, g_free)) != SQLITE_OK)
        {
          sqlite3_result_error_code (ctx, rc);
          return;
        }
    }
  out[0] = totals[0];
  out[1] = totals[1];
  for (int i = 0; i < n; i++)
    {
      Fts5PhraseIter it;
      int col, off;

      out[TF_HEAD + i] = 0;
      if ((rc = api->xPhraseFirst (fts, i, &it, &col, &off)) != SQLITE_OK)
        {
          sqlite3_result_error_code (ctx, rc);
          return;
        }
      for (; col >= 0; api->xPhraseNext (fts, &it, &col, &off))
        out[TF_HEAD + i]++;
    }
  sqlite3_result_blob (ctx, out, (int) ((TF_HEAD + n) * sizeof *out), SQLITE_TRANSIENT);
}

/* The connection's data key under which catchup_tf() is known to be registered. */
#define TF_REGISTERED "catchup-index-tf"

/* Makes catchup_tf() known to the connection's FTS5; once, before the statement using it is first prepared. */
static gboolean
register_tf (CatchupDb *db, GError **error)
{
  fts5_api *api = NULL;
  sqlite3_stmt *st;
  int rc;

  if (catchup_db_get_data (db, TF_REGISTERED) != NULL)
    return TRUE;
  if ((st = catchup_db_prepare (db, "SELECT fts5(?1)", error)) == NULL)
    return FALSE;
  sqlite3_bind_pointer (st, 1, &api, "fts5_api_ptr", NULL);
  rc = sqlite3_step (st);
  sqlite3_reset (st);
  if (rc != SQLITE_ROW)
    return catchup_db_set_error (db, rc, error, "term counts"), FALSE;
  rc = api == NULL || api->iVersion < 2 ? SQLITE_ERROR : api->xCreateFunction (api, "catchup_tf", NULL, tf_function,
                                                                              NULL);
  if (rc != SQLITE_OK)
    return catchup_db_set_error (db, rc, error, "term counts"), FALSE;
  catchup_db_set_data (db, TF_REGISTERED, GINT_TO_POINTER (1), NULL);
  return TRUE;
}

/* FTS5 first, then the chunk and its length (FTS5's docsize table) by rowid: CROSS JOIN keeps that order
 * (without ORDER BY, the planner would rather walk the room's chunks and probe FTS5 for each). */
#define MATCH_SQL \
  "SELECT c.id, catchup_tf (chunks_fts), d.sz FROM chunks_fts CROSS JOIN chunks c ON c.id = chunks_fts.rowid " \
  "CROSS JOIN chunks_fts_docsize d ON d.id = c.id " \
  "WHERE chunks_fts MATCH ?1 AND c.room = ?2 AND (c.last_ts < ?3 OR (c.last_ts = ?3 AND c.last_row < ?4))"

/* A row's length in tokens as FTS5 keeps it in its docsize table: one SQLite varint per column (one here). */
static gint64
docsize_tokens (const guint8 *sz, int bytes)
{
  gint64 v = 0;

  for (int i = 0; i < bytes && i < 9; i++)
    {
      if (i == 8)
        return (v << 8) | sz[i];
      v = (v << 7) | (sz[i] & 0x7f);
      if (!(sz[i] & 0x80))
        return v;
    }
  return v;
}

gboolean
catchup_index_match_foreach (CatchupStore *store, gint64 room, const char *match, guint n_phrases,
                             const CatchupPos *before, CatchupIndexMatchFunc func, gpointer data, GError **error)
{
  CatchupDb *db = catchup_store_db (store);
  sqlite3_stmt *st;
  int rc;

  if (!register_tf (db, error) || (st = catchup_db_prepare (db, MATCH_SQL, error)) == NULL)
    return FALSE;
  sqlite3_bind_text (st, 1, match, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 2, room);
  catchup_pos_bind (st, 3, before, G_MAXINT64);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      const gint64 *tf = sqlite3_column_blob (st, 1);
      CatchupIndexMatch m;

      /* an expression FTS5 parsed into other phrases than its caller wrote cannot be scored */
      if ((gsize) sqlite3_column_bytes (st, 1) != (TF_HEAD + n_phrases) * sizeof *tf)
        {
          rc = SQLITE_MISMATCH;
          break;
        }
      m = (CatchupIndexMatch) { sqlite3_column_int64 (st, 0), tf[0], tf[1],
                                docsize_tokens (sqlite3_column_blob (st, 2), sqlite3_column_bytes (st, 2)),
                                tf + TF_HEAD };
      func (&m, data);
    }
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (db, rc, error, "sparse retrieval"), FALSE;
  return TRUE;
}

GArray *
catchup_index_search (CatchupStore *store, gint64 room, const char *match, const CatchupPos *before, guint top,
                      GError **error)
{
  g_autoptr (GArray) hits = g_array_new (FALSE, FALSE, sizeof (CatchupHit));
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
      "SELECT c.id, bm25(chunks_fts) AS s FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
      "WHERE chunks_fts MATCH ?1 AND c.room = ?2 AND (c.last_ts < ?3 OR (c.last_ts = ?3 AND c.last_row < ?4)) "
      "ORDER BY s LIMIT ?5", error);
  int rc;

  if (st == NULL)
    return NULL;
  sqlite3_bind_text (st, 1, match, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 2, room);
  catchup_pos_bind (st, 3, before, G_MAXINT64);
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
      catchup_db_set_error (catchup_store_db (store), rc, error, "sparse retrieval");
      return NULL;
    }
  return g_steal_pointer (&hits);
}

gboolean
catchup_index_foreach_vec (CatchupStore *store, gint64 room, const CatchupPos *before, CatchupIndexVecFunc func,
                           gpointer data, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
      "SELECT id, vec FROM chunks WHERE room = ?1 AND (last_ts < ?2 OR (last_ts = ?2 AND last_row < ?3))",
      error);
  int rc;

  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  catchup_pos_bind (st, 2, before, G_MAXINT64);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    if (sqlite3_column_bytes (st, 1) == CATCHUP_EMBED_DIM)
      func (sqlite3_column_int64 (st, 0), sqlite3_column_blob (st, 1), data);
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "dense retrieval"), FALSE;
  return TRUE;
}

/* fts5vocab reads document frequencies straight from the FTS index; a temp table touches no schema. */
static gboolean
ensure_vocab (CatchupStore *store, GError **error)
{
  return catchup_db_exec (catchup_store_db (store), "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab USING "
                                    "fts5vocab (main, chunks_fts, row)", error);
}

gboolean
catchup_index_count_chunks (CatchupStore *store, double *n, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), "SELECT count(*) FROM chunks", error);
  int rc;

  *n = 0;
  if (st == NULL)
    return FALSE;
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    *n = sqlite3_column_double (st, 0);
  sqlite3_reset (st);
  if (rc != SQLITE_ROW)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "chunk count"), FALSE;
  return TRUE;
}

/* Terms looked up by one execution of the document-frequency statement. */
#define TERM_DOCS_BATCH 64

/* "SELECT term, doc FROM temp.chunks_vocab WHERE term IN (?1, ..., ?TERM_DOCS_BATCH)", built once */
static const char *
term_docs_sql (void)
{
  static gsize once;
  static char *text;

  if (g_once_init_enter (&once))
    {
      GString *sql = g_string_new ("SELECT term, doc FROM temp.chunks_vocab WHERE term IN (");

      for (guint i = 1; i <= TERM_DOCS_BATCH; i++)
        g_string_append_printf (sql, i > 1 ? ", ?%u" : "?%u", i);
      g_string_append_c (sql, ')');
      text = g_string_free (sql, FALSE);
      g_once_init_leave (&once, 1);
    }
  return text;
}

/* df of terms[from ..< to] into docs (term -> df); unused parameters stay NULL, which matches no term. */
static gboolean
term_docs_batch (CatchupStore *store, sqlite3_stmt *st, const char *const *terms, guint from, guint to,
                 GHashTable *docs, GError **error)
{
  int rc;

  sqlite3_reset (st);
  sqlite3_clear_bindings (st);
  for (guint i = from; i < to; i++)
    sqlite3_bind_text (st, (int) (i - from + 1), terms[i], -1, SQLITE_STATIC);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    g_hash_table_insert (docs, g_strdup ((const char *) sqlite3_column_text (st, 0)),
                         GSIZE_TO_POINTER ((gsize) sqlite3_column_int64 (st, 1)));
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "term frequency"), FALSE;
  return TRUE;
}

gboolean
catchup_index_term_docs (CatchupStore *store, const char *const *terms, guint n, double *df, GError **error)
{
  g_autoptr (GHashTable) docs = NULL;
  const char *sql;
  sqlite3_stmt *st;

  if (n == 0)
    return TRUE;
  /* every statement execution opens an fts5vocab cursor, and opening one prepares and runs a query of its
   * own: a batch of terms per execution pays that once instead of once a term */
  sql = term_docs_sql ();
  if (!ensure_vocab (store, error) || (st = catchup_db_prepare (catchup_store_db (store), sql, error)) == NULL)
    return FALSE;
  docs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint from = 0; from < n; from += TERM_DOCS_BATCH)
    if (!term_docs_batch (store, st, terms, from, MIN (n, from + TERM_DOCS_BATCH), docs, error))
      return FALSE;
  for (guint i = 0; i < n; i++)
    df[i] = GPOINTER_TO_SIZE (g_hash_table_lookup (docs, terms[i]));
  return TRUE;
}
