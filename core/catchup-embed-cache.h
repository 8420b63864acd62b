#pragma once

#include "catchup-embed.h"
#include "catchup-index.h"

G_BEGIN_DECLS

/*
 * Stored model embeddings (the embeddings table of schema v3). A model embedder is slow and may be remote, so
 * chunk and turn vectors are computed in the background as history arrives (catchup_embed_cache_fill_rooms) and
 * only read at catch-up time; a catch-up embeds nothing but its own queries. Rows are keyed by the
 * embedder's name, which changes with the model or the dimension, and by the hash of the embedded text
 * (catchup_index_text_hash).
 */

/* What a single turn is embedded as: "speaker: text". */
char *catchup_embed_turn_text (const CatchupMessage *msg);

/*
 * One write of a fill: n vectors (dim floats each) of texts to store for model; when room is set, the room's
 * turns up to row watermark count as embedded; when prune_keep is set, the vectors of every other model go.
 * Pointers are borrowed for the duration of the write.
 */
typedef struct {
  const char *model;
  guint dim;
  const char *const *texts;
  guint n;
  const float *vecs;
  gint64 room;
  gint64 watermark;
  const char *prune_keep;
} CatchupEmbedWrite;

/* Applies one write in one transaction: on the connection that writes the database. */
gboolean catchup_embed_cache_write (CatchupStore *store, const CatchupEmbedWrite *write, GError **error);

/* Where a fill's writes go when the store it reads from must not write (the history writer owns the
 * database): runs catchup_embed_cache_write on the writing connection and returns when it is done. */
typedef gboolean (*CatchupEmbedSink) (const CatchupEmbedWrite *write, gpointer user_data,
                                      GCancellable *cancellable, GError **error);

/* Embeds, in batches, every chunk text and every turn line of the room that has no vector for the embedder's
 * name yet, reading from store, and stores the vectors through sink (NULL: into store), each batch in its own
 * transaction, so a cancelled or failed fill keeps what it did. computed (may be NULL) gets the number of texts
 * embedded. Safe to run on a thread of its own with its own store: the embedding itself takes no lock. */
gboolean catchup_embed_cache_fill_via (CatchupStore *store, gint64 room, CatchupEmbedder *embedder,
                                       CatchupEmbedSink sink, gpointer sink_data, GCancellable *cancellable,
                                       guint *computed, GError **error);
/* The fill of every room in rooms (gint64 ids), then, with prune, the vectors of other models go: the one
 * history-embedding loop of the tool and the plugin. */
gboolean catchup_embed_cache_fill_rooms (CatchupStore *store, GArray *rooms, CatchupEmbedder *embedder,
                                         gboolean prune, CatchupEmbedSink sink, gpointer sink_data,
                                         GCancellable *cancellable, guint *computed, GError **error);


/* The stored vectors of n texts for model (dim floats each): n * dim floats, all zero for a text without a
 * stored vector of that dimension. found (n entries, may be NULL) says which were stored. */
float *catchup_embed_cache_lookup (CatchupStore *store, const char *model, guint dim, const char *const *texts,
                                   guint n, gboolean *found, GError **error);

/* Calls func with the stored vector (dim floats) of every chunk of the room whose last turn sorts before
 * `before` (NULL: all) and whose text has a vector of model and dimension; the others are skipped. */
typedef void (*CatchupEmbedChunkFunc) (gint64 chunk, const float *vec, gpointer data);
gboolean catchup_embed_cache_foreach_chunk (CatchupStore *store, gint64 room, const char *model, guint dim,
                                            const CatchupPos *before, CatchupEmbedChunkFunc func, gpointer data,
                                            GError **error);

/* Deletes the vectors of every model but keep_model (the one in use); deleted (may be NULL) gets how many. */
gboolean catchup_embed_cache_prune (CatchupStore *store, const char *keep_model, gint64 *deleted, GError **error);
/* How many vectors are stored for model; -1 with error on failure. */
gint64 catchup_embed_cache_count (CatchupStore *store, const char *model, GError **error);
/* The dimension of the vectors stored under a name that starts with prefix ("openai:MODEL:"), 0 when there
 * are none: a catch-up learns the dimension from the cache instead of asking the server. */
guint catchup_embed_cache_stored_dim (CatchupStore *store, const char *prefix, GError **error);

G_END_DECLS
