#pragma once

#include <glib.h>

#include "catchup-http-transport.h"

G_BEGIN_DECLS

/*
 * Finds and opens the HTTP transport module (catchup-http-transport.h) once per process, at the first request
 * to a model server. Where it looks, first hit wins:
 *   $CATCHUP_HTTP_MODULE, the module's path, when set (nothing else is tried then);
 *   the install layout relative to the program or plugin holding this code: from the tool's bindir or the
 *     plugin's plugindir to pkglibdir, so a tree installed with DESTDIR or moved as a whole still finds it;
 *   a folder purple-catchup beside them (a plugin installed alone into ~/.purple/plugins);
 *   an uninstalled build folder: core/.libs beside the tool, ../core/.libs from test programs in tests/,
 *     ../../core/.libs from the plugin in plugin/.libs;
 *   pkglibdir as configured.
 */

#define CATCHUP_HTTP_MODULE_ENV "CATCHUP_HTTP_MODULE"
#define CATCHUP_HTTP_MODULE_NAME "catchup-http-curl." G_MODULE_SUFFIX

/* The transport, or NULL with CATCHUP_ERROR_NOT_FOUND (no module where it was looked for) or
 * CATCHUP_ERROR_FAILED (it would not load); the same answer on every call. Thread-safe. */
const CatchupHttpTransport *catchup_http_module_get (GError **error);

G_END_DECLS
