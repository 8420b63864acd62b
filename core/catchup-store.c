#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>

#include "catchup-db.h"
#include "catchup-error.h"
#include "catchup-store-private.h"
#include "catchup-text.h"

/* The history database: its schema on one connection. */
struct _CatchupStore {
  CatchupDb *db;
};

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
      catchup_db_set_error (store->db, rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_steal_pointer (&msgs);
}

/* ---------- schema ---------- */

typedef gboolean (*MigrationStep) (CatchupStore *store, GError **error);

static gboolean
migrate_to_v1 (CatchupStore *store, GError **error)
{
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V1, error);
}

static gboolean
migrate_to_v2 (CatchupStore *store, GError **error)
{
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V2, error);
}

static gboolean
migrate_to_v3 (CatchupStore *store, GError **error)
{
  /* the index gives the chunks already there their text hashes as it next updates their room */
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V3, error);
}

/* migrations[i] takes a database from version i to i + 1. */
static gboolean
migrate_to_v4 (CatchupStore *store, GError **error)
{
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V4, error);
}

static gboolean
migrate_to_v5 (CatchupStore *store, GError **error)
{
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V5, error);
}

static gboolean
migrate_to_v6 (CatchupStore *store, GError **error)
{
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V6, error);
}

static const MigrationStep migrations[] = { migrate_to_v1, migrate_to_v2, migrate_to_v3, migrate_to_v4,
                                            migrate_to_v5, migrate_to_v6 };
G_STATIC_ASSERT (G_N_ELEMENTS (migrations) == CATCHUP_STORE_SCHEMA_VERSION);

static gboolean
read_user_version (CatchupStore *store, gint64 *version, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = catchup_db_prepare (store->db, "PRAGMA user_version", error);
  gboolean found;

  *version = 0;
  return stmt != NULL && catchup_db_query_int64 (store->db, stmt, version, &found, error);
}

/* Each step and its version bump commit together, so a crash leaves a database at a known version. */
static gboolean
run_migration (CatchupStore *store, guint from, GError **error)
{
  g_autofree char *bump = g_strdup_printf ("PRAGMA user_version = %u", from + 1);

  if (!catchup_store_begin (store, error))
    return FALSE;
  if (!migrations[from](store, error) || !catchup_db_exec (store->db, bump, error))
    {
      catchup_store_rollback (store);
      return FALSE;
    }
  return catchup_store_commit (store, error);
}

static gboolean
migrate (CatchupStore *store, GError **error)
{
  gint64 version;

  if (!read_user_version (store, &version, error))
    return FALSE;
  if (version > CATCHUP_STORE_SCHEMA_VERSION || version < 0)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_DB,
                   _("The history database %s has schema version %" G_GINT64_FORMAT
                     ", newer than this version of Catch-up understands (%d); please upgrade Catch-up"),
                   catchup_store_get_path (store), version, CATCHUP_STORE_SCHEMA_VERSION);
      return FALSE;
    }
  for (guint v = (guint) version; v < CATCHUP_STORE_SCHEMA_VERSION; v++)
    if (!run_migration (store, v, error))
      return FALSE;
  return TRUE;
}

/* ---------- open / close ---------- */

CatchupStore *
catchup_store_open (const char *path, GError **error)
{
  g_autoptr (CatchupStore) store = NULL;
  CatchupDb *db;

  g_return_val_if_fail (path != NULL, NULL);

  if ((db = catchup_db_open (path, error)) == NULL)
    return NULL;
  store = g_new0 (CatchupStore, 1);
  store->db = db;
  if (!migrate (store, error))
    {
      g_prefix_error (error, _("Could not open the history database %s: "), path);
      return NULL;
    }
  return g_steal_pointer (&store);
}

void
catchup_store_close (CatchupStore *store)
{
  if (store == NULL)
    return;
  g_clear_pointer (&store->db, catchup_db_close);
  g_free (store);
}

CatchupDb *
catchup_store_db (CatchupStore *store)
{
  g_return_val_if_fail (store != NULL, NULL);
  return store->db;
}

const char *
catchup_store_get_path (CatchupStore *store)
{
  g_return_val_if_fail (store != NULL, NULL);
  return catchup_db_get_path (store->db);
}

void
catchup_store_hand_over (CatchupStore *store)
{
  g_return_if_fail (store != NULL);
  catchup_db_hand_over (store->db);
}

void
catchup_store_take_over (CatchupStore *store)
{
  g_return_if_fail (store != NULL);
  catchup_db_take_over (store->db);
}

/* ---------- transactions, interruption: the connection's ---------- */

gboolean
catchup_store_begin (CatchupStore *store, GError **error)
{
  g_return_val_if_fail (store != NULL, FALSE);
  return catchup_db_begin (store->db, error);
}

gboolean
catchup_store_commit (CatchupStore *store, GError **error)
{
  g_return_val_if_fail (store != NULL, FALSE);
  return catchup_db_commit (store->db, error);
}

void
catchup_store_rollback (CatchupStore *store)
{
  g_return_if_fail (store != NULL);
  catchup_db_rollback (store->db);
}

gboolean
catchup_store_in_transaction (CatchupStore *store)
{
  g_return_val_if_fail (store != NULL, FALSE);
  return catchup_db_in_transaction (store->db);
}

void
catchup_store_set_abort (CatchupStore *store, GCancellable *abort)
{
  g_return_if_fail (store != NULL);
  catchup_db_set_abort (store->db, abort);
}

void
catchup_store_set_cancellable (CatchupStore *store, GCancellable *cancellable)
{
  g_return_if_fail (store != NULL);
  catchup_db_set_cancellable (store->db, cancellable);
}

void
catchup_store_set_busy_timeout (CatchupStore *store, guint timeout_ms)
{
  g_return_if_fail (store != NULL);
  catchup_db_set_busy_timeout (store->db, timeout_ms);
}

/* ---------- rooms ---------- */

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

  insert = catchup_db_prepare (store->db,
                                  "INSERT INTO rooms (protocol, account, name) VALUES (?1, ?2, ?3)"
                                  " ON CONFLICT (protocol, account, name) DO NOTHING",
                                  error);
  if (insert == NULL)
    return 0;
  catchup_db_bind_text (insert, 1, protocol);
  catchup_db_bind_text (insert, 2, account);
  catchup_db_bind_text (insert, 3, name);
  if (!catchup_db_step_done (store->db, insert, error))
    return 0;
  select = catchup_db_prepare (store->db, "SELECT id FROM rooms WHERE protocol = ?1 AND account = ?2 AND name = ?3",
                                  error);
  if (select == NULL)
    return 0;
  catchup_db_bind_text (select, 1, protocol);
  catchup_db_bind_text (select, 2, account);
  catchup_db_bind_text (select, 3, name);
  if (!catchup_db_query_int64 (store->db, select, &id, &found, error))
    return 0;
  return id;
}

/* Ids of the rooms matching a query with one text parameter; "spec" is kept for the ambiguity message. */
static GArray *
matching_rooms (CatchupStore *store, const char *sql, const char *spec, GString *names, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = catchup_db_prepare (store->db, sql, error);
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
      catchup_db_set_error (store->db, rc, error, _("Could not read the history database"));
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
      catchup_db_set_error (store->db, rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_steal_pointer (&rooms);
}

CatchupRoomInfo *
catchup_store_room_info (CatchupStore *store, gint64 room, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = catchup_db_prepare (store->db, ROOM_INFO_SELECT " WHERE r.id = ?1", error);
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
    catchup_db_prepare (store->db, ROOM_INFO_SELECT " ORDER BY r.protocol, r.account, r.name", error);

  return stmt ? collect_room_infos (store, stmt, error) : NULL;
}

gboolean
catchup_store_set_last_present (CatchupStore *store, gint64 room, gint64 ts, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (store->db, "UPDATE rooms SET last_present = ?2 WHERE id = ?1", error);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, ts);
  if (!catchup_db_step_done (store->db, stmt, error))
    return FALSE;
  if (catchup_db_changes (store->db) == 0)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND, _("No room with id %" G_GINT64_FORMAT), room);
      return FALSE;
    }
  return TRUE;
}

/* ---------- messages ---------- */

static gboolean
lookup_row (CatchupStore *store, gint64 room, const char *uid, gint64 *row, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (store->db, "SELECT row FROM messages WHERE room = ?1 AND uid = ?2", error);
  gboolean found;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  catchup_db_bind_text (stmt, 2, uid);
  return catchup_db_query_int64 (store->db, stmt, row, &found, error);
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
  stmt = catchup_db_prepare (store->db,
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
  if (!catchup_db_step_done (store->db, stmt, error))
    return FALSE;
  added = catchup_db_changes (store->db) > 0;
  if (inserted)
    *inserted = added;
  if (added)
    {
      msg->row = catchup_db_last_insert_rowid (store->db);
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
    catchup_db_prepare (store->db, MESSAGE_SELECT " WHERE room = ?1 AND uid = ?2", error);

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, room);
  catchup_db_bind_text (stmt, 2, id);
  return single_message (store, stmt, id, error);
}

CatchupMessage *
catchup_store_get_message_by_row (CatchupStore *store, gint64 row, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = catchup_db_prepare (store->db, MESSAGE_SELECT " WHERE row = ?1", error);
  g_autofree char *what = g_strdup_printf ("#%" G_GINT64_FORMAT, row);

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, row);
  return single_message (store, stmt, what, error);
}

static void
bind_pos (sqlite3_stmt *stmt, int i, const CatchupPos *pos, gint64 open_value)
{
  sqlite3_bind_int64 (stmt, i, pos ? pos->ts : open_value);
  sqlite3_bind_int64 (stmt, i + 1, pos ? pos->row : open_value);
}

GPtrArray *
catchup_store_range (CatchupStore *store, gint64 room, const CatchupPos *first, const CatchupPos *last,
                     guint limit, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (store->db,
                           MESSAGE_SELECT " WHERE room = ?1 AND (ts, row) >= (?2, ?3) AND (ts, row) <= (?4, ?5)"
                                          " ORDER BY ts, row LIMIT ?6",
                           error);

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, room);
  bind_pos (stmt, 2, first, G_MININT64);
  bind_pos (stmt, 4, last, G_MAXINT64);
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
    catchup_db_prepare (store->db,
                           MESSAGE_SELECT " WHERE room = ?1 AND (ts, row) < (?2, ?3)"
                                          " ORDER BY ts DESC, row DESC LIMIT ?4",
                           error);
  GPtrArray *msgs;

  if (stmt == NULL)
    return NULL;
  if (n == 0)
    return g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  sqlite3_bind_int64 (stmt, 1, room);
  bind_pos (stmt, 2, pos, G_MAXINT64);
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
    catchup_db_prepare (store->db, "SELECT count(*) FROM messages WHERE room = ?1", error);
  gint64 n = 0;
  gboolean found;

  if (stmt == NULL)
    return -1;
  sqlite3_bind_int64 (stmt, 1, room);
  return catchup_db_query_int64 (store->db, stmt, &n, &found, error) ? n : -1;
}

/* Conversational turns (no join, part or nick-change rows) with ts >= since: what a catch-up window can hold. */
gint64
catchup_store_count_turns (CatchupStore *store, gint64 room, gint64 since, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (store->db, "SELECT count(*) FROM messages WHERE room = ?1 AND ts >= ?2 AND (flags & ?3) = 0",
                           error);
  gint64 n = 0;
  gboolean found;

  if (stmt == NULL)
    return -1;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, since);
  sqlite3_bind_int64 (stmt, 3, CATCHUP_MESSAGE_EVENT);
  return catchup_db_query_int64 (store->db, stmt, &n, &found, error) ? n : -1;
}

/* ---------- settings, nicks, events ---------- */

char *
catchup_store_get_setting (CatchupStore *store, gint64 room, const char *key, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (store->db, "SELECT value FROM room_settings WHERE room = ?1 AND key = ?2", error);
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, room);
  catchup_db_bind_text (stmt, 2, key);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    return catchup_db_column_text (stmt, 0);
  if (rc != SQLITE_DONE)
    catchup_db_set_error (store->db, rc, error, _("Could not read the history database"));
  return NULL;
}

gboolean
catchup_store_set_setting (CatchupStore *store, gint64 room, const char *key, const char *value, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = NULL;

  g_return_val_if_fail (key != NULL, FALSE);

  if (value == NULL)
    stmt = catchup_db_prepare (store->db, "DELETE FROM room_settings WHERE room = ?1 AND key = ?2", error);
  else
    stmt = catchup_db_prepare (store->db,
                                  "INSERT INTO room_settings (room, key, value) VALUES (?1, ?2, ?3)"
                                  " ON CONFLICT (room, key) DO UPDATE SET value = excluded.value",
                                  error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  catchup_db_bind_text (stmt, 2, key);
  if (value != NULL)
    catchup_db_bind_text (stmt, 3, value);
  return catchup_db_step_done (store->db, stmt, error);
}

gboolean
catchup_store_add_event (CatchupStore *store, gint64 room, gint64 ts, CatchupRoomEventKind kind,
                         const char *nick, const char *detail, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (store->db,
                           "INSERT INTO room_events (room, ts, kind, nick, detail) VALUES (?1, ?2, ?3, ?4, ?5)"
                           " ON CONFLICT DO NOTHING",
                           error);

  g_return_val_if_fail (nick != NULL, FALSE);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, ts);
  sqlite3_bind_int64 (stmt, 3, kind);
  catchup_db_bind_text (stmt, 4, nick);
  catchup_db_bind_text (stmt, 5, detail ? detail : "");
  return catchup_db_step_done (store->db, stmt, error);
}

gboolean
catchup_store_add_nick_change (CatchupStore *store, gint64 room, gint64 ts, const char *old_nick,
                               const char *new_nick, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (store->db,
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
  return catchup_db_step_done (store->db, stmt, error);
}

char *
catchup_store_current_nick (CatchupStore *store, gint64 room, const char *nick, gint64 since, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt =
    catchup_db_prepare (store->db,
                           "SELECT old_nick, new_nick FROM nicks WHERE room = ?1 AND ts >= ?2"
                           " ORDER BY ts, rowid",
                           error);
  g_autofree char *current = g_strdup (nick);
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, since);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    if (g_strcmp0 ((const char *) sqlite3_column_text (stmt, 0), current) == 0)
      {
        g_free (current);
        current = catchup_db_column_text (stmt, 1);
      }
  if (rc != SQLITE_DONE)
    {
      catchup_db_set_error (store->db, rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_steal_pointer (&current);
}
