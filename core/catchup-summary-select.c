#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-summary-private.h"
#include "catchup-text.h"

/*
 * The embedded extractive summary. It never writes a word of its own about the chat: every line quotes (trimmed)
 * the message it is about, under that message's speaker, and every resolved reference quotes the memory turn it
 * comes from with that turn's speaker and time. The only words of its own are labels ("agreed:", "latest:").
 */

typedef struct {
  guint max_entries;    /* quoted window messages */
  guint max_rendered;   /* headline, participants, entries and context lines together */
  guint line_chars;     /* of a quoted window message */
  guint context_chars;  /* of a quoted memory turn */
  gboolean show_earlier;
} LengthProfile;

static const LengthProfile profiles[] = {
  [CATCHUP_LENGTH_SHORT] = { 3, 5, 140, 120, FALSE },
  [CATCHUP_LENGTH_NORMAL] = { 8, 12, 200, 160, FALSE },
  [CATCHUP_LENGTH_DETAILED] = { 16, 20, 300, 240, TRUE },
};

/* ---- text hygiene ---- */

#define sanitize catchup_summary_sanitize

static gboolean
is_url_word (const char *w, gsize len)
{
  return (len > 8 && g_ascii_strncasecmp (w, "https://", 8) == 0) ||
         (len > 7 && g_ascii_strncasecmp (w, "http://", 7) == 0);
}

/* Links at the end of a message ("... https://ci.example/run/5012") are noise in a catch-up; links inside a
 * sentence are part of what was said and stay. Works in place on sanitized text. */
static void
strip_trailing_urls (char *text)
{
  for (;;) {
    char *space = strrchr (text, ' ');
    char *word = space ? space + 1 : text;
    if (!is_url_word (word, strlen (word)) || word == text)
      return;
    *space = '\0';
  }
}

/* ---- sentences and excerpts ---- */

typedef struct {
  gsize start, end;  /* byte offsets into the text, end exclusive */
} Span;

static GArray *
split_sentences (const char *text)
{
  GArray *spans = g_array_new (FALSE, FALSE, sizeof (Span));
  gsize start = 0;

  for (const char *p = text; *p; p = g_utf8_next_char (p)) {
    gunichar c = g_utf8_get_char (p);
    const char *next = g_utf8_next_char (p);
    if ((c == '.' || c == '!' || c == '?' || c == 0x2026) && (*next == ' ' || *next == '\0')) {
      Span s = { start, next - text };
      g_array_append_val (spans, s);
      start = *next ? (next + 1) - text : next - text;
    }
  }
  if (text[start] != '\0') {
    Span s = { start, strlen (text) };
    g_array_append_val (spans, s);
  }
  return spans;
}

/* At most max_chars characters of text from byte offset start, cut at a word boundary when there is one
 * (never inside a UTF-8 sequence), with "…" where text was left out. */
static char *
cut_words (const char *text, gsize start, gsize end, guint max_chars, gboolean lead_ellipsis)
{
  const char *from = text + start;
  const char *limit = text + end;
  const char *p = from;
  const char *last_space = NULL;
  guint n = 0;

  while (p < limit && n < max_chars) {
    if (*p == ' ')
      last_space = p;
    p = g_utf8_next_char (p);
    n++;
  }
  gboolean cut = p < limit;
  /* A word boundary is only worth it when it keeps most of the room. */
  if (cut && last_space && (guint) g_utf8_strlen (from, last_space - from) > max_chars / 2)
    p = last_space;
  g_autofree char *body = g_strndup (from, p - from);
  g_strchomp (body);
  /* "touch,…" reads as a typo; the ellipsis alone says that text was left out. */
  for (gsize len = strlen (body); cut && len > 0 && strchr (",;:-", body[len - 1]); len--)
    body[len - 1] = '\0';
  return g_strconcat (lead_ellipsis ? "…" : "", body, cut ? "…" : "", NULL);
}

static guint
overlap (GPtrArray *terms, GHashTable *set)
{
  guint n = 0;
  if (!terms || !set)
    return 0;
  for (guint i = 0; i < terms->len; i++)
    n += g_hash_table_contains (set, terms->pdata[i]);
  return n;
}

static GHashTable *
term_set (GPtrArray *terms)
{
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; terms && i < terms->len; i++)
    g_hash_table_add (set, g_strdup (terms->pdata[i]));
  return set;
}

static GPtrArray *
terms_of (const char *text)
{
  GPtrArray *terms = catchup_text_terms (text ? text : "", TRUE);
  return terms ? terms : g_ptr_array_new_with_free_func (g_free);
}

/* The sentence that best matches focus (or the first one when nothing does), followed by as many of the next
 * sentences as fit in max_chars. */
static char *
excerpt (const char *text, GHashTable *focus, guint max_chars)
{
  g_autoptr (GArray) spans = split_sentences (text);
  guint best = 0;
  guint best_hits = 0;

  if ((guint) g_utf8_strlen (text, -1) <= max_chars)
    return g_strdup (text);
  for (guint i = 0; focus && i < spans->len; i++) {
    Span *s = &g_array_index (spans, Span, i);
    g_autofree char *sentence = g_strndup (text + s->start, s->end - s->start);
    g_autoptr (GPtrArray) terms = terms_of (sentence);
    guint hits = overlap (terms, focus);
    if (hits > best_hits) {
      best_hits = hits;
      best = i;
    }
  }

  Span *first = &g_array_index (spans, Span, best);
  gsize end = first->end;
  for (guint i = best + 1; i < spans->len; i++) {
    Span *s = &g_array_index (spans, Span, i);
    if ((guint) g_utf8_strlen (text + first->start, s->end - first->start) > max_chars)
      break;
    end = s->end;
  }
  /* Whole sentences read best, unless they leave much of the room unused: then cut_words fills it. */
  if ((guint) g_utf8_strlen (text + first->start, end - first->start) * 3 < max_chars * 2 ||
      (guint) g_utf8_strlen (text + first->start, end - first->start) > max_chars)
    end = strlen (text);
  char *out = cut_words (text, first->start, end, max_chars, best > 0);
  /* Sentences left out after the excerpt are marked too. */
  if (end < strlen (text) && !g_str_has_suffix (out, "…")) {
    char *more = g_strconcat (out, " …", NULL);
    g_free (out);
    out = more;
  }
  return out;
}

/* ---- classifying window messages ---- */

typedef struct {
  CatchupWorth worth;
  const char *const *cues;
  double weight;
} CueClass;

static const char *const decision_cues[] = {
  "decided", "decision", "agreed", "we'll go with", "going with", "go with", "we went with", "settled",
  "officially", "official", "final", "vote", "approved", "from now on", "instead of", "let's do that",
  "let's go", "drops", "dropping", "amendment", "no longer", NULL,
};
static const char *const request_cues[] = {
  "please", "pls", "can you", "could you", "would you", "can someone", "can anyone", "need you", "i need",
  "ptal", "take a look", "have a look", "re-ack", "ack when", NULL,
};
static const char *const plan_cues[] = {
  "i'll", "we'll", "i will", "we will", "going to", "gonna", "plan", "tomorrow", "tonight", "next week",
  "by noon", "schedule", "later today", "this week", "will be", NULL,
};
static const char *const action_cues[] = {
  "pushed", "merged", "fixed", "fixing", "opened", "filed", "deleted", "reworked", "landed", "reverted",
  "tagged", "deployed", "uploaded", "posted", "rolled back", "bumped", "submitted", "backported", NULL,
};
static const char *const status_cues[] = {
  "failed", "failing", "fails", "broken", "green", "passes", "passing", "blocked", "done", "builds",
  "is down", "outage", "flaky", "timeout", "crash", "regression", "still", "works", "not yet", "reproduce",
  NULL,
};
static const char *const news_cues[] = {
  "released", "release", "announce", "cve", "security", "advisory", "is out", "new version", "rc1", "rc2",
  NULL,
};

static const CueClass cue_classes[] = {
  { CATCHUP_WORTH_DECISION, decision_cues, 3.0 },
  { CATCHUP_WORTH_REQUEST, request_cues, 2.5 },
  { CATCHUP_WORTH_PLAN, plan_cues, 2.0 },
  { CATCHUP_WORTH_ACTION, action_cues, 2.0 },
  { CATCHUP_WORTH_STATUS, status_cues, 1.8 },
  { CATCHUP_WORTH_NEWS, news_cues, 1.8 },
};

/* Messages that carry nothing a returning reader needs, whatever their length. */
static const char *const social[] = {
  "morning", "good morning", "hi", "hello", "hey", "o/", "\\o/", "night", "good night", "bye", "thanks",
  "thank you", "thx", "ta", "lol", "haha", "nice", "cool", "great", "welcome back", "brb", "np", NULL,
};
/* Short answers: nothing on their own, but the answer to a question or request. */
static const char *const answers[] = {
  "ok", "okay", "k", "+1", "perfect", "exactly", "yes", "no", "yep", "nope", "sure", "ack", "done", "not yet",
  NULL,
};

/* Phrase match on word boundaries of casefolded text ("ta" must not match "data"). */
static gboolean
has_phrase (const char *hay, const char *phrase)
{
  gsize len = strlen (phrase);
  for (const char *p = strstr (hay, phrase); p; p = strstr (p + 1, phrase)) {
    gboolean left = p == hay || !g_ascii_isalnum (p[-1]);
    gboolean right = !g_ascii_isalnum (p[len]) || !g_ascii_isalnum (phrase[len - 1]);
    if (left && right)
      return TRUE;
  }
  return FALSE;
}

/* Casefolded text without the leading and trailing punctuation of a short reply ("ok!", "thanks :)"). */
static char *
bare_words (const char *folded)
{
  g_autofree char *copy = g_strdup (folded);
  char *s = g_strstrip (copy);
  gsize len = strlen (s);
  while (len > 0 && strchr (".!,:;)( ", s[len - 1]))
    s[--len] = '\0';
  return g_strdup (s);
}

/* A short message that is only one of phrases ("ok!", "thanks :)", "morning all"). */
static gboolean
is_only (const char *folded, guint words, const char *const *phrases)
{
  g_autofree char *bare = bare_words (folded);
  for (guint i = 0; phrases[i]; i++)
    if (g_str_has_prefix (bare, phrases[i]) && !g_ascii_isalnum (bare[strlen (phrases[i])]) &&
        strlen (bare) <= strlen (phrases[i]) + 8 && words <= 3)
      return TRUE;
  return FALSE;
}

static gboolean
is_chit_chat (const char *folded, guint words)
{
  return words == 0 || is_only (folded, words, social) || is_only (folded, words, answers);
}

/* Bots speak for CI, trackers and releases: only failures and releases are news to a returning reader. */
static gboolean
looks_like_bot (const char *speaker, const char *folded)
{
  g_autofree char *name = g_utf8_casefold (speaker ? speaker : "", -1);
  return g_str_has_suffix (name, "bot") || g_str_has_suffix (name, "[bot]") || folded[0] == '[';
}

static gboolean
bot_news (const char *folded)
{
  static const char *const cues[] = { "fail", "error", "broken", "released", "tagged", "cve", NULL };
  for (guint i = 0; cues[i]; i++)
    if (strstr (folded, cues[i]))
      return TRUE;
  return FALSE;
}

static guint
count_words (const char *text)
{
  guint n = 0;
  gboolean in_word = FALSE;
  for (const char *p = text; *p; p++) {
    gboolean space = *p == ' ';
    n += !space && !in_word;
    in_word = !space;
  }
  return n;
}

/* Summary-worthiness of one message and how much it weighs; 0 for chit-chat and bot noise. */
static double
classify (const char *speaker, const char *clean, CatchupWorth *worth)
{
  g_autofree char *folded = g_utf8_casefold (clean, -1);
  guint words = count_words (clean);
  double score = 0;
  guint hits = 0;

  *worth = CATCHUP_WORTH_OTHER;
  if (is_chit_chat (folded, words))
    return 0;
  if (looks_like_bot (speaker, folded)) {
    *worth = CATCHUP_WORTH_STATUS;
    return bot_news (folded) ? 2.6 : 0;
  }
  for (guint c = 0; c < G_N_ELEMENTS (cue_classes); c++)
    for (guint i = 0; cue_classes[c].cues[i]; i++) {
      if (!has_phrase (folded, cue_classes[c].cues[i]))
        continue;
      if (hits++ == 0) {
        *worth = cue_classes[c].worth;
        score = cue_classes[c].weight;
      }
      break;
    }
  if (hits == 0 && strchr (folded, '?') && words >= 3) {
    *worth = CATCHUP_WORTH_QUESTION;
    score = 1.5;
  }
  if (score == 0 && words >= 12)
    score = 0.6;  /* a substantial message without cue words may still be the news */
  if (score == 0)
    return 0;
  return score + 0.4 * MIN (hits, 3) + MIN (words, 40) / 40.0;
}

/* ---- candidates ---- */

typedef struct {
  CatchupMessage *msg;  /* borrowed from the window */
  guint index;
  char *clean;
  CatchupWorth worth;
  double score;
  GArray *gaps;         /* guint: indices into mem->gaps about this message */
  GPtrArray *terms;
  gboolean chosen;
  CatchupSummaryLine *line;  /* the chosen line, with the items it has room for */
} Candidate;

static void
candidate_clear (Candidate *c)
{
  g_free (c->clean);
  g_clear_pointer (&c->gaps, g_array_unref);
  g_clear_pointer (&c->terms, g_ptr_array_unref);
  g_clear_pointer (&c->line, catchup_summary_line_free);
}

static gboolean
is_turn (const CatchupMessage *msg)
{
  return msg && !(msg->flags & CATCHUP_MESSAGE_EVENT);
}

static const char *const assent_cues[] = {
  "ok", "okay", "agreed", "agree", "+1", "fine by me", "sounds good", "lgtm", "ack", "yes", "yep", "sure",
  "👍", "let's do that", "makes sense", "works for me", "go for it", "sgtm", "\\o/", "deal", NULL,
};

static gboolean
is_assent (const char *text)
{
  g_autofree char *clean = sanitize (text);
  g_autofree char *folded = g_utf8_casefold (clean, -1);
  for (guint i = 0; assent_cues[i]; i++)
    if (g_str_has_prefix (folded, assent_cues[i]) &&
        (folded[strlen (assent_cues[i])] == '\0' || !g_ascii_isalnum (folded[strlen (assent_cues[i])])))
      return TRUE;
  return FALSE;
}

/* Replies are the few messages right after one, by other people, before the conversation moves on. */
#define REPLY_SPAN 5
#define REPLY_SECONDS (30 * 60)

static gboolean
is_reply_to (GPtrArray *window, guint i, guint j)
{
  CatchupMessage *m = window->pdata[i];
  CatchupMessage *r = window->pdata[j];
  return is_turn (r) && j - i <= REPLY_SPAN && r->ts - m->ts <= REPLY_SECONDS &&
         g_strcmp0 (r->speaker, m->speaker) != 0;
}

/* Distinct other speakers replying right after message i (assenting only, when assent_only). */
static GPtrArray *
repliers (GPtrArray *window, guint i, gboolean assent_only)
{
  GPtrArray *out = g_ptr_array_new ();
  for (guint j = i + 1; j < window->len && is_reply_to (window, i, j); j++) {
    CatchupMessage *r = window->pdata[j];
    gboolean seen = FALSE;
    for (guint k = 0; k < out->len && !seen; k++)
      seen = g_strcmp0 (((CatchupMessage *) out->pdata[k])->speaker, r->speaker) == 0;
    if (!seen && (!assent_only || is_assent (r->text)))
      g_ptr_array_add (out, r);
  }
  return out;
}

static GArray *
gaps_of_utterance (CatchupMemory *mem, const CatchupMessage *msg)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint g = 0; mem && mem->gaps && g < mem->gaps->len; g++) {
    CatchupGap *gap = mem->gaps->pdata[g];
    if (gap && g_strcmp0 (gap->utterance_id, msg->id) == 0)
      g_array_append_val (out, g);
  }
  return out;
}

static gboolean
opens_off_topic (const char *clean)
{
  g_autofree char *folded = g_utf8_casefold (clean, -1);
  return g_str_has_prefix (folded, "off-topic") || g_str_has_prefix (folded, "offtopic") ||
         g_str_has_prefix (folded, "ot:") || g_str_has_prefix (folded, "[ot]");
}

/* "done", "not yet" right after someone's question or request: it belongs to that line, not a line of its own. */
static gboolean
is_short_answer (GArray *cands, GPtrArray *window, guint index, const char *clean)
{
  if (count_words (clean) > 3 || cands->len == 0)
    return FALSE;
  const Candidate *prev = &g_array_index (cands, Candidate, cands->len - 1);
  return (prev->worth == CATCHUP_WORTH_QUESTION || prev->worth == CATCHUP_WORTH_REQUEST) && prev->score > 0 &&
         is_reply_to (window, prev->index, index);
}

/* An off-topic aside runs until the room goes quiet for a while. */
#define ASIDE_PAUSE (15 * 60)

static GArray *
make_candidates (GPtrArray *window, CatchupMemory *mem, const LengthProfile *profile)
{
  GArray *cands = g_array_new (FALSE, TRUE, sizeof (Candidate));
  gboolean aside = FALSE;
  gint64 prev_ts = 0;

  g_array_set_clear_func (cands, (GDestroyNotify) candidate_clear);
  for (guint i = 0; window && i < window->len; i++) {
    CatchupMessage *msg = window->pdata[i];
    if (!is_turn (msg))
      continue;
    Candidate c = { .msg = msg, .index = i };
    c.clean = sanitize (msg->text);
    strip_trailing_urls (c.clean);
    aside = opens_off_topic (c.clean) || (aside && msg->ts - prev_ts <= ASIDE_PAUSE);
    prev_ts = msg->ts;
    c.score = aside || is_short_answer (cands, window, i, c.clean) ? 0 : classify (msg->speaker, c.clean, &c.worth);
    c.gaps = gaps_of_utterance (mem, msg);
    if (c.gaps->len > 0)
      c.score += 5;  /* a line whose reference the summary can spell out is what the memory is for */
    if (c.score > 0) {
      g_autoptr (GPtrArray) reacted = repliers (window, i, FALSE);
      c.score += 0.5 * MIN (reacted->len, 3);
    }
    g_autofree char *head = excerpt (c.clean, NULL, profile->line_chars);
    c.terms = terms_of (head);
    g_array_append_val (cands, c);
  }
  return cands;
}

/* ---- choosing lines ---- */

static void
trim_items (GPtrArray *items, guint *room)
{
  if (items->len > *room)
    g_ptr_array_set_size (items, *room);
  *room -= items->len;
}

/* Drops the items a line has no room for (references first kept, then the answers); returns the rendered lines
 * they take. */
static guint
fit_items (CatchupSummaryLine *line, guint room)
{
  guint start = room;
  trim_items (line->context, &room);
  trim_items (line->reply, &room);
  trim_items (line->supersedes, &room);
  if (line->agreed->len > 0 && room == 0)
    g_ptr_array_set_size (line->agreed, 0);
  room -= line->agreed->len > 0;
  if (line->no_reply && room == 0)
    line->no_reply = FALSE;
  room -= line->no_reply;
  return start - room;
}

static gint
by_score_desc (gconstpointer a, gconstpointer b)
{
  const Candidate *x = *(Candidate *const *) a;
  const Candidate *y = *(Candidate *const *) b;
  if (x->score != y->score)
    return x->score < y->score ? 1 : -1;
  return x->index < y->index ? -1 : (x->index > y->index);
}

/* Mostly the same words as lines already chosen: a bot echo of a human line, a repeated status. */
static gboolean
is_redundant (const Candidate *c, GHashTable *covered)
{
  if (c->gaps->len > 0 || c->terms->len == 0)
    return FALSE;
  return overlap (c->terms, covered) * 10 >= c->terms->len * 9;
}

typedef CatchupSummaryLine *(*LineFunc) (const Candidate *c, gpointer data);

/* Marks the chosen candidates, best first, each with the context lines that still fit: the lines that matter
 * most get their references resolved, whatever their place in the window. */
static void
choose (GArray *cands, const LengthProfile *profile, guint fixed_lines, LineFunc line_of, gpointer data)
{
  g_autoptr (GPtrArray) order = g_ptr_array_new ();
  g_autoptr (GHashTable) covered = g_hash_table_new (g_str_hash, g_str_equal);
  guint entries = 0;
  guint rendered = fixed_lines;

  for (guint i = 0; i < cands->len; i++)
    if (g_array_index (cands, Candidate, i).score > 0)
      g_ptr_array_add (order, &g_array_index (cands, Candidate, i));
  g_ptr_array_sort (order, by_score_desc);

  for (guint i = 0; i < order->len && entries < profile->max_entries; i++) {
    Candidate *c = order->pdata[i];
    if (is_redundant (c, covered))
      continue;
    if (rendered + 1 > profile->max_rendered)
      break;
    c->chosen = TRUE;
    c->line = line_of (c, data);
    entries++;
    rendered++;
    rendered += fit_items (c->line, profile->max_rendered - rendered);
    for (guint t = 0; t < c->terms->len; t++)
      g_hash_table_add (covered, c->terms->pdata[t]);
  }
}

/* ---- resolving references from memory ---- */

typedef struct {
  CatchupMemory *mem;
  const LengthProfile *profile;
  gint64 window_end;
  GArray *cands;
} Resolver;

/* The candidate made from window message index, if that message is a turn. */
static const Candidate *
candidate_at (GArray *cands, guint index)
{
  for (guint i = 0; i < cands->len && g_array_index (cands, Candidate, i).index <= index; i++)
    if (g_array_index (cands, Candidate, i).index == index)
      return &g_array_index (cands, Candidate, i);
  return NULL;
}

/* Memory turns kept for gap g (specific); all turns when the memory was built without gap bookkeeping. */
static GPtrArray *
turns_for_gap (CatchupMemory *mem, guint g, gboolean *specific)
{
  GPtrArray *out = g_ptr_array_new ();
  for (guint i = 0; mem->turns && i < mem->turns->len; i++) {
    CatchupMessage *t = mem->turns->pdata[i];
    gpointer v = NULL;
    if (mem->gap_of && t->id && g_hash_table_lookup_extended (mem->gap_of, t->id, NULL, &v) &&
        GPOINTER_TO_INT (v) == (gint) g + 1)
      g_ptr_array_add (out, t);
  }
  *specific = out->len > 0;
  if (out->len == 0)
    for (guint i = 0; mem->turns && i < mem->turns->len; i++)
      g_ptr_array_add (out, mem->turns->pdata[i]);
  return out;
}

static GHashTable *
gap_focus (const CatchupGap *gap)
{
  g_autofree char *all = g_strjoin (" ", gap->expression ? gap->expression : "", gap->query ? gap->query : "",
                                    gap->anchors ? gap->anchors : "", NULL);
  g_autoptr (GPtrArray) terms = terms_of (all);
  return term_set (terms);
}

static double
turn_relevance (const CatchupMessage *t, GHashTable *focus)
{
  g_autoptr (GPtrArray) terms = terms_of (t->text);
  if (terms->len == 0)
    return 0;
  return overlap (terms, focus) / sqrt ((double) terms->len);
}

/* Same topic: shares at least two content terms. */
static gboolean
same_topic (const CatchupMessage *a, const CatchupMessage *b)
{
  g_autoptr (GPtrArray) ta = terms_of (a->text);
  g_autoptr (GPtrArray) tb = terms_of (b->text);
  g_autoptr (GHashTable) set = term_set (ta);
  return overlap (tb, set) >= 2;
}

/* Words of an expression that name something: "the same unit" names a unit, "same" points back. */
static GPtrArray *
naming_terms (const char *expression)
{
  static const char *const pointers[] = { "usual", "new", "old", "last", "next", "first" };
  GPtrArray *terms = terms_of (expression);

  for (guint i = terms->len; i-- > 0;)
    for (guint k = 0; k < G_N_ELEMENTS (pointers); k++)
      if (g_str_has_prefix (terms->pdata[i], pointers[k]) && strlen (terms->pdata[i]) <= strlen (pointers[k]) + 1) {
        g_ptr_array_remove_index (terms, i);
        break;
      }
  return terms;
}

/*
 * Whether a memory turn may be shown as what an expression refers to. An extractive summary cannot check
 * meaning, and a wrong "→" is worse than none: the turn must name one of the expression's words (also written
 * apart, "fallback" / "fall back"), or, for a bare pronoun or cue, share two words with the line itself.
 */
static gboolean
can_resolve (const CatchupMessage *t, GPtrArray *expr_terms, GHashTable *line_terms)
{
  g_autoptr (GPtrArray) terms = terms_of (t->text);

  if (expr_terms->len == 0)
    return overlap (terms, line_terms) >= 2;
  for (guint e = 0; e < expr_terms->len; e++)
    for (guint i = 0; i < terms->len; i++) {
      g_autofree char *joined = i + 1 < terms->len ? g_strconcat (terms->pdata[i], terms->pdata[i + 1], NULL) : NULL;

      if (g_str_equal (terms->pdata[i], expr_terms->pdata[e]) || g_strcmp0 (joined, expr_terms->pdata[e]) == 0)
        return TRUE;
    }
  return FALSE;
}

/* The turn that resolves the gap, and an earlier version of the same fact when a later turn revised it. */
static CatchupMessage *
pick_turn (GPtrArray *turns, GHashTable *focus, CatchupMessage **earlier)
{
  CatchupMessage *best = NULL;
  double best_score = -1;

  *earlier = NULL;
  for (guint i = 0; i < turns->len; i++) {
    double s = turn_relevance (turns->pdata[i], focus);
    if (s > best_score) {
      best_score = s;
      best = turns->pdata[i];
    }
  }
  if (!best)
    return NULL;

  /* turns is chronological: the last relevant turn on the best one's topic is the current state. */
  CatchupMessage *latest = best;
  for (guint i = 0; i < turns->len; i++) {
    CatchupMessage *t = turns->pdata[i];
    if (t != best && t->ts > latest->ts && turn_relevance (t, focus) >= best_score / 2 && same_topic (t, best))
      latest = t;
  }
  if (latest != best) {
    *earlier = best;
    return latest;
  }
  for (guint i = 0; i < turns->len; i++) {
    CatchupMessage *t = turns->pdata[i];
    if (t->ts < best->ts && turn_relevance (t, focus) >= best_score / 2 && same_topic (t, best))
      *earlier = t;
  }
  return best;
}

/* The excerpt of a cited turn that shows the words around what it is cited for. */
static char *
quote_text (const CatchupMessage *t, GHashTable *focus, guint max_chars)
{
  g_autofree char *clean = sanitize (t->text);
  strip_trailing_urls (clean);
  return excerpt (clean, focus, max_chars);
}

static CatchupSummaryItem *
resolve_gap (const Resolver *r, const CatchupGap *gap, guint g, GHashTable *line_terms)
{
  gboolean specific = FALSE;
  g_autoptr (GPtrArray) kept = turns_for_gap (r->mem, g, &specific);
  g_autoptr (GPtrArray) turns = g_ptr_array_new ();
  g_autoptr (GPtrArray) expr_terms = naming_terms (gap->expression);
  g_autoptr (GHashTable) focus = gap_focus (gap);
  CatchupMessage *earlier = NULL;
  CatchupMessage *turn;

  /* turns kept for other gaps are no evidence for this one */
  for (guint i = 0; specific && i < kept->len; i++)
    if (can_resolve (kept->pdata[i], expr_terms, line_terms))
      g_ptr_array_add (turns, kept->pdata[i]);
  turn = pick_turn (turns, focus, &earlier);

  if (!turn)
    return NULL;
  g_autofree char *expr = sanitize (gap->expression && *gap->expression ? gap->expression : "…");
  g_autofree char *quote = quote_text (turn, focus, r->profile->context_chars);
  return catchup_summary_item_new (expr, turn->id, turn->speaker, turn->ts, quote);
}

/* A decision, or a plan for the group rather than the speaker's own to-do. */
static gboolean
is_group_matter (const Candidate *c)
{
  g_autofree char *folded = NULL;
  if (c->worth == CATCHUP_WORTH_DECISION)
    return TRUE;
  if (c->worth != CATCHUP_WORTH_PLAN)
    return FALSE;
  folded = g_utf8_casefold (c->clean, -1);
  return has_phrase (folded, "we") || has_phrase (folded, "let's") || has_phrase (folded, "we'll");
}

static void
add_gap_context (CatchupSummaryLine *line, const Resolver *r, const Candidate *c)
{
  for (guint i = 0; r->mem && i < c->gaps->len; i++) {
    guint g = g_array_index (c->gaps, guint, i);
    g_autoptr (GHashTable) line_terms = term_set (c->terms);
    CatchupSummaryItem *item = resolve_gap (r, r->mem->gaps->pdata[g], g, line_terms);
    if (item)
      g_ptr_array_add (line->context, item);
  }
}

/* Only others' assent turns one person's proposal into something agreed. */
static void
add_agreement (CatchupSummaryLine *line, const Candidate *c, GPtrArray *window)
{
  if (!is_group_matter (c))
    return;
  g_autoptr (GPtrArray) yes = repliers (window, c->index, TRUE);
  for (guint i = 0; i < yes->len; i++) {
    CatchupMessage *m = yes->pdata[i];
    g_autofree char *text = sanitize (m->text);
    g_ptr_array_add (line->agreed, catchup_summary_item_new (NULL, m->id, m->speaker, m->ts, text));
  }
}

static gboolean
is_social (const char *clean)
{
  g_autofree char *folded = g_utf8_casefold (clean, -1);
  return is_only (folded, count_words (clean), social);
}

/* A question or request with its answer. A substantial answer is a line of its own; a short one ("not yet",
 * "ok") is quoted here, with its speaker, so that nobody's "yes" floats free. */
static void
add_reply (CatchupSummaryLine *line, const Resolver *r, const Candidate *c, GPtrArray *window)
{
  gboolean answered = FALSE;

  if (c->worth != CATCHUP_WORTH_QUESTION && c->worth != CATCHUP_WORTH_REQUEST)
    return;
  for (guint j = c->index + 1; j < window->len && !answered; j++) {
    CatchupMessage *m = window->pdata[j];
    answered = is_turn (m) && g_strcmp0 (m->speaker, c->msg->speaker) != 0;
    if (!answered || !is_reply_to (window, c->index, j))
      continue;
    const Candidate *reply = candidate_at (r->cands, j);
    if (!reply || reply->score > 0 || is_social (reply->clean))
      return;
    g_autofree char *text = excerpt (reply->clean, NULL, r->profile->context_chars);
    g_ptr_array_add (line->reply, catchup_summary_item_new (NULL, m->id, m->speaker, m->ts, text));
  }
  line->no_reply = !answered;
}

static CatchupSection
section_of (CatchupWorth worth)
{
  switch (worth) {
  case CATCHUP_WORTH_DECISION:
    return CATCHUP_SECTION_DECISIONS;
  case CATCHUP_WORTH_QUESTION:
  case CATCHUP_WORTH_REQUEST:
    return CATCHUP_SECTION_ASKED;
  case CATCHUP_WORTH_PLAN:
  case CATCHUP_WORTH_ACTION:
    return CATCHUP_SECTION_PLANS;
  default:
    return CATCHUP_SECTION_NEWS;
  }
}

CatchupSection
catchup_summary_classify (const char *speaker, const char *text)
{
  g_autofree char *clean = sanitize (text);
  CatchupWorth worth;
  classify (speaker, clean, &worth);
  return section_of (worth);
}

typedef struct {
  const Resolver *resolver;
  GPtrArray *window;
} LineData;

static CatchupSummaryLine *
make_line (const Candidate *c, gpointer data)
{
  LineData *d = data;
  CatchupSummaryLine *line = catchup_summary_line_new (section_of (c->worth), c->msg->id, c->msg->speaker,
                                                       c->msg->ts, NULL);
  add_gap_context (line, d->resolver, c);
  add_agreement (line, c, d->window);
  add_reply (line, d->resolver, c, d->window);
  return line;
}

/* ---- the summary ---- */

/* The chosen line's text: its excerpt keeps a gap-bearing line's unresolved expression in view, or its
 * reference line dangles. */
static CatchupSummaryLine *
entry_line (Candidate *c, const Resolver *r)
{
  g_autoptr (GHashTable) focus = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; r->mem && i < c->gaps->len; i++) {
    CatchupGap *gap = r->mem->gaps->pdata[g_array_index (c->gaps, guint, i)];
    g_autoptr (GPtrArray) terms = terms_of (gap->expression);
    for (guint t = 0; t < terms->len; t++)
      g_hash_table_add (focus, g_strdup (terms->pdata[t]));
  }
  CatchupSummaryLine *line = g_steal_pointer (&c->line);
  g_free (line->text);
  line->text = excerpt (c->clean, g_hash_table_size (focus) ? focus : NULL, r->profile->line_chars);
  return line;
}

void
catchup_summary_options_init (CatchupSummaryOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->length = CATCHUP_LENGTH_NORMAL;
}

CatchupSummary *
catchup_summary_extractive (GPtrArray *window, CatchupMemory *mem, const CatchupSummaryOptions *opts)
{
  CatchupSummaryOptions defaults;
  if (!opts) {
    catchup_summary_options_init (&defaults);
    opts = &defaults;
  }
  CatchupLength length = opts->length;
  const LengthProfile *profile = &profiles[length <= CATCHUP_LENGTH_DETAILED ? length : CATCHUP_LENGTH_NORMAL];
  CatchupSummary *summary = catchup_summary_new (window);
  g_autoptr (GArray) cands = make_candidates (window, mem, profile);
  Resolver resolver = { mem, profile, summary->head.last_ts, cands };
  LineData data = { &resolver, window };

  choose (cands, profile, 1, make_line, &data);
  for (guint i = 0; i < cands->len; i++) {
    Candidate *c = &g_array_index (cands, Candidate, i);
    if (c->chosen)
      g_ptr_array_add (summary->lines, entry_line (c, &resolver));
  }
  /* still in time order here, so "For you" is too */
  catchup_summary_mark_for_you (summary, window, opts->me);
  catchup_summary_sort_lines (summary->lines);
  return summary;
}
