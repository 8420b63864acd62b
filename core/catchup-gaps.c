#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-gaps.h"
#include "catchup-message.h"
#include "catchup-text.h"

/*
 * The embedded gap detector. An utterance is a gap when it is summary-worthy and leans on something the
 * window does not supply. Cues are English function words, which is where reference lives: pronouns,
 * demonstratives, definite descriptions whose head the window has not introduced, and markers such as
 * "again", "as agreed", "the usual". The query it builds names the utterance, the unresolved expression
 * and anchors from the window; it never guesses the answer.
 */

typedef struct {
  const char *cue;
  CatchupWorth worth;
} WorthCue;

static const WorthCue worth_cues[] = {
  { "decided", CATCHUP_WORTH_DECISION }, { "agreed", CATCHUP_WORTH_DECISION },
  { "we'll go with", CATCHUP_WORTH_DECISION }, { "going with", CATCHUP_WORTH_DECISION },
  { "went with", CATCHUP_WORTH_DECISION }, { "let's", CATCHUP_WORTH_DECISION }, { "lets", CATCHUP_WORTH_DECISION },
  { "approved", CATCHUP_WORTH_DECISION }, { "final", CATCHUP_WORTH_DECISION }, { "instead", CATCHUP_WORTH_DECISION },
  { "plan", CATCHUP_WORTH_PLAN }, { "will", CATCHUP_WORTH_PLAN }, { "i'll", CATCHUP_WORTH_PLAN },
  { "going to", CATCHUP_WORTH_PLAN }, { "gonna", CATCHUP_WORTH_PLAN }, { "tomorrow", CATCHUP_WORTH_PLAN },
  { "next week", CATCHUP_WORTH_PLAN }, { "schedule", CATCHUP_WORTH_PLAN }, { "deadline", CATCHUP_WORTH_PLAN },
  { "please", CATCHUP_WORTH_REQUEST }, { "can you", CATCHUP_WORTH_REQUEST }, { "could you", CATCHUP_WORTH_REQUEST },
  { "can someone", CATCHUP_WORTH_REQUEST }, { "need", CATCHUP_WORTH_REQUEST }, { "review", CATCHUP_WORTH_REQUEST },
  { "merged", CATCHUP_WORTH_ACTION }, { "pushed", CATCHUP_WORTH_ACTION }, { "fixed", CATCHUP_WORTH_ACTION },
  { "reverted", CATCHUP_WORTH_ACTION }, { "tagged", CATCHUP_WORTH_ACTION }, { "released", CATCHUP_WORTH_ACTION },
  { "sent", CATCHUP_WORTH_ACTION }, { "opened", CATCHUP_WORTH_ACTION }, { "filed", CATCHUP_WORTH_ACTION },
  { "done", CATCHUP_WORTH_STATUS }, { "works", CATCHUP_WORTH_STATUS }, { "broken", CATCHUP_WORTH_STATUS },
  { "fails", CATCHUP_WORTH_STATUS }, { "failing", CATCHUP_WORTH_STATUS }, { "passing", CATCHUP_WORTH_STATUS },
  { "green", CATCHUP_WORTH_STATUS }, { "blocked", CATCHUP_WORTH_STATUS }, { "still", CATCHUP_WORTH_STATUS },
  { "finished", CATCHUP_WORTH_STATUS }, { "ready", CATCHUP_WORTH_STATUS }, { "now", CATCHUP_WORTH_STATUS },
  { "got", CATCHUP_WORTH_NEWS }, { "just", CATCHUP_WORTH_NEWS }, { "news", CATCHUP_WORTH_NEWS },
  { "guess what", CATCHUP_WORTH_NEWS }, { "finally", CATCHUP_WORTH_NEWS }, { "announce", CATCHUP_WORTH_NEWS },
  { "?", CATCHUP_WORTH_QUESTION },
};

/* Expressions whose referent lies outside the utterance. */
static const struct {
  const char *cue;
  CatchupGapType type;
} gap_cues[] = {
  { "again", CATCHUP_GAP_RELATIONAL }, { "as agreed", CATCHUP_GAP_RELATIONAL },
  { "as discussed", CATCHUP_GAP_RELATIONAL }, { "as planned", CATCHUP_GAP_RELATIONAL },
  { "like last time", CATCHUP_GAP_RELATIONAL }, { "instead", CATCHUP_GAP_RELATIONAL },
  { "anymore", CATCHUP_GAP_RELATIONAL }, { "back to", CATCHUP_GAP_RELATIONAL },
  { "because of", CATCHUP_GAP_RELATIONAL }, { "so we", CATCHUP_GAP_RELATIONAL },
  { "still", CATCHUP_GAP_ATTRIBUTE }, { "the usual", CATCHUP_GAP_ATTRIBUTE }, { "the new", CATCHUP_GAP_ATTRIBUTE },
  { "the old", CATCHUP_GAP_ATTRIBUTE }, { "the same", CATCHUP_GAP_REFERENTIAL },
  { "the other", CATCHUP_GAP_REFERENTIAL }, { "that one", CATCHUP_GAP_REFERENTIAL },
};

static const char *const pronouns[] = {
  "it", "that", "this", "those", "these", "they", "them", "their", "he", "she", "him", "her", "there", "its",
};

static const char *const demonstratives[] = {
  "that", "this", "those", "these", "the", "my", "your", "his", "her", "their", "our",
};

CatchupGap *
catchup_gap_new (void)
{
  return g_new0 (CatchupGap, 1);
}

CatchupGap *
catchup_gap_copy (const CatchupGap *gap)
{
  CatchupGap *copy = g_memdup2 (gap, sizeof *gap);

  copy->utterance_id = g_strdup (gap->utterance_id);
  copy->expression = g_strdup (gap->expression);
  copy->reason = g_strdup (gap->reason);
  copy->evidence = g_strdup (gap->evidence);
  copy->anchors = g_strdup (gap->anchors);
  copy->query = g_strdup (gap->query);
  return copy;
}

void
catchup_gap_free (CatchupGap *gap)
{
  if (gap == NULL)
    return;
  g_free (gap->utterance_id);
  g_free (gap->expression);
  g_free (gap->reason);
  g_free (gap->evidence);
  g_free (gap->anchors);
  g_free (gap->query);
  g_free (gap);
}

static const char *const type_names[] = { "referential", "attribute", "relational" };

const char *
catchup_gap_type_to_string (CatchupGapType type)
{
  return type < G_N_ELEMENTS (type_names) ? type_names[type] : "referential";
}

gboolean
catchup_gap_type_from_string (const char *s, CatchupGapType *out)
{
  for (guint i = 0; s && i < G_N_ELEMENTS (type_names); i++)
    if (g_ascii_strcasecmp (s, type_names[i]) == 0)
      {
        *out = i;
        return TRUE;
      }
  return FALSE;
}

const char *
catchup_worth_to_string (CatchupWorth worth)
{
  static const char *const names[] = { "decision", "plan", "request", "action", "status", "news", "question",
                                       "other" };

  return worth < G_N_ELEMENTS (names) ? names[worth] : "other";
}

/* Most chat is ASCII, whose lower case and case folding are one byte each: GLib's Unicode versions cost more
 * than the cue matching that follows. */
static gboolean
is_ascii (const char *text)
{
  for (; *text; text++)
    if ((guchar) *text >= 0x80)
      return FALSE;
  return TRUE;
}

static char *
casefold (const char *text)
{
  return is_ascii (text) ? g_ascii_strdown (text, -1) : g_utf8_casefold (text, -1);
}

/* The regex's tokens of ASCII text, without the regex: runs of [A-Za-z0-9_'] and single marks other than
 * white space (\s: space, \t, \n, \v, \f, \r). */
static void
ascii_words (const char *lower, GPtrArray *out)
{
  for (const char *p = lower; *p;)
    {
      const char *e = p;

      while (g_ascii_isalnum (*e) || *e == '_' || *e == '\'')
        e++;
      if (e == p && !strchr (" \t\n\v\f\r", *p))
        e++;
      if (e > p)
        g_ptr_array_add (out, g_strndup (p, e - p));
      p = e > p ? e : p + 1;
    }
}

/* Lower-cased words and punctuation marks of text, for cue matching (not retrieval): a noun phrase must
 * not run across a comma or a colon. */
static char **
plain_words (const char *text)
{
  static GRegex *re;
  gboolean ascii = is_ascii (text);
  g_autofree char *lower = ascii ? g_ascii_strdown (text, -1) : g_utf8_strdown (text, -1);
  g_autoptr (GMatchInfo) match = NULL;
  g_autoptr (GPtrArray) out = g_ptr_array_new ();

  if (ascii)
    ascii_words (lower, out);
  else
    {
      /* compiled once for the process; GRegex matching is thread-safe */
      if (g_once_init_enter (&re))
        g_once_init_leave (&re, g_regex_new ("[\\w']+|[^\\w\\s]", G_REGEX_OPTIMIZE, 0, NULL));
      g_regex_match (re, lower, 0, &match);
      while (g_match_info_matches (match))
        {
          g_ptr_array_add (out, g_match_info_fetch (match, 0));
          g_match_info_next (match, NULL);
        }
    }
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
}

static gboolean
is_word (const char *w)
{
  return g_unichar_isalnum (g_utf8_get_char (w));
}

/* Worthiness of a text given casefolded and its number of retrieval terms. */
static gboolean
worthy (const char *lower, guint n_terms, CatchupWorth *worth)
{
  /* whole words only: "now" is not in "know", "sent" not in "present" */
  for (guint i = 0; i < G_N_ELEMENTS (worth_cues); i++)
    if (catchup_text_has_folded_phrase (lower, worth_cues[i].cue))
      {
        if (worth)
          *worth = worth_cues[i].worth;
        return n_terms >= 2;
      }
  if (worth)
    *worth = CATCHUP_WORTH_OTHER;
  /* no cue, but enough content to be news of some kind */
  return n_terms >= 6;
}

static gboolean
in_list (const char *w, const char *const *list, guint n)
{
  for (guint i = 0; i < n; i++)
    if (strcmp (w, list[i]) == 0)
      return TRUE;
  return FALSE;
}

/* Modifiers that point back without naming anything: "the same unit", "the other spot". */
static const char *const anaphoric_modifiers[] = { "same", "other", "usual", "last", "next", "new", "old", "first" };

/* A noun phrase after a determiner: anaphoric modifiers, then up to three content words, stopping at a
 * function word. NULL when no content word follows. */
static char *
noun_phrase (char **words, guint i)
{
  g_autoptr (GString) np = g_string_new (words[i]);
  guint n = 0, k = i + 1;

  for (; words[k] && in_list (words[k], anaphoric_modifiers, G_N_ELEMENTS (anaphoric_modifiers)); k++)
    g_string_append (g_string_append_c (np, ' '), words[k]);
  for (; words[k] && n < 3 && is_word (words[k]) && !catchup_text_is_stop_word (words[k]); k++, n++)
    g_string_append (g_string_append_c (np, ' '), words[k]);
  return n ? g_string_free (g_steal_pointer (&np), FALSE) : NULL;
}

/* The first unresolved expression of an utterance, given the terms the window has introduced before it:
 * a determiner or possessive whose noun phrase has a word the window has not used yet, else a pronoun. */
static char *
find_expression (char **words, GHashTable *introduced, CatchupGapType *type)
{
  for (guint i = 0; words[i]; i++)
    if (in_list (words[i], demonstratives, G_N_ELEMENTS (demonstratives)))
      {
        g_autofree char *np = noun_phrase (words, i);
        g_autoptr (GPtrArray) terms = np ? catchup_text_terms (np, TRUE) : NULL;

        for (guint k = 0; terms && k < terms->len; k++)
          if (!g_hash_table_contains (introduced, terms->pdata[k]))
            {
              *type = CATCHUP_GAP_REFERENTIAL;
              return g_steal_pointer (&np);
            }
      }
  for (guint i = 0; words[i]; i++)
    if (in_list (words[i], pronouns, G_N_ELEMENTS (pronouns)))
      {
        *type = CATCHUP_GAP_REFERENTIAL;
        return g_strdup (words[i]);
      }
  return NULL;
}

/* The first gap cue in a casefolded text. */
static char *
find_cue (const char *lower, CatchupGapType *type)
{
  for (guint i = 0; i < G_N_ELEMENTS (gap_cues); i++)
    if (catchup_text_has_folded_phrase (lower, gap_cues[i].cue))
      {
        *type = gap_cues[i].type;
        return g_strdup (gap_cues[i].cue);
      }
  return NULL;
}

/* The turns before the gap-bearing line that lend it anchors. None loses a fifth of the recall on the dev
 * windows; 1 to 4 turns are within noise of each other (0.45-0.50), 3 sits in the middle of that plateau. */
#define ANCHOR_TURNS 3

/* Content terms of the turns just before utterance i (words: every turn's plain_words): the local topic the
 * reference is made in. */
static char *
window_anchors (GPtrArray *words, guint i)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint k = i >= ANCHOR_TURNS ? i - ANCHOR_TURNS : 0; k < i; k++)
    {
      char **turn = words->pdata[k];

      /* words as written, not stemmed terms: the query is stemmed when it is searched, and a stem stemmed
       * again can be another word ("please" -> "pleas" -> "plea", "release" -> "releas" -> "relea") */
      for (guint w = 0; turn[w]; w++)
        if (g_unichar_isalnum (g_utf8_get_char (turn[w])) && !catchup_text_is_stop_word (turn[w]))
          g_string_append (s->len ? g_string_append_c (s, ' ') : s, turn[w]);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static const char *
evidence_for (CatchupGapType type)
{
  switch (type)
    {
    case CATCHUP_GAP_ATTRIBUTE:
      return N_("an earlier statement of the value, state or specification");
    case CATCHUP_GAP_RELATIONAL:
      return N_("the earlier discussion or decision this refers back to");
    default:
      return N_("the earlier mention that introduces the referent");
    }
}

static CatchupGap *
make_gap (GPtrArray *window, GPtrArray *words, guint i, CatchupGapType type, char *expression, CatchupWorth worth)
{
  CatchupMessage *m = window->pdata[i];
  CatchupGap *gap = catchup_gap_new ();

  gap->utterance_id = g_strdup (m->id);
  gap->utterance_index = i;
  gap->type = type;
  gap->worth = worth;
  gap->expression = expression;
  gap->reason = g_strdup_printf (_("\"%s\" is not introduced in the window"), expression);
  gap->evidence = g_strdup (_(evidence_for (type)));
  gap->anchors = window_anchors (words, i);
  /* the utterance itself carries most of the evidence's vocabulary; the expression and the speaker are
   * repeated to weigh them; the anchors come last */
  gap->query = g_strdup_printf ("%s %s %s %s", m->speaker, m->text, expression, gap->anchors);
  gap->weight = 1.0 + (worth != CATCHUP_WORTH_OTHER) + (type == CATCHUP_GAP_REFERENTIAL ? 0.5 : 0);
  return gap;
}

static void
introduce (GHashTable *introduced, GPtrArray *terms)
{
  for (guint i = 0; i < terms->len; i++)
    g_hash_table_add (introduced, g_strdup (terms->pdata[i]));
}

static gint
cmp_gap_weight (gconstpointer a, gconstpointer b)
{
  const CatchupGap *x = *(CatchupGap *const *) a, *y = *(CatchupGap *const *) b;

  if (x->weight != y->weight)
    return x->weight < y->weight ? 1 : -1;
  return (gint) x->utterance_index - (gint) y->utterance_index;
}

static GPtrArray *
detect (GPtrArray *window, guint max_gaps)
{
  g_autoptr (GHashTable) introduced = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GPtrArray) all_words = g_ptr_array_new_full (window->len, (GDestroyNotify) g_strfreev);
  GPtrArray *gaps = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_gap_free);

  /* split once: a gap's anchors are the words of the turns before it */
  for (guint i = 0; i < window->len; i++)
    g_ptr_array_add (all_words, plain_words (((CatchupMessage *) window->pdata[i])->text));
  for (guint i = 0; i < window->len; i++)
    {
      CatchupMessage *m = window->pdata[i];
      char **words = all_words->pdata[i];
      g_autofree char *lower = casefold (m->text);
      g_autoptr (GPtrArray) terms = catchup_text_terms (m->text, TRUE);
      CatchupWorth worth;
      CatchupGapType type = CATCHUP_GAP_REFERENTIAL;
      char *expr;

      if (worthy (lower, terms->len, &worth))
        {
          expr = find_expression (words, introduced, &type);
          /* a cue ("as agreed", "again") says more than a bare pronoun, less than a noun phrase */
          if (expr == NULL || strchr (expr, ' ') == NULL)
            {
              CatchupGapType cue_type;
              char *cue = find_cue (lower, &cue_type);

              if (cue)
                {
                  g_free (expr);
                  expr = cue;
                  type = cue_type;
                }
            }
          if (expr != NULL)
            g_ptr_array_add (gaps, make_gap (window, all_words, i, type, expr, worth));
        }
      introduce (introduced, terms);
    }
  g_ptr_array_sort (gaps, cmp_gap_weight);
  if (max_gaps && gaps->len > max_gaps)
    g_ptr_array_set_size (gaps, max_gaps);
  return gaps;
}

static gboolean
window_is_valid (GPtrArray *window)
{
  for (guint i = 0; i < window->len; i++)
    {
      CatchupMessage *m = window->pdata[i];

      if (!g_utf8_validate (m->text, -1, NULL) || !g_utf8_validate (m->speaker, -1, NULL))
        return FALSE;
    }
  return TRUE;
}

GPtrArray *
catchup_gaps_detect (GPtrArray *window, guint max_gaps)
{
  g_autoptr (GPtrArray) valid = NULL;

  /* The optimised (JIT) regex match skips PCRE's UTF-8 check, and invalid text crashed it: a window that did
   * not come through the store's checks is made valid first. */
  if (window_is_valid (window))
    return detect (window, max_gaps);
  valid = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  for (guint i = 0; i < window->len; i++)
    {
      CatchupMessage *copy = catchup_message_copy (window->pdata[i]);

      g_free (copy->text);
      g_free (copy->speaker);
      copy->text = catchup_text_clean (((CatchupMessage *) window->pdata[i])->text, -1, CATCHUP_TEXT_MULTI_LINE);
      copy->speaker = catchup_text_clean (((CatchupMessage *) window->pdata[i])->speaker, -1, CATCHUP_TEXT_ONE_LINE);
      g_ptr_array_add (valid, copy);
    }
  return detect (valid, max_gaps);
}
