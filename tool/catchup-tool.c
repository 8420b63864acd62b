/*
 * catchup — the command-line face of the core library: import history, build catch-up memory, answer
 * questions from history and summarise a window, without a chat client. Benchmarks and tests drive the
 * library through it, so its JSON output is an interface: add members, never rename them.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "tool.h"

/* --- dispatch --- */

typedef struct {
  const char *name;
  const char *parameters;
  const char *summary;
  int (*run) (int argc, char **argv);
} ToolCommand;

static const ToolCommand commands[] = {
  { "import", N_("--format jsonl|irc FILE…"), N_("Import chat logs into the history database"), cmd_import },
  { "rooms", N_("[--json]"), N_("List rooms with message counts and time spans"), cmd_rooms },
  { "memory", N_("--room ROOM --window FIRST..LAST"), N_("Build catch-up memory for a window"), cmd_memory },
  { "recall", N_("--room ROOM --query TEXT"), N_("Find the history that answers a question"), cmd_recall },
  { "ask", N_("--room ROOM --question TEXT"), N_("Ask the room: evidence per person, latest state marked"), cmd_ask },
  { "summarize", N_("--room ROOM --last N|--since TIME|--window A..B"), N_("Summarise a window of a room"),
    cmd_summarize },
  { "embed", N_("[--room ROOM] --endpoint URL --embed-model NAME"),
    N_("Store a room's vectors for an embedding model"), cmd_embed },
};

static void
print_tool_help (FILE *out)
{
  g_autoptr (GString) s = g_string_new (NULL);

  g_string_append_printf (s, _("Usage:\n  %s COMMAND [OPTION…]\n\n"), "catchup");
  g_string_append (s, _("Catch up on group chats from the history that Pidgin/Finch's Catch-up plugin "
                        "records, or from imported logs.\n\nCommands:\n"));
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    g_string_append_printf (s, "  %-10s %s\n             catchup %s %s\n", commands[i].name,
                            _(commands[i].summary), commands[i].name, _(commands[i].parameters));
  g_string_append (s, _("\nRun “catchup COMMAND --help” for a command's options.\n"
                        "Without --db the plugin's database is used: $CATCHUP_DB if set, else "
                        "~/.purple/catchup/history.db.\n"
                        "Exit status: 0 on success, 1 when the command failed, 2 for a usage error.\n"));
  fputs (s->str, out);
}

static const ToolCommand *
find_command (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_strcmp0 (commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

int
main (int argc, char **argv)
{
  const ToolCommand *command;
  g_autofree char *prgname = NULL;

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  if (argc < 2)
    {
      print_tool_help (stderr);
      return TOOL_EXIT_USAGE;
    }
  if (g_strcmp0 (argv[1], "--help") == 0 || g_strcmp0 (argv[1], "-h") == 0 || g_strcmp0 (argv[1], "help") == 0)
    {
      if (argc > 2 && g_strcmp0 (argv[1], "help") == 0 && find_command (argv[2]) != NULL)
        {
          char *help_argv[] = { argv[2], (char *) "--help", NULL };

          prgname = g_strconcat ("catchup ", argv[2], NULL);
          g_set_prgname (prgname);
          return find_command (argv[2])->run (2, help_argv);
        }
      print_tool_help (stdout);
      return TOOL_EXIT_OK;
    }
  if (g_strcmp0 (argv[1], "--version") == 0)
    {
      g_print ("catchup %s\n", PACKAGE_VERSION);
      return TOOL_EXIT_OK;
    }
  command = find_command (argv[1]);
  if (command == NULL || command->run == NULL)
    {
      g_printerr (_("catchup: unknown command “%s”\n"), argv[1]);
      g_printerr (_("Run “catchup --help” for the list of commands.\n"));
      return TOOL_EXIT_USAGE;
    }
  /* Help and messages then name the subcommand: "Usage: catchup memory [OPTION…]". */
  prgname = g_strconcat ("catchup ", command->name, NULL);
  g_set_prgname (prgname);
  return command->run (argc - 1, argv + 1);
}
