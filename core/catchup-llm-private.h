#pragma once

#include <curl/curl.h>

#include "catchup-llm.h"

G_BEGIN_DECLS

/* The CATCHUP_ERROR a failed transfer maps to; separate so that failures a test cannot provoke on
 * 127.0.0.1 (DNS) are still checked. detail is curl's error buffer and may be empty. */
void catchup_llm_set_transfer_error (GError **error, CURLcode code, const char *display_url, const char *detail);

G_END_DECLS
