#include "config.h"

#include <string.h>

#include "test-util.h"

/* The room's nick history as people: a renamed person is one person to the per-person catch-up and to ask. */

static void
add_turn (CatchupStore *store, gint64 room, const char *id, gint64 ts, const char *speaker, const char *text)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) batch = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  g_ptr_array_add (batch, catchup_message_new (id, ts, speaker, text));
  g_assert_true (catchup_store_add_batch (store, room, batch, NULL, &error));
  g_assert_no_error (error);
}

static void
rename_nick (CatchupStore *store, gint64 room, gint64 ts, const char *old_nick, const char *new_nick)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (catchup_store_add_nick_change (store, room, ts, old_nick, new_nick, &error));
  g_assert_no_error (error);
}

/* alice goes away and comes back as alice_; bob never renames. */
static CatchupStore *
office_room (gint64 *room)
{
  CatchupStore *store = test_store_with_room (":memory:", "prpl-irc", "me", "#office", room);
  g_autoptr (GError) error = NULL;

  add_turn (store, *room, "1", 100, "alice", "I think the new office is too far from the station");
  add_turn (store, *room, "2", 110, "bob", "lunch at noon?");
  rename_nick (store, *room, 200, "alice", "alice_away");
  add_turn (store, *room, "3", 300, "bob", "alice_away: can you book the meeting room for Friday?");
  rename_nick (store, *room, 400, "alice_away", "alice_");
  add_turn (store, *room, "4", 900, "alice_", "ok the office grew on me, I will book the room for Friday");
  add_turn (store, *room, "5", 910, "bob", "the office move is fine by me");
  g_assert_true (catchup_records_update (store, *room, 0, NULL, &error));
  g_assert_no_error (error);
  return store;
}

static void
test_same_and_aliases (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = office_room (&room);
  g_autoptr (CatchupNicks) nicks = catchup_nicks_load (store, room, &error);
  g_auto (GStrv) aliases = NULL, bob = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (nicks);
  /* a chain of renames links its ends, both ways */
  g_assert_true (catchup_nicks_same (nicks, "alice", "alice_"));
  g_assert_true (catchup_nicks_same (nicks, "alice_", "alice_away"));
  g_assert_false (catchup_nicks_same (nicks, "alice", "bob"));
  g_assert_true (catchup_nicks_same (nicks, "bob", "bob"));
  g_assert_false (catchup_nicks_same (nicks, "bob", NULL));
  /* without a history only the same nick is the same person */
  g_assert_true (catchup_nicks_same (NULL, "carol", "carol"));
  g_assert_false (catchup_nicks_same (NULL, "alice", "alice_"));

  aliases = catchup_nicks_aliases (nicks, "alice_");
  g_assert_cmpuint (g_strv_length (aliases), ==, 3);
  g_assert_cmpstr (aliases[0], ==, "alice_");
  g_assert_true (g_strv_contains ((const char *const *) aliases, "alice"));
  g_assert_true (g_strv_contains ((const char *const *) aliases, "alice_away"));
  bob = catchup_nicks_aliases (nicks, "bob");
  g_assert_cmpuint (g_strv_length (bob), ==, 1);
}

/* Renames of another room link nobody here. */
static void
test_rooms_apart (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = office_room (&room);
  gint64 other = catchup_store_ensure_room (store, "prpl-irc", "me", "#elsewhere", &error);
  g_autoptr (CatchupNicks) nicks = NULL;

  g_assert_no_error (error);
  rename_nick (store, other, 50, "bob", "alice");
  nicks = catchup_nicks_load (store, room, &error);
  g_assert_no_error (error);
  g_assert_false (catchup_nicks_same (nicks, "alice", "bob"));
}

static gboolean
has_id (GPtrArray *msgs, const char *id)
{
  for (guint i = 0; i < msgs->len; i++)
    if (strcmp (((CatchupMessage *) msgs->pdata[i])->id, id) == 0)
      return TRUE;
  return FALSE;
}

/* summarize --about alice: what she said as alice_ too, and what others asked of alice_away. */
static void
test_about_renamed (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = office_room (&room);
  g_autoptr (GPtrArray) window = catchup_store_range (store, room, NULL, NULL, 0, &error);
  g_autoptr (CatchupAbout) about = catchup_about_build (store, room, window, "alice", &error);
  gboolean committed = FALSE;

  g_assert_no_error (error);
  g_assert_cmpstr (about->person, ==, "alice");
  g_assert_cmpuint (about->said->len, ==, 2);
  g_assert_true (has_id (about->said, "1"));
  g_assert_true (has_id (about->said, "4"));
  g_assert_true (has_id (about->asked, "3"));
  g_assert_false (has_id (about->asked, "5"));
  /* her commitment as alice_ is hers */
  for (guint i = 0; i < about->committed->len; i++)
    committed |= g_strcmp0 (((CatchupRecord *) about->committed->pdata[i])->owner, "alice_") == 0;
  g_assert_true (committed);
}

/* A question about alice gets her turns under every nick, and nobody else's. */
static void
test_ask_renamed (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = office_room (&room);
  g_autoptr (CatchupAskQuery) q = catchup_ask_compile_for_room (store, room, "How did alice's view of the office "
                                                                "change?", &error);
  g_autoptr (CatchupAskResult) res = NULL;
  const CatchupAskRow *row;

  g_assert_no_error (error);
  res = catchup_ask_people (store, room, g_steal_pointer (&q), 1024, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->rows->len, ==, 1);
  row = res->rows->pdata[0];
  g_assert_cmpstr (row->person, ==, "alice");
  g_assert_true (has_id (row->turns, "1"));
  g_assert_true (has_id (row->turns, "4"));
  g_assert_false (has_id (row->turns, "2"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/nicks/same-and-aliases", test_same_and_aliases);
  g_test_add_func ("/catchup/nicks/rooms-apart", test_rooms_apart);
  g_test_add_func ("/catchup/nicks/about-renamed", test_about_renamed);
  g_test_add_func ("/catchup/nicks/ask-renamed", test_ask_renamed);
  return g_test_run ();
}
