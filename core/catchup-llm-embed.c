#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-error.h"
#include "catchup-llm-embed.h"

typedef struct {
  CatchupEmbedder parent;
  CatchupLlm *llm;
  char *name;
} LlmEmbedder;

static gboolean
has_content (const char *text)
{
  for (; text != NULL && *text; text = g_utf8_next_char (text))
    if (!g_unichar_isspace (g_utf8_get_char (text)))
      return TRUE;
  return FALSE;
}

static void
normalise_into (const float *v, guint dim, float *out)
{
  double norm = 0;

  for (guint i = 0; i < dim; i++)
    norm += (double) v[i] * v[i];
  norm = sqrt (norm);
  for (guint i = 0; i < dim; i++)
    out[i] = norm > 0 ? (float) (v[i] / norm) : 0.0f;
}

/* One request for up to a batch of texts; rows of out for empty texts stay zero. */
static gboolean
embed_batch (LlmEmbedder *self, const char *const *texts, guint n, gboolean is_query, float *out,
             GCancellable *cancellable, GError **error)
{
  const char *prefix = catchup_llm_get_config (self->llm)->query_instruction;
  guint dim = self->parent.dim, got_dim = 0;
  g_autoptr (GPtrArray) sent = g_ptr_array_new_with_free_func (g_free);
  g_autofree guint *rows = g_new (guint, n);
  g_autofree float *vecs = NULL;

  memset (out, 0, sizeof (float) * n * dim);
  for (guint i = 0; i < n; i++)
    {
      if (!has_content (texts[i]))
        continue;
      rows[sent->len] = i;
      g_ptr_array_add (sent, is_query && prefix ? g_strconcat (prefix, texts[i], NULL) : g_strdup (texts[i]));
    }
  if (sent->len == 0)
    return TRUE;
  vecs = catchup_llm_embed (self->llm, (const char *const *) sent->pdata, sent->len, &got_dim, cancellable, error);
  if (vecs == NULL)
    return FALSE;
  if (got_dim != dim)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL,
                   _("The embedding model now answers with %u dimensions instead of %u; was it changed?"), got_dim,
                   dim);
      return FALSE;
    }
  for (guint k = 0; k < sent->len; k++)
    normalise_into (vecs + (gsize) k * dim, dim, out + (gsize) rows[k] * dim);
  return TRUE;
}

static gboolean
llm_embedder_embed (CatchupEmbedder *embedder, const char *const *texts, guint n, gboolean is_query, float *out,
                    GCancellable *cancellable, GError **error)
{
  LlmEmbedder *self = (LlmEmbedder *) embedder;
  guint batch = MAX (catchup_llm_get_config (self->llm)->embed_batch, 1u);

  for (guint start = 0; start < n; start += batch)
    {
      guint count = MIN (batch, n - start);

      if (!embed_batch (self, texts + start, count, is_query, out + (gsize) start * embedder->dim, cancellable,
                        error))
        return FALSE;
    }
  return TRUE;
}

static void
llm_embedder_free (CatchupEmbedder *embedder)
{
  LlmEmbedder *self = (LlmEmbedder *) embedder;

  catchup_llm_unref (self->llm);
  g_free (self->name);
  g_free (self);
}

static guint
probe_dim (CatchupLlm *llm, GCancellable *cancellable, GError **error)
{
  const char *const probe[] = { "dimension probe" };
  g_autofree float *vec = NULL;
  guint dim = 0;

  vec = catchup_llm_embed (llm, probe, 1, &dim, cancellable, error);
  return vec ? dim : 0;
}

CatchupEmbedder *
catchup_llm_embedder_new (CatchupLlm *llm, guint dim, GCancellable *cancellable, GError **error)
{
  const CatchupLlmConfig *config;
  LlmEmbedder *self;

  g_return_val_if_fail (llm != NULL, NULL);

  config = catchup_llm_get_config (llm);
  if (config->embed_model == NULL || *config->embed_model == '\0')
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("No embedding model is configured"));
      return NULL;
    }
  if (dim == 0 && (dim = probe_dim (llm, cancellable, error)) == 0)
    return NULL;

  self = g_new0 (LlmEmbedder, 1);
  self->llm = catchup_llm_ref (llm);
  self->name = g_strdup_printf ("openai:%s:%u", config->embed_model, dim);
  self->parent.name = self->name;
  self->parent.dim = dim;
  self->parent.embed = llm_embedder_embed;
  self->parent.free = llm_embedder_free;
  return &self->parent;
}
