#include "config.h"

#include <string.h>

#include "catchup.h"
#include "fuzz.h"

/* The framing of chat text for a model. Input: a byte of options, then turns separated by 0x1e, each
 * "id 0x1f speaker 0x1f text". Whatever a turn holds, the data block has exactly one line per turn between
 * its two markers, each line reads back as "[id time] speaker: text" with the id and speaker fields ending
 * where the frame says, no raw control character or line separator survives, and no turn can end the block.
 * The template filler and the splitter into segments run on the same turns. */

#define NONCE "0123abcd0123abcd"
#define BEGIN_LINE "<<<BEGIN WINDOW DATA " NONCE ">>>"
#define END_LINE "<<<END WINDOW DATA " NONCE ">>>"

static GPtrArray *
turns_of (const guint8 *data, gsize size, gboolean wild_times)
{
  g_autoptr (GPtrArray) records = catchup_fuzz_split (data, size, '\x1e', 64);
  GPtrArray *turns = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  for (guint i = 0; i < records->len; i++)
    {
      const char *record = records->pdata[i];
      g_autoptr (GPtrArray) fields = catchup_fuzz_split ((const guint8 *) record, strlen (record), '\x1f', 3);
      gint64 ts = wild_times ? (gint64) g_str_hash (record) * G_GINT64_CONSTANT (1000003) : 1772434800 + 61 * i;

      g_ptr_array_add (turns, catchup_message_new (fields->pdata[0], ts, fields->len > 1 ? fields->pdata[1] : "",
                                                   fields->len > 2 ? fields->pdata[2] : ""));
    }
  return turns;
}

/* Skips a frame field up to the first unescaped stop character; NULL when the line ends first. */
static const char *
skip_field (const char *p, char stop)
{
  for (; *p && *p != stop; p++)
    if (*p == '\\' && p[1] != '\0')
      p++;
  return *p ? p : NULL;
}

static void
check_turn_line (const char *line)
{
  const char *p;

  g_assert_cmpint (line[0], ==, '[');
  p = skip_field (line + 1, ' ');
  g_assert_nonnull (p);
  p = strchr (p, ']');
  g_assert_nonnull (p);
  g_assert_cmpint (p[1], ==, ' ');
  p = skip_field (p + 2, ':');
  g_assert_nonnull (p);
  g_assert_cmpint (p[1], ==, ' ');
  for (const char *c = line; *c; c = g_utf8_next_char (c))
    {
      gunichar u = g_utf8_get_char (c);

      g_assert_false (g_unichar_iscntrl (u));
      g_assert_cmpuint (u, !=, 0x2028);
      g_assert_cmpuint (u, !=, 0x2029);
    }
  g_assert_true (g_utf8_validate (line, -1, NULL));
}

static void
check_block (GPtrArray *turns, guint max_turn_tokens)
{
  g_autofree char *block = catchup_llm_prompt_data_block ("WINDOW", turns, NONCE, max_turn_tokens);
  g_auto (GStrv) lines = g_strsplit (block, "\n", -1);
  guint n = g_strv_length (lines);

  g_assert_cmpuint (n, ==, turns->len + 2);
  g_assert_cmpstr (lines[0], ==, BEGIN_LINE);
  g_assert_cmpstr (lines[n - 1], ==, END_LINE);
  for (guint i = 1; i + 1 < n; i++)
    check_turn_line (lines[i]);
}

static void
check_fill (GPtrArray *turns)
{
  const char *tmpl = turns->len > 0 ? ((CatchupMessage *) turns->pdata[0])->text : "";
  g_autofree char *block = catchup_llm_prompt_data_block ("WINDOW", turns, NONCE, 0);
  g_autofree char *filled = catchup_llm_prompt_fill (tmpl, "window", block, "language", "{{window}}", NULL);

  g_assert_nonnull (filled);
  if (strstr (tmpl, "{{window}}") != NULL)
    g_assert_nonnull (strstr (filled, block));
}

static void
check_segments (GPtrArray *turns, guint budget)
{
  g_autoptr (GPtrArray) segments = catchup_llm_prompt_segments (turns, budget);
  guint total = 0;

  for (guint i = 0; i < segments->len; i++)
    {
      GPtrArray *segment = segments->pdata[i];

      g_assert_cmpuint (segment->len, >, 0);
      if (segment->len > 1)
        g_assert_cmpuint (catchup_llm_prompt_messages_cost (segment), <=, budget);
      for (guint j = 0; j < segment->len; j++)
        g_assert_true (segment->pdata[j] == turns->pdata[total + j]);
      total += segment->len;
    }
  g_assert_cmpuint (total, ==, turns->len);
}

static int
fuzz_one (const guint8 *data, gsize size)
{
  g_autoptr (GPtrArray) turns = NULL;

  if (size == 0)
    return 0;
  turns = turns_of (data + 1, size - 1, (data[0] & 0x80) != 0);
  check_block (turns, data[0] & 0x3f);
  check_fill (turns);
  check_segments (turns, 1 + (data[0] & 0x7f) * 8);
  return 0;
}

CATCHUP_FUZZ_TARGET ("prompt")
