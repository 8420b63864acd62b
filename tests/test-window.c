#include "config.h"

#include "catchup.h"
#include "test-util.h"

/* The catch-up window's rules, as the command-line tool, /catchup and the automatic catch-up share them. */

#define NOW 1767800000
#define T0 (NOW - 3600)

typedef struct {
  CatchupStore *store;
  gint64 room;
} Fixture;

/* Twenty turns a minute apart from T0, every fifth the user's own. */
static void
fixture_setup (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  fx->store = test_store_with_room (":memory:", "prpl-irc", "me@irc.example", "#ops", &fx->room);
  for (guint i = 0; i < 20; i++)
    {
      g_autofree char *id = g_strdup_printf ("w%02u", i);
      CatchupMessage *m = catchup_message_new (id, T0 + (gint64) i * 60, i % 5 ? "ann" : "me", "the relay is up");

      if (i % 5 == 0)
        m->flags |= CATCHUP_MESSAGE_OWN;
      g_ptr_array_add (msgs, m);
    }
  g_assert_true (catchup_store_add_batch (fx->store, fx->room, msgs, NULL, &error));
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  catchup_store_close (fx->store);
}

static void
test_parse (void)
{
  CatchupWindow w = { 0 };
  gint64 since = -1;

  g_assert_true (catchup_window_parse (NULL, NOW, &w));
  g_assert_cmpint (w.kind, ==, CATCHUP_WINDOW_UNREAD);
  g_assert_cmpint (w.since, ==, 0);
  g_assert_true (catchup_window_parse ("500", NOW, &w));
  g_assert_cmpint (w.kind, ==, CATCHUP_WINDOW_LAST);
  g_assert_cmpuint (w.last_n, ==, 500);
  /* a count beyond any room's maximum is the largest one */
  g_assert_true (catchup_window_parse ("99999999999999999999", NOW, &w));
  g_assert_cmpuint (w.last_n, ==, CATCHUP_WINDOW_MAX_LAST);
  g_assert_true (catchup_window_parse ("2h", NOW, &w));
  g_assert_cmpint (w.kind, ==, CATCHUP_WINDOW_SINCE);
  g_assert_cmpint (w.since, ==, NOW - 2 * 3600);
  g_assert_true (catchup_window_parse ("1D", NOW, &w));
  g_assert_cmpint (w.since, ==, NOW - 86400);
  g_assert_true (catchup_window_parse_age ("1w", NOW, &since));
  g_assert_cmpint (since, ==, NOW - 7 * 86400);
  g_assert_true (catchup_window_parse_age ("45m", NOW, &since));
  g_assert_cmpint (since, ==, NOW - 45 * 60);
  /* beyond the epoch: everything */
  g_assert_true (catchup_window_parse_age ("100000000w", NOW, &since));
  g_assert_cmpint (since, ==, 0);
  g_assert_true (catchup_window_parse_age ("99999999999999999999d", NOW, &since));
  g_assert_cmpint (since, ==, 0);
  /* refused, the window untouched */
  w.kind = CATCHUP_WINDOW_BETWEEN;
  for (const char *const *bad = (const char *const[]) { "0", "-5", "0h", "1s", "2x", "2hh", "h", "", "foo", "2 h",
                                                         NULL };
       *bad != NULL; bad++)
    g_assert_false (catchup_window_parse (*bad, NOW, &w));
  g_assert_cmpint (w.kind, ==, CATCHUP_WINDOW_BETWEEN);
}

static void
test_cap (void)
{
  CatchupWindow count = { .kind = CATCHUP_WINDOW_LAST, .last_n = 500 };
  CatchupWindow age = { .kind = CATCHUP_WINDOW_SINCE, .since = T0 };
  CatchupWindow unread = { .kind = CATCHUP_WINDOW_UNREAD };
  CatchupWindow set = { .kind = CATCHUP_WINDOW_SINCE, .max_messages = 7 };

  /* a count asked for is its own cap: "/catchup 500" in a room whose maximum is 100 */
  catchup_window_cap (&count, 100);
  g_assert_cmpuint (count.max_messages, ==, 500);
  catchup_window_cap (&age, 100);
  g_assert_cmpuint (age.max_messages, ==, 100);
  catchup_window_cap (&unread, 100);
  g_assert_cmpuint (unread.max_messages, ==, 100);
  catchup_window_cap (&set, 100);
  g_assert_cmpuint (set.max_messages, ==, 7);
}

static GPtrArray *
resolve_ok (Fixture *fx, const CatchupWindow *w, CatchupWindowInfo *info)
{
  g_autoptr (GError) error = NULL;
  GPtrArray *msgs = catchup_window_resolve (fx->store, fx->room, w, info, &error);

  g_assert_no_error (error);
  g_assert_nonnull (msgs);
  return msgs;
}

/* The cap keeps the newest; the info counts the whole window and who said it. */
static void
test_resolve_capped (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupWindow w = { .kind = CATCHUP_WINDOW_SINCE, .since = T0 + 10 * 60, .max_messages = 4 };
  CatchupWindowInfo info;
  g_autoptr (GPtrArray) msgs = resolve_ok (fx, &w, &info);

  g_assert_cmpuint (msgs->len, ==, 4);
  g_assert_cmpstr (((CatchupMessage *) msgs->pdata[0])->id, ==, "w16");
  g_assert_cmpuint (info.total, ==, 10);
  /* w10 and w15 are the user's own */
  g_assert_cmpuint (info.others, ==, 8);
  g_assert_cmpint (info.start_ts, ==, T0 + 10 * 60);
  g_assert_cmpint (info.since, ==, 0);
  g_assert_false (info.room_empty);
}

/* Unread: since the store's last presence, unless the caller knows a start; without either the room's newest. */
static void
test_resolve_unread (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  CatchupWindow w = { .kind = CATCHUP_WINDOW_UNREAD, .max_messages = 5 };
  CatchupWindowInfo info;
  g_autoptr (GPtrArray) newest = resolve_ok (fx, &w, &info), since_present = NULL, since_join = NULL;

  /* no presence known: the newest up to the cap, and the whole room as what the cap left out */
  g_assert_cmpuint (newest->len, ==, 5);
  g_assert_cmpstr (((CatchupMessage *) newest->pdata[0])->id, ==, "w15");
  g_assert_cmpint (info.since, ==, 0);
  g_assert_cmpuint (info.total, ==, 20);
  g_assert_cmpint (info.start_ts, ==, T0);
  catchup_window_settle (&w, &info);
  g_assert_cmpint (w.kind, ==, CATCHUP_WINDOW_LAST);
  g_assert_cmpuint (w.last_n, ==, 5);

  g_assert_true (catchup_store_set_last_present (fx->store, fx->room, T0 + 17 * 60, &error));
  g_assert_no_error (error);
  w = (CatchupWindow) { .kind = CATCHUP_WINDOW_UNREAD, .max_messages = 5 };
  since_present = resolve_ok (fx, &w, &info);
  /* the same second counts: times are whole seconds */
  g_assert_cmpuint (since_present->len, ==, 3);
  g_assert_cmpint (info.since, ==, T0 + 17 * 60);
  g_assert_cmpuint (info.total, ==, 3);
  catchup_window_settle (&w, &info);
  g_assert_cmpint (w.kind, ==, CATCHUP_WINDOW_SINCE);
  g_assert_cmpint (w.since, ==, T0 + 17 * 60);

  /* the join's view of the absence wins over an older store presence (a crash left it behind) */
  w = (CatchupWindow) { .kind = CATCHUP_WINDOW_UNREAD, .since = T0 + 12 * 60 };
  since_join = resolve_ok (fx, &w, &info);
  g_assert_cmpuint (since_join->len, ==, 8);
  g_assert_cmpint (info.since, ==, T0 + 12 * 60);
  g_assert_cmpuint (info.others, ==, 7);
}

/* An empty window is no error; whether the room holds anything at all is told apart. */
static void
test_resolve_empty (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  CatchupWindow w = { .kind = CATCHUP_WINDOW_SINCE, .since = NOW + 60 };
  CatchupWindowInfo info;
  g_autoptr (GPtrArray) none = resolve_ok (fx, &w, &info), empty_room = NULL;
  gint64 other = catchup_store_ensure_room (fx->store, "prpl-irc", "me@irc.example", "#quiet", &error);

  g_assert_cmpuint (none->len, ==, 0);
  g_assert_false (info.room_empty);
  g_assert_no_error (error);
  empty_room = catchup_window_resolve (fx->store, other, &w, &info, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (empty_room->len, ==, 0);
  g_assert_true (info.room_empty);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/window/parse", test_parse);
  g_test_add_func ("/catchup/window/cap", test_cap);
  g_test_add ("/catchup/window/resolve-capped", Fixture, NULL, fixture_setup, test_resolve_capped,
              fixture_teardown);
  g_test_add ("/catchup/window/resolve-unread", Fixture, NULL, fixture_setup, test_resolve_unread,
              fixture_teardown);
  g_test_add ("/catchup/window/resolve-empty", Fixture, NULL, fixture_setup, test_resolve_empty, fixture_teardown);
  return g_test_run ();
}
