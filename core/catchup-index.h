#pragma once

#include "catchup-store.h"

G_BEGIN_DECLS

/*
 * The retrieval index of a room: chunks of ~128 tokens on turn boundaries with ~32 tokens of overlap, their
 * FTS5 terms and default-embedder vectors. Kept up to date incrementally: appended messages extend the tail;
 * a message that sorts before already-chunked ones (late history playback) re-chunks from the first chunk
 * it touches.
 */
gboolean catchup_index_update (CatchupStore *store, gint64 room, GError **error);
/* Drops every index row of the room (before its messages are deleted). */
gboolean catchup_index_clear (CatchupStore *store, gint64 room, GError **error);
/* A chunk's text (its turns, CatchupMessage, as "speaker: text" lines): what is indexed, hashed and embedded. */
char *catchup_index_chunk_text (GPtrArray *turns);
/* The turns (CatchupMessage) of a chunk's rows blob: little-endian int64 message rows, bytes long. */
GPtrArray *catchup_index_rows_turns (CatchupStore *store, const void *blob, int bytes, GError **error);
/* Sets chunks.text_hash where it is missing (chunks indexed before schema v3). */
gboolean catchup_index_fill_text_hashes (CatchupStore *store, GError **error);

G_END_DECLS
