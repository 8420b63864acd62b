#include "config.h"

#include <string.h>

#include <curl/curl.h>
#include <glib/gi18n-lib.h>

#include "catchup-error.h"
#include "catchup-http-transport.h"

/*
 * The HTTP transport over libcurl, built as a module of its own (see catchup-http-transport.h): one exchange
 * at a time per call, blocking its thread, cancellable at once.
 */

/* Where the body goes while it arrives. */
typedef struct {
  GByteArray *body;
  gsize max_body;
  gboolean too_large;
  GCancellable *cancellable;
} Sink;

static void
set_cancelled (GError **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("The request to the model server was cancelled"));
}

static void
set_transfer_error (GError **error, int curl_code, const char *url, gsize max_body, const char *detail)
{
  CURLcode code = (CURLcode) curl_code;
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
                   (guint) (max_body / (1024 * 1024)));
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
  if (sink->body->len + n > sink->max_body)
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
request_headers (const CatchupHttpRequest *req)
{
  struct curl_slist *headers = NULL;

  headers = curl_slist_append (headers, "Content-Type: application/json");
  headers = curl_slist_append (headers, "Accept: application/json");
  /* No "100-continue" round trip: the bodies are small and some servers mishandle it. */
  headers = curl_slist_append (headers, "Expect:");
  if (req->auth_header != NULL)
    headers = curl_slist_append (headers, req->auth_header);
  return headers;
}

static void
set_options (const CatchupHttpRequest *req, CURL *easy, struct curl_slist *headers, Sink *sink, char *errbuf)
{
  curl_easy_setopt (easy, CURLOPT_URL, req->url);
  curl_easy_setopt (easy, CURLOPT_POSTFIELDS, req->payload);
  curl_easy_setopt (easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) strlen (req->payload));
  curl_easy_setopt (easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt (easy, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
  /* Signals would hit whatever thread libcurl runs in; timeouts then rely on the threaded resolver. */
  curl_easy_setopt (easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (easy, CURLOPT_TIMEOUT_MS, (long) req->timeout_ms);
  curl_easy_setopt (easy, CURLOPT_CONNECTTIMEOUT_MS, (long) req->connect_timeout_ms);
  curl_easy_setopt (easy, CURLOPT_SSL_VERIFYPEER, req->tls_verify ? 1L : 0L);
  curl_easy_setopt (easy, CURLOPT_SSL_VERIFYHOST, req->tls_verify ? 2L : 0L);
  /* A redirect would turn the POST into a GET and could carry the key to another host. */
  curl_easy_setopt (easy, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt (easy, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt (easy, CURLOPT_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt (easy, CURLOPT_NOPROXY, req->no_proxy);
  curl_easy_setopt (easy, CURLOPT_ACCEPT_ENCODING, "");
  /* Refuses an announced oversized body before any of it is read. */
  curl_easy_setopt (easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) req->max_body);
  curl_easy_setopt (easy, CURLOPT_WRITEFUNCTION, sink_write);
  curl_easy_setopt (easy, CURLOPT_WRITEDATA, sink);
  curl_easy_setopt (easy, CURLOPT_XFERINFOFUNCTION, sink_progress);
  curl_easy_setopt (easy, CURLOPT_XFERINFODATA, sink);
  curl_easy_setopt (easy, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt (easy, CURLOPT_ERRORBUFFER, errbuf);
}

static void
read_response (CURL *easy, Sink *sink, CatchupHttpResponse *resp)
{
  const char *content_type = NULL;
  curl_off_t retry_after = -1;

  curl_easy_getinfo (easy, CURLINFO_RESPONSE_CODE, &resp->status);
  curl_easy_getinfo (easy, CURLINFO_CONTENT_TYPE, &content_type);
  curl_easy_getinfo (easy, CURLINFO_RETRY_AFTER, &retry_after);
  resp->content_type = g_strdup (content_type);
  resp->retry_after_s = retry_after > 0 ? (gint64) retry_after : -1;
  resp->body = g_byte_array_free_to_bytes (g_steal_pointer (&sink->body));
}

static gboolean
exchange (const CatchupHttpRequest *req, GCancellable *cancellable, CatchupHttpResponse *resp, GError **error)
{
  char errbuf[CURL_ERROR_SIZE] = "";
  Sink sink = { g_byte_array_new (), req->max_body, FALSE, cancellable };
  struct curl_slist *headers = NULL;
  CURL *easy = curl_easy_init ();
  CURLcode code;

  resp->retry_after_s = -1;
  if (easy == NULL)
    {
      g_byte_array_unref (sink.body);
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_FAILED, _("Could not create a libcurl handle"));
      return FALSE;
    }
  headers = request_headers (req);
  set_options (req, easy, headers, &sink, errbuf);
  code = run_transfer (easy, cancellable);
  if (code == CURLE_OK)
    read_response (easy, &sink, resp);
  else
    {
      set_transfer_error (error, sink.too_large ? CURLE_WRITE_ERROR : code, req->display_url, req->max_body, errbuf);
      g_byte_array_unref (sink.body);
    }
  curl_slist_free_all (headers);
  curl_easy_cleanup (easy);
  return code == CURLE_OK;
}

static gpointer
init_curl (gpointer unused)
{
  /* Must run before any handle exists and, before curl 7.84, not concurrently: once per process. */
  return GINT_TO_POINTER (curl_global_init (CURL_GLOBAL_DEFAULT) == CURLE_OK);
}

const CatchupHttpTransport *
catchup_http_transport (GError **error)
{
  static const CatchupHttpTransport transport = { CATCHUP_HTTP_TRANSPORT_ABI, exchange, set_transfer_error };
  static GOnce curl_once = G_ONCE_INIT;

  if (!GPOINTER_TO_INT (g_once (&curl_once, init_curl, NULL)))
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_FAILED, _("Could not initialise libcurl"));
      return NULL;
    }
  return &transport;
}
