#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "catchup.h"

G_BEGIN_DECLS

/* Helpers the GTest programs share: temporary folders, stores, ports and the test model server. */

/* A fresh temporary folder from tmpl ("catchup-NAME-XXXXXX"); failing to make one fails the test. */
char *test_tmp_dir (const char *tmpl);
/* Removes path and, for a folder, everything below it (links are removed, never followed). */
void test_remove_tree (const char *path);

/* Opens the store at path (":memory:" for one in memory) with one room in it, asserting both succeed. */
CatchupStore *test_store_with_room (const char *path, const char *protocol, const char *account,
                                         const char *name, gint64 *room);
/* A store file in a temporary folder, with one room. */
typedef struct {
  char *dir;
  char *path;
  CatchupStore *store;
  gint64 room;
} TestStoreFixture;

/* Closes the store and removes the folder with everything in it. */
void test_store_fixture_teardown (TestStoreFixture *fx);

/* The integer in the first column of the first row of sql; ?1, when sql has it, is bound to room. */
gint64 test_sql_count (CatchupStore *store, const char *sql, gint64 room);

/* The messages the history database at db_path holds for the room spec, oldest first; none (never an error)
 * while the file or the room does not exist yet: what a test polls for while a client stores. */
GPtrArray *test_stored_messages (const char *db_path, const char *spec);

/* Runs sql on a connection of SQLite's own (a database as an old release or another program left it),
 * asserting it succeeds. */
void test_raw_exec (sqlite3 *db, const char *sql);
/* Runs the frozen schema files tests/data/schema/v1.sql to vN.sql on db (see tests/test-schema.c): the tables
 * a release at version N created, never the macros the current migration runs. */
void test_raw_frozen_schema (sqlite3 *db, guint version);

/* Points CATCHUP_DATA_DIR at the shipped data unless it is set, and unsets the API key variable: the model
 * tests see the prompts of this tree and no key of the user's. */
void test_model_env_init (void);

/* A port on 127.0.0.1 that was free a moment ago: connecting to it is refused. */
guint16 test_free_port (void);

/* The one-minute load average (0 when unknown). */
double test_machine_load (void);
/* TRUE when the load average is at least the number of cores, or tasks waited for a CPU in the last seconds:
 * wall-clock bounds say nothing then. */
gboolean test_machine_busy (void);

/* Starts tests/llm-server.py with its port file in dir; returns its port, 0 when python3 or the server is
 * not available (pid then stays 0). */
guint test_server_start (const char *dir, GPid *pid);
void test_server_stop (GPid pid);
/* Whether the server at port runs; skips the test when it does not. */
gboolean test_need_server (guint port);

G_END_DECLS
