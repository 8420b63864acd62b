/* The history writer under faults: a full database, a lock held by another program, a room whose rows the
 * database refuses, a stop in the middle of it all. Every queued message is stored exactly once when the fault
 * clears, and what cannot be written is reported. */

#include "config.h"

#include <string.h>

#include <sqlite3.h>

#include "catchup.h"
#include "catchup-embed-cache.h"
#include "catchup-store-private.h"
#include "catchup-writer.h"
#include "test-util.h"

#define PROTO "prpl-test"
#define ACCOUNT "me@example"
#define ROOM_A "#alpha"
#define ROOM_B "#beta"
/* Long enough for the kept-write retries to run a few times, short enough for a unit test. */
#define WAIT_MS 8000

typedef struct {
  char *dir;
  char *path;
  CatchupWriter *writer;
  GPtrArray *statuses;   /* CatchupWriterStatus copies, in order of delivery */
} Fixture;

static CatchupWriterStatus *
status_copy (const CatchupWriterStatus *status)
{
  CatchupWriterStatus *copy = g_new0 (CatchupWriterStatus, 1);

  copy->fault = status->fault;
  copy->n_kept = status->n_kept;
  copy->n_saved = status->n_saved;
  copy->detail = g_strdup (status->detail);
  copy->rooms = g_ptr_array_new ();
  return copy;
}

static void
on_status (const CatchupWriterStatus *status, gpointer data)
{
  Fixture *fx = data;

  g_ptr_array_add (fx->statuses, status_copy (status));
}

static void
fixture_set_up (Fixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  fx->dir = test_tmp_dir ("catchup-writer-faults-XXXXXX");
  fx->path = g_build_filename (fx->dir, "history.db", NULL);
  fx->writer = catchup_writer_new (fx->path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (fx->writer);
  fx->statuses = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_writer_status_free);
  catchup_writer_set_status_func (fx->writer, on_status, fx, NULL);
}

static void
fixture_tear_down (Fixture *fx, gconstpointer data)
{
  g_clear_pointer (&fx->writer, catchup_writer_free);
  /* deliveries still queued hold a reference of the writer */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_ptr_array_unref (fx->statuses);
  test_remove_tree (fx->dir);
  g_free (fx->path);
  g_free (fx->dir);
}

static void
add (Fixture *fx, const char *room, guint i)
{
  /* long texts: a few hundred of them need new pages */
  g_autofree char *text = g_strdup_printf ("message %u of %s about the release train and its many carriages %0200u",
                                           i, room, i);
  g_autofree char *id = g_strdup_printf ("%s-%u", room, i);

  catchup_writer_add (fx->writer, PROTO, ACCOUNT, room, catchup_message_new (id, 1700000000 + i, "ann", text));
}

/* Runs the main context until pred holds; fails the test after WAIT_MS. */
static void
wait_for (gboolean (*pred) (Fixture *fx), Fixture *fx)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_MS * G_TIME_SPAN_MILLISECOND;

  while (!pred (fx))
    {
      if (g_get_monotonic_time () >= deadline)
        g_test_message ("kept %" G_GUINT64_FORMAT ", %u statuses", catchup_writer_get_kept (fx->writer),
                        fx->statuses->len);
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_usleep (5000);
    }
}

static gboolean
nothing_kept (Fixture *fx)
{
  return catchup_writer_get_kept (fx->writer) == 0 && fx->statuses->len > 0 &&
         ((CatchupWriterStatus *) fx->statuses->pdata[fx->statuses->len - 1])->fault == CATCHUP_WRITER_OK;
}

static gboolean
told (Fixture *fx)
{
  return fx->statuses->len > 0;
}

/* Waits until everything queued was tried and the fault told; returns how many messages are kept. */
static guint64
settle_fault (Fixture *fx)
{
  catchup_writer_flush (fx->writer);
  wait_for (told, fx);
  return catchup_writer_get_kept (fx->writer);
}

static guint64
written (Fixture *fx)
{
  guint64 n_written = 0;

  catchup_writer_get_stats (fx->writer, &n_written, NULL, NULL);
  return n_written;
}

/* Every message of room i = 0..n-1 stored exactly once, as another connection sees it. */
static void
assert_stored_once (Fixture *fx, const char *room_name, guint n)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = catchup_store_open (fx->path, &error);
  g_autofree char *spec = g_strdup_printf ("%s/%s/%s", PROTO, ACCOUNT, room_name);
  gint64 room;

  g_assert_no_error (error);
  room = catchup_store_find_room (store, spec, &error);
  g_assert_no_error (error);
  g_assert_cmpint (catchup_store_count (store, room, &error), ==, n);
  g_assert_cmpint (test_sql_count (store, "SELECT count(DISTINCT uid) FROM messages WHERE room = ?1", room), ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *id = g_strdup_printf ("%s-%u", room_name, i);
      g_autoptr (CatchupMessage) msg = catchup_store_get_message (store, room, id, &error);

      g_assert_no_error (error);
      g_assert_cmpint (msg->ts, ==, 1700000000 + i);
    }
  /* the chunk index covers every row: nothing half-written */
  g_assert_cmpint (test_sql_count (store, "SELECT max_row FROM index_state WHERE room = ?1", room), ==,
                   test_sql_count (store, "SELECT max(row) FROM messages WHERE room = ?1", room));
}

static CatchupWriterStatus *
status_at (Fixture *fx, guint i)
{
  g_assert_cmpuint (i, <, fx->statuses->len);
  return fx->statuses->pdata[i];
}

/* ---------- a full database ---------- */

/* On the writer's own connection (max_page_count is per connection): 0 = the current size is the limit. */
static gpointer
limit_pages (CatchupStore *store, gpointer data, GError **error)
{
  guint limit = GPOINTER_TO_UINT (data);
  g_autofree char *sql = NULL;

  if (limit == 0)
    limit = (guint) test_sql_count (store, "PRAGMA page_count", 0);
  sql = g_strdup_printf ("PRAGMA max_page_count = %u", limit);
  if (!catchup_db_exec (catchup_store_db (store), sql, error))
    return NULL;
  return GUINT_TO_POINTER (1);
}

typedef struct {
  CatchupWriter *writer;
  CatchupWriterFunc func;
  gpointer data;
  GError *error;
  gpointer result;
} SyncJob;

static gpointer
sync_thread (gpointer data)
{
  SyncJob *job = data;

  job->result = catchup_writer_call_sync (job->writer, job->func, job->data, NULL, &job->error);
  return NULL;
}

static gpointer
run_sync (Fixture *fx, CatchupWriterFunc func, gpointer data, GError **error)
{
  SyncJob job = { fx->writer, func, data, NULL, NULL };

  g_thread_join (g_thread_new ("test-sync-call", sync_thread, &job));
  if (job.error != NULL)
    g_propagate_error (error, job.error);
  return job.result;
}

static void
test_full (Fixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  guint64 kept, n_written = 0, n_errors = 0;
  const guint n = 400;

  /* one message first, so that the room and its index exist before the limit */
  add (fx, ROOM_A, 0);
  catchup_writer_flush (fx->writer);
  g_assert_nonnull (run_sync (fx, limit_pages, GUINT_TO_POINTER (0), &error));
  g_assert_no_error (error);

  for (guint i = 1; i < n; i++)
    add (fx, ROOM_A, i);
  /* what fitted in the last free pages is written, the rest kept */
  kept = settle_fault (fx);
  g_assert_cmpuint (kept, >, 0);
  g_assert_cmpuint (kept + written (fx), ==, n);
  /* told once, with the cause and the count */
  g_assert_cmpuint (fx->statuses->len, ==, 1);
  g_assert_cmpint (status_at (fx, 0)->fault, ==, CATCHUP_WRITER_FULL);
  /* the count at the time of telling: writes that arrive later join without a second word */
  g_assert_cmpuint (status_at (fx, 0)->n_kept, >, 0);
  g_assert_cmpuint (status_at (fx, 0)->n_kept, <=, kept);
  g_assert_nonnull (strstr (status_at (fx, 0)->detail, "full"));

  /* more messages while full join the kept ones; calls still run */
  add (fx, ROOM_A, n);
  catchup_writer_flush (fx->writer);
  g_assert_cmpuint (catchup_writer_get_kept (fx->writer), ==, kept + 1);
  g_assert_cmpuint (fx->statuses->len, ==, 1);

  /* space is free again */
  g_assert_nonnull (run_sync (fx, limit_pages, GUINT_TO_POINTER (G_MAXINT32), &error));
  g_assert_no_error (error);
  wait_for (nothing_kept, fx);
  g_assert_cmpuint (fx->statuses->len, ==, 2);
  g_assert_cmpint (status_at (fx, 1)->fault, ==, CATCHUP_WRITER_OK);
  g_assert_cmpuint (status_at (fx, 1)->n_saved, ==, kept + 1);
  catchup_writer_flush (fx->writer);
  assert_stored_once (fx, ROOM_A, n + 1);
  catchup_writer_get_stats (fx->writer, &n_written, &n_errors, NULL);
  g_assert_cmpuint (n_written, ==, n + 1);
  g_assert_cmpuint (n_errors, ==, 0);
}

/* ---------- a lock held by another program ---------- */

static sqlite3 *
open_other (Fixture *fx)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (fx->path, &db), ==, SQLITE_OK);
  return db;
}

static void
test_busy (Fixture *fx, gconstpointer data)
{
  sqlite3 *other;
  const guint n = 300;

  add (fx, ROOM_A, 0);
  catchup_writer_flush (fx->writer);
  other = open_other (fx);
  g_assert_cmpint (sqlite3_exec (other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), ==, SQLITE_OK);

  for (guint i = 1; i < n; i++)
    {
      add (fx, ROOM_A, i);
      add (fx, ROOM_B, i);
    }
  /* nothing can be written while the lock is held */
  g_assert_cmpuint (settle_fault (fx), ==, 2 * (n - 1));
  g_assert_cmpuint (written (fx), ==, 1);
  g_assert_cmpint (status_at (fx, 0)->fault, ==, CATCHUP_WRITER_BUSY);
  /* the main loop never waited: adding returns at once even now */
  {
    gint64 t0 = g_get_monotonic_time ();

    add (fx, ROOM_B, 0);
    g_assert_cmpint (g_get_monotonic_time () - t0, <, 50 * G_TIME_SPAN_MILLISECOND);
  }

  g_assert_cmpint (sqlite3_exec (other, "COMMIT", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (other);
  wait_for (nothing_kept, fx);
  g_assert_cmpint (status_at (fx, fx->statuses->len - 1)->fault, ==, CATCHUP_WRITER_OK);
  g_assert_cmpuint (status_at (fx, fx->statuses->len - 1)->n_saved, ==, 2 * (n - 1) + 1);
  catchup_writer_flush (fx->writer);
  assert_stored_once (fx, ROOM_A, n);
  assert_stored_once (fx, ROOM_B, n);
}

/* ---------- one room's bad batch ---------- */

static GMutex gate_lock;
static GCond gate_cond;
static gboolean gate_open;
static gint gate_entered;

/* Holds the worker until the test opens the gate, so that what is queued meanwhile drains in one round. */
static gpointer
gate_call (CatchupStore *store, gpointer data, GError **error)
{
  g_atomic_int_set (&gate_entered, 1);
  g_mutex_lock (&gate_lock);
  while (!gate_open)
    g_cond_wait (&gate_cond, &gate_lock);
  g_mutex_unlock (&gate_lock);
  return NULL;
}

static void
call_done (GObject *source, GAsyncResult *res, gpointer data)
{
  *(gboolean *) data = TRUE;
}

static void
test_room_isolation (Fixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  sqlite3 *other;
  gboolean gate_done = FALSE;
  guint64 errors = 0;
  gint64 room_b;

  add (fx, ROOM_A, 0);
  add (fx, ROOM_B, 0);
  catchup_writer_flush (fx->writer);
  /* The database refuses one row of room A (a constraint, not a passing fault). */
  other = open_other (fx);
  g_assert_cmpint (sqlite3_exec (other, "CREATE TRIGGER poison BEFORE INSERT ON messages WHEN new.uid = '" ROOM_A
                                        "-5' BEGIN SELECT RAISE (ABORT, 'poisoned row'); END;", NULL, NULL, NULL),
                   ==, SQLITE_OK);
  sqlite3_close (other);

  gate_open = FALSE;
  g_atomic_int_set (&gate_entered, 0);
  catchup_writer_call_async (fx->writer, gate_call, NULL, NULL, NULL, NULL, call_done, &gate_done);
  while (!g_atomic_int_get (&gate_entered))
    g_usleep (1000);
  for (guint i = 1; i < 10; i++)
    {
      add (fx, ROOM_A, i);
      add (fx, ROOM_B, i);
    }
  catchup_writer_add_nick_change (fx->writer, PROTO, ACCOUNT, ROOM_B, 1700000100, "cid", "cid_");
  catchup_writer_mark_present (fx->writer, PROTO, ACCOUNT, ROOM_B, 1700000200);
  g_mutex_lock (&gate_lock);
  gate_open = TRUE;
  g_cond_signal (&gate_cond);
  g_mutex_unlock (&gate_lock);
  catchup_writer_flush (fx->writer);

  /* room B and its rename and presence are in, room A's batch is not, and nothing is kept for retry */
  assert_stored_once (fx, ROOM_B, 10);
  store = catchup_store_open (fx->path, &error);
  g_assert_no_error (error);
  room_b = catchup_store_find_room (store, PROTO "/" ACCOUNT "/" ROOM_B, &error);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM nicks WHERE room = ?1", room_b), ==, 1);
  g_assert_cmpint (test_sql_count (store, "SELECT last_present FROM rooms WHERE id = ?1", room_b), ==,
                   1700000200);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM messages m JOIN rooms r ON r.id = m.room "
                                          "WHERE r.name = '" ROOM_A "'", 0), ==, 1);
  g_assert_cmpuint (catchup_writer_get_kept (fx->writer), ==, 0);
  catchup_writer_get_stats (fx->writer, NULL, &errors, NULL);
  g_assert_cmpuint (errors, ==, 9);
  g_assert_cmpuint (fx->statuses->len, ==, 0);
  while (!gate_done)
    g_main_context_iteration (NULL, TRUE);
}

/* ---------- stopping ---------- */

static void
test_stop_reports_kept (Fixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *reason = NULL;
  sqlite3 *other;
  gint64 t0;
  guint64 n_unsaved;

  add (fx, ROOM_A, 0);
  catchup_writer_flush (fx->writer);
  other = open_other (fx);
  g_assert_cmpint (sqlite3_exec (other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), ==, SQLITE_OK);
  for (guint i = 1; i <= 25; i++)
    add (fx, ROOM_A, i);
  g_assert_cmpuint (settle_fault (fx), ==, 25);

  /* the lock is still held: stopping neither hangs nor drops anything silently */
  t0 = g_get_monotonic_time ();
  n_unsaved = catchup_writer_stop (fx->writer, &reason);
  g_assert_cmpint (g_get_monotonic_time () - t0, <, G_TIME_SPAN_SECOND);
  g_assert_cmpuint (n_unsaved, ==, 25);
  g_assert_nonnull (reason);
  g_assert_nonnull (strstr (reason, "locked"));
  sqlite3_exec (other, "COMMIT", NULL, NULL, NULL);
  sqlite3_close (other);

  /* once stopped, calls are refused and writes counted as not written */
  g_assert_null (run_sync (fx, limit_pages, GUINT_TO_POINTER (0), &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  add (fx, ROOM_A, 99);
  g_assert_cmpuint (catchup_writer_stop (fx->writer, NULL), ==, 26);
}

/* A statement that runs for minutes unless interrupted. */
static gpointer
endless_call (CatchupStore *store, gpointer data, GError **error)
{
  g_atomic_int_set ((gint *) data, 1);
  catchup_db_exec (catchup_store_db (store), "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
                             "SELECT count(*) FROM n", error);
  return NULL;
}

static void
test_stop_interrupts (Fixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  gint started = 0;
  gboolean done = FALSE;
  guint64 n_unsaved;
  gint64 t0;

  catchup_writer_call_async (fx->writer, endless_call, &started, NULL, NULL, NULL, call_done, &done);
  add (fx, ROOM_A, 0);
  while (!g_atomic_int_get (&started))
    g_usleep (1000);
  t0 = g_get_monotonic_time ();
  n_unsaved = catchup_writer_stop (fx->writer, NULL);
  /* the bound is the unload contract; on a machine busier than its cores other processes' load decides it */
  if (test_machine_busy ())
    g_test_message ("stop took %" G_GINT64_FORMAT " ms on a busy machine", (g_get_monotonic_time () - t0) / 1000);
  else
    g_assert_cmpint (g_get_monotonic_time () - t0, <, G_TIME_SPAN_SECOND);
  /* the message queued behind the call is written after the interrupt, or reported: never dropped silently */
  store = catchup_store_open (fx->path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM messages", 0) + (gint64) n_unsaved, ==, 1);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

/* A prune is interrupted by its cancellable: unloading never waits for retention. */
typedef struct {
  CatchupWriter *writer;
  GError *error;
  gboolean done;
} PruneResult;

static void
prune_done (GObject *source, GAsyncResult *res, gpointer data)
{
  PruneResult *r = data;

  g_assert_false (catchup_writer_prune_finish (r->writer, res, NULL, &r->error));
  r->done = TRUE;
}

static void
test_prune_cancelled (Fixture *fx, gconstpointer data)
{
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  PruneResult r = { fx->writer, NULL, FALSE };

  for (guint i = 0; i < 50; i++)
    add (fx, ROOM_A, i);
  g_cancellable_cancel (cancellable);
  catchup_writer_prune_async (fx->writer, 1700000040, cancellable, prune_done, &r);
  while (!r.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_error (r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&r.error);
  catchup_writer_flush (fx->writer);
  assert_stored_once (fx, ROOM_A, 50);
}

/* ---------- the embedding fill stores through the writer ---------- */

typedef struct {
  Fixture *fx;
  guint computed;
  GError *error;
} FillJob;

/* As the plugin's background fill: its own connection, here one that cannot write at all. */
static gpointer
fill_thread (gpointer data)
{
  FillJob *job = data;
  g_autofree char *uri = g_strdup_printf ("file:%s?mode=ro", job->fx->path);
  g_autoptr (CatchupStore) reader = catchup_store_open (uri, &job->error);
  g_autoptr (CatchupEmbedder) embedder = catchup_embedder_new_default ();
  g_autoptr (GArray) rooms = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 room;

  if (reader == NULL)
    return NULL;
  room = catchup_store_find_room (reader, PROTO "/" ACCOUNT "/" ROOM_A, &job->error);
  g_array_append_val (rooms, room);
  catchup_embed_cache_fill_rooms (reader, rooms, embedder, TRUE, catchup_writer_embed_sink, job->fx->writer, NULL,
                                  &job->computed, &job->error);
  return NULL;
}

static void
run_fill (Fixture *fx, FillJob *job)
{
  job->fx = fx;
  job->computed = 0;
  g_clear_error (&job->error);
  g_thread_join (g_thread_new ("test-fill", fill_thread, job));
}

static gint64
stored_vectors (Fixture *fx)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = catchup_store_open (fx->path, &error);

  g_assert_no_error (error);
  return test_sql_count (store, "SELECT count(*) FROM embeddings", 0);
}

static void
test_fill_through_writer (Fixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  FillJob job = { 0 };
  const guint n = 60;

  for (guint i = 0; i < n; i++)
    add (fx, ROOM_A, i);
  catchup_writer_flush (fx->writer);

  /* the database is full: the fill stops with the writer's error and marks nothing as done */
  g_assert_nonnull (run_sync (fx, limit_pages, GUINT_TO_POINTER (0), &error));
  run_fill (fx, &job);
  g_assert_error (job.error, CATCHUP_ERROR, CATCHUP_ERROR_DB_FULL);
  g_assert_cmpint (stored_vectors (fx), ==, 0);

  /* space again: every chunk and turn gets its vector, through the writer, from a read-only connection */
  g_assert_nonnull (run_sync (fx, limit_pages, GUINT_TO_POINTER (G_MAXINT32), &error));
  run_fill (fx, &job);
  g_assert_no_error (job.error);
  g_assert_cmpuint (job.computed, >, n);
  g_assert_cmpint (stored_vectors (fx), ==, job.computed);
  /* nothing left to do */
  run_fill (fx, &job);
  g_assert_no_error (job.error);
  g_assert_cmpuint (job.computed, ==, 0);

  /* a stopped writer refuses the fill's writes instead of losing them quietly */
  add (fx, ROOM_A, n);
  catchup_writer_flush (fx->writer);
  catchup_writer_stop (fx->writer, NULL);
  run_fill (fx, &job);
  g_assert_error (job.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&job.error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(name, fn) g_test_add ("/catchup/writer-faults/" name, Fixture, NULL, fixture_set_up, fn, \
                                  fixture_tear_down)
  ADD ("full", test_full);
  ADD ("busy", test_busy);
  ADD ("room-isolation", test_room_isolation);
  ADD ("stop-reports-kept", test_stop_reports_kept);
  ADD ("stop-interrupts", test_stop_interrupts);
  ADD ("prune-cancelled", test_prune_cancelled);
  ADD ("fill-through-writer", test_fill_through_writer);
#undef ADD
  return g_test_run ();
}
