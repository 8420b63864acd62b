/* Chat logs written by libpurple's own loggers (purple_log_new + purple_log_write, "html" and "txt", with the
 * flags and names the conversation hands them), imported by the plugin and checked row by row: speakers,
 * times (dated playback lines, a midnight rollover), own lines under the account's alias, /me actions,
 * entities, links, and the notices that must never become messages (nick changes are kept as renames, joins
 * and parts not at all). The clock is set so that local midnight falls inside the logs, which the loggers only date when a
 * line was older than 20 minutes at writing time. */

#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include <glib/gstdio.h>

#include <log.h>
#include <prefs.h>

#include "catchup.h"
#include "e2e-client.h"
#include "../test-util.h"

#define USERNAME "alice@127.0.0.1"
#define ALIAS "Alice Liddell"
/* A buddy: the logger writes his alias, the live lines his nick. */
#define BUDDY "dave"
#define BUDDY_ALIAS "Dave Bowman"

static struct {
  char *dir;
  char *db_path;
  PurplePlugin *plugin;
  PurpleAccount *account;
  gint64 now;
} fx;

/* What the conversation writes, and what must come of it. kind SYSTEM: nothing is stored. */
typedef struct {
  int offset;                 /* seconds from now */
  PurpleMessageFlags flags;
  const char *from;           /* NULL: the room (the conversation's name for its own notices) */
  const char *markup;
  CatchupChatlogKind kind;
  const char *nick;           /* the stored speaker; for events the nick */
  const char *text;           /* the stored text; the new nick, the part's reason */
  guint mflags;
} Scripted;

static const Scripted script[] = {
  /* Played back from before the log began: the logger dates it. */
  { -3 * 3600, PURPLE_MESSAGE_RECV | PURPLE_MESSAGE_DELAYED, "carol", "from before the log",
    CATCHUP_CHATLOG_MESSAGE, "carol", "from before the log", 0 },
  /* IRC writes these through purple_conv_chat_write with an empty sender: "received" from the room. */
  { -600, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_RECV, NULL, "The topic for ROOM is: builds &amp; deploys",
    CATCHUP_CHATLOG_SYSTEM, NULL, NULL, 0 },
  { -590, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_NO_LINKIFY, NULL, "bob [<I>~bob@127.0.0.1</I>] entered the room.",
    CATCHUP_CHATLOG_JOIN, "bob", NULL, 0 },
  { -580, PURPLE_MESSAGE_RECV, "carol",
    "see &lt;https://x.org/?a=1&amp;b=2&gt; and <a href=\"https://x.org/doc\">the docs</a>",
    CATCHUP_CHATLOG_MESSAGE, "carol", "see <https://x.org/?a=1&b=2> and the docs (https://x.org/doc)", 0 },
  { -570, PURPLE_MESSAGE_SEND, ALIAS, "on it, &quot;really&quot; <b>now</b> &lt;3",
    CATCHUP_CHATLOG_MESSAGE, "alice", "on it, \"really\" now <3", CATCHUP_MESSAGE_OWN },
  { -560, PURPLE_MESSAGE_RECV, "carol", "/me nods", CATCHUP_CHATLOG_MESSAGE, "carol", "nods",
    CATCHUP_MESSAGE_ACTION },
  { -550, PURPLE_MESSAGE_SEND, ALIAS, "/me waves", CATCHUP_CHATLOG_MESSAGE, "alice", "waves",
    CATCHUP_MESSAGE_OWN | CATCHUP_MESSAGE_ACTION },
  { -540, PURPLE_MESSAGE_RECV, BUDDY_ALIAS, "I can help: ping me", CATCHUP_CHATLOG_MESSAGE, BUDDY,
    "I can help: ping me", 0 },
  { -530, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_NO_LINKIFY, NULL, "bob is now known as bobby",
    CATCHUP_CHATLOG_NICK, "bob", "bobby", 0 },
  /* A topic change is written "from" the sender's full mask. */
  { -520, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_RECV, "carol!~carol@127.0.0.1",
    "carol has changed the topic to: deploys", CATCHUP_CHATLOG_SYSTEM, NULL, NULL, 0 },
  { -510, PURPLE_MESSAGE_ERROR, NULL, "Unable to send message: The message is too large.",
    CATCHUP_CHATLOG_SYSTEM, NULL, NULL, 0 },
  { -500, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_NO_LINKIFY, NULL, "You are now known as alice_",
    CATCHUP_CHATLOG_NICK, "alice", "alice_", 0 },
  { -490, PURPLE_MESSAGE_SEND, ALIAS, "after the rename", CATCHUP_CHATLOG_MESSAGE, "alice_", "after the rename",
    CATCHUP_MESSAGE_OWN },
  { -480, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_NO_LINKIFY, NULL, "carol left the room (Quit: bye).",
    CATCHUP_CHATLOG_PART, "carol", "Quit: bye", 0 },
  { -470, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_NO_LINKIFY, NULL, "dan left the room.", CATCHUP_CHATLOG_PART,
    "dan", NULL, 0 },
  /* Local midnight is ten minutes from now: written undated, these are on the next day. */
  { 900, PURPLE_MESSAGE_RECV, "bobby", "past midnight", CATCHUP_CHATLOG_MESSAGE, "bobby", "past midnight", 0 },
  { 960, PURPLE_MESSAGE_RECV, "bobby", "a line with a &#8220;quote&#8221;", CATCHUP_CHATLOG_MESSAGE, "bobby",
    "a line with a \342\200\234quote\342\200\235", 0 },
};

/* ---------- writing the logs as the conversation does ---------- */

static void
write_log (const char *format, const char *room)
{
  PurpleLog *log;

  purple_prefs_set_string ("/purple/logging/format", format);
  log = purple_log_new (PURPLE_LOG_CHAT, room, fx.account, NULL, (time_t) (fx.now - 3600), NULL);
  for (guint i = 0; i < G_N_ELEMENTS (script); i++)
    {
      g_autofree char *markup = NULL;
      g_auto (GStrv) parts = g_strsplit (script[i].markup, "ROOM", -1);

      markup = g_strjoinv (room, parts);
      purple_log_write (log, script[i].flags, script[i].from ? script[i].from : room,
                        (time_t) (fx.now + script[i].offset), markup);
    }
  purple_log_free (log);
}

/* ---------- what the store has ---------- */

static gint64
room_id (CatchupStore *store, const char *room)
{
  g_autofree char *spec = g_strdup_printf ("prpl-irc/%s/%s", USERNAME, room);

  return catchup_store_find_room (store, spec, NULL);
}

static void
assert_messages (CatchupStore *store, const char *room)
{
  gint64 id = room_id (store, room);
  g_autoptr (GPtrArray) msgs = NULL;
  guint n = 0;

  g_assert_cmpint (id, >, 0);
  msgs = catchup_store_range (store, id, NULL, NULL, 0, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (script); i++)
    {
      CatchupMessage *m;

      if (script[i].kind != CATCHUP_CHATLOG_MESSAGE)
        continue;
      g_assert_cmpuint (n, <, msgs->len);
      m = msgs->pdata[n++];
      g_assert_cmpint (m->ts, ==, fx.now + script[i].offset);
      g_assert_cmpstr (m->speaker, ==, script[i].nick);
      g_assert_cmpstr (m->text, ==, script[i].text);
      g_assert_cmpuint (m->flags, ==, script[i].mflags);
    }
  g_assert_cmpuint (msgs->len, ==, n);
}

/* The nick changes, in time order (joins and parts are not kept). */
static GPtrArray *
stored_events (const char *room)
{
  g_autoptr (CatchupStore) store = catchup_store_open (fx.db_path, NULL);
  gint64 id = room_id (store, room);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;

  g_assert_cmpint (sqlite3_open_v2 (fx.db_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "SELECT ts, 'nick', old_nick, new_nick FROM nicks WHERE room = ?1 "
                                       "ORDER BY 1",
                                       -1, &stmt, NULL),
                   ==, SQLITE_OK);
  sqlite3_bind_int64 (stmt, 1, id);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    g_ptr_array_add (out, g_strdup_printf ("%" G_GINT64_FORMAT " %s %s %s", (gint64) sqlite3_column_int64 (stmt, 0),
                                           sqlite3_column_text (stmt, 1), sqlite3_column_text (stmt, 2),
                                           sqlite3_column_text (stmt, 3)));
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return out;
}

static void
assert_events (const char *room)
{
  g_autoptr (GPtrArray) events = stored_events (room);
  guint n = 0;

  for (guint i = 0; i < G_N_ELEMENTS (script); i++)
    {
      const char *kind = script[i].kind == CATCHUP_CHATLOG_NICK ? "nick" : NULL;
      g_autofree char *expected = NULL;

      if (kind == NULL)
        continue;
      expected = g_strdup_printf ("%" G_GINT64_FORMAT " %s %s %s", fx.now + script[i].offset, kind, script[i].nick,
                                  script[i].text ? script[i].text : "");
      g_assert_cmpuint (n, <, events->len);
      g_assert_cmpstr (events->pdata[n++], ==, expected);
    }
  g_assert_cmpuint (events->len, ==, n);
}

/* ---------- the import ---------- */

static void
check_format (const char *format, const char *room)
{
  g_autoptr (CatchupStore) store = NULL;
  g_autofree char *dir = purple_log_get_log_dir (PURPLE_LOG_CHAT, room, fx.account);
  g_autoptr (GDir) files = NULL;
  const char *notice;
  const char *name;

  write_log (format, room);
  /* The logger really wrote one file of that format, with the zone in its name. */
  files = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (files);
  name = g_dir_read_name (files);
  g_assert_nonnull (name);
  g_assert_true (g_str_has_suffix (name, format));
  g_assert_nonnull (strstr (name, "TST"));

  notice = e2e_run_import_action (fx.plugin);
  g_assert_nonnull (strstr (notice, "Chat logs imported"));
  store = catchup_store_open (fx.db_path, NULL);
  g_assert_nonnull (store);
  assert_messages (store, room);
  assert_events (room);

  /* Again: nothing new, nothing twice. */
  notice = e2e_run_import_action (fx.plugin);
  g_assert_nonnull (strstr (notice, " 0 new messages"));
  assert_messages (store, room);
  assert_events (room);
}

static void
test_html (void)
{
  check_format ("html", "#htmlroom");
}

static void
test_txt (void)
{
  check_format ("txt", "#txtroom");
}

/* A zone in which it is ten to midnight now, so that the scripted lines straddle the date line. */
static void
set_clock (void)
{
  gint64 now = g_get_real_time () / G_USEC_PER_SEC;
  gint64 wanted = 23 * 3600 + 50 * 60;
  gint64 offset = ((wanted - now % 86400) % 86400 + 86400) % 86400;
  g_autofree char *tz = NULL;

  if (offset > 12 * 3600)
    offset -= 86400;
  /* POSIX counts west of UTC as positive. */
  tz = g_strdup_printf ("TST%c%02d:%02d", offset > 0 ? '-' : '+', (int) (ABS (offset) / 3600),
                        (int) (ABS (offset) % 3600 / 60));
  g_setenv ("TZ", tz, TRUE);
  tzset ();
  fx.now = now;
}

int
main (int argc, char **argv)
{
  g_autofree char *user_dir = NULL;
  PurpleBuddy *buddy;
  int rc;

  set_clock ();
  g_test_init (&argc, &argv, NULL);
  fx.dir = test_tmp_dir ("catchup-e2e-logs-XXXXXX");
  user_dir = g_build_filename (fx.dir, "purple", NULL);
  fx.db_path = g_build_filename (user_dir, "catchup", "history.db", NULL);
  e2e_client_init (user_dir);
  fx.plugin = e2e_load_plugin ();
  fx.account = purple_account_new (USERNAME, "prpl-irc");
  purple_accounts_add (fx.account);
  purple_account_set_alias (fx.account, ALIAS);
  buddy = purple_buddy_new (fx.account, BUDDY, BUDDY_ALIAS);
  purple_blist_add_buddy (buddy, NULL, NULL, NULL);

  g_test_add_func ("/catchup/e2e-logs/html", test_html);
  g_test_add_func ("/catchup/e2e-logs/txt", test_txt);
  rc = g_test_run ();

  e2e_client_quit ();
  test_remove_tree (fx.dir);
  g_free (fx.db_path);
  g_free (fx.dir);
  return rc;
}
