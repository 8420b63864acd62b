#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/*
 * Embedders turn text into unit vectors for dense retrieval. The embedded default needs no model and no
 * download: hashed word and character n-gram features folded into CATCHUP_EMBED_DIM dimensions with random
 * signs (a random projection of the sparse feature vector). A model embedder (OpenAI-compatible endpoint)
 * implements the same interface.
 */
#define CATCHUP_EMBED_DIM 256

typedef struct _CatchupEmbedder CatchupEmbedder;

struct _CatchupEmbedder {
  const char *name;      /* stored with vectors: a different name invalidates them */
  guint dim;
  /* Writes dim floats (L2-normalised; all zero for text without terms) for each text. is_query lets
   * instruction-aware models prefix queries. Runs on any thread. */
  gboolean (*embed) (CatchupEmbedder *self, const char *const *texts, guint n, gboolean is_query, float *out,
                     GCancellable *cancellable, GError **error);
  void (*free) (CatchupEmbedder *self);
};

CatchupEmbedder *catchup_embedder_new_default (void);
void catchup_embedder_free (CatchupEmbedder *embedder);
/* NULL or the default embedder: its chunk vectors are in the index; a model's are in the embedding cache. */
gboolean catchup_embedder_is_default (const CatchupEmbedder *embedder);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupEmbedder, catchup_embedder_free)

/* The default embedder, without the vtable: out gets CATCHUP_EMBED_DIM floats. */
void catchup_embed_hashed (const char *text, float *out);
/* The same from terms already cut by catchup_text_terms (text, TRUE). */
void catchup_embed_hashed_terms (GPtrArray *terms, float *out);
float catchup_vec_dot (const float *a, const float *b, guint dim);
/* int8 quantisation for storage (scale 127 over a unit vector). */
void catchup_vec_quantize (const float *v, gint8 *out, guint dim);
/* Both sides quantised: an integer dot product (the hot loop of a dense scan), scaled back to a cosine. */
float catchup_vec_dot_qq (const gint8 *a, const gint8 *b);

G_END_DECLS
