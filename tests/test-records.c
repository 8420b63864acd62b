#include "config.h"

#include <string.h>

#include "catchup-store-private.h"
#include "catchup-writer.h"
#include "test-util.h"

static const char *const roster[] = { "alice", "bob", "carol", "dave", NULL };

/* The records one line yields, as "kind owner[!]" words (! marks a request), space-separated. */
static char *
extract (const char *speaker, const char *text)
{
  g_autoptr (CatchupMessage) m = catchup_message_new ("m1", 100, speaker, text);
  g_autoptr (GPtrArray) recs = catchup_records_extract (m, roster);
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < recs->len; i++)
    {
      CatchupRecord *r = recs->pdata[i];

      g_assert_cmpstr (r->source, ==, speaker);
      g_assert_cmpstr (r->msg_id, ==, "m1");
      g_string_append_printf (out, "%s%s %s%s", out->len ? " " : "", catchup_record_kind_to_string (r->kind),
                              *r->owner ? r->owner : "group", (r->flags & CATCHUP_RECORD_FLAG_REQUEST) ? "!" : "");
    }
  return g_string_free (out, FALSE);
}

static gboolean
has (const char *got, const char *want)
{
  g_autofree char *padded = g_strdup_printf (" %s ", got);
  g_autofree char *needle = g_strdup_printf (" %s ", want);

  return strstr (padded, needle) != NULL;
}

#define ASSERT_HAS(speaker, text, want) \
  G_STMT_START { \
    g_autofree char *got_ = extract (speaker, text); \
    if (!has (got_, want)) \
      g_error ("%s: \"%s\" gave \"%s\", wanted \"%s\"", speaker, text, got_, want); \
  } G_STMT_END
#define ASSERT_LACKS(speaker, text, unwanted) \
  G_STMT_START { \
    g_autofree char *got_ = extract (speaker, text); \
    if (has (got_, unwanted)) \
      g_error ("%s: \"%s\" gave \"%s\", which should not hold \"%s\"", speaker, text, got_, unwanted); \
  } G_STMT_END

static void
test_phrase (void)
{
  g_autofree char *folded = catchup_records_fold ("I’LL do it, it’s DONE");

  g_assert_cmpstr (folded, ==, "i'll do it, it's done");
  g_assert_true (catchup_records_has_phrase (folded, "i'll"));
  g_assert_true (catchup_records_has_phrase (folded, "done"));
  g_assert_false (catchup_records_has_phrase ("that is undone", "done"));
  g_assert_false (catchup_records_has_phrase ("donezo", "done"));
  g_assert_true (catchup_records_has_phrase ("+1 from me", "+1"));
  g_assert_false (catchup_records_has_phrase ("", "done"));
  g_assert_true (catchup_records_has_phrase ("ça, c'est fait: done.", "done"));
}

static void
test_commitment (void)
{
  ASSERT_HAS ("alice", "I'll book the table for Friday", "commitment alice");
  ASSERT_HAS ("alice", "I will send the agenda", "commitment alice");
  ASSERT_HAS ("bob", "on it", "commitment bob");
  ASSERT_LACKS ("bob", "the illness went away", "commitment bob");
}

static void
test_decision (void)
{
  ASSERT_HAS ("carol", "ok, decided: we ship on Monday", "decision group");
  ASSERT_HAS ("carol", "let's go with Postgres", "decision group");
  ASSERT_HAS ("carol", "From now on the standup is at ten", "decision group");
  ASSERT_HAS ("carol", "we're doing the migration in March", "decision group");
  ASSERT_LACKS ("carol", "the vote went nowhere", "decision group");
}

static void
test_stance (void)
{
  ASSERT_HAS ("dave", "I think the old schema is fine", "stance dave");
  ASSERT_HAS ("dave", "I'd rather wait a week", "stance dave");
  ASSERT_HAS ("dave", "strongly against a rewrite", "stance dave");
  ASSERT_HAS ("dave", "+1", "stance dave");
}

static void
test_ownership (void)
{
  ASSERT_HAS ("alice", "bob owns the release notes", "relation bob");
  ASSERT_HAS ("alice", "carol is RM from now", "decision carol");
  ASSERT_HAS ("alice", "my sister is visiting this week", "relation alice");
}

static void
test_fact (void)
{
  ASSERT_HAS ("alice", "dave is away until Monday", "fact dave");
  ASSERT_HAS ("bob", "I'm off on Friday", "fact bob");
}

static void
test_status (void)
{
  ASSERT_HAS ("bob", "merged the fix", "status bob");
  ASSERT_HAS ("bob", "blocked on the review", "status bob");
  ASSERT_HAS ("bob", "done!", "status bob");
}

static void
test_request (void)
{
  /* who is addressed owns the request, not who asked */
  ASSERT_HAS ("alice", "bob: can you review the patch?", "commitment bob!");
  ASSERT_HAS ("alice", "@carol could you check the invoice", "commitment carol!");
  ASSERT_HAS ("alice", "please take a look, dave", "commitment dave!");
  ASSERT_LACKS ("alice", "can you believe it", "commitment alice!");
  /* the asker's own name never makes them the owner */
  ASSERT_LACKS ("alice", "alice: can you all vote", "commitment alice!");
}

static void
test_empty (void)
{
  g_autoptr (CatchupMessage) m = catchup_message_new ("m1", 1, "alice", "lol");
  g_autoptr (GPtrArray) none = catchup_records_extract (m, roster);

  g_assert_cmpuint (none->len, ==, 0);
}

static void
add_turn (CatchupStore *store, gint64 room, const char *id, gint64 ts, const char *speaker, const char *text)
{
  g_autoptr (CatchupMessage) m = catchup_message_new (id, ts, speaker, text);
  g_autoptr (GError) error = NULL;

  g_assert_true (catchup_store_add (store, room, m, NULL, &error));
  g_assert_no_error (error);
}

static GPtrArray *
decisions (GPtrArray *recs)
{
  GPtrArray *out = g_ptr_array_new ();

  for (guint i = 0; i < recs->len; i++)
    if (((CatchupRecord *) recs->pdata[i])->kind == CATCHUP_RECORD_DECISION)
      g_ptr_array_add (out, recs->pdata[i]);
  return out;
}

/* A decision revised twice: the head is the last, the full view all three in order, linked both ways. */
static void
test_chain (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = test_store_with_room (":memory:", "prpl-irc", "me", "#team", &room);
  g_autoptr (GPtrArray) all = NULL, heads = NULL, chain = NULL;
  g_autoptr (GPtrArray) all_d = NULL, head_d = NULL;
  guint n = 0;

  add_turn (store, room, "d1", 100, "alice", "decided: the release goes out on Friday");
  add_turn (store, room, "x1", 110, "bob", "lunch anyone?");
  add_turn (store, room, "d2", 200, "carol", "change of plan, the release moves to Monday");
  add_turn (store, room, "d3", 300, "alice", "final answer: release on Wednesday");
  add_turn (store, room, "d4", 310, "dave", "decided on pizza for the party");
  g_assert_true (catchup_records_update (store, room, 0, &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, >=, 4);

  all = catchup_records_list (store, room, "", FALSE, &error);
  g_assert_no_error (error);
  heads = catchup_records_list (store, room, "", TRUE, &error);
  g_assert_no_error (error);
  all_d = decisions (all);
  head_d = decisions (heads);
  g_assert_cmpuint (all_d->len, ==, 4);
  /* the release's head and the unrelated pizza decision */
  g_assert_cmpuint (head_d->len, ==, 2);
  g_assert_cmpstr (((CatchupRecord *) head_d->pdata[0])->msg_id, ==, "d3");
  g_assert_cmpstr (((CatchupRecord *) head_d->pdata[1])->msg_id, ==, "d4");

  chain = catchup_records_chain (store, room, ((CatchupRecord *) all_d->pdata[1])->id, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (chain->len, ==, 3);
  g_assert_cmpstr (((CatchupRecord *) chain->pdata[0])->msg_id, ==, "d1");
  g_assert_cmpstr (((CatchupRecord *) chain->pdata[1])->msg_id, ==, "d2");
  g_assert_cmpstr (((CatchupRecord *) chain->pdata[2])->msg_id, ==, "d3");
  g_assert_cmpint (((CatchupRecord *) chain->pdata[0])->superseded_by, ==, ((CatchupRecord *) chain->pdata[1])->id);
  g_assert_cmpint (((CatchupRecord *) chain->pdata[2])->supersedes, ==, ((CatchupRecord *) chain->pdata[1])->id);
  g_assert_cmpint (((CatchupRecord *) chain->pdata[2])->superseded_by, ==, 0);
}

/* A status of the same owner closes a commitment: the open commitments are the heads of kind commitment. */
static void
test_commitment_closed (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = test_store_with_room (":memory:", "prpl-irc", "me", "#team", &room);
  g_autoptr (GPtrArray) heads = NULL;
  guint open = 0, status = 0;

  add_turn (store, room, "c1", 100, "bob", "I'll fix the login crash");
  add_turn (store, room, "c2", 110, "bob", "I'll write the changelog");
  add_turn (store, room, "c3", 200, "bob", "login crash fixed and merged");
  g_assert_true (catchup_records_update (store, room, 0, NULL, &error));
  g_assert_no_error (error);
  heads = catchup_records_list (store, room, "bob", TRUE, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < heads->len; i++)
    {
      CatchupRecord *r = heads->pdata[i];

      open += r->kind == CATCHUP_RECORD_COMMITMENT;
      status += r->kind == CATCHUP_RECORD_STATUS;
      if (r->kind == CATCHUP_RECORD_COMMITMENT)
        g_assert_cmpstr (r->msg_id, ==, "c2");
    }
  g_assert_cmpuint (open, ==, 1);
  g_assert_cmpuint (status, ==, 1);
}

/* Building is incremental and idempotent: a second run reads nothing, new messages only what is new, and a
 * bounded run leaves the rest for the next. */
static void
test_incremental (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = test_store_with_room (":memory:", "prpl-irc", "me", "#team", &room);
  guint n = 0;

  add_turn (store, room, "a", 100, "alice", "I'll take the notes");
  add_turn (store, room, "b", 101, "bob", "I think that works");
  g_assert_true (catchup_records_update (store, room, 1, &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 1);
  g_assert_true (catchup_records_update (store, room, 0, &n, &error));
  g_assert_cmpuint (n, ==, 1);
  g_assert_true (catchup_records_update (store, room, 0, &n, &error));
  g_assert_cmpuint (n, ==, 0);
  add_turn (store, room, "c", 102, "carol", "merged");
  g_assert_true (catchup_records_update (store, room, 0, &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records WHERE room = ?1", room), ==, 3);
}

/* The importer builds the records of what it stores; forgetting the room removes them. */
static void
test_import_and_forget (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = test_store_with_room (":memory:", "prpl-irc", "me", "#team", &room);
  g_autoptr (CatchupImportResult) result = catchup_import_result_new ();
  const char *jsonl = "{\"id\":\"1\",\"ts\":\"2026-03-02T09:00:00Z\",\"speaker\":\"alice\",\"text\":\"I'll call the bank\"}\n"
                      "{\"id\":\"2\",\"ts\":\"2026-03-02T09:01:00Z\",\"speaker\":\"bob\",\"text\":\"let's go with plan B\"}\n";
  g_autoptr (GInputStream) in = g_memory_input_stream_new_from_data (jsonl, -1, NULL);

  g_assert_true (catchup_import_jsonl_stream (store, in, room, result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records WHERE room = ?1", room), ==, 2);
  g_assert_true (catchup_retention_forget_room (store, room, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records WHERE ?1 = ?1", 0), ==, 0);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records_state WHERE ?1 = ?1", 0), ==, 0);
}

/* Retention deletes the records of the messages it deletes. */
static void
test_prune (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = test_store_with_room (":memory:", "prpl-irc", "me", "#team", &room);

  add_turn (store, room, "old", 100, "alice", "I'll do the old thing");
  add_turn (store, room, "new", 1000, "alice", "I'll do the new thing");
  g_assert_true (catchup_records_update (store, room, 0, NULL, &error));
  g_assert_true (catchup_retention_prune (store, 500, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records WHERE room = ?1", room), ==, 1);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records r JOIN messages m ON m.row = r.row WHERE m.uid = 'new' AND r.room = ?1", room), ==, 1);
}

/* The model writer's actions are checked one by one: the valid ones are stored, the rest dropped. */
static void
test_model_actions (void)
{
  g_autoptr (GError) error = NULL;
  gint64 room;
  g_autoptr (CatchupStore) store = test_store_with_room (":memory:", "prpl-irc", "me", "#team", &room);
  g_autoptr (GPtrArray) segment = NULL;
  g_autoptr (GPtrArray) bob = NULL;
  g_autoptr (GPtrArray) all = NULL;
  g_autofree char *reply = NULL;
  guint applied = 0, dropped = 0;
  gint64 old_bob, old_alice;

  add_turn (store, room, "m1", 100, "bob", "I think the office is too far");
  add_turn (store, room, "m2", 110, "alice", "I'll book the room");
  g_assert_true (catchup_records_update (store, room, 0, NULL, &error));
  old_bob = test_sql_count (store, "SELECT id FROM records WHERE owner = 'bob' AND room = ?1", room);
  old_alice = test_sql_count (store, "SELECT id FROM records WHERE owner = 'alice' AND room = ?1", room);
  add_turn (store, room, "m3", 200, "bob", "the office grew on me");
  segment = catchup_store_range (store, room, NULL, NULL, 0, &error);
  g_assert_no_error (error);
  g_ptr_array_remove_range (segment, 0, 2);
  reply = g_strdup_printf (
    "Here you go:\n```json\n{\"actions\": ["
    /* valid: an update of bob's stance by bob, with evidence in the segment */
    "{\"op\": \"update\", \"target\": %" G_GINT64_FORMAT ", \"kind\": \"stance\", \"source\": \"bob\", "
    "\"owner\": \"bob\", \"subject\": \"office\", \"text\": \"likes the office now\", \"evidence\": [\"m3\"]},"
    /* valid: a group norm */
    "{\"op\": \"add\", \"kind\": \"norm\", \"source\": \"bob\", \"owner\": \"group\", \"text\": \"x\", "
    "\"evidence\": [\"m3\"]},"
    "{\"op\": \"noop\"},"
    /* unknown evidence id */
    "{\"op\": \"add\", \"kind\": \"fact\", \"source\": \"bob\", \"owner\": \"bob\", \"text\": \"x\", "
    "\"evidence\": [\"m99\"]},"
    /* evidence outside the segment */
    "{\"op\": \"add\", \"kind\": \"fact\", \"source\": \"bob\", \"owner\": \"bob\", \"text\": \"x\", "
    "\"evidence\": [\"m1\"]},"
    /* a source who did not write the evidence */
    "{\"op\": \"add\", \"kind\": \"fact\", \"source\": \"alice\", \"owner\": \"bob\", \"text\": \"x\", "
    "\"evidence\": [\"m3\"]},"
    /* an owner outside the roster */
    "{\"op\": \"add\", \"kind\": \"fact\", \"source\": \"bob\", \"owner\": \"mallory\", \"text\": \"x\", "
    "\"evidence\": [\"m3\"]},"
    /* update of a missing record */
    "{\"op\": \"update\", \"target\": 99999, \"kind\": \"stance\", \"source\": \"bob\", \"owner\": \"bob\", "
    "\"text\": \"x\", \"evidence\": [\"m3\"]},"
    /* update of someone else's record */
    "{\"op\": \"update\", \"target\": %" G_GINT64_FORMAT ", \"kind\": \"stance\", \"source\": \"bob\", "
    "\"owner\": \"bob\", \"text\": \"x\", \"evidence\": [\"m3\"]},"
    /* unknown kind and op, and not an object */
    "{\"op\": \"add\", \"kind\": \"gossip\", \"source\": \"bob\", \"owner\": \"bob\", \"text\": \"x\", "
    "\"evidence\": [\"m3\"]},"
    "{\"op\": \"delete\", \"target\": 1}, 42]}\n```\n",
    old_bob, old_alice);
  g_assert_true (catchup_records_apply_model_reply (store, room, segment, reply, &applied, &dropped, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (applied, ==, 2);
  g_assert_cmpuint (dropped, ==, 9);
  bob = catchup_records_list (store, room, "bob", TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (bob->len, ==, 1);
  g_assert_cmpstr (((CatchupRecord *) bob->pdata[0])->text, ==, "likes the office now");
  g_assert_cmpint (((CatchupRecord *) bob->pdata[0])->supersedes, ==, old_bob);
  g_assert_cmpstr (((CatchupRecord *) bob->pdata[0])->msg_id, ==, "m3");
  /* alice's record was not touched */
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records WHERE superseded_by IS NULL AND owner = 'alice'"
                                          " AND room = ?1", room), ==, 1);
  all = catchup_records_list (store, room, "", TRUE, &error);
  g_assert_cmpuint (all->len, >=, 1);
  /* a reply without JSON drops everything and says so */
  g_assert_false (catchup_records_apply_model_reply (store, room, segment, "no idea", &applied, &dropped, &error));
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_MODEL);
}

/* The model path against the test server: one call for the segment, its valid actions stored, the invalid ones
 * (unknown evidence, an owner outside the roster, an update of a missing record or of another owner's record)
 * dropped. */
static void
test_model_server (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = test_tmp_dir ("catchup-records-XXXXXX");
  gint64 room;
  g_autoptr (CatchupStore) store = test_store_with_room (":memory:", "prpl-irc", "me", "#team", &room);
  g_autoptr (GPtrArray) segment = NULL;
  g_autoptr (CatchupLlm) llm = NULL;
  CatchupLlmConfig config;
  guint applied = 0, dropped = 0;
  GPid pid = 0;
  guint port = test_server_start (dir, &pid);

  if (!test_need_server (port))
    {
      test_remove_tree (dir);
      return;
    }
  add_turn (store, room, "m1", 100, "carol", "I'll write the release notes");
  g_assert_true (catchup_records_update (store, room, 0, NULL, &error));
  add_turn (store, room, "m2", 200, "bob", "I think we should ship on Monday");
  add_turn (store, room, "m3", 210, "alice", "fine by me");
  segment = catchup_store_range (store, room, NULL, NULL, 0, &error);
  g_ptr_array_remove_index (segment, 0);
  catchup_llm_config_init (&config);
  config.base_url = g_strdup_printf ("http://127.0.0.1:%u/s/records.r1/v1", port);
  config.chat_model = g_strdup ("test-chat");
  config.timeout_ms = 5000;
  llm = catchup_llm_new (&config, &error);
  catchup_llm_config_clear (&config);
  g_assert_no_error (error);
  g_assert_true (catchup_records_model_write (store, room, llm, segment, &applied, &dropped, NULL, &error));
  g_assert_no_error (error);
  /* one add per message of the segment; four invalid actions, carol's record among the heads shown */
  g_assert_cmpuint (applied, ==, 2);
  g_assert_cmpuint (dropped, ==, 4);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records WHERE text LIKE 'said: %' AND room = ?1", room),
                   ==, 2);
  /* carol's commitment is still the head of her chain */
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records WHERE owner = 'carol' AND superseded_by IS NULL"
                                          " AND room = ?1", room), >=, 1);
  test_server_stop (pid);
  test_remove_tree (dir);
}

static CatchupLlm *
test_llm (guint port, const char *scenario)
{
  g_autoptr (GError) error = NULL;
  CatchupLlmConfig config;
  CatchupLlm *llm;

  catchup_llm_config_init (&config);
  config.base_url = g_strdup_printf ("http://127.0.0.1:%u/s/%s/v1", port, scenario);
  config.chat_model = g_strdup ("test-chat");
  config.timeout_ms = 5000;
  llm = catchup_llm_new (&config, &error);
  catchup_llm_config_clear (&config);
  g_assert_no_error (error);
  return llm;
}

static gint64
model_mark (CatchupStore *store, gint64 room)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *value = catchup_store_get_setting (store, room, CATCHUP_RECORDS_MODEL_MARK, &error);

  g_assert_no_error (error);
  return value ? g_ascii_strtoll (value, NULL, 10) : -1;
}

/* The background model writer: a segment a call within the pass's bounds, the invalid actions dropped, the
 * mark kept so the next pass goes on where this one stopped, and the rule-based records untouched. */
static void
test_model_fill (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = test_tmp_dir ("catchup-records-XXXXXX");
  gint64 room, rules;
  g_autoptr (CatchupStore) store = test_store_with_room (":memory:", "prpl-irc", "me", "#team", &room);
  g_autoptr (CatchupLlm) llm = NULL;
  g_autoptr (GArray) rooms = g_array_new (FALSE, FALSE, sizeof (gint64));
  CatchupRecordsModelLimits limits;
  CatchupRecordsModelStats stats;
  GPid pid = 0;
  guint port = test_server_start (dir, &pid);

  if (!test_need_server (port))
    {
      test_remove_tree (dir);
      return;
    }
  g_array_append_val (rooms, room);
  add_turn (store, room, "m1", 100, "carol", "I'll write the release notes");
  add_turn (store, room, "m2", 200, "bob", "I think we should ship on Monday");
  add_turn (store, room, "m3", 210, "alice", "fine by me");
  add_turn (store, room, "m4", 220, "bob", "decided: Monday it is");
  add_turn (store, room, "m5", 230, "carol", "notes are done");
  g_assert_true (catchup_records_update (store, room, 0, NULL, &error));
  rules = test_sql_count (store, "SELECT count(*) FROM records WHERE flags & 2 = 0 AND room = ?1", room);
  llm = test_llm (port, "records.fill");
  catchup_records_model_limits_init (&limits);
  limits.segment = 2;
  limits.max_calls = 2;
  g_assert_true (catchup_records_model_fill (store, rooms, llm, &limits, NULL, NULL, &stats, NULL, &error));
  g_assert_no_error (error);
  /* two calls of two messages each, then the bound */
  g_assert_cmpuint (stats.calls, ==, 2);
  g_assert_cmpuint (stats.segments, ==, 2);
  g_assert_true (stats.more);
  g_assert_cmpuint (stats.applied, ==, 4);
  /* per segment: unknown evidence, an owner outside the roster, an update of a missing record (and of another
   * owner's record where the heads show one) */
  g_assert_cmpuint (stats.dropped, >=, 6);
  g_assert_cmpint (model_mark (store, room), ==,
                   test_sql_count (store, "SELECT row FROM messages WHERE uid = 'm4' AND room = ?1", room));
  g_assert_true (catchup_records_model_fill (store, rooms, llm, &limits, NULL, NULL, &stats, NULL, &error));
  g_assert_cmpuint (stats.calls, ==, 1);
  g_assert_cmpuint (stats.applied, ==, 1);
  g_assert_false (stats.more);
  /* nothing new: no call */
  g_assert_true (catchup_records_model_fill (store, rooms, llm, &limits, NULL, NULL, &stats, NULL, &error));
  g_assert_cmpuint (stats.calls, ==, 0);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records WHERE text LIKE 'said: %' AND room = ?1", room),
                   ==, 5);
  g_assert_cmpint (test_sql_count (store, "SELECT count(*) FROM records WHERE flags & 2 = 0 AND room = ?1", room),
                   ==, rules);
  test_server_stop (pid);
  test_remove_tree (dir);
}

/* Through the history writer, as the plugin runs it: a room first seen is written from its latest messages
 * only; a reply without JSON drops its segment and moves on; a dead endpoint leaves the mark where it was. */
static void
test_model_fill_writer (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = test_tmp_dir ("catchup-records-XXXXXX");
  g_autofree char *path = g_build_filename (dir, "history.db", NULL);
  g_autoptr (CatchupWriter) writer = NULL;
  g_autoptr (CatchupStore) reader = NULL;
  g_autoptr (CatchupLlm) llm = NULL, prose = NULL, dead = NULL;
  g_autoptr (GArray) rooms = g_array_new (FALSE, FALSE, sizeof (gint64));
  CatchupRecordsModelLimits limits;
  CatchupRecordsModelStats stats;
  gint64 room;
  GPid pid = 0;
  guint port = test_server_start (dir, &pid);

  if (!test_need_server (port))
    {
      test_remove_tree (dir);
      return;
    }
  writer = catchup_writer_new (path, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 12; i++)
    {
      g_autofree char *id = g_strdup_printf ("w%02u", i);
      g_autofree char *text = g_strdup_printf ("status update number %u on the build", i);

      catchup_writer_add (writer, "prpl-irc", "me", "#team", catchup_message_new (id, 100 + i, i % 2 ? "bob" : "ann",
                                                                                 text));
    }
  catchup_writer_flush (writer);
  reader = catchup_store_open (path, &error);
  g_assert_no_error (error);
  room = catchup_store_find_room (reader, "#team", &error);
  g_assert_no_error (error);
  g_array_append_val (rooms, room);
  catchup_records_model_limits_init (&limits);
  limits.segment = 4;
  limits.backlog = 8;
  prose = test_llm (port, "askprose.w");
  g_assert_true (catchup_records_model_fill (reader, rooms, prose, &limits, catchup_writer_records_sink, writer, &stats,
                                             NULL, &error));
  g_assert_no_error (error);
  /* the latest 8 of 12 messages, in two calls; nothing usable in either */
  g_assert_cmpuint (stats.calls, ==, 2);
  g_assert_cmpuint (stats.applied, ==, 0);
  g_assert_cmpint (model_mark (reader, room), ==,
                   test_sql_count (reader, "SELECT max(row) FROM messages WHERE room = ?1", room));
  catchup_writer_add (writer, "prpl-irc", "me", "#team", catchup_message_new ("w12", 200, "ann", "I'll fix the build"));
  catchup_writer_flush (writer);
  dead = test_llm (1, "records");
  g_assert_false (catchup_records_model_fill (reader, rooms, dead, &limits, catchup_writer_records_sink, writer, &stats,
                                              NULL, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  llm = test_llm (port, "records.w");
  g_assert_true (catchup_records_model_fill (reader, rooms, llm, &limits, catchup_writer_records_sink, writer, &stats,
                                             NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (stats.calls, ==, 1);
  g_assert_cmpuint (stats.applied, ==, 1);
  g_assert_cmpint (test_sql_count (reader, "SELECT count(*) FROM records WHERE text LIKE 'said: %' AND room = ?1",
                                   room), ==, 1);
  test_server_stop (pid);
  catchup_writer_free (g_steal_pointer (&writer));
  test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/records/phrase", test_phrase);
  g_test_add_func ("/catchup/records/commitment", test_commitment);
  g_test_add_func ("/catchup/records/decision", test_decision);
  g_test_add_func ("/catchup/records/stance", test_stance);
  g_test_add_func ("/catchup/records/ownership", test_ownership);
  g_test_add_func ("/catchup/records/fact", test_fact);
  g_test_add_func ("/catchup/records/status", test_status);
  g_test_add_func ("/catchup/records/request", test_request);
  g_test_add_func ("/catchup/records/empty", test_empty);
  g_test_add_func ("/catchup/records/chain", test_chain);
  g_test_add_func ("/catchup/records/commitment-closed", test_commitment_closed);
  g_test_add_func ("/catchup/records/incremental", test_incremental);
  g_test_add_func ("/catchup/records/import-and-forget", test_import_and_forget);
  g_test_add_func ("/catchup/records/prune", test_prune);
  g_test_add_func ("/catchup/records/model-actions", test_model_actions);
  g_test_add_func ("/catchup/records/model-server", test_model_server);
  g_test_add_func ("/catchup/records/model-fill", test_model_fill);
  g_test_add_func ("/catchup/records/model-fill-writer", test_model_fill_writer);
  return g_test_run ();
}
