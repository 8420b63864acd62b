/*
 * bench-records — what the rule-based writer of records costs where a live room writes: one message a batch.
 *
 * Copies a database (one of bench-speed's, `--workdir`), then adds --messages single-message batches to its
 * largest room the way the history writer does (a savepoint with the rows, their chunk index and their
 * records), each a line of the room's own history spoken by one of its speakers, and prints the CPU time of
 * the store and index step and of the records step per message (CLOCK_THREAD_CPUTIME_ID), and the records
 * written. Nothing here passes or fails.
 *
 * --new-speaker N makes every Nth line a newcomer's (the prepared roster is rebuilt for a new speaker).
 * --keep leaves the copy in the work folder, so that its chunk index can be compared between builds.
 *
 * usage: bench-records --db HISTORY.db [--messages 200] [--new-speaker N] [--workdir DIR] [--keep]
 */
#include "config.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <time.h>

#include "catchup.h"

static double
thread_cpu_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static gboolean
copy_file (const char *from, const char *to, GError **error)
{
  g_autoptr (GFile) src = g_file_new_for_path (from);
  g_autoptr (GFile) dst = g_file_new_for_path (to);

  return g_file_copy (src, dst, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, error);
}

/* The copy and its WAL and shared-memory files, so that no run sees another's. */
static void
remove_db (const char *path)
{
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (path, "-shm", NULL);

  g_unlink (path);
  g_unlink (wal);
  g_unlink (shm);
}

static gint64
largest_room (CatchupStore *store, GError **error)
{
  g_autoptr (GPtrArray) rooms = catchup_store_list_rooms (store, error);
  gint64 best = 0;
  gint64 most = 0;

  for (guint i = 0; rooms && i < rooms->len; i++)
    {
      CatchupRoomInfo *r = rooms->pdata[i];

      if (r->n_messages >= most)
        {
          most = r->n_messages;
          best = r->id;
        }
    }
  return best;
}

/* CPU milliseconds of each step of the writer's room batch, summed over the messages. */
typedef struct {
  double rows, index, records, commit;
} StepTimes;

/* One message written as the history writer writes a room's batch; each step's CPU time added up. */
static gboolean
write_one (CatchupStore *store, gint64 room, CatchupMessage *msg, StepTimes *times, guint *n_records,
           GError **error)
{
  g_autoptr (GPtrArray) batch = g_ptr_array_new ();
  double t0, t1, t2, t3;
  guint n = 0;

  g_ptr_array_add (batch, msg);
  if (!catchup_store_begin (store, error))
    return FALSE;
  t0 = thread_cpu_ms ();
  if (!catchup_store_add_batch (store, room, batch, NULL, error))
    return FALSE;
  t1 = thread_cpu_ms ();
  if (!catchup_index_update (store, room, error))
    return FALSE;
  t2 = thread_cpu_ms ();
  if (!catchup_records_update (store, room, CATCHUP_RECORDS_BATCH, &n, error))
    return FALSE;
  t3 = thread_cpu_ms ();
  times->rows += t1 - t0;
  times->index += t2 - t1;
  times->records += t3 - t2;
  *n_records += n;
  if (!catchup_store_commit (store, error))
    return FALSE;
  times->commit += thread_cpu_ms () - t3;
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autofree char *db = NULL, *workdir = NULL, *copy = NULL;
  gint n_messages = 200, new_every = 0;
  gboolean keep = FALSE;
  const GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db, "History database to copy (bench-speed --workdir)", "DB" },
    { "messages", 0, 0, G_OPTION_ARG_INT, &n_messages, "Single-message batches to add (200)", "N" },
    { "new-speaker", 0, 0, G_OPTION_ARG_INT, &new_every, "Every Nth line is a newcomer's (0: none)", "N" },
    { "workdir", 0, 0, G_OPTION_ARG_FILENAME, &workdir, "Folder for the copy (a temporary one)", "DIR" },
    { "keep", 0, 0, G_OPTION_ARG_NONE, &keep, "Keep the copy (records.db in the work folder)", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- the records writer's cost per live message");
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (GPtrArray) lines = NULL;
  g_auto (GStrv) roster = NULL;
  StepTimes times = { 0 };
  guint n_records = 0, n_roster;
  gint64 room;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || db == NULL)
    {
      fprintf (stderr, "%s\n", error ? error->message : "--db is required");
      return 2;
    }
  if (workdir == NULL && (workdir = g_dir_make_tmp ("bench-records-XXXXXX", &error)) == NULL)
    goto fail;
  copy = g_build_filename (workdir, "records.db", NULL);
  remove_db (copy);
  if (!copy_file (db, copy, &error) || (store = catchup_store_open (copy, &error)) == NULL ||
      (room = largest_room (store, &error)) == 0 ||
      (roster = catchup_records_roster (store, room, &error)) == NULL ||
      (lines = catchup_store_before (store, room, NULL, (guint) n_messages, &error)) == NULL ||
      /* the roster and the statements are ready before the first message, as in a writer that has run a while */
      !catchup_records_update (store, room, CATCHUP_RECORDS_BATCH, NULL, &error))
    goto fail;
  n_roster = g_strv_length (roster);
  for (gint i = 0; i < n_messages && lines->len > 0 && n_roster > 0; i++)
    {
      const CatchupMessage *line = lines->pdata[(guint) i % lines->len];
      g_autofree char *id = g_strdup_printf ("bench-live-%d", i);
      g_autofree char *newcomer = g_strdup_printf ("newcomer%d", i);
      /* the room's speakers, most active first, as a live room's lines come mostly from its regulars */
      const char *speaker = new_every > 0 && i % new_every == 0 ? newcomer : roster[(guint) i % MIN (n_roster, 20)];
      CatchupMessage *msg = catchup_message_new (id, line->ts + 86400, speaker, line->text);

      if (!write_one (store, room, msg, &times, &n_records, &error))
        {
          catchup_message_free (msg);
          goto fail;
        }
      catchup_message_free (msg);
    }
  printf ("messages %d  speakers %u  records %u  store+index %.3f ms/msg  records %.3f ms/msg (CPU)\n", n_messages,
          n_roster, n_records, (times.rows + times.index) / n_messages, times.records / n_messages);
  printf ("per message, CPU ms: rows %.3f  index %.3f  records %.3f  commit %.3f  all %.3f\n",
          times.rows / n_messages, times.index / n_messages, times.records / n_messages, times.commit / n_messages,
          (times.rows + times.index + times.records + times.commit) / n_messages);
  g_clear_pointer (&store, catchup_store_close);
  if (keep)
    printf ("kept %s\n", copy);
  else
    remove_db (copy);
  return 0;

fail:
  fprintf (stderr, "bench-records: %s\n", error ? error->message : "no room");
  return 1;
}
