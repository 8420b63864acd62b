#include "config.h"

#define PURPLE_PLUGINS
#include <glib/gi18n-lib.h>
#include <plugin.h>
#include <version.h>

#include "catchup.h"

#define CATCHUP_PLUGIN_ID "core-purple-catchup-catchup"

static gboolean
plugin_load (PurplePlugin *plugin)
{
  return TRUE;
}

static gboolean
plugin_unload (PurplePlugin *plugin)
{
  return TRUE;
}

static PurplePluginInfo info = {
  PURPLE_PLUGIN_MAGIC, PURPLE_MAJOR_VERSION, PURPLE_MINOR_VERSION,
  PURPLE_PLUGIN_STANDARD, NULL, 0, NULL, PURPLE_PRIORITY_DEFAULT,
  CATCHUP_PLUGIN_ID, NULL, PACKAGE_VERSION, NULL, NULL, NULL, NULL,
  plugin_load, plugin_unload, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL
};

static void
init_plugin (PurplePlugin *plugin)
{
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  info.name = _("Catch-up");
  info.summary = _("Summaries of what you missed in group chats");
  /* TRANSLATORS: "/catchup" is the command the user types; keep it as it is. */
  info.description = _("Type /catchup in a group chat, or rejoin a room, to get a short summary of what was said "
                       "while you were away, with earlier context spelled out.");
}

PURPLE_INIT_PLUGIN (catchup, init_plugin, info)
