#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-error.h"
#include "catchup-llm-config.h"

void
catchup_llm_config_init (CatchupLlmConfig *config)
{
  memset (config, 0, sizeof *config);
  config->timeout_ms = 60000;
  config->connect_timeout_ms = 10000;
  config->max_retries = 2;
  config->retry_base_ms = 500;
  /* Someone is waiting for the catch-up: a server asking for minutes gets seconds, then an error. */
  config->retry_max_ms = 10000;
  config->tls_verify = TRUE;
  config->context_tokens = 8192;
  config->max_reply_tokens = 2048;
  config->embed_batch = 32;
  config->json_mode = TRUE;
  config->thinking = TRUE;
}

void
catchup_llm_secret_free (char *secret)
{
  if (secret != NULL)
    memset (secret, 0, strlen (secret));
  g_free (secret);
}

void
catchup_llm_config_clear (CatchupLlmConfig *config)
{
  g_clear_pointer (&config->base_url, g_free);
  g_clear_pointer (&config->chat_model, g_free);
  g_clear_pointer (&config->embed_model, g_free);
  g_clear_pointer (&config->api_key, catchup_llm_secret_free);
  g_clear_pointer (&config->query_instruction, g_free);
}

void
catchup_llm_config_copy (const CatchupLlmConfig *src, CatchupLlmConfig *dst)
{
  *dst = *src;
  dst->base_url = g_strdup (src->base_url);
  dst->chat_model = g_strdup (src->chat_model);
  dst->embed_model = g_strdup (src->embed_model);
  dst->api_key = g_strdup (src->api_key);
  dst->query_instruction = g_strdup (src->query_instruction);
}

CatchupLlmConfig *
catchup_llm_config_dup (const CatchupLlmConfig *config)
{
  CatchupLlmConfig *copy;

  if (config == NULL)
    return NULL;
  copy = g_new (CatchupLlmConfig, 1);
  catchup_llm_config_copy (config, copy);
  return copy;
}

void
catchup_llm_config_free (CatchupLlmConfig *config)
{
  if (config == NULL)
    return;
  catchup_llm_config_clear (config);
  g_free (config);
}

char *
catchup_llm_config_default_path (void)
{
  return g_build_filename (g_get_user_config_dir (), "purple-catchup", "model.conf", NULL);
}

#define CONFIG_GROUP "model"

/* An absent key or group keeps the default; anything else is the file's error. */
static gboolean
key_ok (const GError *local, GError **error)
{
  if (local == NULL || g_error_matches (local, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND)
      || g_error_matches (local, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_GROUP_NOT_FOUND))
    return TRUE;
  g_propagate_error (error, g_error_copy (local));
  return FALSE;
}

static gboolean
load_string (GKeyFile *file, const char *key, char **field, GError **error)
{
  g_autoptr (GError) local = NULL;
  char *value = g_key_file_get_string (file, CONFIG_GROUP, key, &local);

  if (value != NULL)
    {
      g_free (*field);
      *field = value;
    }
  return key_ok (local, error);
}

static gboolean
load_uint (GKeyFile *file, const char *key, guint *field, GError **error)
{
  g_autoptr (GError) local = NULL;
  guint64 value = g_key_file_get_uint64 (file, CONFIG_GROUP, key, &local);

  if (local == NULL)
    *field = (guint) MIN (value, (guint64) G_MAXUINT);
  return key_ok (local, error);
}

static gboolean
load_bool (GKeyFile *file, const char *key, gboolean *field, GError **error)
{
  g_autoptr (GError) local = NULL;
  gboolean value = g_key_file_get_boolean (file, CONFIG_GROUP, key, &local);

  if (local == NULL)
    *field = value;
  return key_ok (local, error);
}

static gboolean
load_fields (GKeyFile *file, CatchupLlmConfig *c, GError **error)
{
  return load_string (file, "base_url", &c->base_url, error)
         && load_string (file, "chat_model", &c->chat_model, error)
         && load_string (file, "embed_model", &c->embed_model, error)
         && load_string (file, "api_key", &c->api_key, error)
         && load_string (file, "query_instruction", &c->query_instruction, error)
         && load_uint (file, "timeout_ms", &c->timeout_ms, error)
         && load_uint (file, "connect_timeout_ms", &c->connect_timeout_ms, error)
         && load_uint (file, "max_retries", &c->max_retries, error)
         && load_uint (file, "retry_base_ms", &c->retry_base_ms, error)
         && load_uint (file, "retry_max_ms", &c->retry_max_ms, error)
         && load_uint (file, "context_tokens", &c->context_tokens, error)
         && load_uint (file, "max_reply_tokens", &c->max_reply_tokens, error)
         && load_uint (file, "embed_batch", &c->embed_batch, error)
         && load_bool (file, "tls_verify", &c->tls_verify, error)
         && load_bool (file, "json_mode", &c->json_mode, error)
         && load_bool (file, "thinking", &c->thinking, error);
}

gboolean
catchup_llm_config_load (CatchupLlmConfig *config, const char *path, GError **error)
{
  g_autoptr (GKeyFile) file = g_key_file_new ();
  g_autoptr (GError) local = NULL;

  if (!g_key_file_load_from_file (file, path, G_KEY_FILE_NONE, &local))
    {
      gboolean missing = g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT);

      g_set_error (error, CATCHUP_ERROR, missing ? CATCHUP_ERROR_NOT_FOUND : CATCHUP_ERROR_INVALID,
                   _("Could not open %s: %s"), path, local->message);
      return FALSE;
    }
  if (!load_fields (file, config, &local))
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("Could not open %s: %s"),
                   path, local->message);
      return FALSE;
    }
  return TRUE;
}


static void
strip_trailing_slashes (char *path)
{
  gsize len = strlen (path);

  while (len > 0 && path[len - 1] == '/')
    path[--len] = '\0';
}

/* Users paste the endpoint itself (".../v1/chat/completions") as often as the base. */
static void
strip_endpoint_suffix (char *path)
{
  static const char *const suffixes[] = { "/chat/completions", "/completions", "/embeddings", "/models" };

  strip_trailing_slashes (path);
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      if (g_str_has_suffix (path, suffixes[i]))
        {
          path[strlen (path) - strlen (suffixes[i])] = '\0';
          break;
        }
    }
  strip_trailing_slashes (path);
}

static GUri *
parse_base_uri (const char *url, GError **error)
{
  g_autofree char *trimmed = g_strstrip (g_strdup (url ? url : ""));
  g_autofree char *full = NULL;
  GUri *uri;

  if (*trimmed == '\0')
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("No model server URL is set"));
      return NULL;
    }
  /* "localhost:11434" has no scheme; GUri would read "localhost" as one. */
  full = strstr (trimmed, "://") ? g_strdup (trimmed) : g_strconcat ("http://", trimmed, NULL);
  uri = g_uri_parse (full, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL || g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0')
    {
      g_clear_pointer (&uri, g_uri_unref);
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("“%s” is not a valid model server URL"),
                   trimmed);
      return NULL;
    }
  if (g_ascii_strcasecmp (g_uri_get_scheme (uri), "http") != 0
      && g_ascii_strcasecmp (g_uri_get_scheme (uri), "https") != 0)
    {
      g_uri_unref (uri);
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID,
                   _("The model server URL “%s” must start with http:// or https://"), trimmed);
      return NULL;
    }
  return uri;
}

static char *
join_base (GUri *uri, gboolean with_userinfo)
{
  g_autofree char *scheme = g_ascii_strdown (g_uri_get_scheme (uri), -1);
  g_autofree char *path = g_strdup (g_uri_get_path (uri));

  strip_endpoint_suffix (path);
  /* A bare host is what Ollama users type; every OpenAI-compatible server answers under /v1. */
  if (*path == '\0')
    {
      g_free (path);
      path = g_strdup ("/v1");
    }
  return g_uri_join (G_URI_FLAGS_NONE, scheme, with_userinfo ? g_uri_get_userinfo (uri) : NULL,
                     g_uri_get_host (uri), g_uri_get_port (uri), path, NULL, NULL);
}

char *
catchup_llm_normalize_base_url_full (const char *url, char **display, GError **error)
{
  g_autoptr (GUri) uri = parse_base_uri (url, error);

  if (uri == NULL)
    return NULL;
  if (display != NULL)
    *display = join_base (uri, FALSE);
  return join_base (uri, TRUE);
}

char *
catchup_llm_normalize_base_url (const char *url, GError **error)
{
  return catchup_llm_normalize_base_url_full (url, NULL, error);
}
