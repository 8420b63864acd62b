#include "config.h"

#include <string.h>

#include "catchup.h"

/* 2026-01-04T08:00:00Z, the start of the logs below. */
#define LOG_START 1767513600

static GPtrArray *
parse (const char *text, gboolean html)
{
  g_autoptr (GTimeZone) utc = g_time_zone_new_utc ();

  return catchup_chatlog_parse (text, html, LOG_START, utc);
}

static void
assert_message (GPtrArray *msgs, guint i, gint64 ts, const char *speaker, const char *text, guint flags)
{
  CatchupMessage *m;

  g_assert_cmpuint (i, <, msgs->len);
  m = msgs->pdata[i];
  g_assert_cmpint (m->ts, ==, ts);
  g_assert_cmpstr (m->speaker, ==, speaker);
  g_assert_cmpstr (m->text, ==, text);
  g_assert_cmpuint (m->flags, ==, flags);
}

/* The text logger's lines as purple_log_read gives them back: escaped and linkified. */
static void
test_text_log (void)
{
  g_autoptr (GPtrArray) msgs = parse (
    "Conversation with #ops at Sun 04 Jan 2026 08:00:00 UTC on mira@irc.example\n"
    "(08:00:10) mira: notes are in <A HREF=\"https://wiki.example/a\">https://wiki.example/a</A>\n"
    "(08:01:00) jonas: thanks &amp; &lt;3\n"
    "and a second line\n"
    "(08:02:00) ***mira waves\n"
    "(08:03:00) The topic for #ops is: rollout\n"
    "(2026-01-05 09:00:00) ida: a day later\n", FALSE);

  g_assert_cmpuint (msgs->len, ==, 4);
  assert_message (msgs, 0, LOG_START + 10, "mira", "notes are in https://wiki.example/a", 0);
  assert_message (msgs, 1, LOG_START + 60, "jonas", "thanks & <3\nand a second line", 0);
  assert_message (msgs, 2, LOG_START + 120, "mira", "waves", CATCHUP_MESSAGE_ACTION);
  assert_message (msgs, 3, LOG_START + 86400 + 3600, "ida", "a day later", 0);
}

static void
test_html_log (void)
{
  g_autoptr (GPtrArray) msgs = parse (
    "<html><head><title>Conversation with #ops</title></head><body><h3>Conversation with #ops</h3>\n"
    "<font color=\"#A82F2F\"><font size=\"2\">(08:00:10)</font> <b>mira:</b></font> see <a href=\"https://x.example/\">"
    "the doc</a><br/>\n"
    "<font color=\"#16569E\"><font size=\"2\">(08:01:00)</font> <b>me:</b></font> ok&nbsp;&#233;&#x263A;<br/>\n"
    "<font size=\"2\">(08:02:00)</font><b> mira left the room.</b><br/>\n"
    "<font color=\"#062585\"><font size=\"2\">(08:03:00)</font> <b>***mira</b></font> waves<br/>\n", TRUE);

  g_assert_cmpuint (msgs->len, ==, 3);
  assert_message (msgs, 0, LOG_START + 10, "mira", "see the doc (https://x.example/)", 0);
  assert_message (msgs, 1, LOG_START + 60, "me", "ok \303\251\342\230\272", CATCHUP_MESSAGE_OWN);
  assert_message (msgs, 2, LOG_START + 180, "mira", "waves", CATCHUP_MESSAGE_ACTION);
}

/* Entities that would cut or corrupt the text stay as written. */
static void
test_strip_markup (void)
{
  static const struct { const char *html, *text; } cases[] = {
    { "a<br>b<BR/>c", "a\nb\nc" },
    { "x &#0; y", "x &#0; y" },
    { "&#xD800; &#1114112; &#99999999999999999999;", "&#xD800; &#1114112; &#99999999999999999999;" },
    { "a < b > c", "a < b > c" },
    { "tab\there", "tab here" },
    { "<script>alert(1)</script>after<style>p{}</style>", "after" },
    { "<a href='http://e.example'>e.example</a>", "e.example" },
    { "<a href=x>unterminated", "unterminated" },
    { "<", "<" },
    { "&", "&" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = catchup_chatlog_strip_markup (cases[i].html);

      g_assert_cmpstr (text, ==, cases[i].text);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/chatlog/text-log", test_text_log);
  g_test_add_func ("/catchup/chatlog/html-log", test_html_log);
  g_test_add_func ("/catchup/chatlog/strip-markup", test_strip_markup);
  return g_test_run ();
}
