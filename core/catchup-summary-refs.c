#include "config.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "catchup-gaps.h"
#include "catchup-summary-private.h"
#include "catchup-text.h"

/*
 * Checked references. An extractive summary cannot check meaning, and a wrong "↳" is worse than none, so a
 * reference line appears only when
 *   - the line leans on something the window does not supply: the gap detector flags an expression in it, and
 *     the words the turn is matched on are new in the window at that line (what the window already said, it
 *     resolves itself);
 *   - one earlier turn explains it clearly: it shares at least two of those new words with the line, weighed by
 *     how rare each is in the window and the memory, and no other turn comes close (an ambiguous reference gets
 *     no line); a photo's caption is not what a speaker said and is not matched;
 *   - what the line calls it names what the turn is about: the detector's expression when the turn names it
 *     (its head noun, and two of its words when it has two) and the owner fits ("my X" is the speaker's own,
 *     "your X" another's); else the line's own words that the turn shares ("the rejection letter", "Max"), never
 *     a pronoun or a stock phrase ("by the way", "your support", "the best");
 * and the quote shows the words around the match. The memory's lead-in (the turns just before the window) is
 * a source like the turns retrieved for the gaps; most references resolve there. A window that opens with a
 * reaction ("That's great news about your friend!") answers the other person's turn just before it.
 */

/* Nouns that name nothing a reader could look up: "the way", "the best", "your support". */
static const char *const generic_nouns[] = {
  "way", "support", "time", "day", "moment", "end", "world", "future", "past", "rest", "lot", "thing", "things",
  "stuff", "fun", "idea", "point", "part", "week", "weekend", "year", "today", "tomorrow", "yesterday", "tonight",
  "life", "people", "best", "same",
  "kind", "sort", "bit", "chance", "help", "love", "luck", "side", "place", "matter", "question", "answer",
  "feeling", "feelings", "experience", "words", "heart", "mind", "one", "ones", "other", "others", "first",
  "last", "next", "whole", "beginning", "morning", "evening", "night", "news", "plan", "plans", "work", "job",
  "meantime", "moment", "while", "thought", "thoughts", "energy", "vibe", "vibes", "journey", "advice", "pic",
  "pics", "photo", "photos", "picture", "pictures", "shot", "video", "friend", "friends", "buddy", "buddies",
  "guy", "guys", "folks", "everyone", "kid", "kids", "family", "favorite", "favourite", "recommendation",
  "encouragement", "beauty", "attitude", "chat", "talk", "conversation", "path", "interest", "interests", "goal",
  "goals", "writing", "character", "characters", "sound", "screen", "need", "needs", "limit", "limits",
  "importance", "effort", "process",
  /* feelings and qualities: "the courage", "the stress", "our mental health" name no thing a turn could explain */
  "courage", "strength", "thrill", "stress", "health", "escape", "passion", "joy", "happiness", "pride", "hope",
  "peace", "confidence", "motivation", "inspiration", "progress", "balance", "growth", "creativity", "kindness",
  "positivity", "patience", "resilience", "freedom", "actions", "difference", "impact", NULL,
};

/* The stems of a constant word list's one-term words, made once per list for the program's life: the lists are
 * asked about for every expression of every line, from any engine thread. */
static GHashTable *
stem_set (const char *const *list)
{
  static GMutex lock;
  static GHashTable *sets; /* list -> set of stems */
  GHashTable *set;

  g_mutex_lock (&lock);
  if (sets == NULL)
    sets = g_hash_table_new (g_direct_hash, g_direct_equal);
  if ((set = g_hash_table_lookup (sets, list)) == NULL) {
    set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; list[i]; i++) {
      g_autoptr (GPtrArray) t = catchup_summary_terms (list[i]);
      if (t->len == 1)
        g_hash_table_add (set, g_strdup (t->pdata[0]));
    }
    g_hash_table_insert (sets, (gpointer) list, set);
  }
  g_mutex_unlock (&lock);
  return set;
}

/* Whether a term (stemmed) is one of the words of list: "advice" is cut to "advic" like the line's words. */
static gboolean
in_stem_list (const char *term, const char *const *list)
{
  return g_hash_table_contains (stem_set (list), term);
}

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

  /* "your support means" is "your support" run on into its verb */
  for (guint i = 0; stock_phrases[i]; i++)
    if (g_str_has_prefix (folded_expr, stock_phrases[i]) &&
        (folded_expr[strlen (stock_phrases[i])] == '\0' || folded_expr[strlen (stock_phrases[i])] == ' '))
      return NULL;
  if ((g_str_has_prefix (folded_expr, "my ") || g_str_has_prefix (folded_expr, "our ")) && terms->len == 1 &&
      in_stem_list (terms->pdata[0], own_things))
    return NULL;
  for (guint i = terms->len; i-- > 0;)
    if (in_list (terms->pdata[i], pointers))
      g_ptr_array_remove_index (terms, i);
  /* the head noun names the thing: "your hard work" is work, which names nothing to look up */
  if (terms->len > 0) {
    const char *head = terms->pdata[terms->len - 1];
    names = !in_stem_list (head, generic_nouns) && strlen (head) >= 3;
  }
  return names ? g_steal_pointer (&terms) : NULL;
}

static gboolean
owner_fits (Owner owner, const CatchupMessage *turn, const CatchupMessage *line_msg)
{
  gboolean same = g_strcmp0 (turn->speaker, line_msg->speaker) == 0;
  return owner == OWNER_ANY || (owner == OWNER_SPEAKER) == same;
}

/* Terms of a message's text without its photo caption: a caption describes a picture, it names nothing the
 * speaker said. Terms of one letter ("m" of "I'm") are dropped. */
static GPtrArray *
said_terms (const char *text)
{
  g_autofree char *copy = catchup_summary_said (text);
  GPtrArray *terms = catchup_summary_terms (copy);
  for (guint i = terms->len; i-- > 0;)
    if (strlen (terms->pdata[i]) < 2)
      g_ptr_array_remove_index (terms, i);
  return terms;
}

/* What a message states: its sentences less those that ask. "How's the dance studio?" names the studio and tells
 * nothing about it, so a turn that only asks about a thing does not explain it. */
static char *
stated_text (const char *text)
{
  g_autoptr (GString) stated = g_string_new (NULL);
  const char *start = text ? text : "";
  for (const char *p = start;; p++) {
    gboolean end = *p == '\0' || ((*p == '.' || *p == '!' || *p == '?' || *p == '\n') &&
                                   (p[1] == '\0' || p[1] == ' ' || p[1] == '\n'));
    if (!end)
      continue;
    /* with its end mark: a phrase (word_pairs) does not run on into the next sentence */
    if (*p != '?')
      g_string_append_len (g_string_append_c (stated, ' '), start, p - start + (*p != '\0'));
    if (*p == '\0')
      break;
    start = p + 1;
  }
  return g_string_free (g_steal_pointer (&stated), FALSE);
}

static GPtrArray *
stated_terms (const char *text)
{
  g_autofree char *stated = stated_text (text);
  return said_terms (stated);
}

/* The next word of a walk over text (letters, digits, '_'): its start, with *cursor after it; NULL at the end.
 * The text must be valid UTF-8: the walk steps by lead bytes. */
static const char *
next_word (const char **cursor)
{
  const char *p = *cursor;
  while (*p && !(g_unichar_isalnum (g_utf8_get_char (p)) || *p == '_'))
    p = g_utf8_next_char (p);
  const char *w = p;
  while (*p && (g_unichar_isalnum (g_utf8_get_char (p)) || *p == '_'))
    p = g_utf8_next_char (p);
  *cursor = p;
  return p == w ? NULL : w;
}

/* The term of a word that names something (no stop word, two letters at least), or NULL. */
static char *
content_term (const char *w, const char *end)
{
  g_autofree char *word = g_strndup (w, end - w);
  g_autoptr (GPtrArray) terms = catchup_summary_terms (word);
  return terms->len == 1 && strlen (terms->pdata[0]) >= 2 ? g_strdup (terms->pdata[0]) : NULL;
}

/* Two content words next to each other in a clause, "rejection letter": its key ("reject letter", the terms) and
 * the words as written. */
typedef struct {
  char *key;
  char *label;
} Pair;

static void
pair_clear (Pair *pair)
{
  g_free (pair->key);
  g_free (pair->label);
}

/* The pairs of a text without its photo caption, in order. */
static GArray *
word_pairs (const char *raw)
{
  GArray *pairs = g_array_new (FALSE, TRUE, sizeof (Pair));
  g_array_set_clear_func (pairs, (GDestroyNotify) pair_clear);
  g_autofree char *made = g_utf8_make_valid (raw ? raw : "", -1);
  g_autofree char *valid = catchup_summary_said (made);
  const char *p = valid, *prev = NULL, *prev_end = NULL;
  g_autofree char *prev_term = NULL;
  for (const char *w; (w = next_word (&p));) {
    char *term = content_term (w, p);
    gboolean next_to = prev_term && term && w > prev_end && strspn (prev_end, " ") == (gsize) (w - prev_end);
    if (next_to) {
      Pair pair = { g_strconcat (prev_term, " ", term, NULL), g_strndup (prev, p - prev) };
      g_array_append_val (pairs, pair);
    }
    g_free (prev_term);
    prev_term = term;
    prev = w;
    prev_end = p;
  }
  return pairs;
}

/* The memory's turns and the window's with their terms, cut once for all the lines. */
struct _CatchupSummaryRefs {
  CatchupMemory *mem;
  GPtrArray *terms;      /* GPtrArray of terms, per memory turn */
  GPtrArray *stated;     /* GPtrArray of the terms of its statements (stated_terms), per memory turn */
  GPtrArray *joined;     /* GPtrArray of its neighbouring terms joined ("fall back": "fallback"), per turn */
  GPtrArray *pairs;      /* GHashTable of the keys of the word pairs its statements write, per memory turn (only
                          * when a line of the window opens with a pronoun: else empty) */
  GHashTable *pair_df;   /* pair key -> number of memory turns that write it */
  GHashTable *df;        /* term -> number of memory turns that have it: how well it picks out one of them */
  guint docs;
  GHashTable *first;     /* term -> 1 + the index of the first window candidate that has it */
  GPtrArray *asks;       /* per window candidate, non-NULL when it asks a question */
  GHashTable *exprs;     /* window message id -> GPtrArray of the detector's casefolded expressions */
  GHashTable *people;    /* casefolded speakers of the window and the memory */
  guint opening;         /* the window's first candidates by one speaker, before anyone else writes */
  GArray *cands;         /* the window's candidates (borrowed) */
};

static void
count_terms (CatchupSummaryRefs *r, GPtrArray *terms)
{
  g_autoptr (GHashTable) seen = catchup_summary_term_set (terms);
  GHashTableIter it;
  gpointer term;
  g_hash_table_iter_init (&it, seen);
  while (g_hash_table_iter_next (&it, &term, NULL)) {
    guint n = GPOINTER_TO_UINT (g_hash_table_lookup (r->df, term));
    g_hash_table_replace (r->df, g_strdup (term), GUINT_TO_POINTER (n + 1));
  }
}

static void
add_expression (GHashTable *exprs, const char *id, const char *expression)
{
  GPtrArray *list = g_hash_table_lookup (exprs, id);
  if (!list) {
    list = g_ptr_array_new_with_free_func (g_free);
    g_hash_table_insert (exprs, g_strdup (id), list);
  }
  g_autofree char *folded = g_utf8_casefold (expression, -1);
  for (guint i = 0; i < list->len; i++)
    if (g_str_equal (list->pdata[i], folded))
      return;
  g_ptr_array_add (list, g_steal_pointer (&folded));
}

/* Every expression the detector flags in the window, not only those the memory had room to retrieve for. */
static void
collect_expressions (CatchupSummaryRefs *r, GArray *cands)
{
  g_autoptr (GPtrArray) gaps = NULL;
  /* the memory's detection over the same window when it ran the embedded detector; else the detector runs here */
  if (r->mem && r->mem->detected)
    gaps = g_ptr_array_ref (r->mem->detected);
  else {
    g_autoptr (GPtrArray) window = g_ptr_array_new ();
    for (guint i = 0; i < cands->len; i++)
      g_ptr_array_add (window, g_array_index (cands, CatchupCandidate, i).msg);
    gaps = catchup_gaps_detect (window, 0);
  }
  for (guint i = 0; i < gaps->len; i++) {
    const CatchupGap *gap = gaps->pdata[i];
    if (gap->utterance_id && gap->expression)
      add_expression (r->exprs, gap->utterance_id, gap->expression);
  }
  for (guint i = 0; r->mem && r->mem->gaps && i < r->mem->gaps->len; i++) {
    const CatchupGap *gap = r->mem->gaps->pdata[i];
    if (gap->utterance_id && gap->expression)
      add_expression (r->exprs, gap->utterance_id, gap->expression);
  }
}

/* Whether a message opens with a personal pronoun as its subject ("They just sent me a generic rejection letter"):
 * it stands for someone or something said before the message. ("It" is left out: mostly a dummy, "It's great".) */
static gboolean
opens_with_pronoun (const char *text)
{
  static const char *const pronouns[] = { "they", "she", "he", NULL };
  gsize n = 0;
  while (g_ascii_isalpha (text[n]))
    n++;
  g_autofree char *word = g_ascii_strdown (text, n);
  return in_list (word, pronouns) && (text[n] == ' ' || text[n] == '\'');
}

/* The word pairs of a memory turn's statements, counted over the memory. */
static void
add_pairs (CatchupSummaryRefs *r, const char *text)
{
  g_autofree char *stated = stated_text (text);
  g_autoptr (GArray) pairs = word_pairs (stated);
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < pairs->len; i++) {
    const char *key = g_array_index (pairs, Pair, i).key;
    if (g_hash_table_add (set, g_strdup (key))) {
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (r->pair_df, key));
      g_hash_table_replace (r->pair_df, g_strdup (key), GUINT_TO_POINTER (n + 1));
    }
  }
  g_ptr_array_add (r->pairs, set);
}

CatchupSummaryRefs *
catchup_summary_refs_new (CatchupMemory *mem, GArray *cands)
{
  CatchupSummaryRefs *r = g_new0 (CatchupSummaryRefs, 1);
  r->mem = mem;
  r->cands = cands;
  r->terms = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  r->joined = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  r->stated = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  r->pairs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref);
  r->pair_df = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  /* the word pairs are for lines that open with a pronoun (resolve_phrase): cut only when the window has one */
  gboolean pairs = FALSE;
  for (guint i = 0; i < cands->len && !pairs; i++)
    pairs = opens_with_pronoun (g_array_index (cands, CatchupCandidate, i).clean);
  r->df = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  r->first = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  r->asks = g_ptr_array_new ();
  r->exprs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_ptr_array_unref);
  r->people = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; mem && mem->turns && i < mem->turns->len; i++) {
    const CatchupMessage *m = mem->turns->pdata[i];
    GPtrArray *terms = said_terms (m->text);
    /* "fall back" written apart names "fallback": each pair of neighbours joined, kept apart from the words (two
     * turns are not about the same thing for sharing a pair as well as its words) */
    GPtrArray *joined = g_ptr_array_new_with_free_func (g_free);
    for (guint t = 0; t + 1 < terms->len; t++)
      g_ptr_array_add (joined, g_strconcat (terms->pdata[t], terms->pdata[t + 1], NULL));
    count_terms (r, joined);
    g_ptr_array_add (r->joined, joined);
    g_hash_table_add (r->people, g_utf8_casefold (m->speaker ? m->speaker : "", -1));
    count_terms (r, terms);
    g_ptr_array_add (r->terms, terms);
    g_ptr_array_add (r->stated, stated_terms (m->text));
    if (pairs)
      add_pairs (r, m->text);
    r->docs++;
  }
  for (guint i = 0; i < cands->len; i++) {
    const CatchupCandidate *c = &g_array_index (cands, CatchupCandidate, i);
    g_autoptr (GPtrArray) terms = said_terms (c->clean);
    g_ptr_array_add (r->asks, c->question ? (gpointer) c : NULL);
    g_hash_table_add (r->people, g_utf8_casefold (c->msg->speaker ? c->msg->speaker : "", -1));
    for (guint t = 0; t < terms->len; t++)
      if (!g_hash_table_contains (r->first, terms->pdata[t]))
        g_hash_table_insert (r->first, g_strdup (terms->pdata[t]), GUINT_TO_POINTER (i + 1));
  }
  while (r->opening < cands->len &&
         g_strcmp0 (g_array_index (cands, CatchupCandidate, r->opening).msg->speaker,
                    g_array_index (cands, CatchupCandidate, 0).msg->speaker) == 0)
    r->opening++;
  collect_expressions (r, cands);
  return r;
}

void
catchup_summary_refs_free (CatchupSummaryRefs *r)
{
  if (!r)
    return;
  g_ptr_array_unref (r->terms);
  g_ptr_array_unref (r->joined);
  g_ptr_array_unref (r->stated);
  g_ptr_array_unref (r->pairs);
  g_hash_table_unref (r->pair_df);
  g_hash_table_unref (r->df);
  g_hash_table_unref (r->first);
  g_ptr_array_unref (r->asks);
  g_hash_table_unref (r->exprs);
  g_hash_table_unref (r->people);
  g_free (r);
}

/* A memory of a few turns says little about how rare a word is: it counts as one of the usual size (about 30
 * turns in a 1K-token budget). */
#define TYPICAL_TURNS 30

/* How much a shared term says: a word few turns have is evidence, one that most have is none. In units of a
 * word only one turn has (about 1), so that the bar does not move with the size of the memory. */
static double
rarity (const CatchupSummaryRefs *r, const char *term)
{
  guint df = GPOINTER_TO_UINT (g_hash_table_lookup (r->df, term));
  double n = MAX (r->docs, TYPICAL_TURNS) + 1.0;
  return MAX (0.0, log (n / (df + 0.5))) / log (n);
}

/* The line's terms the window has not used before it: what the line leans on. */
static GHashTable *
new_terms (const CatchupSummaryRefs *r, const CatchupCandidate *c, guint index)
{
  g_autoptr (GPtrArray) terms = said_terms (c->clean);
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint t = 0; t < terms->len; t++)
    if (GPOINTER_TO_UINT (g_hash_table_lookup (r->first, terms->pdata[t])) >= index + 1)
      g_hash_table_add (set, g_strdup (terms->pdata[t]));
  return set;
}

typedef struct {
  guint turn;        /* index into mem->turns */
  double score;      /* the rarity of the new terms it shares */
  guint shared;
} Evidence;

static gboolean
in_terms (GPtrArray *terms, const char *term)
{
  for (guint i = 0; terms && i < terms->len; i++)
    if (g_str_equal (terms->pdata[i], term))
      return TRUE;
  return FALSE;
}

/* The new words of the line (wanted) that the turn has, and the words of what the line calls it (named: "art
 * show" names the show even when the window said "art" before). */
static Evidence
evidence_of (const CatchupSummaryRefs *r, guint turn, GHashTable *wanted, GPtrArray *named)
{
  GPtrArray *words = r->terms->pdata[turn], *joined = r->joined->pdata[turn];
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  Evidence e = { turn, 0, 0 };
  for (guint i = 0; i < words->len + joined->len; i++) {
    const char *t = i < words->len ? words->pdata[i] : joined->pdata[i - words->len];
    if ((g_hash_table_contains (wanted, t) || in_terms (named, t)) && g_hash_table_add (seen, (gpointer) t)) {
      e.score += rarity (r, t);
      e.shared++;
    }
  }
  return e;
}

/* Two turns are about the same thing when they share three content terms. */
static gboolean
same_subject (GPtrArray *a, GPtrArray *b)
{
  g_autoptr (GHashTable) set = catchup_summary_term_set (a);
  return catchup_summary_overlap (b, set) >= 3;
}

/* Two new words at the least, and together about one and a half words that only one turn has. */
#define MIN_SHARED 2
#define MIN_EVIDENCE 1.45
/* Another turn this close to the best makes the reference ambiguous, unless both are about the same thing
 * (then the latest is the state). */
#define AMBIGUOUS_RATIO 0.8

/* What the line calls the referent, and the terms a turn must have to be about it. */
typedef struct {
  char *label;           /* as the line writes it */
  GPtrArray *required;   /* terms; the last is the head */
  Owner owner;
  char *setting;         /* "on the court": the place phrase a one-word expression stands in, or NULL */
  guint name_terms;      /* a name used as a modifier ("the ABI report"): how many of required are the name */
  char *caps;            /* a name written in capitals ("VS", "CI"), which a turn must write so too ("vs"), or NULL */
} Anchor;

static void
anchor_clear (Anchor *a)
{
  g_free (a->label);
  g_free (a->setting);
  g_free (a->caps);
  g_clear_pointer (&a->required, g_ptr_array_unref);
}

/* "that sounds", "this needs", "that might", "these remind", "that happened": a relative or dummy "that" before
 * a verb, not a noun phrase (a singular demonstrative takes no plural noun, a plural one no singular). */
static gboolean
before_verb (const char *folded_expr)
{
  static const char *const modals[] = { "might", "could", "would", "should", "must", "may", "can", "will", NULL };
  const char *space = strchr (folded_expr, ' ');
  gboolean singular = g_str_has_prefix (folded_expr, "that ") || g_str_has_prefix (folded_expr, "this ");
  gboolean plural = g_str_has_prefix (folded_expr, "these ") || g_str_has_prefix (folded_expr, "those ");
  if (!space || !(singular || plural))
    return FALSE;
  g_autofree char *next = g_strndup (space + 1, strcspn (space + 1, " "));
  gsize n = strlen (next);
  gboolean s_form = n > 3 && next[n - 1] == 's' && next[n - 2] != 's' && next[n - 2] != 'u';
  if (in_list (next, modals) || (n > 4 && g_str_has_suffix (next, "ed")))
    return TRUE;
  return singular ? s_form : !s_form;
}

/* Whether the expression stops inside a noun phrase of the line: inside a compound ("the big" of "the
 * big-endian job"), or before a further noun that the detector's phrase had no room for ("the coolest harry
 * potter" of "... potter party"): its head is not the phrase's head then. */
static gboolean
cut_phrase (const char *folded_expr, const char *folded_line)
{
  gsize n = strlen (folded_expr);
  for (const char *p = strstr (folded_line, folded_expr); p; p = strstr (p + 1, folded_expr)) {
    const char *after = p + n;
    if (after[0] == '-' && g_ascii_isalnum (after[1]))
      return TRUE;
    if (after[0] != ' ' || !g_ascii_isalnum (after[1]))
      continue;
    g_autofree char *next = g_strndup (after + 1, strcspn (after + 1, " ,.;:!?)'\""));
    if (!catchup_text_is_stop_word (next) && catchup_summary_count_words (folded_expr) >= 4)
      return TRUE;
  }
  return FALSE;
}

/* "that community", "this story", "these photos": a demonstrative points at what was just said. In an exchange
 * of question and answer inside the window that is the turn before ("How did it feel being part of that
 * community?" after the other's story of a parade; "I still remember this story" answering "is there a
 * favourite piece?"); a statement such as "switching to that fallback" can point before the window. */
static gboolean
is_demonstrative (const char *folded_expr)
{
  static const char *const demonstratives[] = { "that ", "this ", "these ", "those ", NULL };
  for (guint i = 0; demonstratives[i]; i++)
    if (g_str_has_prefix (folded_expr, demonstratives[i]))
      return TRUE;
  return FALSE;
}

/* "moments like these that make", "the things that matter": a "that" after a pronoun or a plural opens a
 * relative clause, it points at nothing. */
static gboolean
relative_that (const char *folded_expr, const char *folded_line)
{
  static const char *const heads[] = { "these", "those", "ones", "things", "something", "anything", "everything",
                                       "nothing", "someone", "anyone", "everyone", "people", NULL };
  return g_str_has_prefix (folded_expr, "that ") && catchup_summary_after_any (folded_line, folded_expr, heads);
}

/* The place phrase a one-word definite expression stands in ("on the court", "at the office"), or NULL. A
 * speaker's usual setting is no referent to look up: a memory turn using the same phrase explains nothing. */
static char *
setting_phrase (const char *folded_expr, const char *folded_line)
{
  static const char *const places[] = { "on", "off", "in", "at", "around", "inside", "outside", NULL };
  if (!g_str_has_prefix (folded_expr, "the "))
    return NULL;
  for (guint i = 0; places[i]; i++) {
    g_autofree char *phrase = g_strconcat (places[i], " ", folded_expr, NULL);
    if (catchup_text_has_folded_phrase (folded_line, phrase))
      return g_steal_pointer (&phrase);
  }
  return NULL;
}

/* Whether a word is a verb form that a noun phrase runs into: "paying", "paid", "mean". */
static gboolean
verb_form (const char *word)
{
  static const char *const verbs[] = { "paid", "meant", "made", "kept", "felt", "got", "mean", "means", "matter",
                                       "matters", "pays", "helps", NULL };
  return g_str_has_suffix (word, "ing") || g_str_has_suffix (word, "ed") || in_list (word, verbs);
}

/* A detector expression that names something: "the petition", "the max record size". */
static gboolean
expression_anchor (const char *folded_expr, const char *folded_line, GHashTable *wanted, Anchor *out)
{
  /* one word without a determiner ("still", "again") is no noun phrase; a name the line writes is looked up as
   * a name (name_anchors) */
  GPtrArray *naming = !strchr (folded_expr, ' ') || before_verb (folded_expr) || cut_phrase (folded_expr, folded_line)
                        ? NULL
                        : naming_terms (folded_expr);
  /* the window already said what it is: it resolves the reference itself */
  if (!naming || !g_hash_table_contains (wanted, naming->pdata[naming->len - 1])) {
    g_clear_pointer (&naming, g_ptr_array_unref);
    return FALSE;
  }
  /* "my hard work paying", "your hard work paid", "your kind words mean" run into a verb */
  g_autofree char *tail = g_strdup (strrchr (folded_expr, ' ') ? strrchr (folded_expr, ' ') + 1 : "");
  if (naming->len >= 2 && verb_form (tail)) {
    g_clear_pointer (&naming, g_ptr_array_unref);
    g_autofree char *cut = g_strndup (folded_expr, strlen (folded_expr) - strlen (tail) - 1);
    return expression_anchor (cut, folded_line, wanted, out);
  }
  /* "the advocacy event" is not any event: two of its words, when it has two */
  if (naming->len > 2)
    g_ptr_array_remove_range (naming, 0, naming->len - 2);
  *out = (Anchor) { catchup_summary_sanitize (folded_expr), naming, owner_of (folded_expr),
                    naming->len == 1 ? setting_phrase (folded_expr, folded_line) : NULL };
  return TRUE;
}

/* Units and the words of a date, written like names: "a few GB", "Tue Mar 10" name no thing to look up. */
static const char *const units[] = {
  "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "UTC", "GMT", "Mon", "Tue", "Tues", "Wed", "Thu", "Thur",
  "Thurs", "Fri", "Sat", "Sun", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "Jan",
  "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec", "January", "February", "March",
  "April", "May", "June", "July", "August", "September", "October", "November", "December", NULL,
};

/* A number with a unit or an ordinal written on ("60s", "2x", "3rd"): a quantity, no name. */
static gboolean
quantity (const char *word)
{
  const char *p = word;
  while (g_ascii_isdigit (*p) || *p == '.')
    p++;
  return p > word && strlen (p) <= 3;
}

/* Whether the word that ends at end is a number ("200 MiB", "14:00 UTC": what follows is a unit, no name). */
static gboolean
after_number (const char *text, const char *end)
{
  const char *p = end;
  while (p > text && (g_ascii_isdigit (p[-1]) || strchr (".,:", p[-1])))
    p--;
  return p < end && g_ascii_isdigit (end[-1]) && (p == text || p[-1] == ' ');
}

/* A name or a technical token ("Max", "MSVC", "rc2", "#1473"): capitalised inside a sentence, or with a digit;
 * never a person of the room, whom a line addresses rather than refers to. */
static gboolean
is_name (const char *text, const char *w, const char *word, GHashTable *people)
{
  gboolean digit = FALSE, alpha = FALSE;
  for (const char *p = word; *p; p++) {
    digit |= g_ascii_isdigit (*p);
    alpha |= g_ascii_isalpha (*p);
  }
  if (digit && alpha)
    return !quantity (word);
  /* "Version: 3.0.0-rc1" is a field's label */
  if (!g_unichar_isupper (g_utf8_get_char (word)) || g_str_equal (word, "I") || w[strlen (word)] == ':')
    return FALSE;
  /* "Mel" is Melanie, addressed */
  g_autofree char *folded = g_utf8_casefold (word, -1);
  GHashTableIter it;
  gpointer person;
  g_hash_table_iter_init (&it, people);
  while (g_hash_table_iter_next (&it, &person, NULL))
    if (g_str_has_prefix (person, folded))
      return FALSE;
  const char *p = w;
  /* a title in quotes inside a sentence: I watched "Little Women" */
  if (p - text >= 3 && p[-1] == '"' && p[-2] == ' ' && g_ascii_isalnum (p[-3]))
    p--;
  while (p > text && p[-1] == ' ')
    p--;
  return p > text && !strchr (".!?:;\"([\n", p[-1]) && !after_number (text, p) && !in_list (word, units);
}

/* Whether the word before after is a verb by what follows it: an object or a determiner ("the UK gave me loads
 * of ideas", "the MSVC row gets the new minimum" has "gets the" after "row"). */
static gboolean
takes_object (const char *after)
{
  static const char *const objects[] = { "me", "you", "him", "her", "us", "them", "it", "the", "a", "an", "my",
                                         "your", "our", "their", "his", "this", "that", "these", "those", NULL };
  if (*after != ' ')
    return FALSE;
  const char *w = after + 1, *e = w;
  while (g_ascii_isalpha (*e))
    e++;
  g_autofree char *word = g_ascii_strdown (w, e - w);
  return in_list (word, objects);
}

typedef enum { OPENED_NOT, OPENED_BY_DETERMINER, OPENED_BY_PREPOSITION } Opened;

/* What opens the noun phrase a name is in: a determiner one or two words before it ("the ABI report", "the
 * coolest Harry Potter party"), or a preposition just before it ("fighting for LGBTQ rights"). */
static Opened
opened_by (const char *text, const char *w)
{
  static const char *const determiners[] = { "the", "a", "an", "this", "that", "these", "those", "our", "my",
                                             "your", "his", "her", "their", NULL };
  static const char *const prepositions[] = { "for", "of", "about", "on", "in", "with", "from", "at", "by", NULL };
  const char *p = w;
  for (guint back = 0; back < 2; back++) {
    while (p > text && p[-1] == ' ')
      p--;
    const char *e = p;
    while (p > text && g_ascii_isalpha (p[-1]))
      p--;
    if (p == e)
      return OPENED_NOT;
    g_autofree char *word = g_ascii_strdown (p, e - p);
    if (in_list (word, determiners))
      return OPENED_BY_DETERMINER;
    if (back == 0 && in_list (word, prepositions))
      return OPENED_BY_PREPOSITION;
  }
  return OPENED_NOT;
}

/* A name a determiner or a preposition puts before a noun is a modifier: "the ABI report" is a report, "the MSVC
 * row" a row, "for LGBTQ rights" rights, and a turn that only says ABI is about another thing. The noun joins the
 * required terms (and *end moves past it). After a preposition a time or a generic word is no such noun ("with
 * Max yesterday"). */
static gboolean
modifier_noun (const char *text, const char *w, const char **end, GPtrArray *required)
{
  static const char *const times[] = { "yesterday", "tomorrow", "tonight", "lately", "recently", NULL };
  const char *p = *end;
  Opened opened = p[0] == ' ' && g_ascii_islower (p[1]) ? opened_by (text, w) : OPENED_NOT;
  if (opened == OPENED_NOT)
    return FALSE;
  const char *e = p + 1;
  while (g_ascii_isalpha (*e))
    e++;
  g_autofree char *noun = g_strndup (p + 1, e - p - 1);
  g_autoptr (GPtrArray) terms = catchup_summary_terms (noun);
  if (terms->len != 1 || catchup_text_is_stop_word (noun) || g_ascii_isalnum (*e) || *e == '-' || *e == '_' ||
      takes_object (e) ||
      (opened == OPENED_BY_PREPOSITION && (in_list (noun, times) || in_stem_list (terms->pdata[0], generic_nouns))))
    return FALSE;
  g_ptr_array_add (required, g_strdup (terms->pdata[0]));
  *end = e;
  return TRUE;
}

/* The term of the word [w, end) when it is a name (is_name) of one term, else NULL. */
static char *
name_term (const CatchupSummaryRefs *r, const char *text, const char *w, const char *end)
{
  g_autofree char *word = g_strndup (w, end - w);
  g_autoptr (GPtrArray) terms = catchup_summary_terms (word);
  if (terms->len != 1 || strlen (terms->pdata[0]) < 2 || !is_name (text, w, word, r->people))
    return NULL;
  return g_strdup (terms->pdata[0]);
}

/* Whether [w, end) is written in capitals ("GCC", "MSVC"): a name even where a sentence starts. */
static gboolean
all_caps (const char *w, const char *end)
{
  guint upper = 0;
  for (const char *p = w; p < end; p++) {
    if (g_ascii_islower (*p))
      return FALSE;
    upper += g_ascii_isupper (*p);
  }
  return upper >= 2;
}

/* The terms of the names a text writes ("MSVC", "GCC", "Clang"). */
static GHashTable *
name_set (const CatchupSummaryRefs *r, const char *raw)
{
  g_autofree char *valid = g_utf8_make_valid (raw ? raw : "", -1);
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  const char *p = valid;
  for (const char *w; (w = next_word (&p));) {
    char *term = name_term (r, valid, w, p);
    if (!term && all_caps (w, p)) {
      g_autofree char *word = g_strndup (w, p - w);
      g_autoptr (GPtrArray) terms = catchup_summary_terms (word);
      term = terms->len == 1 ? g_strdup (terms->pdata[0]) : NULL;
    }
    if (term)
      g_hash_table_add (set, term);
  }
  return set;
}

/* The names of a line, each a required term that is new in the window. */
static void
name_anchors (const CatchupSummaryRefs *r, const char *raw, GHashTable *wanted, GArray *anchors)
{
  g_autofree char *valid = g_utf8_make_valid (raw, -1);
  const char *text = valid;
  const char *p = text;
  for (const char *w; (w = next_word (&p));) {
    g_autofree char *term = name_term (r, text, w, p);
    if (!term || !g_hash_table_contains (wanted, term))
      continue;
    GPtrArray *required = g_ptr_array_new_with_free_func (g_free);
    g_ptr_array_add (required, g_steal_pointer (&term));
    /* a name of several words is one name: "Harry Potter" */
    while (p[0] == ' ' && g_unichar_isupper (g_utf8_get_char (p + 1))) {
      const char *e = p + 1;
      while (*e && g_unichar_isalnum (g_utf8_get_char (e)))
        e = g_utf8_next_char (e);
      g_autofree char *more = g_strndup (p + 1, e - p - 1);
      g_autoptr (GPtrArray) more_terms = catchup_summary_terms (more);
      if (more_terms->len != 1 || in_list (more, units))
        break;
      g_ptr_array_add (required, g_strdup (more_terms->pdata[0]));
      p = e;
    }
    const char *end = p;
    guint name_terms = modifier_noun (text, w, &end, required) ? required->len - 1 : 0;
    const char *first_end = w;
    while (g_ascii_isalnum (*first_end) || *first_end == '_')
      first_end++;
    g_autofree char *first = g_strndup (w, first_end - w);
    Anchor a = { g_strndup (w, end - w), required, OWNER_ANY, NULL, name_terms,
                 all_caps (first, first + strlen (first)) ? g_strdup (first) : NULL };
    g_array_append_val (anchors, a);
  }
}

/* Whether the turn has the required terms one after the other ("youth center", not "youth" here and "center"
 * there). */
static gboolean
has_all (GPtrArray *turn_terms, GPtrArray *required)
{
  for (guint i = 0; i + required->len <= turn_terms->len; i++) {
    guint k = 0;
    while (k < required->len && g_str_equal (turn_terms->pdata[i + k], required->pdata[k]))
      k++;
    if (k == required->len)
      return TRUE;
  }
  return FALSE;
}

/* The casefolded names of people or places a text writes ("Cindy", "Edinburgh"): capitalised inside a sentence,
 * in lower case after the first letter, not a person of the room. */
static GHashTable *
names_of (const CatchupSummaryRefs *r, const char *raw)
{
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  /* made valid first, as in name_anchors */
  g_autofree char *valid = g_utf8_make_valid (raw ? raw : "", -1);
  const char *text = valid;
  for (const char *p = text; *p;) {
    const char *w = p;
    gboolean lower = FALSE;
    while (*p && g_unichar_isalpha (g_utf8_get_char (p))) {
      lower |= p > w && g_unichar_islower (g_utf8_get_char (p));
      p = g_utf8_next_char (p);
    }
    if (p == w) {
      p = g_utf8_next_char (p);
      continue;
    }
    g_autofree char *word = g_strndup (w, p - w);
    if (lower && (g_unichar_isalnum (g_utf8_get_char (p)) || *p == '_'))
      continue;
    if (lower && is_name (text, w, word, r->people))
      g_hash_table_add (names, g_utf8_casefold (word, -1));
  }
  return names;
}

static gboolean
shares_name (GHashTable *line_names, GHashTable *turn_names)
{
  GHashTableIter it;
  gpointer name;
  g_hash_table_iter_init (&it, line_names);
  while (g_hash_table_iter_next (&it, &name, NULL))
    if (g_hash_table_contains (turn_names, name))
      return TRUE;
  return FALSE;
}

/* "One of the residents at the shelter, Cindy" is not the resident Laura of a memory turn: when both name people
 * or places and share none, they are about different ones of the same kind. */
static gboolean
other_instance (GHashTable *line_names, GHashTable *turn_names)
{
  return g_hash_table_size (line_names) > 0 && g_hash_table_size (turn_names) > 0 &&
         !shares_name (line_names, turn_names);
}

/* "his story", "her dog": a third person's, who is named in the line when it names one ("someone named David.
 * Hearing his story …"); a turn about them names them too. */
static gboolean
third_person (const char *label)
{
  return g_str_has_prefix (label, "his ") || g_str_has_prefix (label, "her ") || g_str_has_prefix (label, "their ");
}

/* Whether the turn is by the owner of "my X"/"your X" and calls it so: its speaker writing "your X" means the
 * other person's. */
static gboolean
owner_says_own (const Anchor *a, const char *folded_turn)
{
  if (a->owner == OWNER_ANY)
    return TRUE;
  const char *head = strrchr (a->label, ' ');
  g_autofree char *yours = g_strconcat ("your", head ? head : " ", NULL);
  g_autofree char *mine = g_strconcat ("my", head ? head : " ", NULL);
  return !catchup_text_has_folded_phrase (folded_turn, yours) || catchup_text_has_folded_phrase (folded_turn, mine);
}

/* Whether the turn has the name of a compound anchor and its noun right after it or a word later ("the OTA
 * suite" is "our OTA test suite"). */
static gboolean
has_compound (GPtrArray *turn_terms, const Anchor *a)
{
  const char *noun = a->required->pdata[a->required->len - 1];
  for (guint i = 0; i + a->name_terms < turn_terms->len; i++) {
    guint k = 0;
    while (k < a->name_terms && g_str_equal (turn_terms->pdata[i + k], a->required->pdata[k]))
      k++;
    if (k < a->name_terms)
      continue;
    guint at = i + k;
    if (g_str_equal (turn_terms->pdata[at], noun) ||
        (at + 1 < turn_terms->len && g_str_equal (turn_terms->pdata[at + 1], noun)))
      return TRUE;
  }
  return FALSE;
}

/* A turn that names only the modifier of "the MSVC row" is about the row when it names two more of the line's
 * names besides: "the MSVC row gets the new minimum, the gcc/clang rows stay" and "MSVC floor is VS 2022 17.5 …
 * GCC and Clang floors unchanged" are about the same table. */
static gboolean
names_modifier (const CatchupSummaryRefs *r, guint i, const CatchupCandidate *c, const Anchor *a)
{
  g_autoptr (GPtrArray) name = g_ptr_array_new ();
  for (guint k = 0; k < a->name_terms; k++)
    g_ptr_array_add (name, a->required->pdata[k]);
  if (!has_all (r->stated->pdata[i], name))
    return FALSE;
  g_autoptr (GHashTable) turn_names = name_set (r, ((const CatchupMessage *) r->mem->turns->pdata[i])->text);
  g_autoptr (GPtrArray) line_terms = said_terms (c->clean);
  g_autoptr (GHashTable) shared = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint k = 0; k < line_terms->len; k++)
    if (g_hash_table_contains (turn_names, line_terms->pdata[k]) && !in_terms (name, line_terms->pdata[k]))
      g_hash_table_add (shared, line_terms->pdata[k]);
  return g_hash_table_size (shared) >= 2;
}

/* Whether text has word as written, on word boundaries. */
static gboolean
writes_word (const char *text, const char *word)
{
  gsize n = strlen (word);
  for (const char *p = text ? strstr (text, word) : NULL; p; p = strstr (p + 1, word))
    if ((p == text || !g_ascii_isalnum (p[-1])) && !g_ascii_isalnum (p[n]))
      return TRUE;
  return FALSE;
}

/* Whether a memory turn can be about the anchor's referent at all: it states its name, is by its owner, is no
 * other instance of the same kind and does not use it as the same setting. */
static gboolean
about_anchor (const CatchupSummaryRefs *r, guint i, const CatchupCandidate *c, const Anchor *a,
              GHashTable *line_names)
{
  const CatchupMessage *t = r->mem->turns->pdata[i];
  gboolean named = (a->name_terms > 0 ? has_compound (r->stated->pdata[i], a)
                                      : has_all (r->stated->pdata[i], a->required)) ||
                   (a->required->len == 1 && in_terms (r->joined->pdata[i], a->required->pdata[0])) ||
                   (a->name_terms > 0 && names_modifier (r, i, c, a));
  /* "his story" of someone the line names is theirs, whoever of the room told it */
  gboolean named_owner = third_person (a->label) && g_hash_table_size (line_names) > 0;
  if (!t->id || t->ts > c->msg->ts || !named || !(named_owner || owner_fits (a->owner, t, c->msg)))
    return FALSE;
  g_autofree char *folded = g_utf8_casefold (t->text ? t->text : "", -1);
  g_autoptr (GHashTable) turn_names = names_of (r, t->text);
  return owner_says_own (a, folded) && !other_instance (line_names, turn_names) &&
         !(named_owner && !shares_name (line_names, turn_names)) && (!a->caps || writes_word (t->text, a->caps)) &&
         !(a->setting && catchup_text_has_folded_phrase (folded, a->setting));
}

/* The one memory turn about the anchor's referent that explains the line's new words, or -1. */
static gint
best_evidence (const CatchupSummaryRefs *r, const CatchupCandidate *c, const Anchor *a, GHashTable *wanted)
{
  CatchupMemory *mem = r->mem;
  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (Evidence));
  g_autoptr (GHashTable) line_names = names_of (r, c->clean);
  gint best = -1;
  for (guint i = 0; i < mem->turns->len; i++) {
    if (!about_anchor (r, i, c, a, line_names))
      continue;
    Evidence e = evidence_of (r, i, wanted, a->required);
    g_array_append_val (all, e);
    /* among equals the later turn: what holds now */
    if (best < 0 || e.score >= g_array_index (all, Evidence, best).score)
      best = (gint) all->len - 1;
  }
  if (best < 0)
    return -1;
  Evidence b = g_array_index (all, Evidence, best);
  if (b.shared < MIN_SHARED || b.score < MIN_EVIDENCE)
    return -1;
  for (guint i = 0; i < all->len; i++) {
    const Evidence *e = &g_array_index (all, Evidence, i);
    if ((gint) i != best && e->score >= b.score * AMBIGUOUS_RATIO &&
        !same_subject (r->terms->pdata[b.turn], r->terms->pdata[e->turn]))
      return -1;
  }
  return (gint) b.turn;
}

/* A window that opens mid-exchange answers the turn just before it: within this many seconds. */
#define REPLY_SECONDS (10 * 60)

/* The other person's turn just before the window that a turn of its opening answers (nobody else has written in
 * the window before it, so nothing there can be what it answers), written minutes before; else NULL. Only a
 * lead-in turn is known to be the one just before the window: a retrieved one may have others after it. */
static const CatchupMessage *
turn_answered (const CatchupSummaryRefs *r, const CatchupCandidate *c, guint index)
{
  const CatchupMessage *last = r->mem->turns->pdata[r->mem->turns->len - 1];
  gpointer gap = NULL;
  if (index >= r->opening || !last->id || !last->speaker || !last->text || !r->mem->gap_of ||
      !g_hash_table_lookup_extended (r->mem->gap_of, last->id, NULL, &gap) || GPOINTER_TO_INT (gap) != 0 ||
      g_strcmp0 (last->speaker, c->msg->speaker) == 0 || last->ts > c->msg->ts ||
      c->msg->ts - last->ts > REPLY_SECONDS)
    return NULL;
  return last;
}

/* Whether the demonstrative of a line points at the exchange it is part of: a question, or the answer to one in
 * the window or just before it ("I still remember this story" answering "Is there a favorite piece?"). */
static gboolean
points_at_exchange (const CatchupSummaryRefs *r, const CatchupCandidate *c, guint index)
{
  if (index > 0)
    return c->question || r->asks->pdata[index - 1] != NULL;
  const CatchupMessage *last = turn_answered (r, c, index);
  return last && strchr (last->text, '?');
}

/* Words that open a reply before what it says: "Hi Tim!", "Caroline, glad you found …". */
static const char *const openers[] = { "hi", "hey", "hello", "oh", "wow", "aw", "yay", "yeah", "yes", NULL };

/* Whether the word [w, w + n) greets or addresses: an opener ("hi", "yeah") or a person of the room ("Mel" is
 * Melanie). */
static gboolean
greets (const CatchupSummaryRefs *r, const char *w, gsize n)
{
  g_autofree char *folded = g_utf8_casefold (w, n);
  GHashTableIter it;
  gpointer name;
  g_hash_table_iter_init (&it, r->people);
  while (n >= 3 && g_hash_table_iter_next (&it, &name, NULL))
    if (g_str_has_prefix (name, folded))
      return TRUE;
  return in_list (folded, openers);
}

/* A quote without the greeting or the address it opens with ("Nate, after finishing my screenplay I got …"):
 * each word left out ends at a comma or a mark, so a quote that opens with a person as its subject ("Joanna
 * wrote …") keeps it. */
static char *
without_address (const CatchupSummaryRefs *r, char *quote)
{
  const char *start = quote;
  for (;;) {
    gsize word = strcspn (start, " ,.!?");
    if (word == 0 || !start[word] || !strchr (",!.", start[word]) || start[word + 1] != ' ' ||
        !greets (r, start, word))
      break;
    start += word + 2;
  }
  if (start == quote || !*start)
    return quote;
  /* as written: a quote is the speaker's words */
  char *bare = g_strdup (start);
  g_free (quote);
  return bare;
}

/* A reference to memory turn t, quoting the part of it that focus picks. */
static CatchupSummaryItem *
item_quoting (const CatchupSummaryRefs *r, const CatchupMessage *t, const char *label, GHashTable *focus,
              guint max_chars)
{
  g_autofree char *clean = catchup_summary_clean (t->text);
  g_autofree char *quote = without_address (r, catchup_summary_excerpt (clean, focus, max_chars));
  return catchup_summary_item_new (label, t->id, t->speaker, t->ts, quote);
}

/* A reference to memory turn i for a line, quoting the part around the line's words it shares (wanted, or
 * named). */
static CatchupSummaryItem *
item_about (const CatchupSummaryRefs *r, guint i, const char *label, GHashTable *wanted, GPtrArray *named,
            guint max_chars)
{
  g_autoptr (GHashTable) focus = catchup_summary_term_set (r->terms->pdata[i]);
  GHashTableIter it;
  gpointer term;
  g_hash_table_iter_init (&it, focus);
  while (g_hash_table_iter_next (&it, &term, NULL))
    if (!g_hash_table_contains (wanted, term) && !in_terms (named, term))
      g_hash_table_iter_remove (&it);
  return item_quoting (r, r->mem->turns->pdata[i], label, focus, max_chars);
}

/* Whether a line talks about the photo the other person has just shared ("That pic is so beautiful, the colors
 * really pop"): its "the colors" are the photo's, which no earlier turn explains. */
static gboolean
about_photo (const CatchupSummaryRefs *r, const CatchupCandidate *c, guint index)
{
  static const char *const photo_words[] = { "pic", "pics", "photo", "photos", "picture", "pictures", NULL };
  const CatchupMessage *before = index > 0 ? g_array_index (r->cands, CatchupCandidate, index - 1).msg
                                           : turn_answered (r, c, index);
  if (!before || !before->text || g_strcmp0 (before->speaker, c->msg->speaker) == 0 ||
      !strstr (before->text, "[shares a photo"))
    return FALSE;
  /* what the line says, not its own photo's caption */
  g_autofree char *said = catchup_summary_said (c->folded);
  return catchup_summary_has_any (said, photo_words);
}

/* "Thanks for the offer, Maria!": what one thanks for is what the other has just said in the window ("let me know
 * if I can help"), not an older offer of the memory. */
static gboolean
thanked_for (const char *folded_expr, const char *folded_line)
{
  static const char *const thanks[] = { "thanks for", "thank you for", "thx for", "thanks so much for",
                                        "thank you so much for", NULL };
  return catchup_summary_after_any (folded_line, folded_expr, thanks);
}

static CatchupSummaryItem *
resolve_line (const CatchupCandidate *c, const CatchupSummaryRefs *refs, GPtrArray *exprs, guint index,
              GHashTable *wanted, guint max_chars)
{
  g_autoptr (GArray) anchors = g_array_new (FALSE, TRUE, sizeof (Anchor));
  g_array_set_clear_func (anchors, (GDestroyNotify) anchor_clear);
  gboolean photo = about_photo (refs, c, index);
  for (guint i = 0; i < exprs->len; i++) {
    Anchor a;
    if ((is_demonstrative (exprs->pdata[i]) && points_at_exchange (refs, c, index)) ||
        relative_that (exprs->pdata[i], c->folded) || (photo && g_str_has_prefix (exprs->pdata[i], "the ")) ||
        (index > 0 && thanked_for (exprs->pdata[i], c->folded)))
      continue;
    if (expression_anchor (exprs->pdata[i], c->folded, wanted, &a))
      g_array_append_val (anchors, a);
  }
  name_anchors (refs, c->clean, wanted, anchors);
  for (guint i = 0; i < anchors->len; i++) {
    const Anchor *a = &g_array_index (anchors, Anchor, i);
    gint best = best_evidence (refs, c, a, wanted);
    if (best < 0)
      continue;
    return item_about (refs, (guint) best, a->label, wanted, a->required, max_chars);
  }
  return NULL;
}

/* Openings that react to what the other person has just told: "That's great news about your friend!". */
static const char *const reactions[] = {
  "great news", "good news", "sad news", "to hear", "sorry about", "congrats", "congratulations", "glad you",
  "happy for you", "proud of you", NULL,
};



/* The first sentence of a reply that says something, without its end mark, a greeting or an address before it
 * ("Hi Tim! Congrats on your success!" is "Congrats on your success"). */
static char *
opening_sentence (const CatchupSummaryRefs *r, const char *text)
{
  const char *start = text;
  for (;;) {
    while (*start == ' ')
      start++;
    gsize word = strcspn (start, " ,.!?");
    if (word == 0 || !greets (r, start, word))
      break;
    /* the greeting or the address ends where its punctuation does; "Hi" alone runs on into the name */
    start += word;
    if (*start == ',' || *start == '!' || *start == '.')
      start++;
  }
  const char *p = start;
  while (*p && !((*p == '.' || *p == '!' || *p == '?' || *p == '\n') && (p[1] == '\0' || p[1] == ' ')))
    p++;
  return g_strstrip (g_strndup (start, p - start));
}

/* The opening sentence when it reacts to news and the turn it answers tells some (three terms outside its
 * questions), else NULL. */
static char *
reaction_to (const CatchupSummaryRefs *r, const CatchupCandidate *c, const CatchupMessage *turn)
{
  g_autofree char *sentence = opening_sentence (r, c->clean);
  g_autofree char *folded = g_utf8_casefold (sentence, -1);
  g_autoptr (GPtrArray) told = stated_terms (turn->text);
  return catchup_summary_has_any (folded, reactions) && told->len >= 3 ? g_steal_pointer (&sentence) : NULL;
}

/* A reply to the lead-in: a turn of the window's opening (nobody else has written in the window before it, so
 * nothing there can be what it answers) that reacts to news answers the other person's turn just before the
 * window, written minutes before. The quote is that turn's first sentence that is no greeting or reaction: its
 * news. (A pronoun in the opening is left alone: the turn before is then mostly the question it answers, and
 * the speaker's own earlier turns what it stands for.) */
static CatchupSummaryItem *
resolve_reply (const CatchupCandidate *c, const CatchupSummaryRefs *r, guint index, guint max_chars)
{
  const CatchupMessage *last = turn_answered (r, c, index);
  if (!last)
    return NULL;
  g_autofree char *ref = reaction_to (r, c, last);
  if (!ref)
    return NULL;
  return item_quoting (r, last, ref, NULL, max_chars);
}

/* Whether two words read as a noun and the noun it qualifies ("rejection letter"), not a verb phrase or a
 * formula ("taking care", "super peaceful", "look great"): neither ends as a verb form or an adverb does, and the
 * first is no verb that links or makes ("they look great", "they made dinner"). */
static gboolean
noun_pair (const char *label)
{
  static const char *const endings[] = { "ing", "ed", "ly", NULL };
  static const char *const verbs[] = { "look", "looks", "seem", "seems", "sound", "sounds", "feel", "feels", "felt",
                                       "get", "gets", "got", "become", "becomes", "became", "stay", "stays", "keep",
                                       "keeps", "kept", "go", "goes", "went", "make", "makes", "made", "take",
                                       "takes", "took", "love", "loves", "like", "likes", NULL };
  g_auto (GStrv) words = g_strsplit (label, " ", 2);
  g_autofree char *first = g_ascii_strdown (words[0], -1);
  if (in_list (first, verbs))
    return FALSE;
  for (guint w = 0; words[w]; w++)
    for (guint i = 0; endings[i]; i++)
      if (g_str_has_suffix (words[w], endings[i]))
        return FALSE;
  return TRUE;
}

/* A line whose subject is a pronoun leans on what was said before; when it writes two words side by side that
 * are new in the window ("rejection letter") and exactly one memory turn states them side by side too, that turn
 * is the thing it tells more about, and the pair is what the line calls it. (One shared word is too weak.) */
static CatchupSummaryItem *
resolve_phrase (const CatchupCandidate *c, const CatchupSummaryRefs *r, GHashTable *wanted, guint max_chars)
{
  if (!opens_with_pronoun (c->clean))
    return NULL;
  g_autoptr (GArray) pairs = word_pairs (c->clean);
  for (guint i = 0; i < pairs->len; i++) {
    const Pair *pair = &g_array_index (pairs, Pair, i);
    g_auto (GStrv) terms = g_strsplit (pair->key, " ", 2);
    if (!noun_pair (pair->label) || !g_hash_table_contains (wanted, terms[0]) ||
        !g_hash_table_contains (wanted, terms[1]) ||
        in_stem_list (terms[0], generic_nouns) || in_stem_list (terms[1], generic_nouns) ||
        GPOINTER_TO_UINT (g_hash_table_lookup (r->pair_df, pair->key)) != 1)
      continue;
    for (guint t = 0; t < r->pairs->len; t++) {
      const CatchupMessage *turn = r->mem->turns->pdata[t];
      if (!g_hash_table_contains (r->pairs->pdata[t], pair->key) || !turn->id || turn->ts > c->msg->ts)
        continue;
      g_autoptr (GHashTable) focus = g_hash_table_new (g_str_hash, g_str_equal);
      g_hash_table_add (focus, terms[0]);
      g_hash_table_add (focus, terms[1]);
      return item_quoting (r, turn, pair->label, focus, max_chars);
    }
  }
  return NULL;
}

/* "our last one" in "another painting like our last one": the words of the one-phrase and where its noun is. */
typedef struct {
  char *label;   /* "our last one" */
  char *noun;    /* the noun it stands for, "painting" */
  char *term;    /* and its term, "paint" */
  Owner owner;
} OnePhrase;

/* The words of a sentence, casefolded: letters and digits, or NULL past its end. */
static GPtrArray *
sentence_words (const char *folded, const char **cursor)
{
  const char *p = *cursor;
  if (!*p)
    return NULL;
  GPtrArray *words = g_ptr_array_new_with_free_func (g_free);
  while (*p) {
    gboolean end = strchr (".!?", *p) && (p[1] == ' ' || p[1] == '\0');
    if (g_ascii_isalnum (*p)) {
      const char *w = p;
      while (g_ascii_isalnum (*p))
        p++;
      g_ptr_array_add (words, g_strndup (w, p - w));
      continue;
    }
    p++;
    if (end)
      break;
  }
  *cursor = p;
  return words;
}

static gboolean
word_in (GPtrArray *words, gint i, const char *const *list)
{
  return i >= 0 && (guint) i < words->len && in_list (words->pdata[i], list);
}

/* "another painting like our last one", "a cake just like my first one": a noun phrase that a one-phrase of the
 * same sentence stands in for, compared with it. Only this shape: which noun a bare "the last one" stands for is
 * otherwise a guess. */
static gboolean
one_phrase (const char *folded, OnePhrase *out)
{
  static const char *const owners[] = { "my", "our", "your", "the", NULL };
  static const char *const which[] = { "last", "latest", "previous", "first", "old", NULL };
  static const char *const compare[] = { "like", "as", "than", NULL };
  static const char *const determiners[] = { "a", "an", "another", "the", "this", "that", "my", "our", "new", NULL };
  const char *cursor = folded;
  for (GPtrArray *words; (words = sentence_words (folded, &cursor)); g_ptr_array_unref (words))
    for (gint i = 4; i < (gint) words->len; i++) {
      if (!g_str_equal (words->pdata[i], "one") || !word_in (words, i - 1, which) ||
          !word_in (words, i - 2, owners) || !word_in (words, i - 3, compare))
        continue;
      gint noun = i - 4;
      /* "just like" */
      if (noun > 0 && g_str_equal (words->pdata[noun], "just"))
        noun--;
      if (noun < 1 || !word_in (words, noun - 1, determiners))
        continue;
      g_autoptr (GPtrArray) terms = catchup_summary_terms (words->pdata[noun]);
      if (terms->len != 1 || in_stem_list (terms->pdata[0], generic_nouns))
        continue;
      char *label = g_strdup_printf ("%s %s one", (char *) words->pdata[i - 2], (char *) words->pdata[i - 1]);
      *out = (OnePhrase) { label, g_strdup (words->pdata[noun]), g_strdup (terms->pdata[0]), owner_of (label) };
      g_ptr_array_unref (words);
      return TRUE;
    }
  return FALSE;
}

/* "our last one" is the latest thing of that kind its owner told about: the latest memory turn by its owner that
 * states the noun, unless the window has told of one before the line. */
static CatchupSummaryItem *
resolve_one (const CatchupCandidate *c, const CatchupSummaryRefs *r, guint index, guint max_chars)
{
  OnePhrase one;
  if (!one_phrase (c->folded, &one))
    return NULL;
  g_autofree char *label = one.label, *noun = one.noun, *term = one.term;
  /* "our" is the speaker's, or the group's that the speaker is in */
  Owner owner = g_str_has_prefix (label, "our ") ? OWNER_SPEAKER : one.owner;
  /* "that painting is awesome" about the other's painting is not the owner telling of theirs */
  g_autofree char *mine = g_strconcat ("my ", noun, NULL), *ours = g_strconcat ("our ", noun, NULL);
  for (guint i = 0; i < index; i++) {
    const CatchupCandidate *w = &g_array_index (r->cands, CatchupCandidate, i);
    if (owner_fits (owner, w->msg, c->msg) &&
        (catchup_text_has_folded_phrase (w->folded, mine) || catchup_text_has_folded_phrase (w->folded, ours)))
      return NULL;
  }
  for (guint i = r->mem->turns->len; i-- > 0;) {
    const CatchupMessage *t = r->mem->turns->pdata[i];
    if (!t->id || t->ts > c->msg->ts || !owner_fits (owner, t, c->msg) || !in_terms (r->stated->pdata[i], term))
      continue;
    g_autoptr (GHashTable) focus = g_hash_table_new (g_str_hash, g_str_equal);
    g_hash_table_add (focus, term);
    return item_quoting (r, t, label, focus, max_chars);
  }
  return NULL;
}

/* The person of the room a line opens by addressing ("yuki_n: I need your piece"), casefolded, or NULL. */
static const char *
addressed (const CatchupSummaryRefs *r, const CatchupCandidate *c)
{
  g_autofree char *speaker = g_utf8_casefold (c->msg->speaker ? c->msg->speaker : "", -1);
  GHashTableIter it;
  gpointer person;
  g_hash_table_iter_init (&it, r->people);
  while (g_hash_table_iter_next (&it, &person, NULL)) {
    gsize n = strlen (person);
    if (n > 0 && g_str_has_prefix (c->folded, person) && (c->folded[n] == ':' || c->folded[n] == ',') &&
        !g_str_equal (person, speaker))
      return person;
  }
  return NULL;
}

/* "your piece", "your part": what the addressee is to deliver, a word that names no thing of its own. */
static char *
vague_yours (const char *folded)
{
  static const char *const vague[] = { "piece", "part", "bit", "bits", "share", "stuff", "thing", "things", NULL };
  for (guint i = 0; vague[i]; i++) {
    g_autofree char *phrase = g_strconcat ("your ", vague[i], NULL);
    if (catchup_text_has_folded_phrase (folded, phrase))
      return g_steal_pointer (&phrase);
  }
  return NULL;
}

/* Whether person stands in folded text as the subject of a verb ("… but yuki_n prepares a backport patch",
 * "yuki_n will …"): not addressed ("yuki_n: …"), and followed by a word that is no preposition or conjunction
 * ("thanks yuki_n for …", "yuki_n and me"). */
static gboolean
subject_of_verb (const char *folded, const char *person)
{
  static const char *const linking[] = { "for", "and", "or", "with", "to", "of", "in", "on", "at", "from", "by",
                                         "about", "as", "but", NULL };
  gsize n = strlen (person);
  for (const char *p = strstr (folded, person); p; p = strstr (p + 1, person)) {
    gboolean word = (p == folded || !g_ascii_isalnum (p[-1])) && !g_ascii_isalnum (p[n]) && p[n] != '_';
    if (!word || p == folded || p[n] != ' ' || !g_ascii_isalpha (p[n + 1]))
      continue;
    const char *next = p + n + 1;
    g_autofree char *verb = g_strndup (next, strcspn (next, " ,.;:!?"));
    if (!in_list (verb, linking))
      return TRUE;
  }
  return FALSE;
}

/* Whether a memory turn gives the addressee a task: they take it on ("I'll rework the packaging", "I can do a
 * backport patch") or someone writes their name ("yuki_n prepares a backport patch"). */
static gboolean
tasks (const CatchupMessage *t, const char *person)
{
  static const char *const takes_on[] = { "i'll", "i will", "i can", "i'm going to", "will do", NULL };
  g_autofree char *folded = g_utf8_casefold (t->text ? t->text : "", -1);
  g_autofree char *speaker = g_utf8_casefold (t->speaker ? t->speaker : "", -1);
  if (g_str_equal (speaker, person))
    return catchup_summary_has_any (folded, takes_on);
  return subject_of_verb (folded, person);
}

/* "yuki_n: I need your piece by noon tomorrow … put it in patches/": the addressee's part is the task the memory
 * gave them that shares a word with the line (the backport patch), when one such task stands out. */
static CatchupSummaryItem *
resolve_yours (const CatchupCandidate *c, const CatchupSummaryRefs *r, guint max_chars)
{
  const char *person = addressed (r, c);
  g_autofree char *label = person ? vague_yours (c->folded) : NULL;
  if (!label)
    return NULL;
  /* the words of the line that can tie it to a task: not the addressee's name, which every candidate has */
  g_autoptr (GPtrArray) line_terms = said_terms (c->clean);
  g_autoptr (GPtrArray) name = said_terms (person);
  g_autoptr (GHashTable) wanted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < line_terms->len; i++)
    if (!in_stem_list (line_terms->pdata[i], generic_nouns) && !in_terms (name, line_terms->pdata[i]))
      g_hash_table_add (wanted, g_strdup (line_terms->pdata[i]));
  gint best = -1, second = -1;
  double best_score = 0, second_score = 0;
  for (guint i = 0; i < r->mem->turns->len; i++) {
    const CatchupMessage *t = r->mem->turns->pdata[i];
    if (!t->id || t->ts > c->msg->ts || !tasks (t, person))
      continue;
    Evidence e = evidence_of (r, i, wanted, NULL);
    if (e.shared == 0)
      continue;
    /* among equals the later turn: what holds now */
    if (e.score >= best_score) {
      second = best, second_score = best_score;
      best = (gint) i, best_score = e.score;
    } else if (e.score >= second_score) {
      second = (gint) i, second_score = e.score;
    }
  }
  if (best < 0 || (second >= 0 && second_score >= best_score * AMBIGUOUS_RATIO &&
                   !same_subject (r->terms->pdata[best], r->terms->pdata[second])))
    return NULL;
  return item_about (r, (guint) best, label, wanted, NULL, max_chars);
}

/* Who a third-person pronoun can stand for: people or animals for "they", a woman for "she", a man for "he".
 * "one of the ladies at my writing club" is a woman. */
static const char *const group_nouns[] = {
  "teammates", "players", "friends", "colleagues", "coworkers", "kids", "children", "students", "residents",
  "volunteers", "guys", "ladies", "parents", "neighbors", "folks", "members", "fans", "veterans", "buddies",
  "classmates", "cousins", "siblings", "brothers", "sisters", "girls", "boys", "guests", "customers", "clients",
  "dogs", "cats", "pets", "turtles", "puppies", "kittens", "horses", "teens", NULL,
};
static const char *const female_nouns[] = {
  "mom", "mother", "sister", "wife", "daughter", "girlfriend", "aunt", "grandma", "grandmother", "lady", "girl",
  "woman", "niece", "one of the ladies", "one of the girls", "one of the women", NULL,
};
static const char *const male_nouns[] = {
  "dad", "father", "brother", "husband", "son", "boyfriend", "uncle", "grandpa", "grandfather", "guy", "boy", "man",
  "nephew", "one of the guys", "one of the boys", "one of the men", NULL,
};

typedef struct {
  const char *pronoun;
  const char *const *nouns;
} PronounKind;

static const PronounKind pronoun_kinds[] = {
  { "they", group_nouns }, { "they're", group_nouns }, { "they've", group_nouns }, { "them", group_nouns },
  { "their", group_nouns }, { "she", female_nouns }, { "she's", female_nouns }, { "her", female_nouns },
  { "he", male_nouns }, { "he's", male_nouns }, { "him", male_nouns }, { "his", male_nouns },
};

/* The nouns of a kind that folded text names, the first in *first (borrowed from the list), how many differ. */
static guint
kind_nouns (const char *folded, const char *const *nouns, const char **first)
{
  guint n = 0;
  for (guint i = 0; nouns[i]; i++)
    if (catchup_text_has_folded_phrase (folded, nouns[i]) && n++ == 0 && first)
      *first = nouns[i];
  return n;
}

/* The first third-person pronoun of the opening two sentences of a line's own words, as written (its byte range
 * in said), with its kind; FALSE when none or when a noun of its kind comes before it there. */
static gboolean
first_pronoun (const char *said, const PronounKind **kind, gsize *start, gsize *len)
{
  guint sentences = 0;
  for (const char *p = said; *p && sentences < 2;) {
    if (strchr (".!?", *p) && (p[1] == ' ' || !p[1]))
      sentences++;
    if (!g_ascii_isalpha (*p) || (p > said && (g_ascii_isalnum (p[-1]) || p[-1] == '\''))) {
      p++;
      continue;
    }
    gsize n = 0;
    while (g_ascii_isalpha (p[n]) || (p[n] == '\'' && g_ascii_isalpha (p[n + 1])))
      n++;
    g_autofree char *word = g_ascii_strdown (p, n);
    for (guint k = 0; k < G_N_ELEMENTS (pronoun_kinds); k++)
      if (g_str_equal (word, pronoun_kinds[k].pronoun)) {
        g_autofree char *before = g_utf8_casefold (said, p - said);
        if (kind_nouns (before, pronoun_kinds[k].nouns, NULL) > 0)
          return FALSE;
        *kind = &pronoun_kinds[k], *start = p - said, *len = n;
        return TRUE;
      }
    p += n;
  }
  return FALSE;
}

/* A pronoun at the window's opening stays in the lead-in's conversation: within this many of its first turns,
 * and about a turn this many seconds before it. */
#define CONTINUED_TURNS 4
#define CONTINUED_LEAD_IN 8
#define CONTINUED_SECONDS 3600

/* Whether memory turn i is of the lead-in (the memory's last turns, kept for no gap) and of the conversation a
 * line continues, said before it. */
static gboolean
continues_to (const CatchupSummaryRefs *r, guint i, const CatchupCandidate *c)
{
  const CatchupMessage *t = r->mem->turns->pdata[i];
  gpointer gap = NULL;
  return t->id && t->text && g_hash_table_lookup_extended (r->mem->gap_of, t->id, NULL, &gap) &&
         GPOINTER_TO_INT (gap) == 0 && t->ts <= c->msg->ts && c->msg->ts - t->ts <= CONTINUED_SECONDS;
}

/* "They're great friends" near the window's start, after "I attended a local restaurant with some new teammates
 * last week" just before it: a pronoun that nothing in the window before it can stand for (no noun of its kind)
 * continues the lead-in. It stands for the people of its latest turn that names some, when that turn names one
 * kind of them only; the quote is the turn that first names them ("I'm now mentoring the younger players", not
 * "a pic of me and some of the younger players"). */
static CatchupSummaryItem *
resolve_continued (const CatchupCandidate *c, const CatchupSummaryRefs *r, guint index, guint max_chars)
{
  if (index >= CONTINUED_TURNS || !r->mem->gap_of)
    return NULL;
  g_autofree char *said = catchup_summary_said (c->clean);
  const PronounKind *kind;
  gsize start, len;
  if (!first_pronoun (said, &kind, &start, &len))
    return NULL;
  for (guint i = 0; i < index; i++)
    if (kind_nouns (g_array_index (r->cands, CatchupCandidate, i).folded, kind->nouns, NULL) > 0)
      return NULL;
  const char *noun = NULL;
  gint named = -1;
  for (guint i = r->mem->turns->len, seen = 0; i-- > 0 && seen < CONTINUED_LEAD_IN && continues_to (r, i, c);
       seen++) {
    g_autofree char *folded = g_utf8_casefold (((CatchupMessage *) r->mem->turns->pdata[i])->text, -1);
    const char *first = NULL;
    guint kinds = kind_nouns (folded, kind->nouns, &first);
    if (kinds == 0)
      continue;
    /* two kinds of people, or other people before the ones named last: which it is would be a guess */
    if (kinds > 1 || (noun && first != noun))
      break;
    noun = first;
    named = (gint) i;
  }
  if (named < 0)
    return NULL;
  g_autoptr (GPtrArray) terms = catchup_summary_terms (noun);
  g_autoptr (GHashTable) focus = catchup_summary_term_set (terms);
  g_autofree char *label = g_strndup (said + start, len);
  return item_quoting (r, r->mem->turns->pdata[named], label, focus, max_chars);
}

/* The day a line names by "<day>'s" ("Friday's", "yesterday's"), before the line's own day: its start as a
 * Unix time (UTC days), or -1. */
/* The days a line may name a meeting by: the weekdays, Monday first, then "yesterday". */
static const char *const meeting_days[] = { "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                                            "sunday", "yesterday", NULL };
#define WEEKDAYS 7

static gint64
named_day (const char *day, gint64 line_ts)
{
  gint64 today = line_ts - line_ts % 86400;
  if (g_str_equal (day, "yesterday"))
    return today - 86400;
  for (guint i = 0; i < WEEKDAYS; i++)
    if (g_str_equal (day, meeting_days[i])) {
      g_autoptr (GDateTime) dt = g_date_time_new_from_unix_utc (line_ts);
      if (!dt)
        return -1;
      gint back = (g_date_time_get_day_of_week (dt) - 1 - (gint) i + 7) % 7;
      return today - 86400 * (back ? back : 7);
    }
  return -1;
}

/* "per Friday's call, I've rebased my two remaining PRs": a meeting named by its day stands for what the room
 * decided that day: the one decision the memory holds from that day. */
static CatchupSummaryItem *
resolve_meeting_day (const CatchupCandidate *c, const CatchupSummaryRefs *r, guint max_chars)
{
  static const char *const meetings[] = { "call", "meeting", "sync", "standup", "discussion", "vote", NULL };
  for (guint d = 0; meeting_days[d]; d++)
    for (guint m = 0; meetings[m] && strstr (c->folded, meeting_days[d]); m++) {
      g_autofree char *phrase = g_strdup_printf ("%s's %s", meeting_days[d], meetings[m]);
      g_autofree char *curly = g_strdup_printf ("%s’s %s", meeting_days[d], meetings[m]);
      if (!catchup_text_has_folded_phrase (c->folded, phrase) && !catchup_text_has_folded_phrase (c->folded, curly))
        continue;
      gint64 start = named_day (meeting_days[d], c->msg->ts);
      const CatchupMessage *decided = NULL;
      if (start < 0)
        return NULL;
      for (guint i = 0; i < r->mem->turns->len; i++) {
        const CatchupMessage *t = r->mem->turns->pdata[i];
        if (!t->id || !t->text || t->ts < start || t->ts >= start + 86400 ||
            catchup_summary_classify (t->speaker, t->text) != CATCHUP_SECTION_DECISIONS)
          continue;
        /* two decisions that day: which one the line acts on would be a guess */
        if (decided)
          return NULL;
        decided = t;
      }
      if (!decided)
        return NULL;
      /* the words as the line writes them */
      const char *written = NULL;
      gsize n = 0;
      for (const char *p = c->clean; *p && !written; p++)
        for (const char *form = phrase; form && !written; form = form == phrase ? curly : NULL)
          if (g_ascii_strncasecmp (p, form, strlen (form)) == 0)
            written = p, n = strlen (form);
      g_autofree char *label = written ? g_strndup (written, n) : g_strdup (phrase);
      return item_quoting (r, decided, label, NULL, max_chars);
    }
  return NULL;
}

void
catchup_summary_resolve (GPtrArray *items, const CatchupCandidate *c, guint index, const CatchupSummaryRefs *refs,
                         guint max_chars)
{
  /* a name the window has not introduced leans on the memory as a flagged expression does */
  GPtrArray *exprs = c->msg->id ? g_hash_table_lookup (refs->exprs, c->msg->id) : NULL;
  g_autoptr (GPtrArray) none = g_ptr_array_new ();
  if (!refs->mem || !refs->mem->turns || refs->mem->turns->len == 0)
    return;
  g_autoptr (GHashTable) wanted = new_terms (refs, c, index);
  CatchupSummaryItem *item = resolve_line (c, refs, exprs ? exprs : none, index, wanted, max_chars);
  if (!item)
    item = resolve_reply (c, refs, index, max_chars);
  if (!item)
    item = resolve_phrase (c, refs, wanted, max_chars);
  if (!item)
    item = resolve_continued (c, refs, index, max_chars);
  if (!item)
    item = resolve_one (c, refs, index, max_chars);
  if (!item)
    item = resolve_yours (c, refs, max_chars);
  if (!item)
    item = resolve_meeting_day (c, refs, max_chars);
  if (item)
    g_ptr_array_add (items, item);
}

/* A quote longer than this reads as a second line, not as a part of the first. */
#define INLINE_CHARS 90

/* Whether the summary shows window message id: as a line of its own, a reply, or a question read in an answer's
 * line. */
static gboolean
shown (GPtrArray *lines, const char *id)
{
  for (guint i = 0; i < lines->len; i++) {
    GPtrArray *sources = ((CatchupSummaryLine *) lines->pdata[i])->sources;
    for (guint k = 0; k < sources->len; k++)
      if (g_strcmp0 (sources->pdata[k], id) == 0)
        return TRUE;
  }
  return FALSE;
}

/* Whether the word that ends at end is the head of its phrase ("the book got me thinking", "the book."): what
 * follows is a mark, the end, or a word that starts no noun phrase of its own. "the fashion editors", "the good
 * times" go on. */
static gboolean
ends_phrase (const char *end)
{
  static const char *const after[] = {
    "of", "to", "in", "on", "at", "for", "with", "from", "by", "about", "is", "was", "are", "were", "has", "had",
    "have", "went", "got", "and", "but", "or", "so", "that", "which", "who", "it", "i", "you", "we", "they", "he",
    "she", "looks", "sounds", "seems", "will", "would", "can", "could", "again", "too", "yet", NULL,
  };
  if (!*end || strchr (",.!?;:)", *end))
    return TRUE;
  if (*end != ' ')
    return FALSE;
  const char *next = end + 1;
  gsize n = 0;
  while (g_ascii_isalpha (next[n]) || next[n] == '\'')
    n++;
  g_autofree char *word = g_ascii_strdown (next, n);
  return in_list (word, after);
}

/* Whether text brings in the thing that word names (the same word, or its plural or singular): in a statement,
 * not a question ("what's your favorite genre?"), not as something already known ("the photoshoot", "that spot"),
 * and, when someone else says it, not as their own ("our own advisory" is not the project's). */
static gboolean
introduces (const char *text, const char *word, gboolean other_speaker)
{
  static const char *const known[] = { "the", "this", "that", "these", "those", NULL };
  static const char *const owned[] = { "my", "our", "own", "your", "his", "her", "their", NULL };
  g_autofree char *said = catchup_summary_said (text);
  g_autofree char *singular = g_str_has_suffix (word, "s") ? g_strndup (word, strlen (word) - 1) : NULL;
  g_autofree char *plural = g_strconcat (word, "s", NULL);
  const char *sentence = said, *prev[2] = { NULL, NULL };
  for (const char *cursor = said, *w; (w = next_word (&cursor));) {
    g_autofree char *this_word = g_ascii_strdown (w, cursor - w);
    if (g_str_equal (this_word, word) || g_str_equal (this_word, plural) ||
        (singular && g_str_equal (this_word, singular))) {
      const char *q = sentence;
      while (*q && !(strchr (".!?", *q) && (q[1] == ' ' || !q[1])))
        q++;
      g_autofree char *before = prev[0] ? g_ascii_strdown (prev[0], strcspn (prev[0], " ,.!?")) : g_strdup ("");
      g_autofree char *before2 = prev[1] ? g_ascii_strdown (prev[1], strcspn (prev[1], " ,.!?")) : g_strdup ("");
      return *q != '?' && !in_list (before, known) &&
             !(other_speaker && (in_list (before, owned) || in_list (before2, owned)));
    }
    for (const char *p = w; p < cursor + (*cursor ? 1 : 0); p++)
      if (strchr (".!?", *p) && (p[1] == ' ' || !p[1]))
        sentence = p + 1;
    prev[1] = prev[0];
    prev[0] = w;
  }
  return FALSE;
}

/* The one window message before index that states term, when it introduces word and no line shows it; else -1
 * (a shown one has said what the thing is, two leave it open). */
static gint
introduced_unshown (GArray *cands, guint index, const char *term, const char *word, GPtrArray *lines)
{
  const CatchupCandidate *line = &g_array_index (cands, CatchupCandidate, index);
  gint first = -1;
  for (guint j = 0; j < index; j++) {
    const CatchupCandidate *w = &g_array_index (cands, CatchupCandidate, j);
    if (!in_terms (w->terms, term))
      continue;
    /* two earlier messages about a draft: which one "the draft" is would be a guess */
    if (first >= 0 || shown (lines, w->msg->id) ||
        !introduces (w->clean, word, g_strcmp0 (w->msg->speaker, line->msg->speaker) != 0))
      return -1;
    first = (gint) j;
  }
  return first;
}

/* Definite phrases in a line's text ("the book", "this presentation") whose thing an earlier window message
 * introduced that the summary does not show: "Could it spark any ideas? … the book got me thinking" dangles
 * without "I'm reading The Lean Startup". Explained in place, in the few words around the thing, and only when
 * that fits inside the line. */
void
catchup_summary_explain_in_window (GPtrArray *lines, GArray *cands, guint max_chars)
{
  static const char *const determiners[] = { "the", "this", "these", NULL };
  static const char *const verbs[] = { "sounds", "looks", "seems", "means", "makes", "reminds", "feels", "gives",
                                       "helps", "keeps", "shows", NULL };
  for (guint i = 0; i < lines->len; i++) {
    CatchupSummaryLine *line = lines->pdata[i];
    const char *source = catchup_summary_line_source (line);
    gint index = -1;
    for (guint j = 0; source && j < cands->len && index < 0; j++)
      if (g_strcmp0 (g_array_index (cands, CatchupCandidate, j).msg->id, source) == 0)
        index = (gint) j;
    if (index <= 0 || line->context->len > 0 || !line->text)
      continue;
    const char *cursor = line->text;
    for (const char *w, *prev_end = NULL; (w = next_word (&cursor));) {
      const char *end = cursor;
      g_autofree char *word = g_ascii_strdown (w, end - w);
      const char *before = prev_end;
      prev_end = end;
      if (!before || w != before + 1 || *before != ' ')
        continue;
      /* the word before this one */
      const char *d = before;
      while (d > line->text && g_ascii_isalpha (d[-1]))
        d--;
      g_autofree char *det = g_ascii_strdown (d, before - d);
      if (!in_list (det, determiners) || end - w < 4 || in_list (word, verbs) ||
          (!g_str_equal (det, "the") && (g_str_has_suffix (word, "ing") || g_str_has_suffix (word, "ed"))) ||
          !ends_phrase (end))
        continue;
      g_autoptr (GPtrArray) terms = catchup_summary_terms (word);
      if (terms->len != 1 || in_stem_list (terms->pdata[0], generic_nouns))
        continue;
      /* "a new book … the book": the line introduces it itself */
      g_autofree char *head = g_strndup (line->text, d - line->text);
      g_autoptr (GPtrArray) head_terms = catchup_summary_terms (head);
      if (in_terms (head_terms, terms->pdata[0]))
        continue;
      gint j = introduced_unshown (cands, (guint) index, terms->pdata[0], word, lines);
      if (j < 0)
        continue;
      const CatchupCandidate *intro = &g_array_index (cands, CatchupCandidate, j);
      g_autoptr (GHashTable) focus = catchup_summary_term_set (terms);
      g_autofree char *quote = catchup_summary_excerpt (intro->clean, focus, MIN (max_chars, INLINE_CHARS));
      g_autofree char *label = g_strndup (d, end - d);
      CatchupSummaryItem *item = catchup_summary_item_new (label, intro->msg->id, intro->msg->speaker,
                                                           intro->msg->ts, quote);
      if (catchup_summary_item_reads_inline (item)) {
        g_ptr_array_add (line->context, item);
        break;
      }
      catchup_summary_item_free (item);
    }
  }
}

/* The byte offset just after the first occurrence of ref in text on word boundaries, ignoring ASCII case, or -1
 * (a reference in other scripts stays on its own line: its casefolded length may differ). */
static gssize
end_of_ref (const char *text, const char *ref)
{
  gsize n = strlen (ref);
  for (const char *p = ref; *p; p++)
    if ((guchar) *p >= 0x80)
      return -1;
  for (const char *p = text; n > 0 && *p; p++)
    if (g_ascii_strncasecmp (p, ref, n) == 0 && (p == text || !g_ascii_isalnum (p[-1])) &&
        !g_ascii_isalnum (p[n]) && p[n] != '-')
      return (p - text) + (gssize) n;
  return -1;
}

/* Whether a quote shows what the reference is called (the start of its last word at a word start: "store" for
 * "the clothing store", "shelter" for "shelters"): only then does it read as the explanation in place. */
static gboolean
shows_name (const char *quote, const char *ref)
{
  const char *space = strrchr (ref, ' ');
  const char *head = space ? space + 1 : ref;
  gsize n = MIN (strlen (head), 5);
  for (const char *p = quote; n > 0 && *p; p++)
    if ((p == quote || !g_ascii_isalnum (p[-1])) && g_ascii_strncasecmp (p, head, n) == 0)
      return TRUE;
  return FALSE;
}

gboolean
catchup_summary_item_reads_inline (const CatchupSummaryItem *item)
{
  return item->ref && item->speaker && item->text && g_utf8_strlen (item->text, -1) <= INLINE_CHARS &&
         !strpbrk (item->text, "()[") && shows_name (item->text, item->ref);
}

guint
catchup_summary_items_rendered (GPtrArray *items)
{
  guint n = 0;
  for (guint i = 0; i < items->len; i++)
    n += !catchup_summary_item_reads_inline (items->pdata[i]);
  return n;
}

char *
catchup_summary_line_text (const CatchupSummaryLine *line, GArray **inlined)
{
  g_autoptr (GString) text = g_string_new (line->text ? line->text : "");
  guint n = line->context ? line->context->len : 0;
  g_autoptr (GArray) flags = g_array_sized_new (FALSE, TRUE, sizeof (gboolean), n);
  g_autoptr (GArray) ends = g_array_sized_new (FALSE, TRUE, sizeof (gssize), n);

  g_array_set_size (flags, n);
  g_array_set_size (ends, n);
  for (guint i = 0; i < n; i++) {
    const CatchupSummaryItem *item = line->context->pdata[i];
    gboolean fits = catchup_summary_item_reads_inline (item);
    gssize end = fits ? end_of_ref (line->text ? line->text : "", item->ref) : -1;
    /* after the possessive: "Aragorn's story (…)" would split it, "Aragorn's (…) story" does not */
    if (end >= 0 && (g_str_has_prefix (line->text + end, "'s") || g_str_has_prefix (line->text + end, "’s")))
      end += g_str_has_prefix (line->text + end, "'s") ? 2 : strlen ("’s");
    g_array_index (ends, gssize, i) = end;
  }
  /* from the last place in the line to the first, so that the places before stay where they were */
  for (;;) {
    gint next = -1;
    for (guint i = 0; i < n; i++)
      if (!g_array_index (flags, gboolean, i) && g_array_index (ends, gssize, i) >= 0 &&
          (next < 0 || g_array_index (ends, gssize, i) > g_array_index (ends, gssize, next)))
        next = (gint) i;
    if (next < 0)
      break;
    const CatchupSummaryItem *item = line->context->pdata[next];
    /* an excerpt's leading "…" says it starts inside the message: the quote marks say it is a quote */
    const char *quote = g_str_has_prefix (item->text, "…") ? item->text + strlen ("…") : item->text;
    /* Translators: put into a summary line after the expression it explains: " (speaker: “earlier message”)" */
    g_autofree char *insert = g_strdup_printf (_(" (%s: “%s”)"), item->speaker, quote);
    g_string_insert (text, g_array_index (ends, gssize, next), insert);
    g_array_index (flags, gboolean, next) = TRUE;
    /* one explanation a place */
    for (guint i = 0; i < n; i++)
      if (g_array_index (ends, gssize, i) == g_array_index (ends, gssize, next))
        g_array_index (ends, gssize, i) = -1;
  }
  if (line->asked) {
    /* Translators: the question a summary line answers, put into the line after it: " (maria asked: “How often
     * do you train?”)" */
    g_string_append_printf (text, _(" (%s asked: “%s”)"), line->asked->speaker ? line->asked->speaker : "?",
                            line->asked->text ? line->asked->text : "");
  }
  if (inlined)
    *inlined = g_steal_pointer (&flags);
  return g_string_free (g_steal_pointer (&text), FALSE);
}
