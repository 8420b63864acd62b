#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * JSON from untrusted sources (import files, model replies) through json-glib, made safe first: json-glib
 * recurses once per nesting level, so a line of brackets overflows the stack. A linear scan refuses nesting
 * deeper than CATCHUP_JSON_MAX_DEPTH before json-glib sees the text.
 */

/* Real records and replies nest 3 to 6 levels deep. */
#define CATCHUP_JSON_MAX_DEPTH 64

/* The root of text (len -1: NUL-terminated), or NULL with CATCHUP_ERROR_INVALID. A \u0000 escape is dropped,
 * not decoded: a decoded NUL would cut the string, losing what follows it. parser is reused when given (one
 * per file costs less than one per line), else a new one is made. */
JsonNode *catchup_json_parse (JsonParser *parser, const char *text, gssize len, GError **error);
/* Length of the object or array opening at text[0] up to its closing bracket, strings skipped; 0 when it does
 * not close within len or text[0] opens neither. */
gsize catchup_json_value_length (const char *text, gsize len);
/* The text of the top-level member name of the object text, exactly as written there (a number beyond int64
 * stays as it is); the last one when the name repeats, as json-glib keeps it. NULL when absent, or when text is
 * not a plain object. */
char *catchup_json_raw_member (const char *text, gsize len, const char *name);

/* obj's member name when it is an array / an object, else NULL (json-glib 1.6 has no _with_default for these). */
JsonArray *catchup_json_array (JsonObject *obj, const char *name);
JsonObject *catchup_json_object (JsonObject *obj, const char *name);
/* obj's member name when it is a string / an integer; never a critical warning for another type. */
const char *catchup_json_string (JsonObject *obj, const char *name);
gboolean catchup_json_int (JsonObject *obj, const char *name, gint64 *out);

G_END_DECLS
