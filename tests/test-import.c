#include "config.h"

#include <string.h>

#include "catchup.h"
#include "catchup-store-private.h"
#include "test-util.h"

typedef struct {
  CatchupStore *store;
  CatchupImportResult *result;
} Fixture;

static void
fixture_setup (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;

  fx->store = catchup_store_open (":memory:", &error);
  g_assert_no_error (error);
  fx->result = catchup_import_result_new ();
}

static void
fixture_teardown (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_clear_pointer (&fx->result, catchup_import_result_free);
  g_clear_pointer (&fx->store, catchup_store_close);
}

#define TEST(name, func) \
  g_test_add ("/catchup/import/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)

static char *
fixture_path (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "data", name, NULL);
}

static gint64
import_room (CatchupStore *store, const char *name)
{
  g_autoptr (GError) error = NULL;
  gint64 room = catchup_store_ensure_room (store, CATCHUP_IMPORT_PROTOCOL, CATCHUP_IMPORT_ACCOUNT, name, &error);

  g_assert_no_error (error);
  return room;
}

static GPtrArray *
all_messages (CatchupStore *store, gint64 room)
{
  g_autoptr (GError) error = NULL;
  GPtrArray *msgs = catchup_store_range (store, room, NULL, NULL, 0, &error);

  g_assert_no_error (error);
  return msgs;
}

static CatchupMessage *
nth (GPtrArray *msgs, guint i)
{
  g_assert_cmpuint (i, <, msgs->len);
  return g_ptr_array_index (msgs, i);
}

static void
reset_result (Fixture *fx)
{
  catchup_import_result_free (fx->result);
  fx->result = catchup_import_result_new ();
}

/* ---------- JSON Lines ---------- */

static void
test_jsonl (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autofree char *path = fixture_path ("import-good.jsonl");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) design = NULL;
  g_autoptr (GPtrArray) ops = NULL;
  gint64 ts;

  g_assert_true (catchup_import_jsonl (fx->store, path, 0, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->read, ==, 5);
  g_assert_cmpuint (fx->result->inserted, ==, 5);
  g_assert_cmpuint (fx->result->duplicates, ==, 0);
  g_assert_cmpuint (fx->result->malformed, ==, 0);
  g_assert_cmpuint (fx->result->problems->len, ==, 0);

  design = all_messages (fx->store, import_room (fx->store, "design"));
  ops = all_messages (fx->store, import_room (fx->store, "ops"));
  g_assert_cmpuint (design->len, ==, 3);
  g_assert_cmpuint (ops->len, ==, 2);

  /* "+01:00" is an hour earlier in UTC: bob's reply sorts first. */
  g_assert_cmpstr (nth (design, 0)->id, ==, "g2");
  g_assert_cmpstr (nth (design, 0)->alias, ==, "Bob B.");
  g_assert_true (catchup_time_parse_iso ("2026-03-02T08:01:30Z", &ts));
  g_assert_cmpint (nth (design, 0)->ts, ==, ts);
  g_assert_cmpstr (nth (design, 1)->id, ==, "g1");
  g_assert_cmpstr (nth (design, 2)->text, ==, "Then SQLite it is. 🙂 \"quoted\" and\nnewline");
  g_assert_true (g_str_has_prefix (nth (design, 2)->id, "h:"));
  g_assert_cmpstr (nth (ops, 0)->id, ==, "17"); /* integer ids are kept as text */

  /* Re-importing the same file inserts nothing. */
  reset_result (fx);
  g_assert_true (catchup_import_jsonl (fx->store, path, 0, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->inserted, ==, 0);
  g_assert_cmpuint (fx->result->duplicates, ==, 5);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM messages", 0), ==, 5);
}

static void
test_jsonl_malformed (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autofree char *path = fixture_path ("import-bad.jsonl");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = NULL;
  const guint64 bad_lines[] = { 3, 4, 5, 6, 7, 8 };

  g_assert_true (catchup_import_jsonl (fx->store, path, 0, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->read, ==, 9);
  g_assert_cmpuint (fx->result->inserted, ==, 3);
  g_assert_cmpuint (fx->result->malformed, ==, G_N_ELEMENTS (bad_lines));
  g_assert_cmpuint (fx->result->problems->len, ==, G_N_ELEMENTS (bad_lines));
  for (guint i = 0; i < G_N_ELEMENTS (bad_lines); i++)
    {
      CatchupImportProblem *problem = g_ptr_array_index (fx->result->problems, i);

      g_assert_cmpuint (problem->line, ==, bad_lines[i]);
      g_assert_cmpstr (problem->message, !=, NULL);
      g_assert_cmpuint (strlen (problem->message), >, 0);
    }
  g_assert_nonnull (strstr (((CatchupImportProblem *) g_ptr_array_index (fx->result->problems, 1))->message,
                            "speaker"));

  msgs = all_messages (fx->store, import_room (fx->store, "triage"));
  g_assert_cmpuint (msgs->len, ==, 3);
  g_assert_cmpstr (nth (msgs, 0)->id, ==, "b1");
  g_assert_cmpstr (nth (msgs, 1)->text, ==, "good line without id");
  g_assert_cmpstr (nth (msgs, 2)->id, ==, "b9");
}

static GInputStream *
stream_of (const char *text)
{
  return g_memory_input_stream_new_from_data (g_strdup (text), -1, g_free);
}

static void
test_jsonl_room_override (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GInputStream) input =
    stream_of ("{\"ts\": \"2026-01-01T00:00:00Z\", \"speaker\": \"a\", \"text\": \"no room needed\"}\n"
               "{\"room\": \"ignored\", \"ts\": \"2026-01-01T00:00:01Z\", \"speaker\": \"b\", \"text\": \"x\"}\n"
               "{\"room\": 5, \"ts\": \"2026-01-01T00:00:02Z\", \"speaker\": \"b\", \"text\": \"bad room\"}");
  g_autoptr (GError) error = NULL;
  gint64 room = catchup_store_ensure_room (fx->store, "prpl-irc", "me", "#target", &error);

  g_assert_true (catchup_import_jsonl_stream (fx->store, input, room, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->inserted, ==, 2);
  g_assert_cmpuint (fx->result->malformed, ==, 1);
  g_assert_cmpuint (((CatchupImportProblem *) g_ptr_array_index (fx->result->problems, 0))->line, ==, 3);
  g_assert_cmpint (catchup_store_count (fx->store, room, NULL), ==, 2);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM rooms", 0), ==, 1);
}

static void
test_jsonl_huge_line (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autofree char *big = g_strnfill (300 * 1024, 'q');
  g_autofree char *text = g_strdup_printf ("{\"room\": \"r\", \"ts\": \"2026-01-01T00:00:00Z\", \"speaker\": \"a\","
                                           " \"text\": \"%s\"}\r\n{\"room\": \"r\", \"ts\": \"2026-01-01T00:00:01Z\","
                                           " \"speaker\": \"b\", \"text\": \"after\"}\r\n",
                                           big);
  g_autoptr (GInputStream) input = stream_of (text);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = NULL;

  g_assert_true (catchup_import_jsonl_stream (fx->store, input, 0, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->inserted, ==, 2);
  msgs = all_messages (fx->store, import_room (fx->store, "r"));
  g_assert_cmpuint (strlen (nth (msgs, 0)->text), ==, 300 * 1024);
  g_assert_cmpstr (nth (msgs, 1)->text, ==, "after");
}

/* More lines than one batch, over two rooms, with a bad line near the end. */
static void
test_jsonl_batches (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  const guint n = CATCHUP_IMPORT_BATCH + 500;
  g_autoptr (GString) text = g_string_new (NULL);
  g_autoptr (GInputStream) input = NULL;
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < n; i++)
    g_string_append_printf (text,
                            "{\"id\": \"m%u\", \"room\": \"%s\", \"ts\": \"2026-01-01T10:%02u:%02uZ\","
                            " \"speaker\": \"s%u\", \"text\": \"message %u about the batch\"}\n",
                            i, i % 3 ? "big" : "small", (i / 60) % 60, i % 60, i % 7, i);
  g_string_append (text, "{oops}\n");
  input = stream_of (text->str);
  g_assert_true (catchup_import_jsonl_stream (fx->store, input, 0, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->read, ==, n + 1);
  g_assert_cmpuint (fx->result->inserted, ==, n);
  g_assert_cmpuint (((CatchupImportProblem *) g_ptr_array_index (fx->result->problems, 0))->line, ==, n + 1);
  g_assert_cmpint (catchup_store_count (fx->store, import_room (fx->store, "small"), NULL), ==, (n + 2) / 3);
  g_assert_cmpuint (catchup_db_transaction_depth (catchup_store_db (fx->store)), ==, 0);
}

static void
test_missing_file (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autofree char *path = fixture_path ("no-such-file.jsonl");
  g_autoptr (GError) error = NULL;

  g_assert_false (catchup_import_jsonl (fx->store, path, 0, fx->result, NULL, &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (catchup_import_irc (fx->store, path, import_room (fx->store, "x"), "2026-01-01", fx->result, NULL,
                                      &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND);
}

/* A database failure is fatal and leaves nothing of the batch behind. */
static void
test_db_failure_rolls_back (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autofree char *path = fixture_path ("import-good.jsonl");
  g_autoptr (GError) error = NULL;

  g_assert_false (catchup_import_jsonl (fx->store, path, 4242 /* no such room */, fx->result, NULL, &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_DB);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM messages", 0), ==, 0);
  g_assert_cmpuint (catchup_db_transaction_depth (catchup_store_db (fx->store)), ==, 0);
}

static void
test_cancelled (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autofree char *path = fixture_path ("import-good.jsonl");
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (GError) error = NULL;

  g_cancellable_cancel (cancellable);
  g_assert_false (catchup_import_jsonl (fx->store, path, 0, fx->result, cancellable, &error));
  g_assert_nonnull (error);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM messages", 0), ==, 0);
}

/* ---------- IRC ---------- */

static gint64
utc (const char *iso)
{
  gint64 ts = 0;

  g_assert_true (catchup_time_parse_iso (iso, &ts));
  return ts;
}

static void
import_irc_fixture (Fixture *fx, gint64 room)
{
  g_autofree char *path = fixture_path ("import-irc.log");
  g_autoptr (GError) error = NULL;

  g_assert_true (catchup_import_irc (fx->store, path, room, "2026-01-31", fx->result, NULL, &error));
  g_assert_no_error (error);
}

static void
test_irc (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  gint64 room = import_room (fx->store, "#proj");
  g_autoptr (GPtrArray) msgs = NULL;
  CatchupImportProblem *problem;

  import_irc_fixture (fx, room);
  g_assert_cmpuint (fx->result->read, ==, 14);
  g_assert_cmpuint (fx->result->inserted, ==, 9);
  g_assert_cmpuint (fx->result->events, ==, 4);
  g_assert_cmpuint (fx->result->malformed, ==, 1);
  problem = g_ptr_array_index (fx->result->problems, 0);
  g_assert_cmpuint (problem->line, ==, 13);

  msgs = all_messages (fx->store, room);
  g_assert_cmpuint (msgs->len, ==, 9);
  g_assert_cmpstr (nth (msgs, 0)->speaker, ==, "ann");
  g_assert_cmpint (nth (msgs, 0)->ts, ==, utc ("2026-01-31T23:58:00Z"));
  g_assert_cmpstr (nth (msgs, 1)->speaker, ==, "bob");
  g_assert_cmpstr (nth (msgs, 1)->text, ==, "nods");
  g_assert_cmpuint (nth (msgs, 1)->flags, ==, CATCHUP_MESSAGE_ACTION);
  /* The same line twice in one minute is said twice. */
  g_assert_cmpstr (nth (msgs, 3)->text, ==, "lol");
  g_assert_cmpstr (nth (msgs, 4)->text, ==, "lol");
  g_assert_cmpstr (nth (msgs, 3)->id, !=, nth (msgs, 4)->id);
  /* Past midnight: the next day. */
  g_assert_cmpstr (nth (msgs, 5)->text, ==, "the production one, staging can wait");
  g_assert_cmpint (nth (msgs, 5)->ts, ==, utc ("2026-02-01T00:01:00Z"));
  g_assert_cmpstr (nth (msgs, 6)->speaker, ==, "ops");
  g_assert_cmpstr (nth (msgs, 7)->text, ==, "is checking the release notes");
  g_assert_cmpuint (nth (msgs, 7)->flags, ==, CATCHUP_MESSAGE_ACTION);
  g_assert_cmpstr (nth (msgs, 8)->text, ==, "ok, rotating now");
  g_assert_cmpint (nth (msgs, 8)->ts, ==, utc ("2026-02-01T00:03:15Z"));

  /* presence lines are no turns: neither dave's part nor erin's quit is a message */
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM messages WHERE speaker IN ('dave', 'erin')", 0),
                   ==, 0);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM nicks WHERE old_nick = 'bob'"
                                   " AND new_nick = 'bob_afk'", 0),
                   ==, 1);
}

static void
test_irc_reimport (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  gint64 room = import_room (fx->store, "#proj");

  import_irc_fixture (fx, room);
  reset_result (fx);
  import_irc_fixture (fx, room);
  g_assert_cmpuint (fx->result->inserted, ==, 0);
  g_assert_cmpuint (fx->result->duplicates, ==, 9);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM messages", 0), ==, 9);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM nicks", 0), ==, 1);
}

/* Lines that name their own day need no date, and do not roll over. */
static void
test_irc_inline_dates (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GInputStream) input = stream_of ("proj 2021-03-04 [10:00:01] <ann>\t hello  \n"
                                              "proj 2021-03-04 [09:00:00] <bob>\t earlier, same day \n"
                                              "proj 2021-03-05 [08:00:00] *ann \twaves\n"
                                              "proj 2021-03-06 === ann is now known as ann_\n"
                                              "proj 2021-03-06 [07:00:00] -evalbot- 42\n");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = NULL;
  gint64 room = import_room (fx->store, "proj");

  g_assert_true (catchup_import_irc_stream (fx->store, input, room, NULL, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->inserted, ==, 4);
  g_assert_cmpuint (fx->result->events, ==, 1);
  g_assert_cmpuint (fx->result->malformed, ==, 0);
  msgs = all_messages (fx->store, room);
  g_assert_cmpint (nth (msgs, 0)->ts, ==, utc ("2021-03-04T09:00:00Z"));
  g_assert_cmpstr (nth (msgs, 1)->text, ==, "hello");
  g_assert_cmpint (nth (msgs, 2)->ts, ==, utc ("2021-03-05T08:00:00Z"));
  g_assert_cmpstr (nth (msgs, 2)->speaker, ==, "ann");
  g_assert_cmpstr (nth (msgs, 2)->text, ==, "waves");
  g_assert_cmpuint (nth (msgs, 2)->flags, ==, CATCHUP_MESSAGE_ACTION);
  g_assert_cmpstr (nth (msgs, 3)->speaker, ==, "evalbot");
  g_assert_cmpstr (nth (msgs, 3)->text, ==, "42");
  g_assert_cmpint (test_sql_count (fx->store, "SELECT ts FROM nicks WHERE new_nick = 'ann_'", 0), ==,
                   utc ("2021-03-06T00:00:00Z"));
}

static void
test_irc_bad_input (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GInputStream) input = stream_of ("[10:00] <ann> no date given\n[25:00] <bob> bad hour\n");
  g_autoptr (GInputStream) again = stream_of ("[10:00] <ann> fine\n[10:61] <bob> bad minute\n");
  g_autoptr (GError) error = NULL;
  gint64 room = import_room (fx->store, "#x");

  g_assert_true (catchup_import_irc_stream (fx->store, input, room, NULL, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->malformed, ==, 2);
  g_assert_cmpuint (fx->result->inserted, ==, 0);

  reset_result (fx);
  g_assert_true (catchup_import_irc_stream (fx->store, again, room, "2026-05-05", fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->inserted, ==, 1);
  g_assert_cmpuint (((CatchupImportProblem *) g_ptr_array_index (fx->result->problems, 0))->line, ==, 2);

  g_assert_false (catchup_import_irc_stream (fx->store, again, room, "May 5th", fx->result, NULL, &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID);
}

/* ---------- hostile input ---------- */

/* One record a line, n of them, numbered from first, into rooms "r" and "s" in turn (so that a batch that
 * fails may have written one room already). */
static void
append_records (GString *text, guint first, guint n)
{
  for (guint i = first; i < first + n; i++)
    g_string_append_printf (text,
                            "{\"id\": \"m%u\", \"room\": \"%s\", \"ts\": \"2026-01-01T10:%02u:%02uZ\","
                            " \"speaker\": \"s%u\", \"text\": \"message %u about the full disk\"}\n",
                            i, i % 2 ? "s" : "r", (i / 60) % 60, i % 60, i % 7, i);
}

static CatchupImportProblem *
problem (Fixture *fx, guint i)
{
  g_assert_cmpuint (i, <, fx->result->problems->len);
  return g_ptr_array_index (fx->result->problems, i);
}

/* A line break PCRE knows but the line reader does not (lone CR, VT, FF, NEL, LS, PS) used to make the
 * timestamp pattern fail and the importer crash; it is a space inside the line. */
static void
test_irc_line_breaks (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  static const char *const breaks[] = { "\r", "\v", "\f", "\xc2\x85", "\xe2\x80\xa8", "\xe2\x80\xa9" };
  g_autoptr (GString) text = g_string_new ("[09:00] <a> x\n");
  g_autoptr (GInputStream) input = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = NULL;
  gint64 room = import_room (fx->store, "#c");

  for (guint i = 0; i < G_N_ELEMENTS (breaks); i++)
    g_string_append_printf (text, "[09:%02u] <c> lone%sbreak %u\n", i + 1, breaks[i], i);
  input = stream_of (text->str);
  g_assert_true (catchup_import_irc_stream (fx->store, input, room, "2026-03-02", fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->malformed, ==, 0);
  g_assert_cmpuint (fx->result->inserted, ==, 1 + G_N_ELEMENTS (breaks));
  msgs = all_messages (fx->store, room);
  g_assert_cmpstr (nth (msgs, 1)->speaker, ==, "c");
  g_assert_cmpstr (nth (msgs, 1)->text, ==, "lone break 0");
  g_assert_cmpstr (nth (msgs, 6)->text, ==, "lone break 5");
}

/* json-glib recurses per level: 100,000 brackets overflowed the stack. The line is malformed, the rest stays. */
static void
test_jsonl_deep (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autofree char *brackets = g_strnfill (100000, '[');
  g_autoptr (GString) objects = g_string_new (NULL);
  g_autoptr (GString) text = g_string_new (NULL);
  g_autoptr (GInputStream) input = NULL;
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < 100000; i++)
    g_string_append (objects, "{\"a\":");
  g_string_append_printf (text, "%s\n%s\n", brackets, objects->str);
  append_records (text, 0, 1);
  input = stream_of (text->str);
  g_assert_true (catchup_import_jsonl_stream (fx->store, input, 0, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->read, ==, 3);
  g_assert_cmpuint (fx->result->inserted, ==, 1);
  g_assert_cmpuint (fx->result->malformed, ==, 2);
  g_assert_cmpuint (problem (fx, 0)->line, ==, 1);
  g_assert_nonnull (strstr (problem (fx, 1)->message, "deeper"));
}

/* A missing line break, written as a space or as a lone CR, used to drop every value after the first. */
static void
test_jsonl_two_values (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GInputStream) input =
    stream_of ("{\"room\": \"r\", \"ts\": \"2026-01-01T00:00:00Z\", \"speaker\": \"a\", \"text\": \"one } ]\"}"
               " {\"room\": \"r\", \"ts\": \"2026-01-01T00:00:01Z\", \"speaker\": \"a\", \"text\": \"two\"}\r"
               "{\"room\": \"r\", \"ts\": \"2026-01-01T00:00:02Z\", \"speaker\": \"a\", \"text\": \"three\"}\n"
               "{\"room\": \"r\", \"ts\": \"2026-01-01T00:00:03Z\", \"speaker\": \"a\", \"text\": \"four\"} tail\n");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = NULL;

  g_assert_true (catchup_import_jsonl_stream (fx->store, input, 0, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->read, ==, 5);
  g_assert_cmpuint (fx->result->inserted, ==, 4);
  g_assert_cmpuint (fx->result->malformed, ==, 1);
  g_assert_cmpuint (problem (fx, 0)->line, ==, 2);
  msgs = all_messages (fx->store, import_room (fx->store, "r"));
  g_assert_cmpstr (nth (msgs, 0)->text, ==, "one } ]");
  g_assert_cmpstr (nth (msgs, 2)->text, ==, "three");
}

/* Numeric ids are kept as written: beyond int64 they used to collapse into one ("-1"). */
static void
test_jsonl_big_ids (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GInputStream) input =
    stream_of ("{\"id\": 99999999999999999999, \"room\": \"r\", \"ts\": \"2026-01-01T00:00:00Z\", \"speaker\": \"a\","
               " \"text\": \"x\"}\n"
               "{\"id\": 99999999999999999998, \"room\": \"r\", \"ts\": \"2026-01-01T00:00:01Z\", \"speaker\": \"a\","
               " \"text\": \"y\"}\n"
               "{\"text\": \"z\", \"id\" : -12345678901234567890123 , \"room\": \"r\", \"ts\": \"2026-01-01T00:00:02Z\","
               " \"speaker\": \"a\"}\n"
               "{\"id\": 42, \"room\": \"r\", \"ts\": \"2026-01-01T00:00:03Z\", \"speaker\": \"a\", \"text\": \"w\"}\n");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = NULL;

  g_assert_true (catchup_import_jsonl_stream (fx->store, input, 0, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->inserted, ==, 4);
  g_assert_cmpuint (fx->result->duplicates, ==, 0);
  msgs = all_messages (fx->store, import_room (fx->store, "r"));
  g_assert_cmpstr (nth (msgs, 0)->id, ==, "99999999999999999999");
  g_assert_cmpstr (nth (msgs, 1)->id, ==, "99999999999999999998");
  g_assert_cmpstr (nth (msgs, 2)->id, ==, "-12345678901234567890123");
  g_assert_cmpstr (nth (msgs, 3)->id, ==, "42");
}

/* A NUL, escaped or raw, cut the text after it; it is dropped and the rest kept. Escape sequences and other
 * controls never reach the store. */
static void
test_jsonl_nul_and_controls (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  static const char text[] =
    "{\"room\": \"r\", \"ts\": \"2026-01-01T00:00:00Z\", \"speaker\": \"a\\u0000b\", \"text\": \"be\\u0000fore after\"}\n"
    "{\"room\": \"r\", \"ts\": \"2026-01-01T00:00:01Z\", \"speaker\": \"c\", \"text\": \"raw\0nul\"}\n"
    "{\"room\": \"r\", \"ts\": \"2026-01-01T00:00:02Z\", \"speaker\": \"d\\u001b[31m\", \"text\": \"lit \\\\u0000 x\\r\\ny\"}\n";
  g_autoptr (GInputStream) input = g_memory_input_stream_new_from_data (text, sizeof text - 1, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = NULL;

  g_assert_true (catchup_import_jsonl_stream (fx->store, input, 0, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->malformed, ==, 0);
  g_assert_cmpuint (fx->result->inserted, ==, 3);
  msgs = all_messages (fx->store, import_room (fx->store, "r"));
  g_assert_cmpstr (nth (msgs, 0)->speaker, ==, "ab");
  g_assert_cmpstr (nth (msgs, 0)->text, ==, "before after");
  g_assert_cmpstr (nth (msgs, 1)->text, ==, "rawnul");
  g_assert_cmpstr (nth (msgs, 2)->speaker, ==, "d[31m");
  g_assert_cmpstr (nth (msgs, 2)->text, ==, "lit \\u0000 x\ny");
}

/* A byte-order mark is not part of the first line; an empty room name names no room. */
static void
test_bom_and_empty_room (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GInputStream) irc = stream_of ("\xef\xbb\xbf[09:00] <a> first line\n[09:01] <b> second\n");
  g_autoptr (GInputStream) jsonl =
    stream_of ("\xef\xbb\xbf{\"room\": \"r\", \"ts\": \"2026-01-01T00:00:00Z\", \"speaker\": \"a\", \"text\": \"x\"}\n"
               "{\"room\": \" \", \"ts\": \"2026-01-01T00:00:00Z\", \"speaker\": \"a\", \"text\": \"x\"}\n");
  g_autoptr (GError) error = NULL;
  gint64 room = import_room (fx->store, "#c");

  g_assert_true (catchup_import_irc_stream (fx->store, irc, room, "2026-03-02", fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->inserted, ==, 2);
  g_assert_cmpuint (fx->result->malformed, ==, 0);
  reset_result (fx);
  g_assert_true (catchup_import_jsonl_stream (fx->store, jsonl, 0, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->inserted, ==, 1);
  g_assert_cmpuint (fx->result->malformed, ==, 1);
  g_assert_cmpuint (problem (fx, 0)->line, ==, 2);
  g_assert_cmpint (test_sql_count (fx->store, "SELECT count(*) FROM rooms WHERE trim(name) = ''", 0), ==, 0);
}

/* A log rolling past 9999-12-31 has lines no date can be printed for: they are malformed, not "(null)". */
static void
test_irc_after_9999 (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GInputStream) input = stream_of ("[23:59] <a> last day\n[00:01] <a> no such day\n");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = NULL;
  gint64 room = import_room (fx->store, "#c");

  g_assert_true (catchup_import_irc_stream (fx->store, input, room, "9999-12-31", fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->inserted, ==, 1);
  g_assert_cmpuint (fx->result->malformed, ==, 1);
  g_assert_cmpuint (problem (fx, 0)->line, ==, 2);
  msgs = all_messages (fx->store, room);
  g_assert_cmpint (nth (msgs, 0)->ts, <=, CATCHUP_TIME_MAX);
  /* and a time without a date that is already stored prints as seconds, never as "(null)" */
  {
    g_autofree char *last = catchup_time_format_iso (CATCHUP_TIME_MAX);
    g_autofree char *beyond = catchup_time_format_iso (CATCHUP_TIME_MAX + 1);

    g_assert_cmpstr (last, ==, "9999-12-31T23:59:59Z");
    g_assert_cmpstr (beyond, ==, "@253402300800");
  }
}

/* The same id with another text is no duplicate: the line is reported, the stored message stays. */
static void
test_jsonl_id_conflict (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  const char *text =
    "{\"id\": \"x1\", \"room\": \"r\", \"ts\": \"2026-01-01T00:00:00Z\", \"speaker\": \"a\", \"text\": \"first\"}\n"
    "{\"id\": \"x1\", \"room\": \"r\", \"ts\": \"2026-01-01T00:00:00Z\", \"speaker\": \"a\", \"text\": \"rewritten\"}\n"
    "{oops}\n"
    "{\"id\": \"x1\", \"room\": \"r\", \"ts\": \"2026-01-01T00:00:00Z\", \"speaker\": \"a\", \"text\": \"first\"}\n";
  g_autoptr (GInputStream) input = stream_of (text);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = NULL;

  g_assert_true (catchup_import_jsonl_stream (fx->store, input, 0, fx->result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (fx->result->read, ==, 4);
  g_assert_cmpuint (fx->result->inserted, ==, 1);
  g_assert_cmpuint (fx->result->duplicates, ==, 1);
  g_assert_cmpuint (fx->result->malformed, ==, 2);
  g_assert_cmpuint (problem (fx, 0)->line, ==, 2);
  g_assert_nonnull (strstr (problem (fx, 0)->message, "x1"));
  g_assert_cmpuint (problem (fx, 1)->line, ==, 3);
  msgs = all_messages (fx->store, import_room (fx->store, "r"));
  g_assert_cmpuint (msgs->len, ==, 1);
  g_assert_cmpstr (nth (msgs, 0)->text, ==, "first");
}

static gint64
pragma_value (CatchupStore *store, const char *pragma)
{
  return test_sql_count (store, pragma, 0);
}

/* A full disk in the middle of an import: the count is what was committed, and the error says from which line
 * on nothing was saved. The disk is a page limit on a small database. */
static void
test_disk_full (void)
{
  g_autofree char *dir = test_tmp_dir ("catchup-full-XXXXXX");
  g_autofree char *probe_path = g_build_filename (dir, "probe.db", NULL);
  g_autofree char *path = g_build_filename (dir, "full.db", NULL);
  g_autoptr (GString) one_batch = g_string_new (NULL), text = g_string_new (NULL);
  g_autoptr (CatchupImportResult) result = catchup_import_result_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *limit = NULL;
  CatchupStore *store;
  GInputStream *input;
  gint64 pages;

  /* how many pages one batch takes */
  append_records (one_batch, 0, CATCHUP_IMPORT_BATCH);
  store = catchup_store_open (probe_path, &error);
  g_assert_no_error (error);
  input = stream_of (one_batch->str);
  g_assert_true (catchup_import_jsonl_stream (store, input, 0, result, NULL, &error));
  g_assert_no_error (error);
  pages = pragma_value (store, "PRAGMA page_count");
  g_object_unref (input);
  catchup_store_close (store);

  /* room for one and a half batches, and an import of 2.4 */
  store = catchup_store_open (path, &error);
  g_assert_no_error (error);
  limit = g_strdup_printf ("PRAGMA max_page_count = %" G_GINT64_FORMAT, pages + pages / 2);
  g_assert_true (catchup_db_exec (catchup_store_db (store), limit, &error));
  g_assert_no_error (error);
  append_records (text, 0, CATCHUP_IMPORT_BATCH * 12 / 5);
  input = stream_of (text->str);
  catchup_import_result_free (result);
  result = catchup_import_result_new ();
  g_assert_false (catchup_import_jsonl_stream (store, input, 0, result, NULL, &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_DB_FULL);
  g_assert_nonnull (strstr (error->message, "line 5001 on"));
  g_assert_cmpuint (result->read, >, CATCHUP_IMPORT_BATCH);
  g_assert_cmpuint (result->inserted, ==, CATCHUP_IMPORT_BATCH);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM messages", 0), ==, CATCHUP_IMPORT_BATCH);
  g_assert_cmpuint (catchup_db_transaction_depth (catchup_store_db (store)), ==, 0);
  g_object_unref (input);
  catchup_store_close (store);
  test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  TEST ("jsonl", test_jsonl);
  TEST ("jsonl-malformed", test_jsonl_malformed);
  TEST ("jsonl-room-override", test_jsonl_room_override);
  TEST ("jsonl-huge-line", test_jsonl_huge_line);
  TEST ("jsonl-batches", test_jsonl_batches);
  TEST ("missing-file", test_missing_file);
  TEST ("db-failure-rolls-back", test_db_failure_rolls_back);
  TEST ("cancelled", test_cancelled);
  TEST ("irc", test_irc);
  TEST ("irc-reimport", test_irc_reimport);
  TEST ("irc-inline-dates", test_irc_inline_dates);
  TEST ("irc-bad-input", test_irc_bad_input);
  TEST ("irc-line-breaks", test_irc_line_breaks);
  TEST ("jsonl-deep", test_jsonl_deep);
  TEST ("jsonl-two-values", test_jsonl_two_values);
  TEST ("jsonl-big-ids", test_jsonl_big_ids);
  TEST ("jsonl-nul-and-controls", test_jsonl_nul_and_controls);
  TEST ("bom-and-empty-room", test_bom_and_empty_room);
  TEST ("irc-after-9999", test_irc_after_9999);
  TEST ("jsonl-id-conflict", test_jsonl_id_conflict);
  g_test_add_func ("/catchup/import/disk-full", test_disk_full);
  return g_test_run ();
}
