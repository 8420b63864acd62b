#include "config.h"

/*
 * ThreadSanitizer sees only instrumented code and the libc calls it intercepts. GLib is neither: its
 * mutexes, condition variables and queues wait on futexes directly, so every hand-off between threads through
 * them looks like a data race, and a TSan report from such a build says nothing. Linked into the TSan build of
 * the tests only (--enable-sanitizers=thread), this file wraps the GLib calls our code makes to hand data
 * between threads and tells TSan the order they guarantee (__tsan_acquire / __tsan_release on the object),
 * then calls GLib's own. A race in our code, or one GLib does not order, is still reported. Nothing is
 * suppressed.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>

#include <gio/gio.h>

void __tsan_acquire (void *addr);
void __tsan_release (void *addr);

/* GLib's definition of a function this file replaces; aborts when there is none. */
static gpointer
real (const char *name)
{
  gpointer f = dlsym (RTLD_NEXT, name);

  if (f == NULL)
    g_error ("tsan-glib: no %s in GLib", name);
  return f;
}

#define REAL(ret, name, args)                                                                                    \
  static ret (*real_fn) args;                                                                                    \
  if (real_fn == NULL)                                                                                           \
    real_fn = (ret (*) args) real (name)

/* --- mutexes and condition variables --- */

void
g_mutex_lock (GMutex *mutex)
{
  REAL (void, "g_mutex_lock", (GMutex *));
  real_fn (mutex);
  __tsan_acquire (mutex);
}

gboolean
g_mutex_trylock (GMutex *mutex)
{
  gboolean locked;
  REAL (gboolean, "g_mutex_trylock", (GMutex *));
  locked = real_fn (mutex);
  if (locked)
    __tsan_acquire (mutex);
  return locked;
}

void
g_mutex_unlock (GMutex *mutex)
{
  REAL (void, "g_mutex_unlock", (GMutex *));
  __tsan_release (mutex);
  real_fn (mutex);
}

void
g_cond_wait (GCond *cond, GMutex *mutex)
{
  REAL (void, "g_cond_wait", (GCond *, GMutex *));
  __tsan_release (mutex);
  real_fn (cond, mutex);
  __tsan_acquire (mutex);
}

gboolean
g_cond_wait_until (GCond *cond, GMutex *mutex, gint64 end_time)
{
  gboolean signalled;
  REAL (gboolean, "g_cond_wait_until", (GCond *, GMutex *, gint64));
  __tsan_release (mutex);
  signalled = real_fn (cond, mutex, end_time);
  __tsan_acquire (mutex);
  return signalled;
}

/* --- queues: what is pushed was written before --- */

void
g_async_queue_push (GAsyncQueue *queue, gpointer data)
{
  REAL (void, "g_async_queue_push", (GAsyncQueue *, gpointer));
  __tsan_release (queue);
  real_fn (queue, data);
}

gpointer
g_async_queue_pop (GAsyncQueue *queue)
{
  gpointer data;
  REAL (gpointer, "g_async_queue_pop", (GAsyncQueue *));
  data = real_fn (queue);
  __tsan_acquire (queue);
  return data;
}

gpointer
g_async_queue_try_pop (GAsyncQueue *queue)
{
  gpointer data;
  REAL (gpointer, "g_async_queue_try_pop", (GAsyncQueue *));
  data = real_fn (queue);
  if (data != NULL)
    __tsan_acquire (queue);
  return data;
}

gpointer
g_async_queue_timeout_pop (GAsyncQueue *queue, guint64 timeout)
{
  gpointer data;
  REAL (gpointer, "g_async_queue_timeout_pop", (GAsyncQueue *, guint64));
  data = real_fn (queue, timeout);
  if (data != NULL)
    __tsan_acquire (queue);
  return data;
}

/* --- one-time initialisation --- */

gboolean
(g_once_init_enter) (volatile void *location)
{
  gboolean first;
  REAL (gboolean, "g_once_init_enter", (volatile void *));
  first = real_fn (location);
  __tsan_acquire ((void *) location);
  return first;
}

void
(g_once_init_leave) (volatile void *location, gsize result)
{
  REAL (void, "g_once_init_leave", (volatile void *, gsize));
  __tsan_release ((void *) location);
  real_fn (location, result);
}

/* --- reference counts: the last owner sees every other owner's writes --- */

gboolean
g_atomic_ref_count_dec (gatomicrefcount *arc)
{
  gboolean last;
  REAL (gboolean, "g_atomic_ref_count_dec", (gatomicrefcount *));
  __tsan_release (arc);
  last = real_fn (arc);
  if (last)
    __tsan_acquire (arc);
  return last;
}

/* --- GTask: the thread function runs after g_task_run_in_thread, the result is read after it is set --- */

static pthread_mutex_t funcs_lock = PTHREAD_MUTEX_INITIALIZER;
static GHashTable *funcs; /* GTask -> its GTaskThreadFunc, until the thread runs it */

static void
run_func (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GTaskThreadFunc func;

  __tsan_acquire (task);
  pthread_mutex_lock (&funcs_lock);
  func = (GTaskThreadFunc) g_hash_table_lookup (funcs, task);
  g_hash_table_remove (funcs, task);
  pthread_mutex_unlock (&funcs_lock);
  func (task, source, task_data, cancellable);
}

void
g_task_run_in_thread (GTask *task, GTaskThreadFunc func)
{
  REAL (void, "g_task_run_in_thread", (GTask *, GTaskThreadFunc));
  pthread_mutex_lock (&funcs_lock);
  if (funcs == NULL)
    funcs = g_hash_table_new (NULL, NULL);
  g_hash_table_insert (funcs, task, (gpointer) func);
  pthread_mutex_unlock (&funcs_lock);
  /* The pool thread often drops the task's last reference, and with it the last one of the caller's main
   * context, freeing what the caller's thread polled: ordered by GLib's atomic reference counts, which TSan
   * cannot see. One reference more per task keeps every context alive (a small leak, in this build only). */
  g_main_context_ref (g_task_get_context (task));
  __tsan_release (task);
  real_fn (task, run_func);
}

void
g_task_return_pointer (GTask *task, gpointer result, GDestroyNotify result_destroy)
{
  REAL (void, "g_task_return_pointer", (GTask *, gpointer, GDestroyNotify));
  __tsan_release (task);
  real_fn (task, result, result_destroy);
}

void
g_task_return_error (GTask *task, GError *error)
{
  REAL (void, "g_task_return_error", (GTask *, GError *));
  __tsan_release (task);
  real_fn (task, error);
}

void
g_task_return_boolean (GTask *task, gboolean result)
{
  REAL (void, "g_task_return_boolean", (GTask *, gboolean));
  __tsan_release (task);
  real_fn (task, result);
}

gboolean
g_task_return_error_if_cancelled (GTask *task)
{
  REAL (gboolean, "g_task_return_error_if_cancelled", (GTask *));
  __tsan_release (task);
  return real_fn (task);
}

gpointer
g_task_propagate_pointer (GTask *task, GError **error)
{
  gpointer result;
  REAL (gpointer, "g_task_propagate_pointer", (GTask *, GError **));
  result = real_fn (task, error);
  __tsan_acquire (task);
  return result;
}

gboolean
g_task_propagate_boolean (GTask *task, GError **error)
{
  gboolean result;
  REAL (gboolean, "g_task_propagate_boolean", (GTask *, GError **));
  result = real_fn (task, error);
  __tsan_acquire (task);
  return result;
}
