#include "config.h"

#include "catchup-error.h"
#include "catchup-records.h"
#include "catchup-writer.h"

/* Upper bound of operations written in one transaction: keeps a burst from holding the write lock for long. */
#define MAX_BATCH 2000

typedef enum {
  OP_ADD,
  OP_EVENT,
  OP_NICK,
  OP_PRESENT,
  OP_CALL,
  OP_STOP,
} OpKind;

typedef struct {
  OpKind kind;
  char *protocol, *account, *room;
  CatchupMessage *msg;
  gint64 ts;
  CatchupRoomEventKind event;
  char *a, *b;                  /* event nick + detail, or old + new nick */
  GTask *task;
  CatchupWriterFunc func;
  gpointer data;
  GDestroyNotify destroy;
} Op;

struct _CatchupWriter {
  char *path;
  GThread *thread;
  GAsyncQueue *queue;
  CatchupStore *store;          /* the worker's */
  GHashTable *rooms;            /* worker only: "protocol\x1faccount\x1froom" -> room id */

  GMutex lock;                  /* guards the counters below */
  GCond done_cond;
  guint64 queued, done;
  guint64 n_written, n_errors;
  char *last_error;
};

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
  g_free (op);
}

static void
note_error (CatchupWriter *w, GError *error)
{
  g_debug ("history writer: %s", error->message);
  g_mutex_lock (&w->lock);
  w->n_errors++;
  g_free (w->last_error);
  w->last_error = g_strdup (error->message);
  g_mutex_unlock (&w->lock);
}

static gint64
room_id (CatchupWriter *w, const Op *op)
{
  g_autofree char *key = g_strjoin ("\x1f", op->protocol, op->account, op->room, NULL);
  g_autoptr (GError) error = NULL;
  gpointer cached;
  gint64 id;

  if (g_hash_table_lookup_extended (w->rooms, key, NULL, &cached))
    return *(gint64 *) cached;
  id = catchup_store_ensure_room (w->store, op->protocol, op->account, op->room, &error);
  if (id == 0)
    {
      note_error (w, error);
      return 0;
    }
  g_hash_table_insert (w->rooms, g_steal_pointer (&key), g_memdup2 (&id, sizeof id));
  return id;
}

static void
write_pending (CatchupWriter *w, GHashTable *pending)
{
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, pending);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_autoptr (GError) error = NULL;
      guint n = 0;

      if (!catchup_store_add_batch (w->store, *(gint64 *) key, value, &n, &error) ||
          !catchup_records_update (w->store, *(gint64 *) key, CATCHUP_RECORDS_BATCH, NULL, &error))
        note_error (w, error);
      g_mutex_lock (&w->lock);
      w->n_written += n;
      g_mutex_unlock (&w->lock);
    }
  g_hash_table_remove_all (pending);
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
seen_live (CatchupWriter *w, gint64 room, GPtrArray *pending, const CatchupMessage *msg)
{
  CatchupPos first = { msg->ts - PLAYBACK_SLACK, 0 };
  CatchupPos last = { msg->ts + PLAYBACK_SLACK, G_MAXINT64 };
  g_autoptr (GPtrArray) near = catchup_store_range (w->store, room, &first, &last, 0, NULL);

  for (guint i = 0; pending != NULL && i < pending->len; i++)
    if (same_turn (pending->pdata[i], msg))
      return TRUE;
  for (guint i = 0; near != NULL && i < near->len; i++)
    if (same_turn (near->pdata[i], msg))
      return TRUE;
  return FALSE;
}

static void
queue_message (CatchupWriter *w, GHashTable *pending, Op *op)
{
  gint64 id = room_id (w, op);
  GPtrArray *msgs;

  if (id == 0)
    return;
  msgs = g_hash_table_lookup (pending, &id);
  if ((op->msg->flags & CATCHUP_MESSAGE_DELAYED) && seen_live (w, id, msgs, op->msg))
    return;
  if (msgs == NULL)
    {
      msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
      g_hash_table_insert (pending, g_memdup2 (&id, sizeof id), msgs);
    }
  g_ptr_array_add (msgs, g_steal_pointer (&op->msg));
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

static void
run_simple (CatchupWriter *w, Op *op)
{
  g_autoptr (GError) error = NULL;
  gint64 id = room_id (w, op);
  gboolean ok = TRUE;

  if (id == 0)
    return;
  switch (op->kind)
    {
    case OP_EVENT:
      ok = catchup_store_add_event (w->store, id, op->ts, op->event, op->a, op->b, &error);
      break;
    case OP_NICK:
      ok = catchup_store_add_nick_change (w->store, id, op->ts, op->a, op->b, &error);
      break;
    case OP_PRESENT:
      ok = mark_present (w->store, id, op->ts, &error);
      break;
    default:
      g_assert_not_reached ();
    }
  if (!ok)
    note_error (w, error);
}

static void
run_call (CatchupWriter *w, Op *op)
{
  GError *error = NULL;
  gpointer result;

  if (g_task_return_error_if_cancelled (op->task))
    return;
  result = op->func (w->store, op->data, &error);
  /* A call may forget rooms: their cached ids would be stale. */
  g_hash_table_remove_all (w->rooms);
  if (error != NULL)
    g_task_return_error (op->task, error);
  else
    g_task_return_pointer (op->task, result, g_task_get_task_data (op->task));
}

static void
begin (CatchupWriter *w)
{
  g_autoptr (GError) error = NULL;

  if (!catchup_store_begin (w->store, &error))
    note_error (w, error);
}

static void
commit (CatchupWriter *w)
{
  g_autoptr (GError) error = NULL;

  if (!catchup_store_commit (w->store, &error))
    {
      note_error (w, error);
      catchup_store_rollback (w->store);
    }
}

/* Runs a drained batch in order; returns FALSE when it held the stop request. */
static gboolean
process_batch (CatchupWriter *w, GPtrArray *ops)
{
  g_autoptr (GHashTable) pending = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                          (GDestroyNotify) g_ptr_array_unref);
  gboolean running = TRUE;

  begin (w);
  for (guint i = 0; i < ops->len; i++)
    {
      Op *op = ops->pdata[i];

      switch (op->kind)
        {
        case OP_ADD:
          queue_message (w, pending, op);
          break;
        case OP_CALL:
          /* Calls see every earlier write committed, also from other connections (the engine's). */
          write_pending (w, pending);
          commit (w);
          run_call (w, op);
          begin (w);
          break;
        case OP_STOP:
          running = FALSE;
          break;
        default:
          run_simple (w, op);
        }
    }
  write_pending (w, pending);
  commit (w);
  return running;
}

static gpointer
worker (gpointer data)
{
  CatchupWriter *w = data;
  gboolean running = TRUE;

  while (running)
    {
      g_autoptr (GPtrArray) ops = g_ptr_array_new_with_free_func ((GDestroyNotify) op_free);
      Op *op = g_async_queue_pop (w->queue);
      guint n;

      do
        g_ptr_array_add (ops, op);
      while (ops->len < MAX_BATCH && (op = g_async_queue_try_pop (w->queue)) != NULL);
      n = ops->len;
      running = process_batch (w, ops);
      g_clear_pointer (&ops, g_ptr_array_unref);

      g_mutex_lock (&w->lock);
      w->done += n;
      g_cond_broadcast (&w->done_cond);
      g_mutex_unlock (&w->lock);
    }
  return NULL;
}

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
  w->path = g_strdup (db_path);
  w->store = store;
  w->rooms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  w->queue = g_async_queue_new ();
  g_mutex_init (&w->lock);
  g_cond_init (&w->done_cond);
  w->thread = g_thread_new ("catchup-writer", worker, w);
  return w;
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
  w->queued++;
  g_mutex_unlock (&w->lock);
  g_async_queue_push (w->queue, op);
}

void
catchup_writer_free (CatchupWriter *writer)
{
  if (writer == NULL)
    return;
  push (writer, op_new (OP_STOP, NULL, NULL, NULL));
  g_thread_join (writer->thread);
  catchup_store_close (writer->store);
  g_hash_table_unref (writer->rooms);
  g_async_queue_unref (writer->queue);
  g_mutex_clear (&writer->lock);
  g_cond_clear (&writer->done_cond);
  g_free (writer->last_error);
  g_free (writer->path);
  g_free (writer);
}

const char *
catchup_writer_get_path (CatchupWriter *writer)
{
  return writer->path;
}

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
catchup_writer_add_event (CatchupWriter *writer, const char *protocol, const char *account, const char *room,
                          gint64 ts, CatchupRoomEventKind kind, const char *nick, const char *detail)
{
  Op *op;

  g_return_if_fail (writer != NULL && protocol != NULL && account != NULL && room != NULL && nick != NULL);

  op = op_new (OP_EVENT, protocol, account, room);
  op->ts = ts;
  op->event = kind;
  op->a = g_strdup (nick);
  op->b = g_strdup (detail);
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

  return g_task_propagate_pointer (G_TASK (result), error);
}

static gpointer
prune_call (CatchupStore *store, gpointer data, GError **error)
{
  guint64 n_deleted = 0;

  if (!catchup_store_prune (store, *(gint64 *) data, &n_deleted, error))
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
  while (writer->done < target)
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
