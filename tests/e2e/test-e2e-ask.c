/* End to end over IRC: /catchup ask and /catchup @nick in a real room on ngircd. Two accounts of the headless
 * client talk in one channel; the plugin indexes what alice sees, builds the records, and answers her
 * questions locally, never in the room. */

#include "config.h"

#include <string.h>

#include <cmds.h>
#include <prefs.h>
#include <util.h>

#include "catchup.h"
#include "e2e-client.h"
#include "../test-util.h"

#define CHANNEL "#ask"
#define ANSWER_FLAGS (PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_NO_LOG)

static struct {
  char *dir;
  char *db_path;
  GSubprocess *ngircd;
  guint16 port;
  PurpleAccount *alice, *bob;
  PurpleConversation *alice_conv, *bob_conv;
} fx;

static void
configure_irc (PurpleAccount *account, gpointer data)
{
  purple_account_set_int (account, "port", fx.port);
  purple_account_set_bool (account, "ssl", FALSE);
}

static gint64
alice_room_count (void)
{
  g_autoptr (CatchupStore) store = catchup_store_open (fx.db_path, NULL);
  g_autofree char *spec = g_strdup_printf ("prpl-irc/%s/%s",
                                           purple_normalize (fx.alice, purple_account_get_username (fx.alice)),
                                           CHANNEL);
  gint64 room = store ? catchup_store_find_room (store, spec, NULL) : 0;

  return room ? catchup_store_count (store, room, NULL) : 0;
}

static gboolean
stored_at_least (gpointer data)
{
  if (alice_room_count () >= GPOINTER_TO_INT (data))
    return TRUE;
  g_usleep (50000);
  return FALSE;
}

static void
send_as (PurpleConversation *conv, const char *text)
{
  purple_conv_chat_send (PURPLE_CONV_CHAT (conv), text);
  /* ngircd's flood control holds back lines sent too close together */
  e2e_spin (150);
}

typedef struct {
  guint from;
  const char *needle;
} LineQuery;

static gboolean
answer_written (gpointer data)
{
  LineQuery *q = data;

  return e2e_find_line (CHANNEL, q->from, ANSWER_FLAGS, q->needle) >= 0;
}

static const char *
command_answer (const char *cmdline, const char *needle)
{
  g_autofree char *error = NULL;
  g_autofree char *markup = g_markup_escape_text (cmdline, -1);
  LineQuery q = { e2e_lines->len, needle };

  g_assert_cmpint (purple_cmd_do_command (fx.alice_conv, cmdline, markup, &error), ==, PURPLE_CMD_STATUS_OK);
  g_assert_true (e2e_wait (answer_written, &q, 20000));
  return ((E2eLine *) e2e_lines->pdata[e2e_find_line (CHANNEL, q.from, ANSWER_FLAGS, needle)])->message;
}

/* Nothing of an answer reached the room: bob's side received no line of it. */
static void
assert_not_posted (guint from, const char *needle)
{
  e2e_spin (500);
  g_assert_cmpint (e2e_find_line (CHANNEL, from, PURPLE_MESSAGE_RECV, needle), ==, -1);
}

static void
talk (void)
{
  gint64 before = alice_room_count ();

  send_as (fx.bob_conv, "I think the new office is too far from the station");
  send_as (fx.alice_conv, "lunch at noon anyone?");
  send_as (fx.bob_conv, "alice: can you book the meeting room for Friday?");
  send_as (fx.alice_conv, "I'll book it after lunch");
  send_as (fx.bob_conv, "ok the office grew on me, the commute is fine now");
  g_assert_true (e2e_wait (stored_at_least, GINT_TO_POINTER ((int) before + 5), 20000));
}

static void
test_ask (void)
{
  guint from;
  const char *answer;

  talk ();
  from = e2e_lines->len;
  answer = command_answer ("catchup ask how did bob's view of the office change?", "Asked:");
  /* bob's row, both states in time order, the newer marked as the latest */
  g_assert_nonnull (strstr (answer, "too far from the station"));
  g_assert_nonnull (strstr (answer, "grew on me"));
  g_assert_true (strstr (answer, "too far from the station") < strstr (answer, "grew on me"));
  g_assert_nonnull (strstr (answer, "(latest)"));
  assert_not_posted (from, "Asked:");
}

static void
test_ask_everyone (void)
{
  guint from = e2e_lines->len;
  const char *answer = command_answer ("catchup ask what does everyone think of the office?", "Asked:");

  /* a row per person of the room */
  g_assert_nonnull (strstr (answer, "bob"));
  g_assert_nonnull (strstr (answer, "alice"));
  assert_not_posted (from, "Asked:");
}

static void
test_about (void)
{
  guint from = e2e_lines->len;
  const char *answer = command_answer ("catchup @alice", "Catch-up on alice");

  /* what she said, what she was asked, and her open commitment */
  g_assert_nonnull (strstr (answer, "lunch at noon"));
  g_assert_nonnull (strstr (answer, "book the meeting room"));
  g_assert_nonnull (strstr (answer, "Open commitments"));
  g_assert_nonnull (strstr (answer, "book it after lunch"));
  assert_not_posted (from, "Catch-up on");
}

/* With a chat model in the preferences, the model's short answer comes first, each sentence with the ids it
 * cites, then the evidence; nothing of it reaches the room. The test server answers with sentences that cite
 * the evidence and some the checks drop, which a notice reports. */
static void
test_ask_model (void)
{
  g_autofree char *endpoint = NULL;
  const char *answer;
  GPid pid = 0;
  guint port = test_server_start (fx.dir, &pid);
  guint from = e2e_lines->len;

  if (!test_need_server (port))
    return;
  endpoint = g_strdup_printf ("http://127.0.0.1:%u/s/ask.e2e/v1", port);
  purple_prefs_set_string ("/plugins/core/catchup/endpoint", endpoint);
  purple_prefs_set_string ("/plugins/core/catchup/chat_model", "test-chat");
  answer = command_answer ("catchup ask how did bob's view of the office change?", "Answer:");
  g_assert_nonnull (strstr (answer, "Asked:"));
  g_assert_nonnull (strstr (answer, " said: "));
  g_assert_nonnull (strstr (answer, " ["));
  g_assert_nonnull (strstr (answer, "left out"));
  /* the evidence follows the answer */
  g_assert_nonnull (strstr (answer, "Evidence:"));
  g_assert_nonnull (strstr (answer, "grew on me"));
  g_assert_true (strstr (answer, "Answer:") < strstr (answer, "Evidence:"));
  g_assert_cmpint (e2e_find_line (CHANNEL, from, ANSWER_FLAGS, "Asking the model"), >=, 0);
  assert_not_posted (from, "Answer:");
  purple_prefs_set_string ("/plugins/core/catchup/endpoint", "");
  purple_prefs_set_string ("/plugins/core/catchup/chat_model", "");
  test_server_stop (pid);
}

static void
test_usage_and_unknown (void)
{
  guint from = e2e_lines->len;
  const char *usage = command_answer ("catchup ask", "Usage: /catchup ask");
  const char *unknown = command_answer ("catchup @nobody", "nobody");

  g_assert_nonnull (usage);
  g_assert_nonnull (strstr (unknown, "Nobody called"));
  /* neither went to the room */
  g_assert_cmpint (e2e_find_line (CHANNEL, from, PURPLE_MESSAGE_SEND, "catchup"), ==, -1);
  assert_not_posted (from, "catchup");
}

int
main (int argc, char **argv)
{
  g_autofree char *user_dir = NULL;
  int rc;

  g_test_init (&argc, &argv, NULL);
  fx.dir = test_tmp_dir ("catchup-e2e-ask-XXXXXX");
  fx.ngircd = e2e_start_ngircd (fx.dir, &fx.port);
  if (fx.ngircd == NULL)
    {
      g_printerr ("ngircd is not available: skipped\n");
      test_remove_tree (fx.dir);
      return 77; /* automake's "skipped" */
    }
  user_dir = g_build_filename (fx.dir, "purple", NULL);
  fx.db_path = g_build_filename (user_dir, "catchup", "history.db", NULL);

  e2e_client_init (user_dir);
  e2e_load_plugin ();
  fx.alice = e2e_account_online ("alice@127.0.0.1", "prpl-irc", NULL, configure_irc, NULL);
  fx.bob = e2e_account_online ("bob@127.0.0.1", "prpl-irc", NULL, configure_irc, NULL);
  fx.alice_conv = e2e_join (fx.alice, CHANNEL, CHANNEL);
  fx.bob_conv = e2e_join (fx.bob, CHANNEL, CHANNEL);

  g_test_add_func ("/catchup/e2e-ask/ask", test_ask);
  g_test_add_func ("/catchup/e2e-ask/ask-everyone", test_ask_everyone);
  g_test_add_func ("/catchup/e2e-ask/about", test_about);
  g_test_add_func ("/catchup/e2e-ask/ask-model", test_ask_model);
  g_test_add_func ("/catchup/e2e-ask/usage-and-unknown", test_usage_and_unknown);
  rc = g_test_run ();

  e2e_client_quit ();
  g_subprocess_send_signal (fx.ngircd, SIGTERM);
  g_subprocess_wait (fx.ngircd, NULL, NULL);
  g_object_unref (fx.ngircd);
  test_remove_tree (fx.dir);
  return rc;
}
