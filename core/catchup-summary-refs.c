#include "config.h"

#include <string.h>

#include "catchup-summary-private.h"
#include "catchup-text.h"

/*
 * Checked references. An extractive summary cannot check meaning, and a wrong "↳" is worse than none, so a
 * reference line appears only when
 *   - the expression is a real reference: never a bare pronoun (one antecedent cannot be told from another
 *     here), a relative pronoun or a stock phrase ("by the way", "your support", "the best");
 *   - the cited turn is about the same referent: for "my X" it is the speaker's own, for "your X" another's,
 *     and it names X (the expression's head noun, also written apart: "fallback" / "fall back");
 *   - no other turn is about as good: an ambiguous reference gets no line;
 * and the quote shows the words around the match. The memory's lead-in (the turns just before the window) is
 * a source like the turns retrieved for the gap. Among turns about the same thing the latest wins: what holds
 * now, not what was replaced.
 */

/* Nouns that name nothing a reader could look up: "the way", "the best", "your support". */
static const char *const generic_nouns[] = {
  "way", "support", "time", "day", "moment", "end", "world", "future", "past", "rest", "lot", "thing", "things",
  "stuff", "fun", "idea", "point", "part", "week", "weekend", "year", "today", "life", "people", "best", "same",
  "kind", "sort", "bit", "chance", "help", "love", "luck", "side", "place", "matter", "question", "answer",
  "feeling", "feelings", "experience", "words", "heart", "mind", "one", "ones", "other", "others", "first",
  "last", "next", "whole", "beginning", "morning", "evening", "night", "news", "plan", "plans", "work", "job",
  "meantime", "moment", "while", "thought", "thoughts", "energy", "vibe", "vibes", "journey", "advice", "pic",
  "pics", "photo", "photos", "picture", "pictures", "shot", "video", NULL,
};

/* What a speaker's "my X" names without needing an explanation: their kids, their job. */
static const char *const own_things[] = {
  "kid", "kids", "children", "child", "family", "husband", "wife", "partner", "son", "sons", "daughter",
  "daughters", "mom", "mother", "dad", "father", "parent", "parents", "friend", "friends", "brother", "sister",
  "team", "home", "house", "life", "job", "work", "art", "body", "heart", NULL,
};

static const char *const stock_phrases[] = {
  "by the way", "the way", "your support", "the best", "the same", "the other day", "the first time",
  "the end of the day", "the meantime", "that way", "this way", "my pleasure", "my bad", "your welcome",
  "the moment", "the time", NULL,
};

static gboolean
in_list (const char *w, const char *const *list)
{
  for (guint i = 0; list[i]; i++)
    if (strcmp (w, list[i]) == 0)
      return TRUE;
  return FALSE;
}

typedef enum { OWNER_ANY, OWNER_SPEAKER, OWNER_OTHER } Owner;

/* Who the referent belongs to, by the expression's determiner. */
static Owner
owner_of (const char *folded_expr)
{
  if (g_str_has_prefix (folded_expr, "my ") || g_str_has_prefix (folded_expr, "our "))
    return g_str_has_prefix (folded_expr, "my ") ? OWNER_SPEAKER : OWNER_ANY;
  if (g_str_has_prefix (folded_expr, "your ") || g_str_has_prefix (folded_expr, "his ") ||
      g_str_has_prefix (folded_expr, "her ") || g_str_has_prefix (folded_expr, "their "))
    return OWNER_OTHER;
  return OWNER_ANY;
}

/* The words of an expression that name something, without pointers ("the same unit" names a unit), or NULL
 * when it names nothing (a pronoun, a stock phrase, generic nouns only). */
static GPtrArray *
naming_terms (const char *folded_expr)
{
  static const char *const pointers[] = { "usual", "new", "old", "last", "next", "first", "same", "other", NULL };
  g_autoptr (GPtrArray) terms = catchup_summary_terms (folded_expr);
  gboolean names = FALSE;

  if (in_list (folded_expr, stock_phrases))
    return NULL;
  if ((g_str_has_prefix (folded_expr, "my ") || g_str_has_prefix (folded_expr, "our ")) && terms->len == 1 &&
      in_list (terms->pdata[0], own_things))
    return NULL;
  for (guint i = terms->len; i-- > 0;) {
    const char *t = terms->pdata[i];
    if (in_list (t, pointers))
      g_ptr_array_remove_index (terms, i);
    else if (!in_list (t, generic_nouns) && strlen (t) >= 3)
      names = TRUE;
  }
  return names ? g_steal_pointer (&terms) : NULL;
}

/* How well a turn names the referent: the naming terms it has (the head noun, the last term, is required),
 * also as a compound written apart. 0 when it does not name it. */
static guint
names_referent (GPtrArray *turn_terms, GPtrArray *naming)
{
  guint hits = 0;
  gboolean head = FALSE;
  for (guint e = 0; e < naming->len; e++) {
    gboolean found = FALSE;
    for (guint i = 0; i < turn_terms->len && !found; i++) {
      g_autofree char *joined = i + 1 < turn_terms->len
                                  ? g_strconcat (turn_terms->pdata[i], turn_terms->pdata[i + 1], NULL) : NULL;
      found = g_str_equal (turn_terms->pdata[i], naming->pdata[e]) || g_strcmp0 (joined, naming->pdata[e]) == 0;
    }
    hits += found;
    head |= found && e + 1 == naming->len;
  }
  /* "the advocacy event" is not any event: two of its words, when it has two */
  return head && hits >= MIN (naming->len, 2) ? hits : 0;
}

static gboolean
owner_fits (Owner owner, const CatchupMessage *turn, const CatchupMessage *line_msg)
{
  gboolean same = g_strcmp0 (turn->speaker, line_msg->speaker) == 0;
  return owner == OWNER_ANY || (owner == OWNER_SPEAKER) == same;
}

/* Two turns are about the same thing when they share two content terms besides the referent's. */
static gboolean
same_subject (GPtrArray *a, GPtrArray *b)
{
  g_autoptr (GHashTable) set = catchup_summary_term_set (a);
  return catchup_summary_overlap (b, set) >= 3;
}

typedef struct {
  CatchupMessage *turn;
  GPtrArray *terms;
  double score;
} Match;

static void
match_clear (Match *m)
{
  g_clear_pointer (&m->terms, g_ptr_array_unref);
}

/* A score clearly above the next one's, or the next is the same subject (then the latest is the state). */
#define AMBIGUOUS_RATIO 0.8

static CatchupMessage *
pick (GArray *matches)
{
  if (matches->len == 0)
    return NULL;
  Match *best = NULL;
  for (guint i = 0; i < matches->len; i++) {
    Match *m = &g_array_index (matches, Match, i);
    if (!best || m->score > best->score || (m->score == best->score && m->turn->ts > best->turn->ts))
      best = m;
  }
  for (guint i = 0; i < matches->len; i++) {
    Match *m = &g_array_index (matches, Match, i);
    if (m == best || m->score < best->score * AMBIGUOUS_RATIO)
      continue;
    if (!same_subject (m->terms, best->terms))
      return NULL;
    if (m->turn->ts > best->turn->ts)
      best = m;
  }
  return best->turn;
}

static CatchupSummaryItem *
resolve_gap (const CatchupGap *gap, const CatchupCandidate *c, CatchupMemory *mem, guint max_chars)
{
  g_autofree char *expr = catchup_summary_sanitize (gap->expression);
  g_autofree char *folded = g_utf8_casefold (expr, -1);
  g_autoptr (GPtrArray) naming = naming_terms (g_strstrip (folded));
  g_autoptr (GArray) matches = g_array_new (FALSE, TRUE, sizeof (Match));
  g_autoptr (GHashTable) line_terms = catchup_summary_term_set (c->terms);
  Owner owner = owner_of (folded);

  if (!naming || !mem || !mem->turns)
    return NULL;
  g_array_set_clear_func (matches, (GDestroyNotify) match_clear);
  for (guint i = 0; i < mem->turns->len; i++) {
    CatchupMessage *t = mem->turns->pdata[i];
    if (!t->id || t->ts > c->msg->ts || !owner_fits (owner, t, c->msg))
      continue;
    g_autoptr (GPtrArray) terms = catchup_summary_terms (t->text);
    guint hits = names_referent (terms, naming);
    if (hits == 0)
      continue;
    double context = 0.25 * MIN (catchup_summary_overlap (terms, line_terms), 4);
    Match m = { t, g_steal_pointer (&terms), hits + context };
    g_array_append_val (matches, m);
  }
  CatchupMessage *turn = pick (matches);
  if (!turn)
    return NULL;
  g_autofree char *clean = catchup_summary_clean (turn->text);
  g_autoptr (GHashTable) focus = catchup_summary_term_set (naming);
  g_autofree char *quote = catchup_summary_excerpt (clean, focus, max_chars);
  return catchup_summary_item_new (expr, turn->id, turn->speaker, turn->ts, quote);
}

void
catchup_summary_resolve (CatchupSummaryLine *line, const CatchupCandidate *c, CatchupMemory *mem, guint max_chars)
{
  for (guint i = 0; mem && mem->gaps && i < c->gaps->len; i++) {
    CatchupSummaryItem *item = resolve_gap (mem->gaps->pdata[g_array_index (c->gaps, guint, i)], c, mem, max_chars);
    gboolean seen = FALSE;
    for (guint k = 0; item && k < line->context->len && !seen; k++)
      seen = g_strcmp0 (((CatchupSummaryItem *) line->context->pdata[k])->id, item->id) == 0;
    if (item && !seen)
      g_ptr_array_add (line->context, item);
    else
      catchup_summary_item_free (item);
  }
}
