#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>

#include "catchup-db.h"
#include "catchup-error.h"

#define BUSY_TIMEOUT_MS 5000
#define BUSY_STEP_MS 10
/* A connection is owned by one thread at a time (catchup-db.h), which is exactly SQLite's
 * multi-thread mode: the per-connection mutexes guard nothing and cost every step a lock and an unlock. */
#define DB_OPEN_THREADING SQLITE_OPEN_NOMUTEX
/* VM instructions between two checks for an abort: well under a millisecond. */
#define PROGRESS_STEPS 10000

struct _CatchupDb {
  sqlite3 *handle;
  char *path;
  guint txn_depth;     /* levels above the first are savepoints */
  int last_rc;         /* of the last failure reported */
  GHashTable *stmts;   /* SQL text -> prepared sqlite3_stmt*, finalized on close */
  GCancellable *abort; /* connection-wide: cancelled, every statement stops and no lock is waited for */
  GCancellable *cancellable; /* the running operation's (may be NULL) */
  guint busy_timeout_ms;
  GThread *owner;      /* NULL while handed over */
  GData *data;         /* what the modules above keep per connection (catchup_db_set_data) */
};

/* ---------- the owner thread ---------- */

/* A connection used from a thread that does not own it is a programming error: it is reported as a critical
 * and the use fails with an error, so that nothing runs on a connection two threads may be using. */
static gboolean
owned_here (CatchupDb *db, GError **error)
{
  if (G_LIKELY (db->owner == g_thread_self ()))
    return TRUE;
  g_critical ("history database %s used from a thread that does not own it (%s)", db->path,
              db->owner == NULL ? "it was handed over and not taken" : "another thread owns it");
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_DB, _("The history database was used from the wrong thread"));
  return FALSE;
}

void
catchup_db_hand_over (CatchupDb *db)
{
  g_return_if_fail (db != NULL);
  g_return_if_fail (db->txn_depth == 0);
  if (owned_here (db, NULL))
    db->owner = NULL;
}

void
catchup_db_take_over (CatchupDb *db)
{
  g_return_if_fail (db != NULL);
  g_return_if_fail (db->owner == NULL);
  db->owner = g_thread_self ();
}

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
catchup_db_set_error (CatchupDb *db, int rc, GError **error, const char *what)
{
  const char *detail = sqlite3_errstr (rc);

  if (db != NULL)
    db->last_rc = rc;
  /* An interrupt is our own abort or cancellable: report it as the one cancellation code. */
  if ((rc & 0xff) == SQLITE_INTERRUPT)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "%s: %s", what, detail);
      return;
    }

  /* The connection's message is more precise ("no such table: x"), but only when it is about this rc. */
  if (db != NULL && db->handle != NULL && (sqlite3_errcode (db->handle) & 0xff) == (rc & 0xff))
    detail = sqlite3_errmsg (db->handle);
  g_set_error (error, CATCHUP_ERROR, error_code_of (rc), "%s: %s", what, detail);
}

sqlite3_stmt *
catchup_db_prepare (CatchupDb *db, const char *sql, GError **error)
{
  sqlite3_stmt *stmt;
  int rc;

  if (!owned_here (db, error))
    return NULL;
  stmt = g_hash_table_lookup (db->stmts, sql);

  if (stmt != NULL)
    {
      sqlite3_reset (stmt);
      sqlite3_clear_bindings (stmt);
      return stmt;
    }
  rc = sqlite3_prepare_v2 (db->handle, sql, -1, &stmt, NULL);
  if (rc != SQLITE_OK)
    {
      catchup_db_set_error (db, rc, error, _("Could not prepare a database query"));
      return NULL;
    }
  g_hash_table_insert (db->stmts, g_strdup (sql), stmt);
  return stmt;
}

gboolean
catchup_db_exec (CatchupDb *db, const char *sql, GError **error)
{
  int rc;

  if (!owned_here (db, error))
    return FALSE;
  rc = sqlite3_exec (db->handle, sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK)
    {
      catchup_db_set_error (db, rc, error, _("Database command failed"));
      return FALSE;
    }
  return TRUE;
}

/* Steps a statement that returns no rows (or whose rows do not matter). */
gboolean
catchup_db_step_done (CatchupDb *db, sqlite3_stmt *stmt, GError **error)
{
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    ;
  if (rc != SQLITE_DONE)
    {
      catchup_db_set_error (db, rc, error, _("Could not write to the history database"));
      return FALSE;
    }
  return TRUE;
}

void
catchup_db_bind_text (sqlite3_stmt *stmt, int i, const char *text)
{
  if (text == NULL)
    sqlite3_bind_null (stmt, i);
  else
    sqlite3_bind_text (stmt, i, text, -1, SQLITE_TRANSIENT);
}

/* A text column as valid UTF-8: older versions stored live messages unchecked, and another program may write
 * the file; the regex engines and GLib's UTF-8 functions behind every reader assume valid text. */
char *
catchup_db_column_text (sqlite3_stmt *stmt, int i)
{
  const char *text = (const char *) sqlite3_column_text (stmt, i);
  int len = sqlite3_column_bytes (stmt, i);

  if (text == NULL)
    return NULL;
  if (g_utf8_validate_len (text, (gsize) len, NULL))
    return g_strndup (text, (gsize) len);
  return g_utf8_make_valid (text, len);
}

/* Runs a query returning one integer; FALSE with error on failure, *found = FALSE when there is no row. */
gboolean
catchup_db_query_int64 (CatchupDb *db, sqlite3_stmt *stmt, gint64 *out, gboolean *found, GError **error)
{
  int rc = sqlite3_step (stmt);

  *found = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW)
    *out = sqlite3_column_int64 (stmt, 0);
  else if (rc != SQLITE_DONE)
    {
      catchup_db_set_error (db, rc, error, _("Could not read the history database"));
      return FALSE;
    }
  return TRUE;
}

/* ---------- interruption ---------- */

static gboolean
is_cancelled (const CatchupDb *db)
{
  return g_cancellable_is_cancelled (db->abort) || g_cancellable_is_cancelled (db->cancellable);
}

gboolean
catchup_db_check_cancelled (CatchupDb *db, GError **error)
{
  if (!is_cancelled (db))
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
  CatchupDb *db = data;

  if (is_cancelled (db) || (guint) count * BUSY_STEP_MS >= db->busy_timeout_ms)
    return 0;
  g_usleep (BUSY_STEP_MS * 1000);
  return 1;
}

void
catchup_db_set_abort (CatchupDb *db, GCancellable *abort)
{
  g_return_if_fail (db != NULL);
  g_set_object (&db->abort, abort);
}

void
catchup_db_set_cancellable (CatchupDb *db, GCancellable *cancellable)
{
  g_return_if_fail (db != NULL);
  g_set_object (&db->cancellable, cancellable);
}

GCancellable *
catchup_db_get_cancellable (CatchupDb *db)
{
  g_return_val_if_fail (db != NULL, NULL);
  return db->cancellable;
}

void
catchup_db_set_busy_timeout (CatchupDb *db, guint timeout_ms)
{
  g_return_if_fail (db != NULL);
  db->busy_timeout_ms = timeout_ms;
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
configure_connection (CatchupDb *db, GError **error)
{
  db->busy_timeout_ms = BUSY_TIMEOUT_MS;
  sqlite3_busy_handler (db->handle, busy_cb, db);
  sqlite3_progress_handler (db->handle, PROGRESS_STEPS, progress_cb, db);
  /* journal_mode is the first statement that reads the file: a non-database fails here with NOTADB. */
  return catchup_db_exec (db,
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
failed_read_only (CatchupDb *db)
{
  int rc = sqlite3_errcode (db->handle);

  return rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN || sqlite3_db_readonly (db->handle, "main") == 1;
}

/* A history that this user may read but not write (a read-only folder, a file of someone else's) is opened
 * read-only; when SQLite cannot read a WAL database without creating its -shm file, as immutable: nothing can
 * change it while neither the file nor its folder may be written. */
static gboolean
open_read_only (CatchupDb *db, GError **error)
{
  static const char *const options[] = { "?mode=ro", "?mode=ro&immutable=1" };
  g_autofree char *absolute = g_canonicalize_filename (db->path, NULL);
  g_autofree char *base = g_filename_to_uri (absolute, NULL, NULL);

  for (guint i = 0; base != NULL && i < G_N_ELEMENTS (options); i++)
    {
      g_autofree char *uri = g_strconcat (base, options[i], NULL);
      int rc;

      g_clear_error (error);
      sqlite3_close (db->handle);
      db->handle = NULL;
      rc = sqlite3_open_v2 (uri, &db->handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | DB_OPEN_THREADING, NULL);
      if (rc != SQLITE_OK)
        {
          catchup_db_set_error (db, rc, error, _("Could not open the history database read-only"));
          continue;
        }
      sqlite3_extended_result_codes (db->handle, 0);
      sqlite3_busy_timeout (db->handle, BUSY_TIMEOUT_MS);
      if (catchup_db_exec (db, "SELECT count(*) FROM sqlite_master", error))
        return TRUE;
    }
  return FALSE;
}

CatchupDb *
catchup_db_open (const char *path, GError **error)
{
  g_autoptr (GError) rw_error = NULL;
  g_autoptr (CatchupDb) db = NULL;
  int rc;

  g_return_val_if_fail (path != NULL, NULL);

  if (!ensure_parent (path, error))
    return NULL;
  db = g_new0 (CatchupDb, 1);
  db->path = g_strdup (path);
  db->owner = g_thread_self ();
  db->stmts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) sqlite3_finalize);
  rc = sqlite3_open_v2 (path, &db->handle,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI | DB_OPEN_THREADING, NULL);
  if (rc != SQLITE_OK)
    {
      g_autofree char *what = g_strdup_printf (_("Could not open the history database %s"), path);
      catchup_db_set_error (db, rc, error, what);
      return NULL;
    }
  sqlite3_extended_result_codes (db->handle, 0);
  if (!configure_connection (db, &rw_error))
    {
      if (is_memory_path (path) || !failed_read_only (db) || !open_read_only (db, error))
        {
          if (error != NULL && *error == NULL)
            g_propagate_error (error, g_steal_pointer (&rw_error));
          g_prefix_error (error, _("Could not open the history database %s: "), path);
          return NULL;
        }
      g_debug ("history database %s opened read-only: %s", path, rw_error->message);
    }
  return g_steal_pointer (&db);
}

void
catchup_db_close (CatchupDb *db)
{
  if (db == NULL)
    return;
  if (db->txn_depth > 0 && catchup_db_in_transaction (db))
    {
      g_warning ("history database closed inside a transaction; rolling back");
      sqlite3_exec (db->handle, "ROLLBACK", NULL, NULL, NULL);
    }
  g_clear_object (&db->abort);
  g_clear_object (&db->cancellable);
  /* Statements first: sqlite3_close refuses a connection with live statements. */
  g_clear_pointer (&db->stmts, g_hash_table_unref);
  g_datalist_clear (&db->data);
  if (db->handle != NULL)
    sqlite3_close (db->handle);
  g_free (db->path);
  g_free (db);
}

gpointer
catchup_db_get_data (CatchupDb *db, const char *key)
{
  g_return_val_if_fail (db != NULL, NULL);
  return g_datalist_get_data (&db->data, key);
}

void
catchup_db_set_data (CatchupDb *db, const char *key, gpointer data, GDestroyNotify destroy)
{
  g_return_if_fail (db != NULL);
  g_datalist_set_data_full (&db->data, key, data, destroy);
}

const char *
catchup_db_get_path (CatchupDb *db)
{
  g_return_val_if_fail (db != NULL, NULL);
  return db->path;
}

gint64
catchup_db_changes (CatchupDb *db)
{
  g_return_val_if_fail (db != NULL, 0);
  return sqlite3_changes (db->handle);
}

gint64
catchup_db_last_insert_rowid (CatchupDb *db)
{
  g_return_val_if_fail (db != NULL, 0);
  return sqlite3_last_insert_rowid (db->handle);
}

/* ---------- transactions ---------- */

/* Nested levels are savepoints, so an inner failure undoes only its own part: a writer that keeps going after
 * one room's batch failed commits the others. */
static gboolean
exec_level (CatchupDb *db, const char *verb, guint depth, GError **error)
{
  g_autofree char *sql = g_strdup_printf ("%s catchup_%u", verb, depth);

  return catchup_db_exec (db, sql, error);
}

gboolean
catchup_db_in_transaction (CatchupDb *db)
{
  g_return_val_if_fail (db != NULL, FALSE);
  return !sqlite3_get_autocommit (db->handle);
}

guint
catchup_db_transaction_depth (CatchupDb *db)
{
  g_return_val_if_fail (db != NULL, 0);
  return db->txn_depth;
}

/* SQLite ends a transaction by itself after some errors (FULL, IOERR, NOMEM, an interrupt): the levels
 * counted here are gone then, and a SAVEPOINT would silently start a new transaction. */
static gboolean
transaction_lost (CatchupDb *db, GError **error)
{
  if (db->txn_depth == 0 || catchup_db_in_transaction (db))
    return FALSE;
  catchup_db_set_error (db, db->last_rc != SQLITE_OK ? db->last_rc : SQLITE_ERROR, error,
                           _("The database ended the transaction after an error; nothing of it was written"));
  return TRUE;
}

gboolean
catchup_db_begin (CatchupDb *db, GError **error)
{
  g_return_val_if_fail (db != NULL, FALSE);

  if (db->txn_depth == 0)
    {
      /* IMMEDIATE takes the write lock now: a deferred transaction that later upgrades can fail with BUSY
       * without waiting for the busy timeout. */
      if (!catchup_db_exec (db, "BEGIN IMMEDIATE", error))
        return FALSE;
    }
  else if (transaction_lost (db, error) || !exec_level (db, "SAVEPOINT", db->txn_depth, error))
    return FALSE;
  db->txn_depth++;
  return TRUE;
}

gboolean
catchup_db_commit (CatchupDb *db, GError **error)
{
  g_return_val_if_fail (db != NULL, FALSE);
  g_return_val_if_fail (db->txn_depth > 0, FALSE);

  if (transaction_lost (db, error))
    {
      db->txn_depth--;
      return FALSE;
    }
  if (--db->txn_depth > 0)
    {
      if (exec_level (db, "RELEASE", db->txn_depth, error))
        return TRUE;
      /* the level stays open in SQLite: undo it so the outer levels can still commit or roll back */
      exec_level (db, "ROLLBACK TO", db->txn_depth, NULL);
      exec_level (db, "RELEASE", db->txn_depth, NULL);
      return FALSE;
    }
  if (catchup_db_exec (db, "COMMIT", error))
    return TRUE;
  /* A failed COMMIT may have ended the transaction already (FULL, IOERR) or left it open (BUSY): roll back
   * only what is still there. */
  if (catchup_db_in_transaction (db))
    sqlite3_exec (db->handle, "ROLLBACK", NULL, NULL, NULL);
  return FALSE;
}

void
catchup_db_rollback (CatchupDb *db)
{
  g_return_if_fail (db != NULL);
  g_return_if_fail (db->txn_depth > 0);

  db->txn_depth--;
  if (!catchup_db_in_transaction (db))
    return;
  if (db->txn_depth > 0)
    {
      exec_level (db, "ROLLBACK TO", db->txn_depth, NULL);
      exec_level (db, "RELEASE", db->txn_depth, NULL);
    }
  else
    sqlite3_exec (db->handle, "ROLLBACK", NULL, NULL, NULL);
}

