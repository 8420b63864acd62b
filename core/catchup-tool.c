#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "catchup.h"

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  g_printerr ("%s\n", _("catchup: not implemented yet"));
  return 1;
}
