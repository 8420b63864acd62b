#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "catchup-llm-config.h"

G_BEGIN_DECLS

/*
 * The transport to an OpenAI-compatible model server: JSON POSTs under its base URL with the key, timeouts,
 * TLS and proxy rules of a CatchupLlmConfig, retries of 429 and 5xx answers (backoff, or as Retry-After says),
 * and the server's refusals turned into messages a user can act on. The HTTP exchange itself is the transport
 * module's (catchup-http-module.h), loaded at the first request. Every call blocks its thread; a CatchupHttp
 * is immutable after creation and may be shared between threads.
 */

/* Answers larger than this are refused while they arrive. */
#define CATCHUP_HTTP_MAX_BODY (4u * 1024u * 1024u)

typedef struct _CatchupHttp CatchupHttp;

/* A client for config's server: base URL normalised, the API key from config or else $CATCHUP_API_KEY.
 * CATCHUP_ERROR_INVALID for a bad base URL. */
CatchupHttp *catchup_http_new (const CatchupLlmConfig *config, GError **error);
void catchup_http_free (CatchupHttp *http);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupHttp, catchup_http_free)

/* The normalised base URL; the same without any user:password part, fit for messages; the key in use (NULL:
 * none). */
const char *catchup_http_get_base_url (CatchupHttp *http);
const char *catchup_http_get_display_url (CatchupHttp *http);
const char *catchup_http_get_api_key (CatchupHttp *http);

/* POSTs payload to the base URL + path ("/chat/completions") and returns the JSON object answered, or NULL
 * with G_IO_ERROR_CANCELLED, CATCHUP_ERROR_NETWORK (no answer), CATCHUP_ERROR_HTTP (a refusal: *status gets its
 * HTTP status, else 0) or CATCHUP_ERROR_MODEL (no JSON object). model names the model in messages. *attempts
 * (may be NULL) gets the number of HTTP requests made, retries included. */
JsonObject *catchup_http_post_json (CatchupHttp *http, const char *path, const char *model, const char *payload,
                                    GCancellable *cancellable, guint *attempts, long *status, GError **error);

/* The body of a successful (200, JSON) answer through the same reading as a real one, for tests and fuzzing. */
JsonObject *catchup_http_read_body (CatchupHttp *http, const char *body, gsize len, GError **error);

G_END_DECLS
