#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include "catchup.h"
#include "test-util.h"

#define N_MESSAGES 60
#define T0 1767800000

typedef TestStoreFixture Fixture;

static const char *const speakers[] = { "ann", "bo", "cy", "dee" };

static const char *const lines[] = {
  "the nightly backup finished at three",
  "we moved the standup to ten",
  "can you review the relay patch please",
  "merged the relay patch into main",
  "the staging cluster is green again",
  "I will rotate the certificates tomorrow",
  "the dashboard still shows stale numbers",
  "let's use the spare box for the relay",
  "lol",
  "the vendor call is at two",
};

static char *
id_of (guint i)
{
  return g_strdup_printf ("e%03u", i);
}

static void
fixture_setup (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  gint64 other;

  fx->dir = test_tmp_dir ("catchup-engine-XXXXXX");
  fx->path = g_build_filename (fx->dir, "history.db", NULL);
  fx->store = test_store_with_room (fx->path, "prpl-irc", "me@irc.example", "#ops", &fx->room);
  for (guint i = 0; i < N_MESSAGES; i++)
    {
      g_autofree char *id = id_of (i);

      /* one message a minute */
      g_ptr_array_add (msgs, catchup_message_new (id, T0 + (gint64) i * 60, speakers[i % G_N_ELEMENTS (speakers)],
                                                  lines[i % G_N_ELEMENTS (lines)]));
    }
  g_assert_true (catchup_store_add_batch (fx->store, fx->room, msgs, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (catchup_index_update (fx->store, fx->room, &error));
  g_assert_no_error (error);
  /* a second room whose ids must not leak into the first one's windows */
  other = catchup_store_ensure_room (fx->store, "prpl-irc", "me@irc.example", "#elsewhere", &error);
  g_assert_no_error (error);
  {
    g_autoptr (CatchupMessage) m = catchup_message_new ("x001", T0 + 5, "zed", "elsewhere entirely");
    gboolean inserted;

    g_assert_true (catchup_store_add (fx->store, other, m, &inserted, &error));
    g_assert_no_error (error);
  }
}

static void
fixture_teardown (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  test_store_fixture_teardown (fx);
}

static void
assert_ids (GPtrArray *msgs, guint first, guint n)
{
  g_assert_nonnull (msgs);
  g_assert_cmpuint (msgs->len, ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *want = id_of (first + i);

      g_assert_cmpstr (((CatchupMessage *) msgs->pdata[i])->id, ==, want);
    }
}

static GPtrArray *
window_ok (Fixture *fx, const CatchupWindow *w)
{
  g_autoptr (GError) error = NULL;
  GPtrArray *msgs = catchup_engine_window (fx->store, fx->room, w, &error);

  g_assert_no_error (error);
  return msgs;
}

static void
window_fails (Fixture *fx, const CatchupWindow *w, gint code)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = catchup_engine_window (fx->store, fx->room, w, &error);

  g_assert_null (msgs);
  g_assert_error (error, CATCHUP_ERROR, code);
}

static void
test_window_last (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupWindow w = { .kind = CATCHUP_WINDOW_LAST, .last_n = 5 };
  g_autoptr (GPtrArray) five = window_ok (fx, &w), all = NULL, capped = NULL;

  assert_ids (five, N_MESSAGES - 5, 5);
  /* more than the room holds: the whole room */
  w.last_n = 1000;
  all = window_ok (fx, &w);
  assert_ids (all, 0, N_MESSAGES);
  w.max_messages = 7;
  capped = window_ok (fx, &w);
  assert_ids (capped, N_MESSAGES - 7, 7);
}

static void
test_window_since (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupWindow w = { .kind = CATCHUP_WINDOW_SINCE, .since = T0 + 50 * 60 };
  g_autoptr (GPtrArray) tail = window_ok (fx, &w), mid = NULL;

  assert_ids (tail, 50, N_MESSAGES - 50);
  /* between two messages: from the next one on */
  w.since = T0 + 29 * 60 + 1;
  mid = window_ok (fx, &w);
  assert_ids (mid, 30, N_MESSAGES - 30);
  /* nothing since then */
  w.since = T0 + N_MESSAGES * 60;
  window_fails (fx, &w, CATCHUP_ERROR_INVALID);
}

static void
test_window_between (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupWindow w = { .kind = CATCHUP_WINDOW_BETWEEN, .first_id = "e010", .last_id = "e040" };
  g_autoptr (GPtrArray) range = window_ok (fx, &w), one = NULL, capped = NULL;

  /* inclusive at both ends */
  assert_ids (range, 10, 31);
  w.first_id = w.last_id = "e033";
  one = window_ok (fx, &w);
  assert_ids (one, 33, 1);
  /* the cap keeps the newest */
  w.first_id = "e010";
  w.last_id = "e040";
  w.max_messages = 4;
  capped = window_ok (fx, &w);
  assert_ids (capped, 37, 4);
}

static void
test_window_errors (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupWindow w = { .kind = CATCHUP_WINDOW_BETWEEN, .first_id = "e010", .last_id = "nope" };

  window_fails (fx, &w, CATCHUP_ERROR_NOT_FOUND);
  w.first_id = "nope";
  w.last_id = "e010";
  window_fails (fx, &w, CATCHUP_ERROR_NOT_FOUND);
  /* an id of another room is not found in this one */
  w.first_id = "x001";
  window_fails (fx, &w, CATCHUP_ERROR_NOT_FOUND);
  /* reversed */
  w.first_id = "e040";
  w.last_id = "e010";
  window_fails (fx, &w, CATCHUP_ERROR_INVALID);
  /* missing ids */
  w.first_id = NULL;
  window_fails (fx, &w, CATCHUP_ERROR_INVALID);
  w.first_id = "e010";
  w.last_id = NULL;
  window_fails (fx, &w, CATCHUP_ERROR_INVALID);
}

static void
test_window_empty_room (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  gint64 empty = catchup_store_ensure_room (fx->store, "prpl-irc", "me@irc.example", "#quiet", &error);
  CatchupWindow w = { .kind = CATCHUP_WINDOW_LAST, .last_n = 10 };
  g_autoptr (GPtrArray) msgs = NULL;

  g_assert_no_error (error);
  msgs = catchup_engine_window (fx->store, empty, &w, &error);
  g_assert_null (msgs);
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID);
}

static void
check_result (CatchupResult *res, guint window_len)
{
  g_autoptr (GHashTable) who = g_hash_table_new (g_str_hash, g_str_equal);
  guint tokens = 0, lines_with_source = 0;

  g_assert_nonnull (res);
  g_assert_cmpuint (res->window->len, ==, window_len);
  for (guint i = 0; i < res->window->len; i++)
    {
      CatchupMessage *m = res->window->pdata[i];

      g_hash_table_add (who, m->speaker);
      tokens += catchup_text_count_turn (m->speaker, m->text);
    }
  g_assert_cmpuint (res->window_tokens, ==, tokens);
  g_assert_nonnull (res->memory);
  g_assert_cmpuint (res->memory->tokens, <=, CATCHUP_DEFAULT_BUDGET);
  g_assert_nonnull (res->summary);
  g_assert_nonnull (res->summary->lines);
  g_assert_cmpuint (res->summary->lines->len, >, 0);
  for (guint i = 0; i < res->summary->lines->len; i++)
    {
      CatchupSummaryLine *l = res->summary->lines->pdata[i];

      /* every attributed line names someone who spoke in the window */
      if (l->speaker)
        g_assert_true (g_hash_table_contains (who, l->speaker));
      if (catchup_summary_line_source (l))
        {
          gboolean in_window = FALSE;

          lines_with_source++;
          for (guint k = 0; k < res->window->len; k++)
            in_window |= strcmp (((CatchupMessage *) res->window->pdata[k])->id, catchup_summary_line_source (l)) == 0;
          g_assert_true (in_window);
        }
    }
  g_assert_cmpuint (lines_with_source, >, 0);
}

static void
test_run_sync (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupWindow w = { .kind = CATCHUP_WINDOW_LAST, .last_n = 12 };
  CatchupOptions opts;
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupResult) res = NULL;

  catchup_options_init (&opts);
  res = catchup_engine_run (fx->store, fx->room, &w, &opts, NULL, &error);
  g_assert_no_error (error);
  check_result (res, 12);
  /* the memory comes from before the window */
  for (guint i = 0; i < res->memory->turns->len; i++)
    {
      CatchupPos p = catchup_pos_of (res->memory->turns->pdata[i]), first = catchup_pos_of (res->window->pdata[0]);

      g_assert_cmpint (catchup_pos_cmp (&p, &first), <, 0);
    }
}

typedef struct {
  GMainContext *context;
  GThread *thread;
  CatchupResult *result;
  GError *error;
  gboolean done;
} AsyncState;

static void
on_done (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer user_data)
{
  AsyncState *st = user_data;

  /* delivered on the caller's thread, from the context that was thread-default when it asked */
  g_assert_true (g_thread_self () == st->thread);
  g_assert_true (g_main_context_get_thread_default () == st->context);
  g_assert_true (g_main_context_is_owner (st->context));
  st->result = catchup_engine_run_finish (result, &st->error);
  st->done = TRUE;
}

static void
run_async (Fixture *fx, const char *room_spec, const CatchupWindow *w, GCancellable *cancellable, AsyncState *st)
{
  CatchupOptions opts;

  catchup_options_init (&opts);
  memset (st, 0, sizeof *st);
  st->context = g_main_context_new ();
  st->thread = g_thread_self ();
  g_main_context_push_thread_default (st->context);
  catchup_engine_run_async (fx->path, room_spec, w, &opts, cancellable, on_done, st);
  /* nothing is delivered before the caller's context runs */
  g_assert_false (st->done);
  while (!st->done)
    g_main_context_iteration (st->context, TRUE);
  g_main_context_pop_thread_default (st->context);
  g_main_context_unref (st->context);
}

static void
test_run_async (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autofree char *first = id_of (20), *last = id_of (39);
  CatchupWindow w = { .kind = CATCHUP_WINDOW_BETWEEN, .first_id = first, .last_id = last };
  AsyncState st;

  run_async (fx, "#ops", &w, NULL, &st);
  g_assert_no_error (st.error);
  check_result (st.result, 20);
  g_assert_cmpstr (((CatchupMessage *) st.result->window->pdata[0])->id, ==, first);
  g_clear_pointer (&st.result, catchup_result_free);
}

static void
test_run_async_errors (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupWindow w = { .kind = CATCHUP_WINDOW_LAST, .last_n = 10 };
  CatchupWindow bad = { .kind = CATCHUP_WINDOW_BETWEEN, .first_id = "e001", .last_id = "missing" };
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  AsyncState st;

  run_async (fx, "#nosuchroom", &w, NULL, &st);
  g_assert_null (st.result);
  g_assert_error (st.error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND);
  g_clear_error (&st.error);

  run_async (fx, "#ops", &bad, NULL, &st);
  g_assert_null (st.result);
  g_assert_error (st.error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND);
  g_clear_error (&st.error);

  g_cancellable_cancel (cancellable);
  run_async (fx, "#ops", &w, cancellable, &st);
  g_assert_null (st.result);
  g_assert_error (st.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&st.error);
}

#define TEST(name, func) \
  g_test_add ("/catchup/engine/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  TEST ("window-last", test_window_last);
  TEST ("window-since", test_window_since);
  TEST ("window-between", test_window_between);
  TEST ("window-errors", test_window_errors);
  TEST ("window-empty-room", test_window_empty_room);
  TEST ("run-sync", test_run_sync);
  TEST ("run-async", test_run_async);
  TEST ("run-async-errors", test_run_async_errors);
  return g_test_run ();
}
