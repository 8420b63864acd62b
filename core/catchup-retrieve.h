#pragma once

#include "catchup-embed.h"
#include "catchup-embed-cache.h"
#include "catchup-index.h"

G_BEGIN_DECLS

#define CATCHUP_RRF_K 60
#define CATCHUP_RETRIEVE_TOP 30

/* Chunks of the room whose last turn sorts before `before` (NULL: all), best first. GArray of CatchupHit. */
GArray *catchup_retrieve_sparse (CatchupStore *store, gint64 room, const char *query, const CatchupPos *before,
                                 guint top, GError **error);
/* The same for terms already cut by catchup_text_terms (space-separated, as catchup_retrieve_focus gives
 * them): they are not stemmed again (a stem stemmed again can be another word: "releas" -> "relea"). */
GArray *catchup_retrieve_sparse_terms (CatchupStore *store, gint64 room, const char *terms,
                                       const CatchupPos *before, guint top, GError **error);
/* The sparse lists of n_queries queries (terms as for catchup_retrieve_sparse_terms), queries that share most
 * of their terms in one FTS5 pass: out[q] gets query q's best top chunks, scored as bm25() would score them
 * (document frequencies through df_cache as catchup_retrieve_idf keeps it; may be NULL). A term FTS5 would
 * tokenise otherwise than catchup_text_terms (it never cuts such terms) counts as one no chunk holds. */
gboolean catchup_retrieve_sparse_multi (CatchupStore *store, gint64 room, const char *const *queries,
                                        guint n_queries, GHashTable *df_cache, const CatchupPos *before,
                                        guint top, GArray **out, GError **error);
GArray *catchup_retrieve_dense (CatchupStore *store, gint64 room, const float *query_vec,
                                const CatchupPos *before, guint top, GError **error);
/* The dense lists of n_queries query vectors (n_queries * CATCHUP_EMBED_DIM floats) in one pass over the
 * room's chunk vectors; out[q] gets query q's hits, best first. */
gboolean catchup_retrieve_dense_multi (CatchupStore *store, gint64 room, const float *qvecs, guint n_queries,
                                       const CatchupPos *before, guint top, GArray **out, GError **error);
/* The same over a model embedder's vectors stored for the chunks' texts (catchup-embed-cache.h): qvecs holds
 * n_queries * dim floats; chunks without a stored vector of that model and dimension are skipped. */
gboolean catchup_retrieve_dense_model (CatchupStore *store, gint64 room, const char *model, guint dim,
                                       const float *qvecs, guint n_queries, const CatchupPos *before, guint top,
                                       GArray **out, GError **error);
/* Reciprocal rank fusion s(c) = sum 1/(k + rank) over the lists (ranks from 1). */
GArray *catchup_retrieve_fuse (GArray *const *lists, guint n_lists, guint k, guint top);

G_END_DECLS

G_BEGIN_DECLS
/* Inverse document frequency over the chunk index of each distinct term of query (stemmed, no stop words),
 * times the term's count in the query: term -> double*, for scoring single turns the way BM25 scores chunks.
 * df_cache (term -> df as a pointer-sized integer; may be NULL) saves index look-ups across queries. */
GHashTable *catchup_retrieve_idf (CatchupStore *store, const char *query, GHashTable *df_cache,
                                  GError **error);
/* The idf tables of n_queries queries, out[q] for queries[q], their terms looked up in the index together. */
gboolean catchup_retrieve_idf_multi (CatchupStore *store, const char *const *queries, guint n_queries,
                                     GHashTable *df_cache, GHashTable **out, GError **error);
/* The max_terms heaviest terms of an idf table, space-separated: a short query for the FTS5 index (through
 * catchup_retrieve_sparse_terms), whose cost grows with every OR-ed term. */
char *catchup_retrieve_focus (GHashTable *idf, guint max_terms);
/* BM25 of one turn's text against the idf table (k1 = 1.2, b = 0.75 over an average chat turn). */
double catchup_retrieve_turn_bm25 (GHashTable *idf, const char *text);
/* The same over terms already cut by catchup_text_terms (text, TRUE). */
double catchup_retrieve_terms_bm25 (GHashTable *idf, GPtrArray *terms);
G_END_DECLS
