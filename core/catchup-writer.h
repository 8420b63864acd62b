#pragma once

#include <gio/gio.h>

#include "catchup-embed-cache.h"
#include "catchup-records-model.h"
#include "catchup-store.h"

G_BEGIN_DECLS

/*
 * The history writer: a queue and one worker thread that owns the only writing CatchupStore connection of a
 * database. Everything that writes the history goes through it: messages, presence, settings, retention, and
 * the model vectors the background embedding fill computes on its own thread, and the records the background
 * model writer of records draws.
 *
 * A chat client must never wait for the disk, so every write is queued and returns at once; the worker drains
 * the queue in batches. A batch's writes (the operations between two calls) are one transaction with one
 * savepoint per room and per rename, so a room whose rows fail does not take another room's rows with it.
 * Operations run in the order they were queued, so a call queued after some messages sees them committed —
 * unless they are kept because of a fault:
 *
 * Faults: when the database is full (CATCHUP_ERROR_DB_FULL), locked by another program past the busy timeout
 * (_DB_BUSY) or failing on the disk (_DB_IO), the writes that failed are kept, in order, and retried with a
 * growing pause (up to CATCHUP_WRITER_RETRY_MAX_MS); writes queued meanwhile join them without an attempt,
 * while calls still run. Nothing kept is lost while the writer runs; each write is stored once when the fault
 * clears. The status function hears of the fault once, of each further room that gets kept writes, and of the
 * recovery. Other failures (a bad row) drop only that write and are counted in the stats.
 *
 * Threads: the producer functions (add, renames, calls, flush) are meant for one thread, the UI's main loop;
 * catchup_writer_call_sync is for other threads (a background job). Callbacks of catchup_writer_call_async run
 * on the thread-default main context of the caller; the status function on the context that created the
 * writer.
 */

/* The longest pause between two attempts to write kept history. */
#define CATCHUP_WRITER_RETRY_MAX_MS 2000
/* How long stopping waits for the last writes before it interrupts whatever still runs. */
#define CATCHUP_WRITER_STOP_GRACE_MS 700

typedef struct _CatchupWriter CatchupWriter;

/* Runs on the worker thread with its store; returns the task's result (may be NULL without an error). */
typedef gpointer (*CatchupWriterFunc) (CatchupStore *store, gpointer data, GError **error);

typedef enum {
  CATCHUP_WRITER_OK,
  CATCHUP_WRITER_FULL,   /* disk or quota full */
  CATCHUP_WRITER_BUSY,   /* another program keeps the database locked */
  CATCHUP_WRITER_IO,     /* the disk fails, or the database became read-only */
} CatchupWriterFault;

/* A room with kept writes, and how many of its messages wait. */
typedef struct {
  char *protocol, *account, *name;
  guint64 n_kept;
} CatchupWriterRoom;

typedef struct {
  CatchupWriterFault fault;   /* CATCHUP_WRITER_OK: recovered, everything kept is written */
  guint64 n_kept;             /* messages waiting (renames and presence not counted) */
  guint64 n_saved;            /* on recovery: the kept messages that were written */
  char *detail;               /* SQLite's words for the fault; NULL on recovery */
  GPtrArray *rooms;           /* of CatchupWriterRoom: the rooms with kept messages (empty on recovery) */
} CatchupWriterStatus;

void catchup_writer_status_free (CatchupWriterStatus *status);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupWriterStatus, catchup_writer_status_free)

/* Borrowed status, valid during the call. */
typedef void (*CatchupWriterStatusFunc) (const CatchupWriterStatus *status, gpointer user_data);

/* Opens (creating) the database at db_path and starts the worker. */
CatchupWriter *catchup_writer_new (const char *db_path, GError **error);
/* A background job that queues writes keeps the writer alive with a reference; after the writer is stopped,
 * its queued operations are refused (calls fail with G_IO_ERROR_CANCELLED). */
CatchupWriter *catchup_writer_ref (CatchupWriter *writer);
void catchup_writer_unref (CatchupWriter *writer);
/*
 * Writes what can be written, stops the worker and closes its store, returning within about
 * CATCHUP_WRITER_STOP_GRACE_MS even when a prune or a locked database is in the way (they are interrupted).
 * Returns how many messages could not be written (kept because of a fault, or interrupted); reason (may be
 * NULL) gets why, NULL when everything was written. The status function is not called any more.
 */
guint64 catchup_writer_stop (CatchupWriter *writer, char **reason);
/* Stops (warning about what could not be written) and drops the caller's reference. */
void catchup_writer_free (CatchupWriter *writer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupWriter, catchup_writer_free)

const char *catchup_writer_get_path (CatchupWriter *writer);

/* func (may be NULL) hears of faults and recoveries on the main context that created the writer. */
void catchup_writer_set_status_func (CatchupWriter *writer, CatchupWriterStatusFunc func, gpointer user_data,
                                     GDestroyNotify destroy);

/* Queues one message of a room (created on first use); takes ownership of msg. */
void catchup_writer_add (CatchupWriter *writer, const char *protocol, const char *account, const char *room,
                         CatchupMessage *msg);
void catchup_writer_add_nick_change (CatchupWriter *writer, const char *protocol, const char *account,
                                     const char *room, gint64 ts, const char *old_nick, const char *new_nick);
/* Moves the room's "last present" time forward to ts (never back). */
void catchup_writer_mark_present (CatchupWriter *writer, const char *protocol, const char *account,
                                  const char *room, gint64 ts);

/* Runs func on the worker after everything queued before it. destroy frees data (on the worker thread). While
 * func runs, cancelling interrupts its statements (they fail with G_IO_ERROR_CANCELLED). */
void catchup_writer_call_async (CatchupWriter *writer, CatchupWriterFunc func, gpointer data,
                                GDestroyNotify destroy, GDestroyNotify result_destroy,
                                GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
gpointer catchup_writer_call_finish (CatchupWriter *writer, GAsyncResult *result, GError **error);

/* From a thread other than the worker's and the main loop's: runs func on the worker and waits for it. data
 * stays the caller's. Fails with G_IO_ERROR_CANCELLED when the writer stops first. */
gpointer catchup_writer_call_sync (CatchupWriter *writer, CatchupWriterFunc func, gpointer data,
                                   GCancellable *cancellable, GError **error);

/* A CatchupEmbedSink whose user_data is the writer: a background embedding fill reads from its own store and
 * stores its vectors through the writer, waiting for each write (catchup_writer_call_sync). */
gboolean catchup_writer_embed_sink (const CatchupEmbedWrite *write, gpointer writer, GCancellable *cancellable,
                                    GError **error);

/* A CatchupRecordsModelSink whose user_data is the writer: the background model writer of records asks the
 * model from its own thread and stores each segment's checked actions through the writer, waiting for each. */
gboolean catchup_writer_records_sink (CatchupRecordsModelWrite *write, gpointer writer, GCancellable *cancellable,
                                      GError **error);

/* Deletes the history older than cutoff_ts (catchup_retention_prune) on the worker, after everything queued
 * before it: retention never makes the main loop wait for the disk. Cancelling stops it at once. */
void catchup_writer_prune_async (CatchupWriter *writer, gint64 cutoff_ts, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
/* n_deleted (may be NULL) gets the number of messages deleted. */
gboolean catchup_writer_prune_finish (CatchupWriter *writer, GAsyncResult *result, guint64 *n_deleted,
                                      GError **error);

/* Blocks until everything queued so far is written, or kept because of a fault. */
void catchup_writer_flush (CatchupWriter *writer);

/* Counters for status lines; safe from the producer thread. last_error may be NULL. */
void catchup_writer_get_stats (CatchupWriter *writer, guint64 *n_written, guint64 *n_errors, char **last_error);
/* Messages kept because of a fault, waiting to be written. */
guint64 catchup_writer_get_kept (CatchupWriter *writer);

G_END_DECLS
