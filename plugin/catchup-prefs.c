#include "config.h"

#include "catchup-plugin-private.h"

#include <prefs.h>
#include <util.h>

/* Runs at probe time (also for a disabled plugin): defaults only. */
void
catchup_prefs_init (void)
{
  purple_prefs_add_none ("/plugins/core");
  purple_prefs_add_none (CATCHUP_PREFS_ROOT);
  purple_prefs_add_string (CATCHUP_PREF_ENDPOINT, "");
  purple_prefs_add_string (CATCHUP_PREF_CHAT_MODEL, "");
  purple_prefs_add_string (CATCHUP_PREF_EMBED_MODEL, "");
  purple_prefs_add_string (CATCHUP_PREF_API_KEY, "");
  purple_prefs_add_int (CATCHUP_PREF_TIMEOUT, 60);
  purple_prefs_add_bool (CATCHUP_PREF_THINKING, TRUE);
  purple_prefs_add_bool (CATCHUP_PREF_INDEX_IMS, FALSE);
  purple_prefs_add_int (CATCHUP_PREF_INDEX_UNLOGGED, CATCHUP_INDEX_UNLOGGED_ASK);
  purple_prefs_add_int (CATCHUP_PREF_RETENTION_DAYS, 0);
  purple_prefs_add_string (CATCHUP_PREF_DB_PATH, "");
  purple_prefs_add_int (CATCHUP_PREF_SETTLE_MS, 5000);
  purple_prefs_add_int (CATCHUP_PREF_HEARTBEAT, 60);
  purple_prefs_add_int (CATCHUP_PREF_COOLDOWN, 30 * 60);
  purple_prefs_add_int (CATCHUP_PREF_POST_INTERVAL, 1500);

  purple_prefs_add_none (CATCHUP_PREFS_DEFAULTS);
  purple_prefs_add_bool (CATCHUP_PREF_DEF_INDEX, TRUE);
  purple_prefs_add_bool (CATCHUP_PREF_DEF_AUTO, TRUE);
  purple_prefs_add_int (CATCHUP_PREF_DEF_THRESHOLD, 20);
  purple_prefs_add_int (CATCHUP_PREF_DEF_BUDGET, CATCHUP_DEFAULT_BUDGET);
  purple_prefs_add_int (CATCHUP_PREF_DEF_MAX_WINDOW, 500);
  purple_prefs_add_string (CATCHUP_PREF_DEF_LANGUAGE, "");
  purple_prefs_add_int (CATCHUP_PREF_DEF_LENGTH, CATCHUP_LENGTH_NORMAL);
  purple_prefs_add_bool (CATCHUP_PREF_DEF_ALLOW_POST, FALSE);
}

char *
catchup_prefs_db_path (void)
{
  const char *path = purple_prefs_get_string (CATCHUP_PREF_DB_PATH);

  if (path != NULL && *path != '\0')
    return g_strdup (path);
  /* Inside libpurple's user directory, so that "pidgin -c DIR" and "finch -c DIR" keep separate stores. */
  return g_build_filename (purple_user_dir (), "catchup", "history.db", NULL);
}

static void
add_pref (PurplePluginPrefFrame *frame, const char *path, const char *label)
{
  purple_plugin_pref_frame_add (frame, purple_plugin_pref_new_with_name_and_label (path, label));
}

/* A number pref with the same range as the room dialog's field for it. */
static void
add_int_pref (PurplePluginPrefFrame *frame, const char *path, const char *label, int min, int max)
{
  PurplePluginPref *pref = purple_plugin_pref_new_with_name_and_label (path, label);

  purple_plugin_pref_set_bounds (pref, min, max);
  purple_plugin_pref_frame_add (frame, pref);
}

static void
add_room_int_pref (PurplePluginPrefFrame *frame, const char *path, const char *label)
{
  int min = 0, max = 0;

  catchup_room_settings_bounds (path, &min, &max);
  add_int_pref (frame, path, label, min, max);
}

static void
add_header (PurplePluginPrefFrame *frame, const char *label)
{
  purple_plugin_pref_frame_add (frame, purple_plugin_pref_new_with_label (label));
}

/* A line of explanation: Pidgin wraps these, while every field's label is as wide as the widest one. */
static void
add_info (PurplePluginPrefFrame *frame, const char *text)
{
  PurplePluginPref *pref = purple_plugin_pref_new_with_label (text);

  purple_plugin_pref_set_type (pref, PURPLE_PLUGIN_PREF_INFO);
  purple_plugin_pref_frame_add (frame, pref);
}

static void
add_length_pref (PurplePluginPrefFrame *frame)
{
  PurplePluginPref *pref = purple_plugin_pref_new_with_name_and_label (CATCHUP_PREF_DEF_LENGTH, _("Length"));

  purple_plugin_pref_set_type (pref, PURPLE_PLUGIN_PREF_CHOICE);
  purple_plugin_pref_add_choice (pref, _("Short"), GINT_TO_POINTER (CATCHUP_LENGTH_SHORT));
  purple_plugin_pref_add_choice (pref, _("Normal"), GINT_TO_POINTER (CATCHUP_LENGTH_NORMAL));
  purple_plugin_pref_add_choice (pref, _("Detailed"), GINT_TO_POINTER (CATCHUP_LENGTH_DETAILED));
  purple_plugin_pref_frame_add (frame, pref);
}

static void
add_language_pref (PurplePluginPrefFrame *frame)
{
  PurplePluginPref *pref = purple_plugin_pref_new_with_name_and_label (CATCHUP_PREF_DEF_LANGUAGE, _("Language"));

  purple_plugin_pref_set_type (pref, PURPLE_PLUGIN_PREF_CHOICE);
  catchup_room_settings_language_choices (pref);
  purple_plugin_pref_frame_add (frame, pref);
}

/* Short labels: Pidgin shows the frame in a scrolled area 400 pixels wide and sizes every label like the
 * widest; what needs more words is an info line, which wraps. */
PurplePluginPrefFrame *
catchup_prefs_frame (PurplePlugin *plugin)
{
  PurplePluginPrefFrame *frame = purple_plugin_pref_frame_new ();
  PurplePluginPref *key;

  add_header (frame, _("Language model"));
  add_info (frame, _("No endpoint: the built-in summary,"));
  add_info (frame, _("and nothing leaves this computer."));
  add_pref (frame, CATCHUP_PREF_ENDPOINT, _("Endpoint URL"));
  add_pref (frame, CATCHUP_PREF_CHAT_MODEL, _("Chat model"));
  add_pref (frame, CATCHUP_PREF_EMBED_MODEL, _("Embedding model"));
  key = purple_plugin_pref_new_with_name_and_label (CATCHUP_PREF_API_KEY, _("API key"));
  purple_plugin_pref_set_masked (key, TRUE);
  purple_plugin_pref_frame_add (frame, key);
  add_int_pref (frame, CATCHUP_PREF_TIMEOUT, _("Timeout (seconds)"), 1, 3600);
  /* Pidgin sizes every label of the frame like the widest: the explanation goes on a line of its own */
  add_info (frame, _("Slower; off works only where the server allows it."));
  add_pref (frame, CATCHUP_PREF_THINKING, _("Let the model think first"));

  add_header (frame, _("Rooms"));
  /* Translators: keep these lines short: they are shown in a narrow column. */
  add_info (frame, _("For rooms without settings of their own."));
  add_info (frame, _("A room's own: /catchup settings there."));
  add_info (frame, _("A catch-up on rejoining needs at least \"After\" new messages and covers at most \"Window\"."));
  add_pref (frame, CATCHUP_PREF_DEF_INDEX, _("Keep a history index"));
  add_pref (frame, CATCHUP_PREF_DEF_AUTO, _("Catch up automatically when I rejoin"));
  add_room_int_pref (frame, CATCHUP_PREF_DEF_THRESHOLD, _("After (messages)"));
  add_room_int_pref (frame, CATCHUP_PREF_DEF_BUDGET, _("Memory (tokens)"));
  add_room_int_pref (frame, CATCHUP_PREF_DEF_MAX_WINDOW, _("Window (messages)"));
  add_language_pref (frame);
  add_length_pref (frame);
  add_pref (frame, CATCHUP_PREF_DEF_ALLOW_POST, _("Allow /catchup post"));

  add_header (frame, _("History"));
  add_pref (frame, CATCHUP_PREF_INDEX_IMS, _("Also index instant messages"));
  catchup_privacy_add_pref (frame);
  add_int_pref (frame, CATCHUP_PREF_RETENTION_DAYS, _("Keep (days)"), 0, 36500);
  add_info (frame, _("0 keeps the history for ever."));
  add_pref (frame, CATCHUP_PREF_DB_PATH, _("Database file"));
  add_info (frame, _("Empty: catchup/history.db"));
  add_info (frame, _("in the libpurple folder."));
  return frame;
}
