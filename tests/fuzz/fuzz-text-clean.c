#include "config.h"

#include <string.h>

#include "catchup.h"
#include "fuzz.h"

/* The cleaning of text where it enters (catchup_text_clean, both line modes) and where it is shown
 * (catchup_text_sanitize), on any bytes, NUL included. What comes out is valid UTF-8 with no control character
 * but the line breaks (and tabs) the mode keeps, no bidi control when shown, and for valid input every other
 * character of the input, in order: nothing after a NUL or a control character is lost. */

static gboolean
is_bidi_control (gunichar c)
{
  return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

static gboolean
is_line_break (gunichar c)
{
  return c == '\r' || c == '\n' || c == 0x0B || c == 0x0C || c == 0x85 || c == 0x2028 || c == 0x2029;
}

/* The characters cleaning must keep: text that is neither white space, a control nor a bidi control. */
static GString *
kept (const char *text, gsize len, gboolean bidi_too)
{
  GString *out = g_string_new (NULL);

  for (const char *p = text; p < text + len; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (c != 0 && !g_unichar_iscntrl (c) && !g_unichar_isspace (c) && !is_line_break (c)
          && !(bidi_too && is_bidi_control (c)))
        g_string_append_unichar (out, c);
    }
  return out;
}

static void
check (const char *in, gsize in_len, const char *out, CatchupTextLines lines, gboolean shown)
{
  g_autoptr (GString) want = NULL;
  g_autoptr (GString) got = NULL;

  g_assert_true (g_utf8_validate (out, -1, NULL));
  for (const char *p = out; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (c == '\n')
        g_assert_cmpint (lines, ==, CATCHUP_TEXT_MULTI_LINE);
      else if (c == '\t')
        g_assert_cmpint (lines, ==, CATCHUP_TEXT_MULTI_LINE);
      else
        {
          g_assert_false (g_unichar_iscntrl (c));
          g_assert_false (is_line_break (c));
        }
      if (shown)
        g_assert_false (is_bidi_control (c));
    }
  if (!g_utf8_validate_len (in, in_len, NULL))
    return;
  want = kept (in, in_len, shown);
  got = kept (out, strlen (out), shown);
  g_assert_cmpstr (got->str, ==, want->str);
}

static int
fuzz_one (const guint8 *data, gsize size)
{
  const char *text = (const char *) data;
  g_autofree char *one = catchup_text_clean (text, (gssize) size, CATCHUP_TEXT_ONE_LINE);
  g_autofree char *multi = catchup_text_clean (text, (gssize) size, CATCHUP_TEXT_MULTI_LINE);
  g_autofree char *c_string = catchup_fuzz_string (data, size);
  g_autofree char *shown = catchup_text_sanitize (c_string);

  check (text, size, one, CATCHUP_TEXT_ONE_LINE, FALSE);
  check (text, size, multi, CATCHUP_TEXT_MULTI_LINE, FALSE);
  check (c_string, strlen (c_string), shown, CATCHUP_TEXT_ONE_LINE, TRUE);
  return 0;
}

CATCHUP_FUZZ_TARGET ("text-clean")
