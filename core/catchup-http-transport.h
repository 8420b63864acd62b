#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/*
 * The boundary between the core and its HTTP transport, a module of its own (catchup-http-curl.so, built from
 * catchup-http-curl.c over libcurl) that catchup-http-module.c opens only when a model server is first asked:
 * libcurl and its dependency tree are then never loaded by a catch-up without a model. The module links GLib
 * and libcurl, not the core; both sides include this header, and CATCHUP_HTTP_TRANSPORT_ABI changes with any
 * change to it.
 */

#define CATCHUP_HTTP_TRANSPORT_ABI 1
/* The module's one exported symbol, a CatchupHttpTransportFunc. */
#define CATCHUP_HTTP_TRANSPORT_SYMBOL "catchup_http_transport"

/* One POST of a JSON body. */
typedef struct {
  const char *url;          /* the endpoint, user:password included */
  const char *display_url;  /* the base URL for messages, without user:password */
  const char *payload;
  const char *auth_header;  /* "Authorization: Bearer …" or NULL */
  const char *no_proxy;     /* hosts never reached through a proxy */
  guint timeout_ms;         /* the whole exchange, connection included */
  guint connect_timeout_ms;
  gboolean tls_verify;
  gsize max_body;           /* a longer answer is refused while it arrives */
} CatchupHttpRequest;

/* What one exchange brought back. */
typedef struct {
  long status;
  GBytes *body;
  char *content_type;       /* NULL when the server sent none */
  gint64 retry_after_s;     /* -1: no Retry-After */
} CatchupHttpResponse;

typedef struct {
  guint abi;                /* CATCHUP_HTTP_TRANSPORT_ABI */
  /* One exchange; FALSE with a CATCHUP_ERROR (network, size) or G_IO_ERROR_CANCELLED when no HTTP answer came
   * back. Cancelling the cancellable ends a transfer at once. Safe to call from any thread. */
  gboolean (*exchange) (const CatchupHttpRequest *request, GCancellable *cancellable, CatchupHttpResponse *response,
                        GError **error);
  /* The error a failed transfer with libcurl's CURLcode code maps to; for tests, which cannot provoke every
   * failure (DNS) on 127.0.0.1. detail is libcurl's error buffer and may be empty. */
  void (*set_transfer_error) (GError **error, int code, const char *display_url, gsize max_body,
                              const char *detail);
} CatchupHttpTransport;

/* Initialises the transport (once per process) and returns it, or NULL with a CATCHUP_ERROR. */
typedef const CatchupHttpTransport *(*CatchupHttpTransportFunc) (GError **error);

/* Declared for the module's definition. */
const CatchupHttpTransport *catchup_http_transport (GError **error);

G_END_DECLS
