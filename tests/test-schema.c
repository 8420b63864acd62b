/* Migrations from frozen schemas: tests/data/schema/vN.sql is the SQL that took a database from version N-1 to N
 * when version N shipped. The files are never edited, so an old database is built here the way an old release
 * built it, not from the macros the current migration runs (an edit there would change both sides). */
#include <sqlite3.h>

#include "catchup-store-private.h"
#include "test-util.h"

/* A database file at version `version`, built from the frozen files, with one room and one message. */
static void
build_old_database (const char *path, guint version)
{
  sqlite3 *db = NULL;
  g_autofree char *bump = g_strdup_printf ("PRAGMA user_version = %u", version);

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  test_raw_frozen_schema (db, version);
  test_raw_exec (db, bump);
  test_raw_exec (db, "INSERT INTO rooms (id, protocol, account, name) VALUES (7, 'prpl-irc', 'me', '#old');"
                "INSERT INTO messages (row, room, uid, ts, speaker, body) VALUES (1, 7, 'u1', 50, 'alice', 'kept');");
  sqlite3_close (db);
}

/* Every table, index, trigger and view with its columns, one line each, whitespace folded: what a fresh and a
 * migrated database must agree on. SQLite's internal objects and FTS5 shadow tables follow from these. */
static char *
schema_of (CatchupStore *store)
{
  GString *out = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GRegex) space = g_regex_new ("\\s+", 0, 0, NULL);
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
                                            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
                                            "AND sql IS NOT NULL ORDER BY type, name",
                                            &error);

  g_assert_no_error (error);
  while (sqlite3_step (st) == SQLITE_ROW)
    {
      g_autofree char *sql = g_regex_replace_literal (space, (const char *) sqlite3_column_text (st, 2), -1, 0, " ",
                                                      0, NULL);

      g_string_append_printf (out, "%s %s: %s\n", sqlite3_column_text (st, 0), sqlite3_column_text (st, 1), sql);
    }
  sqlite3_reset (st);
  return g_string_free (out, FALSE);
}

static char *
fresh_schema (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = catchup_store_open (":memory:", &error);

  g_assert_no_error (error);
  return schema_of (store);
}

static void
test_migrate_from (gconstpointer data)
{
  guint version = GPOINTER_TO_UINT (data);
  g_autofree char *dir = test_tmp_dir ("catchup-schema-XXXXXX");
  g_autofree char *path = g_build_filename (dir, "old.db", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (CatchupMessage) msg = NULL;
  g_autofree char *migrated = NULL;
  g_autofree char *fresh = fresh_schema ();

  build_old_database (path, version);
  store = catchup_store_open (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_sql_count (store, "PRAGMA user_version", 0), ==, CATCHUP_STORE_SCHEMA_VERSION);
  msg = catchup_store_get_message (store, 7, "u1", &error);
  g_assert_no_error (error);
  g_assert_nonnull (msg);
  g_assert_cmpstr (msg->text, ==, "kept");
  g_assert_cmpstr (msg->speaker, ==, "alice");
  migrated = schema_of (store);
  g_assert_cmpstr (migrated, ==, fresh);
  g_clear_pointer (&store, catchup_store_close);
  test_remove_tree (dir);
}

/* Every shipped version has a frozen file: a schema bump without one fails here. */
static void
test_frozen_files_complete (void)
{
  for (guint v = 1; v <= CATCHUP_STORE_SCHEMA_VERSION; v++)
    {
      g_autofree char *name = g_strdup_printf ("v%u.sql", v);
      g_autofree char *file = g_test_build_filename (G_TEST_DIST, "data", "schema", name, NULL);

      g_assert_true (g_file_test (file, G_FILE_TEST_IS_REGULAR));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/schema/frozen-files-complete", test_frozen_files_complete);
  for (guint v = 1; v <= CATCHUP_STORE_SCHEMA_VERSION; v++)
    {
      g_autofree char *path = g_strdup_printf ("/catchup/schema/migrate-from-v%u", v);

      g_test_add_data_func (path, GUINT_TO_POINTER (v), test_migrate_from);
    }
  return g_test_run ();
}
