#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/*
 * A client for OpenAI-compatible HTTP endpoints (OpenAI, Ollama, llama.cpp server, vLLM, LM Studio):
 * POST {base}/chat/completions and POST {base}/embeddings over libcurl. Every call blocks its thread; the
 * _async variants run it in a GTask worker and complete on the caller's thread-default main context.
 * A CatchupLlm is immutable after creation (apart from its counters) and may be shared between threads.
 */

/* Answers larger than this are refused while they arrive. */
#define CATCHUP_LLM_MAX_BODY (4u * 1024u * 1024u)
/* Read when CatchupLlmConfig.api_key is unset. */
#define CATCHUP_LLM_API_KEY_ENV "CATCHUP_API_KEY"

typedef struct {
  char *base_url;           /* "http://localhost:11434", ".../v1", ".../v1/" all work */
  char *chat_model;         /* NULL: chat calls fail with CATCHUP_ERROR_INVALID */
  char *embed_model;        /* NULL: embedding calls fail with CATCHUP_ERROR_INVALID */
  char *api_key;            /* sent as a Bearer token, never logged; NULL: $CATCHUP_API_KEY */
  guint timeout_ms;         /* one attempt, connection included */
  guint connect_timeout_ms;
  guint max_retries;        /* extra attempts after a 429 or 5xx */
  guint retry_base_ms;      /* first backoff, doubled per attempt */
  guint retry_max_ms;       /* cap on any wait, Retry-After included */
  gboolean tls_verify;      /* TRUE unless a user explicitly turns it off */
  guint context_tokens;     /* the chat model's context window, for splitting long prompts */
  guint max_reply_tokens;   /* max_tokens asked for in chat calls (0: the server's default) */
  char *query_instruction;  /* prefixed to query embeddings, e.g. "Instruct: ...\nQuery: "; may be NULL */
  guint embed_batch;        /* texts per embeddings request */
  gboolean json_mode;       /* ask for a JSON object (response_format) where the server takes it; TRUE */
  gboolean thinking;        /* FALSE asks a reasoning model's server to switch its thinking off; TRUE */
} CatchupLlmConfig;

/* Fills in the defaults; every string NULL. */
void catchup_llm_config_init (CatchupLlmConfig *config);
/* Frees the strings; the struct itself is the caller's. */
void catchup_llm_config_clear (CatchupLlmConfig *config);
/* Clears and frees a config on the heap (g_new0, g_memdup2); NULL is allowed. */
void catchup_llm_config_free (CatchupLlmConfig *config);

/* Where the user's model settings live: g_get_user_config_dir()/purple-catchup/model.conf. */
char *catchup_llm_config_default_path (void);
/* Reads the [model] group of a key file over config (keys: base_url, chat_model, embed_model, api_key,
 * timeout_ms, connect_timeout_ms, max_retries, retry_base_ms, retry_max_ms, tls_verify, context_tokens,
 * max_reply_tokens, query_instruction, embed_batch, json_mode, thinking); keys that are absent keep their values. A missing file
 * is CATCHUP_ERROR_NOT_FOUND, a malformed one CATCHUP_ERROR_INVALID. The API key is better kept in
 * $CATCHUP_API_KEY than in a file. */
gboolean catchup_llm_config_load (CatchupLlmConfig *config, const char *path, GError **error);

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

/* "localhost:11434", "http://h:1/", "http://h:1/v1/", "http://h:1/v1/chat/completions" -> "http://h:1/v1".
 * CATCHUP_ERROR_INVALID for anything that is not an http(s) URL. */
char *catchup_llm_normalize_base_url (const char *url, GError **error);

/* Copies config; CATCHUP_ERROR_INVALID for a bad base URL. */
CatchupLlm *catchup_llm_new (const CatchupLlmConfig *config, GError **error);
CatchupLlm *catchup_llm_ref (CatchupLlm *llm);
void catchup_llm_unref (CatchupLlm *llm);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupLlm, catchup_llm_unref)

const CatchupLlmConfig *catchup_llm_get_config (CatchupLlm *llm);
/* The normalised base URL without any user:password part, fit for messages. */
const char *catchup_llm_get_display_url (CatchupLlm *llm);
void catchup_llm_get_stats (CatchupLlm *llm, CatchupLlmStats *out);
void catchup_llm_reset_stats (CatchupLlm *llm);

/* One chat completion (temperature 0): the assistant's answer, without the reasoning a reasoning model put
 * before it (a <think> or <thinking> block, or reasoning_content beside the content). system may be NULL.
 * A JSON object is asked for (config json_mode) and thinking switched off (config thinking FALSE) where the
 * server takes the request parameters for it; a server that refuses one (HTTP 400 or 422) is asked again
 * without it, and not asked with it again. An answer cut at max_reply_tokens is asked for once more with twice
 * the limit when the context has room; cut again (or without room) it is CATCHUP_ERROR_MODEL, saying so. */
char *catchup_llm_chat (CatchupLlm *llm, const char *system, const char *user, GCancellable *cancellable,
                        GError **error);
void catchup_llm_chat_async (CatchupLlm *llm, const char *system, const char *user, GCancellable *cancellable,
                             GAsyncReadyCallback callback, gpointer user_data);
char *catchup_llm_chat_finish (CatchupLlm *llm, GAsyncResult *result, GError **error);

/* Embeddings of n texts, as sent (no prefix, no normalisation): n * *dim floats, row i for texts[i]. */
float *catchup_llm_embed (CatchupLlm *llm, const char *const *texts, guint n, guint *dim,
                          GCancellable *cancellable, GError **error);
void catchup_llm_embed_async (CatchupLlm *llm, const char *const *texts, guint n, GCancellable *cancellable,
                              GAsyncReadyCallback callback, gpointer user_data);
float *catchup_llm_embed_finish (CatchupLlm *llm, GAsyncResult *result, guint *dim, GError **error);

G_END_DECLS
