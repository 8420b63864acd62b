/*
 * Floods, end to end: a peer sends 200 messages/s into an ngircd channel and another 100 messages/s into a
 * prosody MUC, both for FLOOD_SECONDS (60 by default; E2E_FLOOD_SECONDS overrides), while the plugin indexes
 * them in a headless libpurple client. Every message must be stored exactly once (0 lost, 0 duplicates),
 * the main loop is never late by more than MAX_LATE_MS (a repeating timer measures its own lateness), and
 * the memory stays bounded. The peers are raw protocol clients on threads of their own, so the main loop
 * carries only the client's work. Then the writer's faults as the user meets them: a database locked by
 * another program is told once in the conversation and its recovery too, and unloading with messages that
 * cannot be written returns within a second and says so.
 */

#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <gio/gio.h>
#include <sqlite3.h>

#include <prefs.h>
#include <util.h>

#include "catchup.h"
#include "e2e-client.h"
#include "../test-util.h"

#define CHANNEL "#flood"
#define MUC "flood@conference.localhost"
#define IRC_RATE 200
#define XMPP_RATE 100
#define MAX_LATE_MS 50
/* What the client may grow by while flooded: the captured lines of the test harness and SQLite's page cache
 * are most of it; an unbounded queue would pass this within seconds. */
#define MAX_RSS_GROWTH_MB 64
#define TICK_MS 10

/* Under ASan/UBSan the test hunts memory errors on the same paths, not throughput: the instrumented client
 * runs several times slower (and ASan's quarantine holds freed memory), so the floods are a quarter of the
 * rate for 10 s and only loss and duplicates are asserted. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif
#define RATE_DIVISOR (SANITIZED ? 4 : 1)

static struct {
  char *dir;
  GSubprocess *ngircd, *prosody;
  guint16 irc_port, xmpp_port;
  PurplePlugin *plugin;
  PurpleAccount *irc, *xmpp;
  PurpleConversation *irc_conv, *xmpp_conv;
  char *db_path;
  guint flood_seconds;
} fx;

/* ---------- servers ---------- */

static gboolean
start_servers (void)
{
  /* MaxPenaltyTime = 0: no flood penalties, so the server relays at the peer's rate. */
  fx.ngircd = e2e_start_ngircd_with (fx.dir, "\tMaxPenaltyTime = 0\n\tPingTimeout = 300\n\tPongTimeout = 300\n",
                                     &fx.irc_port);
  if (fx.ngircd == NULL)
    return FALSE;
  fx.prosody = e2e_start_prosody (fx.dir, "  muc_room_default_history_length = 0\n",
                                  (const char *const[]) { "alice", "peer", NULL }, &fx.xmpp_port);
  return TRUE;
}

static void
configure_irc (PurpleAccount *account, gpointer data)
{
  purple_account_set_int (account, "port", fx.irc_port);
}

static void
configure_xmpp (PurpleAccount *account, gpointer data)
{
  purple_account_set_string (account, "connect_server", "127.0.0.1");
  purple_account_set_int (account, "port", fx.xmpp_port);
  purple_account_set_string (account, "connection_security", "opportunistic_tls");
  purple_account_set_bool (account, "auth_plain_in_clear", TRUE);
}

/* ---------- peers: raw protocol clients on their own threads, with blocking sockets ---------- */

typedef struct {
  GSocketConnection *conn;
  GDataInputStream *in;
  GOutputStream *out;
  const char *prefix;    /* of every flood line: "irc" or "xmpp" */
  char *(*frame) (const char *text);  /* the protocol's line or stanza for a text */
  guint rate, seconds;
  guint n_sent;
  GThread *thread, *drain;
  gboolean failed;
} Peer;

static void
peer_send (Peer *p, const char *data)
{
  if (!g_output_stream_write_all (p->out, data, strlen (data), NULL, NULL, NULL))
    p->failed = TRUE;
}

static GSocketConnection *
connect_to (guint16 port)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();

  return g_socket_client_connect_to_host (client, "127.0.0.1", port, NULL, NULL);
}

/* The text of flood line i: unique, and chat-like. */
static char *
flood_text (const char *prefix, guint i)
{
  return g_strdup_printf ("%s flood line %05u: the build on staging is green again, deploying batch %u", prefix, i,
                          i % 17);
}

/* Sends at the rate, on a schedule (not sleeps between lines), so a slow write does not lower the rate. */
static gpointer
flood_thread (gpointer data)
{
  Peer *p = data;
  gint64 t0 = g_get_monotonic_time ();
  guint total = p->rate * p->seconds;

  for (guint i = 0; i < total && !p->failed; i++)
    {
      gint64 due = t0 + (gint64) i * G_USEC_PER_SEC / p->rate;
      gint64 now = g_get_monotonic_time ();
      g_autofree char *text = flood_text (p->prefix, i);
      g_autofree char *line = p->frame (text);

      if (due > now)
        g_usleep ((gulong) (due - now));
      peer_send (p, line);
      p->n_sent++;
    }
  return NULL;
}

/* Reads and drops what the server sends (a MUC echoes every line to its sender), so it never stalls. */
static gpointer
drain_thread (gpointer data)
{
  Peer *p = data;
  char buf[8192];

  while (g_input_stream_read (G_INPUT_STREAM (p->in), buf, sizeof buf, NULL, NULL) > 0)
    ;
  return NULL;
}

/* Reads lines until one holds needle; FALSE at the end of the stream. */
static gboolean
irc_wait_for (Peer *p, const char *needle)
{
  for (;;)
    {
      g_autofree char *line = g_data_input_stream_read_line (p->in, NULL, NULL, NULL);

      if (line == NULL)
        return FALSE;
      if (g_str_has_prefix (line, "PING "))
        {
          g_autofree char *pong = g_strdup_printf ("PONG %s\r\n", line + 5);
          peer_send (p, pong);
        }
      if (strstr (line, needle) != NULL)
        return TRUE;
    }
}

static char *
irc_frame (const char *text)
{
  return g_strdup_printf ("PRIVMSG " CHANNEL " :%s\r\n", text);
}

static void
peer_open (Peer *p, guint16 port)
{
  p->conn = connect_to (port);
  g_assert_nonnull (p->conn);
  p->in = g_data_input_stream_new (g_io_stream_get_input_stream (G_IO_STREAM (p->conn)));
  g_data_input_stream_set_newline_type (p->in, G_DATA_STREAM_NEWLINE_TYPE_ANY);
  p->out = g_io_stream_get_output_stream (G_IO_STREAM (p->conn));
}

/* Registers as nick and joins the channel; returns once the peer is in, its input drained from then on. */
static void
irc_peer_join (Peer *p, const char *nick)
{
  g_autofree char *hello = g_strdup_printf ("NICK %s\r\nUSER %s 0 * :%s\r\n", nick, nick, nick);

  peer_open (p, fx.irc_port);
  peer_send (p, hello);
  g_assert_true (irc_wait_for (p, " 001 "));
  peer_send (p, "JOIN " CHANNEL "\r\n");
  g_assert_true (irc_wait_for (p, " 366 "));
  p->drain = g_thread_new ("irc-drain", drain_thread, p);
}

static void
irc_peer_start (Peer *p)
{
  irc_peer_join (p, "flooder");
  p->frame = irc_frame;
  p->thread = g_thread_new ("irc-flood", flood_thread, p);
}

/* XMPP: reads until needle shows (stanzas are not parsed; the test server's answers are known). */
static gboolean
xmpp_wait_for (Peer *p, const char *needle)
{
  g_autoptr (GString) seen = g_string_new (NULL);
  char buf[4096];
  gssize n;

  while ((n = g_input_stream_read (G_INPUT_STREAM (p->in), buf, sizeof buf, NULL, NULL)) > 0)
    {
      g_string_append_len (seen, buf, n);
      if (strstr (seen->str, needle) != NULL)
        return TRUE;
    }
  return FALSE;
}

static void
xmpp_open_stream (Peer *p)
{
  peer_send (p, "<?xml version='1.0'?><stream:stream to='localhost' xmlns='jabber:client' "
                "xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>");
  g_assert_true (xmpp_wait_for (p, "</stream:features>"));
}

static char *
xmpp_frame (const char *text)
{
  g_autofree char *body = g_markup_escape_text (text, -1);

  return g_strdup_printf ("<message to='" MUC "' type='groupchat'><body>%s</body></message>", body);
}

static void
xmpp_peer_start (Peer *p)
{
  static const char plain[] = "\0peer\0secret";
  g_autofree char *auth = g_base64_encode ((const guchar *) plain, sizeof plain - 1);
  g_autofree char *stanza = g_strdup_printf ("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>%s"
                                             "</auth>", auth);

  peer_open (p, fx.xmpp_port);
  xmpp_open_stream (p);
  peer_send (p, stanza);
  g_assert_true (xmpp_wait_for (p, "<success"));
  xmpp_open_stream (p);
  peer_send (p, "<iq type='set' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>flood"
                "</resource></bind></iq>");
  g_assert_true (xmpp_wait_for (p, "</iq>"));
  peer_send (p, "<presence to='" MUC "/peer'><x xmlns='http://jabber.org/protocol/muc'>"
                "<history maxstanzas='0'/></x></presence>");
  /* status 110: the room's presence of ourselves, the last of the join */
  g_assert_true (xmpp_wait_for (p, "110"));
  p->drain = g_thread_new ("xmpp-drain", drain_thread, p);
  p->frame = xmpp_frame;
  p->thread = g_thread_new ("xmpp-flood", flood_thread, p);
}

static void
peer_finish (Peer *p)
{
  g_thread_join (p->thread);
  /* a shutdown wakes the drain's blocked read, a close would not */
  g_socket_shutdown (g_socket_connection_get_socket (p->conn), TRUE, TRUE, NULL);
  g_thread_join (p->drain);
  g_io_stream_close (G_IO_STREAM (p->conn), NULL, NULL);
  g_clear_object (&p->in);
  g_clear_object (&p->conn);
}

/* ---------- measuring the client ---------- */

typedef struct {
  gint64 t0, last;       /* monotonic µs of the start and of the previous tick */
  gint64 last_cpu;       /* the main thread's CPU time at the previous tick */
  gint64 max_late_us;
  gint64 max_busy_us;    /* the most CPU time the main thread spent between two ticks, beyond the tick */
  guint64 rss_start_kb, rss_max_kb;
  guint ticks;
} Probe;

static guint64
rss_kb (void)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL) ||
      (line = strstr (status, "VmRSS:")) == NULL)
    return 0;
  return g_ascii_strtoull (line + 6, NULL, 10);
}

/* A tick is due TICK_MS after the previous one ran: how much later it runs is how long the loop was busy. */
/* CPU time of the calling thread: what lateness the loop's own work explains, apart from a busy machine. */
static gint64
thread_cpu_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

static gboolean
probe_tick (gpointer data)
{
  Probe *probe = data;
  gint64 now = g_get_monotonic_time ();
  gint64 cpu = thread_cpu_us ();
  gint64 late = now - probe->last - TICK_MS * 1000;

  if (probe->last_cpu != 0)
    probe->max_busy_us = MAX (probe->max_busy_us, MIN (cpu - probe->last_cpu, late));
  probe->last_cpu = cpu;

  if (late > probe->max_late_us && g_getenv ("E2E_VERBOSE"))
    g_printerr ("main loop late %.1f ms at %.1f s\n", late / 1000.0, (now - probe->t0) / 1e6);
  probe->max_late_us = MAX (probe->max_late_us, late);
  probe->last = now;
  if (++probe->ticks % 100 == 0)
    probe->rss_max_kb = MAX (probe->rss_max_kb, rss_kb ());
  return G_SOURCE_CONTINUE;
}

/* ---------- the store, read from its own connection ---------- */

static gint64
room_of (CatchupStore *store, const char *protocol, PurpleAccount *account, const char *name)
{
  g_autofree char *spec = g_strdup_printf ("%s/%s/%s", protocol,
                                           purple_normalize (account, purple_account_get_username (account)),
                                           name);

  return catchup_store_find_room (store, spec, NULL);
}

typedef struct {
  const char *protocol;
  PurpleAccount *account;
  const char *room;
  const char *prefix;
  guint expected;
  guint stored, distinct, lost;
} Tally;

/* Counts the stored flood lines of a room: all of them, the distinct ones and the ones missing. */
static void
tally (Tally *t)
{
  g_autoptr (CatchupStore) store = catchup_store_open (fx.db_path, NULL);
  gint64 room = store ? room_of (store, t->protocol, t->account, t->room) : 0;
  g_autoptr (GPtrArray) msgs = room ? catchup_store_range (store, room, NULL, NULL, 0, NULL) : NULL;
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree char *prefix = g_strdup_printf ("%s flood line ", t->prefix);

  t->stored = t->distinct = 0;
  for (guint i = 0; msgs != NULL && i < msgs->len; i++)
    {
      CatchupMessage *m = msgs->pdata[i];

      if (!g_str_has_prefix (m->text, prefix))
        continue;
      t->stored++;
      g_hash_table_add (seen, m->text);
    }
  t->distinct = g_hash_table_size (seen);
  t->lost = 0;
  for (guint i = 0; i < t->expected; i++)
    {
      g_autofree char *text = flood_text (t->prefix, i);

      t->lost += !g_hash_table_contains (seen, text);
    }
}

static gboolean
tally_complete (gpointer data)
{
  Tally *t = data;

  tally (t);
  if (t->distinct < t->expected)
    g_usleep (100000);
  return t->distinct >= t->expected;
}

/* ---------- tests ---------- */

static void
test_flood (void)
{
  Peer irc = { .prefix = "irc", .rate = IRC_RATE / RATE_DIVISOR, .seconds = fx.flood_seconds };
  Peer xmpp = { .prefix = "xmpp", .rate = XMPP_RATE / RATE_DIVISOR, .seconds = fx.flood_seconds };
  Tally irc_tally = { "prpl-irc", fx.irc, CHANNEL, "irc", 0 };
  Tally xmpp_tally = { "prpl-jabber", fx.xmpp, MUC, "xmpp", 0 };
  Probe probe = { 0 };
  guint timer;
  gint64 t0;

  irc_peer_start (&irc);
  if (fx.xmpp != NULL)
    xmpp_peer_start (&xmpp);
  probe.rss_start_kb = probe.rss_max_kb = rss_kb ();
  probe.t0 = probe.last = t0 = g_get_monotonic_time ();
  timer = g_timeout_add (TICK_MS, probe_tick, &probe);
  /* the client runs its main loop while the peers flood from their threads */
  while (g_get_monotonic_time () - t0 < (gint64) fx.flood_seconds * G_USEC_PER_SEC)
    g_main_context_iteration (NULL, TRUE);
  /* measured while the peers flood and the client indexes; the test's own reading below is not the client's */
  g_source_remove (timer);
  peer_finish (&irc);
  if (fx.xmpp != NULL)
    peer_finish (&xmpp);
  g_assert_false (irc.failed);
  g_assert_false (xmpp.failed);

  /* the last lines are still on their way through the servers and the writer */
  irc_tally.expected = irc.n_sent;
  xmpp_tally.expected = xmpp.n_sent;
  e2e_wait (tally_complete, &irc_tally, 30000);
  if (fx.xmpp != NULL)
    e2e_wait (tally_complete, &xmpp_tally, 30000);
  probe.rss_max_kb = MAX (probe.rss_max_kb, rss_kb ());

  g_printerr ("flood%s: %u s; irc %u sent, %u stored, %u lost, %u duplicates; xmpp %u sent, %u stored, %u lost, "
              "%u duplicates; main loop late at most %.1f ms (busy with its own work at most %.1f ms); RSS %"
              G_GUINT64_FORMAT " -> max %" G_GUINT64_FORMAT " KB\n",
              SANITIZED ? " (sanitizer build, a quarter of the rate)" : "", fx.flood_seconds, irc.n_sent,
              irc_tally.stored, irc_tally.lost, irc_tally.stored - irc_tally.distinct,
              xmpp.n_sent, xmpp_tally.stored, xmpp_tally.lost, xmpp_tally.stored - xmpp_tally.distinct,
              probe.max_late_us / 1000.0, probe.max_busy_us / 1000.0, probe.rss_start_kb, probe.rss_max_kb);
  g_assert_cmpuint (irc.n_sent, ==, irc.rate * fx.flood_seconds);
  g_assert_cmpuint (irc_tally.lost, ==, 0);
  g_assert_cmpuint (irc_tally.stored, ==, irc_tally.distinct);
  if (fx.xmpp != NULL)
    {
      g_assert_cmpuint (xmpp.n_sent, ==, xmpp.rate * fx.flood_seconds);
      g_assert_cmpuint (xmpp_tally.lost, ==, 0);
      g_assert_cmpuint (xmpp_tally.stored, ==, xmpp_tally.distinct);
    }
  if (SANITIZED)
    return;
  /* The loop's own work must never hold it that long. Wall-clock lateness also counts the other programs of
   * the machine: asserted unless the machine had more runnable work than cores (then it is only reported). */
  g_assert_cmpint (probe.max_busy_us, <=, MAX_LATE_MS * 1000);
  if (!test_machine_busy ())
    g_assert_cmpint (probe.max_late_us, <=, MAX_LATE_MS * 1000);
  else
    g_printerr ("flood: the machine is loaded (load %.1f on %u cores): wall-clock lateness only reported\n",
                test_machine_load (), g_get_num_processors ());
  g_assert_cmpuint (probe.rss_max_kb - probe.rss_start_kb, <, MAX_RSS_GROWTH_MB * 1024);
}

/* ---------- faults as the user meets them ---------- */

static guint
count_lines (guint from, const char *substring)
{
  guint n = 0;

  for (int i = from; (i = e2e_find_line (CHANNEL, i, PURPLE_MESSAGE_SYSTEM, substring)) >= 0; i++)
    n++;
  return n;
}

typedef struct {
  const char *prefix;
  guint n;
} Said;

static gboolean
said_stored (gpointer data)
{
  Said *s = data;
  Tally t = { "prpl-irc", fx.irc, CHANNEL, s->prefix, s->n };

  tally (&t);
  if (t.distinct < s->n)
    g_usleep (50000);
  return t.distinct == s->n && t.stored == s->n;
}

static Peer *
talker (void)
{
  static Peer p = { .prefix = "talk" };

  if (p.conn == NULL)
    irc_peer_join (&p, "talker");
  return &p;
}

static sqlite3 *
lock_database (void)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (fx.db_path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), ==, SQLITE_OK);
  return db;
}

static void
say_lines (const char *prefix, guint from, guint to)
{
  for (guint i = from; i < to; i++)
    {
      g_autofree char *text = flood_text (prefix, i);

      g_autofree char *line = irc_frame (text);

      peer_send (talker (), line);
    }
}

/* Another program holds the database: the conversation hears of it once, and of the recovery; nothing is lost. */
static void
test_locked_told_once (void)
{
  Said said = { "locked", 20 };
  guint from = e2e_lines->len;
  sqlite3 *db = lock_database ();

  say_lines ("locked", 0, 10);
  g_assert_true (e2e_wait_line (CHANNEL, from, PURPLE_MESSAGE_SYSTEM, "another program keeps the database locked",
                                15000));
  say_lines ("locked", 10, 20);
  e2e_spin (3000);
  g_assert_cmpuint (count_lines (from, "could not save history"), ==, 1);
  g_assert_cmpint (sqlite3_exec (db, "COMMIT", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  g_assert_true (e2e_wait_line (CHANNEL, from, PURPLE_MESSAGE_SYSTEM, "saves history again", 15000));
  g_assert_true (e2e_wait (said_stored, &said, 15000));
  g_assert_cmpuint (count_lines (from, "saves history again"), ==, 1);
  g_assert_cmpuint (count_lines (from, "could not save history"), ==, 1);
}

static gboolean
notice_shown (gpointer data)
{
  for (guint i = 0; i < e2e_notices->len; i++)
    if (strstr (e2e_notices->pdata[i], data) != NULL)
      return TRUE;
  return FALSE;
}

/* Unloading while the database is locked: it returns within a second and says what could not be written. */
static void
test_unload_reports (void)
{
  guint from = e2e_lines->len;
  sqlite3 *db = lock_database ();
  gint64 t0;

  say_lines ("unload", 0, 5);
  g_assert_true (e2e_wait_line (CHANNEL, from, PURPLE_MESSAGE_SYSTEM, "could not save history", 15000));
  /* all five are in and kept */
  e2e_spin (1000);
  t0 = g_get_monotonic_time ();
  g_assert_true (purple_plugin_unload (fx.plugin));
  g_assert_cmpint (g_get_monotonic_time () - t0, <, G_TIME_SPAN_SECOND);
  g_assert_true (notice_shown ("could not save all history"));
  g_assert_true (notice_shown ("5 messages could not be saved"));
  sqlite3_exec (db, "COMMIT", NULL, NULL, NULL);
  sqlite3_close (db);
}

int
main (int argc, char **argv)
{
  g_autofree char *user_dir = NULL;
  const char *seconds = g_getenv ("E2E_FLOOD_SECONDS");
  int rc;

  g_test_init (&argc, &argv, NULL);
  fx.flood_seconds = seconds ? (guint) g_ascii_strtoull (seconds, NULL, 10) : SANITIZED ? 10 : 60;
  fx.flood_seconds = MAX (fx.flood_seconds, 1);
  fx.dir = test_tmp_dir ("catchup-e2e-flood-XXXXXX");
  if (!start_servers ())
    {
      g_printerr ("ngircd is not available: skipped\n");
      test_remove_tree (fx.dir);
      return 77; /* automake's "skipped" */
    }
  user_dir = g_build_filename (fx.dir, "purple", NULL);
  fx.db_path = g_build_filename (user_dir, "catchup", "history.db", NULL);

  e2e_client_init (user_dir);
  fx.plugin = e2e_load_plugin ();
  fx.irc = e2e_account_online ("alice@127.0.0.1", "prpl-irc", NULL, configure_irc, NULL);
  fx.irc_conv = e2e_join (fx.irc, CHANNEL, CHANNEL);
  if (fx.prosody != NULL)
    {
      fx.xmpp = e2e_account_online ("alice@localhost/e2e", "prpl-jabber", "secret", configure_xmpp, NULL);
      fx.xmpp_conv = e2e_join (fx.xmpp, MUC, MUC);
    }
  else
    g_printerr ("prosody is not available: the XMPP flood is skipped\n");

  g_test_add_func ("/catchup/e2e-flood/flood", test_flood);
  g_test_add_func ("/catchup/e2e-flood/locked-told-once", test_locked_told_once);
  g_test_add_func ("/catchup/e2e-flood/unload-reports", test_unload_reports);
  rc = g_test_run ();

  e2e_client_quit ();
  e2e_stop_server (fx.ngircd);
  e2e_stop_server (fx.prosody);
  test_remove_tree (fx.dir);
  return rc;
}
