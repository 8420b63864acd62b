/* The history writer: queued writes reach the database in batches, in order, and all of them. */

#include "config.h"

#include <glib/gstdio.h>

#include "catchup.h"
#include "catchup-store-private.h"
#include "catchup-writer.h"
#include "test-util.h"

#define PROTO "prpl-test"
#define ACCOUNT "me@example"
#define ROOM "#room"
#define SPEC PROTO "/" ACCOUNT "/" ROOM

typedef struct {
  char *dir;
  char *path;
  CatchupWriter *writer;
} Fixture;

static void
fixture_set_up (Fixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  fx->dir = test_tmp_dir ("catchup-writer-XXXXXX");
  fx->path = g_build_filename (fx->dir, "history.db", NULL);
  fx->writer = catchup_writer_new (fx->path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (fx->writer);
}

static void
fixture_tear_down (Fixture *fx, gconstpointer data)
{
  g_autofree char *wal = g_strconcat (fx->path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (fx->path, "-shm", NULL);

  g_clear_pointer (&fx->writer, catchup_writer_free);
  g_unlink (fx->path);
  g_unlink (wal);
  g_unlink (shm);
  g_rmdir (fx->dir);
  g_free (fx->path);
  g_free (fx->dir);
}

static void
add (Fixture *fx, gint64 ts, const char *speaker, const char *text, guint flags)
{
  CatchupMessage *msg = catchup_message_new (NULL, ts, speaker, text);

  msg->flags = flags;
  catchup_writer_add (fx->writer, PROTO, ACCOUNT, ROOM, msg);
}

/* The room's messages as another connection (the engine's, the command-line tool's) sees them. */
static GPtrArray *
stored (Fixture *fx)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = catchup_store_open (fx->path, &error);
  gint64 room;

  g_assert_no_error (error);
  room = catchup_store_find_room (store, SPEC, NULL);
  if (room == 0)
    return g_ptr_array_new ();
  return catchup_store_range (store, room, NULL, NULL, 0, NULL);
}

static void
test_batch (Fixture *fx, gconstpointer data)
{
  g_autoptr (GPtrArray) msgs = NULL;
  guint64 written = 0, errors = 0;
  const guint n = 5000; /* more than one batch */

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *text = g_strdup_printf ("line %u", i);
      add (fx, 1700000000 + i / 10, i % 2 ? "ann" : "bob", text, 0);
    }
  catchup_writer_flush (fx->writer);
  msgs = stored (fx);
  g_assert_cmpuint (msgs->len, ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *text = g_strdup_printf ("line %u", i);
      g_assert_cmpstr (((CatchupMessage *) msgs->pdata[i])->text, ==, text);
    }
  catchup_writer_get_stats (fx->writer, &written, &errors, NULL);
  g_assert_cmpuint (written, ==, n);
  g_assert_cmpuint (errors, ==, 0);
}

static void
test_flush (Fixture *fx, gconstpointer data)
{
  g_autoptr (GPtrArray) first = NULL;
  g_autoptr (GPtrArray) second = NULL;

  add (fx, 1700000000, "ann", "before the flush", 0);
  catchup_writer_flush (fx->writer);
  first = stored (fx);
  g_assert_cmpuint (first->len, ==, 1);
  /* A flush with nothing queued returns at once. */
  catchup_writer_flush (fx->writer);
  add (fx, 1700000001, "bob", "after the flush", 0);
  catchup_writer_flush (fx->writer);
  second = stored (fx);
  g_assert_cmpuint (second->len, ==, 2);
}

static void
test_close (Fixture *fx, gconstpointer data)
{
  g_autoptr (GPtrArray) msgs = NULL;

  for (guint i = 0; i < 300; i++)
    {
      g_autofree char *text = g_strdup_printf ("queued %u", i);
      add (fx, 1700000000 + i, "ann", text, 0);
    }
  catchup_writer_mark_present (fx->writer, PROTO, ACCOUNT, ROOM, 1700000500);
  g_clear_pointer (&fx->writer, catchup_writer_free);
  msgs = stored (fx);
  g_assert_cmpuint (msgs->len, ==, 300);
}

static gpointer
count_call (CatchupStore *store, gpointer data, GError **error)
{
  gint64 room = catchup_store_find_room (store, SPEC, error);
  gint64 *count;

  if (room == 0)
    return NULL;
  count = g_new (gint64, 1);
  *count = catchup_store_count (store, room, error);
  return count;
}

typedef struct {
  CatchupWriter *writer;
  gint64 *count;
  GError *error;
  gboolean done;
} CallResult;

static void
call_done (GObject *source, GAsyncResult *res, gpointer data)
{
  CallResult *r = data;

  r->count = catchup_writer_call_finish (r->writer, res, &r->error);
  r->done = TRUE;
}

static void
test_read_after_write (Fixture *fx, gconstpointer data)
{
  CallResult r = { fx->writer, NULL, NULL, FALSE };

  for (guint i = 0; i < 50; i++)
    {
      g_autofree char *text = g_strdup_printf ("queued %u", i);
      add (fx, 1700000000 + i, "ann", text, 0);
    }
  catchup_writer_call_async (fx->writer, count_call, NULL, NULL, g_free, NULL, call_done, &r);
  /* Callbacks are asynchronous: never before the caller's main context runs. */
  g_assert_false (r.done);
  while (!r.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (r.error);
  g_assert_nonnull (r.count);
  g_assert_cmpint (*r.count, ==, 50);
  g_free (r.count);
}

static void
test_cancelled_call (Fixture *fx, gconstpointer data)
{
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  CallResult r = { fx->writer, NULL, NULL, FALSE };

  add (fx, 1700000000, "ann", "hello", 0);
  g_cancellable_cancel (cancellable);
  catchup_writer_call_async (fx->writer, count_call, NULL, NULL, g_free, cancellable, call_done, &r);
  while (!r.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_error (r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (r.count);
  g_clear_error (&r.error);
}

static guint
count_text (GPtrArray *msgs, const char *text)
{
  guint n = 0;

  for (guint i = 0; i < msgs->len; i++)
    if (g_strcmp0 (((CatchupMessage *) msgs->pdata[i])->text, text) == 0)
      n++;
  return n;
}

typedef struct {
  CatchupWriter *writer;
  guint64 n_deleted;
  GError *error;
  gboolean done;
} PruneResult;

static void
prune_done (GObject *source, GAsyncResult *res, gpointer data)
{
  PruneResult *r = data;

  g_assert_true (catchup_writer_prune_finish (r->writer, res, &r->n_deleted, &r->error));
  r->done = TRUE;
}

/* The prune job sees every write queued before it and none queued after. */
static void
test_prune (Fixture *fx, gconstpointer data)
{
  g_autoptr (GPtrArray) msgs = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (GError) error = NULL;
  PruneResult r = { fx->writer, 0, NULL, FALSE };
  const gint64 cutoff = 1700000000;

  for (guint i = 0; i < 60; i++)
    {
      g_autofree char *text = g_strdup_printf ("line %u about the release", i);
      add (fx, cutoff - 40 + i, "ann", text, 0);
    }
  catchup_writer_add_nick_change (fx->writer, PROTO, ACCOUNT, ROOM, cutoff - 5, "ann", "ann_");
  catchup_writer_prune_async (fx->writer, cutoff, NULL, prune_done, &r);
  add (fx, cutoff - 100, "bob", "late playback, after the prune", 0);
  while (!r.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (r.error);
  g_assert_cmpuint (r.n_deleted, ==, 40);
  catchup_writer_flush (fx->writer);

  msgs = stored (fx);
  g_assert_cmpuint (msgs->len, ==, 21);
  g_assert_cmpuint (count_text (msgs, "late playback, after the prune"), ==, 1);
  store = catchup_store_open (fx->path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM nicks", 0), ==, 0);
  g_assert_true (catchup_db_exec (catchup_store_db (store), "INSERT INTO chunks_fts (chunks_fts) VALUES ('integrity-check')",
                                     &error));
  g_assert_no_error (error);
}

static void
test_playback (Fixture *fx, gconstpointer data)
{
  g_autoptr (GPtrArray) msgs = NULL;
  const gint64 t = 1700000000;

  /* Seen live, then played back stamped a second or two earlier: one message. */
  add (fx, t, "ann", "deploy at ten", 0);
  catchup_writer_flush (fx->writer);
  add (fx, t - 2, "ann", "deploy at ten", CATCHUP_MESSAGE_DELAYED);
  /* Live and playback in one batch. */
  add (fx, t + 10, "bob", "ack", 0);
  add (fx, t + 11, "bob", "ack", CATCHUP_MESSAGE_DELAYED);
  /* The same words again much later are a new turn. */
  add (fx, t + 60, "ann", "deploy at ten", CATCHUP_MESSAGE_DELAYED);
  /* Someone else saying the same is a turn of theirs. */
  add (fx, t + 1, "cid", "deploy at ten", CATCHUP_MESSAGE_DELAYED);
  /* Two playback lines alike, both missed: two turns. */
  add (fx, t + 100, "dee", "ok", CATCHUP_MESSAGE_DELAYED);
  add (fx, t + 101, "dee", "ok", CATCHUP_MESSAGE_DELAYED);
  /* Playback of playback (a second rejoin): the server's time is the same, so is the id. */
  add (fx, t + 100, "dee", "ok", CATCHUP_MESSAGE_DELAYED);
  catchup_writer_flush (fx->writer);

  msgs = stored (fx);
  g_assert_cmpuint (count_text (msgs, "deploy at ten"), ==, 3);
  g_assert_cmpuint (count_text (msgs, "ack"), ==, 1);
  g_assert_cmpuint (count_text (msgs, "ok"), ==, 2);
  g_assert_cmpuint (msgs->len, ==, 6);
}

static void
test_renames_and_presence (Fixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (CatchupRoomInfo) info = NULL;
  g_autoptr (CatchupNicks) nicks = NULL;
  gint64 room;

  add (fx, 1700000000, "ann", "brb", 0);
  catchup_writer_add_nick_change (fx->writer, PROTO, ACCOUNT, ROOM, 1700000010, "ann", "ann_away");
  catchup_writer_mark_present (fx->writer, PROTO, ACCOUNT, ROOM, 1700000030);
  /* Presence never moves back. */
  catchup_writer_mark_present (fx->writer, PROTO, ACCOUNT, ROOM, 1700000005);
  catchup_writer_flush (fx->writer);

  store = catchup_store_open (fx->path, &error);
  g_assert_no_error (error);
  room = catchup_store_find_room (store, SPEC, &error);
  g_assert_no_error (error);
  nicks = catchup_nicks_load (store, room, &error);
  g_assert_no_error (error);
  g_assert_true (catchup_nicks_same (nicks, "ann", "ann_away"));
  info = catchup_store_room_info (store, room, &error);
  g_assert_no_error (error);
  g_assert_cmpint (info->last_present, ==, 1700000030);
  g_assert_cmpint (info->n_messages, ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(name, fn) g_test_add ("/catchup/writer/" name, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("batch", test_batch);
  ADD ("flush", test_flush);
  ADD ("close", test_close);
  ADD ("read-after-write", test_read_after_write);
  ADD ("cancelled-call", test_cancelled_call);
  ADD ("prune", test_prune);
  ADD ("playback", test_playback);
  ADD ("renames-and-presence", test_renames_and_presence);
#undef ADD
  return g_test_run ();
}
