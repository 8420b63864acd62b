#pragma once

#include <gio/gio.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/*
 * One SQLite connection and what every module needs to use it: a cache of prepared statements, the mapping of
 * SQLite's failures to CATCHUP_ERROR codes with clear messages, nested transactions, interruption, and the
 * owner thread. No other module of core prepares or executes SQL on its own (catchup-store.h opens the history
 * database and keeps its schema; the modules above read and write their tables through these helpers).
 *
 * Threading contract: a connection belongs to one thread, the one that opened it, until it is handed over:
 * the owner calls catchup_db_hand_over, then the thread that is to use it calls catchup_db_take_over (the
 * history writer opens its store on the main loop, so that a bad file is reported at once, and hands it to its
 * worker). Every statement checks the owner; a use from another thread is a critical and fails with
 * CATCHUP_ERROR_DB. Closing is allowed from any thread once the owner is done with it (after joining it).
 */

typedef struct _CatchupDb CatchupDb;

/* Opens or creates (with parent folders, mode 0700) the SQLite file at path in WAL mode, with foreign keys on.
 * ":memory:" works. A file this user may read but not write is opened read-only. */
CatchupDb *catchup_db_open (const char *path, GError **error);
void catchup_db_close (CatchupDb *db);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupDb, catchup_db_close)

const char *catchup_db_get_path (CatchupDb *db);

void catchup_db_hand_over (CatchupDb *db);
void catchup_db_take_over (CatchupDb *db);

/* Maps a SQLite result code + the connection's message into CATCHUP_ERROR (DB, DB_BUSY, DB_FULL, DB_IO,
 * DB_CORRUPT), or G_IO_ERROR_CANCELLED for an interrupt; what says what failed. */
void catchup_db_set_error (CatchupDb *db, int rc, GError **error, const char *what);
/* A cached prepared statement (reset, bindings cleared); NULL with error set. */
sqlite3_stmt *catchup_db_prepare (CatchupDb *db, const char *sql, GError **error);
/* Runs one or more statements without results (schema, pragmas). */
gboolean catchup_db_exec (CatchupDb *db, const char *sql, GError **error);
/* Steps a statement that returns no rows (or whose rows do not matter). */
gboolean catchup_db_step_done (CatchupDb *db, sqlite3_stmt *stmt, GError **error);
/* Runs a query returning one integer; FALSE with error on failure, *found = FALSE when there is no row. */
gboolean catchup_db_query_int64 (CatchupDb *db, sqlite3_stmt *stmt, gint64 *out, gboolean *found, GError **error);
/* Rows changed by the last statement, and the row id of the last insert. */
gint64 catchup_db_changes (CatchupDb *db);
gint64 catchup_db_last_insert_rowid (CatchupDb *db);
/* Binds text, or NULL as SQL NULL (the text is copied). */
void catchup_db_bind_text (sqlite3_stmt *stmt, int i, const char *text);
/* A text column as valid UTF-8 (a new string; NULL for SQL NULL): older versions stored live messages
 * unchecked, and another program may write the file. */
char *catchup_db_column_text (sqlite3_stmt *stmt, int i);

/* A cached statement borrowed for one call: the cleanup resets it so no read transaction stays open. */
typedef sqlite3_stmt CatchupDbStmt;

static inline void
catchup_db_stmt_release (CatchupDbStmt *stmt)
{
  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupDbStmt, catchup_db_stmt_release)

/*
 * Transactions nest: the outermost level is a transaction (BEGIN IMMEDIATE), inner levels are savepoints, so
 * rolling back an inner level undoes only its part and the outer level can still commit the rest. A failed
 * commit has already ended its level (it never needs a rollback after it); when SQLite itself ends the
 * transaction after an error (FULL, IOERR, an interrupt), every further begin and commit inside it fails.
 */
gboolean catchup_db_begin (CatchupDb *db, GError **error);
gboolean catchup_db_commit (CatchupDb *db, GError **error);
void catchup_db_rollback (CatchupDb *db);
/* TRUE while SQLite has a transaction open on this connection. */
gboolean catchup_db_in_transaction (CatchupDb *db);
/* How many levels begun here are open (0: none). */
guint catchup_db_transaction_depth (CatchupDb *db);

/*
 * Interruption. While abort (connection-wide) or cancellable (the running operation's) is cancelled, every
 * statement stops within a fraction of a millisecond with G_IO_ERROR_CANCELLED and no lock is waited for.
 * Either may be NULL; the connection keeps a reference. A busy database is waited for up to timeout_ms (5 s by
 * default) before a statement fails with CATCHUP_ERROR_DB_BUSY.
 */
void catchup_db_set_abort (CatchupDb *db, GCancellable *abort);
void catchup_db_set_cancellable (CatchupDb *db, GCancellable *cancellable);
GCancellable *catchup_db_get_cancellable (CatchupDb *db);
void catchup_db_set_busy_timeout (CatchupDb *db, guint timeout_ms);
/* TRUE, with G_IO_ERROR_CANCELLED, when the abort or the cancellable is cancelled. */
gboolean catchup_db_check_cancelled (CatchupDb *db, GError **error);

/* Data a module keeps with the connection (a cache of its own), freed with destroy when replaced or at close. */
gpointer catchup_db_get_data (CatchupDb *db, const char *key);
void catchup_db_set_data (CatchupDb *db, const char *key, gpointer data, GDestroyNotify destroy);

G_END_DECLS
