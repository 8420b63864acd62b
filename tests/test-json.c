#include "config.h"

#include <string.h>

#include "catchup.h"

static char *
nested (guint depth)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < depth; i++)
    g_string_append (s, i % 2 ? "{\"k\": " : "[");
  g_string_append (s, "1");
  for (guint i = depth; i-- > 0;)
    g_string_append (s, i % 2 ? "}" : "]");
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* The limit itself parses, one level more is refused before json-glib sees it; brackets inside strings do not
 * count. */
static void
test_depth_limit (void)
{
  g_autofree char *at = nested (CATCHUP_JSON_MAX_DEPTH);
  g_autofree char *over = nested (CATCHUP_JSON_MAX_DEPTH + 1);
  g_autofree char *brackets = g_strnfill (5000, '[');
  g_autofree char *quoted = g_strdup_printf ("{\"text\": \"%s\\\"]]\"}", brackets);
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) ok = catchup_json_parse (NULL, at, -1, &error);
  g_autoptr (JsonNode) refused = NULL;
  g_autoptr (JsonNode) text = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (ok);
  refused = catchup_json_parse (NULL, over, -1, &error);
  g_assert_null (refused);
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID);
  g_clear_error (&error);
  text = catchup_json_parse (NULL, quoted, -1, &error);
  g_assert_no_error (error);
  g_assert_nonnull (text);
}

/* \u0000 is dropped and the rest kept; an escaped backslash before "u0000" is text. */
static void
test_nul_escape (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) node = catchup_json_parse (NULL, "[\"a\\u0000b\", \"c\\\\u0000d\", \"\\u00001\"]", -1, &error);
  JsonArray *array;

  g_assert_no_error (error);
  array = json_node_get_array (node);
  g_assert_cmpstr (json_array_get_string_element (array, 0), ==, "ab");
  g_assert_cmpstr (json_array_get_string_element (array, 1), ==, "c\\u0000d");
  g_assert_cmpstr (json_array_get_string_element (array, 2), ==, "1");
}

static void
test_value_length (void)
{
  const char *two = "{\"a\": \"}\"} {\"b\": 2}";

  g_assert_cmpuint (catchup_json_value_length (two, strlen (two)), ==, 10);
  g_assert_cmpuint (catchup_json_value_length ("[1, [2]] x", 10), ==, 8);
  g_assert_cmpuint (catchup_json_value_length ("{\"open\": 1", 10), ==, 0);
  g_assert_cmpuint (catchup_json_value_length ("12", 2), ==, 0);
  g_assert_cmpuint (catchup_json_value_length ("", 0), ==, 0);
}

static void
test_raw_member (void)
{
  const char *obj = "{ \"x\": {\"id\": 1}, \"id\" : 123456789012345678901234567890, \"s\": \"a,b\"}";
  const char *twice = "{\"id\": 1, \"id\": 2.50}";
  g_autofree char *id = catchup_json_raw_member (obj, strlen (obj), "id");
  g_autofree char *s = catchup_json_raw_member (obj, strlen (obj), "s");
  g_autofree char *last = catchup_json_raw_member (twice, strlen (twice), "id");
  g_autofree char *none = catchup_json_raw_member (obj, strlen (obj), "missing");
  g_autofree char *not_object = catchup_json_raw_member ("[1]", 3, "id");

  g_assert_cmpstr (id, ==, "123456789012345678901234567890");
  g_assert_cmpstr (s, ==, "\"a,b\"");
  g_assert_cmpstr (last, ==, "2.50");
  g_assert_null (none);
  g_assert_null (not_object);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/json/depth-limit", test_depth_limit);
  g_test_add_func ("/catchup/json/nul-escape", test_nul_escape);
  g_test_add_func ("/catchup/json/value-length", test_value_length);
  g_test_add_func ("/catchup/json/raw-member", test_raw_member);
  return g_test_run ();
}
