#pragma once

#include <gio/gio.h>

#include "catchup-llm-config.h"

G_BEGIN_DECLS

/*
 * A client for OpenAI-compatible HTTP endpoints (OpenAI, Ollama, llama.cpp server, vLLM, LM Studio):
 * POST {base}/chat/completions and POST {base}/embeddings through the HTTP transport (catchup-http.h): the
 * requests' payloads, the reading of the answers, and what a client has spent. Every call blocks its thread
 * (run it in a worker: the engine's task, a background job) and is cancelled with G_IO_ERROR_CANCELLED.
 * A CatchupLlm is immutable after creation (apart from its counters) and may be shared between threads.
 */

/* What a client has done so far; the catch-up prints it. */
typedef struct {
  guint chat_calls;         /* HTTP requests to /chat/completions, retries included */
  guint embed_calls;        /* HTTP requests to /embeddings, retries included */
  guint retries;
  guint failures;           /* calls that ended in an error */
  guint64 tokens_sent;      /* the server's usage figures when it sends them, else our own count */
  guint64 tokens_received;  /* reasoning included */
  guint64 tokens_reasoning; /* of tokens_received, what a reasoning model spent thinking (its figure or ours) */
} CatchupLlmStats;

typedef struct _CatchupLlm CatchupLlm;

/* Copies config; CATCHUP_ERROR_INVALID for a bad base URL. */
CatchupLlm *catchup_llm_new (const CatchupLlmConfig *config, GError **error);
CatchupLlm *catchup_llm_ref (CatchupLlm *llm);
void catchup_llm_unref (CatchupLlm *llm);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupLlm, catchup_llm_unref)

const CatchupLlmConfig *catchup_llm_get_config (CatchupLlm *llm);
/* The normalised base URL without any user:password part, fit for messages. */
const char *catchup_llm_get_display_url (CatchupLlm *llm);
void catchup_llm_get_stats (CatchupLlm *llm, CatchupLlmStats *out);

/* One chat completion (temperature 0): the assistant's answer, without the reasoning a reasoning model put
 * before it (a <think> or <thinking> block, or reasoning_content beside the content). system may be NULL.
 * A JSON object is asked for (config json_mode) and thinking switched off (config thinking FALSE) where the
 * server takes the request parameters for it; a server that refuses one (HTTP 400 or 422) is asked again
 * without it, and not asked with it again. An answer cut at max_reply_tokens is asked for once more with twice
 * the limit when the context has room; cut again (or without room) it is CATCHUP_ERROR_MODEL, saying so. */
char *catchup_llm_chat (CatchupLlm *llm, const char *system, const char *user, GCancellable *cancellable,
                        GError **error);
/* Embeddings of n texts, as sent (no prefix, no normalisation): n * *dim floats, row i for texts[i]. */
float *catchup_llm_embed (CatchupLlm *llm, const char *const *texts, guint n, guint *dim,
                          GCancellable *cancellable, GError **error);

G_END_DECLS
