/* The chat log parser on lines in the forms libpurple 2.14's loggers write (log.c); the end-to-end tests write
 * theirs through libpurple itself. */

#include "config.h"

#include <string.h>

#include "catchup.h"

typedef struct {
  CatchupChatlogKind kind;
  const char *time;
  const char *nick;
  const char *text;
  guint flags;
} Expected;

static void
assert_lines (GPtrArray *lines, const Expected *expected, guint n)
{
  g_assert_cmpuint (lines->len, ==, n);
  for (guint i = 0; i < n; i++)
    {
      CatchupChatlogLine *line = lines->pdata[i];
      gint64 ts = 0;

      g_assert_true (catchup_time_parse_iso (expected[i].time, &ts));
      g_assert_cmpint (line->kind, ==, expected[i].kind);
      g_assert_cmpint (line->ts, ==, ts);
      g_assert_cmpstr (line->nick, ==, expected[i].nick);
      g_assert_cmpstr (line->text, ==, expected[i].text);
      g_assert_cmpuint (line->flags, ==, expected[i].flags);
    }
}

static CatchupChatlogContext
context (const char *start)
{
  CatchupChatlogContext ctx = { .room = "#logroom", .own_nick = "alice" };

  g_assert_true (catchup_time_parse_iso (start, &ctx.start));
  return ctx;
}

static void
test_html (void)
{
  static const Expected expected[] = {
    { CATCHUP_CHATLOG_MESSAGE, "2026-11-30T07:31:46Z", "Caroline", "see <https://x.org/?a=1&b=2>", 0 },
    { CATCHUP_CHATLOG_JOIN, "2026-11-30T07:32:00Z", "bob", NULL, 0 },
    { CATCHUP_CHATLOG_SYSTEM, "2026-11-30T07:32:05Z", NULL, "The topic for #logroom is: builds", 0 },
    { CATCHUP_CHATLOG_MESSAGE, "2026-11-30T07:33:00Z", "alice", "on it", CATCHUP_MESSAGE_OWN },
    { CATCHUP_CHATLOG_MESSAGE, "2026-11-30T07:34:00Z", "alice", "waves", CATCHUP_MESSAGE_OWN | CATCHUP_MESSAGE_ACTION },
    { CATCHUP_CHATLOG_NICK, "2026-11-30T07:35:00Z", "bob", "bobby", 0 },
    { CATCHUP_CHATLOG_PART, "2026-11-30T07:36:00Z", "bobby", "Quit: bye", 0 },
    { CATCHUP_CHATLOG_SYSTEM, "2026-11-30T07:37:00Z", NULL, "Unable to send message", 0 },
    /* Played back, dated; then past midnight. */
    { CATCHUP_CHATLOG_MESSAGE, "2026-11-29T22:00:00Z", "Caroline", "from last night", 0 },
    { CATCHUP_CHATLOG_MESSAGE, "2026-12-01T00:05:00Z", "Caroline", "still here", 0 },
  };
  CatchupChatlogContext ctx = context ("2026-11-30T07:30:00Z");
  g_autoptr (GPtrArray) lines = catchup_chatlog_parse (
    "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><html><head><title>Conversation with #logroom</title>"
    "</head><body><h1>Conversation with #logroom</h1><p>\n"
    "<span style=\"color: #A82F2F\"><span style=\"font-size: smaller\">(07:31:46)</span> <b>Caroline:</b></span> "
    "see &lt;https://x.org/?a=1&amp;b=2&gt;<br>\n"
    "<span style=\"font-size: smaller\">(07:32:00)</span><b> bob [<I>~bob@127.0.0.1</I>] entered the room.</b><br>\n"
    "<span style=\"font-size: smaller\">(07:32:05)</span><b> The topic for #logroom is: builds</b><br>\n"
    "<span style=\"color: #16569E\"><span style=\"font-size: smaller\">(07:33:00)</span> <b>alice:</b></span> on it<br>\n"
    "<span style=\"color: #062585\"><span style=\"font-size: smaller\">(07:34:00)</span> <b>***alice</b></span> waves<br>\n"
    "<span style=\"font-size: smaller\">(07:35:00)</span><b> bob is now known as bobby</b><br>\n"
    "<span style=\"font-size: smaller\">(07:36:00)</span><b> bobby left the room (Quit: bye).</b><br>\n"
    "<span style=\"color: #FF0000\"><span style=\"font-size: smaller\">(07:37:00)</span><b> Unable to send message</b>"
    "</span><br>\n"
    "<span style=\"color: #A82F2F\"><span style=\"font-size: smaller\">(11/29/26 22:00:00)</span> <b>Caroline:</b>"
    "</span> from last night<br>\n"
    "<span style=\"color: #A82F2F\"><span style=\"font-size: smaller\">(00:05:00)</span> <b>Caroline:</b></span> "
    "still here<br>\n"
    "</p>\n</body>\n</html>\n",
    CATCHUP_CHATLOG_HTML, &ctx);

  assert_lines (lines, expected, G_N_ELEMENTS (expected));
}

static void
test_text (void)
{
  static const Expected expected[] = {
    { CATCHUP_CHATLOG_SYSTEM, "2026-11-30T07:30:01Z", NULL, "The topic for #logroom is: builds", 0 },
    { CATCHUP_CHATLOG_MESSAGE, "2026-11-30T07:31:00Z", "carol", "two lines\nin one", 0 },
    { CATCHUP_CHATLOG_SYSTEM, "2026-11-30T07:31:30Z", NULL, "carol has changed the topic to: x", 0 },
    { CATCHUP_CHATLOG_MESSAGE, "2026-11-30T19:32:00Z", "alice", "mine & <b>plain</b>", CATCHUP_MESSAGE_OWN },
    { CATCHUP_CHATLOG_MESSAGE, "2026-11-30T19:33:00Z", "carol", "nods", CATCHUP_MESSAGE_ACTION },
    { CATCHUP_CHATLOG_PART, "2026-11-30T19:34:00Z", "carol", NULL, 0 },
    { CATCHUP_CHATLOG_NICK, "2026-11-30T19:35:00Z", "alice", "alice_", 0 },
    { CATCHUP_CHATLOG_MESSAGE, "2026-11-30T19:36:00Z", "alice_", "renamed", CATCHUP_MESSAGE_OWN },
    /* Day first: the reading nearer the log's start wins. */
    { CATCHUP_CHATLOG_MESSAGE, "2026-11-29T23:00:00Z", "carol", "dated", 0 },
  };
  CatchupChatlogContext ctx = context ("2026-11-30T07:30:00Z");
  g_autoptr (GPtrArray) lines = catchup_chatlog_parse (
    "Conversation with #logroom at Mon 30 Nov 2026 07:30:00 AM UTC on alice@127.0.0.1 (irc)\n"
    "(07:30:01) #logroom: The topic for #logroom is: builds\n"
    "(07:31:00) carol: two lines\n"
    "in one\n"
    "(07:31:30) carol!~carol@127.0.0.1: carol has changed the topic to: x\n"
    "(07:32:00 PM) alice: mine & <b>plain</b>\n"
    "(07:33:00 PM) ***carol nods\n"
    "(07:34:00 PM) carol left the room.\n"
    "(07:35:00 PM) You are now known as alice_\n"
    "(07:36:00 PM) alice_: renamed\n"
    "(29.11.2026 23:00:00) carol: dated\n",
    CATCHUP_CHATLOG_TEXT, &ctx);

  assert_lines (lines, expected, G_N_ELEMENTS (expected));
}

static const char *
german (const char *format, gpointer data)
{
  /* As libpurple's de.po has them. */
  if (strcmp (format, "%s entered the room.") == 0)
    return "%s hat den Raum betreten.";
  if (strcmp (format, "%s is now known as %s") == 0)
    return "%s ist jetzt bekannt als %s";
  if (strcmp (format, "%s left the room (%s).") == 0)
    return "(%2$s) %1$s hat den Raum verlassen.";
  return format;
}

/* Notices in the user's language, through libpurple's translation; positional arguments too. */
static void
test_translated (void)
{
  static const Expected expected[] = {
    { CATCHUP_CHATLOG_JOIN, "2026-11-30T07:31:00Z", "bob", NULL, 0 },
    { CATCHUP_CHATLOG_NICK, "2026-11-30T07:32:00Z", "bob", "bobby", 0 },
    { CATCHUP_CHATLOG_PART, "2026-11-30T07:33:00Z", "bobby", "Quit: tschüss", 0 },
    /* English still reads. */
    { CATCHUP_CHATLOG_JOIN, "2026-11-30T07:34:00Z", "carol", NULL, 0 },
  };
  CatchupChatlogContext ctx = context ("2026-11-30T07:30:00Z");
  g_autoptr (GPtrArray) lines = NULL;

  ctx.translate = german;
  lines = catchup_chatlog_parse ("Conversation with #logroom\n"
                                 "(07:31:00) bob hat den Raum betreten.\n"
                                 "(07:32:00) bob ist jetzt bekannt als bobby\n"
                                 "(07:33:00) (Quit: tschüss) bobby hat den Raum verlassen.\n"
                                 "(07:34:00) carol entered the room.\n",
                                 CATCHUP_CHATLOG_TEXT, &ctx);
  assert_lines (lines, expected, G_N_ELEMENTS (expected));
}

static void
test_strip (void)
{
  g_autofree char *same = catchup_chatlog_strip_markup ("<a href=\"http://x.org\">x.org</a> &amp; &#233;<br>b");
  g_autofree char *other = catchup_chatlog_strip_markup ("<A HREF=\"https://x.org/doc\">the docs</A>");

  g_assert_cmpstr (same, ==, "x.org & \303\251\nb");
  g_assert_cmpstr (other, ==, "the docs (https://x.org/doc)");
}

/* Whatever comes in, something sane comes out: no line without a kind, no markup in a message. */
static void
test_garbage (void)
{
  static const char *const inputs[] = {
    "", "\n", "\n(", "\n()", "\n(99:99:99) x: y", "\n(12:00:00)", "\n<span", "\n<span style=\"color: #",
    "\n(1/2/3 4:05:06 PM) ***", "\n(12:00:00) : :", "\n\377\376(12:00:00) a: b", "\n(31/31/31 12:00:00) a: b",
  };

  for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
    for (int format = CATCHUP_CHATLOG_HTML; format <= CATCHUP_CHATLOG_TEXT; format++)
      {
        g_autoptr (GPtrArray) lines = catchup_chatlog_parse (inputs[i], format, NULL);

        for (guint j = 0; j < lines->len; j++)
          {
            CatchupChatlogLine *line = lines->pdata[j];

            g_assert_cmpint (line->kind, <=, CATCHUP_CHATLOG_SYSTEM);
            g_assert_true (g_utf8_validate (line->text ? line->text : "", -1, NULL));
          }
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/chatlog/html", test_html);
  g_test_add_func ("/catchup/chatlog/text", test_text);
  g_test_add_func ("/catchup/chatlog/translated", test_translated);
  g_test_add_func ("/catchup/chatlog/strip", test_strip);
  g_test_add_func ("/catchup/chatlog/garbage", test_garbage);
  return g_test_run ();
}
