#include "config.h"

#include <string.h>

#include "test-util.h"

static CatchupAskResult *
ask (CatchupStore *store, gint64 room, const char *question, guint budget, GError **error)
{
  CatchupOptions opts;

  catchup_options_init (&opts);
  opts.memory.budget = budget;
  return catchup_engine_ask (store, room, question, &opts, NULL, NULL, error);
}

static const char *const roster[] = { "alice", "Bob", "carol", "dave", NULL };

static char *
people_of (const CatchupAskQuery *q)
{
  g_autoptr (GPtrArray) v = g_ptr_array_new ();

  for (guint i = 0; i < q->people->len; i++)
    g_ptr_array_add (v, q->people->pdata[i]);
  g_ptr_array_add (v, NULL);
  return g_strjoinv (",", (char **) v->pdata);
}

static void
test_compile_names (void)
{
  g_autoptr (CatchupAskQuery) q = catchup_ask_compile ("What did bob and Alice say about the venue?", roster);
  g_autoptr (CatchupAskQuery) none = catchup_ask_compile ("when is the party?", roster);
  g_autoptr (CatchupAskQuery) part = catchup_ask_compile ("did alicea or bobby come?", roster);
  g_autofree char *p = people_of (q);
  g_autofree char *pp = people_of (part);

  /* in the order named, spelled as in the roster, whole words only */
  g_assert_cmpstr (p, ==, "Bob,alice");
  g_assert_cmpuint (none->people->len, ==, 0);
  g_assert_false (none->everyone);
  g_assert_cmpstr (pp, ==, "");
  /* names and question words are not the topic; the subject is */
  g_assert_null (strstr (q->topic, "bob"));
  g_assert_nonnull (strstr (q->topic, "venue"));
  g_assert_null (strstr (q->topic, "what"));
}

static gint64
local_unix (int year, int month, int day)
{
  g_autoptr (GDateTime) t = g_date_time_new_local (year, month, day, 0, 0, 0);

  return g_date_time_to_unix (t);
}

static void
test_compile_dates (void)
{
  g_autoptr (CatchupAskQuery) dmy = catchup_ask_compile ("What did bob share on 3 June, 2023?", roster);
  g_autoptr (CatchupAskQuery) mdy = catchup_ask_compile ("What did bob bake on May 25, 2022?", roster);
  g_autoptr (CatchupAskQuery) nth = catchup_ask_compile ("Which book did alice finish on 8th December, 2023?",
                                                         roster);
  g_autoptr (CatchupAskQuery) month = catchup_ask_compile ("Where did carol travel in July 2022?", roster);
  g_autoptr (CatchupAskQuery) bare = catchup_ask_compile ("Where did carol go camping in June?", roster);
  g_autoptr (CatchupAskQuery) bad = catchup_ask_compile ("What happened on 31 February, 2023?", roster);

  /* a named day is that local day, a named month that month, [since, until) */
  g_assert_cmpint (dmy->since, ==, local_unix (2023, 6, 3));
  g_assert_cmpint (dmy->until, ==, local_unix (2023, 6, 4));
  g_assert_cmpint (mdy->since, ==, local_unix (2022, 5, 25));
  g_assert_cmpint (nth->since, ==, local_unix (2023, 12, 8));
  g_assert_cmpint (month->since, ==, local_unix (2022, 7, 1));
  g_assert_cmpint (month->until, ==, local_unix (2022, 8, 1));
  /* a month without a year names no time; a day that does not exist leaves its month */
  g_assert_cmpint (bare->until, ==, 0);
  g_assert_cmpint (bad->since, ==, local_unix (2023, 2, 1));
  g_assert_cmpint (bad->until, ==, local_unix (2023, 3, 1));
}

static void
test_compile_everyone (void)
{
  g_autoptr (CatchupAskQuery) q = catchup_ask_compile ("What did everyone think of the new office?", roster);
  g_autoptr (CatchupAskQuery) each = catchup_ask_compile ("What was each of us doing, carol first?", roster);
  g_autofree char *p = people_of (q);
  g_autofree char *pe = people_of (each);

  g_assert_true (q->everyone);
  g_assert_cmpstr (p, ==, "alice,Bob,carol,dave");
  /* a named person keeps the first row */
  g_assert_true (each->everyone);
  g_assert_cmpstr (pe, ==, "carol,alice,Bob,dave");
}

static void
test_compile_mode (void)
{
  g_autoptr (CatchupAskQuery) now = catchup_ask_compile ("what did we decide about the launch?", roster);
  g_autoptr (CatchupAskQuery) changed = catchup_ask_compile ("how has dave's view on the launch changed?", roster);
  g_autoptr (CatchupAskQuery) time = catchup_ask_compile ("bob's plan over time", roster);
  g_autoptr (CatchupAskQuery) before = catchup_ask_compile ("what did carol want before the vote?", roster);

  g_assert_cmpint (now->mode, ==, CATCHUP_ASK_HEAD);
  g_assert_cmpint (changed->mode, ==, CATCHUP_ASK_FULL);
  g_assert_cmpint (time->mode, ==, CATCHUP_ASK_FULL);
  g_assert_cmpint (before->mode, ==, CATCHUP_ASK_FULL);
}

static void
test_compile_source_owner (void)
{
  g_autoptr (CatchupAskQuery) q = catchup_ask_compile ("what does alice think of bob's plan?", roster);
  g_autoptr (CatchupAskQuery) own = catchup_ask_compile ("is carol's laptop fixed?", roster);
  g_autoptr (CatchupAskQuery) plain = catchup_ask_compile ("what does alice think?", roster);

  g_assert_cmpstr (q->source, ==, "alice");
  g_assert_cmpstr (q->owner, ==, "Bob");
  g_assert_cmpstr (own->owner, ==, "carol");
  g_assert_null (own->source);
  g_assert_null (plain->owner);
  g_assert_null (plain->source);
}

static void
add_turn (CatchupStore *store, gint64 room, const char *id, gint64 ts, const char *speaker, const char *text)
{
  g_autoptr (CatchupMessage) m = catchup_message_new (id, ts, speaker, text);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) batch = g_ptr_array_new ();

  g_ptr_array_add (batch, m);
  g_assert_true (catchup_store_add_batch (store, room, batch, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (catchup_index_update (store, room, &error));
  g_assert_true (catchup_records_update (store, room, 0, NULL, &error));
  g_assert_no_error (error);
}

static gboolean
row_has (const CatchupAskRow *row, const char *id)
{
  for (guint i = 0; i < row->turns->len; i++)
    if (strcmp (((CatchupMessage *) row->turns->pdata[i])->id, id) == 0)
      return TRUE;
  return FALSE;
}

static const CatchupAskRow *
row_of (const CatchupAskResult *res, const char *person)
{
  for (guint i = 0; i < res->rows->len; i++)
    if (g_strcmp0 (((CatchupAskRow *) res->rows->pdata[i])->person, person) == 0)
      return res->rows->pdata[i];
  g_error ("no row for %s", person);
  return NULL;
}

static CatchupStore *
office_room (gint64 *room)
{
  CatchupStore *store = test_store_with_room (":memory:", "prpl-irc", "me", "#office", room);

  add_turn (store, *room, "1", 100, "alice", "I think the new office is too far from the station");
  add_turn (store, *room, "2", 110, "Bob", "lunch at noon?");
  add_turn (store, *room, "3", 120, "carol", "I love the new office, the light is great");
  add_turn (store, *room, "4", 130, "dave", "anyone seen my charger");
  add_turn (store, *room, "5", 140, "Bob", "the office move is fine by me");
  add_turn (store, *room, "6", 900, "alice", "ok the office grew on me, the commute is not that bad");
  add_turn (store, *room, "7", 910, "carol", "alice: can you book the meeting room for Friday?");
  return store;
}

/* One row per person, each with that person's own evidence; an empty row stays empty. */
static void
test_ask_everyone (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = office_room (&room);
  g_autoptr (CatchupAskResult) res = ask (store, room, "What does everyone think of the new office?", 1024, &error);
  const CatchupAskRow *dave = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (res->rows->len, ==, 4);
  for (guint i = 0; i < res->rows->len; i++)
    {
      const CatchupAskRow *row = res->rows->pdata[i];

      for (guint t = 0; t < row->turns->len; t++)
        {
          const CatchupMessage *m = row->turns->pdata[t];

          /* a row holds what its person said or what names them, never someone else's unrelated turn */
          g_assert_true (g_strcmp0 (m->speaker, row->person) == 0 || strstr (m->text, row->person) != NULL);
        }
      if (g_strcmp0 (row->person, "dave") == 0)
        dave = row;
    }
  g_assert_true (row_has (row_of (res, "alice"), "1"));
  g_assert_true (row_has (row_of (res, "alice"), "6"));
  /* the newest turn of a row is its latest state */
  g_assert_cmpstr (row_of (res, "alice")->latest_id, ==, "7");
  g_assert_true (row_has (row_of (res, "carol"), "3"));
  g_assert_nonnull (dave);
  g_assert_true (row_has (dave, "4"));
}

/* A question about one person: their turns first; within a small budget the ones on the subject. */
static void
test_ask_person_budget (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = office_room (&room);
  g_autoptr (CatchupAskResult) res = ask (store, room, "How did alice's view of the office change?", 30, &error);
  const CatchupAskRow *row;

  g_assert_no_error (error);
  g_assert_cmpuint (res->rows->len, ==, 1);
  row = res->rows->pdata[0];
  g_assert_cmpstr (row->person, ==, "alice");
  g_assert_cmpint (res->query->mode, ==, CATCHUP_ASK_FULL);
  /* the old and the new state both, in time order */
  g_assert_cmpuint (row->turns->len, ==, 2);
  g_assert_cmpstr (((CatchupMessage *) row->turns->pdata[0])->id, ==, "1");
  g_assert_cmpstr (((CatchupMessage *) row->turns->pdata[1])->id, ==, "6");
  g_assert_cmpuint (res->memory->tokens, <=, 30);
  g_assert_cmpuint (res->memory->turns->len, ==, 2);
}

/* A person who said nothing gets an empty row; a question about no one is the room's one row. */
static void
test_ask_empty_and_room (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = test_store_with_room (":memory:", "prpl-irc", "me", "#x", &room);
  g_autoptr (CatchupAskResult) res = NULL, about_room = NULL;

  add_turn (store, room, "1", 100, "alice", "the deploy is done");
  add_turn (store, room, "2", 110, "erin", "great");
  res = ask (store, room, "what did alice and erin say about the deploy?", 1024, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->rows->len, ==, 2);
  g_assert_true (row_has (res->rows->pdata[0], "1"));
  g_assert_cmpuint (((CatchupAskRow *) res->rows->pdata[1])->turns->len, ==, 1);
  about_room = ask (store, room, "is the deploy done?", 1024, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (about_room->rows->len, ==, 1);
  g_assert_null (((CatchupAskRow *) about_room->rows->pdata[0])->person);
  g_assert_true (row_has (about_room->rows->pdata[0], "1"));
}

/* The derived track's part of a row: the person's records on the subject; the head only unless it changed. */
static void
test_ask_records (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = office_room (&room);
  g_autoptr (CatchupAskResult) res = ask (store, room, "what does carol think of the office?", 1024, &error);
  const CatchupAskRow *row;

  g_assert_no_error (error);
  row = res->rows->pdata[0];
  g_assert_cmpstr (row->person, ==, "carol");
  g_assert_cmpuint (row->records->len, >=, 1);
  for (guint i = 0; i < row->records->len; i++)
    {
      const CatchupRecord *r = row->records->pdata[i];

      g_assert_cmpstr (r->owner, ==, "carol");
      g_assert_cmpint (r->superseded_by, ==, 0);
    }
}

/* Budget left once the people's own turns are in goes to the room's turns on the question, in the evidence but
 * never in a person's row. */
static void
test_ask_leftover (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = office_room (&room);
  g_autoptr (CatchupAskResult) res = ask (store, room, "what does carol think of the new office?", 1024, &error);
  const CatchupAskRow *row;
  gboolean alice_in = FALSE;

  g_assert_no_error (error);
  row = res->rows->pdata[0];
  for (guint i = 0; i < row->turns->len; i++)
    {
      const CatchupMessage *m = row->turns->pdata[i];

      g_assert_true (g_strcmp0 (m->speaker, "carol") == 0 || strstr (m->text, "carol") != NULL);
    }
  for (guint i = 0; i < res->memory->turns->len; i++)
    alice_in |= strcmp (((CatchupMessage *) res->memory->turns->pdata[i])->id, "1") == 0;
  /* alice's view of the office is evidence too, within the budget */
  g_assert_true (alice_in);
  g_assert_cmpuint (res->memory->tokens, <=, 1024);
}

/* The model's answer is checked sentence by sentence: ids that are no evidence go, and so does a sentence left
 * without one, one about someone outside the roster, or one about a person its turns are not by or about. */
static void
test_answer_checks (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = office_room (&room);
  g_autoptr (CatchupAskResult) res = ask (store, room, "What does everyone think of the new office?", 1024, &error);
  g_autoptr (CatchupAskAnswer) answer = NULL, none = NULL;
  g_autoptr (GPtrArray) cited = NULL;
  g_autofree char *prompt = NULL, *text = NULL;
  guint dropped = 0;
  const char *reply =
    "<think>the evidence first</think>Here it is:\n```json\n"
    "{\"answer\": ["
    " {\"person\": \"alice\", \"text\": \"Alice came round to the office.\", \"ids\": [\"1\", \"6\", \"ghost\"]},"
    " {\"person\": \"@bob\", \"text\": \"Bob is fine with it.\", \"ids\": [5]},"
    " {\"person\": null, \"text\": \"Most like it.\", \"ids\": [\"3\"]},"
    " {\"person\": \"carol\", \"text\": \"Carol has no charger.\", \"ids\": [\"4\"]},"
    " {\"person\": \"mallory\", \"text\": \"Mallory decided.\", \"ids\": [\"1\"]},"
    " {\"person\": \"dave\", \"text\": \"Nothing real.\", \"ids\": [\"ghost\"]},"
    " {\"text\": \"no ids at all\"}]}\n```";

  g_assert_no_error (error);
  prompt = catchup_ask_answer_prompt (res, &error);
  g_assert_no_error (error);
  /* the question, the roster and the evidence as a data block */
  g_assert_nonnull (strstr (prompt, "What does everyone think of the new office?"));
  g_assert_nonnull (strstr (prompt, "The people of the room: "));
  g_assert_nonnull (strstr (strstr (prompt, "The people of the room: "), "dave"));
  g_assert_nonnull (strstr (prompt, "<<<BEGIN EVIDENCE DATA"));
  answer = catchup_ask_answer_parse (reply, res, &dropped, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (answer->lines->len, ==, 3);
  g_assert_cmpuint (dropped, ==, 4);
  /* spelled as in the roster; the unknown id gone, the good ones kept */
  g_assert_cmpstr (((CatchupAskLine *) answer->lines->pdata[1])->person, ==, "Bob");
  g_assert_null (((CatchupAskLine *) answer->lines->pdata[2])->person);
  cited = catchup_ask_answer_cited (answer);
  g_assert_cmpuint (cited->len, ==, 4);
  g_assert_cmpstr (cited->pdata[0], ==, "1");
  g_assert_cmpstr (cited->pdata[1], ==, "6");
  g_assert_cmpstr (cited->pdata[2], ==, "5");
  text = catchup_ask_answer_text (answer);
  g_assert_cmpstr (text, ==, "Alice came round to the office. Bob is fine with it. Most like it.");
  /* nothing usable, or no JSON: no answer */
  none = catchup_ask_answer_parse ("{\"answer\": [{\"person\": \"mallory\", \"text\": \"x\", \"ids\": [\"1\"]}]}",
                                   res, &dropped, &error);
  g_assert_null (none);
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL);
  g_clear_error (&error);
  g_assert_null (catchup_ask_answer_parse ("I think they like it.", res, NULL, &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/ask/compile-names", test_compile_names);
  g_test_add_func ("/catchup/ask/compile-dates", test_compile_dates);
  g_test_add_func ("/catchup/ask/compile-everyone", test_compile_everyone);
  g_test_add_func ("/catchup/ask/compile-mode", test_compile_mode);
  g_test_add_func ("/catchup/ask/compile-source-owner", test_compile_source_owner);
  g_test_add_func ("/catchup/ask/everyone", test_ask_everyone);
  g_test_add_func ("/catchup/ask/person-budget", test_ask_person_budget);
  g_test_add_func ("/catchup/ask/empty-and-room", test_ask_empty_and_room);
  g_test_add_func ("/catchup/ask/records", test_ask_records);
  g_test_add_func ("/catchup/ask/leftover", test_ask_leftover);
  g_test_add_func ("/catchup/ask/answer-checks", test_answer_checks);
  return g_test_run ();
}
