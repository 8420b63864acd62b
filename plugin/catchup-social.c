#include "config.h"

#include "catchup-plugin-private.h"

#include <string.h>

/*
 * Questions to the room and per-person catch-ups: /catchup ask QUESTION and /catchup @nick. Both are answered
 * locally, never posted. The work runs on the history writer's thread, after every message queued before it
 * is written (so the records of what was just said exist), and the answer comes back to the main loop, which
 * looks the conversation up again.
 */

typedef struct {
  CatchupRoomKey *key;
  char *question;   /* ask */
  char *person;     /* @nick */
  guint budget;
  guint window;     /* messages of the per-person window */
} SocialJob;

static void
social_job_free (SocialJob *job)
{
  catchup_room_key_free (job->key);
  g_free (job->question);
  g_free (job->person);
  g_free (job);
}

/* What the worker hands back: one of the two results, or a message for the user. */
typedef struct {
  CatchupAskResult *ask;
  CatchupAbout *about;
  guint window_len;
} SocialResult;

static void
social_result_free (SocialResult *res)
{
  if (res == NULL)
    return;
  catchup_ask_result_free (res->ask);
  catchup_about_free (res->about);
  g_free (res);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SocialResult, social_result_free)

static gint64
job_room (CatchupStore *store, const SocialJob *job, GError **error)
{
  g_autofree char *spec = catchup_room_key_spec (job->key);
  gint64 room = catchup_store_find_room (store, spec, error);

  if (room == 0 && error && *error && (*error)->code == CATCHUP_ERROR_NOT_FOUND)
    {
      g_clear_error (error);
      g_set_error_literal (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND, _("Nothing of this room is indexed yet."));
    }
  return room;
}

static gpointer
ask_call (CatchupStore *store, gpointer data, GError **error)
{
  SocialJob *job = data;
  g_autoptr (SocialResult) res = g_new0 (SocialResult, 1);
  gint64 room = job_room (store, job, error);
  CatchupOptions opts;

  if (room == 0)
    return NULL;
  catchup_options_init (&opts);
  opts.memory.budget = job->budget;
  res->ask = catchup_engine_ask (store, room, job->question, &opts, NULL, NULL, error);
  return res->ask ? g_steal_pointer (&res) : NULL;
}

static gpointer
about_call (CatchupStore *store, gpointer data, GError **error)
{
  SocialJob *job = data;
  g_autoptr (SocialResult) res = g_new0 (SocialResult, 1);
  g_autoptr (GPtrArray) window = NULL;
  gint64 room = job_room (store, job, error);

  if (room == 0 || (window = catchup_store_before (store, room, NULL, job->window, error)) == NULL)
    return NULL;
  res->window_len = window->len;
  res->about = catchup_about_build (store, room, window, job->person, error);
  return res->about ? g_steal_pointer (&res) : NULL;
}

/* ---------- rendering (plain text; the output escapes it) ---------- */

/* A turn's weekday and local time, "Tue 14:05". */
static char *
turn_time (gint64 ts)
{
  g_autoptr (GDateTime) dt = g_date_time_new_from_unix_local (ts);

  return dt ? g_date_time_format (dt, "%a %H:%M") : g_strdup ("?");
}

static void
append_turn (GString *out, const CatchupMessage *m, gboolean latest)
{
  g_autofree char *when = turn_time (m->ts);
  /* one line per turn: a line break inside a message must not start a line of its own */
  g_autofree char *speaker = catchup_text_sanitize (m->speaker);
  g_autofree char *text = catchup_text_sanitize (m->text);

  g_string_append_printf (out, "\n  [%s] %s: %s", when, speaker, text);
  if (latest)
    g_string_append (out, _(" (latest)"));
}

static void
append_turns (GString *out, const char *heading, GPtrArray *msgs)
{
  if (msgs->len == 0)
    return;
  g_string_append_printf (out, "\n%s", heading);
  for (guint i = 0; i < msgs->len; i++)
    append_turn (out, msgs->pdata[i], FALSE);
}

static void
append_records (GString *out, const char *heading, GPtrArray *records)
{
  if (records->len == 0)
    return;
  g_string_append_printf (out, "\n%s", heading);
  for (guint i = 0; i < records->len; i++)
    {
      const CatchupRecord *r = records->pdata[i];
      g_autofree char *source = catchup_text_sanitize (r->source);
      g_autofree char *text = catchup_text_sanitize (r->text);

      g_string_append_printf (out, "\n  %s: %s", source, text);
    }
}

/* Where a cited turn is, for the reader: its time and speaker, as the evidence below shows them ("Tue 09:12
 * bob"); the id when it is not among them. */
static char *
cited_place (const CatchupAskResult *res, const char *id)
{
  for (guint i = 0; i < res->memory->turns->len; i++)
    {
      const CatchupMessage *m = res->memory->turns->pdata[i];
      g_autofree char *when = NULL;

      if (g_strcmp0 (m->id, id) != 0)
        continue;
      when = turn_time (m->ts);
      return g_strdup_printf ("%s %s", when, m->speaker);
    }
  return g_strdup (id);
}

/* The model's short answer first, each sentence with the turns it cites; or why there is none. */
static void
append_answer (GString *out, const CatchupAskResult *res)
{
  for (guint i = 0; res->answer && i < res->answer->lines->len; i++)
    {
      const CatchupAskLine *line = res->answer->lines->pdata[i];
      g_autofree char *text = catchup_text_sanitize (line->text);
      g_autofree char *cited = NULL;
      g_autoptr (GString) places = g_string_new (NULL);

      for (guint j = 0; j < line->ids->len; j++)
        {
          g_autofree char *place = cited_place (res, line->ids->pdata[j]);

          g_string_append_printf (places, "%s%s", j ? "; " : "", place);
        }
      cited = catchup_text_sanitize (places->str);
      if (i == 0)
        g_string_append_printf (out, "\n%s", _("Answer:"));
      g_string_append_printf (out, "\n  %s [%s]", text, cited);
    }
  if (res->notice)
    {
      g_autofree char *notice = catchup_text_sanitize (res->notice);

      g_string_append_printf (out, "\n%s", notice);
    }
  if (res->answer)
    g_string_append_printf (out, "\n%s", _("Evidence:"));
}

static char *
render_ask (const CatchupAskResult *res)
{
  GString *out = g_string_new (NULL);
  g_autofree char *question = catchup_text_sanitize (res->query->question);

  g_string_append_printf (out, _("Asked: %s"), question);
  append_answer (out, res);
  for (guint i = 0; i < res->rows->len; i++)
    {
      const CatchupAskRow *row = res->rows->pdata[i];
      g_autofree char *person = row->person ? catchup_text_sanitize (row->person) : g_strdup (_("the room"));

      if (row->person != NULL && row->turns->len == 0)
        {
          g_string_append_c (out, '\n');
          g_string_append_printf (out, _("%s: nothing on this"), person);
          continue;
        }
      g_string_append_printf (out, "\n%s:", person);
      for (guint t = 0; t < row->turns->len; t++)
        {
          const CatchupMessage *m = row->turns->pdata[t];

          append_turn (out, m, g_strcmp0 (m->id, row->latest_id) == 0);
        }
    }
  if (res->rows->len == 0 || res->memory->turns->len == 0)
    g_string_append_printf (out, "\n%s", _("Nothing in this room's history answers that."));
  return g_string_free (out, FALSE);
}

static char *
render_about (const CatchupAbout *about, guint window_len)
{
  GString *out = g_string_new (NULL);

  g_string_append_printf (out, ngettext ("Catch-up on %s (the last %u message):", "Catch-up on %s (the last %u messages):",
                                         window_len),
                          about->person, window_len);
  if (about->said->len + about->asked->len + about->open->len == 0)
    g_string_append_printf (out, "\n%s", _("Nothing from or about them here."));
  append_turns (out, _("Said:"), about->said);
  append_records (out, _("Decided:"), about->decided);
  append_records (out, _("Committed to:"), about->committed);
  append_turns (out, _("Asked or mentioned by others:"), about->asked);
  append_records (out, _("Open commitments:"), about->open);
  return g_string_free (out, FALSE);
}

static void
show_ask (const CatchupRoomKey *key, const CatchupAskResult *res)
{
  PurpleConversation *conv = catchup_room_key_find_conv (key);
  g_autofree char *text = NULL;

  if (conv == NULL)
    return;
  text = render_ask (res);
  catchup_output_local (conv, text);
}

static void
answer_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (CatchupRoomKey) key = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupAskResult) res = NULL;

  /* the plugin unloads */
  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (result))))
    return;
  res = catchup_ask_answer_finish (result, &error);
  if (res != NULL)
    show_ask (key, res);
}

/* With a chat model configured, its short answer is asked for in a worker (never on the history writer's
 * thread, which would hold every write behind a model call); TRUE when it was, and then res is taken. */
static gboolean
ask_model (const CatchupRoomKey *key, CatchupAskResult *res)
{
  CatchupLlmConfig *config = catchup_model_config_from_prefs ();
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupLlm) llm = NULL;
  gboolean chat = config != NULL && config->chat_model != NULL && *config->chat_model != '\0';

  llm = chat ? catchup_llm_new (config, &error) : NULL;
  catchup_llm_config_free (config);
  if (!chat)
    return FALSE;
  if (llm == NULL)
    {
      res->notice = g_strdup_printf (_("Model not used for the answer: %s; this is the evidence."), error->message);
      return FALSE;
    }
  catchup_ask_answer_async (llm, res, catchup_plugin.cancellable, answer_done, catchup_room_key_copy (key));
  {
    PurpleConversation *conv = catchup_room_key_find_conv (key);

    if (conv != NULL)
      catchup_output_local (conv, _("Asking the model for a short answer…"));
  }
  return TRUE;
}

static void
social_done (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (CatchupRoomKey) key = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (SocialResult) result = NULL;
  g_autofree char *text = NULL;
  PurpleConversation *conv;

  result = catchup_room_call_finish (res, key, &conv, &error);
  if (result != NULL && result->ask != NULL)
    {
      CatchupAskResult *ask = g_steal_pointer (&result->ask);

      if (!ask_model (key, ask))
        {
          show_ask (key, ask);
          catchup_ask_result_free (ask);
        }
      return;
    }
  if (conv == NULL)
    return;
  if (result == NULL)
    text = g_strdup (error ? error->message : _("No answer."));
  else
    text = render_about (result->about, result->window_len);
  catchup_output_local (conv, text);
}

static void
social_start (PurpleConversation *conv, SocialJob *job, CatchupWriterFunc func)
{
  CatchupRoomSettings settings;

  catchup_room_settings_get (conv, &settings);
  job->key = catchup_room_key_new (conv);
  job->budget = settings.budget > 0 ? (guint) settings.budget : CATCHUP_DEFAULT_BUDGET;
  job->window = settings.max_window > 0 ? (guint) settings.max_window : 100;
  catchup_room_settings_clear (&settings);
  catchup_writer_call_async (catchup_plugin.writer, func, job, (GDestroyNotify) social_job_free,
                             (GDestroyNotify) social_result_free, catchup_plugin.cancellable, social_done,
                             catchup_room_key_copy (job->key));
}

gboolean
catchup_social_dispatch (PurpleConversation *conv, char **words)
{
  SocialJob *job;

  if (words[0] == NULL)
    return FALSE;
  if (g_ascii_strcasecmp (words[0], "ask") == 0)
    {
      g_autofree char *question = g_strjoinv (" ", words + 1);

      if (*g_strstrip (question) == '\0')
        {
          /* TRANSLATORS: keep "/catchup ask" as it is */
          catchup_output_local (conv, _("Usage: /catchup ask QUESTION, e.g. /catchup ask what did everyone "
                                        "think of the new office?"));
          return TRUE;
        }
      job = g_new0 (SocialJob, 1);
      job->question = g_steal_pointer (&question);
    }
  else if (words[0][0] == '@' && words[0][1] != '\0' && words[1] == NULL)
    {
      job = g_new0 (SocialJob, 1);
      job->person = g_strdup (words[0] + 1);
    }
  else
    return FALSE;
  if (catchup_plugin.writer == NULL)
    {
      social_job_free (job);
      catchup_output_local (conv, _("The catch-up history is not available (the database could not be opened)."));
      return TRUE;
    }
  social_start (conv, job, job->question ? ask_call : about_call);
  return TRUE;
}
