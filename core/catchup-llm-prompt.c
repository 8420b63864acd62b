#include "config.h"

#include <stdarg.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-error.h"
#include "catchup-json.h"
#include "catchup-llm-prompt.h"
#include "catchup-message.h"
#include "catchup-text.h"
#include "core/catchup-resources.h"

static char *
read_template (const char *path, gboolean *found, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *text = NULL;

  *found = FALSE;
  if (!g_file_get_contents (path, &text, NULL, &local))
    {
      if (g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return NULL;
      *found = TRUE;
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_IO, _("Could not read the prompt template %s: %s"), path,
                   local->message);
      return NULL;
    }
  *found = TRUE;
  return g_utf8_make_valid (text, -1);
}

/* The copy compiled into the library: always there, whatever is installed. */
static char *
builtin_template (const char *name)
{
  g_autofree char *path = g_strconcat ("/org/purple-catchup/prompts/", name, NULL);
  g_autoptr (GBytes) bytes = g_resource_lookup_data (catchup_get_resource (), path, G_RESOURCE_LOOKUP_FLAGS_NONE,
                                                     NULL);
  gsize len = 0;
  const char *data;

  if (bytes == NULL)
    return NULL;
  data = g_bytes_get_data (bytes, &len);
  return g_utf8_make_valid (data, (gssize) len);
}

char *
catchup_llm_prompt_load (const char *name, GError **error)
{
  const char *data_dir = g_getenv (CATCHUP_DATA_DIR_ENV);
  g_autofree char *user = g_build_filename (g_get_user_config_dir (), "purple-catchup", "prompts", name, NULL);
  g_autofree char *env = data_dir && *data_dir ? g_build_filename (data_dir, "prompts", name, NULL) : NULL;
  /* $CATCHUP_DATA_DIR beats the built-in copy so that tests can read templates of their own. */
  const char *candidates[] = { user, env };
  char *text;

  for (guint i = 0; i < G_N_ELEMENTS (candidates); i++)
    {
      gboolean found;

      if (candidates[i] == NULL)
        continue;
      text = read_template (candidates[i], &found, error);
      if (found)
        {
          if (text != NULL)
            g_debug ("prompt template %s", candidates[i]);
          return text;
        }
    }
  if ((text = builtin_template (name)) != NULL)
    return text;
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND,
               _("No prompt template “%s” was found in %s or built in"), name, user);
  return NULL;
}

char *
catchup_llm_prompt_fill (const char *template_text, ...)
{
  g_autoptr (GHashTable) values = g_hash_table_new (g_str_hash, g_str_equal);
  GString *out = g_string_sized_new (strlen (template_text) + 1024);
  const char *p = template_text;
  const char *key;
  va_list ap;

  va_start (ap, template_text);
  while ((key = va_arg (ap, const char *)) != NULL)
    g_hash_table_insert (values, (gpointer) key, va_arg (ap, char *));
  va_end (ap);

  while (*p)
    {
      const char *open = strstr (p, "{{");
      const char *close = open ? strstr (open + 2, "}}") : NULL;
      g_autofree char *name = NULL;
      const char *value;

      if (close == NULL)
        {
          g_string_append (out, p);
          break;
        }
      name = g_strndup (open + 2, close - open - 2);
      value = g_hash_table_lookup (values, g_strstrip (name));
      g_string_append_len (out, p, open - p);
      if (value == NULL)
        {
          /* Not a placeholder: one brace is text, and a placeholder may start right after it ("{{{x}}"). */
          g_string_append_c (out, '{');
          p = open + 1;
          continue;
        }
      g_string_append (out, value);
      p = close + 2;
    }
  return g_string_free (out, FALSE);
}

char *
catchup_llm_prompt_nonce (void)
{
  return g_strdup_printf ("%08x%08x", g_random_int (), g_random_int ());
}

/* text cut to about max_tokens, with a marker that says so: never silently shortened. */
static char *
cut_text (const char *text, guint max_tokens)
{
  guint tokens = catchup_text_count_tokens (text);
  gsize keep;
  const char *end;

  if (max_tokens == 0 || tokens <= max_tokens)
    return g_strdup (text);
  keep = (gsize) ((double) strlen (text) * max_tokens / tokens);
  end = keep > 0 ? g_utf8_find_prev_char (text, text + keep + 1) : text;
  if (end == NULL)
    end = text;
  return g_strdup_printf ("%.*s […%s]", (int) (end - text), text, _("message cut: too long for the model"));
}

/* Appends c so that it cannot end the line or pass for part of the frame: a line break inside a message
 * would let the rest of it pose as a turn, an end marker or an instruction of its own. stops: the ASCII
 * characters that end this field of the frame, escaped with a backslash. */
static void
append_escaped_char (GString *out, gunichar c, const char *stops)
{
  static const char *const named[] = { ['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t", ['\\'] = "\\\\" };

  if (c < G_N_ELEMENTS (named) && named[c] != NULL)
    g_string_append (out, named[c]);
  /* Cc, and the line and paragraph separators (Zl, Zp) that some tokenizers treat as line breaks */
  else if (g_unichar_iscntrl (c) || g_unichar_type (c) == G_UNICODE_LINE_SEPARATOR ||
           g_unichar_type (c) == G_UNICODE_PARAGRAPH_SEPARATOR)
    g_string_append_printf (out, "\\u%04X", c);
  else if (c < 0x80 && c != 0 && strchr (stops, (int) c) != NULL)
    g_string_append_printf (out, "\\%c", (char) c);
  else
    g_string_append_unichar (out, c);
}

static void
append_escaped (GString *out, const char *text, const char *stops)
{
  g_autofree char *valid = g_utf8_make_valid (text ? text : "", -1);

  for (const char *p = valid; *p; p = g_utf8_next_char (p))
    append_escaped_char (out, g_utf8_get_char (p), stops);
}

/* A turn's time as the prompt gives it, e.g. "Fri 08:50" (UTC): short, and the very form the summary check
 * looks for when a line cites a time. The weekday is English whatever the locale: it is part of the data
 * format, not a message to the user. */
static char *
turn_time (gint64 ts)
{
  static const char *const days[] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" };
  g_autoptr (GDateTime) dt = g_date_time_new_from_unix_utc (ts);

  if (dt == NULL)
    return g_strdup ("? ?");
  return g_strdup_printf ("%s %02d:%02d", days[g_date_time_get_day_of_week (dt) - 1], g_date_time_get_hour (dt),
                          g_date_time_get_minute (dt));
}

/* "[s0345 Fri 08:50] maren: text" ("[s0345] maren: text" without the time): the id ends at the first space,
 * so spaces and ']' in it are escaped; the speaker ends at the first ':', so colons in it are escaped; the text
 * runs to the end of the line. */
static void
append_turn_as (GString *out, const CatchupMessage *m, const char *text, gboolean timed)
{
  g_autofree char *time = timed ? turn_time (m->ts) : NULL;

  g_string_append_c (out, '[');
  append_escaped (out, m->id, " ]");
  if (time != NULL)
    g_string_append_printf (out, " %s", time);
  g_string_append (out, "] ");
  append_escaped (out, m->speaker, ":");
  g_string_append (out, ": ");
  append_escaped (out, text, "");
  g_string_append_c (out, '\n');
}

static void
append_turn (GString *out, const CatchupMessage *m, const char *text)
{
  append_turn_as (out, m, text, TRUE);
}

char *
catchup_llm_prompt_escape (const char *text)
{
  GString *out = g_string_new (NULL);

  append_escaped (out, text, "");
  return g_string_free (out, FALSE);
}

char *
catchup_llm_prompt_turn_line (gconstpointer message, guint max_turn_tokens, gboolean timed)
{
  const CatchupMessage *m = message;
  g_autofree char *text = cut_text (m->text ? m->text : "", max_turn_tokens);
  GString *out = g_string_new (NULL);

  append_turn_as (out, m, text, timed);
  g_string_truncate (out, out->len - 1);
  return g_string_free (out, FALSE);
}

char *
catchup_llm_prompt_day_line (gint64 ts)
{
  g_autoptr (GDateTime) dt = g_date_time_new_from_unix_utc (ts);
  g_autofree char *time = turn_time (ts);

  /* the weekday as in a timed turn line, English whatever the locale */
  if (dt == NULL)
    return g_strdup ("-- ? --");
  return g_strdup_printf ("-- %.3s %04d-%02d-%02d --", time, g_date_time_get_year (dt), g_date_time_get_month (dt),
                          g_date_time_get_day_of_month (dt));
}

char *
catchup_llm_prompt_data_block (const char *label, GPtrArray *messages, const char *nonce, guint max_turn_tokens)
{
  GString *out = g_string_new (NULL);

  g_string_append_printf (out, "<<<BEGIN %s DATA %s>>>\n", label, nonce);
  for (guint i = 0; messages != NULL && i < messages->len; i++)
    {
      const CatchupMessage *m = g_ptr_array_index (messages, i);
      g_autofree char *text = cut_text (m->text ? m->text : "", max_turn_tokens);

      append_turn (out, m, text);
    }
  g_string_append_printf (out, "<<<END %s DATA %s>>>", label, nonce);
  return g_string_free (out, FALSE);
}

guint
catchup_llm_prompt_turn_cost (gconstpointer message)
{
  const CatchupMessage *m = message;
  g_autoptr (GString) line = g_string_new (NULL);

  /* the line itself, counted as the client counts the prompt it sends: no estimate to drift from the frame */
  append_turn (line, m, m->text ? m->text : "");
  return catchup_text_count_tokens (line->str);
}

guint
catchup_llm_prompt_messages_cost (GPtrArray *messages)
{
  guint cost = 0;

  for (guint i = 0; messages != NULL && i < messages->len; i++)
    cost += catchup_llm_prompt_turn_cost (g_ptr_array_index (messages, i));
  return cost;
}

guint
catchup_llm_prompt_block_cost (const char *label)
{
  g_autofree char *nonce = catchup_llm_prompt_nonce ();
  g_autofree char *block = catchup_llm_prompt_data_block (label, NULL, nonce, 0);

  return catchup_text_count_tokens (block);
}

GPtrArray *
catchup_llm_prompt_segments (GPtrArray *messages, guint budget)
{
  GPtrArray *segments = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  GPtrArray *current = NULL;
  guint used = 0;

  for (guint i = 0; i < messages->len; i++)
    {
      gpointer m = g_ptr_array_index (messages, i);
      guint cost = catchup_llm_prompt_turn_cost (m);

      if (current == NULL || (current->len > 0 && used + cost > budget))
        {
          current = g_ptr_array_new ();
          g_ptr_array_add (segments, current);
          used = 0;
        }
      g_ptr_array_add (current, m);
      used += cost;
    }
  return segments;
}

char *
catchup_llm_split_reasoning (const char *reply, char **reasoning)
{
  static const char *const tags[] = { "think", "thinking" };
  const char *p = reply;

  if (reasoning != NULL)
    *reasoning = NULL;
  while (g_ascii_isspace (*p))
    p++;
  for (guint i = 0; i < G_N_ELEMENTS (tags); i++)
    {
      g_autofree char *open = g_strdup_printf ("<%s>", tags[i]);
      g_autofree char *close = g_strdup_printf ("</%s>", tags[i]);
      const char *start = g_str_has_prefix (p, open) ? p + strlen (open) : NULL;
      const char *end = strstr (start ? start : reply, close);

      if (start == NULL && end == NULL)
        continue;
      if (start == NULL)
        start = reply;
      if (reasoning != NULL)
        *reasoning = end ? g_strndup (start, end - start) : g_strdup (start);
      return g_strdup (end ? end + strlen (close) : "");
    }
  return g_strdup (reply);
}

/* End of the JSON value opening at start (its matching bracket), skipping brackets inside strings. */
static const char *
balanced_end (const char *start)
{
  int depth = 0;
  gboolean in_string = FALSE;

  for (const char *p = start; *p; p++)
    {
      if (in_string)
        {
          if (*p == '\\' && p[1] != '\0')
            p++;
          else if (*p == '"')
            in_string = FALSE;
          continue;
        }
      if (*p == '"')
        in_string = TRUE;
      else if (*p == '{' || *p == '[')
        depth++;
      else if ((*p == '}' || *p == ']') && --depth == 0)
        return p + 1;
    }
  return NULL;
}

/* What a reply's JSON must look like to be taken: an object, or an array that is empty or holds objects
 * (so a "[1]" footnote in prose is not mistaken for the answer). */
static gboolean
plausible (JsonNode *node)
{
  JsonArray *array;

  if (JSON_NODE_HOLDS_OBJECT (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return FALSE;
  array = json_node_get_array (node);
  return json_array_get_length (array) == 0 || JSON_NODE_HOLDS_OBJECT (json_array_get_element (array, 0));
}

static JsonNode *
try_parse (const char *text, gssize len)
{
  g_autoptr (JsonNode) root = catchup_json_parse (NULL, text, len, NULL);

  return root && plausible (root) ? g_steal_pointer (&root) : NULL;
}

/* text without the commas before a closing bracket that models write ("[1, 2,]") and JSON forbids; commas
 * inside strings stay. */
static char *
drop_trailing_commas (const char *text, gssize len)
{
  GString *out = g_string_sized_new (len < 0 ? strlen (text) : (gsize) len);
  const char *end = len < 0 ? text + strlen (text) : text + len;
  gboolean in_string = FALSE;

  for (const char *p = text; p < end; p++)
    {
      if (in_string)
        {
          if (*p == '\\' && p + 1 < end)
            g_string_append_c (out, *p++);
          else if (*p == '"')
            in_string = FALSE;
        }
      else if (*p == '"')
        in_string = TRUE;
      else if (*p == ',')
        {
          const char *q = p + 1;

          while (q < end && g_ascii_isspace (*q))
            q++;
          if (q < end && (*q == '}' || *q == ']'))
            continue;
        }
      g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

/* The value as written, else with trailing commas dropped. */
static JsonNode *
try_parse_lenient (const char *text, gssize len)
{
  JsonNode *node = try_parse (text, len);
  g_autofree char *repaired = NULL;

  if (node != NULL)
    return node;
  repaired = drop_trailing_commas (text, len);
  return try_parse (repaired, -1);
}

/* The body of the first ```json (or bare ```) fence: models that wrap their answer in prose usually fence it,
 * and what stands before the fence may hold brackets of its own. */
static JsonNode *
try_fenced (const char *text)
{
  const char *open = strstr (text, "```");
  const char *body, *close;

  if (open == NULL)
    return NULL;
  body = strchr (open + 3, '\n');
  close = body ? strstr (body, "```") : NULL;
  return close ? try_parse_lenient (body, close - body) : NULL;
}

JsonNode *
catchup_llm_reply_json (const char *reply, GError **error)
{
  g_autofree char *text = catchup_llm_split_reasoning (reply ? reply : "", NULL);
  JsonNode *node = try_parse_lenient (text, -1);
  guint tries = 0;

  if (node == NULL)
    node = try_fenced (text);

  /* Code fences and prose need no special case: the scan finds the value inside them. The number of
   * candidates is bounded so that a hostile reply full of brackets stays linear. */
  for (const char *p = text; node == NULL && *p && tries < 32; p++)
    {
      const char *end;

      if (*p != '{' && *p != '[')
        continue;
      tries++;
      end = balanced_end (p);
      if (end == NULL)
        continue;
      node = try_parse_lenient (p, end - p);
    }
  if (node == NULL)
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL, _("The model's answer holds no usable JSON"));
  return node;
}

char *
catchup_llm_json_text (JsonObject *obj, const char *name, guint max_chars)
{
  JsonNode *node = json_object_get_member (obj, name);
  g_autofree char *text = NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return NULL;
  /* model text is untrusted like chat text: no control characters, no line breaks inside a field */
  if (json_node_get_value_type (node) == G_TYPE_STRING)
    text = catchup_text_clean (json_node_get_string (node), -1, CATCHUP_TEXT_ONE_LINE);
  else if (json_node_get_value_type (node) == G_TYPE_INT64)
    text = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));
  else
    return NULL;
  g_strstrip (text);
  if (*text == '\0')
    return NULL;
  if (g_utf8_strlen (text, -1) > max_chars)
    *g_utf8_offset_to_pointer (text, max_chars) = '\0';
  return g_steal_pointer (&text);
}
