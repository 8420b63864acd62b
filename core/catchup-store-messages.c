#include "config.h"

#include <glib/gi18n-lib.h>

#include "catchup-error.h"
#include "catchup-store-private.h"

/* The store's messages: added idempotently by (room, id), read in the room's (ts, row) order. */

CatchupMessage *
catchup_store_message_from_stmt (sqlite3_stmt *stmt)
{
  CatchupMessage *msg = g_new0 (CatchupMessage, 1);

  msg->row = sqlite3_column_int64 (stmt, 0);
  msg->id = catchup_db_column_text (stmt, 1);
  msg->ts = sqlite3_column_int64 (stmt, 2);
  msg->speaker = catchup_db_column_text (stmt, 3);
  msg->alias = catchup_db_column_text (stmt, 4);
  msg->text = catchup_db_column_text (stmt, 5);
  msg->flags = (guint) sqlite3_column_int64 (stmt, 6);
  return msg;
}

/* Collects every row of a bound message query. */
static GPtrArray *
collect_messages (CatchupStore *store, sqlite3_stmt *stmt, GError **error)
{
  g_autoptr (GPtrArray) msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (msgs, catchup_store_message_from_stmt (stmt));
  if (rc != SQLITE_DONE)
    {
      catchup_db_set_error (catchup_store_db (store), rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_steal_pointer (&msgs);
}

static gboolean
lookup_row (CatchupStore *store, gint64 room, const char *uid, gint64 *row, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (catchup_store_db (store), "SELECT row FROM messages WHERE room = ?1 AND uid = ?2", error);
  gboolean found;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  catchup_db_bind_text (stmt, 2, uid);
  return catchup_db_query_int64 (catchup_store_db (store), stmt, row, &found, error);
}

gboolean
catchup_store_add (CatchupStore *store, gint64 room, CatchupMessage *msg, gboolean *inserted, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = NULL;
  gboolean added;

  g_return_val_if_fail (store != NULL && msg != NULL, FALSE);

  if (inserted)
    *inserted = FALSE;
  if (msg->id == NULL || *msg->id == '\0')
    {
      g_free (msg->id);
      msg->id = catchup_message_derive_id (msg->ts, msg->speaker ? msg->speaker : "", msg->text ? msg->text : "");
    }
  stmt = catchup_db_prepare (catchup_store_db (store),
                                "INSERT INTO messages (room, uid, ts, speaker, alias, body, flags)"
                                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (room, uid) DO NOTHING",
                                error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  catchup_db_bind_text (stmt, 2, msg->id);
  sqlite3_bind_int64 (stmt, 3, msg->ts);
  catchup_db_bind_text (stmt, 4, msg->speaker ? msg->speaker : "");
  catchup_db_bind_text (stmt, 5, msg->alias);
  catchup_db_bind_text (stmt, 6, msg->text ? msg->text : "");
  sqlite3_bind_int64 (stmt, 7, msg->flags);
  if (!catchup_db_step_done (catchup_store_db (store), stmt, error))
    return FALSE;
  added = catchup_db_changes (catchup_store_db (store)) > 0;
  if (inserted)
    *inserted = added;
  if (added)
    {
      msg->row = catchup_db_last_insert_rowid (catchup_store_db (store));
      return TRUE;
    }
  return lookup_row (store, room, msg->id, &msg->row, error);
}

gboolean
catchup_store_add_batch (CatchupStore *store, gint64 room, GPtrArray *msgs, guint *n_inserted, GError **error)
{
  guint count = 0;

  g_return_val_if_fail (store != NULL && msgs != NULL, FALSE);

  if (n_inserted)
    *n_inserted = 0;
  if (!catchup_store_begin (store, error))
    return FALSE;
  for (guint i = 0; i < msgs->len; i++)
    {
      gboolean inserted;

      if (!catchup_store_add (store, room, g_ptr_array_index (msgs, i), &inserted, error))
        {
          catchup_store_rollback (store);
          return FALSE;
        }
      count += inserted;
    }
  if (!catchup_store_commit (store, error))
    return FALSE;
  if (n_inserted)
    *n_inserted = count;
  return TRUE;
}

#define MESSAGE_SELECT "SELECT " CATCHUP_STORE_MESSAGE_COLUMNS " FROM messages"

static CatchupMessage *
single_message (CatchupStore *store, sqlite3_stmt *stmt, const char *what, GError **error)
{
  g_autoptr (GPtrArray) msgs = collect_messages (store, stmt, error);

  if (msgs == NULL)
    return NULL;
  if (msgs->len == 0)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND, _("No message %s in the history"), what);
      return NULL;
    }
  return g_ptr_array_steal_index (msgs, 0);
}

CatchupMessage *
catchup_store_get_message (CatchupStore *store, gint64 room, const char *id, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (catchup_store_db (store), MESSAGE_SELECT " WHERE room = ?1 AND uid = ?2", error);

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, room);
  catchup_db_bind_text (stmt, 2, id);
  return single_message (store, stmt, id, error);
}

CatchupMessage *
catchup_store_get_message_by_row (CatchupStore *store, gint64 row, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = catchup_db_prepare (catchup_store_db (store), MESSAGE_SELECT " WHERE row = ?1", error);
  g_autofree char *what = g_strdup_printf ("#%" G_GINT64_FORMAT, row);

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, row);
  return single_message (store, stmt, what, error);
}

void
catchup_pos_bind (sqlite3_stmt *stmt, int i, const CatchupPos *pos, gint64 open_value)
{
  sqlite3_bind_int64 (stmt, i, pos ? pos->ts : open_value);
  sqlite3_bind_int64 (stmt, i + 1, pos ? pos->row : open_value);
}

GPtrArray *
catchup_store_range (CatchupStore *store, gint64 room, const CatchupPos *first, const CatchupPos *last,
                     guint limit, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (catchup_store_db (store),
                           MESSAGE_SELECT " WHERE room = ?1 AND (ts, row) >= (?2, ?3) AND (ts, row) <= (?4, ?5)"
                                          " ORDER BY ts, row LIMIT ?6",
                           error);

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, room);
  catchup_pos_bind (stmt, 2, first, G_MININT64);
  catchup_pos_bind (stmt, 4, last, G_MAXINT64);
  sqlite3_bind_int64 (stmt, 6, limit ? (gint64) limit : -1);
  return collect_messages (store, stmt, error);
}

static void
reverse_array (GPtrArray *array)
{
  for (guint i = 0, j = array->len; i + 1 < j; i++, j--)
    {
      gpointer tmp = array->pdata[i];
      array->pdata[i] = array->pdata[j - 1];
      array->pdata[j - 1] = tmp;
    }
}

GPtrArray *
catchup_store_before (CatchupStore *store, gint64 room, const CatchupPos *pos, guint n, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (catchup_store_db (store),
                           MESSAGE_SELECT " WHERE room = ?1 AND (ts, row) < (?2, ?3)"
                                          " ORDER BY ts DESC, row DESC LIMIT ?4",
                           error);
  GPtrArray *msgs;

  if (stmt == NULL)
    return NULL;
  if (n == 0)
    return g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  sqlite3_bind_int64 (stmt, 1, room);
  catchup_pos_bind (stmt, 2, pos, G_MAXINT64);
  sqlite3_bind_int64 (stmt, 4, n);
  msgs = collect_messages (store, stmt, error);
  if (msgs)
    reverse_array (msgs);
  return msgs;
}

GPtrArray *
catchup_store_since (CatchupStore *store, gint64 room, gint64 since, GError **error)
{
  CatchupPos first = { since, G_MININT64 };

  return catchup_store_range (store, room, &first, NULL, 0, error);
}

gint64
catchup_store_count (CatchupStore *store, gint64 room, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (catchup_store_db (store), "SELECT count(*) FROM messages WHERE room = ?1", error);
  gint64 n = 0;
  gboolean found;

  if (stmt == NULL)
    return -1;
  sqlite3_bind_int64 (stmt, 1, room);
  return catchup_db_query_int64 (catchup_store_db (store), stmt, &n, &found, error) ? n : -1;
}

/* Turns with ts >= since: what a catch-up window can hold. */
gint64
catchup_store_count_turns (CatchupStore *store, gint64 room, gint64 since, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (catchup_store_db (store), "SELECT count(*) FROM messages WHERE room = ?1 AND ts >= ?2", error);
  gint64 n = 0;
  gboolean found;

  if (stmt == NULL)
    return -1;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, since);
  return catchup_db_query_int64 (catchup_store_db (store), stmt, &n, &found, error) ? n : -1;
}
