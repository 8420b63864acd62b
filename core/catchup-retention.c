#include "config.h"

#include <glib/gi18n-lib.h>

#include "catchup-index.h"
#include "catchup-retention.h"

static gboolean
delete_room_rows (CatchupStore *store, const char *sql, gint64 room, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = catchup_db_prepare (catchup_store_db (store), sql, error);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  return catchup_db_step_done (catchup_store_db (store), stmt, error);
}

gboolean
catchup_retention_forget_room (CatchupStore *store, gint64 room, GError **error)
{
  /* Explicit deletes rather than trusting ON DELETE CASCADE alone: a connection opened elsewhere without
   * foreign_keys would leave orphans, and the FTS tables have no foreign keys at all. */
  static const char *const deletes[] = {
    "DELETE FROM records WHERE room = ?1",
    "DELETE FROM records_state WHERE room = ?1",
    "DELETE FROM room_speakers WHERE room = ?1",
    "DELETE FROM messages WHERE room = ?1",
    "DELETE FROM room_settings WHERE room = ?1",
    "DELETE FROM nicks WHERE room = ?1",
    "DELETE FROM rooms WHERE id = ?1",
  };

  if (!catchup_store_begin (store, error))
    return FALSE;
  if (!catchup_index_clear (store, room, error))
    goto fail;
  for (guint i = 0; i < G_N_ELEMENTS (deletes); i++)
    if (!delete_room_rows (store, deletes[i], room, error))
      goto fail;
  return catchup_store_commit (store, error);

fail:
  catchup_store_rollback (store);
  return FALSE;
}

/* Rooms with anything older than ?1: the others need no write transaction at all. */
#define ROOMS_WITH_OLD_ROWS \
  "SELECT id FROM rooms r WHERE" \
  " EXISTS (SELECT 1 FROM messages WHERE room = r.id AND ts < ?1)" \
  " OR EXISTS (SELECT 1 FROM nicks WHERE room = r.id AND ts < ?1)"

static GArray *
rooms_with_old_rows (CatchupStore *store, gint64 cutoff_ts, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = catchup_db_prepare (catchup_store_db (store), ROOMS_WITH_OLD_ROWS, error);
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, cutoff_ts);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (stmt, 0);
      g_array_append_val (ids, id);
    }
  if (rc != SQLITE_DONE)
    {
      catchup_db_set_error (catchup_store_db (store), rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_steal_pointer (&ids);
}

/* Runs a delete bound to (room, cutoff); changes (may be NULL) gets how many rows went. */
static gboolean
delete_before (CatchupStore *store, const char *sql, gint64 room, gint64 cutoff_ts, gint64 *changes,
               GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = catchup_db_prepare (catchup_store_db (store), sql, error);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, cutoff_ts);
  if (!catchup_db_step_done (catchup_store_db (store), stmt, error))
    return FALSE;
  if (changes != NULL)
    *changes = catchup_db_changes (catchup_store_db (store));
  return TRUE;
}

static gboolean
count_old_messages (CatchupStore *store, gint64 room, gint64 cutoff_ts, gint64 *n, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (catchup_store_db (store), "SELECT count(*) FROM messages WHERE room = ?1 AND ts < ?2", error);
  gboolean found;

  *n = 0;
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, cutoff_ts);
  return catchup_db_query_int64 (catchup_store_db (store), stmt, n, &found, error);
}

static gboolean
prune_room_locked (CatchupStore *store, gint64 room, gint64 cutoff_ts, gint64 *n_deleted, GError **error)
{
  gint64 n_old;

  if (!count_old_messages (store, room, cutoff_ts, &n_old, error))
    return FALSE;
  /* Contentless FTS rows are deleted by regenerating their terms from the messages: the chunks go first. A
   * full re-chunk afterwards is what makes the index equal a fresh one (the first chunks change shape). */
  if (n_old > 0 && !catchup_index_clear (store, room, error))
    return FALSE;
  if (!delete_before (store, "DELETE FROM messages WHERE room = ?1 AND ts < ?2", room, cutoff_ts, n_deleted, error)
      || !delete_before (store, "DELETE FROM nicks WHERE room = ?1 AND ts < ?2", room, cutoff_ts, NULL, error))
    return FALSE;
  return n_old == 0 || catchup_index_update (store, room, error);
}

static gboolean
prune_rooms (CatchupStore *store, GArray *rooms, gint64 cutoff_ts, guint64 *n_deleted, GError **error)
{
  /* One transaction per room: a long prune never holds the write lock for the whole history at once. */
  for (guint i = 0; i < rooms->len; i++)
    {
      gint64 n = 0;

      if (catchup_db_check_cancelled (catchup_store_db (store), error) || !catchup_store_begin (store, error))
        return FALSE;
      if (!prune_room_locked (store, g_array_index (rooms, gint64, i), cutoff_ts, &n, error))
        {
          catchup_store_rollback (store);
          return FALSE;
        }
      if (!catchup_store_commit (store, error))
        return FALSE;
      if (n_deleted)
        *n_deleted += (guint64) n;
    }
  return TRUE;
}

gboolean
catchup_retention_prune (CatchupStore *store, gint64 cutoff_ts, GCancellable *cancellable, guint64 *n_deleted,
                     GError **error)
{
  g_autoptr (GCancellable) outer = NULL;
  g_autoptr (GArray) rooms = NULL;
  gboolean ok;

  g_return_val_if_fail (store != NULL, FALSE);

  if (n_deleted)
    *n_deleted = 0;
  rooms = rooms_with_old_rows (store, cutoff_ts, error);
  if (rooms == NULL)
    return FALSE;
  /* The statements themselves watch the cancellable too: one big room is a single long transaction. */
  outer = catchup_db_get_cancellable (catchup_store_db (store));
  outer = outer ? g_object_ref (outer) : NULL;
  if (cancellable != NULL)
    catchup_store_set_cancellable (store, cancellable);
  ok = prune_rooms (store, rooms, cutoff_ts, n_deleted, error);
  catchup_store_set_cancellable (store, outer);
  return ok;
}
