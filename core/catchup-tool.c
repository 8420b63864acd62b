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

#include "catchup.h"
#include "catchup-embed-cache.h"
#include "catchup-llm-embed.h"

/* Exit statuses: scripts tell a mistyped command line from a failed run. */
enum {
  TOOL_EXIT_OK = 0,
  TOOL_EXIT_FAILURE = 1,
  TOOL_EXIT_USAGE = 2,
};

#define TOOL_MAX_BUDGET 1000000

/* --- errors and options shared by the subcommands --- */

/* Usage mistakes are reported as G_OPTION_ERROR, everything else is a failure of the run. */
/* Everything printed that came from chat, a model or a file goes through the one sanitiser: no escape
 * sequence, control character, bidi override or line break of theirs reaches the terminal. */
#define SAFE(name, text) g_autofree char *name = catchup_text_sanitize (text)

static int
tool_fail (GError *error)
{
  /* messages quote lines of files, answers of servers and names from the database */
  SAFE (message, error->message);

  g_printerr ("%s: %s\n", g_get_prgname (), message);
  if (error->domain == G_OPTION_ERROR)
    {
      g_printerr (_("Run “%s --help” for usage.\n"), g_get_prgname ());
      return TOOL_EXIT_USAGE;
    }
  return TOOL_EXIT_FAILURE;
}

static gboolean
usage_error (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
usage_error (GError **error, const char *format, ...)
{
  va_list args;

  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, message);
  return FALSE;
}

/* Parses one subcommand's options; argv[0] is the subcommand's name. */
static gboolean
tool_parse (int *argc, char ***argv, const char *parameters, const char *summary, const char *description,
            const GOptionEntry *entries, GError **error)
{
  g_autoptr (GOptionContext) context = g_option_context_new (parameters);

  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_set_summary (context, summary);
  g_option_context_set_description (context, description);
  g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
  return g_option_context_parse (context, argc, argv, error);
}

/* The plugin's database unless told otherwise, so that the tool sees what Pidgin/Finch recorded. */
static char *
tool_db_path (const char *option)
{
  const char *env = g_getenv ("CATCHUP_DB");

  if (option != NULL && *option != '\0')
    return g_strdup (option);
  if (env != NULL && *env != '\0')
    return g_strdup (env);
  return g_build_filename (g_get_home_dir (), ".purple", "catchup", "history.db", NULL);
}

/* Reading commands must not leave an empty database behind a typo in --db. */
static CatchupStore *
tool_open_store (const char *option, gboolean create, GError **error)
{
  g_autofree char *path = tool_db_path (option);
  CatchupStore *store;

  if (!create && !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND,
                   _("no history database at %s (import history first, or give --db)"), path);
      return NULL;
    }
  store = catchup_store_open (path, error);
  if (store == NULL)
    g_prefix_error (error, "%s: ", path);
  return store;
}

static gboolean
tool_require (const char *value, const char *option, GError **error)
{
  if (value != NULL && *value != '\0')
    return TRUE;
  return usage_error (error, _("%s is required"), option);
}

static gboolean
tool_check_budget (int budget, GError **error)
{
  if (budget > 0 && budget <= TOOL_MAX_BUDGET)
    return TRUE;
  return usage_error (error, _("--budget must be between 1 and %d tokens, not %d"), TOOL_MAX_BUDGET, budget);
}

static gboolean
tool_parse_method (const char *name, CatchupMethod *out, GError **error)
{
  g_autofree char *known = NULL;

  if (catchup_method_from_string (name, out))
    return TRUE;
  known = g_strjoinv (", ", (char **) catchup_method_names ());
  return usage_error (error, _("unknown method “%s” (known: %s)"), name, known);
}

static gboolean
tool_parse_length (const char *name, CatchupLength *out, GError **error)
{
  static const char *const names[] = { "short", "normal", "detailed" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_strcmp0 (name, names[i]) == 0)
      {
        *out = (CatchupLength) i;
        return TRUE;
      }
  return usage_error (error, _("unknown length “%s” (known: short, normal, detailed)"), name);
}

/* "FIRST..LAST", message ids as the room knows them (ids may hold ':' or '.', but not "..") */
static gboolean
tool_parse_range (const char *text, char **first, char **last, GError **error)
{
  const char *dots = text != NULL ? strstr (text, "..") : NULL;

  if (dots == NULL || dots == text || dots[2] == '\0' || strstr (dots + 2, "..") != NULL)
    return usage_error (error, _("--window wants FIRST..LAST (two message ids), not “%s”"),
                        text != NULL ? text : "");
  *first = g_strndup (text, dots - text);
  *last = g_strdup (dots + 2);
  return TRUE;
}

/* TIME for --since: ISO 8601 ("2026-03-02T09:00:00Z", a bare date is midnight UTC) or an age such as 45m,
 * 2h, 1d, 1w counted back from now. */
static gboolean
tool_parse_since (const char *text, gint64 now, gint64 *out, GError **error)
{
  static const struct { char unit; gint64 seconds; } units[] = {
    { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 7 * 86400 },
  };
  g_autofree char *midnight = NULL;
  guint64 n;
  char *end = NULL;

  if (g_ascii_isdigit (text[0]))
    {
      n = g_ascii_strtoull (text, &end, 10);
      for (guint i = 0; end != NULL && end[0] != '\0' && end[1] == '\0' && i < G_N_ELEMENTS (units); i++)
        if (end[0] == units[i].unit)
          {
            /* An age beyond the epoch means everything. */
            *out = n <= (guint64) (now / units[i].seconds) ? now - (gint64) n * units[i].seconds : 0;
            return TRUE;
          }
    }
  if (catchup_time_parse_iso (text, out))
    return TRUE;
  midnight = g_strconcat (text, "T00:00:00Z", NULL);
  if (strlen (text) == 10 && catchup_time_parse_iso (midnight, out))
    return TRUE;
  return usage_error (error, _("--since wants an ISO 8601 time or an age such as 45m, 2h, 1d, not “%s”"), text);
}

/* --- output --- */

static void
json_member_string (JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name (b, name);
  if (value != NULL)
    json_builder_add_string_value (b, value);
  else
    json_builder_add_null_value (b);
}

static void
json_member_int (JsonBuilder *b, const char *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}

static void
json_member_time (JsonBuilder *b, const char *name, gint64 ts)
{
  g_autofree char *iso = catchup_time_format_iso (ts);

  json_member_string (b, name, iso);
}

/* Why a memory turn was kept: its gap's index, -1 for the lead-in before the window, -2 when not recorded. */
static int
memory_reason (const CatchupMemory *mem, const char *id)
{
  gpointer value;

  if (mem->gap_of == NULL || !g_hash_table_lookup_extended (mem->gap_of, id, NULL, &value))
    return -2;
  return GPOINTER_TO_INT (value) - 1;
}

static void
json_add_message (JsonBuilder *b, const CatchupMessage *msg)
{
  json_member_string (b, "id", msg->id);
  json_member_string (b, "speaker", msg->speaker);
  json_member_time (b, "ts", msg->ts);
  json_member_string (b, "text", msg->text);
}

/* name: the ids of items (CatchupMessage when messages, else strings), or null when there are none. */
static void
json_add_ids (JsonBuilder *b, const char *name, GPtrArray *items, gboolean messages)
{
  json_builder_set_member_name (b, name);
  if (items == NULL)
    {
      json_builder_add_null_value (b);
      return;
    }
  json_builder_begin_array (b);
  for (guint i = 0; i < items->len; i++)
    json_builder_add_string_value (b, messages ? ((CatchupMessage *) items->pdata[i])->id : items->pdata[i]);
  json_builder_end_array (b);
}

/* "memory", "gaps" and "tokens": the members every memory-producing command shares. */
static void
json_add_memory (JsonBuilder *b, const CatchupMemory *mem)
{
  json_builder_set_member_name (b, "memory");
  json_builder_begin_array (b);
  for (guint i = 0; i < mem->turns->len; i++)
    {
      const CatchupMessage *msg = g_ptr_array_index (mem->turns, i);
      int reason = memory_reason (mem, msg->id);

      json_builder_begin_object (b);
      json_add_message (b, msg);
      if (reason >= 0)
        json_member_int (b, "gap", reason);
      else if (reason == -1)
        {
          json_builder_set_member_name (b, "lead_in");
          json_builder_add_boolean_value (b, TRUE);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "gaps");
  json_builder_begin_array (b);
  for (guint i = 0; mem->gaps != NULL && i < mem->gaps->len; i++)
    {
      const CatchupGap *gap = g_ptr_array_index (mem->gaps, i);

      json_builder_begin_object (b);
      json_member_string (b, "utterance", gap->utterance_id);
      json_member_string (b, "type", catchup_gap_type_to_string (gap->type));
      json_member_string (b, "worth", catchup_worth_to_string (gap->worth));
      json_member_string (b, "expression", gap->expression);
      json_member_string (b, "reason", gap->reason);
      json_member_string (b, "evidence_kind", gap->evidence);
      json_member_string (b, "query", gap->query);
      json_add_ids (b, "pool", mem->pools && i < mem->pools->len ? mem->pools->pdata[i] : NULL, TRUE);
      json_add_ids (b, "selected", mem->selected && i < mem->selected->len ? mem->selected->pdata[i] : NULL,
                    FALSE);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_member_int (b, "tokens", mem->tokens);
}

static guint
window_tokens (GPtrArray *window)
{
  guint tokens = 0;

  for (guint i = 0; i < window->len; i++)
    {
      const CatchupMessage *msg = g_ptr_array_index (window, i);
      tokens += catchup_text_count_turn (msg->speaker, msg->text);
    }
  return tokens;
}

static void
json_add_window (JsonBuilder *b, GPtrArray *window, guint tokens)
{
  const CatchupMessage *first = g_ptr_array_index (window, 0);
  const CatchupMessage *last = g_ptr_array_index (window, window->len - 1);

  json_builder_set_member_name (b, "window");
  json_builder_begin_object (b);
  json_member_string (b, "first", first->id);
  json_member_string (b, "last", last->id);
  json_member_time (b, "first_ts", first->ts);
  json_member_time (b, "last_ts", last->ts);
  json_member_int (b, "messages", window->len);
  json_member_int (b, "tokens", tokens);
  json_builder_end_object (b);
}

/* Starts the top-level object with what every memory command echoes back about its request. */
static JsonBuilder *
json_begin (const char *room, const char *method, guint budget)
{
  JsonBuilder *b = json_builder_new ();

  json_builder_begin_object (b);
  json_member_string (b, "room", room);
  json_member_string (b, "method", method);
  json_member_int (b, "budget", budget);
  return b;
}

/* Writes the finished document as UTF-8 whatever the locale: it is meant for programs. */
static int
json_emit (JsonBuilder *b)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *data = NULL;
  gsize len;

  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  data = json_generator_to_data (gen, &len);
  if (fwrite (data, 1, len, stdout) != len || fputc ('\n', stdout) == EOF || fflush (stdout) != 0)
    {
      g_printerr ("%s: %s\n", g_get_prgname (), _("could not write the output"));
      return TOOL_EXIT_FAILURE;
    }
  return TOOL_EXIT_OK;
}

static void
print_turn (const CatchupMessage *msg, const char *note)
{
  g_autofree char *iso = catchup_time_format_iso (msg->ts);
  SAFE (id, msg->id);
  SAFE (speaker, msg->speaker);
  SAFE (text, msg->text);

  g_print ("  [%s] %s <%s> %s%s\n", id, iso, speaker, text, note);
}

static void
print_memory (const CatchupMemory *mem)
{
  if (mem->gaps != NULL && mem->gaps->len > 0)
    {
      g_print (_("Gaps (%u):\n"), mem->gaps->len);
      for (guint i = 0; i < mem->gaps->len; i++)
        {
          const CatchupGap *gap = g_ptr_array_index (mem->gaps, i);
          SAFE (id, gap->utterance_id);
          SAFE (expression, gap->expression);
          SAFE (reason, gap->reason);
          SAFE (query, gap->query);

          g_print ("  %u. [%s] %s “%s”: %s\n", i + 1, id, catchup_gap_type_to_string (gap->type), expression,
                   reason);
          g_print (_("     query: %s\n"), query);
        }
    }
  g_print (_("Memory (%u turns, %u tokens):\n"), mem->turns->len, mem->tokens);
  for (guint i = 0; i < mem->turns->len; i++)
    {
      const CatchupMessage *msg = g_ptr_array_index (mem->turns, i);
      int reason = memory_reason (mem, msg->id);
      g_autofree char *note = reason >= 0 ? g_strdup_printf (_("  (gap %d)"), reason + 1)
                            : reason == -1 ? g_strdup (_("  (lead-in)"))
                            : g_strdup ("");

      print_turn (msg, note);
    }
}

/* --- the model --- */

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CatchupLlmConfig, catchup_llm_config_clear)

/* The method that insists on the model: benchmarks name it to be sure they measure the model path. */
#define METHOD_REMEMBER_MODEL "remember-model"

typedef struct {
  char *endpoint;
  char *model;
  char *embed_model;
  char *api_key_env;
  char *config;
  int timeout;
  gboolean no_model;
} ModelArgs;

static void
model_args_clear (ModelArgs *m)
{
  g_free (m->endpoint);
  g_free (m->model);
  g_free (m->embed_model);
  g_free (m->api_key_env);
  g_free (m->config);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ModelArgs, model_args_clear)

#define ENTRIES_MODEL(m) \
  { "endpoint", 0, 0, G_OPTION_ARG_STRING, &(m).endpoint, \
    N_("OpenAI-compatible model server, e.g. http://localhost:11434/v1 (default: $CATCHUP_ENDPOINT, else the " \
       "config file)"), N_("URL") }, \
  { "model", 0, 0, G_OPTION_ARG_STRING, &(m).model, N_("Chat model for gap detection and the summary"), \
    N_("NAME") }, \
  { "embed-model", 0, 0, G_OPTION_ARG_STRING, &(m).embed_model, N_("Embedding model for dense retrieval"), \
    N_("NAME") }, \
  { "api-key-env", 0, 0, G_OPTION_ARG_STRING, &(m).api_key_env, \
    N_("Environment variable holding the API key (default: CATCHUP_API_KEY)"), N_("VAR") }, \
  { "timeout", 0, 0, G_OPTION_ARG_INT, &(m).timeout, N_("Seconds one model request may take"), N_("S") }, \
  { "config", 0, 0, G_OPTION_ARG_FILENAME, &(m).config, \
    N_("Model settings file (default: purple-catchup/model.conf in the user's config directory)"), N_("FILE") }, \
  { "no-model", 0, 0, G_OPTION_ARG_NONE, &(m).no_model, N_("Use the built-in methods only"), NULL }

static void
set_string (char **slot, const char *value)
{
  if (value == NULL || *value == '\0')
    return;
  g_free (*slot);
  *slot = g_strdup (value);
}

/* Settings in rising precedence: the config file, $CATCHUP_ENDPOINT/$CATCHUP_MODEL/$CATCHUP_EMBED_MODEL, the
 * options. TRUE with *configured FALSE when nothing names an endpoint. */
static gboolean
model_config (const ModelArgs *m, CatchupLlmConfig *config, gboolean *configured, GError **error)
{
  g_autofree char *path = m->config ? g_strdup (m->config) : catchup_llm_config_default_path ();
  g_autoptr (GError) local = NULL;
  const char *key_env = m->api_key_env ? m->api_key_env : CATCHUP_LLM_API_KEY_ENV;

  catchup_llm_config_init (config);
  *configured = FALSE;
  if (m->no_model)
    return TRUE;
  if (m->timeout < 0)
    return usage_error (error, _("--timeout wants a positive number of seconds, not %d"), m->timeout);
  /* a missing default file only means "no settings"; a file named on the command line must exist */
  if (!catchup_llm_config_load (config, path, &local) &&
      (m->config != NULL || !g_error_matches (local, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND)))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  set_string (&config->base_url, g_getenv ("CATCHUP_ENDPOINT"));
  set_string (&config->chat_model, g_getenv ("CATCHUP_MODEL"));
  set_string (&config->embed_model, g_getenv ("CATCHUP_EMBED_MODEL"));
  set_string (&config->base_url, m->endpoint);
  set_string (&config->chat_model, m->model);
  set_string (&config->embed_model, m->embed_model);
  set_string (&config->api_key, g_getenv (key_env));
  if (m->timeout > 0)
    config->timeout_ms = (guint) MIN (m->timeout, 24 * 3600) * 1000u;
  *configured = config->base_url != NULL && *config->base_url != '\0';
  return TRUE;
}

static gboolean
tool_require_model (gboolean configured, GError **error)
{
  if (configured)
    return TRUE;
  return usage_error (error, _("method %s needs a model: give --endpoint, set CATCHUP_ENDPOINT or write the "
                               "config file"), METHOD_REMEMBER_MODEL);
}

static void
json_add_model (JsonBuilder *b, const CatchupModelReport *r)
{
  json_builder_set_member_name (b, "model");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "configured");
  json_builder_add_boolean_value (b, r->configured);
  json_builder_set_member_name (b, "used");
  json_builder_add_boolean_value (b, r->used);
  json_member_string (b, "notice", r->notice);
  json_member_int (b, "calls", r->stats.chat_calls + r->stats.embed_calls);
  json_member_int (b, "tokens_sent", (gint64) r->stats.tokens_sent);
  json_member_int (b, "tokens_received", (gint64) r->stats.tokens_received);
  json_member_int (b, "reasoning_tokens", (gint64) r->stats.tokens_reasoning);
  json_member_int (b, "chat_calls", r->stats.chat_calls);
  json_member_int (b, "embed_calls_at_catchup", r->stats.embed_calls);
  json_member_int (b, "query_embeddings", r->query_embeddings);
  json_member_int (b, "chunk_embeddings_at_catchup", r->history_embeddings);
  json_builder_set_member_name (b, "selection_used");
  json_builder_add_boolean_value (b, r->selection_used);
  json_member_int (b, "selection_candidates", r->selection_candidates);
  json_member_int (b, "selection_prompt_tokens", r->selection_prompt_tokens);
  json_builder_end_object (b);
}

/* One line per catch-up, so that the cost of the model is never a surprise. */
static void
print_model (const CatchupModelReport *r, gboolean with_notice)
{
  g_autofree char *sent = NULL, *received = NULL;

  if (!r->configured)
    return;
  sent = g_strdup_printf ("%" G_GUINT64_FORMAT, r->stats.tokens_sent);
  received = g_strdup_printf ("%" G_GUINT64_FORMAT, r->stats.tokens_received);
  g_print (_("Model: %u calls (%u chat, %u embedding), %s tokens sent, %s received; chunk embeddings computed at "
             "catch-up time: %u\n"), r->stats.chat_calls + r->stats.embed_calls, r->stats.chat_calls,
           r->stats.embed_calls, sent, received, r->history_embeddings);
  if (r->stats.tokens_reasoning > 0)
    {
      g_autofree char *reasoning = g_strdup_printf ("%" G_GUINT64_FORMAT, r->stats.tokens_reasoning);

      /* a reasoning model's thinking costs time: say how much of the answer it was */
      g_print (_("Of the tokens received, %s were the model's reasoning (thinking=false in the config file "
                 "switches it off where the server allows it).\n"), reasoning);
    }
  if (with_notice && r->notice != NULL)
    {
      SAFE (notice, r->notice);

      g_print ("%s\n", notice);
    }
}

/* Stores the model vectors of every room in rooms (gint64 ids) that a model catch-up reads. The dimension is
 * asked of the server once: this is background work, not a catch-up. */
static gboolean
embed_rooms (CatchupStore *store, GArray *rooms, const CatchupLlmConfig *config, gboolean prune, guint *computed,
             GError **error)
{
  g_autoptr (CatchupLlm) llm = catchup_llm_new (config, error);
  g_autoptr (CatchupEmbedder) embedder = llm ? catchup_llm_embedder_new (llm, 0, NULL, error) : NULL;

  *computed = 0;
  if (embedder == NULL)
    return FALSE;
  return catchup_embed_cache_fill_rooms (store, rooms, embedder, prune, NULL, NULL, NULL, computed, error);
}

static GArray *
all_rooms (CatchupStore *store, GError **error)
{
  g_autoptr (GPtrArray) infos = catchup_store_list_rooms (store, error);
  GArray *ids;

  if (infos == NULL)
    return NULL;
  ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint i = 0; i < infos->len; i++)
    g_array_append_val (ids, ((CatchupRoomInfo *) infos->pdata[i])->id);
  return ids;
}

static gboolean
has_embed_model (const CatchupLlmConfig *config, gboolean configured)
{
  return configured && config->embed_model != NULL && *config->embed_model != '\0';
}

/* --- subcommands --- */

typedef struct {
  char *db;
  char *room;
  char *method_name;
  int budget;
  gboolean json;
  ModelArgs model;
} MemoryArgs;

static void
memory_args_clear (MemoryArgs *a)
{
  g_free (a->db);
  g_free (a->room);
  g_free (a->method_name);
  model_args_clear (&a->model);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (MemoryArgs, memory_args_clear)

#define MEMORY_ARGS_INIT { NULL, NULL, NULL, CATCHUP_DEFAULT_BUDGET, FALSE, { 0 } }

/* Opens the store, finds the room and checks the options common to memory, recall and summarize; config gets
 * the model's settings (always initialised, cleared by the caller), opts->model points at it when an endpoint
 * is configured. */
static CatchupStore *
memory_args_open (const MemoryArgs *a, gint64 *room, CatchupOptions *copts, CatchupLlmConfig *config,
                  GError **error)
{
  g_autoptr (CatchupStore) store = NULL;
  CatchupMemoryOptions *opts = &copts->memory;
  gboolean configured = FALSE, needs_model = g_strcmp0 (a->method_name, METHOD_REMEMBER_MODEL) == 0;

  if (!model_config (&a->model, config, &configured, error) ||
      !tool_require (a->room, "--room", error) || !tool_check_budget (a->budget, error))
    return NULL;
  catchup_memory_options_init (opts);
  if (needs_model && !tool_require_model (configured, error))
    return NULL;
  if (a->method_name != NULL && !needs_model && !tool_parse_method (a->method_name, &opts->method, error))
    return NULL;
  opts->budget = (guint) a->budget;
  copts->model = configured ? config : NULL;
  store = tool_open_store (a->db, FALSE, error);
  if (store == NULL)
    return NULL;
  *room = catchup_store_find_room (store, a->room, error);
  if (*room <= 0)
    return NULL;
  return g_steal_pointer (&store);
}

/* The method as the user named it ("remember-model" stays itself in the output). */
static const char *
method_label (const MemoryArgs *a, CatchupMethod method)
{
  return g_strcmp0 (a->method_name, METHOD_REMEMBER_MODEL) == 0 ? METHOD_REMEMBER_MODEL
                                                                 : catchup_method_to_string (method);
}

#define DB_HELP N_("History database (default: $CATCHUP_DB, else ~/.purple/catchup/history.db)")
#define ENTRY_DB(a) { "db", 0, 0, G_OPTION_ARG_FILENAME, &(a).db, DB_HELP, N_("DB") }
#define ENTRY_ROOM(a) \
  { "room", 'r', 0, G_OPTION_ARG_STRING, &(a).room, N_("Room name, or PROTOCOL/ACCOUNT/NAME"), N_("ROOM") }
#define ENTRY_BUDGET(a) \
  { "budget", 'b', 0, G_OPTION_ARG_INT, &(a).budget, N_("Memory budget in tokens (default: 1024)"), N_("N") }
#define ENTRY_METHOD(a) \
  { "method", 'm', 0, G_OPTION_ARG_STRING, &(a).method_name, \
    N_("none, recent, full, sparse, dense, hybrid, remember, gaps or remember-model (remember that fails without " \
       "a model; default: remember)"), N_("METHOD") }
#define ENTRY_JSON(a) \
  { "json", 0, 0, G_OPTION_ARG_NONE, &(a).json, N_("Print JSON instead of text"), NULL }

static int
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

static int
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
  json_builder_set_member_name (b, "request");
  json_builder_add_boolean_value (b, (r->flags & CATCHUP_RECORD_FLAG_REQUEST) != 0);
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
  json_builder_set_member_name (b, "everyone");
  json_builder_add_boolean_value (b, q->everyone);
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
      json_builder_set_member_name (b, "empty");
      json_builder_add_boolean_value (b, row->turns->len == 0);
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

static int
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
  json_builder_set_member_name (b, "capped");
  json_builder_add_boolean_value (b, head->capped);
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
  json_builder_set_member_name (b, "sources");
  json_builder_begin_array (b);
  for (guint k = 0; k < line->sources->len; k++)
    json_builder_add_string_value (b, g_ptr_array_index (line->sources, k));
  json_builder_end_array (b);
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
  json_builder_set_member_name (b, "no_reply");
  json_builder_add_boolean_value (b, line->no_reply);
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

static int
cmd_summarize (int argc, char **argv)
{
  g_auto (MemoryArgs) a = MEMORY_ARGS_INIT;
  g_autofree char *since = NULL, *range = NULL, *length = NULL, *me = NULL, *about = NULL;
  int last_n = 0;
  const GOptionEntry entries[] = {
    ENTRY_DB (a), ENTRY_ROOM (a),
    { "last", 'n', 0, G_OPTION_ARG_INT, &last_n, N_("Summarise the last N messages"), N_("N") },
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
       && (length == NULL || tool_parse_length (length, &opts.length, &error))
       && (store = memory_args_open (&a, &room, &opts, &config, &error)) != NULL;
  opts.me = me;
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

static void
json_add_room (JsonBuilder *b, const CatchupRoomInfo *info)
{
  json_builder_begin_object (b);
  json_member_string (b, "name", info->name);
  json_member_string (b, "protocol", info->protocol);
  json_member_string (b, "account", info->account);
  json_member_int (b, "messages", info->n_messages);
  if (info->n_messages > 0)
    {
      json_member_time (b, "first_ts", info->first_ts);
      json_member_time (b, "last_ts", info->last_ts);
    }
  json_builder_end_object (b);
}

static void
print_room (const CatchupRoomInfo *info)
{
  g_autofree char *first = info->n_messages > 0 ? catchup_time_format_iso (info->first_ts) : g_strdup ("-");
  g_autofree char *last = info->n_messages > 0 ? catchup_time_format_iso (info->last_ts) : g_strdup ("-");
  g_autofree char *where_raw = g_strdup_printf ("%s/%s", info->protocol != NULL ? info->protocol : "",
                                                info->account != NULL ? info->account : "");
  SAFE (where, where_raw);
  SAFE (name, info->name);

  g_print ("%-24s %8" G_GINT64_FORMAT "  %-20s  %-20s  %s\n", name, info->n_messages, first, last, where);
}

static int
cmd_rooms (int argc, char **argv)
{
  g_autofree char *db = NULL;
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db, DB_HELP, N_("DB") },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, N_("Print JSON instead of text"), NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (GPtrArray) rooms = NULL;

  if (!tool_parse (&argc, &argv, NULL, _("List the rooms of the history database."),
                   _("Each room with its number of messages and the time of its first and last message."),
                   entries, &error)
      || (store = tool_open_store (db, FALSE, &error)) == NULL
      || (rooms = catchup_store_list_rooms (store, &error)) == NULL)
    return tool_fail (error);

  if (json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "rooms");
      json_builder_begin_array (b);
      for (guint i = 0; i < rooms->len; i++)
        json_add_room (b, g_ptr_array_index (rooms, i));
      json_builder_end_array (b);
      return json_emit (b);
    }
  /* Translators: column headings of "catchup rooms"; keep the widths */
  g_print ("%-24s %8s  %-20s  %-20s  %s\n", _("ROOM"), _("MESSAGES"), _("FIRST"), _("LAST"), _("PROTOCOL/ACCOUNT"));
  for (guint i = 0; i < rooms->len; i++)
    print_room (g_ptr_array_index (rooms, i));
  return TOOL_EXIT_OK;
}

typedef struct {
  char *db;
  char *format;
  char *room;
  char *date;
  char **files;
  ModelArgs model;
} ImportArgs;

static void
import_args_clear (ImportArgs *a)
{
  g_free (a->db);
  g_free (a->format);
  g_free (a->room);
  g_free (a->date);
  g_strfreev (a->files);
  model_args_clear (&a->model);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ImportArgs, import_args_clear)

static gboolean
is_blank_name (const char *name)
{
  for (; *name; name = g_utf8_next_char (name))
    if (!g_unichar_isspace (g_utf8_get_char (name)))
      return FALSE;
  return TRUE;
}

static gboolean
import_check_args (const ImportArgs *a, gboolean *irc, GError **error)
{
  int y, m, d;
  char tail;

  if (!tool_require (a->format, "--format", error))
    return FALSE;
  /* a room of a blank name could never be named again by --room */
  if (a->room != NULL && is_blank_name (a->room))
    return usage_error (error, _("--room wants a room name, not an empty one"));
  *irc = g_strcmp0 (a->format, "irc") == 0;
  if (!*irc && g_strcmp0 (a->format, "jsonl") != 0)
    return usage_error (error, _("unknown format “%s” (known: jsonl, irc)"), a->format);
  if (a->files == NULL || a->files[0] == NULL)
    return usage_error (error, _("no FILE to import"));
  if (!*irc)
    return a->date == NULL || usage_error (error, _("--date is only for --format irc"));
  if (!tool_require (a->room, "--room", error) || !tool_require (a->date, "--date", error))
    return FALSE;
  if (sscanf (a->date, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 || strlen (a->date) != 10
      || !g_date_valid_dmy ((GDateDay) d, (GDateMonth) m, (GDateYear) y))
    return usage_error (error, _("--date wants a day as YYYY-MM-DD, not “%s”"), a->date);
  return TRUE;
}

/* Every file is checked before the first is imported, so a typo in the last name leaves the database as it
 * was. */
static gboolean
import_check_files (char **files, GError **error)
{
  for (guint i = 0; files[i] != NULL; i++)
    {
      g_autoptr (GFile) file = g_file_new_for_commandline_arg (files[i]);
      g_autoptr (GFileInputStream) in = g_file_read (file, NULL, error);

      if (in == NULL)
        return FALSE;
    }
  return TRUE;
}

static void
import_add (CatchupImportResult *total, const CatchupImportResult *part)
{
  total->read += part->read;
  total->inserted += part->inserted;
  total->duplicates += part->duplicates;
  total->events += part->events;
  total->malformed += part->malformed;
}

static void
import_report_problems (const char *path, const CatchupImportResult *result)
{
  for (guint i = 0; result->problems != NULL && i < result->problems->len; i++)
    {
      const CatchupImportProblem *p = g_ptr_array_index (result->problems, i);
      SAFE (message, p->message);

      g_printerr ("%s:%" G_GUINT64_FORMAT ": %s\n", path, p->line, message);
    }
}

static gboolean
import_files (CatchupStore *store, const ImportArgs *a, gboolean irc, CatchupImportResult *total,
              GError **error)
{
  gint64 room = 0;

  if (a->room != NULL)
    {
      room = catchup_store_ensure_room (store, CATCHUP_IMPORT_PROTOCOL, CATCHUP_IMPORT_ACCOUNT, a->room, error);
      if (room <= 0)
        return FALSE;
    }
  for (guint i = 0; a->files[i] != NULL; i++)
    {
      g_autoptr (CatchupImportResult) part = catchup_import_result_new ();
      gboolean ok = irc ? catchup_import_irc (store, a->files[i], room, a->date, part, NULL, error)
                        : catchup_import_jsonl (store, a->files[i], room, part, NULL, error);

      import_report_problems (a->files[i], part);
      import_add (total, part);
      if (!ok)
        {
          g_prefix_error (error, "%s: ", a->files[i]);
          return FALSE;
        }
    }
  return TRUE;
}

static void
import_print_summary (const CatchupImportResult *r)
{
  g_printerr (_("%s: %" G_GUINT64_FORMAT " read, %" G_GUINT64_FORMAT " inserted, %" G_GUINT64_FORMAT
                " duplicates, %" G_GUINT64_FORMAT " malformed, %" G_GUINT64_FORMAT " events\n"),
              g_get_prgname (), r->read, r->inserted, r->duplicates, r->malformed, r->events);
}

/* Imported rooms get their model vectors right away when an embedding model is configured, as the plugin's
 * rooms get them in the background; the import itself stands even when the model server does not answer. */
static void
import_embed (CatchupStore *store, const ModelArgs *m)
{
  g_auto (CatchupLlmConfig) config = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) rooms = NULL;
  gboolean configured = FALSE;
  guint computed = 0;

  if (model_config (m, &config, &configured, &error) && !has_embed_model (&config, configured))
    return;
  if (error != NULL || (rooms = all_rooms (store, &error)) == NULL ||
      !embed_rooms (store, rooms, &config, FALSE, &computed, &error))
    {
      SAFE (message, error->message);

      g_printerr (_("%s: the history is imported, but its embeddings are not: %s\n"), g_get_prgname (), message);
      return;
    }
  g_printerr (ngettext ("%s: %u text embedded with %s\n", "%s: %u texts embedded with %s\n", computed),
              g_get_prgname (), computed, config.embed_model);
}

static int
cmd_import (int argc, char **argv)
{
  g_auto (ImportArgs) a = { 0 };
  const GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &a.db,
      N_("History database, created when missing (default: $CATCHUP_DB, else ~/.purple/catchup/history.db)"),
      N_("DB") },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &a.format, N_("jsonl or irc"), N_("FORMAT") },
    { "room", 'r', 0, G_OPTION_ARG_STRING, &a.room,
      N_("Room to import into (required for irc; for jsonl it overrides each line's \"room\")"), N_("NAME") },
    { "date", 'd', 0, G_OPTION_ARG_STRING, &a.date, N_("Day of the first line of an irc log"),
      N_("YYYY-MM-DD") },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a.files, NULL, N_("FILE…") },
    ENTRIES_MODEL (a.model),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (CatchupImportResult) total = catchup_import_result_new ();
  gboolean irc = FALSE, ok;

  if (!tool_parse (&argc, &argv, NULL, _("Import chat logs into the history database."),
                   _("Formats:\n"
                     "  jsonl  one JSON object a line: {\"id\", \"room\", \"ts\" (ISO 8601), \"speaker\", \"text\"}\n"
                     "  irc    plain logs, \"[HH:MM] <nick> text\" a line; needs --room and --date\n\n"
                     "Importing is idempotent: messages already stored are counted as duplicates.\n"
                     "A malformed line is reported as FILE:LINE and skipped; the rest is imported.\n\n"
                     "Examples:\n"
                     "  catchup import --format jsonl room.jsonl\n"
                     "  catchup import --format irc --room '#ubuntu' --date 2009-02-23 ubuntu.log"),
                   entries, &error)
      || !import_check_args (&a, &irc, &error)
      || !import_check_files (a.files, &error)
      || (store = tool_open_store (a.db, TRUE, &error)) == NULL)
    return tool_fail (error);

  ok = import_files (store, &a, irc, total, &error);
  import_print_summary (total);
  if (ok)
    import_embed (store, &a.model);
  return ok ? TOOL_EXIT_OK : tool_fail (error);
}

static int
cmd_embed (int argc, char **argv)
{
  g_autofree char *db = NULL, *room_name = NULL;
  g_auto (ModelArgs) m = { 0 };
  gboolean prune = FALSE;
  const GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db, DB_HELP, N_("DB") },
    { "room", 'r', 0, G_OPTION_ARG_STRING, &room_name, N_("Room name, or PROTOCOL/ACCOUNT/NAME (default: every room)"),
      N_("ROOM") },
    { "prune", 0, 0, G_OPTION_ARG_NONE, &prune, N_("Delete the stored vectors of every other model"), NULL },
    ENTRIES_MODEL (m),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (GArray) rooms = NULL;
  g_auto (CatchupLlmConfig) config = { 0 };
  gboolean configured = FALSE;
  guint computed = 0;

  if (!tool_parse (&argc, &argv, NULL, _("Compute the embedding model's vectors of a room's history."),
                   _("A catch-up with an embedding model reads stored vectors and embeds only its own queries. The "
                     "plugin computes them as messages arrive; this command does it for imported history.\n\n"
                     "Example:\n  catchup embed --room larkspur-ops --endpoint http://localhost:11434/v1 "
                     "--embed-model nomic-embed-text"),
                   entries, &error)
      || !model_config (&m, &config, &configured, &error))
    return tool_fail (error);
  if (!has_embed_model (&config, configured))
    {
      usage_error (&error, _("no embedding model: give --endpoint and --embed-model, or set them in the config file"));
      return tool_fail (error);
    }
  if ((store = tool_open_store (db, FALSE, &error)) == NULL)
    return tool_fail (error);
  if (room_name != NULL)
    {
      gint64 room = catchup_store_find_room (store, room_name, &error);

      if (room <= 0)
        return tool_fail (error);
      rooms = g_array_new (FALSE, FALSE, sizeof (gint64));
      g_array_append_val (rooms, room);
    }
  else if ((rooms = all_rooms (store, &error)) == NULL)
    return tool_fail (error);
  if (!embed_rooms (store, rooms, &config, prune, &computed, &error))
    return tool_fail (error);
  g_print (ngettext ("%u text embedded with %s\n", "%u texts embedded with %s\n", computed), computed,
           config.embed_model);
  return TOOL_EXIT_OK;
}

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
