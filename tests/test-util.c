#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "catchup-llm.h"
#include "catchup-llm-prompt.h"
#include "catchup-store-private.h"
#include "test-util.h"

char *
test_tmp_dir (const char *tmpl)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp (tmpl, &error);

  g_assert_no_error (error);
  return dir;
}

void
test_remove_tree (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        test_remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

CatchupStore *
test_store_with_room (const char *path, const char *protocol, const char *account, const char *name,
                           gint64 *room)
{
  g_autoptr (GError) error = NULL;
  CatchupStore *store = catchup_store_open (path, &error);

  g_assert_no_error (error);
  g_assert_nonnull (store);
  *room = catchup_store_ensure_room (store, protocol, account, name, &error);
  g_assert_no_error (error);
  g_assert_cmpint (*room, >, 0);
  return store;
}

void
test_store_fixture_teardown (TestStoreFixture *fx)
{
  g_clear_pointer (&fx->store, catchup_store_close);
  test_remove_tree (fx->dir);
  g_free (fx->path);
  g_free (fx->dir);
}

gint64
test_sql_count (CatchupStore *store, const char *sql, gint64 room)
{
  sqlite3_stmt *stmt = NULL;
  gint64 n;

  g_assert_nonnull (stmt = catchup_db_prepare (catchup_store_db (store), sql, NULL));
  if (strstr (sql, "?1"))
    sqlite3_bind_int64 (stmt, 1, room);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  n = sqlite3_column_int64 (stmt, 0);
  sqlite3_reset (stmt);
  return n;
}

GPtrArray *
test_stored_messages (const char *db_path, const char *spec)
{
  g_autoptr (CatchupStore) store = NULL;
  gint64 room;

  if (!g_file_test (db_path, G_FILE_TEST_EXISTS))
    return g_ptr_array_new ();
  store = catchup_store_open (db_path, NULL);
  room = store ? catchup_store_find_room (store, spec, NULL) : 0;
  if (room == 0)
    return g_ptr_array_new ();
  return catchup_store_range (store, room, NULL, NULL, 0, NULL);
}

void
test_raw_exec (sqlite3 *db, const char *sql)
{
  char *msg = NULL;
  int rc = sqlite3_exec (db, sql, NULL, NULL, &msg);

  g_assert_cmpstr (msg, ==, NULL);
  g_assert_cmpint (rc, ==, SQLITE_OK);
}

void
test_raw_frozen_schema (sqlite3 *db, guint version)
{
  for (guint v = 1; v <= version; v++)
    {
      g_autofree char *name = g_strdup_printf ("v%u.sql", v);
      g_autofree char *file = g_test_build_filename (G_TEST_DIST, "data", "schema", name, NULL);
      g_autofree char *sql = NULL;
      g_autoptr (GError) error = NULL;

      g_file_get_contents (file, &sql, NULL, &error);
      g_assert_no_error (error);
      test_raw_exec (db, sql);
    }
}

void
test_model_env_init (void)
{
  if (g_getenv (CATCHUP_DATA_DIR_ENV) == NULL)
    {
      g_autofree char *data_dir = g_test_build_filename (G_TEST_DIST, "..", "data", NULL);

      g_setenv (CATCHUP_DATA_DIR_ENV, data_dir, TRUE);
    }
  g_unsetenv (CATCHUP_LLM_API_KEY_ENV);
}

guint16
test_free_port (void)
{
  g_autoptr (GSocket) sock = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr (GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr (GSocketAddress) any = g_inet_socket_address_new (lo, 0);
  g_autoptr (GSocketAddress) bound = NULL;

  g_assert_true (g_socket_bind (sock, any, TRUE, NULL));
  bound = g_socket_get_local_address (sock, NULL);
  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

guint
test_server_start (const char *dir, GPid *pid)
{
  const char *configured = g_getenv ("PYTHON3");
  /* configure's choice when make check runs us ("no" when it found none) */
  g_autofree char *python = configured && g_path_is_absolute (configured) ? g_strdup (configured)
                                                                          : g_find_program_in_path ("python3");
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "llm-server.py", NULL);
  g_autofree char *port_file = g_build_filename (dir, "port", NULL);
  const char *argv[] = { python, script, "--port-file", port_file, "--lifetime", "600", NULL };
  g_autoptr (GError) error = NULL;
  gint64 deadline = g_get_monotonic_time () + 15 * G_USEC_PER_SEC;
  guint port = 0;

  *pid = 0;
  if (python == NULL)
    return 0;
  if (!g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                      NULL, pid, &error))
    {
      g_printerr ("cannot start the test server: %s\n", error->message);
      return 0;
    }
  while (g_get_monotonic_time () < deadline && port == 0)
    {
      g_autofree char *text = NULL;

      if (g_file_get_contents (port_file, &text, NULL, NULL))
        port = (guint) g_ascii_strtoull (text, NULL, 10);
      else
        g_usleep (20000);
    }
  g_remove (port_file);
  return port;
}

void
test_server_stop (GPid pid)
{
  if (pid == 0)
    return;
  kill (pid, SIGTERM);
  waitpid (pid, NULL, 0);
  g_spawn_close_pid (pid);
}

gboolean
test_need_server (guint port)
{
  if (port != 0)
    return TRUE;
  g_test_skip ("python3 or the test server is not available");
  return FALSE;
}

double
test_machine_load (void)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents ("/proc/loadavg", &text, NULL, NULL))
    return 0;
  return g_ascii_strtod (text, NULL);
}

/* The share of the last ten seconds in which some runnable task waited for a CPU (Linux's pressure stall
 * information), in percent; 0 where the kernel does not tell. */
static double
cpu_pressure (void)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents ("/proc/pressure/cpu", &text, NULL, NULL))
    return 0;
  const char *avg = strstr (text, "some avg10=");
  return avg ? g_ascii_strtod (avg + strlen ("some avg10="), NULL) : 0;
}

/* Busy: more runnable work than cores on average, or, what the load average lags behind, tasks that waited for
 * a CPU in the last seconds (the parallel tests of a make check). */
#define BUSY_PRESSURE 5.0

gboolean
test_machine_busy (void)
{
  return test_machine_load () >= g_get_num_processors () || cpu_pressure () >= BUSY_PRESSURE;
}
