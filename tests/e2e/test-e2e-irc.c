/* End to end over IRC: a real ngircd on 127.0.0.1, the plugin in a headless libpurple client, and other
 * participants as raw IRC connections replaying real lines from the Ubuntu IRC logs. */

#include "config.h"

#include <string.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include <cmds.h>
#include <log.h>
#include <prefs.h>
#include <util.h>

#include "catchup.h"
#include "e2e-client.h"
#include "e2e-irc.h"
#include "../test-util.h"

#define CHANNEL "#catchup"
/* A room known only from the chat logs. */
#define ARCHIVE "#archive"

/* Other participants: raw IRC connections, nick -> peer. */
typedef E2eIrcPeer RawClient;

static struct {
  char *dir;
  GSubprocess *ngircd;
  guint16 port;
  char *self;            /* this program, run again for a restart */
  PurplePlugin *plugin;
  PurpleAccount *account;
  PurpleConversation *conv;
  char *db_path;
  GPtrArray *speakers;   /* nicks that spoke */
  GHashTable *clients;   /* nick -> RawClient */
  guint n_sent;
  gint64 t_start;
} fx;

/* ---------- servers ---------- */

static gboolean
start_ngircd (void)
{
  fx.ngircd = e2e_start_ngircd (fx.dir, &fx.port);
  return fx.ngircd != NULL;
}

/* ---------- raw IRC participants ---------- */

static void
raw_send (RawClient *c, const char *line)
{
  e2e_irc_peer_send (c, line);
}

static RawClient *
raw_client (const char *nick)
{
  RawClient *c = g_hash_table_lookup (fx.clients, nick);

  if (c == NULL)
    {
      c = e2e_irc_peer_new (fx.port, nick, CHANNEL);
      g_hash_table_insert (fx.clients, c->nick, c);
    }
  return c;
}

static void
say (const char *nick, const char *text)
{
  g_autofree char *cmd = g_strdup_printf ("PRIVMSG " CHANNEL " :%s", text);

  raw_send (raw_client (nick), cmd);
  fx.n_sent++;
  if (!g_ptr_array_find_with_equal_func (fx.speakers, nick, g_str_equal, NULL))
    g_ptr_array_add (fx.speakers, g_strdup (nick));
  /* Server flood control would otherwise hold lines back. */
  e2e_spin (120);
}

/* ---------- the store, read from its own connection as the command-line tool would ---------- */

static char *
room_spec_of (const char *room)
{
  return g_strdup_printf ("prpl-irc/%s/%s", purple_normalize (fx.account, purple_account_get_username (fx.account)),
                          room);
}

static char *
room_spec (void)
{
  return room_spec_of (CHANNEL);
}

static GPtrArray *
room_messages (const char *name)
{
  g_autofree char *spec = room_spec_of (name);

  return test_stored_messages (fx.db_path, spec);
}

static GPtrArray *
stored_messages (void)
{
  return room_messages (CHANNEL);
}

static gboolean
stored_at_least (gpointer data)
{
  g_autoptr (GPtrArray) msgs = stored_messages ();

  if (msgs->len < GPOINTER_TO_UINT (data))
    g_usleep (50000);
  return msgs->len >= GPOINTER_TO_UINT (data);
}

/* ---------- replayed history ---------- */

/* ---------- tests ---------- */

static guint
lines_now (void)
{
  return e2e_lines->len;
}

typedef struct {
  guint from;
  const char *needle;
} LineQuery;

static gboolean
summary_written (gpointer data)
{
  LineQuery *q = data;

  return e2e_find_line (CHANNEL, q->from, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_NO_LOG, q->needle) >= 0;
}

static const char *
wait_summary (guint from)
{
  LineQuery q = { from, "<b>Catch-up</b>" };
  int i;

  g_assert_true (e2e_wait (summary_written, &q, 30000));
  i = e2e_find_line (CHANNEL, from, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_NO_LOG, q.needle);
  return ((E2eLine *) e2e_lines->pdata[i])->message;
}

static void
assert_mentions_speakers (const char *summary, guint min)
{
  guint n = 0;

  for (guint i = 0; i < fx.speakers->len; i++)
    if (strstr (summary, fx.speakers->pdata[i]) != NULL)
      n++;
  g_assert_cmpuint (n, >=, min);
}

static void
do_command (const char *cmdline)
{
  e2e_command (fx.conv, cmdline);
}

static void
test_index (void)
{
  g_autoptr (GPtrArray) replay = e2e_log_lines (40);
  g_autoptr (GPtrArray) msgs = NULL;
  gint64 t_end;

  if (replay->len == 0)
    {
      g_test_skip ("shared IRC logs not found (set CATCHUP_SHARED_DIR)");
      return;
    }
  for (guint i = 0; i < replay->len; i++)
    {
      char **pair = replay->pdata[i];
      say (pair[0], pair[1]);
    }
  say ("mira", "so we go with the lock solution from earlier, the flock on the pidfile");
  say ("jonas", "agreed, and the fallback stays as it is until Nafallo reviews it");
  g_assert_true (e2e_wait (stored_at_least, GUINT_TO_POINTER (fx.n_sent), 30000));
  t_end = g_get_real_time () / G_USEC_PER_SEC;
  msgs = stored_messages ();
  g_assert_cmpuint (msgs->len, ==, fx.n_sent);
  for (guint i = 0; i < msgs->len; i++)
    {
      CatchupMessage *m = msgs->pdata[i];

      g_assert_true (g_ptr_array_find_with_equal_func (fx.speakers, m->speaker, g_str_equal, NULL));
      g_assert_cmpint (m->ts, >=, fx.t_start - 1);
      g_assert_cmpint (m->ts, <=, t_end + 1);
    }
  g_assert_cmpstr (((CatchupMessage *) msgs->pdata[msgs->len - 1])->speaker, ==, "jonas");
}

static void
test_no_log (void)
{
  g_autoptr (GPtrArray) msgs = NULL;
  guint before;

  purple_conv_chat_write (PURPLE_CONV_CHAT (fx.conv), "mallory", "off the record: do not keep this",
                          PURPLE_MESSAGE_RECV | PURPLE_MESSAGE_NO_LOG, time (NULL));
  purple_conversation_write (fx.conv, NULL, "a system notice", PURPLE_MESSAGE_SYSTEM, time (NULL));
  say ("mira", "marker after the off-the-record line");
  before = fx.n_sent;
  g_assert_true (e2e_wait (stored_at_least, GUINT_TO_POINTER (before), 20000));
  msgs = stored_messages ();
  for (guint i = 0; i < msgs->len; i++)
    {
      CatchupMessage *m = msgs->pdata[i];

      g_assert_null (strstr (m->text, "off the record"));
      g_assert_null (strstr (m->text, "system notice"));
      g_assert_null (strstr (m->text, "Catch"));
    }
  g_assert_cmpuint (msgs->len, ==, fx.n_sent);
}

static gboolean
alice_sees (gpointer data)
{
  return fx.conv != NULL && purple_conv_chat_find_user (PURPLE_CONV_CHAT (fx.conv), data);
}

/* A participant changes nick; returns once alice's client shows the new one. */
static void
raw_rename (const char *old_nick, const char *new_nick)
{
  RawClient *c = raw_client (old_nick);
  g_autofree char *cmd = g_strdup_printf ("NICK %s", new_nick);

  g_hash_table_remove (fx.clients, c->nick);
  g_free (c->nick);
  c->nick = g_strdup (new_nick);
  g_hash_table_insert (fx.clients, c->nick, c);
  raw_send (c, cmd);
  g_assert_true (e2e_wait (alice_sees, (gpointer) new_nick, 10000));
}

static void
test_nick_change (void)
{
  g_autoptr (GPtrArray) msgs = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autofree char *spec = room_spec ();
  g_autoptr (CatchupNicks) nicks = NULL;
  g_autoptr (GError) error = NULL;
  CatchupMessage *before, *after;
  gint64 room;

  say ("kurt", "I will look at the flaky build after lunch");
  raw_rename ("kurt", "kurt_lunch");
  say ("kurt_lunch", "back: the flaky build was the disk filling up");
  /* Writes are ordered: once the second line is stored, so is the nick change queued before it. */
  g_assert_true (e2e_wait (stored_at_least, GUINT_TO_POINTER (fx.n_sent), 20000));
  msgs = stored_messages ();
  g_assert_cmpuint (msgs->len, ==, fx.n_sent);
  before = msgs->pdata[msgs->len - 2];
  after = msgs->pdata[msgs->len - 1];
  g_assert_cmpstr (before->speaker, ==, "kurt");
  g_assert_cmpstr (after->speaker, ==, "kurt_lunch");

  store = catchup_store_open (fx.db_path, &error);
  g_assert_no_error (error);
  room = catchup_store_find_room (store, spec, &error);
  g_assert_no_error (error);
  nicks = catchup_nicks_load (store, room, &error);
  g_assert_no_error (error);
  g_assert_true (catchup_nicks_same (nicks, "kurt", "kurt_lunch"));
}

/* ---------- backfill from chat logs ---------- */

/* Into the folder libpurple reads the account's logs of room from. */
static void
write_log (const char *room, const char *file, const char *text)
{
  g_autofree char *dir = purple_log_get_log_dir (PURPLE_LOG_CHAT, room, fx.account);
  g_autofree char *path = g_build_filename (dir, file, NULL);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

typedef struct {
  const char *time;
  const char *speaker;
  const char *text;
  guint flags;
} Expected;

static void
assert_messages (GPtrArray *msgs, guint first, const Expected *expected, guint n)
{
  g_assert_cmpuint (msgs->len, >=, first + n);
  for (guint i = 0; i < n; i++)
    {
      CatchupMessage *m = msgs->pdata[first + i];
      gint64 ts = 0;

      g_assert_true (catchup_time_parse_iso (expected[i].time, &ts));
      g_assert_cmpint (m->ts, ==, ts);
      g_assert_cmpstr (m->speaker, ==, expected[i].speaker);
      g_assert_cmpstr (m->text, ==, expected[i].text);
      g_assert_cmpuint (m->flags, ==, expected[i].flags);
    }
}

static void
wait_line (guint from, const char *needle)
{
  LineQuery q = { from, needle };

  g_assert_true (e2e_wait (summary_written, &q, 20000));
}

/* Runs the conversation menu entry whose label starts with prefix, as a click would. */
static void
activate_conv_menu (const char *prefix)
{
  GList *menu = purple_conversation_get_extended_menu (fx.conv);
  gboolean found = FALSE;

  for (GList *l = menu; l != NULL; l = l->next)
    {
      PurpleMenuAction *action = l->data;

      if (!found && g_str_has_prefix (action->label, prefix))
        {
          ((void (*) (PurpleConversation *, gpointer)) action->callback) (fx.conv, action->data);
          found = TRUE;
        }
      purple_menu_action_free (action);
    }
  g_list_free (menu);
  g_assert_true (found);
}

/* One room from its conversation: the old text log is added, the lines of the live HTML log that libpurple
 * wrote while this test ran were indexed live already and are not stored again. */
static void
test_backfill_room (void)
{
  static const Expected expected[] = {
    { "2026-01-04T08:00:10Z", "mira", "notes from the planning call are in the wiki", 0 },
    { "2026-01-04T08:03:00Z", "jonas", "thanks, I added the rollout dates\nand the owners", 0 },
  };
  g_autoptr (GPtrArray) before = stored_messages ();
  g_autoptr (GPtrArray) after = NULL;
  g_autoptr (GPtrArray) again = NULL;
  guint from;

  write_log (CHANNEL, "2026-01-04.080000+0000UTC.txt",
             "Conversation with " CHANNEL " at Sun 04 Jan 2026 08:00:00 AM UTC on alice@127.0.0.1 (irc)\n"
             "(08:00:10) mira: notes from the planning call are in the wiki\n"
             "(08:01:00) jonas entered the room.\n"
             "(08:03:00) jonas: thanks, I added the rollout dates\n"
             "and the owners\n");
  from = lines_now ();
  do_command ("catchup import-logs");
  wait_line (from, "Imported the chat logs of " CHANNEL);
  after = stored_messages ();
  g_assert_cmpuint (after->len, ==, before->len + G_N_ELEMENTS (expected));
  assert_messages (after, 0, expected, G_N_ELEMENTS (expected));
  fx.n_sent += G_N_ELEMENTS (expected);

  /* Again, from the conversation's menu this time. */
  from = lines_now ();
  activate_conv_menu ("Import chat logs");
  wait_line (from, "0 new messages");
  again = stored_messages ();
  g_assert_cmpuint (again->len, ==, after->len);
}

/* Every room with logs, from the plugin action: a text and an HTML log of a room never joined. */
static void
test_backfill_all (void)
{
  static const Expected expected[] = {
    /* History playback: the logger writes the date (%x, here the C locale's) of old lines. */
    { "2026-01-04T23:58:00Z", "jonas", "playback from the night before", 0 },
    { "2026-01-05T10:00:05Z", "mira", "the old build server is retired on friday", 0 },
    { "2026-01-05T10:00:40Z", "jonas", "who takes over the nightly jobs?", 0 },
    { "2026-01-05T10:01:10Z", "mira", "points at the wiki", CATCHUP_MESSAGE_ACTION },
    { "2026-01-06T09:00:01Z", "kurt", "the <b>disk</b> alarm is back", 0 },
    { "2026-01-06T09:01:00Z", "alice", "I will look", CATCHUP_MESSAGE_OWN },
    { "2026-01-06T09:02:00Z", "kurt", "reboots it", CATCHUP_MESSAGE_ACTION },
    /* Past midnight: the next day. */
    { "2026-01-07T00:10:00Z", "jonas", "still up?", 0 },
  };
  g_autoptr (GPtrArray) live = stored_messages ();
  g_autoptr (GPtrArray) archive = NULL;
  g_autoptr (GPtrArray) live_after = NULL;
  const char *notice;

  write_log (ARCHIVE, "2026-01-05.100000+0000UTC.txt",
             "Conversation with " ARCHIVE " at Mon 05 Jan 2026 10:00:00 AM UTC on alice@127.0.0.1 (irc)\n"
             "(01/04/26 23:58:00) jonas: playback from the night before\n"
             "(10:00:05) mira: the old build server is retired on friday\n"
             "(10:00:40) jonas: who takes over the nightly jobs?\n"
             "(10:01:02) The topic for " ARCHIVE " is: builds\n"
             "(10:01:10) ***mira points at the wiki\n");
  write_log (ARCHIVE, "2026-01-06.090000+0000UTC.html",
             "<html><head><meta http-equiv=\"content-type\" content=\"text/html; charset=UTF-8\">"
             "<title>Conversation with " ARCHIVE "</title></head><body><h3>Conversation with " ARCHIVE
             "</h3>\n"
             "<font color=\"#A82F2F\"><font size=\"2\">(09:00:01)</font> <b>kurt:</b></font> the "
             "&lt;b&gt;disk&lt;/b&gt; alarm is <b>back</b><br/>\n"
             "<font size=\"2\">(09:00:30)</font><b> jonas left the room (Quit: bye).</b><br/>\n"
             "<font color=\"#16569E\"><font size=\"2\">(09:01:00)</font> <b>alice:</b></font> I will look<br/>\n"
             "<font color=\"#062585\"><font size=\"2\">(09:02:00)</font> <b>***kurt</b></font> reboots it<br/>\n"
             "<font color=\"#A82F2F\"><font size=\"2\">(00:10:00)</font> <b>jonas:</b></font> still up?<br/>\n"
             "</body></html>\n");

  notice = e2e_run_import_action (fx.plugin);
  g_assert_nonnull (strstr (notice, "Chat logs imported"));
  archive = room_messages (ARCHIVE);
  g_assert_cmpuint (archive->len, ==, G_N_ELEMENTS (expected));
  assert_messages (archive, 0, expected, G_N_ELEMENTS (expected));
  live_after = stored_messages ();
  g_assert_cmpuint (live_after->len, ==, live->len);

  /* Twice: nothing new anywhere. */
  notice = e2e_run_import_action (fx.plugin);
  g_assert_nonnull (strstr (notice, " 0 new messages"));
  g_clear_pointer (&archive, g_ptr_array_unref);
  archive = room_messages (ARCHIVE);
  g_assert_cmpuint (archive->len, ==, G_N_ELEMENTS (expected));
  g_clear_pointer (&live_after, g_ptr_array_unref);
  live_after = stored_messages ();
  g_assert_cmpuint (live_after->len, ==, live->len);
}

static void
check_catchup (const char *cmdline, guint min_speakers)
{
  guint from = lines_now ();
  LineQuery immediate = { from, "Catching up on" };
  const char *summary;

  if (fx.speakers->len < 3)
    {
      g_test_skip ("no replayed history");
      return;
    }
  do_command (cmdline);
  g_assert_true (e2e_wait (summary_written, &immediate, 5000));
  summary = wait_summary (from);
  assert_mentions_speakers (summary, min_speakers);
  /* Nothing reached the room. */
  g_assert_cmpint (e2e_find_line (CHANNEL, from, PURPLE_MESSAGE_SEND, NULL), ==, -1);
}

static void
test_catchup_last_n (void)
{
  check_catchup ("catchup 20", 2);
}

static void
test_catchup_duration (void)
{
  check_catchup ("catchup 2h", 2);
}

static void
test_catchup_plain (void)
{
  /* Last present is the previous catch-up: only what was said since counts. */
  say ("mira", "new since your last catch-up: the build server is back");
  say ("jonas", "and the release is tagged");
  g_assert_true (e2e_wait (stored_at_least, GUINT_TO_POINTER (fx.n_sent), 20000));
  check_catchup ("catchup", 1);
}

/* What a hostile peer sends: escape sequences and BEL never reach the store, and the catch-up written into the
 * conversation carries no control character and no bidi override, whoever wrote them. */
static void
test_hostile_text (void)
{
  guint from = lines_now ();
  LineQuery immediate = { from, "Catching up on" };
  g_autoptr (GPtrArray) msgs = NULL;
  const char *summary;
  CatchupMessage *last;

  say ("mira", "we decided to ship the \x1b[2J\x1b]0;owned\x07 lock fix \xe2\x80\xae" "exe.txt today");
  say ("jonas", "agreed, I will tag the \x1b[31mrelease\x1b[0m after lunch");
  g_assert_true (e2e_wait (stored_at_least, GUINT_TO_POINTER (fx.n_sent), 20000));
  msgs = stored_messages ();
  last = msgs->pdata[msgs->len - 1];
  g_assert_cmpstr (last->text, ==, "agreed, I will tag the [31mrelease[0m after lunch");
  for (guint i = 0; i < msgs->len; i++)
    {
      CatchupMessage *m = msgs->pdata[i];

      g_assert_null (strchr (m->text, '\x1b'));
      g_assert_null (strchr (m->text, '\x07'));
      g_assert_true (g_utf8_validate (m->text, -1, NULL));
    }
  do_command ("catchup 2");
  g_assert_true (e2e_wait (summary_written, &immediate, 5000));
  summary = wait_summary (from);
  g_assert_null (strchr (summary, '\x1b'));
  g_assert_null (strchr (summary, '\x07'));
  g_assert_null (strstr (summary, "\xe2\x80\xae"));
  g_assert_nonnull (strstr (summary, "lock fix"));
}

static void
test_usage (void)
{
  guint from = lines_now ();
  RawClient *mira = raw_client ("mira");
  guint received = mira->received->len;

  do_command ("catchup bananas");
  do_command ("catchup 2h extra words");
  g_assert_cmpint (e2e_find_line (CHANNEL, from, PURPLE_MESSAGE_SYSTEM, "/help catchup"), >=, 0);
  do_command ("catchup help");
  g_assert_cmpint (e2e_find_line (CHANNEL, from, PURPLE_MESSAGE_SEND, NULL), ==, -1);
  e2e_spin (500);
  g_assert_cmpuint (mira->received->len, ==, received);
}

static gboolean
received_catchup (gpointer data)
{
  RawClient *c = data;

  for (guint i = 0; i < c->received->len; i++)
    if (strstr (c->received->pdata[i], "[catch-up]") != NULL)
      return TRUE;
  return FALSE;
}

static void
test_post (void)
{
  RawClient *mira = raw_client ("mira");
  guint from = lines_now ();
  guint n_stored;

  if (fx.speakers->len < 3)
    {
      g_test_skip ("no replayed history");
      return;
    }
  /* Off by default. */
  do_command ("catchup post 20");
  g_assert_cmpint (e2e_find_line (CHANNEL, from, PURPLE_MESSAGE_SYSTEM, "Posting catch-ups is off"), >=, 0);

  purple_prefs_set_bool ("/plugins/core/catchup/defaults/allow_post", TRUE);
  g_ptr_array_set_size (mira->received, 0);
  do_command ("catchup post 20");
  g_assert_true (e2e_wait (received_catchup, mira, 30000));
  e2e_spin (3000);
  g_assert_cmpuint (mira->received->len, >=, 2);
  for (guint i = 0; i < mira->received->len; i++)
    {
      const char *text = mira->received->pdata[i];

      g_assert_cmpuint (strlen (text), <=, 400);
      /* No line highlights a participant: their nicks carry a zero-width joiner. */
      for (guint s = 0; s < fx.speakers->len; s++)
        {
          const char *nick = fx.speakers->pdata[s];
          const char *hit = strstr (text, nick);

          if (hit != NULL && strlen (nick) > 1)
            g_assert_true ((hit > text && g_unichar_isalnum (g_utf8_get_char (g_utf8_prev_char (hit))))
                           || g_unichar_isalnum (g_utf8_get_char (hit + strlen (nick))));
        }
    }
  /* The plugin's own posted lines are not indexed. */
  n_stored = fx.n_sent;
  e2e_spin (500);
  {
    g_autoptr (GPtrArray) msgs = stored_messages ();
    g_assert_cmpuint (msgs->len, ==, n_stored);
  }
  purple_prefs_set_bool ("/plugins/core/catchup/defaults/allow_post", FALSE);
}

static gboolean
answered_since (gpointer data)
{
  return e2e_requests.n_answered > GPOINTER_TO_UINT (data);
}

/* Opens the room's settings dialog and saves it, with values (field id, text, ...) typed in if not NULL. */
static void
settings_dialog (PurpleConversation *conv, const char *const *values)
{
  g_autoptr (GHashTable) typed = g_hash_table_new (g_str_hash, g_str_equal);
  guint answered = e2e_requests.n_answered;

  for (guint i = 0; values != NULL && values[i] != NULL; i += 2)
    g_hash_table_insert (typed, (gpointer) values[i], (gpointer) values[i + 1]);
  e2e_requests.field_values = typed;
  fx.conv = conv;
  do_command ("catchup settings");
  e2e_requests.field_values = NULL;
  g_assert_true (e2e_wait (answered_since, GUINT_TO_POINTER (answered), 5000));
}

/* The last dialog showed exactly these settings or, with differ, none of these values: each one a change. */
static void
assert_shown (const char *const *values, gboolean differ)
{
  g_assert_cmpuint (g_hash_table_size (e2e_requests.seen_fields), ==, g_strv_length ((char **) values) / 2);
  for (guint i = 0; values[i] != NULL; i += 2)
    {
      const char *shown = g_hash_table_lookup (e2e_requests.seen_fields, values[i]);

      /* An empty text field reads back as no text at all. */
      g_assert_true (g_hash_table_contains (e2e_requests.seen_fields, values[i]));
      shown = shown ? shown : "";
      if (differ)
        g_assert_cmpstr (shown, !=, values[i + 1]);
      else
        g_assert_cmpstr (shown, ==, values[i + 1]);
    }
}

typedef struct {
  const char *conv;
  guint from;
} StatusQuery;

static gboolean
status_shown (gpointer data)
{
  StatusQuery *q = data;

  return e2e_find_line (q->conv, q->from, 0, "History:") >= 0;
}

/* The store's settings of a room outside the buddy list are read when it is joined or the plugin loaded, and the
 * plugin's store calls run in order: once /catchup status has answered, they are in. */
static void
wait_store_reads (PurpleConversation *conv)
{
  StatusQuery q = { purple_conversation_get_name (conv), lines_now () };

  fx.conv = conv;
  do_command ("catchup status");
  g_assert_true (e2e_wait (status_shown, &q, 10000));
}

static void
test_settings_persist (void)
{
  static const char *const values[] = { "catchup-threshold", "7", "catchup-allow-post", "1", NULL };

  settings_dialog (fx.conv, values);
  g_assert_cmpuint (e2e_requests.n_fields_dialogs, ==, 1);

  /* A plugin restart right after the save: the room is not in the buddy list, so this goes through the store. */
  g_assert_true (purple_plugin_unload (fx.plugin));
  g_assert_true (purple_plugin_load (fx.plugin));
  wait_store_reads (fx.conv);
  settings_dialog (fx.conv, NULL);
  g_assert_cmpuint (e2e_requests.n_fields_dialogs, ==, 2);
  g_assert_cmpstr (g_hash_table_lookup (e2e_requests.seen_fields, "catchup-threshold"), ==, "7");
  g_assert_cmpstr (g_hash_table_lookup (e2e_requests.seen_fields, "catchup-allow-post"), ==, "1");
}

static void
test_close_mid_catchup (void)
{
  do_command ("catchup 50");
  purple_conversation_destroy (fx.conv);
  fx.conv = NULL;
  e2e_spin (2000);
  fx.conv = e2e_join (fx.account, CHANNEL, CHANNEL);
  g_assert_nonnull (fx.conv);
}

static void
test_unload_mid_catchup (void)
{
  do_command ("catchup 50");
  g_assert_true (purple_plugin_unload (fx.plugin));
  e2e_spin (2000);
  g_assert_true (purple_plugin_load (fx.plugin));
  e2e_spin (300);
}

static void
test_forget (void)
{
  guint from = lines_now ();
  g_autoptr (GPtrArray) msgs = NULL;
  LineQuery q = { from, "Forgot" };
  guint dialogs = e2e_requests.n_action_dialogs;

  e2e_requests.action = 0;
  do_command ("catchup forget");
  g_assert_true (e2e_wait (summary_written, &q, 10000));
  g_assert_cmpuint (e2e_requests.n_action_dialogs, ==, dialogs + 1);
  msgs = stored_messages ();
  g_assert_cmpuint (msgs->len, ==, 0);
}

/* A room only the store knows, so that pruning it leaves the other tests' history alone. */
#define RETAINED "#retained"
#define DAY (24 * 60 * 60)

/* Two lines from three days ago and one from an hour ago, written by a connection of the test's own. */
static void
store_aged_lines (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = catchup_store_open (fx.db_path, &error);
  g_autoptr (GPtrArray) msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  g_autofree char *account = g_strdup (purple_normalize (fx.account, purple_account_get_username (fx.account)));
  gint64 now = g_get_real_time () / G_USEC_PER_SEC;
  gint64 room;

  g_assert_no_error (error);
  room = catchup_store_ensure_room (store, "prpl-irc", account, RETAINED, &error);
  g_assert_no_error (error);
  g_ptr_array_add (msgs, catchup_message_new ("old-1", now - 3 * DAY, "mira", "the old plan for the pidfile"));
  g_ptr_array_add (msgs, catchup_message_new ("old-2", now - 3 * DAY + 5, "jonas", "and its old fallback"));
  g_ptr_array_add (msgs, catchup_message_new ("new-1", now - 3600, "mira", "the new plan stays"));
  g_assert_true (catchup_store_add_batch (store, room, msgs, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (catchup_index_update (store, room, &error));
  g_assert_no_error (error);
}

static guint
retained_count (void)
{
  g_autoptr (GPtrArray) msgs = room_messages (RETAINED);

  return msgs->len;
}

static gboolean
only_recent_left (gpointer data)
{
  if (retained_count () == 1)
    return TRUE;
  g_usleep (50000);
  return FALSE;
}

static void
test_retention (void)
{
  g_autoptr (GPtrArray) left = NULL;

  /* 0 keeps everything, also across a load. */
  store_aged_lines ();
  g_assert_true (purple_plugin_unload (fx.plugin));
  g_assert_true (purple_plugin_load (fx.plugin));
  e2e_spin (1000);
  g_assert_cmpuint (retained_count (), ==, 3);

  /* A change of the preference prunes soon after. */
  purple_prefs_set_int ("/plugins/core/catchup/retention_days", 1);
  g_assert_true (e2e_wait (only_recent_left, NULL, 15000));
  left = room_messages (RETAINED);
  g_assert_cmpstr (((CatchupMessage *) left->pdata[0])->id, ==, "new-1");

  /* So does loading the plugin. */
  g_assert_true (purple_plugin_unload (fx.plugin));
  store_aged_lines ();
  g_assert_cmpuint (retained_count (), ==, 3);
  g_assert_true (purple_plugin_load (fx.plugin));
  g_assert_true (e2e_wait (only_recent_left, NULL, 15000));

  purple_prefs_set_int ("/plugins/core/catchup/retention_days", 0);
}

static void
configure_irc (PurpleAccount *account, gpointer data)
{
  purple_account_set_int (account, "port", fx.port);
  purple_account_set_bool (account, "ssl", FALSE);
}

/* ---------- settings across a restart of the client ---------- */

/* The test program run again as a client of its own: a fresh libpurple core on a user dir another one left. */
#define RESTART_ARG "--restart-client"
/* A room in the buddy list keeps its settings on its node in blist.xml; one outside it, in the store. */
#define LISTED "#listed"
#define UNLISTED "#unlisted"

/* Field id, text; every setting away from its default and the two rooms apart, so no value passes by chance.
 * The language is a choice: 9 is German, 8 French (0 is the room's own, then the languages by English name). */
static const char *const listed_values[] = {
  "catchup-index", "0", "catchup-auto", "0", "catchup-threshold", "7", "catchup-budget", "1500",
  "catchup-max-window", "250", "catchup-language", "9", "catchup-length", "0", "catchup-allow-post", "1", NULL
};
static const char *const unlisted_values[] = {
  "catchup-index", "0", "catchup-auto", "0", "catchup-threshold", "9", "catchup-budget", "3000",
  "catchup-max-window", "120", "catchup-language", "8", "catchup-length", "2", "catchup-allow-post", "1", NULL
};

/* One run of the client: "write" saves both rooms' settings, "read" checks what the dialogs show. */
static int
restart_client (const char *phase, const char *user_dir, const char *port)
{
  gboolean write = strcmp (phase, "write") == 0;
  PurpleConversation *listed, *unlisted;

  fx.port = atoi (port);
  e2e_client_init (user_dir);
  fx.plugin = e2e_load_plugin ();
  fx.account = e2e_account_online ("bob@127.0.0.1", "prpl-irc", NULL, configure_irc, NULL);
  if (write)
    e2e_blist_add_chat (fx.account, LISTED);
  g_assert_nonnull (purple_blist_find_chat (fx.account, LISTED));
  g_assert_null (purple_blist_find_chat (fx.account, UNLISTED));
  listed = e2e_join (fx.account, LISTED, LISTED);
  unlisted = e2e_join (fx.account, UNLISTED, UNLISTED);
  if (write)
    {
      settings_dialog (listed, listed_values);
      assert_shown (listed_values, TRUE);
      settings_dialog (unlisted, unlisted_values);
      assert_shown (unlisted_values, TRUE);
    }
  else
    {
      wait_store_reads (unlisted);
      settings_dialog (listed, NULL);
      assert_shown (listed_values, FALSE);
      settings_dialog (unlisted, NULL);
      assert_shown (unlisted_values, FALSE);
      /* Read from the node, not from a copy in the store. */
      g_assert_cmpint (purple_blist_node_get_int ((PurpleBlistNode *) purple_blist_find_chat (fx.account, LISTED),
                                                  "catchup-threshold"), ==, 7);
    }
  /* As a user's quit: the core writes blist.xml, the plugin what it still has queued for the store. */
  e2e_client_quit ();
  return 0;
}

static void
run_client (const char *arg, const char *phase, const char *user_dir)
{
  g_autofree char *port = g_strdup_printf ("%u", fx.port);

  g_assert_true (e2e_run_client (fx.self, (const char *const[]) { arg, phase, user_dir, port, NULL }, 60000));
}

static void
test_settings_restart (void)
{
  g_autofree char *user_dir = g_build_filename (fx.dir, "restarted", NULL);

  run_client (RESTART_ARG, "write", user_dir);
  run_client (RESTART_ARG, "read", user_dir);
}

/* ---------- an absence IRC cannot fill ---------- */

/* The test program run again as erin's client, who is away while the room talks. */
#define ABSENT_ARG "--absent-client"
#define ERIN "erin@127.0.0.1"
#define AWAY_MINUTES 48

static gboolean
told (gpointer data)
{
  return e2e_count_lines (data) > 0;
}

/* "evening": erin's client joins and is killed (no quit, no part). "morning": it starts again and rejoins; the
 * absence is told once, and /catchup says what was not received instead of "nothing". */
static int
absent_client (const char *phase, const char *user_dir, const char *port)
{
  g_autofree char *cmd_error = NULL;

  fx.port = atoi (port);
  e2e_client_init (user_dir);
  fx.plugin = e2e_load_plugin ();
  purple_prefs_set_int ("/plugins/core/catchup/heartbeat_seconds", 1);
  purple_prefs_set_int ("/plugins/core/catchup/settle_ms", 500);
  fx.account = e2e_account_online (ERIN, "prpl-irc", NULL, configure_irc, NULL);
  fx.conv = e2e_join (fx.account, CHANNEL, CHANNEL);
  if (strcmp (phase, "evening") == 0)
    {
      e2e_spin (2500);
      _exit (0);
    }
  g_assert_true (e2e_wait (told, (gpointer) "You were away from", 10000));
  g_assert_nonnull (strstr (((E2eLine *) e2e_lines->pdata[e2e_find_line (CHANNEL, 0, PURPLE_MESSAGE_SYSTEM,
                                                                          "You were away")])->message,
                            "(" G_STRINGIFY (AWAY_MINUTES) " minutes)"));
  g_assert_cmpint (purple_cmd_do_command (fx.conv, "catchup", "catchup", &cmd_error), ==, PURPLE_CMD_STATUS_OK);
  g_assert_true (e2e_wait (told, (gpointer) "Nothing new since you rejoined at", 10000));
  g_assert_cmpuint (e2e_count_lines ("Nothing to catch up on"), ==, 0);
  /* Leaving and coming back a moment later is no new absence. */
  purple_conversation_destroy (fx.conv);
  e2e_spin (500);
  fx.conv = e2e_join (fx.account, CHANNEL, CHANNEL);
  e2e_spin (1500);
  g_assert_cmpuint (e2e_count_lines ("You were away from"), ==, 1);
  e2e_client_quit ();
  return 0;
}

static void
test_absence_told (void)
{
  g_autofree char *user_dir = g_build_filename (fx.dir, "erin", NULL);
  g_autofree char *db = g_build_filename (user_dir, "catchup", "history.db", NULL);
  g_autofree char *spec = g_strdup_printf ("prpl-irc/erin@127.0.0.1/%s", CHANNEL);
  g_autofree char *alive = g_strdup_printf ("%" G_GINT64_FORMAT,
                                            g_get_real_time () / G_USEC_PER_SEC - AWAY_MINUTES * 60);

  run_client (ABSENT_ARG, "evening", user_dir);
  /* The client's last heartbeat, as if it had been killed that long ago: nobody waits 48 minutes in a test. */
  {
    g_autoptr (CatchupStore) store = catchup_store_open (db, NULL);
    gint64 room = store ? catchup_store_find_room (store, spec, NULL) : 0;

    g_assert_cmpint (room, >, 0);
    g_assert_true (catchup_store_set_setting (store, room, "presence-alive", alive, NULL));
  }
  say ("mira", "said while erin was away: the mirror is back");
  say ("jonas", "and the nightly build is green again");
  run_client (ABSENT_ARG, "morning", user_dir);
}

/* ---------- bouncer playback ---------- */

static gboolean
stored_text (gpointer data)
{
  g_autoptr (GPtrArray) msgs = stored_messages ();

  for (guint i = 0; i < msgs->len; i++)
    if (strcmp (((CatchupMessage *) msgs->pdata[i])->text, data) == 0)
      return TRUE;
  g_usleep (20000);
  return FALSE;
}


static const CatchupMessage *
stored_with_text (GPtrArray *msgs, const char *text, guint *count)
{
  const CatchupMessage *found = NULL;

  *count = 0;
  for (guint i = 0; i < msgs->len; i++)
    if (strcmp (((CatchupMessage *) msgs->pdata[i])->text, text) == 0)
      {
        found = msgs->pdata[i];
        (*count)++;
      }
  return found;
}

/* A bouncer plays a channel's backlog back right after the join as ordinary lines with the time in front
 * ("[08:30:00] text", ZNC's buffer without server-time, which libpurple never asks for): stored at that time,
 * without the prefix, as playback, once however often it is played back. */
static void
test_bouncer_playback (void)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autoptr (GDateTime) earlier = g_date_time_add_minutes (now, -10);
  g_autofree char *stamp = g_date_time_format (earlier, "[%H:%M:%S]");
  g_autofree char *line = g_strdup_printf ("%s the mirror sync finished overnight", stamp);
  const char *text = "the mirror sync finished overnight";

  for (guint round = 0; round < 2; round++)
    {
      g_autoptr (GPtrArray) msgs = NULL;
      const CatchupMessage *m;
      guint count = 0;

      purple_conversation_destroy (fx.conv);
      fx.conv = e2e_join (fx.account, CHANNEL, CHANNEL);
      say ("mira", line);
      say ("mira", round == 0 ? "live after the playback" : "live after the second playback");
      g_assert_true (e2e_wait (stored_text, (gpointer) (round == 0 ? "live after the playback"
                                                                     : "live after the second playback"),
                               10000));
      msgs = stored_messages ();
      m = stored_with_text (msgs, text, &count);
      g_assert_cmpuint (count, ==, 1);
      g_assert_cmpint (m->ts, ==, g_date_time_to_unix (earlier));
      g_assert_cmpuint (m->flags & CATCHUP_MESSAGE_DELAYED, ==, CATCHUP_MESSAGE_DELAYED);
    }
}

/* ---------- privacy: chat logging off ---------- */

static gboolean
answered (gpointer data)
{
  return e2e_requests.n_answered > GPOINTER_TO_UINT (data);
}

static guint
stored_count (const char *text)
{
  g_autoptr (GPtrArray) msgs = stored_messages ();
  guint n = 0;

  for (guint i = 0; i < msgs->len; i++)
    if (strcmp (((CatchupMessage *) msgs->pdata[i])->text, text) == 0)
      n++;
  return n;
}

/* With libpurple's chat logging off, nothing is indexed until the user says so; the question comes once a
 * session, the answer is a preference, and /catchup status tells where the history is and whether the room is
 * indexed. Last: it leaves the question asked for this session. */
static void
test_privacy (void)
{
  StatusQuery q = { CHANNEL, 0 };
  guint n = e2e_requests.n_answered, dialogs = e2e_requests.n_action_dialogs;
  const char *status;

  /* A join is not kept: it may not ask first. */
  raw_client ("mira");
  e2e_spin (1000);
  purple_prefs_set_bool ("/purple/logging/log_chats", FALSE);
  e2e_requests.action = 0; /* Index */
  say ("mira", "said before anyone was asked");
  g_assert_true (e2e_wait (answered, GUINT_TO_POINTER (n), 5000));
  g_assert_cmpuint (e2e_requests.n_action_dialogs, ==, dialogs + 1);
  g_assert_cmpint (purple_prefs_get_int ("/plugins/core/catchup/index_unlogged"), ==, 1);
  say ("mira", "said after the answer");
  g_assert_true (e2e_wait (stored_text, (gpointer) "said after the answer", 10000));

  /* "Don't index" is kept too, and there is no second question in the session. */
  purple_prefs_set_int ("/plugins/core/catchup/index_unlogged", 2);
  say ("mira", "said while the answer is no");
  purple_prefs_set_int ("/plugins/core/catchup/index_unlogged", 0);
  say ("mira", "said while undecided again");
  g_assert_cmpuint (e2e_requests.n_action_dialogs, ==, dialogs + 1);
  purple_prefs_set_int ("/plugins/core/catchup/index_unlogged", 2);
  q.from = lines_now ();
  do_command ("catchup status");
  g_assert_true (e2e_wait (status_shown, &q, 10000));
  status = ((E2eLine *) e2e_lines->pdata[e2e_find_line (CHANNEL, q.from, 0, "History:")])->message;
  g_assert_nonnull (strstr (status, fx.db_path));
  g_assert_nonnull (strstr (status, "kept until you delete it"));
  g_assert_nonnull (strstr (status, "not indexed: you chose to keep no history"));

  /* Writes are ordered: once this one is in, the ones before it would be. */
  purple_prefs_set_int ("/plugins/core/catchup/index_unlogged", 1);
  say ("mira", "said after saying yes again");
  g_assert_true (e2e_wait (stored_text, (gpointer) "said after saying yes again", 10000));
  g_assert_cmpuint (stored_count ("said before anyone was asked"), ==, 0);
  g_assert_cmpuint (stored_count ("said after the answer"), ==, 1);
  g_assert_cmpuint (stored_count ("said while the answer is no"), ==, 0);
  g_assert_cmpuint (stored_count ("said while undecided again"), ==, 0);

  purple_prefs_set_int ("/plugins/core/catchup/index_unlogged", 0);
  purple_prefs_set_bool ("/purple/logging/log_chats", TRUE);
}

int
main (int argc, char **argv)
{
  g_autofree char *user_dir = NULL;
  int rc;

  fx.self = g_find_program_in_path (argv[0]);
  g_test_init (&argc, &argv, NULL);
  if (argc == 5 && strcmp (argv[1], RESTART_ARG) == 0)
    return restart_client (argv[2], argv[3], argv[4]);
  if (argc == 5 && strcmp (argv[1], ABSENT_ARG) == 0)
    return absent_client (argv[2], argv[3], argv[4]);
  fx.dir = test_tmp_dir ("catchup-e2e-irc-XXXXXX");
  if (!start_ngircd ())
    {
      g_printerr ("ngircd is not available: skipped\n");
      return 77; /* automake's "skipped" */
    }
  user_dir = g_build_filename (fx.dir, "purple", NULL);
  fx.db_path = g_build_filename (user_dir, "catchup", "history.db", NULL);
  fx.speakers = g_ptr_array_new_with_free_func (g_free);
  fx.clients = g_hash_table_new (g_str_hash, g_str_equal);
  fx.t_start = g_get_real_time () / G_USEC_PER_SEC;

  e2e_client_init (user_dir);
  fx.plugin = e2e_load_plugin ();
  purple_prefs_set_int ("/plugins/core/catchup/post_interval_ms", 200);
  purple_prefs_set_int ("/plugins/core/catchup/settle_ms", 500);
  fx.account = e2e_account_online ("alice@127.0.0.1", "prpl-irc", NULL, configure_irc, NULL);
  fx.conv = e2e_join (fx.account, CHANNEL, CHANNEL);

  g_test_add_func ("/catchup/e2e-irc/index", test_index);
  g_test_add_func ("/catchup/e2e-irc/no-log", test_no_log);
  g_test_add_func ("/catchup/e2e-irc/nick-change", test_nick_change);
  g_test_add_func ("/catchup/e2e-irc/catchup-last-n", test_catchup_last_n);
  g_test_add_func ("/catchup/e2e-irc/catchup-duration", test_catchup_duration);
  g_test_add_func ("/catchup/e2e-irc/catchup-plain", test_catchup_plain);
  g_test_add_func ("/catchup/e2e-irc/hostile-text", test_hostile_text);
  g_test_add_func ("/catchup/e2e-irc/usage", test_usage);
  g_test_add_func ("/catchup/e2e-irc/backfill-room", test_backfill_room);
  g_test_add_func ("/catchup/e2e-irc/backfill-all", test_backfill_all);
  g_test_add_func ("/catchup/e2e-irc/post", test_post);
  g_test_add_func ("/catchup/e2e-irc/settings-persist", test_settings_persist);
  g_test_add_func ("/catchup/e2e-irc/settings-restart", test_settings_restart);
  g_test_add_func ("/catchup/e2e-irc/close-mid-catchup", test_close_mid_catchup);
  g_test_add_func ("/catchup/e2e-irc/unload-mid-catchup", test_unload_mid_catchup);
  g_test_add_func ("/catchup/e2e-irc/forget", test_forget);
  g_test_add_func ("/catchup/e2e-irc/retention", test_retention);
  g_test_add_func ("/catchup/e2e-irc/absence-told", test_absence_told);
  g_test_add_func ("/catchup/e2e-irc/bouncer-playback", test_bouncer_playback);
  g_test_add_func ("/catchup/e2e-irc/privacy", test_privacy);
  rc = g_test_run ();

  e2e_client_quit ();
  e2e_irc_stop_server (fx.ngircd);
  test_remove_tree (fx.dir);
  g_free (fx.self);
  return rc;
}
