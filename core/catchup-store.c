#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>

#include "catchup-error.h"
#include "catchup-store-private.h"
#include "catchup-text.h"

#define BUSY_TIMEOUT_MS 5000
#define BUSY_STEP_MS 10
/* A store is one connection owned by one thread at a time (catchup-store.h), which is exactly SQLite's
 * multi-thread mode: the per-connection mutexes guard nothing and cost every step a lock and an unlock. */
#define STORE_OPEN_THREADING SQLITE_OPEN_NOMUTEX
/* VM instructions between two checks for an abort: well under a millisecond. */
#define PROGRESS_STEPS 10000
/* Enough terms for any chat question; keeps a pasted 100 KB line from becoming a 10,000-term query. */
#define SEARCH_MAX_TERMS 64

/* ---------- errors, statements ---------- */

static int
error_code_of (int rc)
{
  switch (rc & 0xff)
    {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return CATCHUP_ERROR_DB_BUSY;
    case SQLITE_FULL:
      return CATCHUP_ERROR_DB_FULL;
    case SQLITE_IOERR:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_NOMEM:
    case SQLITE_PROTOCOL:
      return CATCHUP_ERROR_DB_IO;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return CATCHUP_ERROR_DB_CORRUPT;
    default:
      return CATCHUP_ERROR_DB;
    }
}

void
catchup_store_set_error (CatchupStore *store, int rc, GError **error, const char *what)
{
  const char *detail = sqlite3_errstr (rc);

  if (store != NULL)
    store->last_rc = rc;
  /* An interrupt is our own abort or cancellable: report it as the one cancellation code. */
  if ((rc & 0xff) == SQLITE_INTERRUPT)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "%s: %s", what, detail);
      return;
    }

  /* The connection's message is more precise ("no such table: x"), but only when it is about this rc. */
  if (store != NULL && store->db != NULL && (sqlite3_errcode (store->db) & 0xff) == (rc & 0xff))
    detail = sqlite3_errmsg (store->db);
  g_set_error (error, CATCHUP_ERROR, error_code_of (rc), "%s: %s", what, detail);
}

sqlite3_stmt *
catchup_store_prepare (CatchupStore *store, const char *sql, GError **error)
{
  sqlite3_stmt *stmt = g_hash_table_lookup (store->stmts, sql);
  int rc;

  if (stmt != NULL)
    {
      sqlite3_reset (stmt);
      sqlite3_clear_bindings (stmt);
      return stmt;
    }
  rc = sqlite3_prepare_v2 (store->db, sql, -1, &stmt, NULL);
  if (rc != SQLITE_OK)
    {
      catchup_store_set_error (store, rc, error, _("Could not prepare a database query"));
      return NULL;
    }
  g_hash_table_insert (store->stmts, g_strdup (sql), stmt);
  return stmt;
}

gboolean
catchup_store_exec (CatchupStore *store, const char *sql, GError **error)
{
  int rc = sqlite3_exec (store->db, sql, NULL, NULL, NULL);

  if (rc != SQLITE_OK)
    {
      catchup_store_set_error (store, rc, error, _("Database command failed"));
      return FALSE;
    }
  return TRUE;
}

/* Steps a statement that returns no rows (or whose rows do not matter). */
gboolean
catchup_store_step_done (CatchupStore *store, sqlite3_stmt *stmt, GError **error)
{
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    ;
  if (rc != SQLITE_DONE)
    {
      catchup_store_set_error (store, rc, error, _("Could not write to the history database"));
      return FALSE;
    }
  return TRUE;
}

static void
bind_text (sqlite3_stmt *stmt, int i, const char *text)
{
  if (text == NULL)
    sqlite3_bind_null (stmt, i);
  else
    sqlite3_bind_text (stmt, i, text, -1, SQLITE_TRANSIENT);
}

/* A text column as valid UTF-8: older versions stored live messages unchecked, and another program may write
 * the file; the regex engines and GLib's UTF-8 functions behind every reader assume valid text. */
static char *
column_strdup (sqlite3_stmt *stmt, int i)
{
  const char *text = (const char *) sqlite3_column_text (stmt, i);
  int len = sqlite3_column_bytes (stmt, i);

  if (text == NULL)
    return NULL;
  if (g_utf8_validate_len (text, (gsize) len, NULL))
    return g_strndup (text, (gsize) len);
  return g_utf8_make_valid (text, len);
}

CatchupMessage *
catchup_store_message_from_stmt (sqlite3_stmt *stmt)
{
  CatchupMessage *msg = g_new0 (CatchupMessage, 1);

  msg->row = sqlite3_column_int64 (stmt, 0);
  msg->id = column_strdup (stmt, 1);
  msg->ts = sqlite3_column_int64 (stmt, 2);
  msg->speaker = column_strdup (stmt, 3);
  msg->alias = column_strdup (stmt, 4);
  msg->text = column_strdup (stmt, 5);
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
      catchup_store_set_error (store, rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_steal_pointer (&msgs);
}

/* Runs a query returning one integer; FALSE with error on failure, *found = FALSE when there is no row. */
gboolean
catchup_store_query_int64 (CatchupStore *store, sqlite3_stmt *stmt, gint64 *out, gboolean *found, GError **error)
{
  int rc = sqlite3_step (stmt);

  *found = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW)
    *out = sqlite3_column_int64 (stmt, 0);
  else if (rc != SQLITE_DONE)
    {
      catchup_store_set_error (store, rc, error, _("Could not read the history database"));
      return FALSE;
    }
  return TRUE;
}

/* ---------- schema ---------- */

typedef gboolean (*MigrationStep) (CatchupStore *store, GError **error);

static gboolean
migrate_to_v1 (CatchupStore *store, GError **error)
{
  return catchup_store_exec (store, CATCHUP_STORE_SCHEMA_V1, error);
}

static gboolean
migrate_to_v2 (CatchupStore *store, GError **error)
{
  return catchup_store_exec (store, CATCHUP_STORE_SCHEMA_V2, error);
}

static gboolean
migrate_to_v3 (CatchupStore *store, GError **error)
{
  /* the index gives the chunks already there their text hashes as it next updates their room */
  return catchup_store_exec (store, CATCHUP_STORE_SCHEMA_V3, error);
}

/* migrations[i] takes a database from version i to i + 1. */
static gboolean
migrate_to_v4 (CatchupStore *store, GError **error)
{
  return catchup_store_exec (store, CATCHUP_STORE_SCHEMA_V4, error);
}

static gboolean
migrate_to_v5 (CatchupStore *store, GError **error)
{
  return catchup_store_exec (store, CATCHUP_STORE_SCHEMA_V5, error);
}

static gboolean
migrate_to_v6 (CatchupStore *store, GError **error)
{
  return catchup_store_exec (store, CATCHUP_STORE_SCHEMA_V6, error);
}

static const MigrationStep migrations[] = { migrate_to_v1, migrate_to_v2, migrate_to_v3, migrate_to_v4,
                                            migrate_to_v5, migrate_to_v6 };
G_STATIC_ASSERT (G_N_ELEMENTS (migrations) == CATCHUP_STORE_SCHEMA_VERSION);

static gboolean
read_user_version (CatchupStore *store, gint64 *version, GError **error)
{
  g_autoptr (CatchupStmtRef) stmt = catchup_store_prepare (store, "PRAGMA user_version", error);
  gboolean found;

  *version = 0;
  return stmt != NULL && catchup_store_query_int64 (store, stmt, version, &found, error);
}

/* Each step and its version bump commit together, so a crash leaves a database at a known version. */
static gboolean
run_migration (CatchupStore *store, guint from, GError **error)
{
  g_autofree char *bump = g_strdup_printf ("PRAGMA user_version = %u", from + 1);

  if (!catchup_store_begin (store, error))
    return FALSE;
  if (!migrations[from](store, error) || !catchup_store_exec (store, bump, error))
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
                   store->path, version, CATCHUP_STORE_SCHEMA_VERSION);
      return FALSE;
    }
  for (guint v = (guint) version; v < CATCHUP_STORE_SCHEMA_VERSION; v++)
    if (!run_migration (store, v, error))
      return FALSE;
  return TRUE;
}

/* ---------- interruption ---------- */

static gboolean
is_cancelled (const CatchupStore *store)
{
  return g_cancellable_is_cancelled (store->abort) || g_cancellable_is_cancelled (store->cancellable);
}

gboolean
catchup_store_check_cancelled (CatchupStore *store, GError **error)
{
  if (!is_cancelled (store))
    return FALSE;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Operation was cancelled"));
  return TRUE;
}

/* Runs every few thousand VM steps of any statement: a long prune or index rebuild stops when asked to. */
static int
progress_cb (void *data)
{
  return is_cancelled (data);
}

/* Waits for a lock in short steps, so that an abort does not sit out the whole timeout. */
static int
busy_cb (void *data, int count)
{
  CatchupStore *store = data;

  if (is_cancelled (store) || (guint) count * BUSY_STEP_MS >= store->busy_timeout_ms)
    return 0;
  g_usleep (BUSY_STEP_MS * 1000);
  return 1;
}

void
catchup_store_set_abort (CatchupStore *store, GCancellable *abort)
{
  g_return_if_fail (store != NULL);
  g_set_object (&store->abort, abort);
}

void
catchup_store_set_cancellable (CatchupStore *store, GCancellable *cancellable)
{
  g_return_if_fail (store != NULL);
  g_set_object (&store->cancellable, cancellable);
}

void
catchup_store_set_busy_timeout (CatchupStore *store, guint timeout_ms)
{
  g_return_if_fail (store != NULL);
  store->busy_timeout_ms = timeout_ms;
}

/* ---------- open / close ---------- */

static gboolean
is_memory_path (const char *path)
{
  return strcmp (path, ":memory:") == 0 || strcmp (path, "") == 0 || g_str_has_prefix (path, "file:");
}

static gboolean
ensure_parent (const char *path, GError **error)
{
  g_autofree char *dir = NULL;
  int saved;

  if (is_memory_path (path))
    return TRUE;
  dir = g_path_get_dirname (path);
  if (g_mkdir_with_parents (dir, 0700) == 0)
    return TRUE;
  saved = errno;
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_IO, _("Could not create the folder %s: %s"), dir,
               g_strerror (saved));
  return FALSE;
}

static gboolean
configure_connection (CatchupStore *store, GError **error)
{
  store->busy_timeout_ms = BUSY_TIMEOUT_MS;
  sqlite3_busy_handler (store->db, busy_cb, store);
  sqlite3_progress_handler (store->db, PROGRESS_STEPS, progress_cb, store);
  /* journal_mode is the first statement that reads the file: a non-database fails here with NOTADB. */
  return catchup_store_exec (store,
                             "PRAGMA journal_mode = WAL;"
                             "PRAGMA synchronous = NORMAL;"
                             "PRAGMA foreign_keys = ON;"
                             /* retrieval scans every chunk vector of a room: mapped pages spare a copy each */
                             "PRAGMA mmap_size = 268435456;",
                             error);
}

/* Whether the connection failed for want of write access (the file, or the folder WAL keeps its -shm and -wal
 * files in), not because the file is no database. */
static gboolean
failed_read_only (CatchupStore *store)
{
  int rc = sqlite3_errcode (store->db);

  return rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN || sqlite3_db_readonly (store->db, "main") == 1;
}

/* A history that this user may read but not write (a read-only folder, a file of someone else's) is opened
 * read-only; when SQLite cannot read a WAL database without creating its -shm file, as immutable: nothing can
 * change it while neither the file nor its folder may be written. */
static gboolean
open_read_only (CatchupStore *store, GError **error)
{
  static const char *const options[] = { "?mode=ro", "?mode=ro&immutable=1" };
  g_autofree char *absolute = g_canonicalize_filename (store->path, NULL);
  g_autofree char *base = g_filename_to_uri (absolute, NULL, NULL);

  for (guint i = 0; base != NULL && i < G_N_ELEMENTS (options); i++)
    {
      g_autofree char *uri = g_strconcat (base, options[i], NULL);
      int rc;

      g_clear_error (error);
      sqlite3_close (store->db);
      store->db = NULL;
      rc = sqlite3_open_v2 (uri, &store->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | STORE_OPEN_THREADING, NULL);
      if (rc != SQLITE_OK)
        {
          catchup_store_set_error (store, rc, error, _("Could not open the history database read-only"));
          continue;
        }
      sqlite3_extended_result_codes (store->db, 0);
      sqlite3_busy_timeout (store->db, BUSY_TIMEOUT_MS);
      if (catchup_store_exec (store, "SELECT count(*) FROM sqlite_master", error))
        return TRUE;
    }
  return FALSE;
}

CatchupStore *
catchup_store_open (const char *path, GError **error)
{
  g_autoptr (GError) rw_error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  int rc;

  g_return_val_if_fail (path != NULL, NULL);

  if (!ensure_parent (path, error))
    return NULL;
  store = g_new0 (CatchupStore, 1);
  store->path = g_strdup (path);
  store->stmts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) sqlite3_finalize);
  rc = sqlite3_open_v2 (path, &store->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI | STORE_OPEN_THREADING, NULL);
  if (rc != SQLITE_OK)
    {
      g_autofree char *what = g_strdup_printf (_("Could not open the history database %s"), path);
      catchup_store_set_error (store, rc, error, what);
      return NULL;
    }
  sqlite3_extended_result_codes (store->db, 0);
  if (!configure_connection (store, &rw_error))
    {
      if (is_memory_path (path) || !failed_read_only (store) || !open_read_only (store, error))
        {
          if (error != NULL && *error == NULL)
            g_propagate_error (error, g_steal_pointer (&rw_error));
          g_prefix_error (error, _("Could not open the history database %s: "), path);
          return NULL;
        }
      g_debug ("history database %s opened read-only: %s", path, rw_error->message);
    }
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
  if (store->txn_depth > 0 && catchup_store_in_transaction (store))
    {
      g_warning ("history store closed inside a transaction; rolling back");
      sqlite3_exec (store->db, "ROLLBACK", NULL, NULL, NULL);
    }
  g_clear_object (&store->abort);
  g_clear_object (&store->cancellable);
  /* Statements first: sqlite3_close refuses a connection with live statements. */
  g_clear_pointer (&store->stmts, g_hash_table_unref);
  g_clear_pointer (&store->rosters, g_hash_table_unref);
  g_datalist_clear (&store->data);
  if (store->db != NULL)
    sqlite3_close (store->db);
  g_free (store->path);
  g_free (store);
}

gpointer
catchup_store_get_data (CatchupStore *store, const char *key)
{
  return g_datalist_get_data (&store->data, key);
}

void
catchup_store_set_data (CatchupStore *store, const char *key, gpointer data, GDestroyNotify destroy)
{
  g_datalist_set_data_full (&store->data, key, data, destroy);
}

const char *
catchup_store_get_path (CatchupStore *store)
{
  g_return_val_if_fail (store != NULL, NULL);
  return store->path;
}

/* ---------- transactions ---------- */

/* Nested levels are savepoints, so an inner failure undoes only its own part: a writer that keeps going after
 * one room's batch failed commits the others. */
static gboolean
exec_level (CatchupStore *store, const char *verb, guint depth, GError **error)
{
  g_autofree char *sql = g_strdup_printf ("%s catchup_%u", verb, depth);

  return catchup_store_exec (store, sql, error);
}

gboolean
catchup_store_in_transaction (CatchupStore *store)
{
  g_return_val_if_fail (store != NULL, FALSE);
  return !sqlite3_get_autocommit (store->db);
}

/* SQLite ends a transaction by itself after some errors (FULL, IOERR, NOMEM, an interrupt): the levels
 * counted here are gone then, and a SAVEPOINT would silently start a new transaction. */
static gboolean
transaction_lost (CatchupStore *store, GError **error)
{
  if (store->txn_depth == 0 || catchup_store_in_transaction (store))
    return FALSE;
  catchup_store_set_error (store, store->last_rc != SQLITE_OK ? store->last_rc : SQLITE_ERROR, error,
                           _("The database ended the transaction after an error; nothing of it was written"));
  return TRUE;
}

gboolean
catchup_store_begin (CatchupStore *store, GError **error)
{
  g_return_val_if_fail (store != NULL, FALSE);

  if (store->txn_depth == 0)
    {
      /* IMMEDIATE takes the write lock now: a deferred transaction that later upgrades can fail with BUSY
       * without waiting for the busy timeout. */
      if (!catchup_store_exec (store, "BEGIN IMMEDIATE", error))
        return FALSE;
    }
  else if (transaction_lost (store, error) || !exec_level (store, "SAVEPOINT", store->txn_depth, error))
    return FALSE;
  store->txn_depth++;
  return TRUE;
}

gboolean
catchup_store_commit (CatchupStore *store, GError **error)
{
  g_return_val_if_fail (store != NULL, FALSE);
  g_return_val_if_fail (store->txn_depth > 0, FALSE);

  if (transaction_lost (store, error))
    {
      store->txn_depth--;
      return FALSE;
    }
  if (--store->txn_depth > 0)
    {
      if (exec_level (store, "RELEASE", store->txn_depth, error))
        return TRUE;
      /* the level stays open in SQLite: undo it so the outer levels can still commit or roll back */
      exec_level (store, "ROLLBACK TO", store->txn_depth, NULL);
      exec_level (store, "RELEASE", store->txn_depth, NULL);
      return FALSE;
    }
  if (catchup_store_exec (store, "COMMIT", error))
    return TRUE;
  /* A failed COMMIT may have ended the transaction already (FULL, IOERR) or left it open (BUSY): roll back
   * only what is still there. */
  if (catchup_store_in_transaction (store))
    sqlite3_exec (store->db, "ROLLBACK", NULL, NULL, NULL);
  return FALSE;
}

void
catchup_store_rollback (CatchupStore *store)
{
  g_return_if_fail (store != NULL);
  g_return_if_fail (store->txn_depth > 0);

  store->txn_depth--;
  if (!catchup_store_in_transaction (store))
    return;
  if (store->txn_depth > 0)
    {
      exec_level (store, "ROLLBACK TO", store->txn_depth, NULL);
      exec_level (store, "RELEASE", store->txn_depth, NULL);
    }
  else
    sqlite3_exec (store->db, "ROLLBACK", NULL, NULL, NULL);
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
  g_autoptr (CatchupStmtRef) insert = NULL;
  g_autoptr (CatchupStmtRef) select = NULL;
  gint64 id = 0;
  gboolean found;

  g_return_val_if_fail (store != NULL && protocol != NULL && account != NULL && name != NULL, 0);

  insert = catchup_store_prepare (store,
                                  "INSERT INTO rooms (protocol, account, name) VALUES (?1, ?2, ?3)"
                                  " ON CONFLICT (protocol, account, name) DO NOTHING",
                                  error);
  if (insert == NULL)
    return 0;
  bind_text (insert, 1, protocol);
  bind_text (insert, 2, account);
  bind_text (insert, 3, name);
  if (!catchup_store_step_done (store, insert, error))
    return 0;
  select = catchup_store_prepare (store, "SELECT id FROM rooms WHERE protocol = ?1 AND account = ?2 AND name = ?3",
                                  error);
  if (select == NULL)
    return 0;
  bind_text (select, 1, protocol);
  bind_text (select, 2, account);
  bind_text (select, 3, name);
  if (!catchup_store_query_int64 (store, select, &id, &found, error))
    return 0;
  return id;
}

/* Ids of the rooms matching a query with one text parameter; "spec" is kept for the ambiguity message. */
static GArray *
matching_rooms (CatchupStore *store, const char *sql, const char *spec, GString *names, GError **error)
{
  g_autoptr (CatchupStmtRef) stmt = catchup_store_prepare (store, sql, error);
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  int rc;

  if (stmt == NULL)
    return NULL;
  bind_text (stmt, 1, spec);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (stmt, 0);
      g_array_append_val (ids, id);
      g_string_append_printf (names, "%s%s", names->len ? ", " : "", (const char *) sqlite3_column_text (stmt, 1));
    }
  if (rc != SQLITE_DONE)
    {
      catchup_store_set_error (store, rc, error, _("Could not read the history database"));
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
  info->protocol = column_strdup (stmt, 1);
  info->account = column_strdup (stmt, 2);
  info->name = column_strdup (stmt, 3);
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
      catchup_store_set_error (store, rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_steal_pointer (&rooms);
}

CatchupRoomInfo *
catchup_store_room_info (CatchupStore *store, gint64 room, GError **error)
{
  g_autoptr (CatchupStmtRef) stmt = catchup_store_prepare (store, ROOM_INFO_SELECT " WHERE r.id = ?1", error);
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
  g_autoptr (CatchupStmtRef) stmt =
    catchup_store_prepare (store, ROOM_INFO_SELECT " ORDER BY r.protocol, r.account, r.name", error);

  return stmt ? collect_room_infos (store, stmt, error) : NULL;
}

gboolean
catchup_store_set_last_present (CatchupStore *store, gint64 room, gint64 ts, GError **error)
{
  g_autoptr (CatchupStmtRef) stmt =
    catchup_store_prepare (store, "UPDATE rooms SET last_present = ?2 WHERE id = ?1", error);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, ts);
  if (!catchup_store_step_done (store, stmt, error))
    return FALSE;
  if (sqlite3_changes (store->db) == 0)
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
  g_autoptr (CatchupStmtRef) stmt =
    catchup_store_prepare (store, "SELECT row FROM messages WHERE room = ?1 AND uid = ?2", error);
  gboolean found;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  bind_text (stmt, 2, uid);
  return catchup_store_query_int64 (store, stmt, row, &found, error);
}

gboolean
catchup_store_add (CatchupStore *store, gint64 room, CatchupMessage *msg, gboolean *inserted, GError **error)
{
  g_autoptr (CatchupStmtRef) stmt = NULL;
  gboolean added;

  g_return_val_if_fail (store != NULL && msg != NULL, FALSE);

  if (inserted)
    *inserted = FALSE;
  if (msg->id == NULL || *msg->id == '\0')
    {
      g_free (msg->id);
      msg->id = catchup_message_derive_id (msg->ts, msg->speaker ? msg->speaker : "", msg->text ? msg->text : "");
    }
  stmt = catchup_store_prepare (store,
                                "INSERT INTO messages (room, uid, ts, speaker, alias, body, flags)"
                                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (room, uid) DO NOTHING",
                                error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  bind_text (stmt, 2, msg->id);
  sqlite3_bind_int64 (stmt, 3, msg->ts);
  bind_text (stmt, 4, msg->speaker ? msg->speaker : "");
  bind_text (stmt, 5, msg->alias);
  bind_text (stmt, 6, msg->text ? msg->text : "");
  sqlite3_bind_int64 (stmt, 7, msg->flags);
  if (!catchup_store_step_done (store, stmt, error))
    return FALSE;
  added = sqlite3_changes (store->db) > 0;
  if (inserted)
    *inserted = added;
  if (added)
    {
      msg->row = sqlite3_last_insert_rowid (store->db);
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
  g_autoptr (CatchupStmtRef) stmt =
    catchup_store_prepare (store, MESSAGE_SELECT " WHERE room = ?1 AND uid = ?2", error);

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, room);
  bind_text (stmt, 2, id);
  return single_message (store, stmt, id, error);
}

CatchupMessage *
catchup_store_get_message_by_row (CatchupStore *store, gint64 row, GError **error)
{
  g_autoptr (CatchupStmtRef) stmt = catchup_store_prepare (store, MESSAGE_SELECT " WHERE row = ?1", error);
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
  g_autoptr (CatchupStmtRef) stmt =
    catchup_store_prepare (store,
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
  g_autoptr (CatchupStmtRef) stmt =
    catchup_store_prepare (store,
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
  g_autoptr (CatchupStmtRef) stmt =
    catchup_store_prepare (store, "SELECT count(*) FROM messages WHERE room = ?1", error);
  gint64 n = 0;
  gboolean found;

  if (stmt == NULL)
    return -1;
  sqlite3_bind_int64 (stmt, 1, room);
  return catchup_store_query_int64 (store, stmt, &n, &found, error) ? n : -1;
}

/* Conversational turns (no join, part or nick-change rows) with ts >= since: what a catch-up window can hold. */
gint64
catchup_store_count_turns (CatchupStore *store, gint64 room, gint64 since, GError **error)
{
  g_autoptr (CatchupStmtRef) stmt =
    catchup_store_prepare (store, "SELECT count(*) FROM messages WHERE room = ?1 AND ts >= ?2 AND (flags & ?3) = 0",
                           error);
  gint64 n = 0;
  gboolean found;

  if (stmt == NULL)
    return -1;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, since);
  sqlite3_bind_int64 (stmt, 3, CATCHUP_MESSAGE_EVENT);
  return catchup_store_query_int64 (store, stmt, &n, &found, error) ? n : -1;
}

/* Whether any of the message's retrieval terms is one of the query's. */
static gboolean
shares_term (const CatchupMessage *m, GHashTable *wanted)
{
  g_autoptr (GPtrArray) terms = catchup_text_terms (m->text, TRUE);

  for (guint i = 0; i < terms->len; i++)
    if (g_hash_table_contains (wanted, terms->pdata[i]))
      return TRUE;
  return FALSE;
}

/* Adds the messages of one chunk (its `rows` blob) that share a term with the query and are not in yet. */
static gboolean
add_chunk_hits (CatchupStore *store, const void *blob, int bytes, GHashTable *wanted, GHashTable *seen,
                GPtrArray *out, guint limit, GError **error)
{
  for (int off = 0; off + (int) sizeof (gint64) <= bytes && (limit == 0 || out->len < limit); off += sizeof (gint64))
    {
      gint64 row;
      g_autoptr (CatchupMessage) m = NULL;

      memcpy (&row, (const char *) blob + off, sizeof row);
      row = GINT64_FROM_LE (row);
      if (g_hash_table_contains (seen, &row))
        continue;
      if ((m = catchup_store_get_message_by_row (store, row, error)) == NULL)
        return FALSE;
      g_hash_table_add (seen, g_memdup2 (&row, sizeof row));
      if (shares_term (m, wanted))
        g_ptr_array_add (out, g_steal_pointer (&m));
    }
  return TRUE;
}

GPtrArray *
catchup_store_search (CatchupStore *store, gint64 room, const char *text, guint limit, GError **error)
{
  g_autofree char *query = catchup_text_fts_query (text ? text : "", SEARCH_MAX_TERMS);
  g_autoptr (GPtrArray) terms = catchup_text_terms (text ? text : "", TRUE);
  g_autoptr (GHashTable) wanted = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  g_autoptr (CatchupStmtRef) stmt = NULL;
  int rc = SQLITE_DONE;

  if (query == NULL)
    return g_steal_pointer (&out);
  for (guint i = 0; i < terms->len; i++)
    g_hash_table_add (wanted, terms->pdata[i]);
  /* the best chunks first, then their messages that hold a query term, in order */
  stmt = catchup_store_prepare (store,
                                "SELECT c.rows FROM chunks_fts f JOIN chunks c ON c.id = f.rowid"
                                " WHERE chunks_fts MATCH ?1 AND c.room = ?2 ORDER BY bm25 (chunks_fts)",
                                error);
  if (stmt == NULL)
    return NULL;
  bind_text (stmt, 1, query);
  sqlite3_bind_int64 (stmt, 2, room);
  while ((limit == 0 || out->len < limit) && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      g_autoptr (GBytes) rows = g_bytes_new (sqlite3_column_blob (stmt, 0), sqlite3_column_bytes (stmt, 0));
      gsize bytes;
      const void *data = g_bytes_get_data (rows, &bytes);

      if (!add_chunk_hits (store, data, (int) bytes, wanted, seen, out, limit, error))
        return NULL;
    }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    {
      catchup_store_set_error (store, rc, error, "search");
      return NULL;
    }
  return g_steal_pointer (&out);
}

/* ---------- settings, nicks, events ---------- */

char *
catchup_store_get_setting (CatchupStore *store, gint64 room, const char *key, GError **error)
{
  g_autoptr (CatchupStmtRef) stmt =
    catchup_store_prepare (store, "SELECT value FROM room_settings WHERE room = ?1 AND key = ?2", error);
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, room);
  bind_text (stmt, 2, key);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    return column_strdup (stmt, 0);
  if (rc != SQLITE_DONE)
    catchup_store_set_error (store, rc, error, _("Could not read the history database"));
  return NULL;
}

gboolean
catchup_store_set_setting (CatchupStore *store, gint64 room, const char *key, const char *value, GError **error)
{
  g_autoptr (CatchupStmtRef) stmt = NULL;

  g_return_val_if_fail (key != NULL, FALSE);

  if (value == NULL)
    stmt = catchup_store_prepare (store, "DELETE FROM room_settings WHERE room = ?1 AND key = ?2", error);
  else
    stmt = catchup_store_prepare (store,
                                  "INSERT INTO room_settings (room, key, value) VALUES (?1, ?2, ?3)"
                                  " ON CONFLICT (room, key) DO UPDATE SET value = excluded.value",
                                  error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  bind_text (stmt, 2, key);
  if (value != NULL)
    bind_text (stmt, 3, value);
  return catchup_store_step_done (store, stmt, error);
}

gboolean
catchup_store_add_event (CatchupStore *store, gint64 room, gint64 ts, CatchupRoomEventKind kind,
                         const char *nick, const char *detail, GError **error)
{
  g_autoptr (CatchupStmtRef) stmt =
    catchup_store_prepare (store,
                           "INSERT INTO room_events (room, ts, kind, nick, detail) VALUES (?1, ?2, ?3, ?4, ?5)"
                           " ON CONFLICT DO NOTHING",
                           error);

  g_return_val_if_fail (nick != NULL, FALSE);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, ts);
  sqlite3_bind_int64 (stmt, 3, kind);
  bind_text (stmt, 4, nick);
  bind_text (stmt, 5, detail ? detail : "");
  return catchup_store_step_done (store, stmt, error);
}

gboolean
catchup_store_add_nick_change (CatchupStore *store, gint64 room, gint64 ts, const char *old_nick,
                               const char *new_nick, GError **error)
{
  g_autoptr (CatchupStmtRef) stmt =
    catchup_store_prepare (store,
                           "INSERT INTO nicks (room, ts, old_nick, new_nick) VALUES (?1, ?2, ?3, ?4)"
                           " ON CONFLICT DO NOTHING",
                           error);

  g_return_val_if_fail (old_nick != NULL && new_nick != NULL, FALSE);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, room);
  sqlite3_bind_int64 (stmt, 2, ts);
  bind_text (stmt, 3, old_nick);
  bind_text (stmt, 4, new_nick);
  return catchup_store_step_done (store, stmt, error);
}

char *
catchup_store_current_nick (CatchupStore *store, gint64 room, const char *nick, gint64 since, GError **error)
{
  g_autoptr (CatchupStmtRef) stmt =
    catchup_store_prepare (store,
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
        current = column_strdup (stmt, 1);
      }
  if (rc != SQLITE_DONE)
    {
      catchup_store_set_error (store, rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_steal_pointer (&current);
}
