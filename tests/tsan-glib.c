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

/* real_fn: GLib's function of that name, with the type of GLib's declaration of fn. */
#define REAL_AS(fn, name)                                                                                        \
  static __typeof__ (&fn) real_fn;                                                                               \
  if (real_fn == NULL)                                                                                           \
  real_fn = (__typeof__ (&fn)) real (name)
#define REAL(fn) REAL_AS (fn, #fn)

/* A call after which another thread that gets obj sees what this one wrote: release, then GLib's. */
#define RELEASE_BEFORE(name, params, obj, args)                                                                  \
  void name params                                                                                               \
  {                                                                                                              \
    REAL (name);                                                                                                 \
    __tsan_release (obj);                                                                                        \
    real_fn args;                                                                                                \
  }

/* A call after which this thread sees what the thread that released obj wrote: GLib's, then acquire. */
#define ACQUIRE_AFTER(type, name, params, obj, args)                                                             \
  type name params                                                                                               \
  {                                                                                                              \
    type result;                                                                                                 \
    REAL (name);                                                                                                 \
    result = real_fn args;                                                                                       \
    __tsan_acquire (obj);                                                                                        \
    return result;                                                                                               \
  }

/* The same when the call may fail to get obj (a lock not taken, an empty queue). */
#define ACQUIRE_IF(type, name, params, obj, args)                                                                \
  type name params                                                                                               \
  {                                                                                                              \
    type result;                                                                                                 \
    REAL (name);                                                                                                 \
    result = real_fn args;                                                                                       \
    if (result)                                                                                                  \
      __tsan_acquire (obj);                                                                                      \
    return result;                                                                                               \
  }

/* --- mutexes and condition variables --- */

void
g_mutex_lock (GMutex *mutex)
{
  REAL (g_mutex_lock);
  real_fn (mutex);
  __tsan_acquire (mutex);
}

ACQUIRE_IF (gboolean, g_mutex_trylock, (GMutex *mutex), mutex, (mutex))
RELEASE_BEFORE (g_mutex_unlock, (GMutex *mutex), mutex, (mutex))

void
g_cond_wait (GCond *cond, GMutex *mutex)
{
  REAL (g_cond_wait);
  __tsan_release (mutex);
  real_fn (cond, mutex);
  __tsan_acquire (mutex);
}

gboolean
g_cond_wait_until (GCond *cond, GMutex *mutex, gint64 end_time)
{
  gboolean signalled;
  REAL (g_cond_wait_until);
  __tsan_release (mutex);
  signalled = real_fn (cond, mutex, end_time);
  __tsan_acquire (mutex);
  return signalled;
}

/* --- queues: what is pushed was written before --- */

RELEASE_BEFORE (g_async_queue_push, (GAsyncQueue *queue, gpointer data), queue, (queue, data))
ACQUIRE_AFTER (gpointer, g_async_queue_pop, (GAsyncQueue *queue), queue, (queue))
ACQUIRE_IF (gpointer, g_async_queue_try_pop, (GAsyncQueue *queue), queue, (queue))
ACQUIRE_IF (gpointer, g_async_queue_timeout_pop, (GAsyncQueue *queue, guint64 timeout), queue, (queue, timeout))

/* --- one-time initialisation (macros in GLib's header around the functions) --- */

gboolean
(g_once_init_enter) (volatile void *location)
{
  gboolean first;
  REAL_AS ((g_once_init_enter), "g_once_init_enter");
  first = real_fn (location);
  __tsan_acquire ((void *) location);
  return first;
}

void
(g_once_init_leave) (volatile void *location, gsize result)
{
  REAL_AS ((g_once_init_leave), "g_once_init_leave");
  __tsan_release ((void *) location);
  real_fn (location, result);
}

/* --- reference counts: the last owner sees every other owner's writes --- */

gboolean
g_atomic_ref_count_dec (gatomicrefcount *arc)
{
  gboolean last;
  REAL (g_atomic_ref_count_dec);
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
  REAL (g_task_run_in_thread);
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

RELEASE_BEFORE (g_task_return_pointer, (GTask *task, gpointer result, GDestroyNotify result_destroy), task,
                (task, result, result_destroy))
RELEASE_BEFORE (g_task_return_error, (GTask *task, GError *error), task, (task, error))
RELEASE_BEFORE (g_task_return_boolean, (GTask *task, gboolean result), task, (task, result))
ACQUIRE_AFTER (gpointer, g_task_propagate_pointer, (GTask *task, GError **error), task, (task, error))
ACQUIRE_AFTER (gboolean, g_task_propagate_boolean, (GTask *task, GError **error), task, (task, error))

gboolean
g_task_return_error_if_cancelled (GTask *task)
{
  REAL (g_task_return_error_if_cancelled);
  __tsan_release (task);
  return real_fn (task);
}
