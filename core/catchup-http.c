#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-error.h"
#include "catchup-http-module.h"
#include "catchup-http.h"
#include "catchup-json.h"

struct _CatchupHttp {
  char *base_url;           /* normalised, user:password included */
  char *display_url;
  char *api_key;            /* NULL without a key */
  char *auth_header;        /* NULL without a key */
  char *no_proxy;
  guint timeout_ms, connect_timeout_ms;
  guint max_retries, retry_base_ms, retry_max_ms;
  gboolean tls_verify;
};

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

CatchupHttp *
catchup_http_new (const CatchupLlmConfig *config, GError **error)
{
  g_autofree char *display = NULL;
  char *base = catchup_llm_normalize_base_url_full (config->base_url, &display, error);
  const char *key;
  CatchupHttp *http;

  if (base == NULL)
    return NULL;
  http = g_new0 (CatchupHttp, 1);
  http->base_url = base;
  http->display_url = g_steal_pointer (&display);
  http->no_proxy = no_proxy_list ();
  http->timeout_ms = config->timeout_ms;
  http->connect_timeout_ms = config->connect_timeout_ms;
  http->max_retries = config->max_retries;
  http->retry_base_ms = config->retry_base_ms;
  http->retry_max_ms = config->retry_max_ms;
  http->tls_verify = config->tls_verify;
  key = config->api_key && *config->api_key ? config->api_key : g_getenv (CATCHUP_LLM_API_KEY_ENV);
  /* Keys pasted from a file end in a newline, which would also break the header. */
  http->api_key = key ? g_strstrip (g_strdup (key)) : NULL;
  if (http->api_key != NULL && *http->api_key != '\0')
    http->auth_header = g_strconcat ("Authorization: Bearer ", http->api_key, NULL);
  return http;
}

void
catchup_http_free (CatchupHttp *http)
{
  if (http == NULL)
    return;
  g_free (http->base_url);
  g_free (http->display_url);
  g_free (http->no_proxy);
  catchup_llm_secret_free (http->api_key);
  catchup_llm_secret_free (http->auth_header);
  g_free (http);
}

const char *
catchup_http_get_base_url (CatchupHttp *http)
{
  return http->base_url;
}

const char *
catchup_http_get_display_url (CatchupHttp *http)
{
  return http->display_url;
}

const char *
catchup_http_get_api_key (CatchupHttp *http)
{
  return http->api_key;
}

static void
response_clear (CatchupHttpResponse *resp)
{
  g_clear_pointer (&resp->body, g_bytes_unref);
  g_clear_pointer (&resp->content_type, g_free);
}

/* One HTTP exchange through the transport module; FALSE when no HTTP answer came back at all. */
static gboolean
perform_once (CatchupHttp *http, const char *url, const char *payload, GCancellable *cancellable,
              CatchupHttpResponse *resp, GError **error)
{
  const CatchupHttpTransport *transport = catchup_http_module_get (error);
  CatchupHttpRequest req = {
    url, http->display_url, payload, http->auth_header, http->no_proxy,
    http->timeout_ms, http->connect_timeout_ms, http->tls_verify, CATCHUP_HTTP_MAX_BODY,
  };

  return transport != NULL && transport->exchange (&req, cancellable, resp, error);
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
server_message (CatchupHttp *http, GBytes *body)
{
  g_autoptr (JsonNode) root = parse_json_bytes (body, NULL);
  JsonObject *obj = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonNode *err = obj ? json_object_get_member (obj, "error") : NULL;
  const char *text = NULL;
  g_autofree char *clean = NULL;

  if (err != NULL && JSON_NODE_HOLDS_OBJECT (err))
    text = catchup_json_string (json_node_get_object (err), "message");
  else if (err != NULL && json_node_get_value_type (err) == G_TYPE_STRING)
    text = json_node_get_string (err);
  else if (obj != NULL)
    text = catchup_json_string (obj, "detail");
  if (text == NULL || *text == '\0')
    return NULL;

  clean = g_utf8_make_valid (text, -1);
  for (char *p = clean; *p; p++)
    if ((guchar) *p < 0x20)
      *p = ' ';
  if (http->api_key != NULL && *http->api_key != '\0')
    {
      g_auto (GStrv) parts = g_strsplit (clean, http->api_key, -1);
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
set_status_error (CatchupHttp *http, const char *model, const CatchupHttpResponse *resp, guint attempts,
                  GError **error)
{
  g_autofree char *message = server_message (http, resp->body);
  const char *url = http->display_url;
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
read_reply (CatchupHttp *http, const char *model, const CatchupHttpResponse *resp, guint attempts,
            gboolean *retryable, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (JsonNode) root = NULL;

  *retryable = FALSE;
  if (resp->status < 200 || resp->status >= 300)
    {
      *retryable = resp->status == 429 || resp->status >= 500;
      set_status_error (http, model, resp, attempts, error);
      return NULL;
    }
  /* A missing type is tolerated (some small servers omit it); a wrong one usually means a proxy's login
   * page or a web UI at that address. */
  if (resp->content_type != NULL && !is_json_type (resp->content_type))
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL,
                   _("The model server at %s answered with “%s” instead of JSON: is the base URL right?"),
                   http->display_url, resp->content_type);
      return NULL;
    }
  root = parse_json_bytes (resp->body, &local);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL, _("The model server at %s sent a malformed answer: %s"),
                   http->display_url, local ? local->message : _("not a JSON object"));
      return NULL;
    }
  return json_object_ref (json_node_get_object (root));
}

static guint
retry_delay_ms (CatchupHttp *http, guint attempt, gint64 retry_after_s)
{
  guint64 ms;

  if (retry_after_s >= 0)
    ms = (guint64) retry_after_s * 1000;
  else
    ms = ((guint64) http->retry_base_ms << MIN (attempt, 16u)) + g_random_int_range (0, http->retry_base_ms / 4 + 1);
  return (guint) MIN (ms, (guint64) http->retry_max_ms);
}

static gboolean
sleep_cancellable (guint ms, GCancellable *cancellable, GError **error)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;
  gint64 now;

  while ((now = g_get_monotonic_time ()) < end && !g_cancellable_is_cancelled (cancellable))
    g_usleep (MIN (end - now, 20000));
  return !g_cancellable_set_error_if_cancelled (cancellable, error);
}

/* Waiting longer than one request may take would make the timeout a lie: the caller hears why instead. */
static gboolean
waits_too_long (CatchupHttp *http, gint64 retry_after_s, GError **error)
{
  g_autofree char *wait = NULL;

  if (retry_after_s < 0 || (guint64) retry_after_s * 1000 <= http->timeout_ms)
    return FALSE;
  wait = g_strdup_printf ("%" G_GINT64_FORMAT, retry_after_s);
  g_clear_error (error);
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_HTTP,
               _("The model server at %s asks to wait %s s before the next request (Retry-After), longer than "
                 "the timeout of %u s"),
               http->display_url, wait, http->timeout_ms / 1000);
  return TRUE;
}

/* POSTs payload to an endpoint, retrying 429 and 5xx answers with backoff (or as Retry-After says). */
static JsonObject *
post_json (CatchupHttp *http, const char *path, const char *model, const char *payload, GCancellable *cancellable,
           guint *attempts, long *status, GError **error)
{
  g_autofree char *url = g_strconcat (http->base_url, path, NULL);

  for (guint attempt = 0;; attempt++)
    {
      g_autoptr (GError) local = NULL;
      CatchupHttpResponse resp = { 0, NULL, NULL, -1 };
      JsonObject *reply = NULL;
      gboolean retryable = FALSE;
      guint delay;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      *attempts = attempt + 1;
      g_debug ("POST %s%s (model %s, %zu bytes, attempt %u)", http->display_url, path, model, strlen (payload),
               attempt + 1);
      if (perform_once (http, url, payload, cancellable, &resp, &local))
        reply = read_reply (http, model, &resp, attempt + 1, &retryable, &local);
      if (status != NULL)
        *status = resp.status;
      delay = retry_delay_ms (http, attempt, resp.retry_after_s);
      response_clear (&resp);
      if (reply != NULL)
        return reply;
      if (retryable && attempt < http->max_retries && waits_too_long (http, resp.retry_after_s, &local))
        retryable = FALSE;
      g_debug ("model request failed: %s", local->message);
      if (!retryable || attempt >= http->max_retries)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (!sleep_cancellable (delay, cancellable, error))
        return NULL;
    }
}

JsonObject *
catchup_http_post_json (CatchupHttp *http, const char *path, const char *model, const char *payload,
                        GCancellable *cancellable, guint *attempts, long *status, GError **error)
{
  guint made = 0;
  JsonObject *reply;

  g_return_val_if_fail (http != NULL && path != NULL && payload != NULL, NULL);

  if (status != NULL)
    *status = 0;
  reply = post_json (http, path, model, payload, cancellable, &made, status, error);
  if (attempts != NULL)
    *attempts = made;
  return reply;
}

JsonObject *
catchup_http_read_body (CatchupHttp *http, const char *body, gsize len, GError **error)
{
  g_autoptr (GBytes) bytes = g_bytes_new (body, len);
  CatchupHttpResponse resp = { 200, bytes, (char *) "application/json", -1 };
  gboolean retryable;

  return read_reply (http, NULL, &resp, 1, &retryable, error);
}
