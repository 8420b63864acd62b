#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "catchup-embed-cache.h"
#include "catchup-llm-embed.h"
#include "tool.h"

/* catchup memory and catchup recall: catch-up memory for a window, and the history that answers a question. */

int
cmd_memory (int argc, char **argv)
{
  g_auto (MemoryArgs) a = MEMORY_ARGS_INIT;
  g_autofree char *range = NULL;
  int pool = 0, chunks = 0;
  const GOptionEntry entries[] = {
    ENTRY_DB (a), ENTRY_ROOM (a),
    { "window", 'w', 0, G_OPTION_ARG_STRING, &range, N_("The catch-up window: first and last message id"),
      N_("FIRST..LAST") },
    ENTRY_BUDGET (a), ENTRY_METHOD (a), ENTRY_JSON (a), ENTRIES_MODEL (a.model),
    { "pool", 0, 0, G_OPTION_ARG_INT, &pool,
      N_("Candidate turns per gap for the model to choose the evidence from (default: 30 with a model); "
         "with --json each gap lists its pool"), N_("N") },
    { "chunks-per-gap", 0, 0, G_OPTION_ARG_INT, &chunks,
      N_("Chunks the built-in ranking keeps per gap (default: budget / chunk size), for benchmarks"), N_("N") },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (GPtrArray) window = NULL;
  g_autoptr (CatchupMemory) mem = NULL;
  g_auto (CatchupLlmConfig) config = { 0 };
  g_auto (CatchupModelReport) report = { 0 };
  CatchupWindow spec = { .kind = CATCHUP_WINDOW_BETWEEN };
  CatchupOptions copts;
  const CatchupMemoryOptions *opts = &copts.memory;
  g_autofree char *first = NULL, *last = NULL;
  gint64 room = 0;

  catchup_options_init (&copts);

  if (!tool_parse (&argc, &argv, NULL,
                   _("Build the catch-up memory for a window of a room from the history before it."),
                   _("The window runs from message id FIRST to LAST, inclusive (ids as imported).\n\n"
                     "Example:\n  catchup memory --room larkspur-ops --window s0340..s0413 --method remember --json"),
                   entries, &error)
      || !tool_require (range, "--window", &error)
      || !tool_parse_range (range, &first, &last, &error)
      || (store = memory_args_open (&a, &room, &copts, &config, &error)) == NULL)
    return tool_fail (error);
  /* TRANSLATORS: --pool and --chunks-per-gap are options: leave them as they are */
  if ((pool < 0 || chunks < 0) && !usage_error (&error, _("--pool and --chunks-per-gap want a positive number")))
    return tool_fail (error);
  copts.memory.pool_size = (guint) MIN (pool, 1000);
  copts.memory.chunks_per_gap = (guint) MIN (chunks, 1000);

  spec.first_id = first;
  spec.last_id = last;
  window = catchup_engine_window (store, room, &spec, &error);
  if (window == NULL)
    return tool_fail (error);
  mem = catchup_engine_memory (store, room, window, &copts, &report, NULL, &error);
  if (mem == NULL)
    return tool_fail (error);

  if (a.json)
    {
      g_autoptr (JsonBuilder) b = json_begin (a.room, method_label (&a, opts->method), opts->budget);

      json_add_window (b, window, window_tokens (window));
      json_add_memory (b, mem);
      json_add_model (b, &report);
      return json_emit (b);
    }
  SAFE (room_name, a.room);
  SAFE (first_id, first);
  SAFE (last_id, last);

  g_print (_("Window %s..%s of %s: %u messages, %u tokens; method %s, budget %u\n"), first_id, last_id, room_name,
           window->len, window_tokens (window), method_label (&a, opts->method), opts->budget);
  print_memory (mem);
  print_model (&report, TRUE);
  return TOOL_EXIT_OK;
}

int
cmd_recall (int argc, char **argv)
{
  g_auto (MemoryArgs) a = MEMORY_ARGS_INIT;
  g_autofree char *query = NULL;
  const GOptionEntry entries[] = {
    ENTRY_DB (a), ENTRY_ROOM (a),
    { "query", 'q', 0, G_OPTION_ARG_STRING, &query, N_("The question to find evidence for"), N_("TEXT") },
    ENTRY_BUDGET (a), ENTRY_METHOD (a), ENTRY_JSON (a), ENTRIES_MODEL (a.model),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (CatchupMemory) mem = NULL;
  g_auto (CatchupLlmConfig) config = { 0 };
  g_auto (CatchupModelReport) report = { 0 };
  CatchupOptions copts;
  const CatchupMemoryOptions *opts = &copts.memory;
  gint64 room = 0;

  catchup_options_init (&copts);

  if (!tool_parse (&argc, &argv, NULL,
                   _("Collect the turns of a room's whole history that answer a question, within a token budget."),
                   _("Example:\n  catchup recall --room larkspur-ops --query \"when does the spring sale start?\" --json"),
                   entries, &error)
      || !tool_require (query, "--query", &error)
      || (store = memory_args_open (&a, &room, &copts, &config, &error)) == NULL)
    return tool_fail (error);

  mem = catchup_engine_recall (store, room, query, &copts, &report, NULL, &error);
  if (mem == NULL)
    return tool_fail (error);

  if (a.json)
    {
      g_autoptr (JsonBuilder) b = json_begin (a.room, method_label (&a, opts->method), opts->budget);

      json_member_string (b, "query", query);
      json_add_memory (b, mem);
      json_add_model (b, &report);
      return json_emit (b);
    }
  SAFE (query_text, query);
  SAFE (room_name, a.room);

  g_print (_("Evidence for “%s” in %s; method %s, budget %u\n"), query_text, room_name,
           method_label (&a, opts->method), opts->budget);
  print_memory (mem);
  print_model (&report, TRUE);
  return TOOL_EXIT_OK;
}
