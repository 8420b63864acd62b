#include "config.h"

#include <string.h>

#include "catchup.h"
#include "fuzz.h"

/* Time parsing: an ISO 8601 time that parses formats back to a time that parses to the same second, and the
 * chat-log stamps "(HH:MM:SS)", "(date HH:MM:SS)" in every date order and offset give a message at most a day
 * away from the log's start when they carry no date. */

#define LOG_START G_GINT64_CONSTANT (1767513600)

static void
check_iso (const char *text)
{
  gint64 ts = 0, again = 0;
  g_autofree char *formatted = NULL;

  if (!catchup_time_parse_iso (text, &ts))
    return;
  formatted = catchup_time_format_iso (ts);
  if (formatted == NULL)
    return;
  g_assert_true (catchup_time_parse_iso (formatted, &again));
  g_assert_cmpint (again, ==, ts);
}

static void
check_stamp (const char *stamp, gint offset)
{
  CatchupChatlogContext ctx = { .start = LOG_START, .utc_offset = offset };
  g_autofree char *log = g_strdup_printf ("Conversation with #c at start\n(%s) mira: hello\n", stamp);
  g_autoptr (GPtrArray) lines = catchup_chatlog_parse (log, CATCHUP_CHATLOG_TEXT, &ctx);
  gboolean undated = strlen (stamp) <= 11 && strchr (stamp, '-') == NULL && strchr (stamp, '/') == NULL
                     && strchr (stamp, '.') == NULL;

  g_assert_cmpuint (lines->len, <=, 1);
  if (lines->len == 1 && undated)
    {
      CatchupChatlogLine *line = lines->pdata[0];

      g_assert_cmpint (line->ts, >=, LOG_START - 2 * 86400);
      g_assert_cmpint (line->ts, <=, LOG_START + 2 * 86400);
    }
}

static int
fuzz_one (const guint8 *data, gsize size)
{
  g_autofree char *text = NULL;

  if (size == 0)
    return 0;
  text = catchup_fuzz_string (data + 1, size - 1);
  check_iso (text);
  if (strchr (text, '\n') == NULL && strchr (text, '(') == NULL && strchr (text, ')') == NULL)
    check_stamp (text, ((gint) data[0] - 128) * 600);
  return 0;
}

CATCHUP_FUZZ_TARGET ("time")
