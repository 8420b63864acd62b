/* What a user meets of the plugin over IRC, end to end: a real ngircd on 127.0.0.1, the plugin in a headless
 * libpurple client, other participants as raw IRC connections. The first line of a capped catch-up, the answers
 * to wrong arguments, /help catchup, posting only after the preview's Post, and a settings dialog that refuses
 * what it cannot take. Dialogs are answered through the request UI ops, as a user would. */

#include "config.h"

#include <signal.h>
#include <string.h>

#include <gio/gio.h>

#include <cmds.h>
#include <prefs.h>
#include <util.h>

#include "catchup.h"
#include "e2e-client.h"
#include "e2e-irc.h"
#include "../test-util.h"

#define CHANNEL "#ux"
#define PREFS "/plugins/core/catchup"

static struct {
  char *dir;
  GSubprocess *ngircd;
  guint16 port;
  PurpleAccount *account;
  PurpleConversation *conv;
  char *db_path;
  E2eIrcPeer *peers[3];   /* mira, tomas, jon */
  guint n_said;           /* lines the peers said */
} fx;

/* ---------- helpers ---------- */

static guint
stored_turns (void)
{
  g_autoptr (CatchupStore) store = catchup_store_open (fx.db_path, NULL);
  g_autofree char *spec = g_strdup_printf ("prpl-irc/%s/%s", purple_normalize (fx.account,
                                           purple_account_get_username (fx.account)), CHANNEL);
  gint64 room = store ? catchup_store_find_room (store, spec, NULL) : 0;

  return room ? (guint) catchup_store_count_turns (store, room, G_MININT64, NULL) : 0;
}

static gboolean
stored_all (gpointer data)
{
  guint n = stored_turns ();

  if (n < fx.n_said)
    g_usleep (50000);
  return n >= fx.n_said;
}

/* Peer i (round robin keeps each connection below the server's flood limit) says text. */
static void
say (guint i, const char *text)
{
  e2e_irc_peer_say (fx.peers[i % G_N_ELEMENTS (fx.peers)], text);
  fx.n_said++;
  e2e_spin (60);
}

static void
say_numbered (guint n, const char *what)
{
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *text = g_strdup_printf ("%s line %u about the deploy window", what, i + 1);

      say (i, text);
    }
  g_assert_true (e2e_wait (stored_all, NULL, 30000));
  /* Times are whole seconds and being present counts its own second: a catch-up must come in a later one. */
  e2e_spin (1100);
}

static void
do_command (const char *cmdline)
{
  e2e_command (fx.conv, cmdline);
}

/* The first line for the user alone after from that contains needle (waiting for it). */
static const char *
wait_local (guint from, const char *needle)
{
  const char *line = e2e_wait_message (CHANNEL, from, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_NO_LOG, needle, 30000);

  g_assert_nonnull (line);
  return line;
}

/* Lines the plugin wrote for the user alone (the room's own notices, such as joins, are logged). */
static guint
local_lines_since (guint from)
{
  guint n = 0;

  for (guint i = from; i < e2e_lines->len; i++)
    n += (((E2eLine *) e2e_lines->pdata[i])->flags & PURPLE_MESSAGE_NO_LOG) != 0;
  return n;
}

static guint
received_total (void)
{
  guint n = 0;

  for (guint i = 0; i < G_N_ELEMENTS (fx.peers); i++)
    n += fx.peers[i]->received->len;
  return n;
}

/* ---------- words ---------- */

/* Each wrong argument: exactly one local line, one line long, naming what was typed and what would work; nothing
 * reaches the room. */
static void
test_wrong_arguments (void)
{
  static const struct {
    const char *cmd, *typed, *hint;
  } cases[] = {
    { "catchup 0", "“0”", "/catchup 50" },
    { "catchup -5", "“-5”", "/catchup 50" },
    { "catchup 1s", "“1s”", "45m" },
    { "catchup foo", "“foo”", "/help catchup" },
    { "catchup 2h and more", "one argument", "/help catchup" },
  };
  guint heard = received_total ();

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      guint from = e2e_lines->len;
      const E2eLine *line;

      do_command (cases[i].cmd);
      e2e_spin (200);
      g_assert_cmpuint (local_lines_since (from), ==, 1);
      line = e2e_lines->pdata[e2e_find_line (CHANNEL, from, PURPLE_MESSAGE_NO_LOG, NULL)];
      g_assert_cmpint (line->flags & PURPLE_MESSAGE_SYSTEM, !=, 0);
      g_assert_null (strstr (line->message, "<br>"));
      g_assert_nonnull (strstr (line->message, cases[i].typed));
      g_assert_nonnull (strstr (line->message, cases[i].hint));
      g_assert_cmpuint (strlen (line->message), <, 160);
    }
  e2e_spin (300);
  g_assert_cmpuint (received_total (), ==, heard);
}

/* /help catchup lists every subcommand, one a line; /catchup help writes the same list. */
static void
test_help (void)
{
  static const char *const subcommands[] = {
    "/catchup:", "/catchup N:", "/catchup 2h, 45m, 1d:", "/catchup post", "/catchup settings:",
    "/catchup status:", "/catchup forget:", "/catchup import-logs:", "/catchup ask QUESTION:",
    "/catchup @nick:", "/catchup help:",
  };
  GList *help = purple_cmd_help (fx.conv, "catchup");
  g_auto (GStrv) lines = NULL;
  const char *local;
  guint from = e2e_lines->len;

  g_assert_cmpuint (g_list_length (help), ==, 1);
  lines = g_strsplit (help->data, "<br>", -1);
  g_list_free (help);
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + G_N_ELEMENTS (subcommands));
  for (guint i = 0; i < G_N_ELEMENTS (subcommands); i++)
    g_assert_true (g_str_has_prefix (lines[i + 1], subcommands[i]));

  do_command ("catchup help");
  local = wait_local (from, "/catchup import-logs:");
  for (guint i = 0; i < G_N_ELEMENTS (subcommands); i++)
    g_assert_nonnull (strstr (local, subcommands[i]));
}

/* ---------- the cap ---------- */

/* Runs cmd, checks the first line of the catch-up it starts (begins with start and, if not NULL, ends with end;
 * the room's maximum named only then), and waits for the catch-up. */
static void
assert_first_line (const char *cmd, const char *start, const char *end)
{
  guint from = e2e_lines->len;
  const char *line;

  do_command (cmd);
  line = wait_local (from, "Catching up");
  g_assert_true (g_str_has_prefix (line, start));
  if (end != NULL)
    g_assert_true (g_str_has_suffix (line, end));
  else
    g_assert_null (strstr (line, "maximum"));
  wait_local (from, "<b>Catch-up</b>");
}

/* A window larger than the room's maximum says so on its first line, with the count that would cover it all:
 * without a known last present (the room's newest, whole history counted) and since the last time present. */
static void
test_cap_said (void)
{
  purple_prefs_set_int (PREFS "/defaults/max_window", 20);
  say_numbered (30, "capped");
  assert_first_line ("catchup", "Catching up on the last 20 of 30 messages since", "maximum; /catchup 30 for all)…");
  /* The catch-up counts as being present: what follows is the next window. */
  say_numbered (25, "later");
  assert_first_line ("catchup", "Catching up on the last 20 of 25 messages since", "maximum; /catchup 25 for all)…");
  /* What the line offers works: all 25, and no cap said. */
  assert_first_line ("catchup 25", "Catching up on 25 messages since", NULL);
  purple_prefs_set_int (PREFS "/defaults/max_window", 500);
}

/* ---------- posting with consent ---------- */

static const char *const conversation[][2] = {
  { "0", "morning all. the deploy of the search service failed again at 07:40" },
  { "1", "same error as yesterday? the index migration timing out?" },
  { "0", "yes, the migration holds the lock for more than 10 minutes and the health check gives up" },
  { "2", "I tried the fallback this morning: serve the old index read-only while the new one builds" },
  { "2", "it worked on staging, queries stayed under 200 ms" },
  { "1", "the fallback doubles the disk usage for an hour though" },
  { "0", "disk is fine, we have 40% free on every node" },
  { "1", "mira, what about writes during that hour?" },
  { "2", "they go to a queue and are replayed when the new index is live" },
  { "0", "so, decision: let's go with the fallback from this morning for tonight's deploy" },
  { "2", "great, I'll write it up in the runbook, tomas can you watch the disk graphs?" },
  { "1", "yes, I'll be around from 20:00" },
};

/* The lines a preview shows, its wrapped continuations (indented by two spaces) joined again. */
static GPtrArray *
preview_lines (const char *dialog_text)
{
  g_auto (GStrv) rows = NULL;
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);
  const char *secondary = strchr (strchr (dialog_text, '\n') + 1, '\n') + 1;

  rows = g_strsplit (secondary, "\n", -1);
  for (guint i = 0; rows[i] != NULL; i++)
    if (g_str_has_prefix (rows[i], "  ") && lines->len > 0)
      {
        char *joined = g_strconcat (lines->pdata[lines->len - 1], " ", rows[i] + 2, NULL);

        g_free (lines->pdata[lines->len - 1]);
        lines->pdata[lines->len - 1] = joined;
      }
    else
      g_ptr_array_add (lines, g_strdup (rows[i]));
  return lines;
}

typedef struct {
  E2eIrcPeer *peer;
  guint from, n;
} Heard;

static gboolean
heard_all (gpointer data)
{
  Heard *h = data;

  return h->peer->received->len >= h->from + h->n;
}

/* Cancel sends nothing; Post sends exactly the previewed lines, which carry the resolved references and name
 * nobody in a way that highlights them, with no character a terminal client counts differently. */
static void
test_post_consent (void)
{
  E2eIrcPeer *mira = fx.peers[0];
  guint dialogs = e2e_requests.n_action_dialogs;
  guint heard;
  guint from;
  g_autoptr (GPtrArray) preview = NULL;
  const char *summary;
  Heard h;
  guint before;

  for (guint i = 0; i < G_N_ELEMENTS (conversation); i++)
    say (atoi (conversation[i][0]), conversation[i][1]);
  g_assert_true (e2e_wait (stored_all, NULL, 30000));
  e2e_spin (500);
  heard = received_total ();
  purple_prefs_set_bool (PREFS "/defaults/allow_post", TRUE);

  /* Cancel */
  from = e2e_lines->len;
  e2e_requests.action = 1;
  do_command ("catchup post 3");
  wait_local (from, "Not posted.");
  g_assert_cmpuint (e2e_requests.n_action_dialogs, ==, dialogs + 1);
  g_assert_true (g_str_has_prefix (e2e_requests.last_text, "Post catch-up\nSend this catch-up to " CHANNEL));
  e2e_spin (1500);
  g_assert_cmpuint (received_total (), ==, heard);

  /* Post */
  from = e2e_lines->len;
  before = mira->received->len;
  e2e_requests.action = 0;
  do_command ("catchup post 3");
  summary = wait_local (from, "<b>Catch-up</b>");
  g_assert_true (e2e_wait (heard_all, &(Heard) { mira, before, 1 }, 20000));
  preview = preview_lines (e2e_requests.last_text);
  h = (Heard) { mira, before, preview->len };
  g_assert_true (e2e_wait (heard_all, &h, 30000));
  e2e_spin (500);
  g_assert_cmpuint (mira->received->len, ==, h.from + preview->len);
  for (guint i = 0; i < preview->len; i++)
    {
      const char *sent = mira->received->pdata[h.from + i];

      g_assert_cmpstr (sent, ==, preview->pdata[i]);
      g_assert_null (strstr (sent, "\xe2\x80\x8d"));   /* no zero-width joiner */
      g_assert_true (g_utf8_validate (sent, -1, NULL));
    }
  g_assert_true (g_str_has_prefix (preview->pdata[0], "[catch-up] "));
  /* Nobody named is highlighted: a nick only ever appears split by the mark. */
  for (guint i = 1; i < preview->len; i++)
    {
      const char *sent = preview->pdata[i];

      g_assert_null (strstr (sent, "mira"));
      g_assert_null (strstr (sent, "tomas"));
    }
  /* A reference the catch-up resolved is posted in words. */
  if (strstr (summary, "↳") != NULL)
    {
      gboolean found = FALSE;

      for (guint i = 1; i < preview->len; i++)
        found |= strstr (preview->pdata[i], " — ") != NULL;
      g_assert_true (found);
    }
  purple_prefs_set_bool (PREFS "/defaults/allow_post", FALSE);
}

/* ---------- the settings dialog ---------- */

static void
set_typed (const char *const *values)
{
  g_clear_pointer (&e2e_requests.field_values, g_hash_table_unref);
  e2e_requests.field_values = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; values[i] != NULL; i += 2)
    g_hash_table_insert (e2e_requests.field_values, (gpointer) values[i], (gpointer) values[i + 1]);
}

/* Wrong numbers bring the dialog back as typed, with a line per field naming it and its range; nothing is saved
 * until all are right. Finch's and Pidgin's choice fields carry the length and the language. */
static void
test_settings_refused (void)
{
  static const char *const wrong[] = {
    "catchup-budget", "999999999", "catchup-threshold", "abc", "catchup-max-window", "-5", NULL
  };
  static const char *const right[] = {
    "catchup-budget", "2048", "catchup-threshold", "5", "catchup-max-window", "300", "catchup-language", "9", NULL
  };
  guint dialogs = e2e_requests.n_fields_dialogs;

  e2e_requests.leave_fields_open = TRUE;
  do_command ("catchup settings");
  g_assert_cmpuint (e2e_requests.n_fields_dialogs, ==, dialogs + 1);
  g_assert_cmpstr (g_hash_table_lookup (e2e_requests.seen_fields, "catchup-budget"), ==, "1024");
  g_assert_cmpstr (g_hash_table_lookup (e2e_requests.seen_fields, "catchup-length"), ==, "1");
  g_assert_cmpstr (g_hash_table_lookup (e2e_requests.seen_fields, "catchup-language"), ==, "0");

  set_typed (wrong);
  e2e_answer_fields ();
  g_assert_cmpuint (e2e_requests.n_fields_dialogs, ==, dialogs + 2);
  g_assert_nonnull (strstr (e2e_requests.last_text, "Memory budget (tokens): “999999999” is not a whole number "
                                                    "from 64 to 65536."));
  g_assert_nonnull (strstr (e2e_requests.last_text, "…if at least this many messages arrived: “abc” is not a "
                                                    "whole number from 1 to 100000."));
  g_assert_nonnull (strstr (e2e_requests.last_text, "Catch up on at most this many messages: “-5” is not a whole "
                                                    "number from 1 to 100000."));
  /* what was typed comes back, nothing clamped */
  g_assert_cmpstr (g_hash_table_lookup (e2e_requests.seen_fields, "catchup-budget"), ==, "999999999");
  g_assert_cmpstr (g_hash_table_lookup (e2e_requests.seen_fields, "catchup-max-window"), ==, "-5");

  set_typed (right);
  e2e_answer_fields ();
  g_assert_cmpuint (e2e_requests.n_fields_dialogs, ==, dialogs + 2);

  /* saved as typed, shown so the next time */
  g_clear_pointer (&e2e_requests.field_values, g_hash_table_unref);
  do_command ("catchup settings");
  g_assert_cmpuint (e2e_requests.n_fields_dialogs, ==, dialogs + 3);
  for (guint i = 0; right[i] != NULL; i += 2)
    g_assert_cmpstr (g_hash_table_lookup (e2e_requests.seen_fields, right[i]), ==, right[i + 1]);
  g_assert_null (strstr (e2e_requests.last_text, "is not a whole number"));
  e2e_answer_fields ();
  e2e_requests.leave_fields_open = FALSE;
}

/* ---------- times ---------- */

#define SPAN_ROOM "#span"

/* A day's lines from the day before yesterday to an hour ago, stored by a connection of the test's own (as an
 * import would): every time of the catch-up is in the local zone, none in UTC, and the lines carry their
 * weekday once the catch-up spans days. */
static void
test_times_across_days (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = catchup_store_open (fx.db_path, &error);
  g_autoptr (GPtrArray) msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  g_autoptr (GDateTime) first = NULL;
  g_autofree char *weekday = NULL;
  gint64 now = g_get_real_time () / G_USEC_PER_SEC;
  gint64 room;
  PurpleConversation *conv;
  const char *summary;
  guint from;

  g_assert_no_error (error);
  room = catchup_store_ensure_room (store, "prpl-irc", purple_normalize (fx.account,
                                    purple_account_get_username (fx.account)), SPAN_ROOM, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (conversation); i++)
    {
      g_autofree char *id = g_strdup_printf ("span-%u", i);

      g_ptr_array_add (msgs, catchup_message_new (id, now - 2 * 86400 + (gint64) i * 4 * 3600,
                                                  i % 2 ? "tomas" : "mira", conversation[i][1]));
    }
  g_assert_true (catchup_store_add_batch (store, room, msgs, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (catchup_index_update (store, room, &error));
  g_assert_no_error (error);
  g_clear_pointer (&store, catchup_store_close);

  conv = e2e_join (fx.account, SPAN_ROOM, SPAN_ROOM);
  g_assert_nonnull (conv);
  from = e2e_lines->len;
  e2e_command (conv, "catchup 12");
  summary = e2e_wait_message (SPAN_ROOM, from, PURPLE_MESSAGE_SYSTEM, "<b>Catch-up</b>", 30000);
  g_assert_nonnull (summary);
  g_assert_null (strstr (summary, "UTC"));
  first = g_date_time_new_from_unix_local (now - 2 * 86400);
  weekday = g_date_time_format (first, "%a %H:%M");
  /* the headline starts at the first line, in local time with its weekday; a line shows its day too */
  g_assert_nonnull (strstr (summary, weekday));
  g_assert_nonnull (strstr (summary, "<font color=\"#777777\">"));
  {
    g_autofree char *line_time = g_strdup_printf ("#777777\">%.3s ", weekday);

    g_assert_nonnull (strstr (summary, line_time));
  }
}

/* ---------- for you ---------- */

#define OPEN_ROOM "#open"

/* A request to the user from three days ago that nobody closed: the catch-up of today's lines shows it under
 * "For you", marked as from before the window; the plugin passes the user's nick in that room. */
static void
test_for_you_open_request (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (GPtrArray) msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  PurpleConversation *conv = e2e_join (fx.account, OPEN_ROOM, OPEN_ROOM);
  const char *me;
  g_autofree char *request = NULL;
  gint64 now = g_get_real_time () / G_USEC_PER_SEC;
  gint64 room;
  const char *summary;
  guint from;

  g_assert_nonnull (conv);
  me = purple_conv_chat_get_nick (PURPLE_CONV_CHAT (conv));
  request = g_strdup_printf ("%s: can you send the advisory text to the distros list?", me);
  store = catchup_store_open (fx.db_path, &error);
  g_assert_no_error (error);
  room = catchup_store_ensure_room (store, "prpl-irc", purple_normalize (fx.account,
                                    purple_account_get_username (fx.account)), OPEN_ROOM, &error);
  g_assert_no_error (error);
  g_ptr_array_add (msgs, catchup_message_new ("open-0", now - 3 * 86400 - 600, me, "back from the conference"));
  g_ptr_array_add (msgs, catchup_message_new ("open-1", now - 3 * 86400, "tomas", request));
  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *id = g_strdup_printf ("open-%u", i + 2);

      g_ptr_array_add (msgs, catchup_message_new (id, now - 3600 + (gint64) i * 60, i % 2 ? "tomas" : "mira",
                                                  conversation[i][1]));
    }
  g_assert_true (catchup_store_add_batch (store, room, msgs, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (catchup_index_update (store, room, &error));
  g_assert_no_error (error);
  g_assert_true (catchup_records_update (store, room, 0, NULL, &error));
  g_assert_no_error (error);
  g_clear_pointer (&store, catchup_store_close);

  from = e2e_lines->len;
  e2e_command (conv, "catchup 4");
  summary = e2e_wait_message (OPEN_ROOM, from, PURPLE_MESSAGE_SYSTEM, "<b>Catch-up</b>", 30000);
  g_assert_nonnull (summary);
  g_test_message ("%s", summary);
  g_assert_nonnull (strstr (summary, "For you"));
  g_assert_nonnull (strstr (summary, "advisory text"));
  g_assert_nonnull (strstr (summary, "still open, from before this window"));
}

/* ---------- set-up ---------- */

static gboolean
everyone_in (gpointer data)
{
  return g_list_length (purple_conv_chat_get_users (PURPLE_CONV_CHAT (fx.conv))) == 1 + G_N_ELEMENTS (fx.peers);
}

static void
configure_irc (PurpleAccount *account, gpointer data)
{
  purple_account_set_int (account, "port", fx.port);
  purple_account_set_bool (account, "ssl", FALSE);
}

int
main (int argc, char **argv)
{
  static const char *const nicks[] = { "mira", "tomas", "jon" };
  g_autofree char *user_dir = NULL;
  int rc;

  g_test_init (&argc, &argv, NULL);
  fx.dir = test_tmp_dir ("catchup-e2e-ux-XXXXXX");
  user_dir = g_build_filename (fx.dir, "purple", NULL);
  fx.db_path = g_build_filename (user_dir, "catchup", "history.db", NULL);
  if ((fx.ngircd = e2e_start_ngircd (fx.dir, &fx.port)) == NULL)
    return 77; /* automake's "skipped": no ngircd */
  e2e_client_init (user_dir);
  e2e_load_plugin ();
  purple_prefs_set_int (PREFS "/post_interval_ms", 100);
  purple_prefs_set_int (PREFS "/settle_ms", 300);
  purple_prefs_set_bool (PREFS "/defaults/auto", FALSE);
  fx.account = e2e_account_online ("alice@127.0.0.1", "prpl-irc", NULL, configure_irc, NULL);
  fx.conv = e2e_join (fx.account, CHANNEL, CHANNEL);
  for (guint i = 0; i < G_N_ELEMENTS (nicks); i++)
    fx.peers[i] = e2e_irc_peer_new (fx.port, nicks[i], CHANNEL);
  g_assert_true (e2e_wait (everyone_in, NULL, 10000));

  g_test_add_func ("/catchup/e2e-ux/wrong-arguments", test_wrong_arguments);
  g_test_add_func ("/catchup/e2e-ux/help", test_help);
  g_test_add_func ("/catchup/e2e-ux/cap-said", test_cap_said);
  g_test_add_func ("/catchup/e2e-ux/post-consent", test_post_consent);
  g_test_add_func ("/catchup/e2e-ux/settings-refused", test_settings_refused);
  g_test_add_func ("/catchup/e2e-ux/times-across-days", test_times_across_days);
  g_test_add_func ("/catchup/e2e-ux/for-you-open-request", test_for_you_open_request);
  rc = g_test_run ();

  e2e_client_quit ();
  e2e_irc_stop_server (fx.ngircd);
  test_remove_tree (fx.dir);
  return rc;
}
