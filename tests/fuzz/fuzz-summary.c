#include "config.h"

#include <string.h>

#include "catchup.h"
#include "fuzz.h"

/* The embedded gap detector and extractive summary on arbitrary text (invalid UTF-8 included: the store
 * can hold what a client or an old version stored). Input: a byte of options, then lines "speaker: text";
 * the first third of them is the memory, the rest the window. Gaps cite window messages only; summary lines
 * cite window messages, and their context items window or memory messages. */

#define MAX_GAPS 8

static GPtrArray *
messages_of (GPtrArray *lines, guint from, guint to, const char *prefix)
{
  GPtrArray *msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  for (guint i = from; i < to; i++)
    {
      const char *line = lines->pdata[i];
      const char *colon = strstr (line, ": ");
      g_autofree char *speaker = colon ? g_strndup (line, colon - line) : g_strdup ("anon");
      g_autofree char *id = g_strdup_printf ("%s%u", prefix, i);

      g_ptr_array_add (msgs, catchup_message_new (id, 1772434800 + 47 * (gint64) i, speaker, colon ? colon + 2 : line));
    }
  return msgs;
}

static int
fuzz_one (const guint8 *data, gsize size)
{
  g_autoptr (GPtrArray) lines = NULL;
  g_autoptr (GPtrArray) history = NULL;
  g_autoptr (GPtrArray) window = NULL;
  g_autoptr (GPtrArray) gaps = NULL;
  g_autoptr (CatchupMemory) mem = NULL;
  g_autoptr (CatchupSummary) summary = NULL;
  g_autofree char *text = NULL;
  CatchupSummaryOptions opts;
  guint split;

  if (size == 0)
    return 0;
  lines = catchup_fuzz_split (data + 1, size - 1, '\n', 400);
  split = lines->len / 3;
  history = messages_of (lines, 0, split, "h");
  window = messages_of (lines, split, lines->len, "w");
  gaps = catchup_gaps_detect (window, MAX_GAPS);
  g_assert_cmpuint (gaps->len, <=, MAX_GAPS);
  for (guint i = 0; i < gaps->len; i++)
    {
      CatchupGap *gap = gaps->pdata[i];

      g_assert_cmpuint (gap->utterance_index, <, window->len);
      g_assert_cmpstr (gap->utterance_id, ==, ((CatchupMessage *) window->pdata[gap->utterance_index])->id);
      g_assert_nonnull (gap->query);
    }
  mem = catchup_fuzz_memory (history);
  catchup_summary_options_init (&opts);
  opts.length = data[0] / 2 % 3;
  opts.me = (data[0] & 0x40) ? "mira" : NULL;
  summary = catchup_summary_extractive (window, (data[0] & 1) ? mem : NULL, &opts);
  for (guint i = 0; i < summary->lines->len; i++)
    {
      CatchupSummaryLine *line = summary->lines->pdata[i];

      g_assert_nonnull (line->text);
      for (guint j = 0; j < line->sources->len; j++)
        g_assert_cmpint (catchup_fuzz_find (window, line->sources->pdata[j]), >=, 0);
      for (guint j = 0; line->context != NULL && j < line->context->len; j++)
        {
          CatchupSummaryItem *item = line->context->pdata[j];

          g_assert_true (catchup_fuzz_find (window, item->id) >= 0 || catchup_fuzz_find (history, item->id) >= 0);
        }
    }
  text = catchup_summary_to_text (summary);
  g_assert_nonnull (text);
  return 0;
}

CATCHUP_FUZZ_TARGET ("summary")
