/* Loads the built plugin the way libpurple does, but strictly.
 *
 * libpurple opens plugins lazily and, when a symbol is missing, only marks the plugin "unloadable" in the plugin
 * list: nothing fails loudly. Opening the module with RTLD_NOW here resolves every undefined symbol at once, so a
 * missing one fails the build's test suite instead. The test also checks that the plugin exports nothing but
 * purple_init_plugin, so the core library's symbols cannot clash with other plugins loaded into the same client.
 */
#include "config.h"

#include <dlfcn.h>
#include <string.h>

#include <gio/gio.h>

static const char *
plugin_path (void)
{
  const char *path = g_getenv ("CATCHUP_PLUGIN_SO");

  if (path == NULL || *path == '\0')
    path = "plugin/.libs/catchup.so";
  return path;
}

static void
test_dlopen_now (void)
{
  const char *path = plugin_path ();
  void *handle;
  void *sym;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_fail_printf ("plugin not built: %s", path);
      return;
    }

  handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL)
    {
      g_test_fail_printf ("dlopen(RTLD_NOW) failed: %s", dlerror ());
      return;
    }

  sym = dlsym (handle, "purple_init_plugin");
  g_assert_nonnull (sym);

  g_assert_cmpint (dlclose (handle), ==, 0);
}

/* A plugin copied alone into ~/.purple/plugins has its prompt templates: they are compiled into it, and
 * registered with GIO while it is loaded. */
static void
test_prompts_built_in (void)
{
  const char *path = plugin_path ();
  const char *const names[] = { "gaps.txt", "summary.txt", "select.txt" };
  void *handle;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_fail_printf ("plugin not built: %s", path);
      return;
    }
  handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  g_assert_nonnull (handle);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *resource = g_strconcat ("/org/purple-catchup/prompts/", names[i], NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (GBytes) bytes = g_resources_lookup_data (resource, G_RESOURCE_LOOKUP_FLAGS_NONE, &error);

      g_assert_no_error (error);
      g_assert_nonnull (g_strstr_len (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), "{{"));
    }
  g_assert_cmpint (dlclose (handle), ==, 0);
}

/* Symbols the toolchain may export from any shared object; everything else must be purple_init_plugin. */
static gboolean
is_toolchain_symbol (const char *name)
{
  static const char *const allowed[] = { "_init", "_fini", "_edata", "_end", "__bss_start", NULL };

  for (guint i = 0; allowed[i] != NULL; i++)
    if (strcmp (name, allowed[i]) == 0)
      return TRUE;
  return FALSE;
}

static void
test_exports_only_init (void)
{
  const char *path = plugin_path ();
  const char *nm = g_getenv ("NM");
  g_autofree char *nm_prog = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) nm_argv = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  gboolean found_init = FALSE;
  int status = 0;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_fail_printf ("plugin not built: %s", path);
      return;
    }

  /* $NM from libtool may carry options ("nm -B"); keep them. */
  if (nm == NULL || *nm == '\0')
    nm = "nm";
  if (!g_shell_parse_argv (nm, NULL, &nm_argv, &error))
    {
      g_test_skip_printf ("cannot parse NM=%s: %s", nm, error->message);
      return;
    }
  nm_prog = g_find_program_in_path (nm_argv[0]);
  if (nm_prog == NULL)
    {
      g_test_skip_printf ("%s not found", nm_argv[0]);
      return;
    }

  g_ptr_array_add (argv, nm_prog);
  for (guint i = 1; nm_argv[i] != NULL; i++)
    g_ptr_array_add (argv, nm_argv[i]);
  g_ptr_array_add (argv, (gpointer) "-D");
  g_ptr_array_add (argv, (gpointer) "--defined-only");
  g_ptr_array_add (argv, (gpointer) path);
  g_ptr_array_add (argv, NULL);

  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, &error))
    {
      g_test_fail_printf ("nm failed: %s: %s", error->message, err);
      return;
    }

  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) fields = g_strsplit_set (g_strstrip (lines[i]), " \t", -1);
      guint n = g_strv_length (fields);
      const char *name;
      const char *type;

      if (n < 2)
        continue;
      name = fields[n - 1];
      type = fields[n - 2];
      /* Absolute symbols (type A) are version nodes from libtool's version script. */
      if (strcmp (type, "A") == 0 || is_toolchain_symbol (name))
        continue;
      if (strcmp (name, "purple_init_plugin") == 0)
        {
          found_init = TRUE;
          continue;
        }
      g_test_fail_printf ("the plugin exports %s (type %s); only purple_init_plugin may be exported", name, type);
    }
  g_assert_true (found_init);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/plugin-load/dlopen-now", test_dlopen_now);
  g_test_add_func ("/catchup/plugin-load/exports-only-init", test_exports_only_init);
  g_test_add_func ("/catchup/plugin-load/prompts-built-in", test_prompts_built_in);
  return g_test_run ();
}
