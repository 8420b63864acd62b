#include "config.h"

#include <math.h>
#include <string.h>

#include "catchup-embed-cache.h"
#include "catchup-error.h"
#include "catchup-index.h"
#include "catchup-store-private.h"

/* Texts per request and per write transaction: big enough to amortise a round trip, small enough that a
 * cancelled fill stops soon and keeps most of its work. */
#define FILL_BATCH 32

char *
catchup_embed_turn_text (const CatchupMessage *msg)
{
  return g_strdup_printf ("%s: %s", msg->speaker, msg->text);
}

/* Vectors are stored little-endian whatever the host, so a database can move between machines. */
static void
vec_encode (const float *v, guint dim, guint32 *out)
{
  for (guint d = 0; d < dim; d++)
    {
      guint32 bits;

      memcpy (&bits, v + d, sizeof bits);
      out[d] = GUINT32_TO_LE (bits);
    }
}

/* Reads one stored vector (dim little-endian float32 values) into out. */
static void
vec_decode (const void *blob, guint dim, float *out)
{
  for (guint d = 0; d < dim; d++)
    {
      guint32 bits;

      memcpy (&bits, (const char *) blob + d * sizeof bits, sizeof bits);
      bits = GUINT32_FROM_LE (bits);
      memcpy (out + d, &bits, sizeof bits);
    }
}

static gboolean
vec_is_finite (const float *v, guint dim)
{
  for (guint d = 0; d < dim; d++)
    if (!isfinite (v[d]))
      return FALSE;
  return TRUE;
}

/* Looks up one text's vector; TRUE when stored with the right size (out may be NULL: existence only). */
static gboolean
lookup_one (CatchupStore *store, const char *model, guint dim, const char *text, float *out, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), "SELECT vec FROM embeddings WHERE model = ? AND hash = ?",
                                            error);
  guint8 hash[CATCHUP_TEXT_HASH_LEN];
  gboolean found = FALSE;
  int rc;

  if (st == NULL)
    return FALSE;
  catchup_index_text_hash (text, hash);
  sqlite3_bind_text (st, 1, model, -1, SQLITE_STATIC);
  sqlite3_bind_blob (st, 2, hash, sizeof hash, SQLITE_STATIC);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW && (guint) sqlite3_column_bytes (st, 0) == dim * sizeof (float))
    {
      g_autofree float *vec = g_new (float, dim);

      /* older versions stored NaN vectors of non-finite model answers: such a row is as good as none */
      vec_decode (sqlite3_column_blob (st, 0), dim, vec);
      found = vec_is_finite (vec, dim);
      if (found && out != NULL)
        memcpy (out, vec, dim * sizeof (float));
    }
  sqlite3_reset (st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    catchup_db_set_error (catchup_store_db (store), rc, error, "embedding lookup");
  return found;
}

float *
catchup_embed_cache_lookup (CatchupStore *store, const char *model, guint dim, const char *const *texts, guint n,
                            gboolean *found, GError **error)
{
  g_autofree float *out = g_new0 (float, (gsize) MAX (n, 1) * dim);

  for (guint i = 0; i < n; i++)
    {
      GError *local = NULL;
      gboolean hit = lookup_one (store, model, dim, texts[i], out + (gsize) i * dim, &local);

      if (local != NULL)
        {
          g_propagate_error (error, local);
          return NULL;
        }
      if (found != NULL)
        found[i] = hit;
    }
  return g_steal_pointer (&out);
}

/* The texts still to embed, each once (a turn line can equal another turn's, or a one-turn chunk's text). */
typedef struct {
  GPtrArray *texts;
  GHashTable *seen;
} Todo;

static void
todo_add (Todo *todo, char *text)
{
  /* not g_hash_table_add alone: on a repeat it swaps in the new key, which is then freed */
  if (g_hash_table_contains (todo->seen, text))
    {
      g_free (text);
      return;
    }
  g_hash_table_add (todo->seen, text);
  g_ptr_array_add (todo->texts, text);
}

static gboolean
collect_chunks (CatchupStore *store, gint64 room, const char *model, Todo *todo, GError **error)
{
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
      "SELECT c.id FROM chunks c WHERE c.room = ?1 AND c.text_hash IS NOT NULL AND NOT EXISTS "
      "(SELECT 1 FROM embeddings e WHERE e.model = ?2 AND e.hash = c.text_hash) ORDER BY c.id", error);
  int rc;

  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_text (st, 2, model, -1, SQLITE_STATIC);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (st, 0);

      g_array_append_val (ids, id);
    }
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "embedding fill"), FALSE;
  for (guint i = 0; i < ids->len; i++)
    {
      g_autoptr (GPtrArray) turns = catchup_index_chunk_turns (store, g_array_index (ids, gint64, i), error);

      if (turns == NULL)
        return FALSE;
      todo_add (todo, catchup_index_chunk_text (turns));
    }
  return TRUE;
}

/* Turns are checked only past the room's watermark for the model: message rows only grow, so a fill after
 * a batch of messages reads that batch, not the room's whole history. */
static char *
watermark_key (const char *model)
{
  return g_strconcat ("embed-turns:", model, NULL);
}

static gboolean
collect_turns (CatchupStore *store, gint64 room, const char *model, guint dim, gint64 *max_row, Todo *todo,
               GError **error)
{
  g_autofree char *key = watermark_key (model);
  g_autofree char *mark = catchup_store_get_setting (store, room, key, error);
  g_autoptr (GPtrArray) msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  sqlite3_stmt *st;
  int rc;

  *max_row = mark ? g_ascii_strtoll (mark, NULL, 10) : 0;
  st = catchup_db_prepare (catchup_store_db (store), "SELECT " CATCHUP_STORE_MESSAGE_COLUMNS " FROM messages "
                                     "WHERE room = ?1 AND row > ?2 ORDER BY row", error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, *max_row);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    g_ptr_array_add (msgs, catchup_store_message_from_stmt (st));
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "embedding fill"), FALSE;
  for (guint i = 0; i < msgs->len; i++)
    {
      CatchupMessage *m = msgs->pdata[i];
      g_autofree char *line = NULL;
      GError *local = NULL;

      *max_row = MAX (*max_row, m->row);
      line = catchup_embed_turn_text (m);
      if (lookup_one (store, model, dim, line, NULL, &local))
        continue;
      if (local != NULL)
        return g_propagate_error (error, local), FALSE;
      todo_add (todo, g_steal_pointer (&line));
    }
  return TRUE;
}

static gboolean
store_vectors (CatchupStore *store, const CatchupEmbedWrite *write, GError **error)
{
  g_autofree guint32 *blob = g_new (guint32, MAX (write->dim, 1));

  for (guint i = 0; i < write->n; i++)
    {
      sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), "INSERT OR REPLACE INTO embeddings (model, hash, vec) "
                                                       "VALUES (?, ?, ?)", error);
      guint8 hash[CATCHUP_TEXT_HASH_LEN];
      int rc;

      if (st == NULL)
        return FALSE;
      catchup_index_text_hash (write->texts[i], hash);
      vec_encode (write->vecs + (gsize) i * write->dim, write->dim, blob);
      sqlite3_bind_text (st, 1, write->model, -1, SQLITE_STATIC);
      sqlite3_bind_blob (st, 2, hash, sizeof hash, SQLITE_STATIC);
      sqlite3_bind_blob (st, 3, blob, (int) (write->dim * sizeof (guint32)), SQLITE_STATIC);
      if ((rc = sqlite3_step (st)) != SQLITE_DONE)
        {
          catchup_db_set_error (catchup_store_db (store), rc, error, "embedding store");
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
set_watermark (CatchupStore *store, gint64 room, const char *model, gint64 max_row, GError **error)
{
  g_autofree char *key = watermark_key (model);
  g_autofree char *value = g_strdup_printf ("%" G_GINT64_FORMAT, max_row);

  return catchup_store_set_setting (store, room, key, value, error);
}

static gboolean
write_locked (CatchupStore *store, const CatchupEmbedWrite *write, GError **error)
{
  return store_vectors (store, write, error) &&
         (write->room == 0 || set_watermark (store, write->room, write->model, write->watermark, error)) &&
         (write->prune_keep == NULL || catchup_embed_cache_prune (store, write->prune_keep, NULL, error));
}

gboolean
catchup_embed_cache_write (CatchupStore *store, const CatchupEmbedWrite *write, GError **error)
{
  if (!catchup_store_begin (store, error))
    return FALSE;
  if (!write_locked (store, write, error))
    {
      catchup_store_rollback (store);
      return FALSE;
    }
  return catchup_store_commit (store, error);
}

/* Without a sink the fill writes into the store it reads. */
static gboolean
emit (CatchupStore *store, const CatchupEmbedWrite *write, CatchupEmbedSink sink, gpointer sink_data,
      GCancellable *cancellable, GError **error)
{
  if (sink != NULL)
    return sink (write, sink_data, cancellable, error);
  return catchup_embed_cache_write (store, write, error);
}

gboolean
catchup_embed_cache_fill_via (CatchupStore *store, gint64 room, CatchupEmbedder *embedder, CatchupEmbedSink sink,
                              gpointer sink_data, GCancellable *cancellable, guint *computed, GError **error)
{
  Todo todo = { g_ptr_array_new_with_free_func (g_free), g_hash_table_new (g_str_hash, g_str_equal) };
  guint dim = embedder->dim;
  g_autofree float *vecs = g_new (float, (gsize) FILL_BATCH * dim);
  CatchupEmbedWrite write = { embedder->name, dim, NULL, 0, vecs, 0, 0, NULL };
  gint64 max_row = 0;
  gboolean ok;

  if (computed != NULL)
    *computed = 0;
  ok = collect_chunks (store, room, embedder->name, &todo, error) &&
       collect_turns (store, room, embedder->name, dim, &max_row, &todo, error);
  for (guint start = 0; ok && start < todo.texts->len; start += FILL_BATCH)
    {
      write.n = MIN (FILL_BATCH, todo.texts->len - start);
      write.texts = (const char *const *) todo.texts->pdata + start;
      ok = !g_cancellable_set_error_if_cancelled (cancellable, error) &&
           embedder->embed (embedder, write.texts, write.n, FALSE, vecs, cancellable, error) &&
           emit (store, &write, sink, sink_data, cancellable, error);
      if (ok && computed != NULL)
        *computed += write.n;
    }
  /* the turns count as done only once all their vectors are stored */
  write.n = 0;
  write.room = room;
  write.watermark = max_row;
  ok = ok && emit (store, &write, sink, sink_data, cancellable, error);
  g_hash_table_unref (todo.seen);
  g_ptr_array_unref (todo.texts);
  return ok;
}

gboolean
catchup_embed_cache_fill_rooms (CatchupStore *store, GArray *rooms, CatchupEmbedder *embedder, gboolean prune,
                                CatchupEmbedSink sink, gpointer sink_data, GCancellable *cancellable,
                                guint *computed, GError **error)
{
  CatchupEmbedWrite prune_write = { embedder->name, embedder->dim, NULL, 0, NULL, 0, 0, embedder->name };

  *computed = 0;
  for (guint i = 0; i < rooms->len; i++)
    {
      guint n = 0;

      if (!catchup_embed_cache_fill_via (store, g_array_index (rooms, gint64, i), embedder, sink, sink_data,
                                         cancellable, &n, error))
        return FALSE;
      *computed += n;
    }
  return !prune || emit (store, &prune_write, sink, sink_data, cancellable, error);
}

gboolean
catchup_embed_cache_foreach_chunk (CatchupStore *store, gint64 room, const char *model, guint dim,
                                   const CatchupPos *before, CatchupEmbedChunkFunc func, gpointer data,
                                   GError **error)
{
  /* the chunks are the index's: a stored vector belongs to every chunk whose text hashes to its key */
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
      "SELECT c.id, e.vec FROM chunks c JOIN embeddings e ON e.model = ?4 AND e.hash = c.text_hash "
      "WHERE c.room = ?1 AND (c.last_ts < ?2 OR (c.last_ts = ?2 AND c.last_row < ?3))", error);
  g_autofree float *vec = g_new (float, MAX (dim, 1));
  int rc;

  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  catchup_pos_bind (st, 2, before, G_MAXINT64);
  sqlite3_bind_text (st, 4, model, -1, SQLITE_STATIC);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      if ((guint) sqlite3_column_bytes (st, 1) != dim * sizeof (float))
        continue;
      vec_decode (sqlite3_column_blob (st, 1), dim, vec);
      func (sqlite3_column_int64 (st, 0), vec, data);
    }
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "dense retrieval"), FALSE;
  return TRUE;
}

gboolean
catchup_embed_cache_prune (CatchupStore *store, const char *keep_model, gint64 *deleted, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), "DELETE FROM embeddings WHERE model != ?", error);
  int rc;

  if (st == NULL)
    return FALSE;
  sqlite3_bind_text (st, 1, keep_model, -1, SQLITE_STATIC);
  rc = sqlite3_step (st);
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "embedding prune"), FALSE;
  if (deleted != NULL)
    *deleted = catchup_db_changes (catchup_store_db (store));
  /* the watermarks of pruned models would make a later fill under that name skip their turns */
  st = catchup_db_prepare (catchup_store_db (store), "DELETE FROM room_settings WHERE key LIKE 'embed-turns:%' AND key != ?",
                              error);
  if (st == NULL)
    return FALSE;
  {
    g_autofree char *key = watermark_key (keep_model);

    sqlite3_bind_text (st, 1, key, -1, SQLITE_TRANSIENT);
  }
  rc = sqlite3_step (st);
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    return catchup_db_set_error (catchup_store_db (store), rc, error, "embedding prune"), FALSE;
  return TRUE;
}

gint64
catchup_embed_cache_count (CatchupStore *store, const char *model, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), "SELECT count(*) FROM embeddings WHERE model = ?", error);
  gint64 n = -1;
  int rc;

  if (st == NULL)
    return -1;
  sqlite3_bind_text (st, 1, model, -1, SQLITE_STATIC);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    n = sqlite3_column_int64 (st, 0);
  else
    catchup_db_set_error (catchup_store_db (store), rc, error, "embedding count");
  sqlite3_reset (st);
  return n;
}

guint
catchup_embed_cache_stored_dim (CatchupStore *store, const char *prefix, GError **error)
{
  /* a range over the primary key: names from prefix up to prefix with its last byte raised */
  g_autofree char *upper = g_strdup (prefix);
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), "SELECT model FROM embeddings WHERE model >= ? AND model < ? "
                                                   "LIMIT 1", error);
  guint dim = 0;
  int rc;

  if (st == NULL || *prefix == '\0')
    return 0;
  upper[strlen (upper) - 1]++;
  sqlite3_bind_text (st, 1, prefix, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, upper, -1, SQLITE_STATIC);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    {
      const char *name = (const char *) sqlite3_column_text (st, 0);
      const char *tail = strrchr (name, ':');

      dim = tail ? (guint) g_ascii_strtoull (tail + 1, NULL, 10) : 0;
    }
  else if (rc != SQLITE_DONE)
    catchup_db_set_error (catchup_store_db (store), rc, error, "embedding dimension");
  sqlite3_reset (st);
  return dim;
}
