#include "config.h"

#include <glib/gi18n-lib.h>

#include "catchup-error.h"
#include "catchup-store-private.h"

/* The store's rooms: created on first use, found by name or full name, listed with their message counts. */

void
catchup_room_info_free (CatchupRoomInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->protocol);
  g_free (info->account);
  g_free (info->name);
  g_free (info);
}

gint64
catchup_store_ensure_room (CatchupStore *store, const char *protocol, const char *account, const char *name,
                           GError **error)
{
  g_autoptr (CatchupDbStmt) insert = NULL;
  g_autoptr (CatchupDbStmt) select = NULL;
  gint64 id = 0;
  gboolean found;

  g_return_val_if_fail (store != NULL && protocol != NULL && account != NULL && name != NULL, 0);

  insert = catchup_db_prepare (catchup_store_db (store),
                                  "INSERT INTO rooms (protocol, account, name) VALUES (?1, ?2, ?3)"
                                  " ON CONFLICT (protocol, account, name) DO NOTHING",
                                  error);
  if (insert == NULL)
    return 0;
  catchup_db_bind_text (insert, 1, protocol);
  catchup_db_bind_text (insert, 2, account);
  catchup_db_bind_text (insert, 3, name);
  if (!catchup_db_step_done (catchup_store_db (store), insert, error))
    return 0;
  select = catchup_db_prepare (catchup_store_db (store), "SELECT id FROM rooms WHERE protocol = ?1 AND account = ?2 AND name = ?3",
                                  error);
  if (select == NULL)
    return 0;
  catchup_db_bind_text (select, 1, protocol);
  catchup_db_bind_text (select, 2, account);
  catchup_db_bind_text (select, 3, name);
  if (!catchup_db_query_int64 (catchup_store_db (store), select, &id, &found, error))
    return 0;
  return id;
}

/* Ids of the rooms matching a query with one text parameter; "spec" is kept for the ambiguity message. */
static GArray *
matching_rooms (CatchupStore *store, const char *sql, const char *spec, GString *names, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = catchup_db_prepare (catchup_store_db (store), sql, error);
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  int rc;

  if (stmt == NULL)
    return NULL;
  catchup_db_bind_text (stmt, 1, spec);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (stmt, 0);
      g_array_append_val (ids, id);
      g_string_append_printf (names, "%s%s", names->len ? ", " : "", (const char *) sqlite3_column_text (stmt, 1));
    }
  if (rc != SQLITE_DONE)
    {
      catchup_db_set_error (catchup_store_db (store), rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_steal_pointer (&ids);
}

#define ROOM_FULL_NAME "protocol || '/' || account || '/' || name"

gint64
catchup_store_find_room (CatchupStore *store, const char *spec, GError **error)
{
  /* The full form first: accounts and room names may themselves contain '/' (XMPP resources). */
  static const char *const queries[] = {
    "SELECT id, " ROOM_FULL_NAME " FROM rooms WHERE " ROOM_FULL_NAME " = ?1 ORDER BY id",
    "SELECT id, " ROOM_FULL_NAME " FROM rooms WHERE name = ?1 ORDER BY id",
  };

  g_return_val_if_fail (store != NULL && spec != NULL, 0);

  for (guint i = 0; i < G_N_ELEMENTS (queries); i++)
    {
      g_autoptr (GString) names = g_string_new (NULL);
      g_autoptr (GArray) ids = matching_rooms (store, queries[i], spec, names, error);

      if (ids == NULL)
        return 0;
      if (ids->len == 1)
        return g_array_index (ids, gint64, 0);
      if (ids->len > 1)
        {
          g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_AMBIGUOUS,
                       _("The room name “%s” matches several rooms (%s); give it as protocol/account/name"), spec,
                       names->str);
          return 0;
        }
    }
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND, _("No room “%s” in the history"), spec);
  return 0;
}

#define ROOM_INFO_SELECT \
  "SELECT r.id, r.protocol, r.account, r.name, r.last_present," \
  " (SELECT count(*) FROM messages m WHERE m.room = r.id)," \
  " (SELECT min(ts) FROM messages m WHERE m.room = r.id)," \
  " (SELECT max(ts) FROM messages m WHERE m.room = r.id)" \
  " FROM rooms r"

static CatchupRoomInfo *
room_info_from_stmt (sqlite3_stmt *stmt)
{
  CatchupRoomInfo *info = g_new0 (CatchupRoomInfo, 1);

  info->id = sqlite3_column_int64 (stmt, 0);
  info->protocol = catchup_db_column_text (stmt, 1);
  info->account = catchup_db_column_text (stmt, 2);
  info->name = catchup_db_column_text (stmt, 3);
  info->last_present = sqlite3_column_int64 (stmt, 4);
  info->n_messages = sqlite3_column_int64 (stmt, 5);
  info->first_ts = sqlite3_column_int64 (stmt, 6); /* NULL (no messages) reads as 0 */
  info->last_ts = sqlite3_column_int64 (stmt, 7);
  return info;
}

static GPtrArray *
collect_room_infos (CatchupStore *store, sqlite3_stmt *stmt, GError **error)
{
  g_autoptr (GPtrArray) rooms = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_room_info_free);
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (rooms, room_info_from_stmt (stmt));
  if (rc != SQLITE_DONE)
    {
      catchup_db_set_error (catchup_store_db (store), rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_steal_pointer (&rooms);
}

CatchupRoomInfo *
catchup_store_room_info (CatchupStore *store, gint64 room, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = catchup_db_prepare (catchup_store_db (store), ROOM_INFO_SELECT " WHERE r.id = ?1", error);
  g_autoptr (GPtrArray) rooms = NULL;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, room);
  rooms = collect_room_infos (store, stmt, error);
  if (rooms == NULL)
    return NULL;
  if (rooms->len == 0)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND, _("No room with id %" G_GINT64_FORMAT), room);
      return NULL;
    }
  return g_ptr_array_steal_index (rooms, 0);
}

GPtrArray *
catchup_store_list_rooms (CatchupStore *store, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (catchup_store_db (store), ROOM_INFO_SELECT " ORDER BY r.protocol, r.account, r.name", error);

  return stmt ? collect_room_infos (store, stmt, error) : NULL;
}

gboolean
catchup_store_set_last_present (CatchupStore *store, gint64 room, gint64 ts, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (catchup_store_db (store), "UPDATE rooms SET last_present = ?2 WHERE id = ?1", error);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, ts);
  if (!catchup_db_step_done (catchup_store_db (store), stmt, error))
    return FALSE;
  if (catchup_db_changes (catchup_store_db (store)) == 0)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND, _("No room with id %" G_GINT64_FORMAT), room);
      return FALSE;
    }
  return TRUE;
}
