#include "config.h"

#include "catchup-plugin-private.h"

#include <stdlib.h>
#include <string.h>

#include <cmds.h>
#include <debug.h>
#include <prefs.h>
#include <request.h>
#include <util.h>

/* Without a known "last present", a plain /catchup covers this many messages. */
#define DEFAULT_LAST_N 100
#define MAX_LAST_N 100000

static PurpleCmdId catchup_cmd_id;

/* ---------- one catch-up: resolve the window on the writer, then run the engine ---------- */

typedef struct {
  CatchupRoomKey *key;
  char *spec;
  CatchupWindow window;
  gboolean since_present;   /* window from the store's "last present" (plain /catchup) */
  gboolean post, automatic;
  CatchupRoomSettings settings;
} Job;

typedef struct {
  gint64 count;
  gint64 first_ts;
  gint64 since;             /* resolved start of a since-present window; 0 when it fell back to the last N */
} Preview;

static void
job_free (Job *job)
{
  catchup_room_key_free (job->key);
  g_free (job->spec);
  g_free (job->window.first_id);
  g_free (job->window.last_id);
  catchup_room_settings_clear (&job->settings);
  g_free (job);
}

/* On the writer thread, after every queued message is written: what the window holds. */
static gpointer
preview_window (CatchupStore *store, gpointer data, GError **error)
{
  Job *job = data;
  Preview *preview = g_new0 (Preview, 1);
  g_autoptr (CatchupRoomInfo) info = NULL;
  g_autoptr (GPtrArray) msgs = NULL;
  gint64 room = catchup_store_find_room (store, job->spec, NULL);
  guint cap = job->window.max_messages;

  if (room == 0)
    return preview;
  if (job->since_present)
    {
      if ((info = catchup_store_room_info (store, room, error)) == NULL)
        {
          g_free (preview);
          return NULL;
        }
      if (info->last_present != 0)
        preview->since = info->last_present; /* same second counts: times are whole seconds */
    }
  if (job->window.kind == CATCHUP_WINDOW_SINCE || preview->since != 0)
    msgs = catchup_store_since (store, room, preview->since ? preview->since : job->window.since, error);
  else
    msgs = catchup_store_before (store, room, NULL, job->window.last_n, error);
  if (msgs == NULL)
    {
      g_free (preview);
      return NULL;
    }
  if (cap != 0 && msgs->len > cap)
    g_ptr_array_remove_range (msgs, 0, msgs->len - cap);
  preview->count = msgs->len;
  preview->first_ts = msgs->len ? ((CatchupMessage *) msgs->pdata[0])->ts : 0;
  return preview;
}

/* Numbers are formatted outside translated strings: xgettext cannot read G_GINT64_FORMAT. */
static char *
format_count (gint64 n)
{
  return g_strdup_printf ("%" G_GINT64_FORMAT, n);
}

static gulong
plural_n (gint64 n)
{
  return (gulong) CLAMP (n, 0, G_MAXLONG);
}

static char *
format_time (gint64 ts)
{
  g_autoptr (GDateTime) then = g_date_time_new_from_unix_local (ts);
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();

  if (then == NULL)
    return g_strdup ("?");
  if (g_date_time_get_year (then) == g_date_time_get_year (now)
      && g_date_time_get_day_of_year (then) == g_date_time_get_day_of_year (now))
    return g_date_time_format (then, "%H:%M");
  return g_date_time_format (then, "%a %d %b %H:%M");
}

static void
engine_done (GObject *source, GAsyncResult *res, gpointer data)
{
  Job *job = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupResult) result = NULL;
  PurpleConversation *conv;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (res))))
    {
      job_free (job);
      return;
    }
  result = catchup_engine_run_finish (res, &error);
  /* The conversation may have been closed while the engine worked: never keep a pointer across that. */
  conv = catchup_room_key_find_conv (job->key);
  if (conv == NULL)
    ;
  else if (result == NULL)
    {
      g_autofree char *line = g_strdup_printf (_("Catch-up failed: %s"), error ? error->message : _("unknown error"));
      catchup_output_local (conv, line);
    }
  else
    {
      catchup_output_result (conv, result);
      if (job->post)
        catchup_output_post (conv, result);
      /* A catch-up counts as being present: the next one starts here. */
      catchup_signals_mark_present (conv);
    }
  job_free (job);
}

static void
start_engine (PurpleConversation *conv, Job *job, const Preview *preview)
{
  g_autofree char *when = format_time (preview->first_ts);
  g_autofree char *line = NULL;
  g_autofree char *db_path = g_strdup (catchup_writer_get_path (catchup_plugin.writer));
  g_autofree char *count = format_count (preview->count);
  CatchupLlmConfig *model = catchup_model_config_from_prefs ();
  CatchupOptions opts;

  if (preview->since != 0)
    {
      job->window.kind = CATCHUP_WINDOW_SINCE;
      job->window.since = preview->since;
    }
  line = g_strdup_printf (ngettext ("Catching up on %s message since %s…", "Catching up on %s messages since %s…",
                                    plural_n (preview->count)),
                          count, when);
  catchup_output_local (conv, line);

  catchup_options_init (&opts);
  opts.memory.budget = job->settings.budget;
  opts.length = job->settings.length;
  opts.language = job->settings.language;
  /* the user's nick in this room: lines that name them go under "For you" */
  if (purple_conversation_get_type (conv) == PURPLE_CONV_TYPE_CHAT)
    opts.me = (char *) purple_conv_chat_get_nick (PURPLE_CONV_CHAT (conv));
  /* the run copies the settings and makes its own client */
  opts.model = model;
  catchup_engine_run_async (db_path, job->spec, &job->window, &opts, catchup_plugin.cancellable, engine_done, job);
  catchup_llm_config_free (model);
}

static void
preview_done (GObject *source, GAsyncResult *res, gpointer data)
{
  Job *job = data;
  g_autoptr (GError) error = NULL;
  g_autofree Preview *preview = NULL;
  PurpleConversation *conv;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (res))))
    {
      job_free (job);
      return;
    }
  preview = catchup_writer_call_finish (catchup_plugin.writer, res, &error);
  conv = catchup_room_key_find_conv (job->key);
  if (conv == NULL || (preview == NULL && job->automatic))
    {
      job_free (job);
      return;
    }
  if (preview == NULL || preview->count == 0)
    {
      /* After an absence IRC could not show, "nothing" would be untrue: say what was not received. */
      g_autofree char *gap = preview ? catchup_presence_gap_text (conv) : NULL;

      if (!job->automatic)
        catchup_output_local (conv, gap ? gap : preview ? _("Nothing to catch up on here yet.") : error->message);
      job_free (job);
      return;
    }
  start_engine (conv, job, preview);
}

static void
start_job (PurpleConversation *conv, const CatchupWindow *window, gboolean since_present, gboolean post,
           gboolean automatic)
{
  Job *job;

  if (catchup_plugin.writer == NULL)
    {
      catchup_output_local (conv, _("The catch-up history database could not be opened; see the debug log."));
      return;
    }
  job = g_new0 (Job, 1);
  job->key = catchup_room_key_new (conv);
  job->spec = catchup_room_key_spec (job->key);
  job->window = *window;
  job->window.first_id = g_strdup (window->first_id);
  job->window.last_id = g_strdup (window->last_id);
  job->since_present = since_present;
  job->post = post;
  job->automatic = automatic;
  catchup_room_settings_get (conv, &job->settings);
  if (job->window.max_messages == 0)
    job->window.max_messages = job->settings.max_window;
  /* The preview runs after the messages still queued for writing, so the window includes them. */
  catchup_writer_call_async (catchup_plugin.writer, preview_window, job, NULL, g_free, catchup_plugin.cancellable,
                             preview_done, job);
}

void
catchup_run (PurpleConversation *conv, const CatchupWindow *window, gboolean post, gboolean automatic)
{
  start_job (conv, window, FALSE, post, automatic);
}

/* ---------- status and forget ---------- */

static gpointer
room_info_call (CatchupStore *store, gpointer data, GError **error)
{
  gint64 room = catchup_store_find_room (store, data, NULL);

  return room ? catchup_store_room_info (store, room, error) : NULL;
}

static void
status_done (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (CatchupRoomKey) key = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupRoomInfo) info = NULL;
  g_autoptr (GString) text = g_string_new (NULL);
  g_autofree char *last_error = NULL;
  const char *endpoint = purple_prefs_get_string (CATCHUP_PREF_ENDPOINT);
  PurpleConversation *conv;
  guint64 n_errors = 0;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (res))))
    return;
  info = catchup_writer_call_finish (catchup_plugin.writer, res, &error);
  if ((conv = catchup_room_key_find_conv (key)) == NULL)
    return;
  if (info == NULL || info->n_messages == 0)
    g_string_append (text, _("Nothing of this room is indexed yet."));
  else
    {
      g_autofree char *first = format_time (info->first_ts);
      g_autofree char *last = format_time (info->last_ts);
      g_autofree char *count = format_count (info->n_messages);

      g_string_append_printf (text, ngettext ("%s message indexed, from %s to %s.",
                                              "%s messages indexed, from %s to %s.", plural_n (info->n_messages)),
                              count, first, last);
      if (info->last_present != 0)
        {
          g_autofree char *present = format_time (info->last_present);

          g_string_append_c (text, ' ');
          g_string_append_printf (text, _("Last present: %s."), present);
        }
    }
  g_string_append_c (text, '\n');
  if (endpoint == NULL || *endpoint == '\0')
    g_string_append (text, _("Summaries: built-in (no language model configured)."));
  else
    g_string_append_printf (text, _("Summaries: %s at %s."), purple_prefs_get_string (CATCHUP_PREF_CHAT_MODEL),
                            endpoint);
  g_string_append_c (text, '\n');
  {
    g_autofree char *kept = catchup_privacy_status_text (conv);
    g_string_append (text, kept);
  }
  catchup_writer_get_stats (catchup_plugin.writer, NULL, &n_errors, &last_error);
  if (n_errors != 0)
    {
      g_autofree char *count = g_strdup_printf ("%" G_GUINT64_FORMAT, n_errors);

      g_string_append_c (text, '\n');
      g_string_append_printf (text, _("Write errors: %s (last: %s)"), count, last_error);
    }
  catchup_output_local (conv, text->str);
}

static gpointer
forget_call (CatchupStore *store, gpointer data, GError **error)
{
  gint64 room = catchup_store_find_room (store, data, NULL);
  CatchupRoomInfo *info;

  if (room == 0)
    return g_new0 (CatchupRoomInfo, 1);
  info = catchup_store_room_info (store, room, error);
  if (info != NULL && !catchup_store_forget_room (store, room, error))
    g_clear_pointer (&info, catchup_room_info_free);
  return info;
}

static void
forget_done (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (CatchupRoomKey) key = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupRoomInfo) info = NULL;
  g_autofree char *line = NULL;
  PurpleConversation *conv;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (res))))
    return;
  info = catchup_writer_call_finish (catchup_plugin.writer, res, &error);
  if ((conv = catchup_room_key_find_conv (key)) == NULL)
    return;
  if (info == NULL)
    line = g_strdup_printf (_("Could not forget this room's history: %s"), error->message);
  else
    {
      g_autofree char *count = format_count (info->n_messages);

      line = g_strdup_printf (ngettext ("Forgot %s message of this room.", "Forgot %s messages of this room.",
                                        plural_n (info->n_messages)),
                              count);
    }
  catchup_output_local (conv, line);
}

static void
room_call (CatchupRoomKey *key, CatchupWriterFunc func, GAsyncReadyCallback done)
{
  catchup_writer_call_async (catchup_plugin.writer, func, catchup_room_key_spec (key), g_free,
                             (GDestroyNotify) catchup_room_info_free, catchup_plugin.cancellable, done, key);
}

static void
forget_confirmed (CatchupRoomKey *key, int action)
{
  if (catchup_plugin.writer != NULL)
    room_call (key, forget_call, forget_done);
  else
    catchup_room_key_free (key);
}

static void
forget_cancelled (CatchupRoomKey *key, int action)
{
  catchup_room_key_free (key);
}

static void
ask_forget (PurpleConversation *conv)
{
  g_autofree char *primary = g_strdup_printf (_("Forget the catch-up history of %s?"),
                                              purple_conversation_get_name (conv));

  purple_request_action (catchup_plugin.plugin, _("Forget room history"), primary,
                         _("Every indexed message of this room is deleted. Your chat logs are not touched."), 1,
                         purple_conversation_get_account (conv), NULL, conv, catchup_room_key_new (conv), 2,
                         _("_Forget"), PURPLE_CALLBACK (forget_confirmed),
                         _("_Cancel"), PURPLE_CALLBACK (forget_cancelled));
}

/* ---------- the command ---------- */

static const char *
usage (void)
{
  /* Translators: keep "/catchup" and its keywords (post, settings, status, forget, import-logs, help) as they
   * are. */
  return _("Usage: /catchup [N | 2h | 45m | 1d | post [N | 2h] | settings | status | forget | import-logs | help]\n"
           "/catchup: what was said since you were last here\n"
           "/catchup N: the last N messages\n"
           "/catchup 2h (or 45m, 1d): the last two hours (minutes, days)\n"
           "/catchup post: send the summary to the room (if this room's settings allow it)\n"
           "/catchup settings: this room's catch-up settings\n"
           "/catchup status: what is indexed, since when, which summariser\n"
           "/catchup forget: delete this room's history (asks first)\n"
           "/catchup import-logs: add this room's Pidgin/Finch chat logs to its history (Tools → Plugin Actions "
           "imports the logs of every room)");
}

/* "45m", "2h", "1d", "90s" -> seconds; FALSE for anything else. */
static gboolean
parse_duration (const char *arg, gint64 *seconds)
{
  char *end = NULL;
  guint64 n;

  if (!g_ascii_isdigit (*arg))
    return FALSE;
  n = g_ascii_strtoull (arg, &end, 10);
  if (n == 0 || n > 100000 || end == NULL || end[0] == '\0' || end[1] != '\0')
    return FALSE;
  switch (g_ascii_tolower (*end))
    {
    case 's': *seconds = n; return TRUE;
    case 'm': *seconds = n * 60; return TRUE;
    case 'h': *seconds = n * 3600; return TRUE;
    case 'd': *seconds = n * 86400; return TRUE;
    default: return FALSE;
    }
}

static gboolean
parse_count (const char *arg, guint *n)
{
  char *end = NULL;
  guint64 value;

  if (!g_ascii_isdigit (*arg))
    return FALSE;
  value = g_ascii_strtoull (arg, &end, 10);
  if (*end != '\0' || value == 0)
    return FALSE;
  *n = MIN (value, MAX_LAST_N);
  return TRUE;
}

/* A window argument (none, N, or a duration); FALSE when arg is none of these. */
static gboolean
parse_window (const char *arg, CatchupWindow *window, gboolean *since_present)
{
  gint64 seconds;

  memset (window, 0, sizeof *window);
  *since_present = FALSE;
  if (arg == NULL)
    {
      window->kind = CATCHUP_WINDOW_LAST;
      window->last_n = DEFAULT_LAST_N;
      *since_present = TRUE;
      return TRUE;
    }
  if (parse_count (arg, &window->last_n))
    {
      window->kind = CATCHUP_WINDOW_LAST;
      window->max_messages = window->last_n;
      return TRUE;
    }
  if (parse_duration (arg, &seconds))
    {
      window->kind = CATCHUP_WINDOW_SINCE;
      window->since = (gint64) time (NULL) - seconds;
      return TRUE;
    }
  return FALSE;
}

static void
run_window (PurpleConversation *conv, const char *arg, gboolean post)
{
  CatchupWindow window;
  gboolean since_present;

  if (!parse_window (arg, &window, &since_present))
    {
      g_autofree char *line = g_strdup_printf (_("Unknown argument “%s”.\n%s"), arg, usage ());
      catchup_output_local (conv, line);
      return;
    }
  start_job (conv, &window, since_present, post, FALSE);
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
        catchup_output_local (conv, usage ());
      else if (!posting_allowed (conv))
        catchup_output_local (conv, _("Posting catch-ups is off for this room; turn it on in /catchup settings."));
      else
        run_window (conv, n == 2 ? words[1] : NULL, TRUE);
    }
  else if (n > 1)
    catchup_output_local (conv, usage ());
  else if (is_verb (words[0], "help"))
    catchup_output_local (conv, usage ());
  else if (is_verb (words[0], "settings"))
    catchup_room_settings_dialog (purple_conversation_get_account (conv), purple_conversation_get_name (conv), conv);
  else if (is_verb (words[0], "status"))
    {
      if (catchup_plugin.writer != NULL)
        room_call (catchup_room_key_new (conv), room_info_call, status_done);
    }
  else if (is_verb (words[0], "forget"))
    ask_forget (conv);
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
  /* Translators: HTML; keep "catchup" and its keywords untranslated. */
  const char *help = _("catchup [N | 2h | 45m | 1d | post | settings | status | forget | import-logs | help]: "
                       "a summary of what you missed here, written only for you. "
                       "import-logs adds this room's chat logs to its history.");

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
