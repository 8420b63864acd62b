#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-error.h"
#include "catchup-json.h"

/* End of the string whose opening quote is at p (just past its closing quote), or end. */
static const char *
skip_string (const char *p, const char *end)
{
  for (p++; p < end; p++)
    {
      if (*p == '\\')
        p++;
      else if (*p == '"')
        return p + 1;
    }
  return end;
}

static gboolean
is_nul_escape (const char *p, const char *end)
{
  return end - p >= 6 && memcmp (p, "\\u0000", 6) == 0;
}

/* The deepest nesting of text, and whether a string holds a \u0000 escape. */
static guint
scan (const char *text, const char *end, gboolean *has_nul)
{
  guint depth = 0, deepest = 0;

  *has_nul = FALSE;
  for (const char *p = text; p < end;)
    {
      if (*p == '"')
        {
          const char *close = skip_string (p, end);

          for (const char *q = p; !*has_nul && q < close; q++)
            *has_nul = is_nul_escape (q, close);
          p = close;
          continue;
        }
      if ((*p == '{' || *p == '[') && ++depth > deepest)
        deepest = depth;
      else if ((*p == '}' || *p == ']') && depth > 0)
        depth--;
      p++;
    }
  return deepest;
}

/* text without its \u0000 escapes; an escaped backslash before "u0000" is text, not an escape. */
static char *
drop_nul_escapes (const char *text, const char *end)
{
  GString *out = g_string_sized_new (end - text);
  gboolean in_string = FALSE;

  for (const char *p = text; p < end; p++)
    {
      if (in_string && is_nul_escape (p, end))
        {
          p += 5;
          continue;
        }
      if (in_string && *p == '\\' && p + 1 < end)
        {
          g_string_append_len (out, p, 2);
          p++;
          continue;
        }
      if (*p == '"')
        in_string = !in_string;
      g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

JsonNode *
catchup_json_parse (JsonParser *reused, const char *text, gssize len, GError **error)
{
  g_autoptr (JsonParser) parser = NULL;
  g_autoptr (GError) json_error = NULL;
  g_autofree char *copy = NULL;
  const char *end;
  gboolean has_nul;

  if (text == NULL)
    text = "";
  end = text + (len < 0 ? strlen (text) : (gsize) len);
  if (scan (text, end, &has_nul) > CATCHUP_JSON_MAX_DEPTH)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("JSON nested deeper than %d levels"),
                   CATCHUP_JSON_MAX_DEPTH);
      return NULL;
    }
  if (has_nul)
    {
      copy = drop_nul_escapes (text, end);
      text = copy;
      end = copy + strlen (copy);
    }
  parser = reused != NULL ? g_object_ref (reused) : json_parser_new ();
  if (!json_parser_load_from_data (parser, text, end - text, &json_error))
    {
      g_set_error_literal (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, json_error->message);
      return NULL;
    }
  if (json_parser_get_root (parser) == NULL)
    {
      g_set_error_literal (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("no JSON value"));
      return NULL;
    }
  return json_parser_steal_root (parser);
}

gsize
catchup_json_value_length (const char *text, gsize len)
{
  const char *end = text + len;
  guint depth = 0;

  if (len == 0 || (*text != '{' && *text != '['))
    return 0;
  for (const char *p = text; p < end;)
    {
      if (*p == '"')
        {
          p = skip_string (p, end);
          continue;
        }
      if (*p == '{' || *p == '[')
        depth++;
      else if ((*p == '}' || *p == ']') && --depth == 0)
        return p + 1 - text;
      p++;
    }
  return 0;
}

static const char *
skip_space (const char *p, const char *end)
{
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

/* End of the member value at p: a string, a bracketed value, or a scalar up to the next delimiter. */
static const char *
value_end (const char *p, const char *end)
{
  gsize n;

  if (p < end && *p == '"')
    return skip_string (p, end);
  if ((n = catchup_json_value_length (p, end - p)) > 0)
    return p + n;
  while (p < end && !strchr (",}] \t\n\r", *p))
    p++;
  return p;
}

char *
catchup_json_raw_member (const char *text, gsize len, const char *name)
{
  const char *end = text + len, *p = skip_space (text, end);
  gsize name_len = strlen (name);
  char *found = NULL;

  if (p >= end || *p != '{')
    return NULL;
  for (p = skip_space (p + 1, end); p < end && *p == '"';)
    {
      const char *key = p + 1, *key_end = skip_string (p, end) - 1, *value;

      p = skip_space (key_end + 1, end);
      if (p >= end || *p != ':')
        break;
      value = skip_space (p + 1, end);
      p = value_end (value, end);
      if (p == value)
        break;
      if ((gsize) (key_end - key) == name_len && memcmp (key, name, name_len) == 0)
        {
          g_free (found);
          found = g_strndup (value, p - value);
        }
      p = skip_space (p, end);
      if (p >= end || *p != ',')
        break;
      p = skip_space (p + 1, end);
    }
  return found;
}

JsonArray *
catchup_json_array (JsonObject *obj, const char *name)
{
  JsonNode *node = obj ? json_object_get_member (obj, name) : NULL;

  return node && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

JsonObject *
catchup_json_object (JsonObject *obj, const char *name)
{
  JsonNode *node = obj ? json_object_get_member (obj, name) : NULL;

  return node && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

const char *
catchup_json_string (JsonObject *obj, const char *name)
{
  JsonNode *node = obj ? json_object_get_member (obj, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

gboolean
catchup_json_int (JsonObject *obj, const char *name, gint64 *out)
{
  JsonNode *node = obj ? json_object_get_member (obj, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  *out = json_node_get_int (node);
  return TRUE;
}
