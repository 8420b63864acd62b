#pragma once

#include "catchup-store.h"

G_BEGIN_DECLS

/*
 * What leaves the history: a room forgotten, or everything older than the retention period. Both delete messages
 * the retrieval index was built from, so they keep the index in step (catchup-index.h): above the store and the
 * index in the module order.
 */

/* Deletes the room's messages, index rows, records, settings and events, and the room itself: one transaction. */
gboolean catchup_retention_forget_room (CatchupStore *store, gint64 room, GError **error);
/*
 * Retention: deletes, in every room, the messages, presence events and nick changes with ts < cutoff_ts, and
 * rebuilds the retrieval index of each room that lost messages so that it covers exactly the rest. One
 * transaction per room; rooms keep their row and settings even when no message is left. Stored model
 * embeddings are kept: they are keyed by text hash, shared between rooms, and unused ones cost only space.
 * n_deleted (may be NULL) gets the number of messages deleted. Cancelling stops it within a fraction of a
 * second (G_IO_ERROR_CANCELLED); the rooms done by then stay pruned.
 */
gboolean catchup_retention_prune (CatchupStore *store, gint64 cutoff_ts, GCancellable *cancellable,
                                  guint64 *n_deleted, GError **error);

G_END_DECLS
