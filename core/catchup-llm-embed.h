#pragma once

#include "catchup-embed.h"
#include "catchup-llm.h"

G_BEGIN_DECLS

/*
 * A CatchupEmbedder over an OpenAI-compatible /embeddings endpoint. Texts go out in batches of the client's
 * embed_batch; queries get the client's query_instruction prefix (instruction-aware models such as
 * Qwen3-Embedding expect "Instruct: ...\nQuery: "); vectors come back L2-normalised. Empty texts are never sent
 * (servers reject them) and get all-zero vectors, as with the default embedder.
 *
 * dim 0 asks the server once for the model's dimension. The embedder's name, "openai:MODEL:DIM", changes with
 * the model or the dimension, which is what invalidates stored vectors.
 */
CatchupEmbedder *catchup_llm_embedder_new (CatchupLlm *llm, guint dim, GCancellable *cancellable, GError **error);

G_END_DECLS
