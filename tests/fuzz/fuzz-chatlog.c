#include "config.h"

#include <string.h>

#include "catchup.h"
#include "fuzz.h"

/* The chat-log parser of the plugin's backfill. The first byte picks the logger (HTML or text) and the log's
 * offset from UTC; every message it returns has a speaker and a text, and stripping markup never grows a
 * text beyond its links' addresses. */
static int
fuzz_one (const guint8 *data, gsize size)
{
  g_autofree char *text = NULL;
  g_autoptr (GTimeZone) zone = NULL;
  g_autoptr (GPtrArray) msgs = NULL;
  gboolean html;

  if (size == 0)
    return 0;
  html = (data[0] & 1) != 0;
  zone = g_time_zone_new_offset (((gint) (data[0] >> 1) - 64) * 900 % (14 * 3600));
  text = catchup_fuzz_string (data + 1, size - 1);
  msgs = catchup_chatlog_parse (text, html, 1767513600, zone);
  for (guint i = 0; i < msgs->len; i++)
    {
      CatchupMessage *m = msgs->pdata[i];

      g_assert_cmpstr (m->speaker, !=, "");
      g_assert_cmpstr (m->text, !=, "");
    }
  {
    g_autofree char *plain = catchup_chatlog_strip_markup (text);

    g_assert_cmpuint (strlen (plain), <=, 3 * strlen (text) + 16);
  }
  return 0;
}

CATCHUP_FUZZ_TARGET ("chatlog")
