#include "config.h"

#include "catchup-plugin-private.h"

#include <cmds.h>
#include <prefs.h>

/* The /catchup command: its words, its help, and which module answers them. */

static PurpleCmdId catchup_cmd_id;

/* Every subcommand with one line, for /help catchup and /catchup help. */
static const struct {
  const char *syntax;
  const char *what;
} subcommands[] = {
  /* Translators: the subcommand lines of /help catchup; keep "/catchup" and its keywords (post, settings,
   * status, forget, import-logs, ask, help) as they are. */
  { "/catchup", N_("what was said since you were last here, up to the room's maximum") },
  { "/catchup N", N_("the last N messages") },
  { "/catchup 2h, 45m, 1d", N_("the last two hours, 45 minutes, one day") },
  { "/catchup post [N | 2h]", N_("shows the summary, and sends it to the room once you press Post (where the "
                                 "room's settings allow it)") },
  { "/catchup settings", N_("this room's catch-up settings") },
  { "/catchup status", N_("what is indexed, since when, which summariser") },
  { "/catchup forget", N_("deletes this room's history, after asking") },
  { "/catchup import-logs", N_("adds this room's Pidgin/Finch chat logs to its history") },
  { "/catchup ask QUESTION", N_("answers a question about the room from its history, per person it names "
                                "(only you see it)") },
  { "/catchup @nick", N_("what that person said, decided, committed to and was asked, with their open "
                         "commitments") },
  { "/catchup help", N_("this list") },
};

/* The list, one subcommand a line; html for the command's help (which libpurple shows as markup). */
static char *
help_text (gboolean html)
{
  g_autoptr (GString) text = g_string_new (NULL);

  g_string_append (text, _("catchup: a summary of what you missed in this room, written only for you."));
  for (guint i = 0; i < G_N_ELEMENTS (subcommands); i++)
    {
      g_autofree char *line = g_strdup_printf ("%s: %s", subcommands[i].syntax, _(subcommands[i].what));
      g_autofree char *escaped = html ? g_markup_escape_text (line, -1) : NULL;

      g_string_append (text, html ? "<br>" : "\n");
      g_string_append (text, html ? escaped : line);
    }
  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* One short line for an argument catchup_window_parse refused: what was wrong and what would work. */
static char *
bad_argument (const char *arg)
{
  const char *p = arg + (*arg == '-' || *arg == '+');
  const char *digits_end = p;

  while (g_ascii_isdigit (*digits_end))
    digits_end++;
  /* Translators: the answers to a wrong /catchup argument (%s is what was typed); keep "/catchup" as it is. */
  if (*arg == '-' && digits_end > p)
    return g_strdup_printf (_("“%s”: a count cannot be negative; try /catchup 50 or a span such as /catchup 2h."),
                            arg);
  if (digits_end > p && *digits_end == '\0')
    return g_strdup_printf (_("“%s” messages is nothing to catch up on; give 1 or more, e.g. /catchup 50."), arg);
  if (digits_end > p)
    return g_strdup_printf (_("“%s”: a span is a number with m, h, d or w, e.g. /catchup 45m, 2h, 1d or 1w."),
                            arg);
  return g_strdup_printf (_("Unknown “%s”: try /catchup 50 or /catchup 2h; /help catchup lists every command."),
                          arg);
}

static void
say_bad_argument (PurpleConversation *conv, const char *arg)
{
  g_autofree char *line = bad_argument (arg);

  catchup_output_local (conv, line);
}

static void
run_window (PurpleConversation *conv, const char *arg, gboolean post)
{
  CatchupWindow window;

  if (!catchup_window_parse (arg, g_get_real_time () / G_USEC_PER_SEC, &window))
    {
      say_bad_argument (conv, arg);
      return;
    }
  catchup_run (conv, &window, arg, post, FALSE);
}

static gboolean
posting_allowed (PurpleConversation *conv)
{
  CatchupRoomSettings settings;
  gboolean allowed;

  catchup_room_settings_get (conv, &settings);
  allowed = settings.allow_post && purple_conversation_get_type (conv) == PURPLE_CONV_TYPE_CHAT;
  catchup_room_settings_clear (&settings);
  return allowed;
}

static gboolean
is_verb (const char *word, const char *verb)
{
  return g_ascii_strcasecmp (word, verb) == 0;
}

static void
too_many_words (PurpleConversation *conv)
{
  /* Translators: keep "/catchup" and "/help catchup" as they are. */
  catchup_output_local (conv, _("/catchup takes one argument (or post and one); /help catchup lists them."));
}

static void
dispatch (PurpleConversation *conv, char **words)
{
  guint n = g_strv_length (words);

  if (catchup_social_dispatch (conv, words))
    return;
  if (n == 0)
    run_window (conv, NULL, FALSE);
  else if (is_verb (words[0], "post"))
    {
      if (n > 2)
        too_many_words (conv);
      else if (!posting_allowed (conv))
        catchup_output_local (conv, _("Posting catch-ups is off for this room; turn it on in /catchup settings."));
      else
        run_window (conv, n == 2 ? words[1] : NULL, TRUE);
    }
  else if (n > 1)
    too_many_words (conv);
  else if (is_verb (words[0], "help"))
    {
      g_autofree char *help = help_text (FALSE);

      catchup_output_local (conv, help);
    }
  else if (is_verb (words[0], "settings"))
    catchup_room_settings_dialog (purple_conversation_get_account (conv), purple_conversation_get_name (conv), conv);
  else if (is_verb (words[0], "status"))
    catchup_status_show (conv);
  else if (is_verb (words[0], "forget"))
    catchup_status_ask_forget (conv);
  else if (is_verb (words[0], "import-logs"))
    {
      if (purple_conversation_get_type (conv) == PURPLE_CONV_TYPE_CHAT)
        catchup_backfill_room (purple_conversation_get_account (conv), purple_conversation_get_name (conv), conv);
      else
        catchup_output_local (conv, _("Chat logs are imported for group chats only."));
    }
  else
    run_window (conv, words[0], FALSE);
}

static PurpleCmdRet
on_catchup (PurpleConversation *conv, const char *cmd, char **args, char **error, gpointer data)
{
  g_auto (GStrv) words = g_strsplit_set (args && args[0] ? args[0] : "", " \t", -1);
  g_autoptr (GPtrArray) kept = g_ptr_array_new ();

  if (purple_conversation_get_type (conv) == PURPLE_CONV_TYPE_IM && !purple_prefs_get_bool (CATCHUP_PREF_INDEX_IMS))
    {
      catchup_output_local (conv, _("Catch-up works in group chats; instant messages are indexed only when "
                                    "the plugin's preferences say so."));
      return PURPLE_CMD_RET_OK;
    }
  for (guint i = 0; words[i] != NULL; i++)
    if (*words[i] != '\0')
      g_ptr_array_add (kept, words[i]);
  g_ptr_array_add (kept, NULL);
  /* Every shape is answered here, so nothing typed after /catchup ever reaches the room. */
  dispatch (conv, (char **) kept->pdata);
  return PURPLE_CMD_RET_OK;
}

void
catchup_commands_start (PurplePlugin *plugin)
{
  g_autofree char *help = help_text (TRUE);

  /* libpurple keeps its own copy of the help */
  catchup_cmd_id = purple_cmd_register ("catchup", "s", PURPLE_CMD_P_PLUGIN,
                                        PURPLE_CMD_FLAG_CHAT | PURPLE_CMD_FLAG_IM | PURPLE_CMD_FLAG_ALLOW_WRONG_ARGS,
                                        NULL, PURPLE_CMD_FUNC (on_catchup), help, NULL);
}

void
catchup_commands_stop (void)
{
  /* Commands are not tied to the plugin handle: libpurple would keep calling into an unloaded plugin. */
  if (catchup_cmd_id != 0)
    purple_cmd_unregister (catchup_cmd_id);
  catchup_cmd_id = 0;
}
