#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include "catchup.h"
#include "catchup-embed-cache.h"
#include "catchup-store-private.h"
#include "test-util.h"

typedef TestStoreFixture Fixture;

static void
fixture_setup (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  fx->dir = test_tmp_dir ("catchup-store-XXXXXX");
  /* A folder that does not exist yet: open must create it. */
  fx->path = g_build_filename (fx->dir, "sub", "history.db", NULL);
  fx->store = test_store_with_room (fx->path, "prpl-irc", "me@irc.example", "#room", &fx->room);
}

static void
fixture_teardown (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  test_store_fixture_teardown (fx);
}

#define TEST(name, func) \
  g_test_add ("/catchup/store/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)

static gboolean
add (CatchupStore *store, gint64 room, const char *id, gint64 ts, const char *speaker, const char *text,
     gint64 *row)
{
  g_autoptr (CatchupMessage) msg = catchup_message_new (id, ts, speaker, text);
  g_autoptr (GError) error = NULL;
  gboolean inserted = FALSE;

  g_assert_true (catchup_store_add (store, room, msg, &inserted, &error));
  g_assert_no_error (error);
  g_assert_cmpint (msg->row, >, 0);
  g_assert_nonnull (msg->id);
  if (row)
    *row = msg->row;
  return inserted;
}

static void
test_open_pragmas (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_assert_cmpstr (catchup_store_get_path (fx->store), ==, fx->path);
  g_assert_cmpint (test_sql_count (fx->store, "PRAGMA user_version", 0), ==, CATCHUP_STORE_SCHEMA_VERSION);
  g_assert_cmpint (test_sql_count (fx->store, "PRAGMA foreign_keys", 0), ==, 1);
  g_assert_cmpint (test_sql_count (fx->store, "PRAGMA synchronous", 0), ==, 1); /* NORMAL */
  g_assert_true (g_file_test (fx->path, G_FILE_TEST_IS_REGULAR));
}

static void
test_idempotent (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  gint64 row1, row2;

  /* Same source id: stored once, and the duplicate learns the stored row. */
  g_assert_true (add (fx->store, fx->room, "m1", 100, "alice", "hello", &row1));
  g_assert_false (add (fx->store, fx->room, "m1", 100, "alice", "hello again", &row2));
  g_assert_cmpint (row1, ==, row2);

  /* No id: same ts + speaker + text is the same message. */
  g_assert_true (add (fx->store, fx->room, NULL, 200, "bob", "ping", &row1));
  g_assert_false (add (fx->store, fx->room, NULL, 200, "bob", "ping", &row2));
  g_assert_cmpint (row1, ==, row2);
  /* ...but different text at the same second is another message. */
  g_assert_true (add (fx->store, fx->room, NULL, 200, "bob", "pong", NULL));
  g_assert_true (add (fx->store, fx->room, NULL, 200, "carol", "ping", NULL));

  g_assert_cmpint (catchup_store_count (fx->store, fx->room, NULL), ==, 4);
}

static void
test_add_batch (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GPtrArray) msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  g_autoptr (GError) error = NULL;
  guint n = 0;

  for (int i = 0; i < 50; i++)
    {
      g_autofree char *text = g_strdup_printf ("message number %d about the lock", i);
      g_ptr_array_add (msgs, catchup_message_new (NULL, 1000 + i, i % 2 ? "alice" : "bob", text));
    }
  g_assert_true (catchup_store_add_batch (fx->store, fx->room, msgs, &n, &error));
  g_assert_no_error (error);
  g_assert_true (catchup_index_update (fx->store, fx->room, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 50);
  g_assert_true (catchup_store_add_batch (fx->store, fx->room, msgs, &n, &error));
  g_assert_no_error (error);
  g_assert_true (catchup_index_update (fx->store, fx->room, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 0);
  g_assert_cmpint (catchup_store_count (fx->store, fx->room, NULL), ==, 50);
  g_assert_cmpuint (catchup_db_transaction_depth (catchup_store_db (fx->store)), ==, 0);
}

static void
test_get_message (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (CatchupMessage) msg = catchup_message_new ("x1", 42, "alice", "body text");
  g_autoptr (CatchupMessage) got = NULL;
  g_autoptr (CatchupMessage) by_row = NULL;
  g_autoptr (GError) error = NULL;

  msg->alias = g_strdup ("Alice A.");
  msg->flags = CATCHUP_MESSAGE_ACTION | CATCHUP_MESSAGE_DELAYED;
  g_assert_true (catchup_store_add (fx->store, fx->room, msg, NULL, &error));
  g_assert_no_error (error);

  got = catchup_store_get_message (fx->store, fx->room, "x1", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (got->id, ==, "x1");
  g_assert_cmpint (got->ts, ==, 42);
  g_assert_cmpstr (got->speaker, ==, "alice");
  g_assert_cmpstr (got->alias, ==, "Alice A.");
  g_assert_cmpstr (got->text, ==, "body text");
  g_assert_cmpuint (got->flags, ==, CATCHUP_MESSAGE_ACTION | CATCHUP_MESSAGE_DELAYED);

  by_row = catchup_store_get_message_by_row (fx->store, msg->row, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (by_row->id, ==, "x1");

  g_assert_null (catchup_store_get_message (fx->store, fx->room, "nope", &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND);
}

static void
test_room_lookup (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  gint64 other, xmpp, found;

  g_assert_cmpint (catchup_store_ensure_room (fx->store, "prpl-irc", "me@irc.example", "#room", &error), ==,
                   fx->room);
  other = catchup_store_ensure_room (fx->store, "prpl-irc", "me@other.example", "#room", &error);
  xmpp = catchup_store_ensure_room (fx->store, "prpl-jabber", "me@x.example/Home", "team@muc.x.example", &error);
  g_assert_no_error (error);
  g_assert_cmpint (other, !=, fx->room);

  found = catchup_store_find_room (fx->store, "#room", &error);
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_AMBIGUOUS);
  g_assert_cmpint (found, ==, 0);
  g_clear_error (&error);

  g_assert_cmpint (catchup_store_find_room (fx->store, "prpl-irc/me@other.example/#room", &error), ==, other);
  g_assert_no_error (error);
  g_assert_cmpint (catchup_store_find_room (fx->store, "team@muc.x.example", &error), ==, xmpp);
  g_assert_no_error (error);
  /* An account with a '/' of its own. */
  g_assert_cmpint (catchup_store_find_room (fx->store, "prpl-jabber/me@x.example/Home/team@muc.x.example",
                                            &error),
                   ==, xmpp);
  g_assert_no_error (error);

  g_assert_cmpint (catchup_store_find_room (fx->store, "#missing", &error), ==, 0);
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND);
}

static void
test_room_info (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupRoomInfo) info = NULL;
  g_autoptr (CatchupRoomInfo) empty_info = NULL;
  g_autoptr (GPtrArray) rooms = NULL;
  gint64 empty = catchup_store_ensure_room (fx->store, "prpl-irc", "me@irc.example", "#empty", &error);

  add (fx->store, fx->room, "a", 300, "alice", "later", NULL);
  add (fx->store, fx->room, "b", 100, "bob", "earlier", NULL);
  g_assert_true (catchup_store_set_last_present (fx->store, fx->room, 250, &error));
  g_assert_no_error (error);

  info = catchup_store_room_info (fx->store, fx->room, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (info->protocol, ==, "prpl-irc");
  g_assert_cmpstr (info->account, ==, "me@irc.example");
  g_assert_cmpstr (info->name, ==, "#room");
  g_assert_cmpint (info->n_messages, ==, 2);
  g_assert_cmpint (info->first_ts, ==, 100);
  g_assert_cmpint (info->last_ts, ==, 300);
  g_assert_cmpint (info->last_present, ==, 250);

  empty_info = catchup_store_room_info (fx->store, empty, &error);
  g_assert_no_error (error);
  g_assert_cmpint (empty_info->n_messages, ==, 0);
  g_assert_cmpint (empty_info->first_ts, ==, 0);

  rooms = catchup_store_list_rooms (fx->store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rooms->len, ==, 2);

  g_assert_null (catchup_store_room_info (fx->store, 9999, &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (catchup_store_set_last_present (fx->store, 9999, 1, &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND);
}

static void
assert_ids (GPtrArray *msgs, const char *expected)
{
  g_autoptr (GString) ids = g_string_new (NULL);

  g_assert_nonnull (msgs);
  for (guint i = 0; i < msgs->len; i++)
    {
      CatchupMessage *msg = g_ptr_array_index (msgs, i);
      g_string_append_printf (ids, "%s%s", i ? " " : "", msg->id);
    }
  g_assert_cmpstr (ids->str, ==, expected);
}

static void
test_order (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) all = NULL;
  g_autoptr (GPtrArray) middle = NULL;
  g_autoptr (GPtrArray) limited = NULL;
  g_autoptr (GPtrArray) before_end = NULL;
  g_autoptr (GPtrArray) before_c = NULL;
  g_autoptr (GPtrArray) since = NULL;
  g_autoptr (CatchupMessage) c = NULL;
  gint64 other = catchup_store_ensure_room (fx->store, "prpl-irc", "me@irc.example", "#other", &error);
  CatchupPos first, last, pos_c;

  add (fx->store, fx->room, "a", 100, "alice", "one", NULL);
  add (fx->store, fx->room, "b", 200, "bob", "two", NULL);
  add (fx->store, fx->room, "c", 200, "carol", "three", NULL); /* same second: insertion order */
  add (fx->store, fx->room, "d", 300, "dave", "four", NULL);
  add (fx->store, other, "z", 150, "zed", "elsewhere", NULL);
  /* Late history playback: an older message stored last still sorts by its time. */
  add (fx->store, fx->room, "late", 150, "eve", "late arrival", NULL);

  all = catchup_store_range (fx->store, fx->room, NULL, NULL, 0, &error);
  g_assert_no_error (error);
  assert_ids (all, "a late b c d");

  first = catchup_pos_of (g_ptr_array_index (all, 1));
  last = catchup_pos_of (g_ptr_array_index (all, 3));
  middle = catchup_store_range (fx->store, fx->room, &first, &last, 0, &error);
  g_assert_no_error (error);
  assert_ids (middle, "late b c");

  limited = catchup_store_range (fx->store, fx->room, &first, NULL, 2, &error);
  g_assert_no_error (error);
  assert_ids (limited, "late b");

  before_end = catchup_store_before (fx->store, fx->room, NULL, 3, &error);
  g_assert_no_error (error);
  assert_ids (before_end, "b c d");

  c = catchup_store_get_message (fx->store, fx->room, "c", &error);
  g_assert_no_error (error);
  pos_c = catchup_pos_of (c);
  before_c = catchup_store_before (fx->store, fx->room, &pos_c, 10, &error);
  g_assert_no_error (error);
  assert_ids (before_c, "a late b");

  since = catchup_store_since (fx->store, fx->room, 150, &error);
  g_assert_no_error (error);
  assert_ids (since, "late b c d");
}

static void
test_forget (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GPtrArray) msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  g_autoptr (GError) error = NULL;
  gint64 keep = catchup_store_ensure_room (fx->store, "prpl-irc", "me@irc.example", "#keep", &error);

  for (int i = 0; i < 200; i++)
    {
      g_autofree char *text = g_strdup_printf ("turn %d: we chose the zebrafish lock design for release %d", i, i);
      g_ptr_array_add (msgs, catchup_message_new (NULL, 1000 + i, "alice", text));
    }
  g_assert_true (catchup_store_add_batch (fx->store, fx->room, msgs, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (catchup_index_update (fx->store, fx->room, &error));
  g_assert_no_error (error);
  add (fx->store, keep, "k", 5, "bob", "zebrafish elsewhere", NULL);
  g_assert_true (catchup_index_update (fx->store, keep, &error));
  g_assert_no_error (error);
  g_assert_true (catchup_store_set_setting (fx->store, fx->room, "auto", "on", &error));
  g_assert_true (catchup_store_add_nick_change (fx->store, fx->room, 1001, "alice", "alice_", &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM chunks WHERE room = ?1", fx->room), >, 0);

  g_assert_true (catchup_retention_forget_room (fx->store, fx->room, &error));
  g_assert_no_error (error);

  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM messages WHERE room = ?1", fx->room), ==, 0);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM rooms WHERE id = ?1", fx->room), ==, 0);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM chunks WHERE room = ?1", fx->room), ==, 0);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM room_settings WHERE room = ?1", fx->room), ==, 0);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM nicks WHERE room = ?1", fx->room), ==, 0);
  /* Full-text rows: only the kept room's chunk may still match. */
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'zebrafish'", 0),
                   ==, 1);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'design'", 0),
                   ==, 0);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM chunks_fts", 0), ==,
                   test_sql_count (fx->store, "SELECT count(*) FROM chunks", 0));
  g_assert_cmpint (test_sql_count (fx->store, "PRAGMA integrity_check = 1", 0), ==, 0); /* "ok" reads as 0 */
  g_assert_cmpint (catchup_store_count (fx->store, keep, NULL), ==, 1);

  g_assert_cmpint (catchup_store_find_room (fx->store, "#room", &error), ==, 0);
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND);
}

static void
test_settings (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *unset = NULL;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *removed = NULL;

  unset = catchup_store_get_setting (fx->store, fx->room, "window", &error);
  g_assert_no_error (error);
  g_assert_null (unset);
  g_assert_true (catchup_store_set_setting (fx->store, fx->room, "window", "20", &error));
  first = catchup_store_get_setting (fx->store, fx->room, "window", &error);
  g_assert_cmpstr (first, ==, "20");
  g_assert_true (catchup_store_set_setting (fx->store, fx->room, "window", "50", &error));
  second = catchup_store_get_setting (fx->store, fx->room, "window", &error);
  g_assert_cmpstr (second, ==, "50");
  g_assert_true (catchup_store_set_setting (fx->store, fx->room, "window", NULL, &error));
  removed = catchup_store_get_setting (fx->store, fx->room, "window", &error);
  g_assert_no_error (error);
  g_assert_null (removed);

  /* Settings belong to an existing room. */
  g_assert_false (catchup_store_set_setting (fx->store, 9999, "window", "1", &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_DB);
}

static void
test_nick_changes (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupNicks) nicks = NULL;
  g_auto (GStrv) aliases = NULL;
  const char *const chain[] = { "bob", "bob_away", "bob2", NULL };

  for (int twice = 0; twice < 2; twice++)
    {
      g_assert_true (catchup_store_add_nick_change (fx->store, fx->room, 30, "bob", "bob_away", &error));
      g_assert_true (catchup_store_add_nick_change (fx->store, fx->room, 40, "bob_away", "bob2", &error));
      g_assert_no_error (error);
    }
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM nicks WHERE room = ?1", fx->room), ==, 2);

  /* Read back: the two renames chain bob to bob2, in their order. */
  nicks = catchup_nicks_load (fx->store, fx->room, &error);
  g_assert_no_error (error);
  aliases = catchup_nicks_aliases (nicks, "bob");
  g_assert_cmpstrv (aliases, chain);
}

static void
test_transactions (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;

  /* An inner rollback undoes only the inner level: the outer one still commits its own rows. */
  g_assert_true (catchup_store_begin (fx->store, &error));
  add (fx->store, fx->room, "t1", 1, "alice", "one", NULL);
  g_assert_true (catchup_store_begin (fx->store, &error));
  add (fx->store, fx->room, "t2", 2, "alice", "two", NULL);
  catchup_store_rollback (fx->store);
  g_assert_true (catchup_store_commit (fx->store, &error));
  g_assert_no_error (error);
  g_assert_cmpint (catchup_store_count (fx->store, fx->room, NULL), ==, 1);
  g_assert_null (catchup_store_get_message (fx->store, fx->room, "t2", NULL));

  /* An outer rollback takes the committed inner level with it. */
  g_assert_true (catchup_store_begin (fx->store, &error));
  g_assert_true (catchup_store_begin (fx->store, &error));
  add (fx->store, fx->room, "t4", 4, "alice", "four", NULL);
  g_assert_true (catchup_store_commit (fx->store, &error));
  catchup_store_rollback (fx->store);
  g_assert_false (catchup_store_in_transaction (fx->store));
  g_assert_cmpint (catchup_store_count (fx->store, fx->room, NULL), ==, 1);

  g_assert_true (catchup_store_begin (fx->store, &error));
  g_assert_true (catchup_store_begin (fx->store, &error));
  add (fx->store, fx->room, "t3", 3, "alice", "three", NULL);
  g_assert_true (catchup_store_commit (fx->store, &error));
  g_assert_true (catchup_store_commit (fx->store, &error));
  g_assert_no_error (error);
  g_assert_cmpint (catchup_store_count (fx->store, fx->room, NULL), ==, 2);
}

/* The turns of the chunks that sparse retrieval (the search behind every catch-up) finds for text, best first. */
static GPtrArray *
search_turns (CatchupStore *store, gint64 room, const char *text, guint top, GError **error)
{
  g_autoptr (GArray) hits = catchup_retrieve_sparse (store, room, text, NULL, top ? top : G_MAXINT, error);
  g_autoptr (GPtrArray) turns = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  if (hits == NULL)
    return NULL;
  for (guint i = 0; i < hits->len; i++)
    {
      g_autoptr (GPtrArray) chunk = catchup_index_chunk_turns (store, g_array_index (hits, CatchupHit, i).chunk, error);

      if (chunk == NULL)
        return NULL;
      while (chunk->len > 0)
        g_ptr_array_add (turns, g_ptr_array_steal_index (chunk, 0));
    }
  return g_steal_pointer (&turns);
}

static void
test_search (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) hits = NULL;
  g_autofree char *huge = NULL;
  gint64 other = catchup_store_ensure_room (fx->store, "prpl-irc", "me@irc.example", "#other", &error);
  const char *hostile[] = {
    "\"", "\"\"", "'", "it's \"quoted", "AND", "OR", "NOT", "NEAR", "NEAR(a b, 3)", "a AND OR NOT b",
    "*", "lock*", "^lock", "(", ")", "((lock)", "body:lock", "-lock", "+", "{a b}", ":", "🔒🚀 lock 🙂",
    "錠の解決策を再利用しよう", "ロック", "", "   ", "\\", "NULL", "%", "_", "\x01\x02",
  };

  add (fx->store, fx->room, "1", 10, "alice", "let's reuse that lock solution", NULL);
  add (fx->store, other, "2", 10, "bob", "lock in the other room", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (hostile); i++)
    add (fx->store, fx->room, NULL, 20 + i, "mallory", hostile[i], NULL);
  huge = g_strnfill (100 * 1024, 'x');
  memcpy (huge + 50000, " lock \"( NEAR ", 14);
  add (fx->store, fx->room, "huge", 100, "mallory", huge, NULL);
  /* search reads the chunk index, which single adds leave to catchup_index_update */
  g_assert_true (catchup_index_update (fx->store, fx->room, &error));
  g_assert_true (catchup_index_update (fx->store, other, &error));
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (hostile); i++)
    {
      g_autoptr (GPtrArray) res = search_turns (fx->store, fx->room, hostile[i], 10, &error);
      g_assert_no_error (error);
      g_assert_nonnull (res);
    }
  hits = search_turns (fx->store, fx->room, huge, 10, &error);
  g_assert_no_error (error);
  g_clear_pointer (&hits, g_ptr_array_unref);

  hits = search_turns (fx->store, fx->room, "lock", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, >=, 2);
  for (guint i = 0; i < hits->len; i++)
    g_assert_cmpstr (((CatchupMessage *) g_ptr_array_index (hits, i))->speaker, !=, "bob");
}

/* A second connection that cannot get the write lock reports DB_BUSY, not a generic failure. */
static void
test_busy (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) other = catchup_store_open (fx->path, &error);
  g_autoptr (CatchupMessage) msg = catchup_message_new ("busy", 1, "alice", "waiting");

  g_assert_no_error (error);
  catchup_store_set_busy_timeout (other, 20); /* not 5 s in a unit test */
  g_assert_true (catchup_store_begin (fx->store, &error));
  g_assert_false (catchup_store_add (other, fx->room, msg, NULL, &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_DB_BUSY);
  g_clear_error (&error);
  g_assert_true (catchup_store_commit (fx->store, &error));
  g_assert_true (catchup_store_add (other, fx->room, msg, NULL, &error));
  g_assert_no_error (error);
}

/* A full disk (simulated by a page limit) is DB_FULL, and the failed batch leaves nothing behind. */
static void
test_full (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GPtrArray) msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  g_autoptr (GError) error = NULL;
  g_autofree char *limit = g_strdup_printf ("PRAGMA max_page_count = %" G_GINT64_FORMAT,
                                            test_sql_count (fx->store, "PRAGMA page_count", 0) + 2);
  g_autofree char *big = g_strnfill (4096, 'f');

  g_assert_true (catchup_db_exec (catchup_store_db (fx->store), limit, &error));
  g_assert_no_error (error);
  for (int i = 0; i < 64; i++)
    g_ptr_array_add (msgs, catchup_message_new (NULL, i, "alice", big + i));
  g_assert_false (catchup_store_add_batch (fx->store, fx->room, msgs, NULL, &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_DB_FULL);
  g_assert_cmpuint (catchup_db_transaction_depth (catchup_store_db (fx->store)), ==, 0);
  g_assert_cmpint (catchup_store_count (fx->store, fx->room, NULL), ==, 0);
}

/* ---------- retention ---------- */

#define PRUNE_CUTOFF 1100

/* n turns from ts0, step seconds apart; only those before the cutoff mention the quokka. */
static GPtrArray *
prune_messages (const char *tag, guint n, gint64 ts0, gint64 step)
{
  static const char *const topics[] = { "lock design", "release notes", "build farm", "flaky test", "backups" };
  static const char *const speakers[] = { "alice", "bob", "carol" };
  GPtrArray *msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  for (guint i = 0; i < n; i++)
    {
      gint64 ts = ts0 + (gint64) i * step;
      g_autofree char *id = g_strdup_printf ("%s-%u", tag, i);
      g_autofree char *text = g_strdup_printf ("%s %u: the %s needs %s%s", tag, i, topics[i % G_N_ELEMENTS (topics)],
                                               ts < PRUNE_CUTOFF ? "the quokka patch" : "the zebrafish review",
                                               i % 7 == 0 ? ", and a longer explanation of why it matters now" : "");

      g_ptr_array_add (msgs, catchup_message_new (id, ts, speakers[i % G_N_ELEMENTS (speakers)], text));
    }
  return msgs;
}

static gint64
prune_room (CatchupStore *store, const char *name, GPtrArray *msgs)
{
  g_autoptr (GError) error = NULL;
  gint64 room = catchup_store_ensure_room (store, "prpl-irc", "me@irc.example", name, &error);

  g_assert_no_error (error);
  if (msgs != NULL)
    {
      g_assert_true (catchup_store_add_batch (store, room, msgs, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (catchup_index_update (store, room, &error));
    }
  g_assert_no_error (error);
  return room;
}

/* A room's chunks by message id (rows differ between stores), token count, vector and text hash. */
static char *
index_signature (CatchupStore *store, gint64 room)
{
  g_autoptr (GString) out = g_string_new (NULL);
  sqlite3_stmt *st = NULL;

  g_assert_nonnull (st = catchup_db_prepare (catchup_store_db (store), "SELECT rows, tokens, hex (vec), hex (text_hash) FROM chunks"
                                       " WHERE room = ? ORDER BY first_ts, first_row", NULL));
  sqlite3_bind_int64 (st, 1, room);
  while (sqlite3_step (st) == SQLITE_ROW)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GPtrArray) turns = catchup_index_rows_turns (store, sqlite3_column_blob (st, 0),
                                                              sqlite3_column_bytes (st, 0), &error);
      /* the vector by its checksum keeps a failure's message readable */
      g_autofree char *vec = g_compute_checksum_for_string (G_CHECKSUM_MD5,
                                                            (const char *) sqlite3_column_text (st, 2), -1);

      g_assert_no_error (error);
      for (guint i = 0; i < turns->len; i++)
        g_string_append_printf (out, "%s ", ((CatchupMessage *) turns->pdata[i])->id);
      g_string_append_printf (out, "| %d | %.8s | %s\n", sqlite3_column_int (st, 1), vec,
                              sqlite3_column_text (st, 3));
    }
  sqlite3_reset (st);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The chunk FTS index as its vocabulary: term, documents, occurrences. */
static char *
fts_signature (CatchupStore *store)
{
  g_autoptr (GString) out = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  sqlite3_stmt *st = NULL;

  g_assert_true (catchup_db_exec (catchup_store_db (store), "CREATE VIRTUAL TABLE IF NOT EXISTS temp.test_vocab"
                                            " USING fts5vocab (main, chunks_fts, row)", &error));
  g_assert_no_error (error);
  g_assert_nonnull (st = catchup_db_prepare (catchup_store_db (store), "SELECT term, doc, cnt FROM temp.test_vocab ORDER BY term", NULL));
  while (sqlite3_step (st) == SQLITE_ROW)
    g_string_append_printf (out, "%s %d %d\n", sqlite3_column_text (st, 0), sqlite3_column_int (st, 1),
                            sqlite3_column_int (st, 2));
  sqlite3_reset (st);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
assert_fts_consistent (CatchupStore *store)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (catchup_db_exec (catchup_store_db (store), "INSERT INTO chunks_fts (chunks_fts) VALUES ('integrity-check')", &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM chunks_fts", 0), ==,
                   test_sql_count (store, "SELECT count(*) FROM chunks", 0));
}

/* Each named room's index in store equals a fresh store's one-batch index of the same remaining messages. */
static void
assert_index_fresh (CatchupStore *store, const char *const *names)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) fresh = catchup_store_open (":memory:", &error);
  g_autofree char *vocab = NULL, *fresh_vocab = NULL;

  g_assert_no_error (error);
  for (guint i = 0; names[i] != NULL; i++)
    {
      gint64 room = catchup_store_find_room (store, names[i], &error);
      g_autoptr (GPtrArray) left = catchup_store_range (store, room, NULL, NULL, 0, &error);
      g_autoptr (GPtrArray) copy = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
      g_autofree char *sig = NULL, *fresh_sig = NULL;
      gint64 fresh_room;

      g_assert_no_error (error);
      for (guint j = 0; j < left->len; j++)
        g_ptr_array_add (copy, catchup_message_copy (left->pdata[j]));
      fresh_room = prune_room (fresh, names[i], copy);
      sig = index_signature (store, room);
      fresh_sig = index_signature (fresh, fresh_room);
      g_assert_cmpstr (sig, ==, fresh_sig);
    }
  assert_fts_consistent (store);
  vocab = fts_signature (store);
  fresh_vocab = fts_signature (fresh);
  g_assert_cmpstr (vocab, ==, fresh_vocab);
}

static void
assert_all_since (GPtrArray *msgs, gint64 since)
{
  g_assert_nonnull (msgs);
  for (guint i = 0; i < msgs->len; i++)
    g_assert_cmpint (((CatchupMessage *) msgs->pdata[i])->ts, >=, since);
}

/* Search and memory building on a pruned room see only what is left. */
static void
assert_room_usable (CatchupStore *store, gint64 room)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) gone = search_turns (store, room, "quokka", 0, &error);
  g_autoptr (GPtrArray) hits = search_turns (store, room, "zebrafish review", 0, &error);
  g_autoptr (GPtrArray) window = catchup_store_before (store, room, NULL, 10, &error);
  g_autoptr (CatchupMemory) mem = NULL;
  CatchupMemoryOptions opts;

  g_assert_no_error (error);
  g_assert_cmpuint (gone->len, ==, 0);
  g_assert_cmpuint (hits->len, >, 0);
  assert_all_since (hits, PRUNE_CUTOFF);
  catchup_memory_options_init (&opts);
  mem = catchup_memory_build (store, room, window, &opts, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (mem->turns->len, >, 0);
  assert_all_since (mem->turns, PRUNE_CUTOFF);
}

static void
test_prune (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  static const char *const names[] = { "#room", "#other", "#gone", "#recent", NULL };
  g_autoptr (GPtrArray) room_msgs = prune_messages ("r", 150, 1000, 1);  /* 100 before the cutoff */
  g_autoptr (GPtrArray) other_msgs = prune_messages ("o", 60, 1000, 3);  /* 34 before */
  g_autoptr (GPtrArray) gone_msgs = prune_messages ("g", 5, 500, 1);     /* all 5 */
  g_autoptr (GPtrArray) recent_msgs = prune_messages ("n", 20, 2000, 1); /* none */
  g_autoptr (GPtrArray) late = prune_messages ("late", 1, 3000, 1);
  g_autoptr (GError) error = NULL;
  g_autofree char *recent_before = NULL, *recent_after = NULL;
  g_autofree char *setting = NULL;
  gint64 other, gone, recent;
  guint64 n_deleted = 0;

  g_assert_cmpint (prune_room (fx->store, "#room", room_msgs), ==, fx->room);
  other = prune_room (fx->store, "#other", other_msgs);
  gone = prune_room (fx->store, "#gone", gone_msgs);
  recent = prune_room (fx->store, "#recent", recent_msgs);
  g_assert_true (catchup_store_set_setting (fx->store, gone, "auto", "off", &error));
  g_assert_true (catchup_store_add_nick_change (fx->store, fx->room, 1060, "bob", "bob_", &error));
  g_assert_true (catchup_store_add_nick_change (fx->store, other, 1130, "bob_", "bob", &error));
  g_assert_no_error (error);
  recent_before = index_signature (fx->store, recent);

  g_assert_true (catchup_retention_prune (fx->store, PRUNE_CUTOFF, NULL, &n_deleted, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n_deleted, ==, 100 + 34 + 5);
  g_assert_cmpuint (catchup_db_transaction_depth (catchup_store_db (fx->store)), ==, 0);

  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM messages WHERE ts < 1100", 0), ==, 0);
  g_assert_cmpint (catchup_store_count (fx->store, fx->room, NULL), ==, 50);
  g_assert_cmpint (catchup_store_count (fx->store, other, NULL), ==, 26);
  g_assert_cmpint (catchup_store_count (fx->store, recent, NULL), ==, 20);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM nicks WHERE ts < 1100", 0), ==, 0);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM nicks", 0), ==, 1);
  /* an emptied room stays, with its settings and without index rows */
  g_assert_cmpint (catchup_store_count (fx->store, gone, NULL), ==, 0);
  setting = catchup_store_get_setting (fx->store, gone, "auto", &error);
  g_assert_cmpstr (setting, ==, "off");
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM chunks WHERE room = ?1", gone), ==, 0);
  /* a room with nothing old is not re-chunked */
  recent_after = index_signature (fx->store, recent);
  g_assert_cmpstr (recent_after, ==, recent_before);

  assert_index_fresh (fx->store, names);
  assert_room_usable (fx->store, fx->room);
  assert_room_usable (fx->store, other);

  /* the index state survives: a later message extends the pruned index like a fresh one */
  prune_room (fx->store, "#room", late);
  assert_index_fresh (fx->store, names);

  g_assert_true (catchup_retention_prune (fx->store, PRUNE_CUTOFF, NULL, &n_deleted, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n_deleted, ==, 0);
  g_assert_cmpint (test_sql_count (fx->store, "PRAGMA integrity_check = 1", 0), ==, 0); /* "ok" reads as 0 */
}

/* ---------- opening files ---------- */

static char *
tmp_db (const char *name, char **dir)
{
  *dir = test_tmp_dir ("catchup-store-XXXXXX");
  return g_build_filename (*dir, name, NULL);
}

static void
test_migrate_v1 (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *path = tmp_db ("v1.db", &dir);
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (CatchupMessage) msg = NULL;
  g_autofree char *value = NULL;
  sqlite3 *db = NULL;
  gint64 room;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  test_raw_frozen_schema (db, 1);
  test_raw_exec (db, "PRAGMA user_version = 1;"
                     "INSERT INTO rooms (id, protocol, account, name) VALUES (7, 'prpl-irc', 'me', '#old');"
                     "INSERT INTO messages (room, uid, ts, speaker, body) VALUES (7, 'u1', 50, 'alice', 'kept text');");
  sqlite3_close (db);

  store = catchup_store_open (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_sql_count (store, "PRAGMA user_version", 0), ==, CATCHUP_STORE_SCHEMA_VERSION);
  room = catchup_store_find_room (store, "#old", &error);
  g_assert_no_error (error);
  g_assert_cmpint (room, ==, 7);
  msg = catchup_store_get_message (store, room, "u1", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (msg->text, ==, "kept text");
  g_assert_true (catchup_store_set_setting (store, room, "k", "v", &error));
  value = catchup_store_get_setting (store, room, "k", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (value, ==, "v");
  g_clear_pointer (&store, catchup_store_close);

  /* Opening again migrates nothing and keeps everything. */
  store = catchup_store_open (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (catchup_store_count (store, room, NULL), ==, 1);
  g_clear_pointer (&store, catchup_store_close);
  test_remove_tree (dir);
}

/* A v2 file (chunks without text hashes, no embeddings table) keeps its data, and its chunks get the hashes the
 * index would have given them when the index next updates their room. */
static void
test_migrate_v2 (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *path = tmp_db ("v2.db", &dir);
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (CatchupMessage) msg = NULL;
  guint8 want[CATCHUP_TEXT_HASH_LEN];
  sqlite3_stmt *st;
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  test_raw_frozen_schema (db, 2);
  /* rows: the little-endian int64 1, the first message's row */
  test_raw_exec (db, "PRAGMA user_version = 2;"
                     "INSERT INTO rooms (id, protocol, account, name) VALUES (7, 'prpl-irc', 'me', '#old');"
                     "INSERT INTO messages (row, room, uid, ts, speaker, body) VALUES (1, 7, 'u1', 50, 'alice', 'kept');"
                     "INSERT INTO room_settings (room, key, value) VALUES (7, 'k', 'v');"
                     "INSERT INTO chunks (room, first_ts, first_row, last_ts, last_row, tokens, rows) "
                     "VALUES (7, 50, 1, 50, 1, 3, x'0100000000000000');"
                     "INSERT INTO index_state (room, max_row) VALUES (7, 1);");
  sqlite3_close (db);

  store = catchup_store_open (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_sql_count (store, "PRAGMA user_version", 0), ==, CATCHUP_STORE_SCHEMA_VERSION);
  /* v4: the message-level full-text index and its triggers are gone, the messages are not */
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'messages_%' AND ?1 = ?1",
                                   0), ==, 1 /* messages_order */);
  msg = catchup_store_get_message (store, 7, "u1", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (msg->text, ==, "kept");
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM embeddings WHERE ?1 = ?1", 0), ==, 0);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM chunks WHERE text_hash IS NULL AND ?1 = ?1", 0), ==, 1);
  g_assert_true (catchup_index_update (store, 7, &error));
  g_assert_no_error (error);
  catchup_index_text_hash ("alice: kept\n", want);
  st = catchup_db_prepare (catchup_store_db (store), "SELECT text_hash FROM chunks", &error);
  g_assert_no_error (error);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  g_assert_cmpint (sqlite3_column_bytes (st, 0), ==, CATCHUP_TEXT_HASH_LEN);
  g_assert_cmpmem (sqlite3_column_blob (st, 0), CATCHUP_TEXT_HASH_LEN, want, CATCHUP_TEXT_HASH_LEN);
  sqlite3_reset (st);

  /* new chunks get their hash when the index inserts them */
  {
    g_autoptr (CatchupMessage) m = catchup_message_new ("u2", 60, "bob", "more");
    g_autoptr (GPtrArray) batch = g_ptr_array_new ();

    gint64 room = catchup_store_ensure_room (store, "prpl-irc", "me", "#new", &error);

    g_assert_no_error (error);
    g_ptr_array_add (batch, m);
    g_assert_true (catchup_store_add_batch (store, room, batch, NULL, &error));
    g_assert_no_error (error);
    g_assert_true (catchup_index_update (store, room, &error));
    g_assert_no_error (error);
    g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM chunks WHERE room = ?1 AND text_hash IS NOT NULL",
                                     room),
                     ==, 1);
  }
  g_clear_pointer (&store, catchup_store_close);
  test_remove_tree (dir);
}

static void
test_future_version (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *path = tmp_db ("future.db", &dir);
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  test_raw_exec (db, "CREATE TABLE future (x); PRAGMA user_version = 99;");
  sqlite3_close (db);

  store = catchup_store_open (path, &error);
  g_assert_null (store);
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_DB);
  g_assert_nonnull (strstr (error->message, "99"));
  test_remove_tree (dir);
}

static void
test_corrupt (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *path = tmp_db ("garbage.db", &dir);
  g_autoptr (GString) garbage = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;

  while (garbage->len < 16384)
    g_string_append (garbage, "this is certainly not an SQLite database; ");
  g_assert_true (g_file_set_contents (path, garbage->str, (gssize) garbage->len, &error));
  store = catchup_store_open (path, &error);
  g_assert_null (store);
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_DB_CORRUPT);
  test_remove_tree (dir);
}

static void
test_unwritable (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *blocker = tmp_db ("plain-file", &dir);
  g_autofree char *path = g_build_filename (blocker, "sub", "history.db", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;

  /* A file where a folder should be: fails even for root, unlike permission bits. */
  g_assert_true (g_file_set_contents (blocker, "x", 1, &error));
  store = catchup_store_open (path, &error);
  g_assert_null (store);
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_IO);
  test_remove_tree (dir);
}

static void
test_memory (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = catchup_store_open (":memory:", &error);
  gint64 room;

  g_assert_no_error (error);
  room = catchup_store_ensure_room (store, "p", "a", "r", &error);
  g_assert_no_error (error);
  g_assert_true (add (store, room, NULL, 1, "s", "t", NULL));
}

/* What a catch-up window can hold: turns from a time on. */
static void
test_count_turns (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;

  add (fx->store, fx->room, "t1", 100, "ann", "first", NULL);
  add (fx->store, fx->room, "t2", 200, "bob", "second", NULL);
  add (fx->store, fx->room, "t3", 300, "ann", "third", NULL);
  g_assert_cmpint (catchup_store_count_turns (fx->store, fx->room, G_MININT64, &error), ==, 3);
  g_assert_cmpint (catchup_store_count_turns (fx->store, fx->room, 200, &error), ==, 2);
  g_assert_cmpint (catchup_store_count_turns (fx->store, fx->room, 301, &error), ==, 0);
  g_assert_no_error (error);
  g_assert_cmpint (catchup_store_count (fx->store, fx->room, &error), ==, 3);
}

/* Rows another program (or an older version) wrote with invalid UTF-8 are read back as valid text. */
static void
test_invalid_utf8_read (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = NULL;
  CatchupMessage *m;

  add (fx->store, fx->room, "u1", 100, "ann", "placeholder", NULL);
  g_assert_true (catchup_db_exec (catchup_store_db (fx->store),
                                     "UPDATE messages SET body = CAST (X'6c6f636b20ff20c3' AS TEXT),"
                                     " speaker = CAST (X'61fe' AS TEXT)", &error));
  g_assert_no_error (error);
  msgs = catchup_store_range (fx->store, fx->room, NULL, NULL, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (msgs->len, ==, 1);
  m = msgs->pdata[0];
  g_assert_cmpstr (m->text, ==, "lock \xef\xbf\xbd \xef\xbf\xbd");
  g_assert_cmpstr (m->speaker, ==, "a\xef\xbf\xbd");
}

/* A NaN vector, as older versions stored for a model's 1e999, is no stored vector. */
static void
test_embed_cache_nonfinite (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  const char *const texts[] = { "ann: good", "bo: nan" };
  const guint32 good[2] = { GUINT32_TO_LE (0x3f800000u), 0 }, nan[2] = { GUINT32_TO_LE (0x7fc00000u), 0 };
  const guint32 *vecs[] = { good, nan };
  g_autoptr (GError) error = NULL;
  g_autofree float *out = NULL;
  gboolean found[2] = { FALSE, TRUE };

  for (guint i = 0; i < 2; i++)
    {
      sqlite3_stmt *st =
        catchup_db_prepare (catchup_store_db (fx->store), "INSERT INTO embeddings (model, hash, vec) VALUES ('m:2', ?, ?)",
                               &error);
      guint8 hash[CATCHUP_TEXT_HASH_LEN];

      g_assert_no_error (error);
      catchup_index_text_hash (texts[i], hash);
      sqlite3_bind_blob (st, 1, hash, sizeof hash, SQLITE_TRANSIENT);
      sqlite3_bind_blob (st, 2, vecs[i], 2 * sizeof (guint32), SQLITE_TRANSIENT);
      g_assert_cmpint (sqlite3_step (st), ==, SQLITE_DONE);
      sqlite3_reset (st);
    }
  out = catchup_embed_cache_lookup (fx->store, "m:2", 2, texts, 2, found, &error);
  g_assert_no_error (error);
  g_assert_true (found[0]);
  g_assert_false (found[1]);
  g_assert_cmpfloat (out[0], ==, 1.0f);
  g_assert_cmpfloat (out[2], ==, 0.0f);
}

/* A v4 file (the last without records) keeps its messages, gets the records tables, and the first update of
 * its records reads the history that was there before: the derived track covers old rooms too. */
static void
test_migrate_v4 (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *path = tmp_db ("v4.db", &dir);
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  sqlite3 *db = NULL;
  guint n = 0;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  test_raw_frozen_schema (db, 4);
  test_raw_exec (db, "PRAGMA user_version = 4;"
                     "INSERT INTO rooms (id, protocol, account, name) VALUES (7, 'prpl-irc', 'me', '#old');"
                     "INSERT INTO messages (row, room, uid, ts, speaker, body) VALUES (1, 7, 'u1', 50, 'alice', 'I''ll write the notes');"
                     "INSERT INTO messages (row, room, uid, ts, speaker, body) VALUES (2, 7, 'u2', 60, 'bob', 'lol');");
  sqlite3_close (db);

  store = catchup_store_open (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_sql_count (store, "PRAGMA user_version", 0), ==, CATCHUP_STORE_SCHEMA_VERSION);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records WHERE ?1 = ?1", 0), ==, 0);
  g_assert_cmpint (catchup_store_count (store, 7, NULL), ==, 2);
  g_assert_true (catchup_records_update (store, 7, 0, &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records WHERE row = 1 AND kind = 2 AND room = ?1", 7),
                   ==, 1);
  g_assert_cmpint (test_sql_count (store, "SELECT max_row FROM records_state WHERE room = ?1", 7), ==, 2);
  g_clear_pointer (&store, catchup_store_close);
  test_remove_tree (dir);
}

/* A v5 file with records (their text stored, their message's uid copied) reads the text through the message,
 * counts the roster the records cover, and a new record still updates an old head. */
static void
test_migrate_v5 (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *path = tmp_db ("v5.db", &dir);
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (GPtrArray) records = NULL;
  g_autoptr (CatchupMessage) msg = catchup_message_new ("u3", 70, "alice", "I'll write the notes on Monday instead");
  sqlite3 *db = NULL;
  CatchupRecord *head;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  test_raw_frozen_schema (db, 5);
  test_raw_exec (db, "PRAGMA user_version = 5;"
                     "INSERT INTO rooms (id, protocol, account, name) VALUES (7, 'prpl-irc', 'me', '#old');"
                     "INSERT INTO messages (row, room, uid, ts, speaker, body) VALUES (1, 7, 'u1', 50, 'alice', 'I''ll write the notes');"
                     "INSERT INTO messages (row, room, uid, ts, speaker, body) VALUES (2, 7, 'u2', 60, 'bob', 'lol');"
                     "INSERT INTO records (id, room, row, uid, ts, kind, family, scope, source, owner, subject, text)"
                     " VALUES (1, 7, 1, 'u1', 50, 2, 2, 0, 'alice', 'alice', 'writ not', 'I''ll write the notes');"
                     "INSERT INTO records_state (room, max_row) VALUES (7, 2);");
  sqlite3_close (db);

  store = catchup_store_open (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_sql_count (store, "PRAGMA user_version", 0), ==, CATCHUP_STORE_SCHEMA_VERSION);
  g_assert_cmpint (test_sql_count (store, "SELECT turns FROM room_speakers WHERE room = ?1 AND speaker = 'alice'", 7),
                   ==, 1);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM room_speakers WHERE room = ?1", 7), ==, 2);
  g_assert_true (catchup_store_add (store, 7, msg, NULL, &error));
  g_assert_true (catchup_records_update (store, 7, 0, NULL, &error));
  g_assert_no_error (error);
  records = catchup_records_list (store, 7, "alice", FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (records->len, ==, 2);
  g_assert_cmpstr (((CatchupRecord *) records->pdata[0])->text, ==, "I'll write the notes");
  g_assert_cmpstr (((CatchupRecord *) records->pdata[0])->msg_id, ==, "u1");
  head = records->pdata[1];
  g_assert_cmpstr (head->msg_id, ==, "u3");
  g_assert_cmpint (head->supersedes, ==, 1);
  g_clear_pointer (&store, catchup_store_close);
  test_remove_tree (dir);
}

/* ---------- the owner thread ---------- */

static gpointer
count_rooms_thread (gpointer store)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) rooms = catchup_store_list_rooms (store, &error);

  /* a store used from a thread that does not own it refuses with an error (after a critical) */
  g_assert_null (rooms);
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_DB);
  return NULL;
}

static gpointer
take_over_thread (gpointer store)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) rooms = NULL;

  catchup_store_take_over (store);
  rooms = catchup_store_list_rooms (store, &error);
  g_assert_no_error (error);
  g_assert_nonnull (rooms);
  return GUINT_TO_POINTER (rooms->len + 1);
}

/* The thread that opened a store owns it: another thread's use is a critical. */
static void
test_owner_thread (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr (CatchupStore) store = catchup_store_open (":memory:", NULL);

      g_thread_join (g_thread_new ("not-the-owner", count_rooms_thread, store));
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*CRITICAL*used from a thread that does not own it (another thread owns it)*");
}

/* A store handed over works on the thread that takes it over, and no longer on the one that gave it away. */
static void
test_owner_hand_over (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (CatchupStore) store = catchup_store_open (":memory:", &error);

      g_assert_no_error (error);
      g_assert_cmpint (catchup_store_ensure_room (store, "prpl-irc", "me", "#a", &error), >, 0);
      catchup_store_hand_over (store);
      g_assert_cmpuint (GPOINTER_TO_UINT (g_thread_join (g_thread_new ("owner", take_over_thread, store))), ==, 2);
      /* the worker took it: the thread that handed it over is no owner any more */
      g_assert_null (catchup_store_list_rooms (store, &error));
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*CRITICAL*used from a thread that does not own it (another thread owns it)*");
  g_test_trap_assert_stderr_unmatched ("*ERROR*test-store.c*");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  TEST ("open-pragmas", test_open_pragmas);
  TEST ("invalid-utf8-read", test_invalid_utf8_read);
  TEST ("embed-cache-nonfinite", test_embed_cache_nonfinite);
  TEST ("idempotent", test_idempotent);
  TEST ("add-batch", test_add_batch);
  TEST ("get-message", test_get_message);
  TEST ("room-lookup", test_room_lookup);
  TEST ("room-info", test_room_info);
  TEST ("order", test_order);
  TEST ("forget", test_forget);
  TEST ("settings", test_settings);
  TEST ("nick-changes", test_nick_changes);
  TEST ("transactions", test_transactions);
  TEST ("search-hostile", test_search);
  TEST ("busy", test_busy);
  TEST ("full", test_full);
  TEST ("prune", test_prune);
  TEST ("count-turns", test_count_turns);
  g_test_add_func ("/catchup/store/migrate-v1", test_migrate_v1);
  g_test_add_func ("/catchup/store/migrate-v2", test_migrate_v2);
  g_test_add_func ("/catchup/store/migrate-v4", test_migrate_v4);
  g_test_add_func ("/catchup/store/migrate-v5", test_migrate_v5);
  g_test_add_func ("/catchup/store/future-version", test_future_version);
  g_test_add_func ("/catchup/store/corrupt", test_corrupt);
  g_test_add_func ("/catchup/store/unwritable", test_unwritable);
  g_test_add_func ("/catchup/store/memory", test_memory);
  g_test_add_func ("/catchup/store/owner-thread", test_owner_thread);
  g_test_add_func ("/catchup/store/owner-hand-over", test_owner_hand_over);
  return g_test_run ();
}
