#pragma once

#include <gio/gio.h>

#include "catchup-store.h"

G_BEGIN_DECLS

/*
 * The history writer: a queue and one worker thread that owns its own CatchupStore connection.
 *
 * A chat client must never wait for the disk, so every write is queued and returns at once; the worker drains
 * the queue in batches (one transaction per drained batch, catchup_store_add_batch per room). Operations run in
 * the order they were queued, so a call queued after some messages sees them committed.
 *
 * All functions are meant for one producer thread (the UI's main loop); callbacks of catchup_writer_call_async
 * run on the thread-default main context of the caller.
 */

typedef struct _CatchupWriter CatchupWriter;

/* Runs on the worker thread with its store; returns the task's result (may be NULL without an error). */
typedef gpointer (*CatchupWriterFunc) (CatchupStore *store, gpointer data, GError **error);

/* Opens (creating) the database at db_path and starts the worker. */
CatchupWriter *catchup_writer_new (const char *db_path, GError **error);
/* Writes everything still queued, stops the worker and closes its store. */
void catchup_writer_free (CatchupWriter *writer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupWriter, catchup_writer_free)

const char *catchup_writer_get_path (CatchupWriter *writer);

/* Queues one message of a room (created on first use); takes ownership of msg. */
void catchup_writer_add (CatchupWriter *writer, const char *protocol, const char *account, const char *room,
                         CatchupMessage *msg);
void catchup_writer_add_event (CatchupWriter *writer, const char *protocol, const char *account, const char *room,
                               gint64 ts, CatchupRoomEventKind kind, const char *nick, const char *detail);
void catchup_writer_add_nick_change (CatchupWriter *writer, const char *protocol, const char *account,
                                     const char *room, gint64 ts, const char *old_nick, const char *new_nick);
/* Moves the room's "last present" time forward to ts (never back). */
void catchup_writer_mark_present (CatchupWriter *writer, const char *protocol, const char *account,
                                  const char *room, gint64 ts);

/* Runs func on the worker after everything queued before it. destroy frees data (on the worker thread). */
void catchup_writer_call_async (CatchupWriter *writer, CatchupWriterFunc func, gpointer data,
                                GDestroyNotify destroy, GDestroyNotify result_destroy,
                                GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
gpointer catchup_writer_call_finish (CatchupWriter *writer, GAsyncResult *result, GError **error);

/* Deletes the history older than cutoff_ts (catchup_store_prune) on the worker, after everything queued
 * before it: retention never makes the main loop wait for the disk. */
void catchup_writer_prune_async (CatchupWriter *writer, gint64 cutoff_ts, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
/* n_deleted (may be NULL) gets the number of messages deleted. */
gboolean catchup_writer_prune_finish (CatchupWriter *writer, GAsyncResult *result, guint64 *n_deleted,
                                      GError **error);

/* Blocks until everything queued so far is written. */
void catchup_writer_flush (CatchupWriter *writer);

/* Counters for status lines; safe from the producer thread. last_error may be NULL. */
void catchup_writer_get_stats (CatchupWriter *writer, guint64 *n_written, guint64 *n_errors, char **last_error);

G_END_DECLS
