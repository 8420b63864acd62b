#include "config.h"

#include <string.h>

#include "catchup.h"
#include "test-util.h"

/* ---------- reciprocal rank fusion ---------- */

static GArray *
hit_list (const gint64 *ids, guint n)
{
  GArray *l = g_array_new (FALSE, FALSE, sizeof (CatchupHit));

  for (guint i = 0; i < n; i++)
    {
      /* raw scores are irrelevant to fusion: only ranks count */
      CatchupHit h = { ids[i], 1000.0 - i * 0.5 };

      g_array_append_val (l, h);
    }
  return l;
}

static double
score_of (GArray *fused, gint64 id)
{
  for (guint i = 0; i < fused->len; i++)
    if (g_array_index (fused, CatchupHit, i).chunk == id)
      return g_array_index (fused, CatchupHit, i).score;
  return -1;
}

static void
test_rrf_arithmetic (void)
{
  const gint64 a[] = { 10, 20, 30 }, b[] = { 40, 50, 10 };
  g_autoptr (GArray) la = hit_list (a, G_N_ELEMENTS (a)), lb = hit_list (b, G_N_ELEMENTS (b));
  GArray *lists[] = { la, lb };
  g_autoptr (GArray) fused = catchup_retrieve_fuse (lists, 2, CATCHUP_RRF_K, 30);

  g_assert_cmpuint (fused->len, ==, 5);
  /* 1st in one list and 3rd in the other */
  g_assert_cmpint (g_array_index (fused, CatchupHit, 0).chunk, ==, 10);
  g_assert_cmpfloat_with_epsilon (score_of (fused, 10), 1.0 / 61 + 1.0 / 63, 1e-12);
  g_assert_cmpfloat_with_epsilon (score_of (fused, 20), 1.0 / 62, 1e-12);
  g_assert_cmpfloat_with_epsilon (score_of (fused, 30), 1.0 / 63, 1e-12);
  g_assert_cmpfloat_with_epsilon (score_of (fused, 40), 1.0 / 61, 1e-12);
  g_assert_cmpfloat_with_epsilon (score_of (fused, 50), 1.0 / 62, 1e-12);
  /* best first */
  for (guint i = 1; i < fused->len; i++)
    g_assert_cmpfloat (g_array_index (fused, CatchupHit, i - 1).score, >=, g_array_index (fused, CatchupHit, i).score);
}

static void
test_rrf_ties_and_top (void)
{
  const gint64 a[] = { 1, 2, 3, 4 }, b[] = { 5, 6, 7, 8 };
  g_autoptr (GArray) la = hit_list (a, G_N_ELEMENTS (a)), lb = hit_list (b, G_N_ELEMENTS (b));
  GArray *lists[] = { la, NULL, lb };
  g_autoptr (GArray) all = catchup_retrieve_fuse (lists, 3, CATCHUP_RRF_K, 30);
  g_autoptr (GArray) top = catchup_retrieve_fuse (lists, 3, CATCHUP_RRF_K, 3);
  g_autoptr (GArray) none = catchup_retrieve_fuse (lists, 0, CATCHUP_RRF_K, 30);
  g_autoptr (GHashTable) firsts = g_hash_table_new (g_int64_hash, g_int64_equal);

  /* a NULL list counts as empty; the same rank in two lists is a tie */
  g_assert_cmpuint (all->len, ==, 8);
  g_assert_cmpfloat (score_of (all, 1), ==, score_of (all, 5));
  g_assert_cmpfloat (score_of (all, 4), ==, score_of (all, 8));
  g_assert_cmpfloat_with_epsilon (score_of (all, 4), 1.0 / 64, 1e-12);
  for (guint i = 0; i < 2; i++)
    g_hash_table_add (firsts, &g_array_index (all, CatchupHit, i).chunk);
  g_assert_true (g_hash_table_contains (firsts, &a[0]));
  g_assert_true (g_hash_table_contains (firsts, &b[0]));
  /* the top cut keeps the best: both first ranks and one of the two second ranks */
  g_assert_cmpuint (top->len, ==, 3);
  g_assert_cmpfloat_with_epsilon (g_array_index (top, CatchupHit, 0).score, 1.0 / 61, 1e-12);
  g_assert_cmpfloat_with_epsilon (g_array_index (top, CatchupHit, 1).score, 1.0 / 61, 1e-12);
  g_assert_cmpfloat_with_epsilon (g_array_index (top, CatchupHit, 2).score, 1.0 / 62, 1e-12);
  g_assert_cmpuint (none->len, ==, 0);
}

static void
test_rrf_k (void)
{
  const gint64 a[] = { 7, 8 };
  g_autoptr (GArray) la = hit_list (a, G_N_ELEMENTS (a));
  GArray *lists[] = { la, la };
  g_autoptr (GArray) fused = catchup_retrieve_fuse (lists, 2, 1, 30);

  /* k = 1: 2 * 1/2 and 2 * 1/3 */
  g_assert_cmpuint (fused->len, ==, 2);
  g_assert_cmpfloat_with_epsilon (score_of (fused, 7), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (score_of (fused, 8), 2.0 / 3, 1e-12);
}

/* ---------- retrieval over a room ---------- */

/* Ordinary team chatter: none of it shares the rare words the tests look for. */
static const char *const chatter[] = {
  "morning all, coffee machine on floor two is fixed",
  "standup moved to half past ten today",
  "who has the meeting room booked after lunch",
  "the printer on floor three needs toner again",
  "lunch order closes at noon, pizza or salad",
  "reminder: timesheets are due on friday",
  "the wifi in the kitchen keeps dropping",
  "new laptop arrived, setting it up now",
  "can someone water the plants this week",
  "parking garage closes early on thursday",
  "the quarterly survey link is in the newsletter",
  "fire drill at three, leave your bags",
};
static const char *const people[] = { "ann", "bo", "cy", "dee" };

typedef struct {
  CatchupStore *store;
  gint64 room;
  GPtrArray *msgs; /* stored, in order */
} Fixture;

static void
add_line (Fixture *fx, GPtrArray *batch, const char *speaker, const char *text)
{
  guint i = fx->msgs->len + batch->len;
  g_autofree char *id = g_strdup_printf ("r%03u", i);

  g_ptr_array_add (batch, catchup_message_new (id, 1767225600 + (gint64) i * 90, speaker, text));
}

static void
fixture_setup (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) batch = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  fx->store = test_store_with_room (":memory:", "prpl-jabber", "me@example.org", "team@conf.example.org", &fx->room);
  fx->msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  for (guint i = 0; i < 120; i++)
    {
      if (i == 40)
        add_line (fx, batch, "mira", "the zeppelin hangar lease is signed, keys are with facilities");
      else if (i == 60)
        add_line (fx, batch, "ravi", "the database release license purchase is closed");
      else if (i == 85)
        add_line (fx, batch, "ravi", "I reconfigured the loadbalancer healthchecks for the reconfiguration window");
      else
        add_line (fx, batch, people[i % G_N_ELEMENTS (people)], chatter[(i * 5) % G_N_ELEMENTS (chatter)]);
    }
  g_assert_true (catchup_store_add_batch (fx->store, fx->room, batch, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (catchup_index_update (fx->store, fx->room, &error));
  g_assert_no_error (error);
  g_ptr_array_extend_and_steal (fx->msgs, g_steal_pointer (&batch));
}

static void
fixture_teardown (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_clear_pointer (&fx->msgs, g_ptr_array_unref);
  g_clear_pointer (&fx->store, catchup_store_close);
}

static CatchupMessage *
msg (Fixture *fx, guint i)
{
  return fx->msgs->pdata[i];
}

static gboolean
chunk_has (Fixture *fx, gint64 chunk, const char *id)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) turns = catchup_index_chunk_turns (fx->store, chunk, &error);

  g_assert_no_error (error);
  for (guint i = 0; i < turns->len; i++)
    if (strcmp (((CatchupMessage *) turns->pdata[i])->id, id) == 0)
      return TRUE;
  return FALSE;
}

static void
test_sparse_rare_word (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) hits = catchup_retrieve_sparse (fx->store, fx->room, "where is the Zeppelin hangar?", NULL,
                                                     CATCHUP_RETRIEVE_TOP, &error);

  g_assert_no_error (error);
  g_assert_nonnull (hits);
  /* only the chunks holding the rare words match (the rest share no term with the question) */
  g_assert_cmpuint (hits->len, >=, 1);
  g_assert_cmpuint (hits->len, <=, 2);
  for (guint i = 0; i < hits->len; i++)
    g_assert_true (chunk_has (fx, g_array_index (hits, CatchupHit, i).chunk, msg (fx, 40)->id));
  for (guint i = 1; i < hits->len; i++)
    g_assert_cmpfloat (g_array_index (hits, CatchupHit, i - 1).score, >=, g_array_index (hits, CatchupHit, i).score);
}

static void
test_sparse_before (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupPos at = catchup_pos_of (msg (fx, 40)), later = catchup_pos_of (msg (fx, 100));
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) none = catchup_retrieve_sparse (fx->store, fx->room, "zeppelin hangar", &at, 30, &error);
  g_autoptr (GArray) some = NULL;

  /* every chunk holding message 40 ends at or after it */
  g_assert_no_error (error);
  g_assert_cmpuint (none->len, ==, 0);
  some = catchup_retrieve_sparse (fx->store, fx->room, "zeppelin hangar", &later, 30, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (some->len, >=, 1);
  for (guint i = 0; i < some->len; i++)
    {
      g_autoptr (GPtrArray) turns = catchup_index_chunk_turns (fx->store, g_array_index (some, CatchupHit, i).chunk,
                                                                  &error);
      CatchupPos last;

      g_assert_no_error (error);
      last = catchup_pos_of (turns->pdata[turns->len - 1]);
      g_assert_cmpint (catchup_pos_cmp (&last, &later), <, 0);
    }
}

static void
test_sparse_top (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) hits = catchup_retrieve_sparse (fx->store, fx->room, "printer toner lunch pizza", NULL, 2,
                                                     &error);

  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 2);
}

static void
test_sparse_hostile (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GString) huge = g_string_new (NULL);
  const char *queries[] = {
    "", "   ", "\"", "\"\"\"", "zeppelin\"", "\"zeppelin hangar", "AND", "OR", "NOT", "NEAR",
    "zeppelin AND hangar", "zeppelin OR NOT hangar", "NEAR(zeppelin hangar, 3)", "zeppelin NEAR hangar",
    "*", "zepp*", "^zeppelin", "^", "(", ")", "((zeppelin)", "zeppelin)", "terms:zeppelin", "chunks_fts",
    "{terms}: zeppelin", "- zeppelin", "+", "🙂🎉", "zeppelin 🙂 hangar", "飞艇 机库", "ツェッペリン", "비행선",
    "'; DROP TABLE chunks; --", "\\", "%_", "zeppelin\nhangar\t\r", "\xff\xfe invalid utf8 \xc3",
    NULL, /* the huge line */
  };

  for (guint i = 0; i < 100 * 1024 / 16; i++)
    g_string_append (huge, i % 7 ? "\"AND( zeppelin*^" : "OR NEAR) 🙂 飞艇 ");
  for (guint i = 0; i < G_N_ELEMENTS (queries); i++)
    {
      const char *q = queries[i] ? queries[i] : huge->str;
      g_autoptr (GError) error = NULL;
      g_autoptr (GArray) hits = catchup_retrieve_sparse (fx->store, fx->room, q, NULL, CATCHUP_RETRIEVE_TOP, &error);

      g_assert_no_error (error);
      g_assert_nonnull (hits);
      g_assert_cmpuint (hits->len, <=, CATCHUP_RETRIEVE_TOP);
      /* operators are words like any other: the rare word still finds its chunk */
      if (queries[i] && strstr (queries[i], "zeppelin") && !strstr (queries[i], "NOT"))
        g_assert_cmpuint (hits->len, >=, 1);
    }
  g_assert_cmpuint (huge->len, >=, 100 * 1024);
}

static void
test_dense_variants (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  float q[CATCHUP_EMBED_DIM];
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) hits = NULL;
  CatchupPos at = catchup_pos_of (msg (fx, 85));

  /* no word in common with message 85, only variants of its words */
  catchup_embed_hashed ("reconfiguring loadbalancers healthcheck", q);
  hits = catchup_retrieve_dense (fx->store, fx->room, q, NULL, 5, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, >=, 1);
  g_assert_cmpuint (hits->len, <=, 5);
  g_assert_true (chunk_has (fx, g_array_index (hits, CatchupHit, 0).chunk, msg (fx, 85)->id));
  for (guint i = 1; i < hits->len; i++)
    g_assert_cmpfloat (g_array_index (hits, CatchupHit, i - 1).score, >=, g_array_index (hits, CatchupHit, i).score);
  /* and it respects `before` like the sparse side */
  g_clear_pointer (&hits, g_array_unref);
  hits = catchup_retrieve_dense (fx->store, fx->room, q, &at, 30, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < hits->len; i++)
    g_assert_false (chunk_has (fx, g_array_index (hits, CatchupHit, i).chunk, msg (fx, 85)->id));
}

static void
test_dense_zero_query (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  float q[CATCHUP_EMBED_DIM] = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) hits = catchup_retrieve_dense (fx->store, fx->room, q, NULL, 30, &error);

  /* a query without terms has no direction: nothing scores above zero */
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 0);
}

static void
test_chunk_turns (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) hits = catchup_retrieve_sparse (fx->store, fx->room, "zeppelin", NULL, 1, &error);
  g_autoptr (GPtrArray) turns = NULL, missing = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 1);
  turns = catchup_index_chunk_turns (fx->store, g_array_index (hits, CatchupHit, 0).chunk, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (turns->len, >, 1);
  for (guint i = 1; i < turns->len; i++)
    {
      CatchupPos a = catchup_pos_of (turns->pdata[i - 1]), b = catchup_pos_of (turns->pdata[i]);

      g_assert_cmpint (catchup_pos_cmp (&a, &b), <, 0);
    }
  missing = catchup_index_chunk_turns (fx->store, 999999, &error);
  g_assert_null (missing);
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND);
}

static void
test_idf_turn_bm25 (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) idf = catchup_retrieve_idf (fx->store, "is the zeppelin printer ready", NULL, &error);
  double *rare, *common, with, without, none;

  g_assert_no_error (error);
  g_assert_nonnull (idf);
  rare = g_hash_table_lookup (idf, "zeppelin");
  common = g_hash_table_lookup (idf, "printer");
  g_assert_nonnull (rare);
  g_assert_nonnull (common);
  /* stop words are no terms */
  g_assert_false (g_hash_table_contains (idf, "the"));
  g_assert_false (g_hash_table_contains (idf, "is"));
  g_assert_cmpfloat (*rare, >, *common);
  g_assert_cmpfloat (*common, >, 0);

  with = catchup_retrieve_turn_bm25 (idf, "mira: the zeppelin is parked");
  without = catchup_retrieve_turn_bm25 (idf, "bo: the printer is parked");
  none = catchup_retrieve_turn_bm25 (idf, "cy: coffee machine works");
  g_assert_cmpfloat (with, >, without);
  g_assert_cmpfloat (without, >, none);
  g_assert_cmpfloat (none, ==, 0);
  /* a longer turn with the same match scores lower (length normalisation) */
  g_assert_cmpfloat (catchup_retrieve_turn_bm25 (idf, "zeppelin parked behind the old warehouse near the river "
                                                      "gate by the loading dock"), <, with);
}

static void
test_idf_empty_and_unknown (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) empty = catchup_retrieve_idf (fx->store, "", NULL, &error);
  g_autoptr (GHashTable) hostile = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (g_hash_table_size (empty), ==, 0);
  g_assert_cmpfloat (catchup_retrieve_turn_bm25 (empty, "anything at all"), ==, 0);
  hostile = catchup_retrieve_idf (fx->store, "\"NEAR( OR * ^ 🙂 飞艇 xyzzyq", NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (hostile);
  /* a term no chunk holds has the highest idf there is */
  g_assert_true (g_hash_table_contains (hostile, "xyzzyq"));
  g_assert_cmpfloat (*(double *) g_hash_table_lookup (hostile, "xyzzyq"), >, 0);
}

/* The focus of an idf table, searched as terms, finds what the original query finds, even for words whose
 * stem would stem again into another word ("release" -> "releas" -> "relea"). */
static void
test_focus_query (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  const char *queries[] = { "database release", "license purchase closing", "is the purchase closed?" };

  for (guint i = 0; i < G_N_ELEMENTS (queries); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GHashTable) idf = catchup_retrieve_idf (fx->store, queries[i], NULL, &error);
      g_autofree char *focus = NULL;
      g_autoptr (GArray) direct = NULL, focused = NULL;

      g_assert_no_error (error);
      focus = catchup_retrieve_focus (idf, 16);
      g_assert_nonnull (focus);
      direct = catchup_retrieve_sparse (fx->store, fx->room, queries[i], NULL, 30, &error);
      g_assert_no_error (error);
      focused = catchup_retrieve_sparse_terms (fx->store, fx->room, focus, NULL, 30, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (direct->len, >=, 1);
      g_assert_true (chunk_has (fx, g_array_index (direct, CatchupHit, 0).chunk, msg (fx, 60)->id));
      g_assert_cmpuint (focused->len, ==, direct->len);
      for (guint k = 0; k < direct->len; k++)
        g_assert_cmpint (g_array_index (focused, CatchupHit, k).chunk, ==, g_array_index (direct, CatchupHit, k).chunk);
    }
}

static void
test_sparse_terms (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  const char *terms[] = { "", " ", "zeppelin", " zeppelin  hangar ", "\"", "NEAR ( * ^", "zeppelin\"\"" };

  for (guint i = 0; i < G_N_ELEMENTS (terms); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GArray) hits = catchup_retrieve_sparse_terms (fx->store, fx->room, terms[i], NULL, 30, &error);

      /* terms are meant to come from catchup_text_terms, but nothing breaks the FTS5 query */
      g_assert_no_error (error);
      g_assert_nonnull (hits);
      if (i == 2 || i == 3)
        g_assert_cmpuint (hits->len, >=, 1);
      else if (i < 2)
        g_assert_cmpuint (hits->len, ==, 0);
    }
}

/* One FTS5 pass for many queries ranks each as its own bm25() query would: the same scores in the same order
 * (chatter repeats, so equal scores may swap places), before a position too, for queries that share a pass
 * and queries that do not. */
static void
test_sparse_multi (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  const char *queries[] = { "zeppelin hangar leas", "hangar leas key", "printer toner floor",
                            "floor printer wifi kitchen", "", "xyzzyq", "lunch", "\xe9\xa3\x9e" };
  guint n = G_N_ELEMENTS (queries);
  CatchupPos later = catchup_pos_of (msg (fx, 100));
  const CatchupPos *befores[] = { NULL, &later };
  const guint tops[] = { 30, 3 };

  for (guint b = 0; b < G_N_ELEMENTS (befores); b++)
    for (guint t = 0; t < G_N_ELEMENTS (tops); t++)
      {
        g_autoptr (GError) error = NULL;
        g_autoptr (GHashTable) df = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
        g_autofree GArray **out = g_new0 (GArray *, n);

        g_assert_true (catchup_retrieve_sparse_multi (fx->store, fx->room, queries, n, df, befores[b], tops[t], out,
                                                      &error));
        g_assert_no_error (error);
        g_assert_cmpuint (out[0]->len, >=, 1);
        for (guint q = 0; q < n; q++)
          {
            g_autoptr (GArray) mine = out[q];
            g_autoptr (GArray) one = catchup_retrieve_sparse_terms (fx->store, fx->room, queries[q], befores[b],
                                                                    tops[t], &error);
            g_autoptr (GArray) all = catchup_retrieve_sparse_terms (fx->store, fx->room, queries[q], befores[b],
                                                                    1000, &error);

            g_assert_no_error (error);
            g_assert_cmpuint (mine->len, ==, one->len);
            for (guint k = 0; k < one->len; k++)
              {
                const CatchupHit *h = &g_array_index (mine, CatchupHit, k);

                g_assert_cmpfloat_with_epsilon (h->score, g_array_index (one, CatchupHit, k).score, 1e-9);
                g_assert_cmpfloat_with_epsilon (h->score, score_of (all, h->chunk), 1e-9);
              }
          }
      }
}

/* Terms catchup_text_terms would never cut still make a valid expression and a list each. */
static void
test_sparse_multi_hostile (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  const char *queries[] = { "\"", "NEAR ( * ^", "\xcc\x81", "zeppelin\"\"", " ", "a\"b c*d", "\xf0\x9f\x99\x82" };
  guint n = G_N_ELEMENTS (queries);
  g_autoptr (GError) error = NULL;
  g_autofree GArray **out = g_new0 (GArray *, n);

  g_assert_true (catchup_retrieve_sparse_multi (fx->store, fx->room, queries, n, NULL, NULL, 5, out, &error));
  g_assert_no_error (error);
  for (guint q = 0; q < n; q++)
    {
      g_assert_cmpuint (out[q]->len, <=, 5);
      g_array_unref (out[q]);
    }
}

/* The quantised dot product is the exact integer sum over every byte, extremes included (a stored vector is
 * read as it is, -128 too). */
static void
test_dot_qq (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  gint8 a[CATCHUP_EMBED_DIM], b[CATCHUP_EMBED_DIM];

  for (guint round = 0; round < 200; round++)
    {
      gint64 s = 0;

      for (guint d = 0; d < CATCHUP_EMBED_DIM; d++)
        {
          /* the first rounds are all extremes: the largest sums there are, of either sign */
          a[d] = round == 0 ? -128 : round == 1 ? 127 : (gint8) g_rand_int_range (rand, -128, 128);
          b[d] = round < 2 ? -128 : (gint8) g_rand_int_range (rand, -128, 128);
          s += (gint64) a[d] * b[d];
        }
      g_assert_cmpfloat (catchup_vec_dot_qq (a, b), ==, (float) (gint32) s / (127.0f * 127.0f));
      g_assert_cmpfloat (catchup_vec_dot_qq (b, a), ==, catchup_vec_dot_qq (a, b));
    }
}

/* Terms as long as URLs, hashes and base64 in chat: every length near the old fixed buffer's end, and far
 * beyond it. Two such words that differ in their last letter still share most trigrams. */
static void
test_embed_long_terms (void)
{
  for (guint len = 58; len <= 300; len += len < 70 ? 1 : 46)
    {
      g_autofree char *a = g_strnfill (len, 'q');
      g_autofree char *b = g_strnfill (len, 'q');
      float va[CATCHUP_EMBED_DIM], vb[CATCHUP_EMBED_DIM];

      a[len - 1] = 'x';
      b[len - 1] = 'z';
      catchup_embed_hashed (a, va);
      catchup_embed_hashed (b, vb);
      g_assert_cmpfloat (catchup_vec_dot (va, va, CATCHUP_EMBED_DIM), >, 0.99f);
      g_assert_cmpfloat (catchup_vec_dot (va, vb, CATCHUP_EMBED_DIM), >, 0.5f);
    }
}

#define TEST(name, func) \
  g_test_add ("/catchup/retrieve/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/retrieve/rrf-arithmetic", test_rrf_arithmetic);
  g_test_add_func ("/catchup/retrieve/rrf-ties-and-top", test_rrf_ties_and_top);
  g_test_add_func ("/catchup/retrieve/rrf-k", test_rrf_k);
  g_test_add_func ("/catchup/retrieve/embed-long-terms", test_embed_long_terms);
  g_test_add_func ("/catchup/retrieve/dot-qq", test_dot_qq);
  TEST ("sparse-rare-word", test_sparse_rare_word);
  TEST ("sparse-before", test_sparse_before);
  TEST ("sparse-top", test_sparse_top);
  TEST ("sparse-hostile", test_sparse_hostile);
  TEST ("dense-variants", test_dense_variants);
  TEST ("dense-zero-query", test_dense_zero_query);
  TEST ("chunk-turns", test_chunk_turns);
  TEST ("idf-turn-bm25", test_idf_turn_bm25);
  TEST ("focus-query", test_focus_query);
  TEST ("sparse-terms", test_sparse_terms);
  TEST ("sparse-multi", test_sparse_multi);
  TEST ("sparse-multi-hostile", test_sparse_multi_hostile);
  TEST ("idf-empty-and-unknown", test_idf_empty_and_unknown);
  return g_test_run ();
}
