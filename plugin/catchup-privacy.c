#include "config.h"

#include "catchup-plugin-private.h"

#include <glib/gstdio.h>

#include <prefs.h>
#include <request.h>

/*
 * Privacy as users expect it: someone who turned libpurple's chat logging off did not want their rooms kept on
 * disk, so the plugin does not start a history of its own behind their back. While chat logging is off and the
 * user has not decided, nothing is indexed and one question is asked (Index / Don't index); the answer is the
 * preference CATCHUP_PREF_INDEX_UNLOGGED, which the preferences frame shows too. An explicit "Don't index" wins
 * even if logging is turned on later.
 */

#define PURPLE_PREF_LOG_CHATS "/purple/logging/log_chats"

static gpointer question;   /* the open request, NULL when none */
static gboolean asked;      /* once per session: closing the question without an answer asks next time */

/* The request passes the index of the button: 0 Index, 1 Don't index. */
static void
answer (gpointer data, int choice)
{
  question = NULL;
  purple_prefs_set_int (CATCHUP_PREF_INDEX_UNLOGGED, choice == 0 ? CATCHUP_INDEX_UNLOGGED_YES
                                                                  : CATCHUP_INDEX_UNLOGGED_NO);
}

static void
ask (void)
{
  asked = TRUE;
  question = purple_request_action (
    catchup_plugin.plugin, _("Catch-up"), _("Keep a history of your group chats?"),
    _("Chat logging is turned off in this client, so the catch-up plugin does not keep a history of the rooms "
      "you are in without asking. With a history, /catchup and the automatic catch-up work; without one, they "
      "have nothing to summarise. The history stays on this computer; the plugin's preferences can change this "
      "later."),
    0, NULL, NULL, NULL, NULL, 2,
    _("_Index"), G_CALLBACK (answer),
    _("_Don't index"), G_CALLBACK (answer));
}

gboolean
catchup_privacy_allows_index (void)
{
  int decided = purple_prefs_get_int (CATCHUP_PREF_INDEX_UNLOGGED);

  if (decided == CATCHUP_INDEX_UNLOGGED_NO)
    return FALSE;
  if (decided == CATCHUP_INDEX_UNLOGGED_YES || purple_prefs_get_bool (PURPLE_PREF_LOG_CHATS))
    return TRUE;
  if (!asked && question == NULL && catchup_plugin.plugin != NULL)
    ask ();
  return FALSE;
}

void
catchup_privacy_add_pref (PurplePluginPrefFrame *frame)
{
  PurplePluginPref *pref = purple_plugin_pref_new_with_name_and_label (
    CATCHUP_PREF_INDEX_UNLOGGED, _("Without chat logs"));

  purple_plugin_pref_set_type (pref, PURPLE_PLUGIN_PREF_CHOICE);
  purple_plugin_pref_add_choice (pref, _("Ask before keeping a history"), GINT_TO_POINTER (CATCHUP_INDEX_UNLOGGED_ASK));
  purple_plugin_pref_add_choice (pref, _("Keep a history anyway"), GINT_TO_POINTER (CATCHUP_INDEX_UNLOGGED_YES));
  purple_plugin_pref_add_choice (pref, _("Keep no history"), GINT_TO_POINTER (CATCHUP_INDEX_UNLOGGED_NO));
  purple_plugin_pref_frame_add (frame, pref);
}

/* ---------- what /catchup status says about it ---------- */

static goffset
file_size (const char *path)
{
  GStatBuf st;

  return g_stat (path, &st) == 0 ? st.st_size : 0;
}

/* Where the history is, how big, how long it is kept, and whether this room goes into it. */
char *
catchup_privacy_status_text (PurpleConversation *conv)
{
  const char *path = catchup_writer_get_path (catchup_plugin.writer);
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *size = g_format_size (file_size (path) + file_size (wal));
  int days = purple_prefs_get_int (CATCHUP_PREF_RETENTION_DAYS);
  g_autofree char *kept = NULL;
  CatchupRoomSettings settings;
  const char *indexed;
  int decided = purple_prefs_get_int (CATCHUP_PREF_INDEX_UNLOGGED);

  if (days > 0)
    {
      g_autofree char *n = g_strdup_printf ("%d", days);
      kept = g_strdup_printf (ngettext ("History is kept for %s day.", "History is kept for %s days.", (gulong) days),
                              n);
    }
  else
    kept = g_strdup (_("History is kept until you delete it (/catchup forget)."));
  catchup_room_settings_get (conv, &settings);
  if (!settings.index)
    indexed = _("This room is not indexed: its settings turn the index off.");
  else if (decided == CATCHUP_INDEX_UNLOGGED_NO)
    indexed = _("This room is not indexed: you chose to keep no history while chat logging is off.");
  else if (!catchup_privacy_allows_index ())
    indexed = _("This room is not indexed yet: chat logging is off, and the question whether to keep a history "
                "is not answered.");
  else
    indexed = _("This room is indexed.");
  catchup_room_settings_clear (&settings);
  /* TRANSLATORS: "History: /home/u/.purple/catchup/history.db (2.1 MB). History is kept for 30 days." */
  return g_strdup_printf (_("History: %s (%s). %s\n%s"), path, size, kept, indexed);
}

void
catchup_privacy_stop (void)
{
  if (question != NULL)
    purple_request_close (PURPLE_REQUEST_ACTION, question);
  question = NULL;
  asked = FALSE;
}
