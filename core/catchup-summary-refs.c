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
  "pics", "photo", "photos", "picture", "pictures", "shot", "video", "friend", "friends", "buddy", "buddies",
  "guy", "guys", "folks", "everyone", "kid", "kids", "family", NULL,
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
  for (guint i = terms->len; i-- > 0;)
    if (in_list (terms->pdata[i], pointers))
      g_ptr_array_remove_index (terms, i);
  /* the head noun names the thing: "your hard work" is work, which names nothing to look up */
  if (terms->len > 0) {
    const char *head = terms->pdata[terms->len - 1];
    names = !in_list (head, generic_nouns) && strlen (head) >= 3;
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
    const char *want = naming->pdata[e];
    for (guint i = 0; i < turn_terms->len && !found; i++) {
      const char *t = turn_terms->pdata[i];
      gsize len = strlen (t);
      /* "fall back" written apart names "fallback" */
      found = g_str_equal (t, want) ||
              (i + 1 < turn_terms->len && strncmp (want, t, len) == 0 && g_str_equal (want + len, turn_terms->pdata[i + 1]));
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
pick (GArray *matches, guint naming_len)
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
    /* one word ("the release") may name different things; two or more matched name the same one */
    if (naming_len < 2 && !same_subject (m->terms, best->terms))
      return NULL;
  }
  return best->turn;
}

/* The memory's turns with their terms, cut once for all the lines. */
struct _CatchupSummaryRefs {
  CatchupMemory *mem;
  GPtrArray *terms;  /* GPtrArray of terms, per memory turn */
};

CatchupSummaryRefs *
catchup_summary_refs_new (CatchupMemory *mem)
{
  CatchupSummaryRefs *r = g_new0 (CatchupSummaryRefs, 1);
  r->mem = mem;
  r->terms = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  /* a photo's caption describes a picture; it names nothing the speaker said */
  for (guint i = 0; mem && mem->turns && i < mem->turns->len; i++) {
    g_autofree char *text = g_strdup (((CatchupMessage *) mem->turns->pdata[i])->text);
    char *caption = text ? strstr (text, "[shares ") : NULL;
    if (caption)
      *caption = '\0';
    g_ptr_array_add (r->terms, catchup_summary_terms (text));
  }
  return r;
}

void
catchup_summary_refs_free (CatchupSummaryRefs *r)
{
  if (!r)
    return;
  g_ptr_array_unref (r->terms);
  g_free (r);
}

static CatchupSummaryItem *
resolve_expression (const char *expression, const CatchupCandidate *c,
                    const CatchupSummaryRefs *refs, guint max_chars)
{
  CatchupMemory *mem = refs->mem;
  g_autofree char *expr = catchup_summary_sanitize (expression);
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
    GPtrArray *terms = refs->terms->pdata[i];
    guint hits = names_referent (terms, naming);
    if (hits == 0)
      continue;
    double context = 0.25 * MIN (catchup_summary_overlap (terms, line_terms), 4);
    Match m = { t, g_ptr_array_ref (terms), hits + context };
    g_array_append_val (matches, m);
  }
  CatchupMessage *turn = pick (matches, naming->len);
  if (!turn)
    return NULL;
  g_autofree char *clean = catchup_summary_clean (turn->text);
  g_autoptr (GHashTable) focus = catchup_summary_term_set (naming);
  g_autofree char *quote = catchup_summary_excerpt (clean, focus, max_chars);
  return catchup_summary_item_new (expr, turn->id, turn->speaker, turn->ts, quote);
}

/* At most this many references under one line. */
#define MAX_REFS 2

void
catchup_summary_resolve (GPtrArray *items, const CatchupCandidate *c, const CatchupSummaryRefs *refs,
                         guint max_chars)
{
  CatchupMemory *mem = refs->mem;
  g_autoptr (GPtrArray) exprs = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; mem && mem->gaps && i < c->gaps->len; i++) {
    const CatchupGap *gap = mem->gaps->pdata[g_array_index (c->gaps, guint, i)];
    if (gap->expression)
      g_ptr_array_add (exprs, g_utf8_casefold (gap->expression, -1));
  }
  for (guint i = 0; i < exprs->len && items->len < MAX_REFS; i++) {
    CatchupSummaryItem *item = resolve_expression (exprs->pdata[i], c, refs, max_chars);
    gboolean seen = FALSE;
    for (guint k = 0; item && k < items->len && !seen; k++)
      seen = g_strcmp0 (((CatchupSummaryItem *) items->pdata[k])->id, item->id) == 0;
    if (item && !seen)
      g_ptr_array_add (items, item);
    else
      catchup_summary_item_free (item);
  }
}
