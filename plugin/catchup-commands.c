#include "config.h"

#include "catchup-plugin-private.h"

#include <stdlib.h>
#include <string.h>

#include <cmds.h>
#include <debug.h>
#include <prefs.h>
#include <request.h>
#include <util.h>

#define MAX_LAST_N 100000

static PurpleCmdId catchup_cmd_id;

/* ---------- one catch-up: resolve the window on the writer, then run the engine ---------- */

typedef struct {
  CatchupRoomKey *key;
  char *spec;
  char *arg;                /* the window as typed ("2h", "50"); NULL for a plain /catchup */
  CatchupWindow window;
  gboolean since_present;   /* window from the store's "last present" (plain /catchup) */
  gboolean post, automatic;
  CatchupRoomSettings settings;
} Job;

typedef struct {
  gint64 count;             /* turns the catch-up covers */
  gint64 total;             /* turns of the window before the room's maximum was applied */
  gint64 first_ts;          /* the first covered turn */
  gint64 start_ts;          /* the first turn of the uncapped window */
  gint64 since;             /* resolved start of a since-present window; 0 when none was known */
  gboolean room_empty;      /* nothing of the room is indexed */
} Preview;

static void
job_free (Job *job)
{
  catchup_room_key_free (job->key);
  g_free (job->spec);
  g_free (job->arg);
  g_free (job->window.first_id);
  g_free (job->window.last_id);
  catchup_room_settings_clear (&job->settings);
  g_free (job);
}

/* The window's turns without the cap, as the engine will resolve them; an empty window is no error here. */
static GPtrArray *
uncapped_window (CatchupStore *store, gint64 room, const CatchupWindow *window, GError **error)
{
  CatchupWindow uncapped = *window;
  GError *local = NULL;
  GPtrArray *msgs;

  uncapped.max_messages = 0;
  msgs = catchup_engine_window (store, room, &uncapped, &local);
  if (msgs == NULL && g_error_matches (local, CATCHUP_ERROR, CATCHUP_ERROR_INVALID))
    {
      g_clear_error (&local);
      return g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
    }
  if (local != NULL)
    g_propagate_error (error, local);
  return msgs;
}

/* On the writer thread, after every queued message is written: what the window holds, and what the room's
 * maximum leaves out of it. */
static gpointer
preview_window (CatchupStore *store, gpointer data, GError **error)
{
  Job *job = data;
  g_autofree Preview *preview = g_new0 (Preview, 1);
  g_autoptr (CatchupRoomInfo) info = NULL;
  g_autoptr (GPtrArray) msgs = NULL;
  gint64 room = catchup_store_find_room (store, job->spec, NULL);
  CatchupWindow window = job->window;
  guint cap = job->window.max_messages;

  preview->room_empty = TRUE;
  if (room == 0)
    return g_steal_pointer (&preview);
  if (job->since_present)
    {
      if ((info = catchup_store_room_info (store, room, error)) == NULL)
        return NULL;
      if (info->last_present != 0)
        {
          /* same second counts: times are whole seconds */
          preview->since = info->last_present;
          window.kind = CATCHUP_WINDOW_SINCE;
          window.since = info->last_present;
        }
    }
  if ((msgs = uncapped_window (store, room, &window, error)) == NULL)
    return NULL;
  preview->total = msgs->len;
  /* Without a last present the window is the room's newest turns: the total is all of the room's. */
  if (job->since_present && preview->since == 0
      && (preview->total = catchup_store_count_turns (store, room, G_MININT64, error)) < 0)
    return NULL;
  if (msgs->len != 0)
    preview->start_ts = ((CatchupMessage *) msgs->pdata[0])->ts;
  if (job->since_present && preview->since == 0 && info != NULL)
    preview->start_ts = info->first_ts;
  if (cap != 0 && msgs->len > cap)
    g_ptr_array_remove_range (msgs, 0, msgs->len - cap);
  preview->count = msgs->len;
  preview->first_ts = msgs->len ? ((CatchupMessage *) msgs->pdata[0])->ts : 0;
  preview->room_empty = preview->count == 0 && catchup_store_count_turns (store, room, G_MININT64, NULL) <= 0;
  return g_steal_pointer (&preview);
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

/* The user's local time: the clock alone today, the weekday within the last six days, else the date too. */
static char *
format_time (gint64 ts)
{
  g_autoptr (GDateTime) then = g_date_time_new_from_unix_local (ts);
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autoptr (GDateTime) today = NULL;

  if (then == NULL || now == NULL)
    return g_strdup ("?");
  today = g_date_time_new_local (g_date_time_get_year (now), g_date_time_get_month (now),
                                 g_date_time_get_day_of_month (now), 0, 0, 0);
  if (today != NULL && g_date_time_compare (then, today) >= 0)
    return g_date_time_format (then, "%H:%M");
  if (today != NULL && g_date_time_difference (today, then) < 6 * G_TIME_SPAN_DAY)
    return g_date_time_format (then, "%a %H:%M");
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
        catchup_output_ask_post (conv, result);
      /* A catch-up counts as being present: the next one starts here. */
      catchup_signals_mark_present (conv);
    }
  job_free (job);
}

/* The first line of a catch-up: what it covers and, when the room's maximum cut the window, what it left out. */
static char *
start_line (const Preview *preview)
{
  g_autofree char *count = format_count (preview->count);

  if (preview->total > preview->count)
    {
      g_autofree char *total = format_count (preview->total);
      g_autofree char *when = format_time (preview->start_ts);

      /* Translators: "the last 100 of 512 messages since Tue 09:14 (the room's maximum; /catchup 512 for all)";
       * keep "/catchup" as it is. */
      return g_strdup_printf (ngettext ("Catching up on the last %s of %s message since %s (the room's maximum; "
                                        "/catchup %s for all)…",
                                        "Catching up on the last %s of %s messages since %s (the room's maximum; "
                                        "/catchup %s for all)…",
                                        plural_n (preview->total)),
                              count, total, when, total);
    }
  {
    g_autofree char *when = format_time (preview->first_ts);

    return g_strdup_printf (ngettext ("Catching up on %s message since %s…", "Catching up on %s messages since %s…",
                                      plural_n (preview->count)),
                            count, when);
  }
}

/* What an empty window means, in words that say what would work instead. */
static char *
empty_line (const Job *job, const Preview *preview)
{
  if (preview->room_empty)
    return g_strdup (_("Nothing of this room is indexed yet."));
  if (preview->since != 0)
    {
      g_autofree char *when = format_time (preview->since);

      /* Translators: keep "/catchup" as it is. */
      return g_strdup_printf (_("Nothing new since you were last here (%s); /catchup 50 shows the last 50 messages."),
                              when);
    }
  if (job->arg != NULL)
    /* Translators: %s is the span typed, e.g. "2h"; keep "/catchup" as it is. */
    return g_strdup_printf (_("Nothing was said here in the last %s; /catchup 50 shows the last 50 messages."),
                            job->arg);
  return g_strdup (_("Nothing to catch up on here yet."));
}

static void
start_engine (PurpleConversation *conv, Job *job, const Preview *preview)
{
  g_autofree char *line = NULL;
  g_autofree char *db_path = g_strdup (catchup_writer_get_path (catchup_plugin.writer));
  CatchupLlmConfig *model = catchup_model_config_from_prefs ();
  CatchupOptions opts;

  if (preview->since != 0)
    {
      job->window.kind = CATCHUP_WINDOW_SINCE;
      job->window.since = preview->since;
    }
  line = start_line (preview);
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
      g_autofree char *line = gap ? g_steal_pointer (&gap) : preview ? empty_line (job, preview) : g_strdup (error->message);

      if (!job->automatic)
        catchup_output_local (conv, line);
      job_free (job);
      return;
    }
  start_engine (conv, job, preview);
}

static void
start_job (PurpleConversation *conv, const CatchupWindow *window, const char *arg, gboolean since_present,
           gboolean post, gboolean automatic)
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
  job->arg = g_strdup (arg);
  job->window = *window;
  job->window.first_id = g_strdup (window->first_id);
  job->window.last_id = g_strdup (window->last_id);
  job->since_present = since_present;
  job->post = post;
  job->automatic = automatic;
  catchup_room_settings_get (conv, &job->settings);
  if (job->window.max_messages == 0)
    job->window.max_messages = job->settings.max_window;
  /* Without a known last present, a plain /catchup covers as much as the room's maximum allows. */
  if (job->window.kind == CATCHUP_WINDOW_LAST && job->window.last_n == 0)
    job->window.last_n = job->window.max_messages;
  /* The preview runs after the messages still queued for writing, so the window includes them. */
  catchup_writer_call_async (catchup_plugin.writer, preview_window, job, NULL, g_free, catchup_plugin.cancellable,
                             preview_done, job);
}

void
catchup_run (PurpleConversation *conv, const CatchupWindow *window, gboolean post, gboolean automatic)
{
  start_job (conv, window, NULL, FALSE, post, automatic);
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
  if (info != NULL && !catchup_retention_forget_room (store, room, error))
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

/* "45m", "2h", "1d" -> seconds; FALSE for anything else. */
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
      /* last_n 0: the room's maximum, once its settings are read */
      window->kind = CATCHUP_WINDOW_LAST;
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

/* One short line for an argument parse_window refused: what was wrong and what would work. */
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
    return g_strdup_printf (_("“%s”: a span is a number from 1 to 100000 with m, h or d, e.g. /catchup 45m, 2h or "
                              "1d."),
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
  gboolean since_present;

  if (!parse_window (arg, &window, &since_present))
    {
      say_bad_argument (conv, arg);
      return;
    }
  start_job (conv, &window, arg, since_present, post, FALSE);
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
