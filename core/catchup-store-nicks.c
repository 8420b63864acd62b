#include "config.h"

#include "catchup-error.h"
#include "catchup-store-private.h"

/* Nick changes of a room: stored beside the messages, never turns of the conversation (catchup-nicks.h reads
 * them as people). */

gboolean
catchup_store_add_nick_change (CatchupStore *store, gint64 room, gint64 ts, const char *old_nick,
                               const char *new_nick, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (catchup_store_db (store),
                           "INSERT INTO nicks (room, ts, old_nick, new_nick) VALUES (?1, ?2, ?3, ?4)"
                           " ON CONFLICT DO NOTHING",
                           error);

  g_return_val_if_fail (old_nick != NULL && new_nick != NULL, FALSE);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, ts);
  catchup_db_bind_text (stmt, 3, old_nick);
  catchup_db_bind_text (stmt, 4, new_nick);
  return catchup_db_step_done (catchup_store_db (store), stmt, error);
}
