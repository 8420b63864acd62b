#include "config.h"

#include <glib/gi18n-lib.h>

#include "catchup-error.h"
#include "catchup-store-private.h"

/* Per-room settings: key/value text kept with the room and removed with it. */

char *
catchup_store_get_setting (CatchupStore *store, gint64 room, const char *key, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (catchup_store_db (store), "SELECT value FROM room_settings WHERE room = ?1 AND key = ?2", error);
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, room);
  catchup_db_bind_text (stmt, 2, key);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    return catchup_db_column_text (stmt, 0);
  if (rc != SQLITE_DONE)
    catchup_db_set_error (catchup_store_db (store), rc, error, _("Could not read the history database"));
  return NULL;
}

gboolean
catchup_store_set_setting (CatchupStore *store, gint64 room, const char *key, const char *value, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = NULL;

  g_return_val_if_fail (key != NULL, FALSE);

  if (value == NULL)
    stmt = catchup_db_prepare (catchup_store_db (store), "DELETE FROM room_settings WHERE room = ?1 AND key = ?2", error);
  else
    stmt = catchup_db_prepare (catchup_store_db (store),
                                  "INSERT INTO room_settings (room, key, value) VALUES (?1, ?2, ?3)"
                                  " ON CONFLICT (room, key) DO UPDATE SET value = excluded.value",
                                  error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  catchup_db_bind_text (stmt, 2, key);
  if (value != NULL)
    catchup_db_bind_text (stmt, 3, value);
  return catchup_db_step_done (catchup_store_db (store), stmt, error);
}
