/* dladdr(), to find the program or plugin this code was loaded with. */
#define _GNU_SOURCE 1

#include "config.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <gmodule.h>

#include "catchup-error.h"
#include "catchup-http-module.h"

/* The outcome of the one attempt to load the module. */
typedef struct {
  const CatchupHttpTransport *transport;
  GError *error;
} Loaded;

/* The path leading from the folder from to the folder to, both absolute: "../lib/purple-catchup/". */
static char *
relative_path (const char *from, const char *to)
{
  g_autofree char *cfrom = g_canonicalize_filename (from, "/");
  g_autofree char *cto = g_canonicalize_filename (to, "/");
  g_auto (GStrv) f = g_strsplit (cfrom + 1, "/", -1);
  g_auto (GStrv) t = g_strsplit (cto + 1, "/", -1);
  GString *out = g_string_new (NULL);
  guint common = 0;

  while (f[common] != NULL && t[common] != NULL && strcmp (f[common], t[common]) == 0)
    common++;
  for (guint i = common; f[i] != NULL; i++)
    if (*f[i] != '\0')
      g_string_append (out, "../");
  for (guint i = common; t[i] != NULL; i++)
    if (*t[i] != '\0')
      g_string_append_printf (out, "%s/", t[i]);
  return g_string_free (out, FALSE);
}

static void
add_candidate (GPtrArray *paths, const char *dir, const char *relative)
{
  g_ptr_array_add (paths, g_build_filename (dir, relative, CATCHUP_HTTP_MODULE_NAME, NULL));
}

/* The places relative to the file object (the program or the plugin), symbolic links resolved. */
static void
add_beside (GPtrArray *paths, const char *object)
{
  char *real = object != NULL ? realpath (object, NULL) : NULL;
  g_autofree char *dir = NULL;
  g_autofree char *from_bin = relative_path (CATCHUP_BINDIR, CATCHUP_PKGLIBDIR);
  g_autofree char *from_plugins = relative_path (CATCHUP_PLUGINDIR, CATCHUP_PKGLIBDIR);

  if (real == NULL)
    return;
  dir = g_path_get_dirname (real);
  free (real);
  add_candidate (paths, dir, from_bin);
  add_candidate (paths, dir, from_plugins);
  /* a folder of its own beside a plugin installed alone (libpurple would probe a module beside it as a plugin) */
  add_candidate (paths, dir, PACKAGE_TARNAME);
  /* a build folder: the tool at its top, test programs in tests/, the plugin and fuzz targets two levels down */
  add_candidate (paths, dir, "core/.libs");
  add_candidate (paths, dir, "../core/.libs");
  add_candidate (paths, dir, "../../core/.libs");
}

static GPtrArray *
candidates (void)
{
  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);
  Dl_info info = { 0 };

  /* dladdr names the plugin's file; for the program itself it gives argv[0], which /proc/self/exe corrects */
  if (dladdr ((void *) catchup_http_module_get, &info) != 0 && info.dli_fname != NULL
      && strchr (info.dli_fname, '/') != NULL)
    add_beside (paths, info.dli_fname);
  add_beside (paths, "/proc/self/exe");
  g_ptr_array_add (paths, g_build_filename (CATCHUP_PKGLIBDIR, CATCHUP_HTTP_MODULE_NAME, NULL));
  return paths;
}

static const CatchupHttpTransport *
open_module (const char *path, GError **error)
{
  GModule *module = g_module_open (path, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  CatchupHttpTransportFunc get = NULL;
  const CatchupHttpTransport *transport;

  if (module == NULL || !g_module_symbol (module, CATCHUP_HTTP_TRANSPORT_SYMBOL, (gpointer *) &get) || get == NULL)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_FAILED,
                   _("Could not load the HTTP transport for model servers (%s): %s"), path, g_module_error ());
      g_clear_pointer (&module, g_module_close);
      return NULL;
    }
  transport = get (error);
  if (transport != NULL && transport->abi != CATCHUP_HTTP_TRANSPORT_ABI)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_FAILED,
                   _("The HTTP transport for model servers (%s) belongs to another version of %s: reinstall it"),
                   path, PACKAGE_NAME);
      transport = NULL;
    }
  if (transport == NULL)
    {
      g_module_close (module);
      return NULL;
    }
  /* libcurl keeps global state from its first use: the module stays for the life of the process */
  g_module_make_resident (module);
  g_debug ("HTTP transport loaded from %s", path);
  return transport;
}

static gpointer
load (gpointer unused)
{
  Loaded *loaded = g_new0 (Loaded, 1);
  const char *env = g_getenv (CATCHUP_HTTP_MODULE_ENV);
  g_autoptr (GPtrArray) paths = NULL;

  if (env != NULL && *env != '\0')
    {
      loaded->transport = open_module (env, &loaded->error);
      return loaded;
    }
  paths = candidates ();
  for (guint i = 0; i < paths->len; i++)
    if (g_file_test (paths->pdata[i], G_FILE_TEST_IS_REGULAR))
      {
        loaded->transport = open_module (paths->pdata[i], &loaded->error);
        return loaded;
      }
  g_set_error (&loaded->error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND,
               _("The HTTP transport for model servers (%s) was found neither beside the program nor in %s; "
                 "set %s to its path"),
               CATCHUP_HTTP_MODULE_NAME, CATCHUP_PKGLIBDIR, CATCHUP_HTTP_MODULE_ENV);
  return loaded;
}

const CatchupHttpTransport *
catchup_http_module_get (GError **error)
{
  static GOnce once = G_ONCE_INIT;
  const Loaded *loaded = g_once (&once, load, NULL);

  if (loaded->transport == NULL)
    g_propagate_error (error, g_error_copy (loaded->error));
  return loaded->transport;
}
