#pragma once

#include <gio/gio.h>

#include "catchup-memory.h"
#include "catchup-summary.h"

G_BEGIN_DECLS

/* Which part of a room to catch up on. */
typedef enum {
  CATCHUP_WINDOW_LAST,     /* the last n messages */
  CATCHUP_WINDOW_SINCE,    /* messages with ts >= since */
  CATCHUP_WINDOW_BETWEEN,  /* from first_id to last_id, inclusive */
} CatchupWindowKind;

typedef struct {
  CatchupWindowKind kind;
  guint last_n;
  gint64 since;
  char *first_id, *last_id;
  guint max_messages;       /* cap (0: none); the newest are kept */
} CatchupWindow;

typedef struct {
  CatchupMemoryOptions memory;
  CatchupLength length;
  char *language;           /* NULL: the room's */
} CatchupOptions;

void catchup_options_init (CatchupOptions *opts);

typedef struct {
  GPtrArray *window;        /* CatchupMessage */
  CatchupMemory *memory;
  CatchupSummary *summary;
  guint window_tokens;
} CatchupResult;

void catchup_result_free (CatchupResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupResult, catchup_result_free)

/* Resolves a window into its messages (CATCHUP_ERROR_NOT_FOUND for bad ids, _INVALID for an empty window). */
GPtrArray *catchup_engine_window (CatchupStore *store, gint64 room, const CatchupWindow *window, GError **error);

/* The whole catch-up, synchronously, on the calling thread's own store. */
CatchupResult *catchup_engine_run (CatchupStore *store, gint64 room, const CatchupWindow *window,
                                   const CatchupOptions *opts, GCancellable *cancellable, GError **error);

/* The same off the caller's thread: opens its own connection to db_path in a worker and finds the room by
 * spec (see catchup_store_find_room). The callback runs on the caller's thread-default main context. */
void catchup_engine_run_async (const char *db_path, const char *room_spec, const CatchupWindow *window,
                               const CatchupOptions *opts, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data);
CatchupResult *catchup_engine_run_finish (GAsyncResult *result, GError **error);

G_END_DECLS
