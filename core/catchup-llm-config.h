#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The settings of a model server client: where the user keeps them (a key file), their defaults, and the base
 * URL as users type it normalised into the one the requests go to.
 */

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
/* src's values into dst (whose old strings are not freed), every string copied. */
void catchup_llm_config_copy (const CatchupLlmConfig *src, CatchupLlmConfig *dst);
/* A copy of config on the heap, for catchup_llm_config_free; NULL for NULL. */
CatchupLlmConfig *catchup_llm_config_dup (const CatchupLlmConfig *config);
/* Clears and frees a config on the heap (g_new0, catchup_llm_config_dup); NULL is allowed. */
void catchup_llm_config_free (CatchupLlmConfig *config);

/* Where the user's model settings live: g_get_user_config_dir()/purple-catchup/model.conf. */
char *catchup_llm_config_default_path (void);
/* Reads the [model] group of a key file over config (keys: base_url, chat_model, embed_model, api_key,
 * timeout_ms, connect_timeout_ms, max_retries, retry_base_ms, retry_max_ms, tls_verify, context_tokens,
 * max_reply_tokens, query_instruction, embed_batch, json_mode, thinking); keys that are absent keep their values. A missing file
 * is CATCHUP_ERROR_NOT_FOUND, a malformed one CATCHUP_ERROR_INVALID. The API key is better kept in
 * $CATCHUP_API_KEY than in a file. */
gboolean catchup_llm_config_load (CatchupLlmConfig *config, const char *path, GError **error);

/* "localhost:11434", "http://h:1/", "http://h:1/v1/", "http://h:1/v1/chat/completions" -> "http://h:1/v1".
 * CATCHUP_ERROR_INVALID for anything that is not an http(s) URL. */
char *catchup_llm_normalize_base_url (const char *url, GError **error);
/* The same, and *display the normalised URL without any user:password part, fit for messages. */
char *catchup_llm_normalize_base_url_full (const char *url, char **display, GError **error);

/* Overwrites a secret (an API key, a header holding one) before freeing it: a key should not linger in freed
 * memory that a later allocation or a core dump can show. NULL is allowed. */
void catchup_llm_secret_free (char *secret);

G_END_DECLS
