#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "catchup-error.h"
#include "catchup-http.h"
#include "catchup-json.h"
#include "catchup-llm-private.h"
#include "catchup-llm-prompt.h"
#include "catchup-text.h"

struct _CatchupLlm {
  gatomicrefcount ref;
  CatchupLlmConfig config;  /* base_url normalised, api_key resolved */
  CatchupHttp *http;
  GMutex lock;              /* guards stats */
  CatchupLlmStats stats;
  gint refused;             /* ChatExtra bits the server refused: never sent again by this client */
};

/* Optional request parameters of a chat call: useful where a server takes them, never needed. */
typedef enum {
  EXTRA_RESPONSE_FORMAT = 1 << 0,   /* {"type": "json_object"}: OpenAI, llama.cpp, vLLM, Ollama */
  EXTRA_REASONING_EFFORT = 1 << 1,  /* "none": Ollama switches thinking off */
  EXTRA_TEMPLATE_KWARGS = 1 << 2,   /* {"enable_thinking": false}: vLLM, SGLang, llama.cpp (Qwen3 templates) */
} ChatExtra;

static const char *const extra_names[] = { "response_format", "reasoning_effort", "chat_template_kwargs" };

typedef enum { ENDPOINT_CHAT, ENDPOINT_EMBED } Endpoint;

static const char *const endpoint_paths[] = { "/chat/completions", "/embeddings" };

CatchupLlm *
catchup_llm_new (const CatchupLlmConfig *config, GError **error)
{
  CatchupHttp *http;
  CatchupLlm *llm;

  g_return_val_if_fail (config != NULL, NULL);

  http = catchup_http_new (config, error);
  if (http == NULL)
    return NULL;
  llm = g_new0 (CatchupLlm, 1);
  g_atomic_ref_count_init (&llm->ref);
  g_mutex_init (&llm->lock);
  llm->http = http;
  catchup_llm_config_copy (config, &llm->config);
  g_free (llm->config.base_url);
  llm->config.base_url = g_strdup (catchup_http_get_base_url (http));
  catchup_llm_secret_free (llm->config.api_key);
  llm->config.api_key = g_strdup (catchup_http_get_api_key (http));
  return llm;
}

CatchupLlm *
catchup_llm_ref (CatchupLlm *llm)
{
  g_return_val_if_fail (llm != NULL, NULL);
  g_atomic_ref_count_inc (&llm->ref);
  return llm;
}

void
catchup_llm_unref (CatchupLlm *llm)
{
  if (llm == NULL || !g_atomic_ref_count_dec (&llm->ref))
    return;
  catchup_llm_config_clear (&llm->config);
  catchup_http_free (llm->http);
  g_mutex_clear (&llm->lock);
  g_free (llm);
}

const CatchupLlmConfig *
catchup_llm_get_config (CatchupLlm *llm)
{
  return &llm->config;
}

const char *
catchup_llm_get_display_url (CatchupLlm *llm)
{
  return catchup_http_get_display_url (llm->http);
}

void
catchup_llm_get_stats (CatchupLlm *llm, CatchupLlmStats *out)
{
  g_mutex_lock (&llm->lock);
  *out = llm->stats;
  g_mutex_unlock (&llm->lock);
}

/* A call's attempts HTTP requests to endpoint (all after the first are retries), and whether it failed. */
static void
count_calls (CatchupLlm *llm, Endpoint endpoint, guint attempts, gboolean failed)
{
  g_mutex_lock (&llm->lock);
  if (endpoint == ENDPOINT_CHAT)
    llm->stats.chat_calls += attempts;
  else
    llm->stats.embed_calls += attempts;
  llm->stats.retries += attempts > 0 ? attempts - 1 : 0;
  if (failed)
    llm->stats.failures++;
  g_mutex_unlock (&llm->lock);
}

/* A call that failed after its requests succeeded: the answer was unusable. */
static void
count_failure (CatchupLlm *llm)
{
  g_mutex_lock (&llm->lock);
  llm->stats.failures++;
  g_mutex_unlock (&llm->lock);
}

static gint64
usage_field (JsonObject *root, const char *name)
{
  gint64 value;

  return catchup_json_int (catchup_json_object (root, "usage"), name, &value) ? value : -1;
}

/* usage.completion_tokens_details.reasoning_tokens (OpenAI, vLLM), -1 when the server does not say. */
static gint64
usage_reasoning (JsonObject *root)
{
  JsonObject *details = catchup_json_object (catchup_json_object (root, "usage"), "completion_tokens_details");
  gint64 value;

  return catchup_json_int (details, "reasoning_tokens", &value) ? value : -1;
}

/* The server's usage figures when it reports them (most do), else the library's approximate count. Reasoning
 * is part of what was received, as in the servers' own completion_tokens. */
static void
count_tokens (CatchupLlm *llm, JsonObject *root, guint sent_estimate, guint received_estimate,
              guint reasoning_estimate)
{
  gint64 sent = usage_field (root, "prompt_tokens");
  gint64 received = usage_field (root, "completion_tokens");
  gint64 reasoning = usage_reasoning (root);

  /* the server's completion count includes the reasoning: our estimate of it must not exceed it */
  if (reasoning < 0 && received >= 0)
    reasoning = MIN ((gint64) reasoning_estimate, received);
  g_mutex_lock (&llm->lock);
  llm->stats.tokens_sent += sent >= 0 ? (guint64) sent : sent_estimate;
  llm->stats.tokens_received += received >= 0 ? (guint64) received : (guint64) received_estimate + reasoning_estimate;
  llm->stats.tokens_reasoning += reasoning >= 0 ? (guint64) reasoning : reasoning_estimate;
  g_mutex_unlock (&llm->lock);
}

/* POSTs payload to an endpoint through the transport, counting its requests. */
static JsonObject *
post_json (CatchupLlm *llm, Endpoint endpoint, const char *model, const char *payload, GCancellable *cancellable,
           long *status, GError **error)
{
  guint attempts = 0;
  JsonObject *reply = catchup_http_post_json (llm->http, endpoint_paths[endpoint], model, payload, cancellable,
                                              &attempts, status, error);

  count_calls (llm, endpoint, attempts, reply == NULL);
  return reply;
}

static gboolean
require_model (const char *model, const char *what, GError **error)
{
  if (model != NULL && *model != '\0')
    return TRUE;
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("No %s model is configured"), what);
  return FALSE;
}

/* The extras this client sends: what the config asks for, less what the server refused. */
static guint
chat_extras (CatchupLlm *llm)
{
  guint extras = 0;

  if (llm->config.json_mode)
    extras |= EXTRA_RESPONSE_FORMAT;
  if (!llm->config.thinking)
    extras |= EXTRA_REASONING_EFFORT | EXTRA_TEMPLATE_KWARGS;
  return extras & ~(guint) g_atomic_int_get (&llm->refused);
}

static void
add_message (JsonBuilder *b, const char *role, const char *content)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "role");
  json_builder_add_string_value (b, role);
  json_builder_set_member_name (b, "content");
  json_builder_add_string_value (b, content);
  json_builder_end_object (b);
}

static void
add_extras (JsonBuilder *b, guint extras)
{
  if (extras & EXTRA_RESPONSE_FORMAT)
    {
      json_builder_set_member_name (b, extra_names[0]);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "type");
      json_builder_add_string_value (b, "json_object");
      json_builder_end_object (b);
    }
  if (extras & EXTRA_REASONING_EFFORT)
    {
      json_builder_set_member_name (b, extra_names[1]);
      json_builder_add_string_value (b, "none");
    }
  if (extras & EXTRA_TEMPLATE_KWARGS)
    {
      json_builder_set_member_name (b, extra_names[2]);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "enable_thinking");
      json_builder_add_boolean_value (b, FALSE);
      json_builder_end_object (b);
    }
}

static char *
chat_payload (const CatchupLlmConfig *c, const char *system, const char *user, guint extras, guint max_tokens)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "model");
  json_builder_add_string_value (b, c->chat_model);
  json_builder_set_member_name (b, "messages");
  json_builder_begin_array (b);
  if (system != NULL)
    add_message (b, "system", system);
  add_message (b, "user", user);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "temperature");
  json_builder_add_double_value (b, 0.0);
  if (max_tokens > 0)
    {
      json_builder_set_member_name (b, "max_tokens");
      json_builder_add_int_value (b, max_tokens);
    }
  json_builder_set_member_name (b, "stream");
  json_builder_add_boolean_value (b, FALSE);
  add_extras (b, extras);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return json_to_string (root, FALSE);
}

static void
set_unusable (CatchupLlm *llm, GError **error, const char *why)
{
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL, _("The model server at %s sent an unusable answer: %s"),
               catchup_llm_get_display_url (llm), why);
}

/* One chat answer taken apart: the answer, the reasoning before or beside it, and whether it was cut. */
typedef struct {
  char *answer;
  char *reasoning;
  gboolean cut;
} ChatAnswer;

static void
chat_answer_clear (ChatAnswer *a)
{
  g_clear_pointer (&a->answer, g_free);
  g_clear_pointer (&a->reasoning, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ChatAnswer, chat_answer_clear)

static gboolean
chat_reply_text (CatchupLlm *llm, JsonObject *root, ChatAnswer *a, GError **error)
{
  JsonArray *choices = catchup_json_array (root, "choices");
  JsonNode *first = choices && json_array_get_length (choices) > 0 ? json_array_get_element (choices, 0) : NULL;
  JsonObject *choice = first && JSON_NODE_HOLDS_OBJECT (first) ? json_node_get_object (first) : NULL;
  JsonObject *message = catchup_json_object (choice, "message");
  const char *content = catchup_json_string (message, "content");
  /* vLLM and DeepSeek's API say reasoning_content, newer vLLM and Ollama reasoning */
  const char *reasoning = catchup_json_string (message, "reasoning_content");

  if (reasoning == NULL)
    reasoning = catchup_json_string (message, "reasoning");
  if (message == NULL || (content == NULL && reasoning == NULL))
    {
      set_unusable (llm, error, _("no message text in it"));
      return FALSE;
    }
  {
    /* the reply enters like chat text: valid UTF-8, no NUL or control character (its line breaks stay) */
    g_autofree char *clean = catchup_text_clean (content, -1, CATCHUP_TEXT_MULTI_LINE);

    a->answer = catchup_llm_split_reasoning (clean, &a->reasoning);
  }
  if (reasoning != NULL && *reasoning != '\0')
    {
      g_free (a->reasoning);
      a->reasoning = g_strdup (reasoning);
    }
  a->cut = g_strcmp0 (catchup_json_string (choice, "finish_reason"), "length") == 0;
  return TRUE;
}

/* Which of the extras sent a refusal names (servers name the parameter they do not take: "Unrecognized
 * request argument supplied: chat_template_kwargs", "'response_format.type' must be 'json_schema'"); a refusal
 * naming none of them is about something else and is not retried. */
static guint
refused_extras (const GError *error, guint sent)
{
  guint named = 0;

  for (guint i = 0; i < G_N_ELEMENTS (extra_names); i++)
    if ((sent & (1u << i)) && strstr (error->message, extra_names[i]) != NULL)
      named |= 1u << i;
  return named;
}

/* The reply limit for one more try after a cut answer: twice the limit, within what the context leaves;
 * 0 when there is no room to grow. */
static guint
raised_limit (const CatchupLlmConfig *c, guint current, guint prompt_tokens)
{
  gint64 room = (gint64) c->context_tokens - prompt_tokens;
  guint64 want = current > 0 ? (guint64) current * 2 : (guint64) c->context_tokens / 2;
  guint64 limit = MIN (want, (guint64) MAX (room, 0));

  return limit > current ? (guint) limit : 0;
}

static void
set_cut (CatchupLlm *llm, guint limit, gboolean thinking, GError **error)
{
  if (thinking)
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL,
                 _("The model at %s was cut off at its reply limit (%u tokens) while still thinking, before any "
                   "answer (set thinking=false or a larger max_reply_tokens)"),
                 catchup_llm_get_display_url (llm), limit);
  else
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL,
                 _("The model's answer was cut off at its reply limit (%u tokens)"), limit);
}

/* One exchange: the answer text, or NULL with *status the HTTP status of a refusal. */
static gboolean
chat_once (CatchupLlm *llm, const char *system, const char *user, guint extras, guint max_tokens,
           GCancellable *cancellable, ChatAnswer *a, long *status, GError **error)
{
  g_autofree char *payload = chat_payload (&llm->config, system, user, extras, max_tokens);
  g_autoptr (JsonObject) reply = post_json (llm, ENDPOINT_CHAT, llm->config.chat_model, payload, cancellable,
                                            status, error);
  guint prompt = catchup_text_count_tokens (system ? system : "") + catchup_text_count_tokens (user);

  if (reply == NULL)
    return FALSE;
  if (!chat_reply_text (llm, reply, a, error))
    {
      count_failure (llm);
      return FALSE;
    }
  count_tokens (llm, reply, prompt, catchup_text_count_tokens (a->answer),
                a->reasoning ? catchup_text_count_tokens (a->reasoning) : 0);
  return TRUE;
}

char *
catchup_llm_chat (CatchupLlm *llm, const char *system, const char *user, GCancellable *cancellable,
                  GError **error)
{
  guint extras, limit, prompt;
  gboolean raised = FALSE;

  g_return_val_if_fail (llm != NULL && user != NULL, NULL);

  if (!require_model (llm->config.chat_model, _("chat"), error))
    return NULL;
  extras = chat_extras (llm);
  limit = llm->config.max_reply_tokens;
  prompt = catchup_text_count_tokens (system ? system : "") + catchup_text_count_tokens (user);
  for (;;)
    {
      g_autoptr (GError) local = NULL;
      g_auto (ChatAnswer) a = { NULL, NULL, FALSE };
      long status = 0;
      guint more;

      if (!chat_once (llm, system, user, extras, limit, cancellable, &a, &status, &local))
        {
          /* a server that does not know an optional parameter: once more without it, and never again */
          guint refused = status == 400 || status == 422 ? refused_extras (local, extras) : 0;

          if (refused != 0)
            {
              g_debug ("the model server refused %s; asking again without", local->message);
              g_atomic_int_or (&llm->refused, refused);
              extras &= ~refused;
              continue;
            }
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (!a.cut)
        {
          if (*a.answer == '\0' && a.reasoning != NULL)
            {
              set_unusable (llm, error, _("only the model's reasoning, no answer"));
              count_failure (llm);
              return NULL;
            }
          return g_steal_pointer (&a.answer);
        }
      more = raised ? 0 : raised_limit (&llm->config, limit, prompt);
      g_debug ("the model's answer was cut at %u tokens; %s", limit, more ? "asking once more" : "giving up");
      if (more == 0)
        {
          set_cut (llm, limit, *g_strstrip (a.answer) == '\0', error);
          count_failure (llm);
          return NULL;
        }
      limit = more;
      raised = TRUE;
    }
}

static char *
embed_payload (const CatchupLlmConfig *c, const char *const *texts, guint n)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "model");
  json_builder_add_string_value (b, c->embed_model);
  json_builder_set_member_name (b, "input");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    json_builder_add_string_value (b, texts[i]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "encoding_format");
  json_builder_add_string_value (b, "float");
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return json_to_string (root, FALSE);
}

/* The numbers of one vector. A component that is not a finite float (1e999 parses as infinity, 1e300 becomes
 * one as a float) would make every score NaN, and a vector of zeros has no direction: neither is an embedding. */
static gboolean
read_components (JsonArray *vec, float *row, guint len)
{
  gboolean nonzero = FALSE;

  for (guint j = 0; j < len; j++)
    {
      JsonNode *v = json_array_get_element (vec, j);
      GType type = JSON_NODE_HOLDS_VALUE (v) ? json_node_get_value_type (v) : G_TYPE_INVALID;

      if (type != G_TYPE_DOUBLE && type != G_TYPE_INT64)
        return FALSE;
      row[j] = (float) json_node_get_double (v);
      if (!isfinite (row[j]))
        return FALSE;
      nonzero |= row[j] != 0.0f;
    }
  return nonzero;
}

/* Copies one {"index": i, "embedding": [...]} item into row i of out (allocated on the first item). */
static gboolean
read_embedding (JsonNode *item, guint position, guint n, float **out, guint *dim, guint8 *seen)
{
  JsonObject *obj = JSON_NODE_HOLDS_OBJECT (item) ? json_node_get_object (item) : NULL;
  JsonArray *vec = obj ? catchup_json_array (obj, "embedding") : NULL;
  guint len = vec ? json_array_get_length (vec) : 0;
  gint64 index = position;

  if (obj == NULL || (json_object_has_member (obj, "index") && !catchup_json_int (obj, "index", &index)))
    return FALSE;
  if (len == 0 || index < 0 || index >= n || seen[index] || (*out != NULL && len != *dim))
    return FALSE;
  if (*out == NULL)
    {
      *dim = len;
      *out = g_new0 (float, (gsize) n * len);
    }
  seen[index] = 1;
  return read_components (vec, *out + (gsize) index * len, len);
}

static float *
embed_reply_vectors (CatchupLlm *llm, JsonObject *root, guint n, guint *dim, GError **error)
{
  JsonArray *data = catchup_json_array (root, "data");
  g_autofree guint8 *seen = g_new0 (guint8, n);
  g_autofree float *out = NULL;

  if (data == NULL || json_array_get_length (data) != n)
    {
      set_unusable (llm, error, _("not one embedding per text"));
      return NULL;
    }
  for (guint i = 0; i < n; i++)
    {
      if (!read_embedding (json_array_get_element (data, i), i, n, &out, dim, seen))
        {
          set_unusable (llm, error, _("a malformed embedding"));
          return NULL;
        }
    }
  return g_steal_pointer (&out);
}

float *
catchup_llm_embed (CatchupLlm *llm, const char *const *texts, guint n, guint *dim, GCancellable *cancellable,
                   GError **error)
{
  g_autofree char *payload = NULL;
  g_autoptr (JsonObject) reply = NULL;
  guint estimate = 0;
  float *out;

  g_return_val_if_fail (llm != NULL && texts != NULL && n > 0 && dim != NULL, NULL);

  if (!require_model (llm->config.embed_model, _("embedding"), error))
    return NULL;
  payload = embed_payload (&llm->config, texts, n);
  reply = post_json (llm, ENDPOINT_EMBED, llm->config.embed_model, payload, cancellable, NULL, error);
  if (reply == NULL)
    return NULL;
  out = embed_reply_vectors (llm, reply, n, dim, error);
  if (out == NULL)
    {
      count_failure (llm);
      return NULL;
    }
  for (guint i = 0; i < n; i++)
    estimate += catchup_text_count_tokens (texts[i]);
  count_tokens (llm, reply, estimate, 0, 0);
  return out;
}

/* A 200 answer's body through the same reading as a real one, for tests and fuzzing. */

char *
catchup_llm_parse_chat_reply (CatchupLlm *llm, const char *body, gsize len, GError **error)
{
  g_autoptr (JsonObject) reply = catchup_http_read_body (llm->http, body, len, error);
  g_auto (ChatAnswer) a = { NULL, NULL, FALSE };

  if (reply == NULL || !chat_reply_text (llm, reply, &a, error))
    return NULL;
  return g_steal_pointer (&a.answer);
}

float *
catchup_llm_parse_embed_reply (CatchupLlm *llm, const char *body, gsize len, guint n, guint *dim, GError **error)
{
  g_autoptr (JsonObject) reply = catchup_http_read_body (llm->http, body, len, error);

  return reply ? embed_reply_vectors (llm, reply, n, dim, error) : NULL;
}
