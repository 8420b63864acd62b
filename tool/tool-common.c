#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "catchup-embed-cache.h"
#include "catchup-llm-embed.h"
#include "tool.h"

/* The tool's shared parts: errors and options, JSON and text output, the model's settings. */

int
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

gboolean
usage_error (GError **error, const char *format, ...)
{
  va_list args;

  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, message);
  return FALSE;
}

gboolean
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

CatchupStore *
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

gboolean
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

gboolean
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

gboolean
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

gboolean
tool_parse_since (const char *text, gint64 now, gint64 *out, GError **error)
{
  g_autofree char *midnight = NULL;

  if (catchup_window_parse_age (text, now, out))
    return TRUE;
  if (catchup_time_parse_iso (text, out))
    return TRUE;
  midnight = g_strconcat (text, "T00:00:00Z", NULL);
  if (strlen (text) == 10 && catchup_time_parse_iso (midnight, out))
    return TRUE;
  return usage_error (error, _("--since wants an ISO 8601 time or an age such as 45m, 2h, 1d, not “%s”"), text);
}

void
json_member_string (JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name (b, name);
  if (value != NULL)
    json_builder_add_string_value (b, value);
  else
    json_builder_add_null_value (b);
}

void
json_member_int (JsonBuilder *b, const char *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}

void
json_member_bool (JsonBuilder *b, const char *name, gboolean value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_boolean_value (b, value);
}

void
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

void
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

void
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
          json_member_bool (b, "lead_in", TRUE);
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

guint
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

void
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

JsonBuilder *
json_begin (const char *room, const char *method, guint budget)
{
  JsonBuilder *b = json_builder_new ();

  json_builder_begin_object (b);
  json_member_string (b, "room", room);
  json_member_string (b, "method", method);
  json_member_int (b, "budget", budget);
  return b;
}

int
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

void
print_turn (const CatchupMessage *msg, const char *note)
{
  g_autofree char *iso = catchup_time_format_iso (msg->ts);
  SAFE (id, msg->id);
  SAFE (speaker, msg->speaker);
  SAFE (text, msg->text);

  g_print ("  [%s] %s <%s> %s%s\n", id, iso, speaker, text, note);
}

void
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

void
model_args_clear (ModelArgs *m)
{
  g_free (m->endpoint);
  g_free (m->model);
  g_free (m->embed_model);
  g_free (m->api_key_env);
  g_free (m->config);
}

static void
set_string (char **slot, const char *value)
{
  if (value == NULL || *value == '\0')
    return;
  g_free (*slot);
  *slot = g_strdup (value);
}

gboolean
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

void
json_add_model (JsonBuilder *b, const CatchupModelReport *r)
{
  json_builder_set_member_name (b, "model");
  json_builder_begin_object (b);
  json_member_bool (b, "configured", r->configured);
  json_member_bool (b, "used", r->used);
  json_member_string (b, "notice", r->notice);
  json_member_int (b, "calls", r->stats.chat_calls + r->stats.embed_calls);
  json_member_int (b, "tokens_sent", (gint64) r->stats.tokens_sent);
  json_member_int (b, "tokens_received", (gint64) r->stats.tokens_received);
  json_member_int (b, "reasoning_tokens", (gint64) r->stats.tokens_reasoning);
  json_member_int (b, "chat_calls", r->stats.chat_calls);
  json_member_int (b, "embed_calls_at_catchup", r->stats.embed_calls);
  json_member_int (b, "query_embeddings", r->query_embeddings);
  json_member_int (b, "chunk_embeddings_at_catchup", r->history_embeddings);
  json_member_bool (b, "selection_used", r->selection_used);
  json_member_int (b, "selection_candidates", r->selection_candidates);
  json_member_int (b, "selection_prompt_tokens", r->selection_prompt_tokens);
  json_builder_end_object (b);
}

void
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

gboolean
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

GArray *
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

gboolean
has_embed_model (const CatchupLlmConfig *config, gboolean configured)
{
  return configured && config->embed_model != NULL && *config->embed_model != '\0';
}

void
memory_args_clear (MemoryArgs *a)
{
  g_free (a->db);
  g_free (a->room);
  g_free (a->method_name);
  model_args_clear (&a->model);
}

CatchupStore *
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

const char *
method_label (const MemoryArgs *a, CatchupMethod method)
{
  return g_strcmp0 (a->method_name, METHOD_REMEMBER_MODEL) == 0 ? METHOD_REMEMBER_MODEL
                                                                 : catchup_method_to_string (method);
}
