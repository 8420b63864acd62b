#include "config.h"

#include <string.h>

#include "catchup.h"

typedef struct {
  const char *speaker;
  const char *text;
} Line;

static GPtrArray *
window_of (const Line *lines, guint n)
{
  GPtrArray *w = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *id = g_strdup_printf ("w%02u", i);

      g_ptr_array_add (w, catchup_message_new (id, 1767600000 + (gint64) i * 45, lines[i].speaker, lines[i].text));
    }
  return w;
}

static const CatchupGap *
gap_for (GPtrArray *gaps, const char *id)
{
  for (guint i = 0; i < gaps->len; i++)
    if (strcmp (((CatchupGap *) gaps->pdata[i])->utterance_id, id) == 0)
      return gaps->pdata[i];
  return NULL;
}

/* The worth the detector gives a one-line window whose line leans on an earlier "that ..." (a gap needs an
 * unresolved expression, so the worthiness is read off the gap); FALSE when the line is no gap: chit-chat. */
static gboolean
worth_of (const char *text, CatchupWorth *worth)
{
  const Line line = { "ann", text };
  g_autoptr (GPtrArray) window = window_of (&line, 1);
  g_autoptr (GPtrArray) gaps = catchup_gaps_detect (window, 0);

  if (gaps->len == 0)
    return FALSE;
  *worth = ((CatchupGap *) gaps->pdata[0])->worth;
  return TRUE;
}

static GHashTable *
term_set (const char *text)
{
  g_autoptr (GPtrArray) terms = catchup_text_terms (text, TRUE);
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; i < terms->len; i++)
    g_hash_table_add (set, g_strdup (terms->pdata[i]));
  return set;
}

/* Every content term of `text` is a term of `query`. */
static void
assert_terms_in (const char *text, const char *query)
{
  g_autoptr (GPtrArray) terms = catchup_text_terms (text, TRUE);
  g_autoptr (GHashTable) q = term_set (query);

  for (guint i = 0; i < terms->len; i++)
    {
      if (!g_hash_table_contains (q, terms->pdata[i]))
        g_test_message ("term '%s' of '%s' missing from query '%s'", (char *) terms->pdata[i], text, query);
      g_assert_true (g_hash_table_contains (q, terms->pdata[i]));
    }
}

/* No query term comes from outside the window: the detector never guesses an answer. */
static void
assert_query_from_window (GPtrArray *window, GPtrArray *gaps)
{
  g_autoptr (GString) all = g_string_new (NULL);
  g_autoptr (GHashTable) known = NULL;

  for (guint i = 0; i < window->len; i++)
    {
      CatchupMessage *m = window->pdata[i];

      g_string_append_printf (all, "%s: %s\n", m->speaker, m->text);
    }
  known = term_set (all->str);
  for (guint i = 0; i < gaps->len; i++)
    {
      CatchupGap *g = gaps->pdata[i];
      g_autoptr (GPtrArray) terms = catchup_text_terms (g->query, TRUE);

      for (guint k = 0; k < terms->len; k++)
        {
          if (!g_hash_table_contains (known, terms->pdata[k]))
            g_test_message ("query term '%s' is not in the window: %s", (char *) terms->pdata[k], g->query);
          g_assert_true (g_hash_table_contains (known, terms->pdata[k]));
        }
    }
}

static const Line team[] = {
  { "ann", "morning" },
  { "bo", "lol" },
  { "cy", "the websocket gateway dropped all sessions overnight" },
  { "dee", "ok let's switch to that fallback tonight" },
  { "bo", "haha ok" },
  { "ann", "can you put it in the other spot please" },
  { "cy", "ok as agreed, we ship friday" },
  { "dee", "deploy is failing again" },
  { "ann", "thanks!" },
};

static void
test_detect_expressions (void)
{
  g_autoptr (GPtrArray) window = window_of (team, G_N_ELEMENTS (team));
  g_autoptr (GPtrArray) gaps = catchup_gaps_detect (window, 0);
  struct {
    guint line;
    const char *expression;
  } want[] = { { 3, "that fallback" }, { 5, "the other" }, { 6, "as agreed" }, { 7, "again" } };

  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      CatchupMessage *m = window->pdata[want[i].line];
      const CatchupGap *g = gap_for (gaps, m->id);

      g_assert_nonnull (g);
      g_assert_cmpuint (g->utterance_index, ==, want[i].line);
      g_assert_nonnull (g->expression);
      g_assert_nonnull (strstr (g->expression, want[i].expression));
      g_assert_nonnull (g->query);
      /* the query carries the utterance's own words */
      assert_terms_in (m->text, g->query);
      g_assert_nonnull (g->evidence);
      g_assert_cmpstr (g->evidence, !=, "");
    }
  /* chit-chat is no gap */
  g_assert_null (gap_for (gaps, "w00"));
  g_assert_null (gap_for (gaps, "w01"));
  g_assert_null (gap_for (gaps, "w04"));
  g_assert_null (gap_for (gaps, "w08"));
  assert_query_from_window (window, gaps);
}

/* ASCII text is split and case-folded without GLib's Unicode tables: the same window with a non-ASCII mark at
 * the end of every line (which takes the Unicode path and adds no word) has the same gaps. */
static void
test_ascii_like_unicode (void)
{
  g_autoptr (GPtrArray) window = window_of (team, G_N_ELEMENTS (team));
  g_autoptr (GPtrArray) marked = window_of (team, G_N_ELEMENTS (team));
  g_autoptr (GPtrArray) gaps = NULL, marked_gaps = NULL;

  for (guint i = 0; i < marked->len; i++)
    {
      CatchupMessage *m = marked->pdata[i];
      char *text = g_strconcat (m->text, " \xe2\x80\x94", NULL);

      g_free (m->text);
      m->text = text;
    }
  gaps = catchup_gaps_detect (window, 0);
  marked_gaps = catchup_gaps_detect (marked, 0);
  g_assert_cmpuint (gaps->len, >, 0);
  g_assert_cmpuint (marked_gaps->len, ==, gaps->len);
  for (guint i = 0; i < gaps->len; i++)
    {
      const CatchupGap *a = gaps->pdata[i], *b = marked_gaps->pdata[i];

      g_assert_cmpstr (a->utterance_id, ==, b->utterance_id);
      g_assert_cmpint (a->type, ==, b->type);
      g_assert_cmpstr (a->expression, ==, b->expression);
      g_assert_cmpstr (a->anchors, ==, b->anchors);
    }
}

static void
test_gap_ids_are_window_ids (void)
{
  g_autoptr (GPtrArray) window = window_of (team, G_N_ELEMENTS (team));
  g_autoptr (GPtrArray) gaps = catchup_gaps_detect (window, 0);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  g_assert_cmpuint (gaps->len, >=, 4);
  for (guint i = 0; i < gaps->len; i++)
    {
      CatchupGap *g = gaps->pdata[i];

      g_assert_cmpuint (g->utterance_index, <, window->len);
      g_assert_cmpstr (g->utterance_id, ==, ((CatchupMessage *) window->pdata[g->utterance_index])->id);
      /* one gap per utterance */
      g_assert_true (g_hash_table_add (seen, g->utterance_id));
      g_assert_cmpfloat (g->weight, >, 0);
      /* most salient first */
      if (i > 0)
        g_assert_cmpfloat (((CatchupGap *) gaps->pdata[i - 1])->weight, >=, g->weight);
    }
}

static void
test_max_gaps (void)
{
  g_autoptr (GPtrArray) window = window_of (team, G_N_ELEMENTS (team));
  g_autoptr (GPtrArray) all = catchup_gaps_detect (window, 0);

  for (guint max = 1; max <= all->len + 1; max++)
    {
      g_autoptr (GPtrArray) some = catchup_gaps_detect (window, max);

      g_assert_cmpuint (some->len, ==, MIN (max, all->len));
      /* the kept ones are the most salient */
      for (guint i = 0; i < some->len; i++)
        g_assert_cmpstr (((CatchupGap *) some->pdata[i])->utterance_id, ==,
                         ((CatchupGap *) all->pdata[i])->utterance_id);
    }
}

static void
test_chit_chat (void)
{
  static const Line chat[] = {
    { "ann", "morning" }, { "bo", "lol" }, { "cy", "morning!" }, { "dee", "haha" }, { "ann", "lol yes" },
    { "bo", "👍" }, { "cy", "brb coffee" }, { "dee", "ok" },
  };
  g_autoptr (GPtrArray) window = window_of (chat, G_N_ELEMENTS (chat));
  g_autoptr (GPtrArray) gaps = catchup_gaps_detect (window, 0);

  g_assert_cmpuint (gaps->len, ==, 0);
  /* cues are whole words: "now" is not in "know", "sent" not in "present" */
  {
    CatchupWorth cue_worth = CATCHUP_WORTH_OTHER;

    g_assert_false (worth_of ("you know that present shape", &cue_worth));
    g_assert_true (worth_of ("that tarball was sent to the list", &cue_worth));
    g_assert_cmpint (cue_worth, ==, CATCHUP_WORTH_ACTION);
  }
}

static void
test_introduced_in_window (void)
{
  /* the referent is introduced in the window itself: "that fallback" needs no memory */
  static const Line lines[] = {
    { "cy", "the fallback is the longpoll relay on the spare box" },
    { "dee", "ok let's switch to that fallback now" },
  };
  g_autoptr (GPtrArray) window = window_of (lines, G_N_ELEMENTS (lines));
  g_autoptr (GPtrArray) gaps = catchup_gaps_detect (window, 0);
  const CatchupGap *g = gap_for (gaps, "w01");

  g_assert_true (g == NULL || strstr (g->expression, "fallback") == NULL);
  assert_query_from_window (window, gaps);
}

static void
test_empty (void)
{
  g_autoptr (GPtrArray) empty = g_ptr_array_new ();
  g_autoptr (GPtrArray) none = catchup_gaps_detect (empty, 5);

  g_assert_cmpuint (none->len, ==, 0);
}

static void
test_worth (void)
{
  CatchupWorth w;

  g_assert_true (worth_of ("we decided to drop that legacy importer", &w));
  g_assert_cmpint (w, ==, CATCHUP_WORTH_DECISION);
  g_assert_true (worth_of ("could you review that relay patch", &w));
  g_assert_cmpint (w, ==, CATCHUP_WORTH_REQUEST);
  g_assert_true (worth_of ("merged that relay patch into main", &w));
  g_assert_cmpint (w, ==, CATCHUP_WORTH_ACTION);
}

static void
test_type_names (void)
{
  CatchupGapType t;

  for (guint i = CATCHUP_GAP_REFERENTIAL; i <= CATCHUP_GAP_RELATIONAL; i++)
    {
      g_assert_true (catchup_gap_type_from_string (catchup_gap_type_to_string (i), &t));
      g_assert_cmpint (t, ==, i);
    }
  g_assert_true (catchup_gap_type_from_string ("ATTRIBUTE", &t));
  g_assert_cmpint (t, ==, CATCHUP_GAP_ATTRIBUTE);
  g_assert_false (catchup_gap_type_from_string ("answer", &t));
  g_assert_false (catchup_gap_type_from_string (NULL, &t));
  g_assert_cmpstr (catchup_worth_to_string (CATCHUP_WORTH_PLAN), ==, "plan");
}

/* Text that is not UTF-8 (a stored body from an older version) used to crash the optimised regex. */
static void
test_invalid_utf8 (void)
{
  static const Line lines[] = {
    { "ann", "we decided to reuse that \xff lock solution \xc3" },
    { "b\xfe", "so we went with the fallback \xe2\x82" },
    { "cai", "\xc0\xaf\xed\xa0\x80 deploy that fix" },
  };
  g_autoptr (GPtrArray) window = window_of (lines, G_N_ELEMENTS (lines));
  g_autoptr (GPtrArray) gaps = catchup_gaps_detect (window, 5);

  g_assert_cmpuint (gaps->len, >=, 1);
  for (guint i = 0; i < gaps->len; i++)
    {
      const CatchupGap *gap = gaps->pdata[i];

      g_assert_true (g_utf8_validate (gap->query != NULL ? gap->query : "", -1, NULL));
      g_assert_true (g_utf8_validate (gap->expression != NULL ? gap->expression : "", -1, NULL));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/gaps/expressions", test_detect_expressions);
  g_test_add_func ("/catchup/gaps/ids-are-window-ids", test_gap_ids_are_window_ids);
  g_test_add_func ("/catchup/gaps/ascii-like-unicode", test_ascii_like_unicode);
  g_test_add_func ("/catchup/gaps/max-gaps", test_max_gaps);
  g_test_add_func ("/catchup/gaps/chit-chat", test_chit_chat);
  g_test_add_func ("/catchup/gaps/introduced-in-window", test_introduced_in_window);
  g_test_add_func ("/catchup/gaps/empty", test_empty);
  g_test_add_func ("/catchup/gaps/worth", test_worth);
  g_test_add_func ("/catchup/gaps/type-names", test_type_names);
  g_test_add_func ("/catchup/gaps/invalid-utf8", test_invalid_utf8);
  return g_test_run ();
}
