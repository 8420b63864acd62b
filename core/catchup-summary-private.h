#pragma once

/*
 * What the summary's modules share. catchup-summary.c: the structure, the headline and the text; -excerpt.c:
 * the words a line shows; -select.c: salience and the choice of lines; -topics.c: topics and what revises
 * what; -refs.c: checked references.
 */

#include "catchup-summary.h"

G_BEGIN_DECLS

/* ---- catchup-summary.c ---- */

/* Valid UTF-8 on one line: whitespace runs collapsed, control and bidi-override characters dropped. */
char *catchup_summary_sanitize (const char *text);
/* ts in UTC by a strftime format. */
char *catchup_summary_format_time (gint64 ts, const char *format);
/* Days since the epoch, UTC. */
gint64 catchup_summary_utc_day (gint64 ts);
/* An older message's time: its weekday, unless it is a week or more before window_end; then its date. */
char *catchup_summary_format_older (gint64 ts, gint64 window_end);
/* Sorts lines by section, keeping their order within each. */
void catchup_summary_sort_lines (GPtrArray *lines);

/* ---- catchup-summary-excerpt.c ---- */

/* Retrieval terms of text without stop words; never NULL. */
GPtrArray *catchup_summary_terms (const char *text);
/* A copy of a message's text without its photo caption ("[shares a photo: …]", which describes the picture) and
 * what follows it: what the speaker wrote. */
char *catchup_summary_said (const char *text);
/* Words separated by spaces. */
guint catchup_summary_count_words (const char *text);
/* The entry of words (a NULL-terminated list of casefolded words or phrases) that folded opens with as a whole
 * word ("yes, both" opens with "yes", "yesterday" does not), or NULL. */
const char *catchup_summary_opening_word (const char *folded, const char *const *words);
/* Whether casefolded text has phrase right after one of the words of before ("thanks for" + "the offer"). */
gboolean catchup_summary_after_any (const char *folded, const char *phrase, const char *const *before);
/* Whether the character at p of text ends a sentence: . ! ? before a space or the end, but no period after an
 * initial or a short abbreviation ("J.K. Rowling", "Dr. Who"). */
gboolean catchup_summary_ends_sentence (const char *text, const char *p);
GHashTable *catchup_summary_term_set (GPtrArray *terms);
guint catchup_summary_overlap (GPtrArray *terms, GHashTable *set);
/* Sanitised, with the links that end a message cut. */
char *catchup_summary_clean (const char *text);
/* At most max_chars characters of clean text: the sentence that best matches focus (NULL: the first that is not
 * a greeting or a reaction) and as many of the next as fit, cut at a clause boundary, "…" where text was left
 * out. A photo caption only when it is what matches focus. */
char *catchup_summary_excerpt (const char *text, GHashTable *focus, guint max_chars);
/* The terms of the first question a text asks, as a focus for its excerpt (empty when it asks none). */
GHashTable *catchup_summary_question_focus (const char *text);
/* Explains, inside the lines, definite phrases whose thing an earlier window message that no line shows
 * introduced (catchup-summary-refs.c). */
void catchup_summary_explain_in_window (GPtrArray *lines, GArray *cands, guint max_chars);

/* ---- catchup-summary-select.c ---- */

/* One window turn as the builder sees it. */
typedef struct {
  CatchupMessage *msg;     /* borrowed from the window */
  guint index;             /* in the window */
  char *clean;             /* sanitised text, trailing links cut */
  char *folded;            /* clean, casefolded */
  GPtrArray *terms;        /* content terms of clean */
  guint words;
  CatchupWorth worth;
  gboolean question;       /* asks something (a '?' outside a quote) */
  double score;            /* salience; 0: never a line of its own */
  gint answer;             /* the candidate that answers this question or request; -1 */
  gint asked;              /* the question or request this one answers; -1 */
  guint topic;
  gint superseded_by;      /* a later candidate that revises what this one states; -1 */
  GPtrArray *replaces;     /* CatchupMessage (borrowed: window or memory): earlier states this one revises */
  GArray *gaps;            /* guint: indices into mem->gaps about this message */
  GPtrArray *context;      /* CatchupSummaryItem: the checked references of the line (catchup_summary_resolve) */
  gboolean chosen;
  gboolean covered;        /* shown under another line (an answer under its question) */
  gboolean folds;          /* a chosen question shown as its answer's line, the question read in it */
} CatchupCandidate;

/* The section the built-in summary gives a message (its speaker and text). */
CatchupSection catchup_summary_classify (const char *speaker, const char *text);
/* Phrases of a list (NULL-terminated) on word boundaries of casefolded text. */
gboolean catchup_summary_has_any (const char *folded, const char *const *phrases);

/* ---- catchup-summary-topics.c ---- */

/* Groups the candidates into topics (reply structure, shared entities and rare words): sets each one's topic
 * and returns how many topics have a candidate worth a line. */
guint catchup_summary_topics (GArray *cands);
/* Marks what revises what: a later candidate that changes a date, time, number or person of an earlier one
 * on its topic, with a word that says so, supersedes it (superseded_by, replaces); memory turns older than the
 * window count too. */
void catchup_summary_supersede (GArray *cands, CatchupMemory *mem);
/* Topics with a candidate worth a line that got none, and a keyword for each (at most max_terms). */
guint catchup_summary_left_out (GArray *cands, GPtrArray *terms_out, guint max_terms);

/* ---- catchup-summary-refs.c ---- */

/* The checked references of candidate c (the index-th of cands), added to items (CatchupSummaryItem): the one
 * turn of memory that clearly explains what the line leans on (see catchup-summary-refs.c); none when the
 * detector flags nothing in the line, or the evidence is weak or ambiguous. (Definite noun phrases the gap
 * detector had not flagged were looked up by their head noun alone, once: on the dev windows that added wrong
 * references and resolved no gap.) */
typedef struct _CatchupSummaryRefs CatchupSummaryRefs;
CatchupSummaryRefs *catchup_summary_refs_new (CatchupMemory *mem, GArray *cands);
void catchup_summary_refs_free (CatchupSummaryRefs *refs);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupSummaryRefs, catchup_summary_refs_free)
void catchup_summary_resolve (GPtrArray *items, const CatchupCandidate *c, guint index,
                              const CatchupSummaryRefs *refs, guint max_chars);

/* Whether a checked reference reads in its line's text, "(speaker: “quote”)" after its expression, rather than on
 * a "↳" line of its own; the length budget counts only the items that take a line. */
gboolean catchup_summary_item_reads_inline (const CatchupSummaryItem *item);
guint catchup_summary_items_rendered (GPtrArray *items);

G_END_DECLS
