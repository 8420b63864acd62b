/* End to end over XMPP: a real prosody with a MUC component that plays history back on join, two libpurple
 * accounts in the headless client (alice runs the catch-up, bob talks), the built plugin loaded. */

#include "config.h"

#include <string.h>
#include <unistd.h>

#include <gio/gio.h>

#include <cmds.h>
#include <connection.h>
#include <prefs.h>
#include <prpl.h>
#include <server.h>
#include <util.h>

#include "catchup.h"
#include "e2e-client.h"
#include "../test-util.h"

#define ROOM "lobby@conference.localhost"
/* More than the 20 lines prosody plays back to a client that asks for no particular history (libpurple asks
 * for none; muc_room_default_history_length is how many the room keeps, not how many it sends): the plugin
 * asks for the history since alice was last present. */
#define AWAY_LINES 25

static struct {
  char *dir;
  GSubprocess *prosody;
  guint16 port;
  PurpleAccount *alice, *bob;
  PurpleConversation *alice_conv, *bob_conv;
  char *db_path;
  char *self;            /* this program, run again for a restart */
  guint n_said;
} fx;

/* ---------- prosody ---------- */

static gboolean
start_prosody (void)
{
  fx.prosody = e2e_start_prosody (fx.dir, "  max_history_messages = 200\n  muc_room_default_history_length = 100\n",
                                  (const char *const[]) { "alice", "bob", "carol", NULL }, &fx.port);
  return fx.prosody != NULL;
}

static void
configure_xmpp (PurpleAccount *account, gpointer data)
{
  purple_account_set_string (account, "connect_server", "127.0.0.1");
  purple_account_set_int (account, "port", fx.port);
  purple_account_set_string (account, "connection_security", "opportunistic_tls");
  purple_account_set_bool (account, "auth_plain_in_clear", TRUE);
}

/* ---------- helpers ---------- */

static GPtrArray *
stored_messages (void)
{
  return test_stored_messages (fx.db_path, "prpl-jabber/alice@localhost/" ROOM);
}

static gboolean
stored_at_least (gpointer data)
{
  g_autoptr (GPtrArray) msgs = stored_messages ();

  if (msgs->len < GPOINTER_TO_UINT (data))
    g_usleep (50000);
  return msgs->len >= GPOINTER_TO_UINT (data);
}

static void
bob_says (const char *text)
{
  g_autofree char *markup = g_markup_escape_text (text, -1);

  purple_conv_chat_send (PURPLE_CONV_CHAT (fx.bob_conv), markup);
  fx.n_said++;
  e2e_spin (30);
}

static guint
count_catchups (guint from)
{
  guint n = 0;

  for (guint i = from; i < e2e_lines->len; i++)
    {
      E2eLine *line = e2e_lines->pdata[i];

      if (g_strcmp0 (line->conv, ROOM) == 0 && fx.alice_conv != NULL && strstr (line->message, "<b>Catch-up</b>")
          && (line->flags & PURPLE_MESSAGE_SYSTEM))
        n++;
    }
  return n;
}

static void
alice_leaves (void)
{
  purple_conversation_destroy (fx.alice_conv);
  fx.alice_conv = NULL;
  /* Leaving time is whole seconds: what bob says next must be later. */
  e2e_spin (1500);
}

static void
alice_rejoins (void)
{
  fx.alice_conv = e2e_join (fx.alice, ROOM, ROOM);
}

static void
say_replay (guint n)
{
  g_autoptr (GPtrArray) replay = e2e_log_lines (n);

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *text = NULL;

      if (i < replay->len)
        /* Numbered: every call replays the same log lines, and each is a turn of its own. */
        text = g_strdup_printf ("%u. %s said: %s", fx.n_said, ((char **) replay->pdata[i])[0],
                                ((char **) replay->pdata[i])[1]);
      else
        text = g_strdup_printf ("status update %u: the migration step %u is done", fx.n_said, i);
      bob_says (text);
    }
}

/* ---------- tests ---------- */

/* Every line bob said is stored, each once and as bob's. */
static void
assert_bob_lines_once (void)
{
  g_autoptr (GPtrArray) msgs = NULL;
  g_autoptr (GHashTable) texts = g_hash_table_new (g_str_hash, g_str_equal);

  msgs = stored_messages ();
  g_assert_cmpuint (msgs->len, ==, fx.n_said);
  for (guint i = 0; i < msgs->len; i++)
    {
      CatchupMessage *m = msgs->pdata[i];

      g_assert_cmpstr (m->speaker, ==, "bob");
      g_assert_false (g_hash_table_contains (texts, m->text));
      g_hash_table_add (texts, m->text);
    }
}

static void
test_playback_no_duplicates (void)
{
  bob_says ("morning all, the deploy of the parser is planned for 10:00");
  bob_says ("the lock solution from yesterday stays: flock on the pidfile");
  bob_says ("Nafallo, please review the fallback before we ship it");
  g_assert_true (e2e_wait (stored_at_least, GUINT_TO_POINTER (fx.n_said), 20000));

  alice_leaves ();
  alice_rejoins ();
  e2e_spin (2000);
  alice_leaves ();
  alice_rejoins ();
  e2e_spin (2000);
  assert_bob_lines_once ();
}

/* What bob said while alice was away reaches her only as history playback: each line stored once, as bob's. */
static void
assert_stored_once_each (void)
{
  g_assert_true (e2e_wait (stored_at_least, GUINT_TO_POINTER (fx.n_said), 10000));
  e2e_spin (500);
  assert_bob_lines_once ();
}

static void
test_auto_catchup_once (void)
{
  guint from;

  alice_leaves ();
  say_replay (AWAY_LINES);
  from = e2e_lines->len;
  alice_rejoins ();
  assert_stored_once_each ();
  /* Settling (500 ms here) then the catch-up itself. */
  e2e_spin (6000);
  g_assert_cmpuint (count_catchups (from), ==, 1);
  g_assert_cmpint (e2e_find_line (ROOM, from, PURPLE_MESSAGE_SYSTEM, "bob"), >=, 0);
}

static void
test_auto_catchup_threshold (void)
{
  guint from;

  alice_leaves ();
  say_replay (5);
  from = e2e_lines->len;
  alice_rejoins ();
  assert_stored_once_each ();
  e2e_spin (4000);
  g_assert_cmpuint (count_catchups (from), ==, 0);
}

static gboolean
alice_sees (gpointer data)
{
  return fx.alice_conv != NULL && purple_conv_chat_find_user (PURPLE_CONV_CHAT (fx.alice_conv), data);
}

/* A MUC nick change reaches alice as a rename of the occupant: recorded, so "bob" still leads to him. */
static void
test_nick_change (void)
{
  g_autoptr (GPtrArray) msgs = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *cmd_error = NULL;
  g_autoptr (CatchupNicks) nicks = NULL;
  CatchupMessage *last;
  gint64 room;

  g_assert_cmpint (purple_cmd_do_command (fx.bob_conv, "nick bobby", "nick bobby", &cmd_error), ==,
                   PURPLE_CMD_STATUS_OK);
  g_assert_true (e2e_wait (alice_sees, (gpointer) "bobby", 10000));
  bob_says ("renamed: the deploy moved to 11:00");
  g_assert_true (e2e_wait (stored_at_least, GUINT_TO_POINTER (fx.n_said), 10000));
  msgs = stored_messages ();
  last = msgs->pdata[msgs->len - 1];
  g_assert_cmpstr (last->speaker, ==, "bobby");

  store = catchup_store_open (fx.db_path, &error);
  g_assert_no_error (error);
  room = catchup_store_find_room (store, "prpl-jabber/alice@localhost/" ROOM, &error);
  g_assert_no_error (error);
  nicks = catchup_nicks_load (store, room, &error);
  g_assert_no_error (error);
  g_assert_true (catchup_nicks_same (nicks, "bob", "bobby"));
}

/* ---------- the next morning: a client closed without quitting, then started again ---------- */

/* The test program run again as carol's client on a user dir of its own. */
#define RESTART_ARG "--restart-client"
/* Lines said while carol's client is not running: more than prosody's default playback of 20. */
#define NIGHT_LINES 40
#define CAROL_ROOM "prpl-jabber/carol@localhost/" ROOM

static char *
carol_db (const char *user_dir)
{
  return g_build_filename (user_dir, "catchup", "history.db", NULL);
}

static gboolean
carol_stored_at_least (gpointer data)
{
  g_autoptr (GPtrArray) msgs = test_stored_messages (fx.db_path, CAROL_ROOM);

  if (msgs->len < GPOINTER_TO_UINT (data))
    g_usleep (50000);
  return msgs->len >= GPOINTER_TO_UINT (data);
}

static gboolean
carol_joined (gpointer data)
{
  return purple_find_conversation_with_account (PURPLE_CONV_TYPE_CHAT, ROOM, data) != NULL;
}

/* As Pidgin and Finch autojoin (account_autojoin_cb): the join goes out from the "autojoin" signal, the moment
 * the account has signed on. */
static gboolean
autojoin (PurpleConnection *gc, gpointer data)
{
  GHashTable *components = PURPLE_PLUGIN_PROTOCOL_INFO (purple_connection_get_prpl (gc))->chat_info_defaults (gc, ROOM);

  serv_join_chat (gc, components);
  g_hash_table_destroy (components);
  return TRUE;
}

/* "evening": carol's client joins, hears the room, and is killed. "morning": it starts again, autojoins and
 * must get everything said meanwhile, each line once, with one automatic catch-up. */
static int
restart_client (const char *phase, const char *user_dir, const char *port, const char *expected)
{
  PurpleAccount *carol;
  PurpleConversation *conv;

  fx.port = atoi (port);
  fx.db_path = carol_db (user_dir);
  e2e_client_init (user_dir);
  purple_signal_connect (purple_connections_get_handle (), "autojoin", &fx, PURPLE_CALLBACK (autojoin), NULL);
  e2e_load_plugin ();
  purple_prefs_set_int ("/plugins/core/catchup/settle_ms", 500);
  purple_prefs_set_int ("/plugins/core/catchup/heartbeat_seconds", 1);
  carol = e2e_account_online ("carol@localhost/e2e", "prpl-jabber", "secret", configure_xmpp, NULL);
  g_assert_true (e2e_wait (carol_joined, carol, 20000));
  conv = purple_find_conversation_with_account (PURPLE_CONV_TYPE_CHAT, ROOM, carol);
  if (strcmp (phase, "evening") == 0)
    {
      /* Playback and a heartbeat or two; then gone, as a killed client is: no quit, no leave. */
      e2e_spin (3000);
      _exit (0);
    }
  {
    g_autoptr (GPtrArray) msgs = NULL;
    g_autoptr (GHashTable) texts = g_hash_table_new (g_str_hash, g_str_equal);
    guint night = 0;

    g_assert_true (e2e_wait (carol_stored_at_least, GUINT_TO_POINTER (atoi (expected)), 20000));
    /* Settling, then the catch-up. */
    e2e_spin (6000);
    msgs = test_stored_messages (fx.db_path, CAROL_ROOM);
    g_assert_cmpuint (msgs->len, ==, atoi (expected));
    for (guint i = 0; i < msgs->len; i++)
      {
        CatchupMessage *m = msgs->pdata[i];

        g_assert_false (g_hash_table_contains (texts, m->text));
        g_hash_table_add (texts, m->text);
        if (strstr (m->text, "overnight") != NULL)
          night++;
      }
    g_assert_cmpuint (night, ==, NIGHT_LINES);
    g_assert_cmpuint (e2e_count_lines ("<b>Catch-up</b>"), ==, 1);
    /* The room played everything back: no word of an absence. */
    g_assert_cmpuint (e2e_count_lines ("You were away"), ==, 0);
    g_assert_nonnull (conv);
  }
  e2e_client_quit ();
  return 0;
}

static void
run_client (const char *phase, const char *user_dir, guint expected)
{
  g_autofree char *port = g_strdup_printf ("%u", fx.port);
  g_autofree char *count = g_strdup_printf ("%u", expected);

  g_assert_true (e2e_run_client (fx.self, (const char *const[]) { RESTART_ARG, phase, user_dir, port, count, NULL },
                                 90000));
}

static gboolean
occupant_gone (gpointer data)
{
  return !purple_conv_chat_find_user (PURPLE_CONV_CHAT (fx.bob_conv), data);
}

static void
test_restart_no_lost_playback (void)
{
  g_autofree char *user_dir = g_build_filename (fx.dir, "carol", NULL);
  g_autofree char *db = carol_db (user_dir);
  g_autoptr (GPtrArray) before = NULL;

  bob_says ("evening: the release notes are in the wiki");
  run_client ("evening", user_dir, 0);
  /* The server notices the closed connection: carol is no longer an occupant. */
  g_assert_true (e2e_wait (occupant_gone, (gpointer) "carol", 20000));
  before = test_stored_messages (db, CAROL_ROOM);
  g_assert_cmpuint (before->len, >, 0);
  for (guint i = 0; i < NIGHT_LINES; i++)
    {
      g_autofree char *text = g_strdup_printf ("overnight %u: build %u of the parser passed", i, i * 7);
      bob_says (text);
    }
  run_client ("morning", user_dir, before->len + NIGHT_LINES);
}

int
main (int argc, char **argv)
{
  g_autofree char *user_dir = NULL;
  int rc;

  fx.self = g_find_program_in_path (argv[0]);
  g_test_init (&argc, &argv, NULL);
  if (argc == 6 && strcmp (argv[1], RESTART_ARG) == 0)
    return restart_client (argv[2], argv[3], argv[4], argv[5]);
  fx.dir = test_tmp_dir ("catchup-e2e-xmpp-XXXXXX");
  if (!start_prosody ())
    {
      g_printerr ("prosody is not available: skipped\n");
      test_remove_tree (fx.dir);
      return 77; /* automake's "skipped" */
    }
  user_dir = g_build_filename (fx.dir, "purple", NULL);
  fx.db_path = g_build_filename (user_dir, "catchup", "history.db", NULL);

  e2e_client_init (user_dir);
  e2e_load_plugin ();
  purple_prefs_set_int ("/plugins/core/catchup/settle_ms", 500);
  /* Each rejoin is judged on its own: only the threshold decides. */
  purple_prefs_set_int ("/plugins/core/catchup/cooldown_seconds", 0);
  fx.alice = e2e_account_online ("alice@localhost/e2e", "prpl-jabber", "secret", configure_xmpp, NULL);
  fx.bob = e2e_account_online ("bob@localhost/e2e", "prpl-jabber", "secret", configure_xmpp, NULL);
  fx.bob_conv = e2e_join (fx.bob, ROOM, ROOM);
  fx.alice_conv = e2e_join (fx.alice, ROOM, ROOM);

  g_test_add_func ("/catchup/e2e-xmpp/playback-no-duplicates", test_playback_no_duplicates);
  g_test_add_func ("/catchup/e2e-xmpp/auto-catchup-once", test_auto_catchup_once);
  g_test_add_func ("/catchup/e2e-xmpp/auto-catchup-threshold", test_auto_catchup_threshold);
  g_test_add_func ("/catchup/e2e-xmpp/restart-no-lost-playback", test_restart_no_lost_playback);
  /* Last: bob is "bobby" from here on. */
  g_test_add_func ("/catchup/e2e-xmpp/nick-change", test_nick_change);
  rc = g_test_run ();

  e2e_client_quit ();
  g_subprocess_send_signal (fx.prosody, SIGTERM);
  g_subprocess_wait (fx.prosody, NULL, NULL);
  g_object_unref (fx.prosody);
  test_remove_tree (fx.dir);
  return rc;
}
