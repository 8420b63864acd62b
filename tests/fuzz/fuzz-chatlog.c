#include "config.h"

#include <string.h>

#include "catchup.h"
#include "fuzz.h"

/* The chat-log parser of the plugin's backfill on arbitrary log text. The first byte picks the logger (HTML
 * or text), whether the context names the room, the user and an alias, and the log's offset from UTC. What
 * comes out is valid UTF-8 and well formed: messages and events have a nick, system lines none; messages
 * have a text. Stripping markup never grows a text beyond its links' addresses. */

static const char *
no_translation (const char *format, gpointer data)
{
  return format;
}

static void
check_line (const CatchupChatlogLine *line)
{
  if (line->kind == CATCHUP_CHATLOG_SYSTEM)
    g_assert_null (line->nick);
  else
    {
      g_assert_nonnull (line->nick);
      g_assert_true (g_utf8_validate (line->nick, -1, NULL));
    }
  if (line->kind == CATCHUP_CHATLOG_MESSAGE || line->kind == CATCHUP_CHATLOG_NICK)
    g_assert_nonnull (line->text);
  if (line->text != NULL)
    g_assert_true (g_utf8_validate (line->text, -1, NULL));
}

static int
fuzz_one (const guint8 *data, gsize size)
{
  static const char *const own_names[] = { "Alice A.", NULL };
  g_autofree char *text = NULL;
  g_autofree char *plain = NULL;
  g_autoptr (GHashTable) nicks = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GTimeZone) zone = NULL;
  g_autoptr (GPtrArray) lines = NULL;
  CatchupChatlogContext ctx = { .start = 1796023800 };
  guint8 opts;

  if (size == 0)
    return 0;
  opts = data[0];
  text = catchup_fuzz_string (data + 1, size - 1);
  if (opts & 2)
    {
      g_hash_table_insert (nicks, (gpointer) "Caroline C.", (gpointer) "carol");
      ctx.room = "#logroom";
      ctx.own_nick = "alice";
      ctx.own_names = own_names;
      ctx.nicks = nicks;
      ctx.translate = no_translation;
    }
  if (opts & 4)
    ctx.zone = zone = g_time_zone_new_offset (((gint) (opts >> 3) - 16) * 3600);
  else
    ctx.utc_offset = ((gint) (opts >> 3) - 16) * 1800;
  lines = catchup_chatlog_parse (text, (opts & 1) ? CATCHUP_CHATLOG_HTML : CATCHUP_CHATLOG_TEXT, &ctx);
  for (guint i = 0; i < lines->len; i++)
    check_line (lines->pdata[i]);
  plain = catchup_chatlog_strip_markup (text);
  g_assert_cmpuint (strlen (plain), <=, 3 * strlen (text) + 16);
  return 0;
}

CATCHUP_FUZZ_TARGET ("chatlog")
