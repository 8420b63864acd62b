#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "catchup.h"
#include "test-util.h"

/*
 * A small room: a far antecedent and a question answered on day one, two topic blocks (a zeppelin hangar
 * and a quokka enclosure), plenty of ordinary chatter, then the window. Every history turn is "name: six
 * words", 8 tokens, so budgets count in whole turns.
 */

#define TURN_TOKENS 8
#define N_FILLER 160

static const char *const filler_words[] = {
  "coffee", "lunch", "printer", "parking", "survey", "plants", "kitchen", "badge", "chairs", "stairs",
  "window", "heating", "poster", "calendar", "snacks", "umbrella", "elevator", "whiteboard", "markers",
  "stapler", "lamp", "desk", "mugs", "fridge",
};
static const char *const ordinals[] = { "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
                                        "hotel", "india", "juliet" };

typedef struct {
  CatchupStore *store;
  gint64 room;
  GPtrArray *all;      /* every message stored, in order (owns them) */
  GPtrArray *history;  /* the turns before the window, in order */
  GPtrArray *window;   /* the last messages of the room */
  char *antecedent_id, *answer_id, *component_id, *release_id;
  GHashTable *zeppelin_ids, *quokka_ids;
} Fixture;

static void
push (GPtrArray *to, const char *speaker, const char *text)
{
  static guint seq;
  g_autofree char *id = g_strdup_printf ("t%04u", seq);

  g_ptr_array_add (to, catchup_message_new (id, 1767600000 + (gint64) seq * 120, speaker, text));
  seq++;
}

static const char *
last_id (GPtrArray *msgs)
{
  return ((CatchupMessage *) msgs->pdata[msgs->len - 1])->id;
}

static void
filler (GPtrArray *to, guint n, guint salt)
{
  static const char *const who[] = { "ann", "bo", "cy", "dee" };

  for (guint i = 0; i < n; i++)
    {
      guint k = i + salt;
      g_autofree char *text = g_strdup_printf ("%s %s %s and %s today",
                                               filler_words[k % G_N_ELEMENTS (filler_words)],
                                               filler_words[(k * 7 + 3) % G_N_ELEMENTS (filler_words)],
                                               filler_words[(k * 11 + 5) % G_N_ELEMENTS (filler_words)],
                                               filler_words[(k * 13 + 1) % G_N_ELEMENTS (filler_words)]);

      /* "x y z and w today": 6 words */
      push (to, who[k % G_N_ELEMENTS (who)], text);
    }
}

static void
fixture_setup (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GError) error = NULL;
  GPtrArray *all = fx->all = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  fx->store = test_store_with_room (":memory:", "prpl-irc", "me@irc.example", "#infra", &fx->room);
  fx->zeppelin_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  fx->quokka_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  /* day one */
  push (all, "mira", "the websocket gateway fallback is longpoll");
  fx->antecedent_id = g_strdup (last_id (all));
  push (all, "ravi", "which port does exporter use?");
  push (all, "mira", "the exporter listens on nine thousand");
  fx->answer_id = g_strdup (last_id (all));
  filler (all, 10, 0);
  push (all, "ravi", "the frobnicator daemon restarts every sunday");
  fx->component_id = g_strdup (last_id (all));
  push (all, "mira", "the database release ships on thursday");
  fx->release_id = g_strdup (last_id (all));
  filler (all, 10, 50);
  for (guint i = 0; i < G_N_ELEMENTS (ordinals); i++)
    {
      g_autofree char *text = g_strdup_printf ("zeppelin hangar ballast tank %s checked", ordinals[i]);

      push (all, "zed", text);
      g_hash_table_add (fx->zeppelin_ids, g_strdup (last_id (all)));
    }
  filler (all, 30, 100);
  for (guint i = 0; i < G_N_ELEMENTS (ordinals); i++)
    {
      g_autofree char *text = g_strdup_printf ("quokka enclosure feeding shift %s covered", ordinals[i]);

      push (all, "quinn", text);
      g_hash_table_add (fx->quokka_ids, g_strdup (last_id (all)));
    }
  /* far enough that the lead-in cannot reach day one */
  filler (all, N_FILLER, 200);
  fx->history = g_ptr_array_new ();
  for (guint i = 0; i < all->len; i++)
    {
      CatchupMessage *m = all->pdata[i];

      g_assert_cmpuint (catchup_text_count_turn (m->speaker, m->text), ==, TURN_TOKENS);
      g_ptr_array_add (fx->history, m);
    }

  fx->window = g_ptr_array_new ();
  push (all, "ann", "morning");
  push (all, "ravi", "the gateway is dropping sessions again, let's switch to the fallback");
  push (all, "bo", "lol");
  push (all, "dee", "I will tell the support desk");
  push (all, "cy", "the frobnicator is stuck again, can you restart it");
  for (guint i = all->len - 5; i < all->len; i++)
    g_ptr_array_add (fx->window, all->pdata[i]);

  /* stored in one batch, which fills in the rows of these very messages */
  g_assert_true (catchup_store_add_batch (fx->store, fx->room, all, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (catchup_index_update (fx->store, fx->room, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < all->len; i++)
    g_assert_cmpint (((CatchupMessage *) all->pdata[i])->row, >, 0);
}

static void
fixture_teardown (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_clear_pointer (&fx->history, g_ptr_array_unref);
  g_clear_pointer (&fx->window, g_ptr_array_unref);
  g_clear_pointer (&fx->all, g_ptr_array_unref);
  g_clear_pointer (&fx->component_id, g_free);
  g_clear_pointer (&fx->release_id, g_free);
  g_clear_pointer (&fx->zeppelin_ids, g_hash_table_unref);
  g_clear_pointer (&fx->quokka_ids, g_hash_table_unref);
  g_clear_pointer (&fx->antecedent_id, g_free);
  g_clear_pointer (&fx->answer_id, g_free);
  g_clear_pointer (&fx->store, catchup_store_close);
}

static gboolean
memory_has (CatchupMemory *mem, const char *id)
{
  for (guint i = 0; i < mem->turns->len; i++)
    if (strcmp (((CatchupMessage *) mem->turns->pdata[i])->id, id) == 0)
      return TRUE;
  return FALSE;
}

/* The gap a turn was kept for: -1 lead-in, 0.. a gap; G_MININT when the turn is not in gap_of at all. */
static int
gap_of (CatchupMemory *mem, const char *id)
{
  gpointer value;

  if (!g_hash_table_lookup_extended (mem->gap_of, id, NULL, &value))
    return G_MININT;
  return GPOINTER_TO_INT (value) - 1;
}

/* What every memory must be: within budget (counted as the summary counts it), before the window,
 * chronological, without duplicates, and gap_of naming each turn. */
static void
check_memory (Fixture *fx, CatchupMemory *mem, guint budget, gboolean ignores_budget)
{
  CatchupPos first = catchup_pos_of (fx->window->pdata[0]);
  g_autoptr (GHashTable) ids = g_hash_table_new (g_str_hash, g_str_equal);
  guint tokens = 0;

  g_assert_nonnull (mem);
  g_assert_nonnull (mem->turns);
  for (guint i = 0; i < mem->turns->len; i++)
    {
      CatchupMessage *m = mem->turns->pdata[i];
      CatchupPos p = catchup_pos_of (m);

      g_assert_cmpint (m->row, >, 0);
      g_assert_cmpint (catchup_pos_cmp (&p, &first), <, 0);
      if (i > 0)
        {
          CatchupPos q = catchup_pos_of (mem->turns->pdata[i - 1]);

          g_assert_cmpint (catchup_pos_cmp (&q, &p), <, 0);
        }
      g_assert_true (g_hash_table_add (ids, m->id));
      g_assert_cmpint (gap_of (mem, m->id), !=, G_MININT);
      tokens += catchup_text_count_turn (m->speaker, m->text);
    }
  g_assert_cmpuint (g_hash_table_size (mem->gap_of), ==, mem->turns->len);
  g_assert_cmpuint (mem->tokens, ==, tokens);
  if (!ignores_budget)
    g_assert_cmpuint (tokens, <=, budget);
}

static CatchupMemory *
build (Fixture *fx, const CatchupMemoryOptions *opts)
{
  g_autoptr (GError) error = NULL;
  CatchupMemory *mem = catchup_memory_build (fx->store, fx->room, fx->window, opts, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (mem);
  return mem;
}

static void
test_methods_budget (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  const char *const *names = catchup_method_names ();
  const guint budgets[] = { 0, 7, 8, 50, 200, CATCHUP_DEFAULT_BUDGET, 5000 };
  guint n_methods = 0;

  for (; names[n_methods]; n_methods++)
    for (guint b = 0; b < G_N_ELEMENTS (budgets); b++)
      {
        CatchupMemoryOptions opts;
        g_autoptr (CatchupMemory) mem = NULL;
        gboolean full;

        catchup_memory_options_init (&opts);
        g_assert_true (catchup_method_from_string (names[n_methods], &opts.method));
        g_assert_cmpstr (catchup_method_to_string (opts.method), ==, names[n_methods]);
        opts.budget = budgets[b];
        full = opts.method == CATCHUP_METHOD_FULL;
        mem = build (fx, &opts);
        check_memory (fx, mem, opts.budget, full);
        /* single-query baselines keep every turn for their one query; recent and full for none */
        for (guint i = 0; i < mem->turns->len; i++)
          {
            int g = gap_of (mem, ((CatchupMessage *) mem->turns->pdata[i])->id);

            if (opts.method == CATCHUP_METHOD_RECENT || full)
              g_assert_cmpint (g, ==, -1);
            else if (opts.method != CATCHUP_METHOD_REMEMBER && opts.method != CATCHUP_METHOD_GAPS)
              g_assert_cmpint (g, ==, 0);
            else
              g_assert_cmpint (g, <, (int) mem->gaps->len);
          }
        if (opts.method == CATCHUP_METHOD_NONE)
          g_assert_cmpuint (mem->turns->len, ==, 0);
        else if (full)
          /* the whole history before the window, whatever the budget */
          g_assert_cmpuint (mem->turns->len, ==, fx->history->len);
        else if (opts.budget < TURN_TOKENS)
          g_assert_cmpuint (mem->turns->len, ==, 0);
        else if (opts.method == CATCHUP_METHOD_RECENT ||
                 (opts.method == CATCHUP_METHOD_REMEMBER && opts.budget <= opts.lead_in))
          /* every turn is 8 tokens: a budget of n turns holds n turns of the history just before */
          g_assert_cmpuint (mem->turns->len, ==, MIN (opts.budget / TURN_TOKENS, fx->history->len));
        else
          g_assert_cmpuint (mem->turns->len, >, 0);
      }
  g_assert_cmpuint (n_methods, ==, 8);
}

static void
test_recent (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupMemoryOptions opts;
  g_autoptr (CatchupMemory) mem = NULL;

  catchup_memory_options_init (&opts);
  opts.method = CATCHUP_METHOD_RECENT;
  opts.budget = 10 * TURN_TOKENS;
  mem = build (fx, &opts);
  check_memory (fx, mem, opts.budget, FALSE);
  g_assert_cmpuint (mem->turns->len, ==, 10);
  /* exactly the ten turns before the window */
  for (guint i = 0; i < 10; i++)
    g_assert_cmpstr (((CatchupMessage *) mem->turns->pdata[i])->id, ==,
                     ((CatchupMessage *) fx->history->pdata[fx->history->len - 10 + i])->id);
}

static void
test_lead_in (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupMemoryOptions opts;
  g_autoptr (CatchupMemory) mem = NULL;
  const char *just_before = last_id (fx->history);

  catchup_memory_options_init (&opts);
  mem = build (fx, &opts);
  check_memory (fx, mem, opts.budget, FALSE);
  g_assert_true (memory_has (mem, just_before));
  g_assert_cmpint (gap_of (mem, just_before), ==, -1);
}

static void
test_remember_far_antecedent (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupMemoryOptions opts;
  g_autoptr (CatchupMemory) mem = NULL;
  gboolean gap_for_fallback = FALSE;
  guint lead_in_tokens = 0;

  catchup_memory_options_init (&opts);
  mem = build (fx, &opts);
  check_memory (fx, mem, opts.budget, FALSE);
  /* the window line about the fallback is a gap... */
  for (guint i = 0; i < mem->gaps->len; i++)
    {
      CatchupGap *g = mem->gaps->pdata[i];

      if (strcmp (g->utterance_id, ((CatchupMessage *) fx->window->pdata[1])->id) == 0)
        gap_for_fallback = TRUE;
    }
  g_assert_true (gap_for_fallback);
  /* ...whose antecedent lies far beyond the lead-in, and is found for a gap */
  for (guint i = 0; i < mem->turns->len; i++)
    {
      CatchupMessage *m = mem->turns->pdata[i];

      if (gap_of (mem, m->id) == -1)
        lead_in_tokens += catchup_text_count_turn (m->speaker, m->text);
    }
  g_assert_cmpuint (lead_in_tokens, <=, opts.lead_in);
  g_assert_cmpuint (N_FILLER * TURN_TOKENS, >, opts.lead_in);
  g_assert_true (memory_has (mem, fx->antecedent_id));
  g_assert_cmpint (gap_of (mem, fx->antecedent_id), >=, 0);
  /* the baselines that look only at recent turns cannot see it */
  {
    CatchupMemoryOptions recent;
    g_autoptr (CatchupMemory) r = NULL;

    catchup_memory_options_init (&recent);
    recent.method = CATCHUP_METHOD_RECENT;
    r = build (fx, &recent);
    g_assert_false (memory_has (r, fx->antecedent_id));
  }
}

/* A named component in a gap-bearing window line: its far antecedent shares the rare name. */
static void
test_remember_named_component (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupMemoryOptions opts;
  g_autoptr (CatchupMemory) mem = NULL;
  const char *line = ((CatchupMessage *) fx->window->pdata[4])->id;
  int g;

  catchup_memory_options_init (&opts);
  mem = build (fx, &opts);
  check_memory (fx, mem, opts.budget, FALSE);
  g_assert_true (memory_has (mem, fx->component_id));
  g = gap_of (mem, fx->component_id);
  g_assert_cmpint (g, >=, 0);
  g_assert_cmpint (g, <, (int) mem->gaps->len);
  /* kept for the line that names it */
  g_assert_cmpstr (((CatchupGap *) mem->gaps->pdata[g])->utterance_id, ==, line);
}

static CatchupGap *
make_gap (Fixture *fx, guint line, const char *expression, const char *query)
{
  CatchupGap *g = catchup_gap_new ();
  CatchupMessage *m = fx->window->pdata[line];

  g->utterance_id = g_strdup (m->id);
  g->utterance_index = line;
  g->type = CATCHUP_GAP_REFERENTIAL;
  g->worth = CATCHUP_WORTH_STATUS;
  g->expression = g_strdup (expression);
  g->reason = g_strdup ("not introduced in the window");
  g->evidence = g_strdup ("the earlier mention");
  g->anchors = g_strdup ("");
  g->query = g_strdup (query);
  g->weight = 1;
  return g;
}

/* Two gaps whose queries match disjoint parts of the history: round-robin keeps them level. */
static void
check_fairness (Fixture *fx, guint budget)
{
  g_autoptr (GPtrArray) gaps = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_gap_free);
  CatchupMemoryOptions opts;
  g_autoptr (CatchupMemory) mem = NULL;
  guint n[2] = { 0, 0 };

  g_ptr_array_add (gaps, make_gap (fx, 1, "the hangar", "zeppelin hangar ballast tank"));
  g_ptr_array_add (gaps, make_gap (fx, 3, "the enclosure", "quokka enclosure feeding shift"));
  catchup_memory_options_init (&opts);
  opts.gaps = gaps;
  opts.budget = budget;
  opts.lead_in = 0;
  opts.chunks_per_gap = 4;
  mem = build (fx, &opts);
  check_memory (fx, mem, budget, FALSE);
  /* the given gaps are the ones used, in order */
  g_assert_cmpuint (mem->gaps->len, ==, 2);
  g_assert_cmpstr (((CatchupGap *) mem->gaps->pdata[0])->query, ==, "zeppelin hangar ballast tank");
  g_assert_cmpstr (((CatchupGap *) mem->gaps->pdata[1])->query, ==, "quokka enclosure feeding shift");
  for (guint i = 0; i < mem->turns->len; i++)
    {
      CatchupMessage *m = mem->turns->pdata[i];
      int g = gap_of (mem, m->id);

      g_assert_cmpint (g, >=, 0);
      g_assert_cmpint (g, <=, 1);
      n[g == 1]++;
      /* each gap's best turns are its own topic's */
      g_assert_true (g_hash_table_contains (g ? fx->quokka_ids : fx->zeppelin_ids, m->id));
    }
  g_assert_cmpuint (n[0], >, 0);
  g_assert_cmpuint (n[1], >, 0);
  g_assert_cmpuint (n[0] + n[1], ==, budget / TURN_TOKENS);
  g_assert_cmpuint (n[0], <=, n[1] + 1);
  g_assert_cmpuint (n[1], <=, n[0] + 1);
}

static void
test_round_robin (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  for (guint turns = 2; turns <= 12; turns++)
    check_fairness (fx, turns * TURN_TOKENS);
}

static void
test_recall_question (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupMemoryOptions opts;
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupMemory) mem = NULL;
  guint tokens = 0;

  catchup_memory_options_init (&opts);
  opts.budget = 4 * TURN_TOKENS;
  mem = catchup_memory_recall (fx->store, fx->room, "what does the exporter listen on?", &opts, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (mem);
  g_assert_true (memory_has (mem, fx->answer_id));
  for (guint i = 0; i < mem->turns->len; i++)
    {
      CatchupMessage *m = mem->turns->pdata[i];

      tokens += catchup_text_count_turn (m->speaker, m->text);
      if (i > 0)
        {
          CatchupPos a = catchup_pos_of (mem->turns->pdata[i - 1]), b = catchup_pos_of (m);

          g_assert_cmpint (catchup_pos_cmp (&a, &b), <, 0);
        }
    }
  g_assert_cmpuint (tokens, ==, mem->tokens);
  g_assert_cmpuint (tokens, <=, opts.budget);

  /* every method answers a question within the budget (the whole history for "full") */
  for (const char *const *name = catchup_method_names (); *name; name++)
    {
      g_autoptr (CatchupMemory) m = NULL;

      g_assert_true (catchup_method_from_string (*name, &opts.method));
      m = catchup_memory_recall (fx->store, fx->room, "what does the exporter listen on?", &opts, NULL, &error);
      g_assert_no_error (error);
      g_assert_nonnull (m);
      if (opts.method == CATCHUP_METHOD_FULL)
        g_assert_cmpuint (m->turns->len, ==, fx->history->len + fx->window->len);
      else
        g_assert_cmpuint (m->tokens, <=, opts.budget);
    }
}

/* A question whose words all end in -se ("database", "release"): their stems must reach the index as the
 * index holds them. */
static void
test_recall_stems (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupMemoryOptions opts;
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupMemory) mem = NULL;

  catchup_memory_options_init (&opts);
  opts.budget = 4 * TURN_TOKENS;
  mem = catchup_memory_recall (fx->store, fx->room, "database release date?", &opts, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (memory_has (mem, fx->release_id));
}

static void
test_cancelled (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();

  g_cancellable_cancel (cancellable);
  for (const char *const *name = catchup_method_names (); *name; name++)
    {
      CatchupMemoryOptions opts;
      g_autoptr (GError) error = NULL, error2 = NULL;
      g_autoptr (CatchupMemory) mem = NULL, rec = NULL;

      catchup_memory_options_init (&opts);
      g_assert_true (catchup_method_from_string (*name, &opts.method));
      mem = catchup_memory_build (fx->store, fx->room, fx->window, &opts, cancellable, &error);
      g_assert_null (mem);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
      rec = catchup_memory_recall (fx->store, fx->room, "exporter port", &opts, cancellable, &error2);
      g_assert_null (rec);
      g_assert_error (error2, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    }
}

static void
test_method_names (void)
{
  const char *const *names = catchup_method_names ();
  CatchupMethod m = CATCHUP_METHOD_NONE;
  const char *bad[] = { "", "Remember", "REMEMBER", "bm25", "remember ", "hybrid2", "rememberx" };

  g_assert_cmpstr (names[0], ==, "none");
  for (guint i = 0; names[i]; i++)
    {
      g_assert_true (catchup_method_from_string (names[i], &m));
      g_assert_cmpint (m, ==, i);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      m = CATCHUP_METHOD_HYBRID;
      g_assert_false (catchup_method_from_string (bad[i], &m));
      /* untouched on failure */
      g_assert_cmpint (m, ==, CATCHUP_METHOD_HYBRID);
    }
  g_assert_false (catchup_method_from_string (NULL, &m));
}

static void
test_empty_window (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  CatchupMemoryOptions opts;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) empty = g_ptr_array_new ();
  g_autoptr (CatchupMemory) mem = NULL;

  catchup_memory_options_init (&opts);
  mem = catchup_memory_build (fx->store, fx->room, empty, &opts, NULL, &error);
  g_assert_null (mem);
  g_assert_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID);
}

/* A window at the very start of the room has no history: every method gives an empty memory. */
static void
test_no_history (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GPtrArray) window = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  for (guint i = 0; i < 3; i++)
    g_ptr_array_add (window, catchup_message_copy (fx->history->pdata[i]));
  for (const char *const *name = catchup_method_names (); *name; name++)
    {
      CatchupMemoryOptions opts;
      g_autoptr (GError) error = NULL;
      g_autoptr (CatchupMemory) mem = NULL;

      catchup_memory_options_init (&opts);
      g_assert_true (catchup_method_from_string (*name, &opts.method));
      mem = catchup_memory_build (fx->store, fx->room, window, &opts, NULL, &error);
      g_assert_no_error (error);
      g_assert_nonnull (mem);
      g_assert_cmpuint (mem->turns->len, ==, 0);
      g_assert_cmpuint (mem->tokens, ==, 0);
    }
}

static gboolean
pool_has (GPtrArray *pool, const char *id)
{
  for (guint i = 0; i < pool->len; i++)
    if (strcmp (((CatchupMessage *) pool->pdata[i])->id, id) == 0)
      return TRUE;
  return FALSE;
}

/* A pool per gap for the model to choose from: at most pool_size turns, none of the lead-in (the memory holds
 * those anyway), a question together with the answer after it; and the memory itself is the built-in
 * ranking's, as without a pool. */
static void
test_pools (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GPtrArray) gaps = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_gap_free);
  g_autoptr (CatchupMemory) mem = NULL, plain = NULL;
  CatchupMemoryOptions opts;
  GPtrArray *pool;

  g_ptr_array_add (gaps, make_gap (fx, 1, "the port", "which port does it use"));
  g_ptr_array_add (gaps, make_gap (fx, 4, "the frobnicator", "frobnicator daemon restarts"));
  catchup_memory_options_init (&opts);
  opts.gaps = gaps;
  plain = build (fx, &opts);
  g_assert_null (plain->pools);
  opts.pool_size = 2;
  mem = build (fx, &opts);
  check_memory (fx, mem, opts.budget, FALSE);
  g_assert_cmpuint (mem->turns->len, ==, plain->turns->len);
  for (guint i = 0; i < mem->turns->len; i++)
    g_assert_cmpstr (((CatchupMessage *) mem->turns->pdata[i])->id, ==,
                     ((CatchupMessage *) plain->turns->pdata[i])->id);
  g_assert_nonnull (mem->pools);
  g_assert_cmpuint (mem->pools->len, ==, 2);
  pool = mem->pools->pdata[0];
  g_assert_cmpuint (pool->len, ==, 2);
  /* the question ranks first; its answer shares none of the query's words and comes with it */
  g_assert_cmpstr (((CatchupMessage *) pool->pdata[1])->id, ==, fx->answer_id);
  pool = mem->pools->pdata[1];
  g_assert_true (pool_has (pool, fx->component_id));
  for (guint g = 0; g < mem->pools->len; g++)
    for (guint i = 0; i < ((GPtrArray *) mem->pools->pdata[g])->len; i++)
      g_assert_cmpint (gap_of (mem, ((CatchupMessage *) ((GPtrArray *) mem->pools->pdata[g])->pdata[i])->id), !=,
                       -1);
}

static GPtrArray *
ids (const char *first, ...) G_GNUC_NULL_TERMINATED;

static GPtrArray *
ids (const char *first, ...)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  va_list ap;

  va_start (ap, first);
  for (const char *id = first; id != NULL; id = va_arg (ap, const char *))
    g_ptr_array_add (out, g_strdup (id));
  va_end (ap);
  return out;
}

/* The model's choice replaces the gap turns: the lead-in stays, each gap gets the turns chosen for it (an id
 * in no pool is ignored), within the budget. */
static void
test_select (Fixture *fx, gconstpointer data G_GNUC_UNUSED)
{
  g_autoptr (GPtrArray) gaps = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_gap_free);
  g_autoptr (GPtrArray) selected = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  g_autoptr (GHashTable) lead_in = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (CatchupMemory) mem = NULL;
  CatchupMemoryOptions opts;
  guint chosen = 0;

  g_ptr_array_add (gaps, make_gap (fx, 1, "the port", "which port does it use"));
  g_ptr_array_add (gaps, make_gap (fx, 4, "the frobnicator", "frobnicator daemon restarts"));
  catchup_memory_options_init (&opts);
  opts.gaps = gaps;
  opts.pool_size = 10;
  mem = build (fx, &opts);
  for (guint i = 0; i < mem->turns->len; i++)
    if (gap_of (mem, ((CatchupMessage *) mem->turns->pdata[i])->id) == -1)
      g_hash_table_add (lead_in, g_strdup (((CatchupMessage *) mem->turns->pdata[i])->id));
  g_assert_cmpuint (g_hash_table_size (lead_in), >, 0);

  g_ptr_array_add (selected, ids (fx->answer_id, "no-such-turn", NULL));
  g_ptr_array_add (selected, ids (fx->component_id, NULL));
  g_assert_cmpuint (catchup_memory_select (mem, selected, opts.budget), ==, 2);
  check_memory (fx, mem, opts.budget, FALSE);
  g_assert_true (mem->selected == selected);
  for (guint i = 0; i < mem->turns->len; i++)
    {
      const char *id = ((CatchupMessage *) mem->turns->pdata[i])->id;
      int g = gap_of (mem, id);

      if (g == -1)
        {
          g_assert_true (g_hash_table_contains (lead_in, id));
          continue;
        }
      g_assert_cmpstr (id, ==, g == 0 ? fx->answer_id : fx->component_id);
      chosen++;
    }
  g_assert_cmpuint (chosen, ==, 2);
  g_assert_cmpuint (mem->turns->len, ==, g_hash_table_size (lead_in) + 2);

  /* nothing fits a budget the lead-in already fills */
  g_assert_cmpuint (catchup_memory_select (mem, selected, mem->tokens - 2 * TURN_TOKENS), ==, 0);
}

#define TEST(name, func) \
  g_test_add ("/catchup/memory/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/memory/method-names", test_method_names);
  TEST ("methods-budget", test_methods_budget);
  TEST ("recent", test_recent);
  TEST ("lead-in", test_lead_in);
  TEST ("remember-far-antecedent", test_remember_far_antecedent);
  TEST ("remember-named-component", test_remember_named_component);
  TEST ("round-robin", test_round_robin);
  TEST ("pools", test_pools);
  TEST ("select", test_select);
  TEST ("recall-question", test_recall_question);
  TEST ("recall-stems", test_recall_stems);
  TEST ("cancelled", test_cancelled);
  TEST ("empty-window", test_empty_window);
  TEST ("no-history", test_no_history);
  return g_test_run ();
}
