#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "catchup-embed-cache.h"
#include "catchup-llm-embed.h"
#include "tool.h"

/* catchup ask (evidence per person, the latest state marked) and catchup summarize (a window, or one person). */

/* --- ask: questions to the room, and the per-person catch-up --- */

static void
json_add_record (JsonBuilder *b, const CatchupRecord *r)
{
  json_builder_begin_object (b);
  json_member_int (b, "id", r->id);
  json_member_string (b, "kind", catchup_record_kind_to_string (r->kind));
  json_member_string (b, "scope", r->scope == CATCHUP_RECORD_GROUP ? "group" : "person");
  json_member_string (b, "source", r->source);
  json_member_string (b, "owner", *r->owner ? r->owner : NULL);
  json_member_string (b, "subject", r->subject);
  json_member_string (b, "text", r->text);
  json_member_time (b, "ts", r->ts);
  json_member_string (b, "message", r->msg_id);
  json_member_bool (b, "request", (r->flags & CATCHUP_RECORD_FLAG_REQUEST) != 0);
  if (r->supersedes)
    json_member_int (b, "supersedes", r->supersedes);
  if (r->superseded_by)
    json_member_int (b, "superseded_by", r->superseded_by);
  json_builder_end_object (b);
}

static void
json_add_message_object (JsonBuilder *b, gconstpointer msg)
{
  json_builder_begin_object (b);
  json_add_message (b, msg);
  json_builder_end_object (b);
}

static void
json_add_record_object (JsonBuilder *b, gconstpointer record)
{
  json_add_record (b, record);
}

static void
json_add_array (JsonBuilder *b, const char *name, GPtrArray *items, void (*add_one) (JsonBuilder *, gconstpointer))
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; i < items->len; i++)
    add_one (b, items->pdata[i]);
  json_builder_end_array (b);
}

static void
json_add_messages (JsonBuilder *b, const char *name, GPtrArray *msgs)
{
  json_add_array (b, name, msgs, json_add_message_object);
}

static void
json_add_records (JsonBuilder *b, const char *name, GPtrArray *records)
{
  json_add_array (b, name, records, json_add_record_object);
}

static void
json_add_strings (JsonBuilder *b, const char *name, GPtrArray *strings)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; i < strings->len; i++)
    json_builder_add_string_value (b, strings->pdata[i]);
  json_builder_end_array (b);
}

/* The model's short answer: its text, the ids it cites, and each sentence with its person and ids. */
static void
json_add_answer (JsonBuilder *b, const CatchupAskAnswer *answer)
{
  g_autofree char *text = NULL;
  g_autoptr (GPtrArray) cited = NULL;

  json_builder_set_member_name (b, "answer");
  if (answer == NULL)
    {
      json_builder_add_null_value (b);
      return;
    }
  text = catchup_ask_answer_text (answer);
  cited = catchup_ask_answer_cited (answer);
  json_builder_begin_object (b);
  json_member_string (b, "text", text);
  json_add_strings (b, "cited", cited);
  json_builder_set_member_name (b, "lines");
  json_builder_begin_array (b);
  for (guint i = 0; i < answer->lines->len; i++)
    {
      const CatchupAskLine *line = answer->lines->pdata[i];

      json_builder_begin_object (b);
      json_member_string (b, "person", line->person);
      json_member_string (b, "text", line->text);
      json_add_strings (b, "ids", line->ids);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static void
json_add_ask (JsonBuilder *b, const CatchupAskResult *res)
{
  const CatchupAskQuery *q = res->query;

  json_add_answer (b, res->answer);
  json_member_string (b, "answer_notice", res->notice);

  json_member_string (b, "mode", q->mode == CATCHUP_ASK_FULL ? "full" : "head");
  json_member_bool (b, "everyone", q->everyone);
  json_member_string (b, "source", q->source);
  json_member_string (b, "owner", q->owner);
  json_member_string (b, "topic", q->topic);
  json_builder_set_member_name (b, "rows");
  json_builder_begin_array (b);
  for (guint i = 0; i < res->rows->len; i++)
    {
      const CatchupAskRow *row = res->rows->pdata[i];

      json_builder_begin_object (b);
      json_member_string (b, "person", row->person);
      json_member_bool (b, "empty", row->turns->len == 0);
      json_member_string (b, "latest", row->latest_id);
      json_add_messages (b, "turns", row->turns);
      json_add_records (b, "records", row->records);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_add_memory (b, res->memory);
}

static void
print_record (const CatchupRecord *r)
{
  g_autofree char *iso = catchup_time_format_iso (r->ts);
  const char *state = r->superseded_by ? _("replaced") : _("current");
  SAFE (source, r->source);
  SAFE (text, r->text);

  /* TRANSLATORS: one record of the derived track: kind, whether it still holds, time, who said it, its text */
  g_print (_("    %s (%s) %s <%s> %s\n"), catchup_record_kind_to_string (r->kind), state, iso, source, text);
}

static void
print_ask_row (const CatchupAskRow *row)
{
  SAFE (person, row->person != NULL ? row->person : _("the room"));

  if (row->person != NULL && row->turns->len == 0 && row->records->len == 0)
    {
      g_print (_("%s: nothing on this\n"), person);
      return;
    }
  g_print ("%s:\n", person);
  for (guint t = 0; t < row->turns->len; t++)
    {
      const CatchupMessage *m = row->turns->pdata[t];

      print_turn (m, g_strcmp0 (m->id, row->latest_id) == 0 ? _("  (latest)") : "");
    }
  if (row->records->len > 0)
    g_print (_("  records:\n"));
  for (guint r = 0; r < row->records->len; r++)
    print_record (row->records->pdata[r]);
}

static void
print_answer (const CatchupAskResult *res)
{
  for (guint i = 0; res->answer && i < res->answer->lines->len; i++)
    {
      const CatchupAskLine *line = res->answer->lines->pdata[i];
      g_autoptr (GString) ids = g_string_new (NULL);

      for (guint j = 0; j < line->ids->len; j++)
        g_string_append_printf (ids, "%s%s", j ? ", " : "", (char *) line->ids->pdata[j]);
      SAFE (text, line->text);
      SAFE (cited, ids->str);

      if (i == 0)
        g_print ("%s\n", _("Answer:"));
      g_print ("  %s [%s]\n", text, cited);
    }
  if (res->notice)
    {
      SAFE (notice, res->notice);

      g_print ("%s\n", notice);
    }
}

static void
print_ask (const CatchupAskResult *res)
{
  const CatchupAskQuery *q = res->query;

  print_answer (res);

  g_print (_("Mode: %s\n"), q->mode == CATCHUP_ASK_FULL ? _("how it changed") : _("what holds now"));
  for (guint i = 0; i < res->rows->len; i++)
    print_ask_row (res->rows->pdata[i]);
}

int
cmd_ask (int argc, char **argv)
{
  g_auto (MemoryArgs) a = MEMORY_ARGS_INIT;
  g_autofree char *question = NULL;
  const GOptionEntry entries[] = {
    ENTRY_DB (a), ENTRY_ROOM (a),
    { "question", 'q', 0, G_OPTION_ARG_STRING, &question, N_("The question to the room"), N_("TEXT") },
    ENTRY_BUDGET (a), ENTRY_JSON (a), ENTRIES_MODEL (a.model),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (CatchupAskResult) res = NULL;
  g_auto (CatchupLlmConfig) config = { 0 };
  g_auto (CatchupModelReport) report = { 0 };
  CatchupOptions copts;
  gint64 room = 0;

  catchup_options_init (&copts);
  if (!tool_parse (&argc, &argv, NULL,
                   _("Ask a room a question: the evidence per person it names, in time order, latest state marked."),
                   _("Names of the room's members, “everyone” or “each of us” make a row per person; “changed”, "
                     "“over time”, “before” show every state, otherwise what holds now. With a chat model, its "
                     "short answer comes first, each sentence with the message ids it cites; when it cannot give "
                     "one, a notice says why.\n\n"
                     "Example:\n  catchup ask --room larkspur-ops --question \"what does maren think of the new courier?\""),
                   entries, &error)
      || !tool_require (question, "--question", &error)
      || (store = memory_args_open (&a, &room, &copts, &config, &error)) == NULL)
    return tool_fail (error);
  res = catchup_engine_ask (store, room, question, &copts, &report, NULL, &error);
  if (res == NULL)
    return tool_fail (error);
  if (a.json)
    {
      g_autoptr (JsonBuilder) b = json_begin (a.room, "ask", copts.memory.budget);

      json_member_string (b, "question", question);
      json_add_ask (b, res);
      json_add_model (b, &report);
      return json_emit (b);
    }
  {
    SAFE (room_name, a.room);
    SAFE (question_text, question);

    g_print (_("Question to %s: %s\n"), room_name, question_text);
  }
  print_ask (res);
  return TOOL_EXIT_OK;
}


static void
print_plain_turn (gconstpointer msg)
{
  print_turn (msg, "");
}

static void
print_any_record (gconstpointer record)
{
  print_record (record);
}

/* A heading and its items, or nothing when there are none. */
static void
print_section (const char *heading, GPtrArray *items, void (*print_one) (gconstpointer))
{
  if (items->len == 0)
    return;
  g_print ("%s\n", heading);
  for (guint i = 0; i < items->len; i++)
    print_one (items->pdata[i]);
}

/* summarize --about NICK: the per-person catch-up of the window instead of the room's summary. */
static int
summarize_about (CatchupStore *store, gint64 room, const CatchupWindow *spec, const char *person, gboolean json,
                 const char *room_name)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) window = catchup_engine_window (store, room, spec, &error);
  g_autoptr (CatchupAbout) about = window ? catchup_about_build (store, room, window, person, &error) : NULL;

  if (about == NULL)
    return tool_fail (g_steal_pointer (&error));
  if (json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();

      json_builder_begin_object (b);
      json_member_string (b, "room", room_name);
      json_member_string (b, "about", about->person);
      json_add_messages (b, "said", about->said);
      json_add_messages (b, "asked", about->asked);
      json_add_records (b, "decided", about->decided);
      json_add_records (b, "committed", about->committed);
      json_add_records (b, "open", about->open);
      return json_emit (b);
    }
  {
    SAFE (who, about->person);
    SAFE (room_text, room_name);

    g_print (_("Catch-up on %s in %s (%u messages)\n"), who, room_text, window->len);
    if (about->said->len + about->asked->len + about->open->len == 0)
      g_print (_("%s: nothing in this window\n"), who);
  }
  print_section (_("Said:"), about->said, print_plain_turn);
  print_section (_("Decided:"), about->decided, print_any_record);
  print_section (_("Committed to:"), about->committed, print_any_record);
  print_section (_("Asked or mentioned by others:"), about->asked, print_plain_turn);
  print_section (_("Open commitments:"), about->open, print_any_record);
  return TOOL_EXIT_OK;
}

/* Exactly one of --last, --since and --window says which part of the room to summarise. */
static gboolean
summarize_window (int last_n, const char *since, const char *range, CatchupWindow *spec, GError **error)
{
  if ((last_n != 0) + (since != NULL) + (range != NULL) != 1)
    return usage_error (error, _("give exactly one of --last, --since and --window"));
  if (range != NULL)
    {
      spec->kind = CATCHUP_WINDOW_BETWEEN;
      return tool_parse_range (range, &spec->first_id, &spec->last_id, error);
    }
  if (since != NULL)
    {
      spec->kind = CATCHUP_WINDOW_SINCE;
      return tool_parse_since (since, g_get_real_time () / G_USEC_PER_SEC, &spec->since, error);
    }
  if (last_n < 0)
    return usage_error (error, _("--last wants a positive number of messages, not %d"), last_n);
  spec->kind = CATCHUP_WINDOW_LAST;
  spec->last_n = (guint) last_n;
  return TRUE;
}

static void
json_add_items (JsonBuilder *b, const char *name, GPtrArray *items)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint k = 0; items != NULL && k < items->len; k++)
    {
      const CatchupSummaryItem *item = g_ptr_array_index (items, k);

      json_builder_begin_object (b);
      if (item->ref != NULL)
        json_member_string (b, "ref", item->ref);
      json_member_string (b, "id", item->id);
      json_member_string (b, "speaker", item->speaker);
      if (item->id != NULL)
        json_member_time (b, "ts", item->ts);
      else
        json_member_string (b, "ts", NULL);
      json_member_string (b, "text", item->text);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
json_add_head (JsonBuilder *b, const CatchupSummaryHead *head)
{
  json_builder_set_member_name (b, "head");
  json_builder_begin_object (b);
  json_member_int (b, "messages", head->messages);
  json_member_int (b, "people", head->people);
  if (head->messages > 0)
    {
      json_member_time (b, "first_ts", head->first_ts);
      json_member_time (b, "last_ts", head->last_ts);
    }
  json_member_bool (b, "capped", head->capped);
  json_member_int (b, "shown", head->shown);
  json_member_int (b, "total", head->total);
  json_builder_end_object (b);
}

static void
json_add_line (JsonBuilder *b, const CatchupSummaryLine *line)
{
  json_builder_begin_object (b);
  json_member_string (b, "section", catchup_section_to_string (line->section));
  json_member_string (b, "source", catchup_summary_line_source (line));
  json_add_strings (b, "sources", line->sources);
  json_member_string (b, "speaker", line->speaker);
  if (line->ts != 0)
    json_member_time (b, "ts", line->ts);
  else
    json_member_string (b, "ts", NULL);
  json_member_string (b, "text", line->text);
  json_add_items (b, "context", line->context);
  json_add_items (b, "agreed", line->agreed);
  json_add_items (b, "reply", line->reply);
  json_add_items (b, "supersedes", line->supersedes);
  json_member_bool (b, "no_reply", line->no_reply);
  if (line->asked != NULL)
    {
      /* the question the line answers, read in the line: a list of one, like "reply" */
      g_autoptr (GPtrArray) asked = g_ptr_array_new ();

      g_ptr_array_add (asked, line->asked);
      json_add_items (b, "asked", asked);
    }
  if (line->before != NULL)
    {
      /* a line about a message from before the window that is still open: that message, as a list of one */
      g_autoptr (GPtrArray) before = g_ptr_array_new ();

      g_ptr_array_add (before, line->before);
      json_add_items (b, "before", before);
    }
  json_builder_end_object (b);
}

static void
json_add_summary (JsonBuilder *b, const CatchupSummary *summary)
{
  json_builder_set_member_name (b, "summary");
  json_builder_begin_object (b);
  json_member_string (b, "headline", summary->headline);
  json_add_head (b, &summary->head);
  if (summary->notice != NULL)
    json_member_string (b, "notice", summary->notice);
  json_builder_set_member_name (b, "lines");
  json_builder_begin_array (b);
  for (guint i = 0; i < summary->lines->len; i++)
    json_add_line (b, g_ptr_array_index (summary->lines, i));
  json_builder_end_array (b);
  json_member_int (b, "topics_left_out", summary->topics_left_out);
  json_builder_set_member_name (b, "left_out_terms");
  json_builder_begin_array (b);
  for (guint i = 0; summary->left_out_terms != NULL && i < summary->left_out_terms->len; i++)
    json_builder_add_string_value (b, g_ptr_array_index (summary->left_out_terms, i));
  json_builder_end_array (b);
  json_builder_end_object (b);
}

int
cmd_summarize (int argc, char **argv)
{
  g_auto (MemoryArgs) a = MEMORY_ARGS_INIT;
  g_autofree char *since = NULL, *range = NULL, *length = NULL, *me = NULL, *about = NULL;
  int last_n = 0, max = 0;
  const GOptionEntry entries[] = {
    ENTRY_DB (a), ENTRY_ROOM (a),
    { "last", 'n', 0, G_OPTION_ARG_INT, &last_n, N_("Summarise the last N messages"), N_("N") },
    { "max", 0, 0, G_OPTION_ARG_INT, &max,
      N_("At most N messages, the newest, as a room's maximum window does (the headline says what it left out)"),
      N_("N") },
    { "since", 's', 0, G_OPTION_ARG_STRING, &since,
      N_("Summarise what was said since TIME (ISO 8601, or an age: 45m, 2h, 1d)"), N_("TIME") },
    { "window", 'w', 0, G_OPTION_ARG_STRING, &range, N_("Summarise from message id FIRST to LAST"),
      N_("FIRST..LAST") },
    { "length", 'l', 0, G_OPTION_ARG_STRING, &length, N_("short, normal or detailed (default: normal)"),
      N_("LENGTH") },
    { "me", 0, 0, G_OPTION_ARG_STRING, &me,
      N_("Your nick in the room: lines that name you or ask you something come first, under “For you”"),
      N_("NICK") },
    { "about", 0, 0, G_OPTION_ARG_STRING, &about,
      N_("Only what NICK said, decided, committed to and was asked, with their open commitments"), N_("NICK") },
    ENTRY_BUDGET (a), ENTRY_METHOD (a), ENTRY_JSON (a), ENTRIES_MODEL (a.model),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (CatchupResult) result = NULL;
  g_auto (CatchupLlmConfig) config = { 0 };
  g_autofree char *text = NULL;
  CatchupWindow spec = { 0 };
  CatchupOptions opts;
  gint64 room = 0;
  gboolean ok;

  catchup_options_init (&opts);
  ok = tool_parse (&argc, &argv, NULL,
                   _("Summarise a window of a room, with references to earlier history spelled out."),
                   _("Give exactly one of --last, --since and --window.\n\n"
                     "Examples:\n"
                     "  catchup summarize --room larkspur-ops --last 60\n"
                     "  catchup summarize --room larkspur-ops --since 2h --length short\n"
                     "  catchup summarize --room larkspur-ops --since 2026-03-06T09:00:00Z --json"),
                   entries, &error)
       && summarize_window (last_n, since, range, &spec, &error)
       && (max >= 0 || usage_error (&error, _("--max wants a positive number of messages, not %d"), max))
       && (length == NULL || tool_parse_length (length, &opts.length, &error))
       && (store = memory_args_open (&a, &room, &opts, &config, &error)) != NULL;
  opts.me = me;
  spec.max_messages = (guint) MAX (max, 0);
  if (ok && about != NULL)
    {
      int status = summarize_about (store, room, &spec, about, a.json, a.room);

      g_free (spec.first_id);
      g_free (spec.last_id);
      return status;
    }
  if (ok)
    result = catchup_engine_run (store, room, &spec, &opts, NULL, &error);
  g_free (spec.first_id);
  g_free (spec.last_id);
  if (result == NULL)
    return tool_fail (error);

  if (a.json)
    {
      g_autoptr (JsonBuilder) b = json_begin (a.room, method_label (&a, opts.memory.method), opts.memory.budget);

      json_add_window (b, result->window, result->window_tokens);
      json_add_summary (b, result->summary);
      json_add_memory (b, result->memory);
      json_add_model (b, &result->model);
      return json_emit (b);
    }
  text = catchup_summary_to_text (result->summary);
  g_print ("%s\n", text);
  /* the summary's text carries the notice already */
  print_model (&result->model, FALSE);
  return TOOL_EXIT_OK;
}
