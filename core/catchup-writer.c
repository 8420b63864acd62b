#include "config.h"

#include <glib/gi18n-lib.h>

#include "catchup-embed-cache.h"
#include "catchup-error.h"
#include "catchup-index.h"
#include "catchup-records.h"
#include "catchup-retention.h"
#include "catchup-writer.h"

/* Upper bound of operations drained in one round: keeps a burst from holding the write lock for long. */
#define MAX_BATCH 2000
/* The first pause before kept writes are tried again; it doubles up to CATCHUP_WRITER_RETRY_MAX_MS. */
#define RETRY_MIN_MS 50
/* The worker retries on its own: a lock held by another program is waited for only briefly per attempt. */
#define WRITER_BUSY_TIMEOUT_MS 500

typedef enum {
  OP_ADD,
  OP_NICK,
  OP_PRESENT,
  OP_CALL,
  OP_STOP,
} OpKind;

/* The waiter of catchup_writer_call_sync, on its stack. */
typedef struct {
  GMutex lock;
  GCond cond;
  gboolean done;
  gpointer result;
  GError *error;
} SyncCall;

typedef struct {
  OpKind kind;
  guint64 seq;                  /* queue order, kept across retries */
  gboolean kept;                /* was kept by a fault at least once */
  char *protocol, *account, *room;
  CatchupMessage *msg;
  gint64 ts;
  char *a, *b;                  /* old + new nick */
  GTask *task;                  /* calls: an async one has a task, */
  SyncCall *sync;               /* a sync one a waiter */
  GCancellable *cancellable;    /* of a sync call */
  CatchupWriterFunc func;
  gpointer data;
  GDestroyNotify destroy;
} Op;

struct _CatchupWriter {
  gint ref_count;
  char *path;
  GThread *thread;
  GAsyncQueue *queue;
  CatchupStore *store;          /* the worker's */
  GCancellable *abort;          /* cancelled when stopping takes too long */
  GMainContext *context;        /* where the status function runs */

  /* Worker only. */
  GHashTable *rooms;            /* "protocol\x1faccount\x1froom" -> room id */
  GPtrArray *held;              /* Op*: writes kept by a fault */
  gint64 next_retry;            /* monotonic µs */
  guint retry_ms;
  CatchupWriterFault fault, told_fault;
  char *fault_detail;
  GHashTable *told_rooms;       /* room keys the status function heard of in this fault */
  guint64 n_saved;              /* kept messages written since the fault began */

  GMutex lock;                  /* guards everything below */
  GCond done_cond;
  guint64 seq, queued, done;
  guint64 n_written, n_errors, n_kept;
  char *last_error;
  gboolean stopped;             /* no more operations are taken */
  gboolean finished;            /* the worker has returned */
  guint64 n_unsaved;
  char *unsaved_reason;
  CatchupWriterStatusFunc status_func;
  gpointer status_data;
  GDestroyNotify status_destroy;
};

/* ---------- operations ---------- */

static void
op_free (Op *op)
{
  g_free (op->protocol);
  g_free (op->account);
  g_free (op->room);
  g_clear_pointer (&op->msg, catchup_message_free);
  g_free (op->a);
  g_free (op->b);
  if (op->destroy != NULL)
    op->destroy (op->data);
  g_clear_object (&op->task);
  g_clear_object (&op->cancellable);
  g_free (op);
}

static gboolean
is_write (const Op *op)
{
  return op->kind != OP_CALL && op->kind != OP_STOP;
}

static void
sync_complete (SyncCall *sc, gpointer result, GError *error)
{
  g_mutex_lock (&sc->lock);
  sc->result = result;
  sc->error = error;
  sc->done = TRUE;
  g_cond_signal (&sc->cond);
  g_mutex_unlock (&sc->lock);
}

static void
call_return (Op *op, gpointer result, GError *error)
{
  if (op->sync != NULL)
    sync_complete (op->sync, result, error);
  else if (error != NULL)
    g_task_return_error (op->task, error);
  else
    g_task_return_pointer (op->task, result, g_task_get_task_data (op->task));
}

/* An operation that will never run: a call hears so, a write is counted as not written. */
static void
refuse (CatchupWriter *w, Op *op)
{
  if (op->kind == OP_CALL)
    call_return (op, NULL, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                _("The history writer has stopped")));
  else if (op->kind == OP_ADD)
    {
      g_mutex_lock (&w->lock);
      w->n_unsaved++;
      g_mutex_unlock (&w->lock);
    }
  op_free (op);
}

/* ---------- errors and faults ---------- */

static void
note_error (CatchupWriter *w, const GError *error)
{
  g_debug ("history writer: %s", error->message);
  g_mutex_lock (&w->lock);
  w->n_errors++;
  g_free (w->last_error);
  w->last_error = g_strdup (error->message);
  g_mutex_unlock (&w->lock);
}

/* Faults that pass (space freed, lock released, disk back): the write is kept and tried again. An interrupt
 * only happens while stopping, and what it stopped was not written either. */
static CatchupWriterFault
fault_of (const GError *error)
{
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return CATCHUP_WRITER_IO;
  if (error->domain != CATCHUP_ERROR)
    return CATCHUP_WRITER_OK;
  switch (error->code)
    {
    case CATCHUP_ERROR_DB_FULL:
      return CATCHUP_WRITER_FULL;
    case CATCHUP_ERROR_DB_BUSY:
      return CATCHUP_WRITER_BUSY;
    case CATCHUP_ERROR_DB_IO:
      return CATCHUP_WRITER_IO;
    default:
      return CATCHUP_WRITER_OK;
    }
}

static void
keep (CatchupWriter *w, Op *op, const GError *error)
{
  op->kept = TRUE;
  g_ptr_array_add (w->held, op);
  if (error != NULL)
    {
      w->fault = fault_of (error);
      g_free (w->fault_detail);
      w->fault_detail = g_strdup (error->message);
    }
}

/* A write that failed: kept when the fault passes, otherwise dropped and counted. */
static void
settle (CatchupWriter *w, Op *op, const GError *error)
{
  if (fault_of (error) != CATCHUP_WRITER_OK)
    {
      keep (w, op, error);
      return;
    }
  note_error (w, error);
  op_free (op);
}

/* ---------- the status function ---------- */

static char *
room_key (const Op *op)
{
  return g_strjoin ("\x1f", op->protocol, op->account, op->room, NULL);
}

static void
writer_room_free (CatchupWriterRoom *room)
{
  g_free (room->protocol);
  g_free (room->account);
  g_free (room->name);
  g_free (room);
}

void
catchup_writer_status_free (CatchupWriterStatus *status)
{
  if (status == NULL)
    return;
  g_free (status->detail);
  g_ptr_array_unref (status->rooms);
  g_free (status);
}

/* The kept messages per room, in the order the rooms were first kept. */
static CatchupWriterStatus *
status_snapshot (CatchupWriter *w)
{
  CatchupWriterStatus *status = g_new0 (CatchupWriterStatus, 1);
  g_autoptr (GHashTable) by_key = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  status->fault = w->fault;
  status->detail = g_strdup (w->fault_detail);
  status->rooms = g_ptr_array_new_with_free_func ((GDestroyNotify) writer_room_free);
  for (guint i = 0; i < w->held->len; i++)
    {
      const Op *op = w->held->pdata[i];
      char *key;
      CatchupWriterRoom *room;

      if (op->kind != OP_ADD)
        continue;
      key = room_key (op);
      room = g_hash_table_lookup (by_key, key);
      if (room == NULL)
        {
          room = g_new0 (CatchupWriterRoom, 1);
          room->protocol = g_strdup (op->protocol);
          room->account = g_strdup (op->account);
          room->name = g_strdup (op->room);
          g_ptr_array_add (status->rooms, room);
          g_hash_table_insert (by_key, key, room);
        }
      else
        g_free (key);
      room->n_kept++;
      status->n_kept++;
    }
  return status;
}

typedef struct {
  CatchupWriter *writer;
  CatchupWriterStatus *status;
} StatusDelivery;

static void
status_delivery_free (StatusDelivery *d)
{
  catchup_writer_status_free (d->status);
  catchup_writer_unref (d->writer);
  g_free (d);
}

static gboolean
deliver_status (gpointer data)
{
  StatusDelivery *d = data;
  CatchupWriterStatusFunc func;
  gpointer user_data;

  g_mutex_lock (&d->writer->lock);
  func = d->writer->status_func;
  user_data = d->writer->status_data;
  g_mutex_unlock (&d->writer->lock);
  /* set and cleared on this same thread, so it cannot go away during the call */
  if (func != NULL)
    func (d->status, user_data);
  return G_SOURCE_REMOVE;
}

static void
post_status (CatchupWriter *w, CatchupWriterStatus *status)
{
  StatusDelivery *d = g_new0 (StatusDelivery, 1);

  d->writer = catchup_writer_ref (w);
  d->status = status;
  g_main_context_invoke_full (w->context, G_PRIORITY_DEFAULT, deliver_status, d,
                              (GDestroyNotify) status_delivery_free);
}

/* TRUE when a room with kept messages has not been told of in this fault yet (and marks it told). */
static gboolean
new_rooms_kept (CatchupWriter *w)
{
  gboolean any = FALSE;

  for (guint i = 0; i < w->held->len; i++)
    {
      const Op *op = w->held->pdata[i];

      if (op->kind == OP_ADD)
        any |= g_hash_table_add (w->told_rooms, room_key (op));
    }
  return any;
}

/* After a round: counts what is kept, tells the status function of a new fault, new rooms or the recovery,
 * and when an attempt failed, waits longer before the next. */
static void
update_fault (CatchupWriter *w, gboolean attempted)
{
  guint64 n_kept = 0;

  for (guint i = 0; i < w->held->len; i++)
    n_kept += ((Op *) w->held->pdata[i])->kind == OP_ADD;
  g_mutex_lock (&w->lock);
  w->n_kept = n_kept;
  g_mutex_unlock (&w->lock);

  if (w->held->len == 0)
    {
      if (w->told_fault != CATCHUP_WRITER_OK)
        {
          CatchupWriterStatus *status = status_snapshot (w);

          status->fault = CATCHUP_WRITER_OK;
          g_clear_pointer (&status->detail, g_free);
          status->n_saved = w->n_saved;
          post_status (w, status);
        }
      w->fault = w->told_fault = CATCHUP_WRITER_OK;
      g_clear_pointer (&w->fault_detail, g_free);
      g_hash_table_remove_all (w->told_rooms);
      w->n_saved = 0;
      w->retry_ms = 0;
      return;
    }
  if (new_rooms_kept (w) || w->fault != w->told_fault)
    {
      w->told_fault = w->fault;
      post_status (w, status_snapshot (w));
    }
  if (attempted)
    {
      w->retry_ms = w->retry_ms == 0 ? RETRY_MIN_MS : MIN (w->retry_ms * 2, CATCHUP_WRITER_RETRY_MAX_MS);
      w->next_retry = g_get_monotonic_time () + (gint64) w->retry_ms * 1000;
    }
}

/* ---------- writing ---------- */

/* The messages of one room in a round, written under one savepoint; the ops keep owning the messages, so that
 * a batch that fails can be kept and tried again as it was. */
typedef struct {
  gint64 room;
  GPtrArray *ops;
  GPtrArray *msgs;
} RoomBatch;

static void
room_batch_free (RoomBatch *batch)
{
  g_ptr_array_unref (batch->ops);
  g_ptr_array_unref (batch->msgs);
  g_free (batch);
}

static gint64
room_id (CatchupWriter *w, const Op *op, GError **error)
{
  g_autofree char *key = room_key (op);
  gpointer cached;
  gint64 id;

  if (g_hash_table_lookup_extended (w->rooms, key, NULL, &cached))
    return *(gint64 *) cached;
  id = catchup_store_ensure_room (w->store, op->protocol, op->account, op->room, error);
  if (id != 0)
    g_hash_table_insert (w->rooms, g_steal_pointer (&key), g_memdup2 (&id, sizeof id));
  return id;
}

/* Playback of a line first seen live carries the server's time, the live copy its time of arrival: they can be
 * a second apart, so their derived ids differ. The same speaker and text that close together is one message.
 * Only a live copy counts: playback of a line stored from an earlier playback has the same server time and so
 * the same id, while two playback lines alike are two turns ("ok", "ok") that the user missed both of. */
#define PLAYBACK_SLACK 3

static gboolean
same_turn (const CatchupMessage *live, const CatchupMessage *playback)
{
  return !(live->flags & CATCHUP_MESSAGE_DELAYED) && ABS (live->ts - playback->ts) <= PLAYBACK_SLACK
         && g_strcmp0 (live->speaker, playback->speaker) == 0 && g_strcmp0 (live->text, playback->text) == 0;
}

static gboolean
seen_live (CatchupWriter *w, gint64 room, RoomBatch *batch, const CatchupMessage *msg)
{
  CatchupPos first = { msg->ts - PLAYBACK_SLACK, 0 };
  CatchupPos last = { msg->ts + PLAYBACK_SLACK, G_MAXINT64 };
  g_autoptr (GPtrArray) near = catchup_store_range (w->store, room, &first, &last, 0, NULL);

  for (guint i = 0; batch != NULL && i < batch->msgs->len; i++)
    if (same_turn (batch->msgs->pdata[i], msg))
      return TRUE;
  for (guint i = 0; near != NULL && i < near->len; i++)
    if (same_turn (near->pdata[i], msg))
      return TRUE;
  return FALSE;
}

/* Adds a message to its room's batch; FALSE with error when the room cannot be had. A playback copy of a
 * line already seen live is done with (freed) here. */
static gboolean
gather (CatchupWriter *w, GHashTable *batches, Op *op, GError **error)
{
  gint64 id = room_id (w, op, error);
  RoomBatch *batch;

  if (id == 0)
    return FALSE;
  batch = g_hash_table_lookup (batches, &id);
  if ((op->msg->flags & CATCHUP_MESSAGE_DELAYED) && seen_live (w, id, batch, op->msg))
    {
      op_free (op);
      return TRUE;
    }
  if (batch == NULL)
    {
      batch = g_new0 (RoomBatch, 1);
      batch->room = id;
      batch->ops = g_ptr_array_new ();
      batch->msgs = g_ptr_array_new ();
      g_hash_table_insert (batches, g_memdup2 (&id, sizeof id), batch);
    }
  g_ptr_array_add (batch->ops, op);
  g_ptr_array_add (batch->msgs, op->msg);
  return TRUE;
}

/* One room's messages and their index, all or nothing; the other rooms of the round keep theirs. */
static gboolean
write_room (CatchupWriter *w, RoomBatch *batch, guint *n_inserted, GError **error)
{
  if (!catchup_store_begin (w->store, error))
    return FALSE;
  /* Records derived from the room's new rows are written inside its savepoint: they commit with them. */
  if (!catchup_store_add_batch (w->store, batch->room, batch->msgs, n_inserted, error) ||
      !catchup_index_update (w->store, batch->room, error) ||
      !catchup_records_update (w->store, batch->room, CATCHUP_RECORDS_BATCH, NULL, error))
    {
      catchup_store_rollback (w->store);
      return FALSE;
    }
  return catchup_store_commit (w->store, error);
}

static gboolean
mark_present (CatchupStore *store, gint64 room, gint64 ts, GError **error)
{
  g_autoptr (CatchupRoomInfo) info = catchup_store_room_info (store, room, error);

  if (info == NULL)
    return FALSE;
  if (info->last_present >= ts)
    return TRUE;
  return catchup_store_set_last_present (store, room, ts, error);
}

static gboolean
run_simple_locked (CatchupWriter *w, Op *op, GError **error)
{
  gint64 id = room_id (w, op, error);

  if (id == 0)
    return FALSE;
  switch (op->kind)
    {
    case OP_NICK:
      return catchup_store_add_nick_change (w->store, id, op->ts, op->a, op->b, error);
    case OP_PRESENT:
      return mark_present (w->store, id, op->ts, error);
    default:
      g_assert_not_reached ();
    }
}

/* A nick change or presence mark under its own savepoint. */
static gboolean
run_simple (CatchupWriter *w, Op *op, GError **error)
{
  if (!catchup_store_begin (w->store, error))
    return FALSE;
  if (!run_simple_locked (w, op, error))
    {
      catchup_store_rollback (w->store);
      return FALSE;
    }
  return catchup_store_commit (w->store, error);
}

/* Written ops wait in `applied` for the commit; if it fails they are kept (or dropped) with its error. */
typedef struct {
  GPtrArray *applied;
  guint64 n_inserted;
  gboolean failed;
} Segment;

static void
write_batches (CatchupWriter *w, GHashTable *batches, Segment *seg)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, batches);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      RoomBatch *batch = value;
      g_autoptr (GError) error = NULL;
      guint n = 0;

      gboolean ok = write_room (w, batch, &n, &error);

      for (guint i = 0; i < batch->ops->len; i++)
        if (ok)
          g_ptr_array_add (seg->applied, batch->ops->pdata[i]);
        else
          settle (w, batch->ops->pdata[i], error);
      g_ptr_array_set_size (batch->ops, 0);
      seg->n_inserted += ok ? n : 0;
      seg->failed |= !ok;
    }
}

static void
commit_segment (CatchupWriter *w, Segment *seg)
{
  g_autoptr (GError) error = NULL;
  guint64 n_saved = 0;

  if (!catchup_store_commit (w->store, &error))
    {
      for (guint i = 0; i < seg->applied->len; i++)
        settle (w, seg->applied->pdata[i], error);
      g_ptr_array_set_size (seg->applied, 0);
      seg->failed = TRUE;
      return;
    }
  for (guint i = 0; i < seg->applied->len; i++)
    {
      Op *op = seg->applied->pdata[i];

      n_saved += op->kept && op->kind == OP_ADD;
      op_free (op);
    }
  g_ptr_array_set_size (seg->applied, 0);
  w->n_saved += n_saved;
  g_mutex_lock (&w->lock);
  w->n_written += seg->n_inserted;
  g_mutex_unlock (&w->lock);
}

/* Writes a run of writes (ops between two calls) in one transaction; each op ends up written, kept or
 * dropped. */
static void
write_segment (CatchupWriter *w, GPtrArray *ops)
{
  g_autoptr (GHashTable) batches = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                          (GDestroyNotify) room_batch_free);
  g_autoptr (GPtrArray) applied = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  Segment seg = { applied, 0, FALSE };

  if (ops->len == 0)
    return;
  if (!catchup_store_begin (w->store, &error))
    {
      for (guint i = 0; i < ops->len; i++)
        settle (w, ops->pdata[i], error);
      g_ptr_array_set_size (ops, 0);
      return;
    }
  for (guint i = 0; i < ops->len; i++)
    {
      Op *op = ops->pdata[i];
      gboolean is_add = op->kind == OP_ADD;
      /* gather takes the message into its room's batch (or frees a playback copy) */
      gboolean ok = is_add ? gather (w, batches, op, &error) : run_simple (w, op, &error);

      if (!ok)
        {
          seg.failed = TRUE;
          settle (w, op, error);
          g_clear_error (&error);
        }
      else if (!is_add)
        g_ptr_array_add (applied, op);
    }
  g_ptr_array_set_size (ops, 0);
  write_batches (w, batches, &seg);
  commit_segment (w, &seg);
  /* Rooms created in a transaction that did not commit are gone: their cached ids with them. */
  if (seg.failed)
    g_hash_table_remove_all (w->rooms);
}

static void
run_call (CatchupWriter *w, Op *op)
{
  GCancellable *cancellable = op->task != NULL ? g_task_get_cancellable (op->task) : op->cancellable;
  GError *error = NULL;
  gpointer result;

  if (g_cancellable_set_error_if_cancelled (cancellable, &error))
    {
      call_return (op, NULL, error);
      return;
    }
  catchup_store_set_cancellable (w->store, cancellable);
  result = op->func (w->store, op->data, &error);
  catchup_store_set_cancellable (w->store, NULL);
  /* A call may forget rooms: their cached ids would be stale. */
  g_hash_table_remove_all (w->rooms);
  call_return (op, result, error);
}

/* Runs a round's operations in order and takes them all over. With attempt FALSE (a fault, and the next try is
 * not due), writes join the kept ones untried and only calls run. Returns FALSE when it held the stop
 * request. */
static gboolean
process_batch (CatchupWriter *w, GPtrArray *ops, gboolean attempt)
{
  g_autoptr (GPtrArray) segment = g_ptr_array_new ();
  gboolean running = TRUE;

  for (guint i = 0; i < ops->len; i++)
    {
      Op *op = ops->pdata[i];

      if (is_write (op))
        {
          if (attempt)
            g_ptr_array_add (segment, op);
          else
            keep (w, op, NULL);
          continue;
        }
      /* Calls see every earlier write committed, also from other connections (the engine's). */
      write_segment (w, segment);
      if (op->kind == OP_CALL)
        run_call (w, op);
      else
        running = FALSE;
      op_free (op);
    }
  write_segment (w, segment);
  g_ptr_array_set_size (ops, 0);
  return running;
}

/* ---------- the worker ---------- */

static gint
op_seq_cmp (gconstpointer a, gconstpointer b)
{
  const Op *x = *(Op *const *) a, *y = *(Op *const *) b;

  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Waits for the next operation, or only until the next retry is due while writes are kept. */
static Op *
next_op (CatchupWriter *w)
{
  gint64 wait;

  if (w->held->len == 0)
    return g_async_queue_pop (w->queue);
  wait = w->next_retry - g_get_monotonic_time ();
  if (wait <= 0)
    return g_async_queue_try_pop (w->queue);
  return g_async_queue_timeout_pop (w->queue, (guint64) wait);
}

static gboolean
has_stop (GPtrArray *ops)
{
  return ops->len > 0 && ((Op *) ops->pdata[ops->len - 1])->kind == OP_STOP;
}

/* One round: what arrived, after the kept writes when their retry is due. Returns FALSE after the stop. */
static gboolean
run_round (CatchupWriter *w)
{
  g_autoptr (GPtrArray) fresh = g_ptr_array_new ();
  g_autoptr (GPtrArray) ops = NULL;
  Op *op = next_op (w);
  gboolean attempt, running;
  guint n;

  while (op != NULL)
    {
      g_ptr_array_add (fresh, op);
      if (op->kind == OP_STOP || fresh->len >= MAX_BATCH)
        break;
      op = g_async_queue_try_pop (w->queue);
    }
  n = fresh->len;
  attempt = w->held->len == 0 || g_get_monotonic_time () >= w->next_retry || has_stop (fresh);
  if (attempt && w->held->len > 0)
    {
      ops = g_steal_pointer (&w->held);
      w->held = g_ptr_array_new ();
      g_ptr_array_sort (ops, op_seq_cmp);
      g_ptr_array_extend_and_steal (ops, g_steal_pointer (&fresh));
    }
  else
    ops = g_steal_pointer (&fresh);
  running = process_batch (w, ops, attempt);
  update_fault (w, attempt);

  g_mutex_lock (&w->lock);
  w->done += n;
  g_cond_broadcast (&w->done_cond);
  g_mutex_unlock (&w->lock);
  return running;
}

/* What could not be written by the end is reported, never dropped silently. */
static void
finish (CatchupWriter *w)
{
  guint64 n_unsaved = 0;
  Op *op;

  for (guint i = 0; i < w->held->len; i++)
    {
      op = w->held->pdata[i];
      n_unsaved += op->kind == OP_ADD;
      op_free (op);
    }
  g_ptr_array_set_size (w->held, 0);
  while ((op = g_async_queue_try_pop (w->queue)) != NULL)
    refuse (w, op);
  g_mutex_lock (&w->lock);
  w->n_unsaved += n_unsaved;
  w->n_kept = 0;
  if (w->n_unsaved > 0 && w->unsaved_reason == NULL)
    w->unsaved_reason = g_strdup (w->fault_detail != NULL ? w->fault_detail : _("the writer was stopped"));
  w->finished = TRUE;
  g_cond_broadcast (&w->done_cond);
  g_mutex_unlock (&w->lock);
}

static gpointer
worker (gpointer data)
{
  CatchupWriter *w = data;

  catchup_store_take_over (w->store);
  while (run_round (w))
    ;
  finish (w);
  return NULL;
}

/* ---------- life cycle ---------- */

CatchupWriter *
catchup_writer_new (const char *db_path, GError **error)
{
  CatchupWriter *w;
  CatchupStore *store;

  g_return_val_if_fail (db_path != NULL, NULL);

  /* Opened here so that the caller hears about an unusable database at once; then handed to the worker. */
  store = catchup_store_open (db_path, error);
  if (store == NULL)
    return NULL;
  w = g_new0 (CatchupWriter, 1);
  w->ref_count = 1;
  w->path = g_strdup (db_path);
  w->store = store;
  w->abort = g_cancellable_new ();
  catchup_store_set_abort (store, w->abort);
  catchup_store_set_busy_timeout (store, WRITER_BUSY_TIMEOUT_MS);
  /* from here on the worker's alone (it is closed here again only after the worker has ended) */
  catchup_store_hand_over (store);
  w->context = g_main_context_ref_thread_default ();
  w->rooms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  w->held = g_ptr_array_new ();
  w->told_rooms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  w->queue = g_async_queue_new ();
  g_mutex_init (&w->lock);
  g_cond_init (&w->done_cond);
  w->thread = g_thread_new ("catchup-writer", worker, w);
  return w;
}

CatchupWriter *
catchup_writer_ref (CatchupWriter *writer)
{
  g_return_val_if_fail (writer != NULL, NULL);
  g_atomic_int_inc (&writer->ref_count);
  return writer;
}

void
catchup_writer_unref (CatchupWriter *writer)
{
  if (writer == NULL || !g_atomic_int_dec_and_test (&writer->ref_count))
    return;
  /* the last reference of a writer nobody stopped */
  if (writer->thread != NULL)
    catchup_writer_stop (writer, NULL);
  g_hash_table_unref (writer->rooms);
  g_hash_table_unref (writer->told_rooms);
  g_ptr_array_unref (writer->held);
  g_async_queue_unref (writer->queue);
  g_object_unref (writer->abort);
  g_main_context_unref (writer->context);
  g_mutex_clear (&writer->lock);
  g_cond_clear (&writer->done_cond);
  g_free (writer->fault_detail);
  g_free (writer->unsaved_reason);
  g_free (writer->last_error);
  g_free (writer->path);
  g_free (writer);
}

static Op *
op_new (OpKind kind, const char *protocol, const char *account, const char *room)
{
  Op *op = g_new0 (Op, 1);

  op->kind = kind;
  op->protocol = g_strdup (protocol);
  op->account = g_strdup (account);
  op->room = g_strdup (room);
  return op;
}

static void
push (CatchupWriter *w, Op *op)
{
  g_mutex_lock (&w->lock);
  if (w->stopped)
    {
      g_mutex_unlock (&w->lock);
      refuse (w, op);
      return;
    }
  op->seq = w->seq++;
  w->queued++;
  /* under the lock: nothing can slip in behind the stop request */
  g_async_queue_push (w->queue, op);
  g_mutex_unlock (&w->lock);
}

static void
clear_status_func (CatchupWriter *w)
{
  GDestroyNotify destroy;
  gpointer data;

  g_mutex_lock (&w->lock);
  destroy = w->status_destroy;
  data = w->status_data;
  w->status_func = NULL;
  w->status_data = NULL;
  w->status_destroy = NULL;
  g_mutex_unlock (&w->lock);
  if (destroy != NULL)
    destroy (data);
}

guint64
catchup_writer_stop (CatchupWriter *writer, char **reason)
{
  gint64 deadline = g_get_monotonic_time () + CATCHUP_WRITER_STOP_GRACE_MS * G_TIME_SPAN_MILLISECOND;
  guint64 n_unsaved;

  g_return_val_if_fail (writer != NULL, 0);

  if (reason != NULL)
    *reason = NULL;
  clear_status_func (writer);
  if (writer->thread != NULL)
    {
      g_mutex_lock (&writer->lock);
      if (!writer->stopped)
        {
          Op *stop = op_new (OP_STOP, NULL, NULL, NULL);

          stop->seq = writer->seq++;
          g_async_queue_push (writer->queue, stop);
          writer->stopped = TRUE;
        }
      while (!writer->finished)
        if (!g_cond_wait_until (&writer->done_cond, &writer->lock, deadline))
          break;
      g_mutex_unlock (&writer->lock);
      /* Too slow (a prune, a locked database, a big index update): interrupt it; what was not written by
       * then is counted below. */
      g_cancellable_cancel (writer->abort);
      g_thread_join (writer->thread);
      writer->thread = NULL;
      g_clear_pointer (&writer->store, catchup_store_close);
    }
  g_mutex_lock (&writer->lock);
  n_unsaved = writer->n_unsaved;
  if (reason != NULL && n_unsaved > 0)
    *reason = g_strdup (writer->unsaved_reason);
  g_mutex_unlock (&writer->lock);
  return n_unsaved;
}

void
catchup_writer_free (CatchupWriter *writer)
{
  g_autofree char *reason = NULL;
  guint64 n_unsaved = 0;

  if (writer == NULL)
    return;
  /* a writer stopped before reported its losses then */
  if (writer->thread != NULL)
    n_unsaved = catchup_writer_stop (writer, &reason);
  if (n_unsaved > 0)
    g_warning ("history writer stopped with %" G_GUINT64_FORMAT " messages not written: %s", n_unsaved, reason);
  catchup_writer_unref (writer);
}

const char *
catchup_writer_get_path (CatchupWriter *writer)
{
  return writer->path;
}

void
catchup_writer_set_status_func (CatchupWriter *writer, CatchupWriterStatusFunc func, gpointer user_data,
                                GDestroyNotify destroy)
{
  g_return_if_fail (writer != NULL);

  clear_status_func (writer);
  g_mutex_lock (&writer->lock);
  writer->status_func = func;
  writer->status_data = user_data;
  writer->status_destroy = destroy;
  g_mutex_unlock (&writer->lock);
}

/* ---------- producers ---------- */

void
catchup_writer_add (CatchupWriter *writer, const char *protocol, const char *account, const char *room,
                    CatchupMessage *msg)
{
  Op *op;

  g_return_if_fail (writer != NULL && protocol != NULL && account != NULL && room != NULL && msg != NULL);

  op = op_new (OP_ADD, protocol, account, room);
  op->msg = msg;
  push (writer, op);
}

void
catchup_writer_add_nick_change (CatchupWriter *writer, const char *protocol, const char *account,
                                const char *room, gint64 ts, const char *old_nick, const char *new_nick)
{
  Op *op;

  g_return_if_fail (writer != NULL && protocol != NULL && account != NULL && room != NULL);
  g_return_if_fail (old_nick != NULL && new_nick != NULL);

  op = op_new (OP_NICK, protocol, account, room);
  op->ts = ts;
  op->a = g_strdup (old_nick);
  op->b = g_strdup (new_nick);
  push (writer, op);
}

void
catchup_writer_mark_present (CatchupWriter *writer, const char *protocol, const char *account,
                             const char *room, gint64 ts)
{
  Op *op;

  g_return_if_fail (writer != NULL && protocol != NULL && account != NULL && room != NULL);

  op = op_new (OP_PRESENT, protocol, account, room);
  op->ts = ts;
  push (writer, op);
}

void
catchup_writer_call_async (CatchupWriter *writer, CatchupWriterFunc func, gpointer data,
                           GDestroyNotify destroy, GDestroyNotify result_destroy,
                           GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  Op *op;

  g_return_if_fail (writer != NULL && func != NULL);

  op = op_new (OP_CALL, NULL, NULL, NULL);
  op->func = func;
  op->data = data;
  op->destroy = destroy;
  op->task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (op->task, catchup_writer_call_async);
  /* The task data slot only carries how to free the result. */
  g_task_set_task_data (op->task, result_destroy, NULL);
  push (writer, op);
}

gpointer
catchup_writer_call_finish (CatchupWriter *writer, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == catchup_writer_call_async, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

gpointer
catchup_writer_call_sync (CatchupWriter *writer, CatchupWriterFunc func, gpointer data,
                          GCancellable *cancellable, GError **error)
{
  SyncCall sc = { 0 };
  Op *op;

  g_return_val_if_fail (writer != NULL && func != NULL, NULL);
  g_return_val_if_fail (g_thread_self () != writer->thread, NULL);

  g_mutex_init (&sc.lock);
  g_cond_init (&sc.cond);
  op = op_new (OP_CALL, NULL, NULL, NULL);
  op->func = func;
  op->data = data;
  op->sync = &sc;
  op->cancellable = cancellable != NULL ? g_object_ref (cancellable) : NULL;
  push (writer, op);
  g_mutex_lock (&sc.lock);
  while (!sc.done)
    g_cond_wait (&sc.cond, &sc.lock);
  g_mutex_unlock (&sc.lock);
  g_mutex_clear (&sc.lock);
  g_cond_clear (&sc.cond);
  if (sc.error != NULL)
    {
      g_propagate_error (error, sc.error);
      return NULL;
    }
  return sc.result;
}

static gpointer
embed_write_call (CatchupStore *store, gpointer data, GError **error)
{
  return catchup_embed_cache_write (store, data, error) ? GINT_TO_POINTER (1) : NULL;
}

gboolean
catchup_writer_embed_sink (const CatchupEmbedWrite *write, gpointer writer, GCancellable *cancellable,
                           GError **error)
{
  return catchup_writer_call_sync (writer, embed_write_call, (gpointer) write, cancellable, error) != NULL;
}

static gpointer
records_write_call (CatchupStore *store, gpointer data, GError **error)
{
  return catchup_records_model_store (store, data, error) ? GINT_TO_POINTER (1) : NULL;
}

gboolean
catchup_writer_records_sink (CatchupRecordsModelWrite *write, gpointer writer, GCancellable *cancellable,
                             GError **error)
{
  return catchup_writer_call_sync (writer, records_write_call, write, cancellable, error) != NULL;
}

static gpointer
prune_call (CatchupStore *store, gpointer data, GError **error)
{
  guint64 n_deleted = 0;

  /* the call's cancellable is the store's while it runs */
  if (!catchup_retention_prune (store, *(gint64 *) data, NULL, &n_deleted, error))
    return NULL;
  return g_memdup2 (&n_deleted, sizeof n_deleted);
}

void
catchup_writer_prune_async (CatchupWriter *writer, gint64 cutoff_ts, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (writer != NULL);

  catchup_writer_call_async (writer, prune_call, g_memdup2 (&cutoff_ts, sizeof cutoff_ts), g_free, g_free,
                             cancellable, callback, user_data);
}

gboolean
catchup_writer_prune_finish (CatchupWriter *writer, GAsyncResult *result, guint64 *n_deleted, GError **error)
{
  g_autofree guint64 *n = catchup_writer_call_finish (writer, result, error);

  if (n_deleted)
    *n_deleted = n ? *n : 0;
  return n != NULL;
}

void
catchup_writer_flush (CatchupWriter *writer)
{
  guint64 target;

  g_return_if_fail (writer != NULL);

  g_mutex_lock (&writer->lock);
  target = writer->queued;
  while (writer->done < target && !writer->finished)
    g_cond_wait (&writer->done_cond, &writer->lock);
  g_mutex_unlock (&writer->lock);
}

void
catchup_writer_get_stats (CatchupWriter *writer, guint64 *n_written, guint64 *n_errors, char **last_error)
{
  g_mutex_lock (&writer->lock);
  if (n_written)
    *n_written = writer->n_written;
  if (n_errors)
    *n_errors = writer->n_errors;
  if (last_error)
    *last_error = g_strdup (writer->last_error);
  g_mutex_unlock (&writer->lock);
}

guint64
catchup_writer_get_kept (CatchupWriter *writer)
{
  guint64 n;

  g_mutex_lock (&writer->lock);
  n = writer->n_kept;
  g_mutex_unlock (&writer->lock);
  return n;
}
