#pragma once

#include "catchup-store.h"

G_BEGIN_DECLS

/* A chunk and how well it matches a query (higher is better). */
typedef struct {
  gint64 chunk;    /* chunk id */
  double score;
} CatchupHit;

#define CATCHUP_TEXT_HASH_LEN 16

/* The first CATCHUP_TEXT_HASH_LEN bytes of the SHA-256 of text: a chunk's text is stored under it
 * (chunks.text_hash), and a model vector of that text is found by it (catchup-embed-cache.h). */
void catchup_index_text_hash (const char *text, guint8 *out);

/*
 * The retrieval index of a room: chunks of ~128 tokens on turn boundaries with ~32 tokens of overlap, their
 * FTS5 terms and default-embedder vectors. Kept up to date incrementally: appended messages extend the tail;
 * a message that sorts before already-chunked ones (late history playback) re-chunks from the first chunk
 * it touches. Chunks indexed before schema v3 get their text hashes (chunks.text_hash) in the room's first
 * update on a connection. The store does not call the index: whoever adds messages updates it afterwards.
 */
gboolean catchup_index_update (CatchupStore *store, gint64 room, GError **error);
/* Drops every index row of the room (before its messages are deleted). */
gboolean catchup_index_clear (CatchupStore *store, gint64 room, GError **error);
/* A chunk's text (its turns, CatchupMessage, as "speaker: text" lines): what is indexed, hashed and embedded. */
char *catchup_index_chunk_text (GPtrArray *turns);
/* The turns (CatchupMessage) of a chunk's rows blob: little-endian int64 message rows, bytes long. */
GPtrArray *catchup_index_rows_turns (CatchupStore *store, const void *blob, int bytes, GError **error);
/* The turns of a chunk, in order. */
GPtrArray *catchup_index_chunk_turns (CatchupStore *store, gint64 chunk, GError **error);

/*
 * Readers of the index for retrieval (catchup-retrieve.c). `before` limits every one to the chunks whose last
 * turn sorts before it (NULL: all chunks of the room).
 */
/* The chunks matching an FTS5 expression over the index's terms, best BM25 first, at most top; a hit's score
 * is the negated bm25() (higher is better). */
GArray *catchup_index_search (CatchupStore *store, gint64 room, const char *match, const CatchupPos *before,
                              guint top, GError **error);
/* A chunk that matches an FTS5 expression: what BM25 needs of it. */
typedef struct {
  gint64 chunk;
  gint64 index_rows;     /* chunks in the index, every room */
  gint64 index_tokens;   /* indexed terms in the index, every room */
  gint64 tokens;         /* indexed terms in this chunk */
  const gint64 *tf;      /* how often each phrase of the expression occurs in it, in the expression's order */
} CatchupIndexMatch;
typedef void (*CatchupIndexMatchFunc) (const CatchupIndexMatch *m, gpointer data);
/* Calls func with every chunk that matches an FTS5 expression of n_phrases phrases, in no particular order
 * (a match valid only during the call). */
gboolean catchup_index_match_foreach (CatchupStore *store, gint64 room, const char *match, guint n_phrases,
                                      const CatchupPos *before, CatchupIndexMatchFunc func, gpointer data,
                                      GError **error);
/* Calls func with every chunk's default-embedder vector (CATCHUP_EMBED_DIM int8 values; chunks without one
 * are skipped), in no particular order. */
typedef void (*CatchupIndexVecFunc) (gint64 chunk, const gint8 *vec, gpointer data);
gboolean catchup_index_foreach_vec (CatchupStore *store, gint64 room, const CatchupPos *before,
                                    CatchupIndexVecFunc func, gpointer data, GError **error);
/* The number of chunks of every room: the collection size of the index's document frequencies. */
gboolean catchup_index_count_chunks (CatchupStore *store, double *n, GError **error);
/* In how many chunks of every room each of n terms (as catchup_text_terms cuts them) occurs: df[i]. */
gboolean catchup_index_term_docs (CatchupStore *store, const char *const *terms, guint n, double *df,
                                  GError **error);

G_END_DECLS
