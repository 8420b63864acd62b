#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "catchup-error.h"
#include "catchup-json.h"
#include "catchup-llm-private.h"
#include "catchup-llm-prompt.h"
#include "catchup-text.h"

struct _CatchupLlm {
  gatomicrefcount ref;
  CatchupLlmConfig config;  /* base_url normalised, api_key resolved */
  char *display_url;
  char *auth_header;        /* NULL without a key */
  char *no_proxy;
  GMutex lock;              /* guards stats */
  CatchupLlmStats stats;
  gint refused;             /* ChatExtra bits the server refused: never sent again by this client */
};

/* Optional request parameters of a chat call: useful where a server takes them, never needed. */
typedef enum {
  EXTRA_RESPONSE_FORMAT = 1 << 0,   /* {"type": "json_object"}: OpenAI, llama.cpp, vLLM, Ollama */
  EXTRA_REASONING_EFFORT = 1 << 1,  /* "none": Ollama switches thinking off */
  EXTRA_TEMPLATE_KWARGS = 1 << 2,   /* {"enable_thinking": false}: vLLM, SGLang, llama.cpp (Qwen3 templates) */
} ChatExtra;

static const char *const extra_names[] = { "response_format", "reasoning_effort", "chat_template_kwargs" };

typedef enum { ENDPOINT_CHAT, ENDPOINT_EMBED } Endpoint;

static const char *const endpoint_paths[] = { "/chat/completions", "/embeddings" };

/* What one HTTP exchange brought back. */
typedef struct {
  long status;
  GBytes *body;
  char *content_type;
  gint64 retry_after_s;     /* -1: no Retry-After */
} Response;

/* Where the body goes while it arrives. */
typedef struct {
  GByteArray *body;
  gboolean too_large;
  GCancellable *cancellable;
} Sink;

void
catchup_llm_config_init (CatchupLlmConfig *config)
{
  memset (config, 0, sizeof *config);
  config->timeout_ms = 60000;
  config->connect_timeout_ms = 10000;
  config->max_retries = 2;
  config->retry_base_ms = 500;
  /* Someone is waiting for the catch-up: a server asking for minutes gets seconds, then an error. */
  config->retry_max_ms = 10000;
  config->tls_verify = TRUE;
  config->context_tokens = 8192;
  config->max_reply_tokens = 2048;
  config->embed_batch = 32;
  config->json_mode = TRUE;
  config->thinking = TRUE;
}

static void
wipe_free (char *secret)
{
  /* A key should not linger in freed memory that a later allocation or a core dump can show. */
  if (secret != NULL)
    memset (secret, 0, strlen (secret));
  g_free (secret);
}

void
catchup_llm_config_clear (CatchupLlmConfig *config)
{
  g_clear_pointer (&config->base_url, g_free);
  g_clear_pointer (&config->chat_model, g_free);
  g_clear_pointer (&config->embed_model, g_free);
  g_clear_pointer (&config->api_key, wipe_free);
  g_clear_pointer (&config->query_instruction, g_free);
}

void
catchup_llm_config_free (CatchupLlmConfig *config)
{
  if (config == NULL)
    return;
  catchup_llm_config_clear (config);
  g_free (config);
}

char *
catchup_llm_config_default_path (void)
{
  return g_build_filename (g_get_user_config_dir (), "purple-catchup", "model.conf", NULL);
}

#define CONFIG_GROUP "model"

/* An absent key or group keeps the default; anything else is the file's error. */
static gboolean
key_ok (const GError *local, GError **error)
{
  if (local == NULL || g_error_matches (local, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND)
      || g_error_matches (local, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_GROUP_NOT_FOUND))
    return TRUE;
  g_propagate_error (error, g_error_copy (local));
  return FALSE;
}

static gboolean
load_string (GKeyFile *file, const char *key, char **field, GError **error)
{
  g_autoptr (GError) local = NULL;
  char *value = g_key_file_get_string (file, CONFIG_GROUP, key, &local);

  if (value != NULL)
    {
      g_free (*field);
      *field = value;
    }
  return key_ok (local, error);
}

static gboolean
load_uint (GKeyFile *file, const char *key, guint *field, GError **error)
{
  g_autoptr (GError) local = NULL;
  guint64 value = g_key_file_get_uint64 (file, CONFIG_GROUP, key, &local);

  if (local == NULL)
    *field = (guint) MIN (value, (guint64) G_MAXUINT);
  return key_ok (local, error);
}

static gboolean
load_bool (GKeyFile *file, const char *key, gboolean *field, GError **error)
{
  g_autoptr (GError) local = NULL;
  gboolean value = g_key_file_get_boolean (file, CONFIG_GROUP, key, &local);

  if (local == NULL)
    *field = value;
  return key_ok (local, error);
}

static gboolean
load_fields (GKeyFile *file, CatchupLlmConfig *c, GError **error)
{
  return load_string (file, "base_url", &c->base_url, error)
         && load_string (file, "chat_model", &c->chat_model, error)
         && load_string (file, "embed_model", &c->embed_model, error)
         && load_string (file, "api_key", &c->api_key, error)
         && load_string (file, "query_instruction", &c->query_instruction, error)
         && load_uint (file, "timeout_ms", &c->timeout_ms, error)
         && load_uint (file, "connect_timeout_ms", &c->connect_timeout_ms, error)
         && load_uint (file, "max_retries", &c->max_retries, error)
         && load_uint (file, "retry_base_ms", &c->retry_base_ms, error)
         && load_uint (file, "retry_max_ms", &c->retry_max_ms, error)
         && load_uint (file, "context_tokens", &c->context_tokens, error)
         && load_uint (file, "max_reply_tokens", &c->max_reply_tokens, error)
         && load_uint (file, "embed_batch", &c->embed_batch, error)
         && load_bool (file, "tls_verify", &c->tls_verify, error)
         && load_bool (file, "json_mode", &c->json_mode, error)
         && load_bool (file, "thinking", &c->thinking, error);
}

gboolean
catchup_llm_config_load (CatchupLlmConfig *config, const char *path, GError **error)
{
  g_autoptr (GKeyFile) file = g_key_file_new ();
  g_autoptr (GError) local = NULL;

  if (!g_key_file_load_from_file (file, path, G_KEY_FILE_NONE, &local))
    {
      gboolean missing = g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT);

      g_set_error (error, CATCHUP_ERROR, missing ? CATCHUP_ERROR_NOT_FOUND : CATCHUP_ERROR_INVALID,
                   _("Could not open %s: %s"), path, local->message);
      return FALSE;
    }
  if (!load_fields (file, config, &local))
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("Could not open %s: %s"),
                   path, local->message);
      return FALSE;
    }
  return TRUE;
}

static void
config_copy (const CatchupLlmConfig *src, CatchupLlmConfig *dst)
{
  *dst = *src;
  dst->base_url = g_strdup (src->base_url);
  dst->chat_model = g_strdup (src->chat_model);
  dst->embed_model = g_strdup (src->embed_model);
  dst->api_key = g_strdup (src->api_key);
  dst->query_instruction = g_strdup (src->query_instruction);
}

static void
strip_trailing_slashes (char *path)
{
  gsize len = strlen (path);

  while (len > 0 && path[len - 1] == '/')
    path[--len] = '\0';
}

/* Users paste the endpoint itself (".../v1/chat/completions") as often as the base. */
static void
strip_endpoint_suffix (char *path)
{
  static const char *const suffixes[] = { "/chat/completions", "/completions", "/embeddings", "/models" };

  strip_trailing_slashes (path);
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      if (g_str_has_suffix (path, suffixes[i]))
        {
          path[strlen (path) - strlen (suffixes[i])] = '\0';
          break;
        }
    }
  strip_trailing_slashes (path);
}

static GUri *
parse_base_uri (const char *url, GError **error)
{
  g_autofree char *trimmed = g_strstrip (g_strdup (url ? url : ""));
  g_autofree char *full = NULL;
  GUri *uri;

  if (*trimmed == '\0')
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("No model server URL is set"));
      return NULL;
    }
  /* "localhost:11434" has no scheme; GUri would read "localhost" as one. */
  full = strstr (trimmed, "://") ? g_strdup (trimmed) : g_strconcat ("http://", trimmed, NULL);
  uri = g_uri_parse (full, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL || g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0')
    {
      g_clear_pointer (&uri, g_uri_unref);
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("“%s” is not a valid model server URL"),
                   trimmed);
      return NULL;
    }
  if (g_ascii_strcasecmp (g_uri_get_scheme (uri), "http") != 0
      && g_ascii_strcasecmp (g_uri_get_scheme (uri), "https") != 0)
    {
      g_uri_unref (uri);
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID,
                   _("The model server URL “%s” must start with http:// or https://"), trimmed);
      return NULL;
    }
  return uri;
}

static char *
join_base (GUri *uri, gboolean with_userinfo)
{
  g_autofree char *scheme = g_ascii_strdown (g_uri_get_scheme (uri), -1);
  g_autofree char *path = g_strdup (g_uri_get_path (uri));

  strip_endpoint_suffix (path);
  /* A bare host is what Ollama users type; every OpenAI-compatible server answers under /v1. */
  if (*path == '\0')
    {
      g_free (path);
      path = g_strdup ("/v1");
    }
  return g_uri_join (G_URI_FLAGS_NONE, scheme, with_userinfo ? g_uri_get_userinfo (uri) : NULL,
                     g_uri_get_host (uri), g_uri_get_port (uri), path, NULL, NULL);
}

char *
catchup_llm_normalize_base_url (const char *url, GError **error)
{
  g_autoptr (GUri) uri = parse_base_uri (url, error);

  return uri ? join_base (uri, TRUE) : NULL;
}

/* The user's no_proxy plus the loopback names: a model on this machine must not be reached (and chat text not
 * be sent) through a proxy, which libcurl would otherwise do whenever http_proxy is set. */
static char *
no_proxy_list (void)
{
  const char *env = g_getenv ("no_proxy");

  if (env == NULL || *env == '\0')
    env = g_getenv ("NO_PROXY");
  if (env != NULL && strcmp (env, "*") == 0)
    return g_strdup (env);
  return g_strconcat (env && *env ? env : "", env && *env ? "," : "", "localhost,127.0.0.1,::1", NULL);
}

static gpointer
init_curl (gpointer unused)
{
  /* Must run before any handle exists and, before curl 7.84, not concurrently: once per process. */
  return GINT_TO_POINTER (curl_global_init (CURL_GLOBAL_DEFAULT) == CURLE_OK);
}

CatchupLlm *
catchup_llm_new (const CatchupLlmConfig *config, GError **error)
{
  static GOnce curl_once = G_ONCE_INIT;
  g_autoptr (GUri) uri = NULL;
  CatchupLlm *llm;
  const char *key;

  g_return_val_if_fail (config != NULL, NULL);

  if (!GPOINTER_TO_INT (g_once (&curl_once, init_curl, NULL)))
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_FAILED, _("Could not initialise libcurl"));
      return NULL;
    }
  uri = parse_base_uri (config->base_url, error);
  if (uri == NULL)
    return NULL;

  llm = g_new0 (CatchupLlm, 1);
  g_atomic_ref_count_init (&llm->ref);
  g_mutex_init (&llm->lock);
  config_copy (config, &llm->config);
  g_free (llm->config.base_url);
  llm->config.base_url = join_base (uri, TRUE);
  llm->display_url = join_base (uri, FALSE);
  llm->no_proxy = no_proxy_list ();

  key = config->api_key && *config->api_key ? config->api_key : g_getenv (CATCHUP_LLM_API_KEY_ENV);
  wipe_free (llm->config.api_key);
  /* Keys pasted from a file end in a newline, which would also break the header. */
  llm->config.api_key = key ? g_strstrip (g_strdup (key)) : NULL;
  if (llm->config.api_key != NULL && *llm->config.api_key != '\0')
    llm->auth_header = g_strconcat ("Authorization: Bearer ", llm->config.api_key, NULL);
  return llm;
}

CatchupLlm *
catchup_llm_ref (CatchupLlm *llm)
{
  g_return_val_if_fail (llm != NULL, NULL);
  g_atomic_ref_count_inc (&llm->ref);
  return llm;
}

void
catchup_llm_unref (CatchupLlm *llm)
{
  if (llm == NULL || !g_atomic_ref_count_dec (&llm->ref))
    return;
  catchup_llm_config_clear (&llm->config);
  g_free (llm->display_url);
  g_free (llm->no_proxy);
  wipe_free (llm->auth_header);
  g_mutex_clear (&llm->lock);
  g_free (llm);
}

const CatchupLlmConfig *
catchup_llm_get_config (CatchupLlm *llm)
{
  return &llm->config;
}

const char *
catchup_llm_get_display_url (CatchupLlm *llm)
{
  return llm->display_url;
}

void
catchup_llm_get_stats (CatchupLlm *llm, CatchupLlmStats *out)
{
  g_mutex_lock (&llm->lock);
  *out = llm->stats;
  g_mutex_unlock (&llm->lock);
}

void
catchup_llm_reset_stats (CatchupLlm *llm)
{
  g_mutex_lock (&llm->lock);
  memset (&llm->stats, 0, sizeof llm->stats);
  g_mutex_unlock (&llm->lock);
}

static void
count_call (CatchupLlm *llm, Endpoint endpoint, gboolean retry)
{
  g_mutex_lock (&llm->lock);
  if (endpoint == ENDPOINT_CHAT)
    llm->stats.chat_calls++;
  else
    llm->stats.embed_calls++;
  if (retry)
    llm->stats.retries++;
  g_mutex_unlock (&llm->lock);
}

static void
count_failure (CatchupLlm *llm)
{
  g_mutex_lock (&llm->lock);
  llm->stats.failures++;
  g_mutex_unlock (&llm->lock);
}

static gint64
usage_field (JsonObject *root, const char *name)
{
  gint64 value;

  return catchup_llm_json_int (catchup_llm_json_object (root, "usage"), name, &value) ? value : -1;
}

/* usage.completion_tokens_details.reasoning_tokens (OpenAI, vLLM), -1 when the server does not say. */
static gint64
usage_reasoning (JsonObject *root)
{
  JsonObject *details = catchup_llm_json_object (catchup_llm_json_object (root, "usage"),
                                                 "completion_tokens_details");
  gint64 value;

  return catchup_llm_json_int (details, "reasoning_tokens", &value) ? value : -1;
}

/* The server's usage figures when it reports them (most do), else the library's approximate count. Reasoning
 * is part of what was received, as in the servers' own completion_tokens. */
static void
count_tokens (CatchupLlm *llm, JsonObject *root, guint sent_estimate, guint received_estimate,
              guint reasoning_estimate)
{
  gint64 sent = usage_field (root, "prompt_tokens");
  gint64 received = usage_field (root, "completion_tokens");
  gint64 reasoning = usage_reasoning (root);

  /* the server's completion count includes the reasoning: our estimate of it must not exceed it */
  if (reasoning < 0 && received >= 0)
    reasoning = MIN ((gint64) reasoning_estimate, received);
  g_mutex_lock (&llm->lock);
  llm->stats.tokens_sent += sent >= 0 ? (guint64) sent : sent_estimate;
  llm->stats.tokens_received += received >= 0 ? (guint64) received : (guint64) received_estimate + reasoning_estimate;
  llm->stats.tokens_reasoning += reasoning >= 0 ? (guint64) reasoning : reasoning_estimate;
  g_mutex_unlock (&llm->lock);
}

static void
set_cancelled (GError **error)
{
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_CANCELLED, _("The request to the model server was cancelled"));
}

void
catchup_llm_set_transfer_error (GError **error, CURLcode code, const char *url, const char *detail)
{
  const char *why = detail != NULL && *detail != '\0' ? detail : curl_easy_strerror (code);

  switch (code)
    {
    case CURLE_ABORTED_BY_CALLBACK:
      set_cancelled (error);
      return;
    case CURLE_COULDNT_CONNECT:
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NETWORK,
                   _("Could not connect to the model server at %s: the connection was refused (%s). "
                     "Is the server running?"), url, why);
      return;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NETWORK,
                   _("Could not find the model server at %s: its host name does not resolve (%s)"), url, why);
      return;
    case CURLE_OPERATION_TIMEDOUT:
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NETWORK,
                   _("The model server at %s did not answer in time (%s)"), url, why);
      return;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NETWORK,
                   _("The secure (TLS) connection to the model server at %s failed: %s"), url, why);
      return;
    case CURLE_PARTIAL_FILE:
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NETWORK,
                   _("The model server at %s closed the connection before its whole answer arrived "
                     "(truncated answer)"), url);
      return;
    case CURLE_GOT_NOTHING:
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NETWORK,
                   _("The model server at %s closed the connection without answering"), url);
      return;
    case CURLE_FILESIZE_EXCEEDED:
    case CURLE_WRITE_ERROR:
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL,
                   _("The model server at %s sent an answer larger than %u MB; it was refused"), url,
                   CATCHUP_LLM_MAX_BODY / (1024 * 1024));
      return;
    default:
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NETWORK,
                   _("Talking to the model server at %s failed: %s"), url, why);
      return;
    }
}

static size_t
sink_write (char *data, size_t size, size_t nmemb, void *user_data)
{
  Sink *sink = user_data;
  size_t n = size * nmemb;

  /* Refused while it arrives: a runaway server must not fill memory first. */
  if (sink->body->len + n > CATCHUP_LLM_MAX_BODY)
    {
      sink->too_large = TRUE;
      return 0;
    }
  g_byte_array_append (sink->body, (const guint8 *) data, n);
  return n;
}

static int
sink_progress (void *user_data, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
  Sink *sink = user_data;

  return g_cancellable_is_cancelled (sink->cancellable) ? 1 : 0;
}

static void
wake_multi (GCancellable *cancellable, gpointer multi)
{
  curl_multi_wakeup (multi);
}

/* curl_easy_perform() consults the progress callback only about once a second while the server is silent;
 * a multi handle that the cancellable wakes up makes cancellation immediate. */
static CURLcode
run_transfer (CURL *easy, GCancellable *cancellable)
{
  CURLM *multi = curl_multi_init ();
  CURLcode result = CURLE_RECV_ERROR;
  CURLMsg *msg;
  gulong handler = 0;
  int running = 1, queued;

  if (multi == NULL)
    return CURLE_OUT_OF_MEMORY;
  curl_multi_add_handle (multi, easy);
  if (cancellable != NULL)
    handler = g_cancellable_connect (cancellable, G_CALLBACK (wake_multi), multi, NULL);
  while (running && !g_cancellable_is_cancelled (cancellable))
    {
      if (curl_multi_perform (multi, &running) != CURLM_OK)
        break;
      if (running && curl_multi_poll (multi, NULL, 0, 1000, NULL) != CURLM_OK)
        break;
    }
  if (cancellable != NULL)
    g_cancellable_disconnect (cancellable, handler);
  while ((msg = curl_multi_info_read (multi, &queued)) != NULL)
    if (msg->msg == CURLMSG_DONE)
      result = msg->data.result;
  if (g_cancellable_is_cancelled (cancellable))
    result = CURLE_ABORTED_BY_CALLBACK;
  curl_multi_remove_handle (multi, easy);
  curl_multi_cleanup (multi);
  return result;
}

static struct curl_slist *
request_headers (CatchupLlm *llm)
{
  struct curl_slist *headers = NULL;

  headers = curl_slist_append (headers, "Content-Type: application/json");
  headers = curl_slist_append (headers, "Accept: application/json");
  /* No "100-continue" round trip: the bodies are small and some servers mishandle it. */
  headers = curl_slist_append (headers, "Expect:");
  if (llm->auth_header != NULL)
    headers = curl_slist_append (headers, llm->auth_header);
  return headers;
}

static void
set_options (CatchupLlm *llm, CURL *easy, const char *url, const char *payload, struct curl_slist *headers,
             Sink *sink, char *errbuf)
{
  const CatchupLlmConfig *c = &llm->config;

  curl_easy_setopt (easy, CURLOPT_URL, url);
  curl_easy_setopt (easy, CURLOPT_POSTFIELDS, payload);
  curl_easy_setopt (easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) strlen (payload));
  curl_easy_setopt (easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt (easy, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
  /* Signals would hit whatever thread libcurl runs in; timeouts then rely on the threaded resolver. */
  curl_easy_setopt (easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (easy, CURLOPT_TIMEOUT_MS, (long) c->timeout_ms);
  curl_easy_setopt (easy, CURLOPT_CONNECTTIMEOUT_MS, (long) c->connect_timeout_ms);
  curl_easy_setopt (easy, CURLOPT_SSL_VERIFYPEER, c->tls_verify ? 1L : 0L);
  curl_easy_setopt (easy, CURLOPT_SSL_VERIFYHOST, c->tls_verify ? 2L : 0L);
  /* A redirect would turn the POST into a GET and could carry the key to another host. */
  curl_easy_setopt (easy, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt (easy, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt (easy, CURLOPT_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt (easy, CURLOPT_NOPROXY, llm->no_proxy);
  curl_easy_setopt (easy, CURLOPT_ACCEPT_ENCODING, "");
  /* Refuses an announced oversized body before any of it is read. */
  curl_easy_setopt (easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) CATCHUP_LLM_MAX_BODY);
  curl_easy_setopt (easy, CURLOPT_WRITEFUNCTION, sink_write);
  curl_easy_setopt (easy, CURLOPT_WRITEDATA, sink);
  curl_easy_setopt (easy, CURLOPT_XFERINFOFUNCTION, sink_progress);
  curl_easy_setopt (easy, CURLOPT_XFERINFODATA, sink);
  curl_easy_setopt (easy, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt (easy, CURLOPT_ERRORBUFFER, errbuf);
}

static void
response_clear (Response *resp)
{
  g_clear_pointer (&resp->body, g_bytes_unref);
  g_clear_pointer (&resp->content_type, g_free);
}

/* One HTTP exchange; FALSE when no HTTP answer came back at all. */
static gboolean
perform_once (CatchupLlm *llm, const char *url, const char *payload, GCancellable *cancellable, Response *resp,
              GError **error)
{
  char errbuf[CURL_ERROR_SIZE] = "";
  Sink sink = { g_byte_array_new (), FALSE, cancellable };
  struct curl_slist *headers = NULL;
  CURL *easy = curl_easy_init ();
  CURLcode code;
  const char *content_type = NULL;
  curl_off_t retry_after = -1;

  if (easy == NULL)
    {
      g_byte_array_unref (sink.body);
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_FAILED, _("Could not create a libcurl handle"));
      return FALSE;
    }
  headers = request_headers (llm);
  set_options (llm, easy, url, payload, headers, &sink, errbuf);
  code = run_transfer (easy, cancellable);
  if (code == CURLE_OK)
    {
      curl_easy_getinfo (easy, CURLINFO_RESPONSE_CODE, &resp->status);
      curl_easy_getinfo (easy, CURLINFO_CONTENT_TYPE, &content_type);
      curl_easy_getinfo (easy, CURLINFO_RETRY_AFTER, &retry_after);
      resp->content_type = g_strdup (content_type);
      resp->retry_after_s = retry_after > 0 ? (gint64) retry_after : -1;
      resp->body = g_byte_array_free_to_bytes (g_steal_pointer (&sink.body));
    }
  else
    {
      catchup_llm_set_transfer_error (error, sink.too_large ? CURLE_WRITE_ERROR : code, llm->display_url,
                                      errbuf);
      g_byte_array_unref (sink.body);
    }
  curl_slist_free_all (headers);
  curl_easy_cleanup (easy);
  return code == CURLE_OK;
}

static JsonNode *
parse_json_bytes (GBytes *bytes, GError **error)
{
  gsize len = 0;
  const char *data = g_bytes_get_data (bytes, &len);

  /* a body of brackets under the size cap would otherwise overflow json-glib's recursion */
  return catchup_json_parse (NULL, data ? data : "", (gssize) len, error);
}

/* The message an OpenAI-style error body carries ({"error": {"message": ...}}, {"error": "..."},
 * {"detail": "..."}), cleaned for display: no control characters, bounded, never the API key. */
static char *
server_message (CatchupLlm *llm, GBytes *body)
{
  g_autoptr (JsonNode) root = parse_json_bytes (body, NULL);
  JsonObject *obj = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonNode *err = obj ? json_object_get_member (obj, "error") : NULL;
  const char *text = NULL;
  g_autofree char *clean = NULL;

  if (err != NULL && JSON_NODE_HOLDS_OBJECT (err))
    text = catchup_llm_json_string (json_node_get_object (err), "message");
  else if (err != NULL && json_node_get_value_type (err) == G_TYPE_STRING)
    text = json_node_get_string (err);
  else if (obj != NULL)
    text = catchup_llm_json_string (obj, "detail");
  if (text == NULL || *text == '\0')
    return NULL;

  clean = g_utf8_make_valid (text, -1);
  for (char *p = clean; *p; p++)
    if ((guchar) *p < 0x20)
      *p = ' ';
  if (llm->config.api_key != NULL && *llm->config.api_key != '\0')
    {
      g_auto (GStrv) parts = g_strsplit (clean, llm->config.api_key, -1);
      g_free (clean);
      clean = g_strjoinv ("[redacted]", parts);
    }
  if (g_utf8_strlen (clean, -1) > 300)
    {
      char *end = g_utf8_offset_to_pointer (clean, 300);
      *end = '\0';
    }
  return g_steal_pointer (&clean);
}

static gboolean
mentions_model (const char *message)
{
  g_autofree char *lower = message ? g_utf8_strdown (message, -1) : NULL;

  return lower != NULL && strstr (lower, "model") != NULL;
}

static void
set_status_error (CatchupLlm *llm, const char *model, const Response *resp, guint attempts, GError **error)
{
  g_autofree char *message = server_message (llm, resp->body);
  const char *url = llm->display_url;
  /* "failed 3 times in a row: " with nothing after it reads as a cut message */
  const char *why = message ? message : _("the server gave no reason");
  long status = resp->status;

  if (status == 401 || status == 403)
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_HTTP,
                 _("The model server at %s refused the credentials (HTTP %ld): check the API key"), url, status);
  else if (status == 404 && mentions_model (message))
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_HTTP,
                 _("The model server at %s does not have the model “%s” (HTTP 404): %s"), url, model, why);
  else if (status == 404)
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_HTTP,
                 _("Nothing answers at %s (HTTP 404): check the base URL, which usually ends in /v1"), url);
  else if (status == 429)
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_HTTP,
                 _("The model server at %s is rate-limiting requests (HTTP 429), still after %u attempts"),
                 url, attempts);
  else if (status >= 500)
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_HTTP,
                 _("The model server at %s failed (HTTP %ld) %u times in a row: %s"), url, status, attempts, why);
  else
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_HTTP,
                 _("The model server at %s refused the request (HTTP %ld): %s"), url, status, why);
}

static gboolean
is_json_type (const char *content_type)
{
  g_autofree char *lower = g_ascii_strdown (content_type, -1);

  return strstr (lower, "json") != NULL;
}

/* The JSON object of a successful answer; *retryable says whether another attempt may help. */
static JsonObject *
read_reply (CatchupLlm *llm, const char *model, const Response *resp, guint attempts, gboolean *retryable,
            GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (JsonNode) root = NULL;

  *retryable = FALSE;
  if (resp->status < 200 || resp->status >= 300)
    {
      *retryable = resp->status == 429 || resp->status >= 500;
      set_status_error (llm, model, resp, attempts, error);
      return NULL;
    }
  /* A missing type is tolerated (some small servers omit it); a wrong one usually means a proxy's login
   * page or a web UI at that address. */
  if (resp->content_type != NULL && !is_json_type (resp->content_type))
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL,
                   _("The model server at %s answered with “%s” instead of JSON: is the base URL right?"),
                   llm->display_url, resp->content_type);
      return NULL;
    }
  root = parse_json_bytes (resp->body, &local);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL, _("The model server at %s sent a malformed answer: %s"),
                   llm->display_url, local ? local->message : _("not a JSON object"));
      return NULL;
    }
  return json_object_ref (json_node_get_object (root));
}

static guint
retry_delay_ms (const CatchupLlmConfig *c, guint attempt, gint64 retry_after_s)
{
  guint64 ms;

  if (retry_after_s >= 0)
    ms = (guint64) retry_after_s * 1000;
  else
    ms = ((guint64) c->retry_base_ms << MIN (attempt, 16u)) + g_random_int_range (0, c->retry_base_ms / 4 + 1);
  return (guint) MIN (ms, (guint64) c->retry_max_ms);
}

static gboolean
sleep_cancellable (guint ms, GCancellable *cancellable, GError **error)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;
  gint64 now;

  while ((now = g_get_monotonic_time ()) < end && !g_cancellable_is_cancelled (cancellable))
    g_usleep (MIN (end - now, 20000));
  if (g_cancellable_is_cancelled (cancellable))
    {
      set_cancelled (error);
      return FALSE;
    }
  return TRUE;
}

/* Waiting longer than one request may take would make the timeout a lie: the caller hears why instead. */
static gboolean
waits_too_long (CatchupLlm *llm, gint64 retry_after_s, GError **error)
{
  g_autofree char *wait = NULL;

  if (retry_after_s < 0 || (guint64) retry_after_s * 1000 <= llm->config.timeout_ms)
    return FALSE;
  wait = g_strdup_printf ("%" G_GINT64_FORMAT, retry_after_s);
  g_clear_error (error);
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_HTTP,
               _("The model server at %s asks to wait %s s before the next request (Retry-After), longer than "
                 "the timeout of %u s"),
               llm->display_url, wait, llm->config.timeout_ms / 1000);
  return TRUE;
}

/* POSTs payload to an endpoint, retrying 429 and 5xx answers with backoff (or as Retry-After says). */
static JsonObject *
post_json (CatchupLlm *llm, Endpoint endpoint, const char *model, const char *payload, GCancellable *cancellable,
           long *status, GError **error)
{
  g_autofree char *url = g_strconcat (llm->config.base_url, endpoint_paths[endpoint], NULL);

  for (guint attempt = 0;; attempt++)
    {
      g_autoptr (GError) local = NULL;
      Response resp = { 0, NULL, NULL, -1 };
      JsonObject *reply = NULL;
      gboolean retryable = FALSE;
      guint delay;

      if (g_cancellable_is_cancelled (cancellable))
        {
          set_cancelled (error);
          count_failure (llm);
          return NULL;
        }
      count_call (llm, endpoint, attempt > 0);
      g_debug ("POST %s%s (model %s, %zu bytes, attempt %u)", llm->display_url, endpoint_paths[endpoint], model,
               strlen (payload), attempt + 1);
      if (perform_once (llm, url, payload, cancellable, &resp, &local))
        reply = read_reply (llm, model, &resp, attempt + 1, &retryable, &local);
      if (status != NULL)
        *status = resp.status;
      delay = retry_delay_ms (&llm->config, attempt, resp.retry_after_s);
      response_clear (&resp);
      if (reply != NULL)
        return reply;
      if (retryable && attempt < llm->config.max_retries && waits_too_long (llm, resp.retry_after_s, &local))
        retryable = FALSE;
      g_debug ("model request failed: %s", local->message);
      if (!retryable || attempt >= llm->config.max_retries)
        {
          count_failure (llm);
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (!sleep_cancellable (delay, cancellable, error))
        {
          count_failure (llm);
          return NULL;
        }
    }
}

static gboolean
require_model (const char *model, const char *what, GError **error)
{
  if (model != NULL && *model != '\0')
    return TRUE;
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("No %s model is configured"), what);
  return FALSE;
}

/* The extras this client sends: what the config asks for, less what the server refused. */
static guint
chat_extras (CatchupLlm *llm)
{
  guint extras = 0;

  if (llm->config.json_mode)
    extras |= EXTRA_RESPONSE_FORMAT;
  if (!llm->config.thinking)
    extras |= EXTRA_REASONING_EFFORT | EXTRA_TEMPLATE_KWARGS;
  return extras & ~(guint) g_atomic_int_get (&llm->refused);
}

static void
add_message (JsonBuilder *b, const char *role, const char *content)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "role");
  json_builder_add_string_value (b, role);
  json_builder_set_member_name (b, "content");
  json_builder_add_string_value (b, content);
  json_builder_end_object (b);
}

static void
add_extras (JsonBuilder *b, guint extras)
{
  if (extras & EXTRA_RESPONSE_FORMAT)
    {
      json_builder_set_member_name (b, extra_names[0]);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "type");
      json_builder_add_string_value (b, "json_object");
      json_builder_end_object (b);
    }
  if (extras & EXTRA_REASONING_EFFORT)
    {
      json_builder_set_member_name (b, extra_names[1]);
      json_builder_add_string_value (b, "none");
    }
  if (extras & EXTRA_TEMPLATE_KWARGS)
    {
      json_builder_set_member_name (b, extra_names[2]);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "enable_thinking");
      json_builder_add_boolean_value (b, FALSE);
      json_builder_end_object (b);
    }
}

static char *
chat_payload (const CatchupLlmConfig *c, const char *system, const char *user, guint extras, guint max_tokens)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "model");
  json_builder_add_string_value (b, c->chat_model);
  json_builder_set_member_name (b, "messages");
  json_builder_begin_array (b);
  if (system != NULL)
    add_message (b, "system", system);
  add_message (b, "user", user);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "temperature");
  json_builder_add_double_value (b, 0.0);
  if (max_tokens > 0)
    {
      json_builder_set_member_name (b, "max_tokens");
      json_builder_add_int_value (b, max_tokens);
    }
  json_builder_set_member_name (b, "stream");
  json_builder_add_boolean_value (b, FALSE);
  add_extras (b, extras);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return json_to_string (root, FALSE);
}

static void
set_unusable (CatchupLlm *llm, GError **error, const char *why)
{
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL, _("The model server at %s sent an unusable answer: %s"),
               llm->display_url, why);
}

/* One chat answer taken apart: the answer, the reasoning before or beside it, and whether it was cut. */
typedef struct {
  char *answer;
  char *reasoning;
  gboolean cut;
} ChatAnswer;

static void
chat_answer_clear (ChatAnswer *a)
{
  g_clear_pointer (&a->answer, g_free);
  g_clear_pointer (&a->reasoning, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ChatAnswer, chat_answer_clear)

static gboolean
chat_reply_text (CatchupLlm *llm, JsonObject *root, ChatAnswer *a, GError **error)
{
  JsonArray *choices = catchup_llm_json_array (root, "choices");
  JsonNode *first = choices && json_array_get_length (choices) > 0 ? json_array_get_element (choices, 0) : NULL;
  JsonObject *choice = first && JSON_NODE_HOLDS_OBJECT (first) ? json_node_get_object (first) : NULL;
  JsonObject *message = catchup_llm_json_object (choice, "message");
  const char *content = catchup_llm_json_string (message, "content");
  /* vLLM and DeepSeek's API say reasoning_content, newer vLLM and Ollama reasoning */
  const char *reasoning = catchup_llm_json_string (message, "reasoning_content");

  if (reasoning == NULL)
    reasoning = catchup_llm_json_string (message, "reasoning");
  if (message == NULL || (content == NULL && reasoning == NULL))
    {
      set_unusable (llm, error, _("no message text in it"));
      return FALSE;
    }
  {
    /* the reply enters like chat text: valid UTF-8, no NUL or control character (its line breaks stay) */
    g_autofree char *clean = catchup_text_clean (content, -1, CATCHUP_TEXT_MULTI_LINE);

    a->answer = catchup_llm_split_reasoning (clean, &a->reasoning);
  }
  if (reasoning != NULL && *reasoning != '\0')
    {
      g_free (a->reasoning);
      a->reasoning = g_strdup (reasoning);
    }
  a->cut = g_strcmp0 (catchup_llm_json_string (choice, "finish_reason"), "length") == 0;
  return TRUE;
}

/* Which of the extras sent a refusal names (servers name the parameter they do not take: "Unrecognized
 * request argument supplied: chat_template_kwargs", "'response_format.type' must be 'json_schema'"); a refusal
 * naming none of them is about something else and is not retried. */
static guint
refused_extras (const GError *error, guint sent)
{
  guint named = 0;

  for (guint i = 0; i < G_N_ELEMENTS (extra_names); i++)
    if ((sent & (1u << i)) && strstr (error->message, extra_names[i]) != NULL)
      named |= 1u << i;
  return named;
}

/* The reply limit for one more try after a cut answer: twice the limit, within what the context leaves;
 * 0 when there is no room to grow. */
static guint
raised_limit (const CatchupLlmConfig *c, guint current, guint prompt_tokens)
{
  gint64 room = (gint64) c->context_tokens - prompt_tokens;
  guint64 want = current > 0 ? (guint64) current * 2 : (guint64) c->context_tokens / 2;
  guint64 limit = MIN (want, (guint64) MAX (room, 0));

  return limit > current ? (guint) limit : 0;
}

static void
set_cut (CatchupLlm *llm, guint limit, gboolean thinking, GError **error)
{
  if (thinking)
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL,
                 _("The model at %s was cut off at its reply limit (%u tokens) while still thinking, before any "
                   "answer (set thinking=false or a larger max_reply_tokens)"), llm->display_url, limit);
  else
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL,
                 _("The model's answer was cut off at its reply limit (%u tokens)"), limit);
}

/* One exchange: the answer text, or NULL with *status the HTTP status of a refusal. */
static gboolean
chat_once (CatchupLlm *llm, const char *system, const char *user, guint extras, guint max_tokens,
           GCancellable *cancellable, ChatAnswer *a, long *status, GError **error)
{
  g_autofree char *payload = chat_payload (&llm->config, system, user, extras, max_tokens);
  g_autoptr (JsonObject) reply = post_json (llm, ENDPOINT_CHAT, llm->config.chat_model, payload, cancellable,
                                            status, error);
  guint prompt = catchup_text_count_tokens (system ? system : "") + catchup_text_count_tokens (user);

  if (reply == NULL)
    return FALSE;
  if (!chat_reply_text (llm, reply, a, error))
    {
      count_failure (llm);
      return FALSE;
    }
  count_tokens (llm, reply, prompt, catchup_text_count_tokens (a->answer),
                a->reasoning ? catchup_text_count_tokens (a->reasoning) : 0);
  return TRUE;
}

char *
catchup_llm_chat (CatchupLlm *llm, const char *system, const char *user, GCancellable *cancellable,
                  GError **error)
{
  guint extras, limit, prompt;
  gboolean raised = FALSE;

  g_return_val_if_fail (llm != NULL && user != NULL, NULL);

  if (!require_model (llm->config.chat_model, _("chat"), error))
    return NULL;
  extras = chat_extras (llm);
  limit = llm->config.max_reply_tokens;
  prompt = catchup_text_count_tokens (system ? system : "") + catchup_text_count_tokens (user);
  for (;;)
    {
      g_autoptr (GError) local = NULL;
      g_auto (ChatAnswer) a = { NULL, NULL, FALSE };
      long status = 0;
      guint more;

      if (!chat_once (llm, system, user, extras, limit, cancellable, &a, &status, &local))
        {
          /* a server that does not know an optional parameter: once more without it, and never again */
          guint refused = status == 400 || status == 422 ? refused_extras (local, extras) : 0;

          if (refused != 0)
            {
              g_debug ("the model server refused %s; asking again without", local->message);
              g_atomic_int_or (&llm->refused, refused);
              extras &= ~refused;
              continue;
            }
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (!a.cut)
        {
          if (*a.answer == '\0' && a.reasoning != NULL)
            {
              set_unusable (llm, error, _("only the model's reasoning, no answer"));
              count_failure (llm);
              return NULL;
            }
          return g_steal_pointer (&a.answer);
        }
      more = raised ? 0 : raised_limit (&llm->config, limit, prompt);
      g_debug ("the model's answer was cut at %u tokens; %s", limit, more ? "asking once more" : "giving up");
      if (more == 0)
        {
          set_cut (llm, limit, *g_strstrip (a.answer) == '\0', error);
          count_failure (llm);
          return NULL;
        }
      limit = more;
      raised = TRUE;
    }
}

static char *
embed_payload (const CatchupLlmConfig *c, const char *const *texts, guint n)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "model");
  json_builder_add_string_value (b, c->embed_model);
  json_builder_set_member_name (b, "input");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    json_builder_add_string_value (b, texts[i]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "encoding_format");
  json_builder_add_string_value (b, "float");
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return json_to_string (root, FALSE);
}

/* The numbers of one vector. A component that is not a finite float (1e999 parses as infinity, 1e300 becomes
 * one as a float) would make every score NaN, and a vector of zeros has no direction: neither is an embedding. */
static gboolean
read_components (JsonArray *vec, float *row, guint len)
{
  gboolean nonzero = FALSE;

  for (guint j = 0; j < len; j++)
    {
      JsonNode *v = json_array_get_element (vec, j);
      GType type = JSON_NODE_HOLDS_VALUE (v) ? json_node_get_value_type (v) : G_TYPE_INVALID;

      if (type != G_TYPE_DOUBLE && type != G_TYPE_INT64)
        return FALSE;
      row[j] = (float) json_node_get_double (v);
      if (!isfinite (row[j]))
        return FALSE;
      nonzero |= row[j] != 0.0f;
    }
  return nonzero;
}

/* Copies one {"index": i, "embedding": [...]} item into row i of out (allocated on the first item). */
static gboolean
read_embedding (JsonNode *item, guint position, guint n, float **out, guint *dim, guint8 *seen)
{
  JsonObject *obj = JSON_NODE_HOLDS_OBJECT (item) ? json_node_get_object (item) : NULL;
  JsonArray *vec = obj ? catchup_llm_json_array (obj, "embedding") : NULL;
  guint len = vec ? json_array_get_length (vec) : 0;
  gint64 index = position;

  if (obj == NULL || (json_object_has_member (obj, "index") && !catchup_llm_json_int (obj, "index", &index)))
    return FALSE;
  if (len == 0 || index < 0 || index >= n || seen[index] || (*out != NULL && len != *dim))
    return FALSE;
  if (*out == NULL)
    {
      *dim = len;
      *out = g_new0 (float, (gsize) n * len);
    }
  seen[index] = 1;
  return read_components (vec, *out + (gsize) index * len, len);
}

static float *
embed_reply_vectors (CatchupLlm *llm, JsonObject *root, guint n, guint *dim, GError **error)
{
  JsonArray *data = catchup_llm_json_array (root, "data");
  g_autofree guint8 *seen = g_new0 (guint8, n);
  g_autofree float *out = NULL;

  if (data == NULL || json_array_get_length (data) != n)
    {
      set_unusable (llm, error, _("not one embedding per text"));
      return NULL;
    }
  for (guint i = 0; i < n; i++)
    {
      if (!read_embedding (json_array_get_element (data, i), i, n, &out, dim, seen))
        {
          set_unusable (llm, error, _("a malformed embedding"));
          return NULL;
        }
    }
  return g_steal_pointer (&out);
}

float *
catchup_llm_embed (CatchupLlm *llm, const char *const *texts, guint n, guint *dim, GCancellable *cancellable,
                   GError **error)
{
  g_autofree char *payload = NULL;
  g_autoptr (JsonObject) reply = NULL;
  guint estimate = 0;
  float *out;

  g_return_val_if_fail (llm != NULL && texts != NULL && n > 0 && dim != NULL, NULL);

  if (!require_model (llm->config.embed_model, _("embedding"), error))
    return NULL;
  payload = embed_payload (&llm->config, texts, n);
  reply = post_json (llm, ENDPOINT_EMBED, llm->config.embed_model, payload, cancellable, NULL, error);
  if (reply == NULL)
    return NULL;
  out = embed_reply_vectors (llm, reply, n, dim, error);
  if (out == NULL)
    {
      count_failure (llm);
      return NULL;
    }
  for (guint i = 0; i < n; i++)
    estimate += catchup_text_count_tokens (texts[i]);
  count_tokens (llm, reply, estimate, 0, 0);
  return out;
}

/* A 200 answer's body through the same reading as a real one, for tests and fuzzing. */
static JsonObject *
reply_from_body (CatchupLlm *llm, const char *body, gsize len, GError **error)
{
  g_autoptr (GBytes) bytes = g_bytes_new (body, len);
  Response resp = { 200, bytes, (char *) "application/json", -1 };
  gboolean retryable;

  return read_reply (llm, llm->config.chat_model, &resp, 1, &retryable, error);
}

char *
catchup_llm_parse_chat_reply (CatchupLlm *llm, const char *body, gsize len, GError **error)
{
  g_autoptr (JsonObject) reply = reply_from_body (llm, body, len, error);
  g_auto (ChatAnswer) a = { NULL, NULL, FALSE };

  if (reply == NULL || !chat_reply_text (llm, reply, &a, error))
    return NULL;
  return g_steal_pointer (&a.answer);
}

float *
catchup_llm_parse_embed_reply (CatchupLlm *llm, const char *body, gsize len, guint n, guint *dim, GError **error)
{
  g_autoptr (JsonObject) reply = reply_from_body (llm, body, len, error);

  return reply ? embed_reply_vectors (llm, reply, n, dim, error) : NULL;
}

/* --- async: the blocking calls in a GTask worker --- */

typedef struct {
  CatchupLlm *llm;
  char *system, *user;
  char **texts;
  guint n, dim;
} CallData;

static void
call_data_free (gpointer data)
{
  CallData *d = data;

  catchup_llm_unref (d->llm);
  g_free (d->system);
  g_free (d->user);
  g_strfreev (d->texts);
  g_free (d);
}

static GTask *
call_task_new (CatchupLlm *llm, gpointer tag, GCancellable *cancellable, GAsyncReadyCallback callback,
               gpointer user_data, CallData **data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);

  *data = g_new0 (CallData, 1);
  (*data)->llm = catchup_llm_ref (llm);
  g_task_set_source_tag (task, tag);
  g_task_set_task_data (task, *data, call_data_free);
  /* The worker reports cancellation as CATCHUP_ERROR_CANCELLED; GIO's own error would bypass that. */
  g_task_set_check_cancellable (task, FALSE);
  return task;
}

static void
chat_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  CallData *d = task_data;
  GError *error = NULL;
  char *text = catchup_llm_chat (d->llm, d->system, d->user, cancellable, &error);

  if (text != NULL)
    g_task_return_pointer (task, text, g_free);
  else
    g_task_return_error (task, error);
}

void
catchup_llm_chat_async (CatchupLlm *llm, const char *system, const char *user, GCancellable *cancellable,
                        GAsyncReadyCallback callback, gpointer user_data)
{
  CallData *d;
  g_autoptr (GTask) task = NULL;

  g_return_if_fail (llm != NULL && user != NULL);

  task = call_task_new (llm, catchup_llm_chat_async, cancellable, callback, user_data, &d);
  d->system = g_strdup (system);
  d->user = g_strdup (user);
  g_task_run_in_thread (task, chat_thread);
}

char *
catchup_llm_chat_finish (CatchupLlm *llm, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == catchup_llm_chat_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
embed_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  CallData *d = task_data;
  GError *error = NULL;
  float *out = catchup_llm_embed (d->llm, (const char *const *) d->texts, d->n, &d->dim, cancellable, &error);

  if (out != NULL)
    g_task_return_pointer (task, out, g_free);
  else
    g_task_return_error (task, error);
}

void
catchup_llm_embed_async (CatchupLlm *llm, const char *const *texts, guint n, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  CallData *d;
  g_autoptr (GTask) task = NULL;

  g_return_if_fail (llm != NULL && texts != NULL && n > 0);

  task = call_task_new (llm, catchup_llm_embed_async, cancellable, callback, user_data, &d);
  d->texts = g_new0 (char *, n + 1);
  for (guint i = 0; i < n; i++)
    d->texts[i] = g_strdup (texts[i]);
  d->n = n;
  g_task_run_in_thread (task, embed_thread);
}

float *
catchup_llm_embed_finish (CatchupLlm *llm, GAsyncResult *result, guint *dim, GError **error)
{
  CallData *d;
  float *out;

  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == catchup_llm_embed_async, NULL);
  out = g_task_propagate_pointer (G_TASK (result), error);
  d = g_task_get_task_data (G_TASK (result));
  if (dim != NULL)
    *dim = out ? d->dim : 0;
  return out;
}
