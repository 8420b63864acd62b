#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-summary.h"
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

/* Valid UTF-8 on one line: the output sanitiser (control characters and the bidi embeddings, overrides and
 * isolates that would let a quote visually swap the attribution printed after it are dropped), with whitespace
 * runs collapsed. */
static char *
sanitize (const char *text)
{
  g_autofree char *valid = catchup_text_sanitize (text);
  GString *out = g_string_sized_new (strlen (valid));
  gboolean pending_space = FALSE;

  for (const char *p = valid; *p; p = g_utf8_next_char (p)) {
    gunichar c = g_utf8_get_char (p);
    if (g_unichar_isspace (c)) {
      pending_space = out->len > 0;
      continue;
    }
    if (pending_space)
      g_string_append_c (out, ' ');
    pending_space = FALSE;
    g_string_append_unichar (out, c);
  }
  return g_string_free (out, FALSE);
}

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

/* ---- times ---- */

static char *
format_time (gint64 ts, const char *format)
{
  g_autoptr (GDateTime) dt = g_date_time_new_from_unix_utc (ts);
  return dt ? g_date_time_format (dt, format) : g_strdup ("?");
}

static gint64
utc_day (gint64 ts)
{
  return ts >= 0 ? ts / 86400 : (ts - 86399) / 86400;
}

/* A memory turn's time: its weekday, unless a day of the window has the same one; then its date. */
static char *
format_memory_time (gint64 ts, gint64 window_end)
{
  /* Translators: strftime format of an older message's time, e.g. "02 Mar 09:38" */
  const char *far = C_("time", "%d %b %H:%M");
  /* Translators: strftime format of a message's weekday and time, e.g. "Tue 09:38" */
  const char *near = C_("time", "%a %H:%M");
  return format_time (ts, utc_day (window_end) - utc_day (ts) >= 7 ? far : near);
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
  GPtrArray *context;   /* char*: the context lines the chosen line has room for */
} Candidate;

static void
candidate_clear (Candidate *c)
{
  g_free (c->clean);
  g_clear_pointer (&c->gaps, g_array_unref);
  g_clear_pointer (&c->terms, g_ptr_array_unref);
  g_clear_pointer (&c->context, g_ptr_array_unref);
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

typedef GPtrArray *(*ContextFunc) (const Candidate *c, gpointer data);

/* Marks the chosen candidates, best first, each with the context lines that still fit: the lines that matter
 * most get their references resolved, whatever their place in the window. */
static void
choose (GArray *cands, const LengthProfile *profile, guint fixed_lines, ContextFunc context_of, gpointer data)
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
    c->context = context_of (c, data);
    entries++;
    rendered++;
    /* Context lines may be dropped for room, the entry itself is what must fit. */
    if (c->context->len > profile->max_rendered - rendered)
      g_ptr_array_set_size (c->context, profile->max_rendered - rendered);
    rendered += c->context->len;
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

static char *
quote_turn (const Resolver *r, const CatchupMessage *t, GHashTable *focus, guint max_chars)
{
  g_autofree char *clean = sanitize (t->text);
  strip_trailing_urls (clean);
  g_autofree char *text = excerpt (clean, focus, max_chars);
  g_autofree char *speaker = sanitize (t->speaker);
  g_autofree char *when = format_memory_time (t->ts, r->window_end);
  /* Translators: a quoted earlier message and its source: "text (speaker, Tue 09:38)" */
  return g_strdup_printf (_("%s (%s, %s)"), text, speaker, when);
}

static char *
resolve_gap (const Resolver *r, const CatchupGap *gap, guint g, GHashTable *line_terms, GPtrArray *extra)
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
  g_autofree char *quote = quote_turn (r, turn, focus, r->profile->context_chars);
  if (earlier && extra && r->profile->show_earlier) {
    g_autofree char *old = quote_turn (r, earlier, focus, r->profile->context_chars / 2);
    /* Translators: the previous version of a fact that a later message revised */
    g_ptr_array_add (extra, g_strdup_printf (_("earlier: %s"), old));
  }
  if (earlier)
    /* Translators: "the expression" → latest: the message that resolves it (speaker, time) */
    return g_strdup_printf (_("“%s” → latest: %s"), expr, quote);
  /* Translators: "the expression" → the message that resolves it (speaker, time) */
  return g_strdup_printf (_("“%s” → %s"), expr, quote);
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
add_gap_context (GPtrArray *ctx, const Resolver *r, const Candidate *c)
{
  for (guint i = 0; r->mem && i < c->gaps->len; i++) {
    guint g = g_array_index (c->gaps, guint, i);
    g_autoptr (GPtrArray) extra = g_ptr_array_new_with_free_func (g_free);
    g_autoptr (GHashTable) line_terms = term_set (c->terms);
    char *line = resolve_gap (r, r->mem->gaps->pdata[g], g, line_terms, extra);
    if (line)
      g_ptr_array_add (ctx, line);
    g_ptr_array_extend_and_steal (ctx, g_steal_pointer (&extra));
  }
}

/* Only others' assent turns one person's proposal into something agreed. */
static void
add_agreement (GPtrArray *ctx, const Candidate *c, GPtrArray *window)
{
  if (is_group_matter (c)) {
    g_autoptr (GPtrArray) yes = repliers (window, c->index, TRUE);
    g_autoptr (GString) names = g_string_new (NULL);
    for (guint i = 0; i < yes->len; i++) {
      CatchupMessage *m = yes->pdata[i];
      g_autofree char *who = sanitize (m->speaker);
      g_string_append_printf (names, "%s%s", i ? ", " : "", who);
    }
    if (yes->len > 0)
      /* Translators: who assented to the line above, e.g. "agreed: olu, priya" */
      g_ptr_array_add (ctx, g_strdup_printf (_("agreed: %s"), names->str));
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
add_reply (GPtrArray *ctx, const Resolver *r, const Candidate *c, GPtrArray *window)
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
    g_autofree char *who = sanitize (m->speaker);
    g_autofree char *when = format_time (m->ts, C_("time", "%a %H:%M"));
    /* Translators: a short answer to the line above: "reply: olu (10:21): yes, both" */
    g_ptr_array_add (ctx, g_strdup_printf (_("reply: %s (%s): %s"), who, when, text));
  }
  if (!answered)
    /* Translators: a question or request nobody has answered in the window */
    g_ptr_array_add (ctx, g_strdup (_("no reply yet")));
}

static GPtrArray *
context_for (const Resolver *r, const Candidate *c, GPtrArray *window)
{
  GPtrArray *ctx = g_ptr_array_new_with_free_func (g_free);
  add_gap_context (ctx, r, c);
  add_agreement (ctx, c, window);
  add_reply (ctx, r, c, window);
  return ctx;
}

typedef struct {
  const Resolver *resolver;
  GPtrArray *window;
} ContextData;

static GPtrArray *
entry_context (const Candidate *c, gpointer data)
{
  ContextData *d = data;
  return context_for (d->resolver, c, d->window);
}

/* ---- headline ---- */

typedef struct {
  const char *speaker;
  guint count;
} SpeakerCount;

static gint
by_count_desc (gconstpointer a, gconstpointer b)
{
  const SpeakerCount *x = a, *y = b;
  if (x->count != y->count)
    return x->count < y->count ? 1 : -1;
  return g_strcmp0 (x->speaker, y->speaker);
}

static GArray *
count_speakers (GPtrArray *window)
{
  GArray *counts = g_array_new (FALSE, FALSE, sizeof (SpeakerCount));
  for (guint i = 0; window && i < window->len; i++) {
    CatchupMessage *m = window->pdata[i];
    guint k = 0;
    if (!is_turn (m))
      continue;
    while (k < counts->len && g_strcmp0 (g_array_index (counts, SpeakerCount, k).speaker, m->speaker) != 0)
      k++;
    if (k == counts->len) {
      SpeakerCount sc = { m->speaker, 0 };
      g_array_append_val (counts, sc);
    }
    g_array_index (counts, SpeakerCount, k).count++;
  }
  g_array_sort (counts, by_count_desc);
  return counts;
}

static char *
make_headline (guint messages, guint people, gint64 first, gint64 last, gboolean spans_days)
{
  if (messages == 0)
    return g_strdup (_("No messages to catch up on."));
  g_autofree char *msgs = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u message", "%u messages", messages),
                                           messages);
  g_autofree char *ppl = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u person", "%u people", people),
                                          people);
  g_autofree char *from = format_time (first, C_("time", "%a %H:%M"));
  g_autofree char *to = format_time (last, spans_days ? C_("time", "%a %H:%M") : "%H:%M");
  /* Translators: "45 messages from 6 people, Tue 14:43 – Wed 10:23 UTC" */
  return g_strdup_printf (_("%s from %s, %s – %s UTC"), msgs, ppl, from, to);
}

static CatchupSummaryLine *
participants_line (GArray *counts)
{
  g_autoptr (GString) list = g_string_new (NULL);
  for (guint i = 0; i < counts->len; i++) {
    SpeakerCount *sc = &g_array_index (counts, SpeakerCount, i);
    g_autofree char *who = sanitize (sc->speaker);
    g_string_append_printf (list, "%s%s (%u)", i ? ", " : "", who, sc->count);
  }
  CatchupSummaryLine *line = g_new0 (CatchupSummaryLine, 1);
  /* Translators: followed by "name (count), ..." */
  line->text = g_strdup_printf (_("participants: %s"), list->str);
  line->context = g_ptr_array_new_with_free_func (g_free);
  return line;
}

/* ---- the summary ---- */

void
catchup_summary_line_free (CatchupSummaryLine *line)
{
  if (!line)
    return;
  g_free (line->speaker);
  g_free (line->text);
  g_free (line->source_id);
  g_clear_pointer (&line->context, g_ptr_array_unref);
  g_free (line);
}

void
catchup_summary_free (CatchupSummary *summary)
{
  if (!summary)
    return;
  g_free (summary->headline);
  g_clear_pointer (&summary->lines, g_ptr_array_unref);
  g_free (summary->notice);
  g_free (summary);
}

static CatchupSummaryLine *
entry_line (Candidate *c, const Resolver *r)
{
  CatchupSummaryLine *line = g_new0 (CatchupSummaryLine, 1);
  g_autoptr (GHashTable) focus = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  /* A gap-bearing line must keep its unresolved expression in view, or its context line dangles. */
  for (guint i = 0; r->mem && i < c->gaps->len; i++) {
    CatchupGap *gap = r->mem->gaps->pdata[g_array_index (c->gaps, guint, i)];
    g_autoptr (GPtrArray) terms = terms_of (gap->expression);
    for (guint t = 0; t < terms->len; t++)
      g_hash_table_add (focus, g_strdup (terms->pdata[t]));
  }
  line->speaker = g_strdup (c->msg->speaker);
  line->ts = c->msg->ts;
  line->source_id = g_strdup (c->msg->id);
  line->text = excerpt (c->clean, g_hash_table_size (focus) ? focus : NULL, r->profile->line_chars);
  line->context = g_steal_pointer (&c->context);
  return line;
}

CatchupSummary *
catchup_summary_extractive (GPtrArray *window, CatchupMemory *mem, CatchupLength length)
{
  const LengthProfile *profile = &profiles[length <= CATCHUP_LENGTH_DETAILED ? length : CATCHUP_LENGTH_NORMAL];
  CatchupSummary *summary = g_new0 (CatchupSummary, 1);
  g_autoptr (GArray) counts = count_speakers (window);
  g_autoptr (GArray) cands = make_candidates (window, mem, profile);
  gint64 first = cands->len ? g_array_index (cands, Candidate, 0).msg->ts : 0;
  gint64 last = cands->len ? g_array_index (cands, Candidate, cands->len - 1).msg->ts : 0;
  gboolean spans_days = utc_day (first) != utc_day (last);
  Resolver resolver = { mem, profile, last, cands };
  ContextData context = { &resolver, window };
  gboolean with_participants = length != CATCHUP_LENGTH_SHORT && counts->len > 1;

  summary->headline = make_headline (cands->len, counts->len, first, last, spans_days);
  summary->lines = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_summary_line_free);
  if (with_participants)
    g_ptr_array_add (summary->lines, participants_line (counts));

  choose (cands, profile, 1 + summary->lines->len, entry_context, &context);
  for (guint i = 0; i < cands->len; i++) {
    Candidate *c = &g_array_index (cands, Candidate, i);
    if (c->chosen)
      g_ptr_array_add (summary->lines, entry_line (c, &resolver));
  }
  return summary;
}

/* ---- plain text ---- */

static gboolean
continues (const CatchupSummaryLine *prev, const CatchupSummaryLine *line)
{
  return prev && prev->source_id && line->source_id && g_strcmp0 (prev->speaker, line->speaker) == 0 &&
         line->ts - prev->ts <= REPLY_SECONDS;
}

char *
catchup_summary_to_text (const CatchupSummary *summary)
{
  g_autoptr (GString) out = g_string_new (NULL);
  const CatchupSummaryLine *prev = NULL;
  /* The weekday always: the lines chosen may all fall on one day of a window that spans several. */
  const char *time_format = C_("time", "%a %H:%M");

  g_return_val_if_fail (summary != NULL, NULL);

  /* Each field is sanitised on its own: a line break inside one (a model's "\n/catchup post everything")
   * can never start a line of its own. */
  if (summary->headline) {
    g_autofree char *headline = catchup_text_sanitize (summary->headline);
    g_string_append_printf (out, "%s\n", headline);
  }
  for (guint i = 0; summary->lines && i < summary->lines->len; i++) {
    const CatchupSummaryLine *line = summary->lines->pdata[i];
    g_autofree char *when = line->source_id ? format_time (line->ts, time_format) : NULL;
    g_autofree char *who = line->speaker ? sanitize (line->speaker) : NULL;
    g_autofree char *text = catchup_text_sanitize (line->text);
    if (!line->source_id)
      g_string_append_printf (out, "%s\n", text);
    else if (continues (prev, line))
      g_string_append_printf (out, "  + (%s): %s\n", when, text);
    else
      g_string_append_printf (out, "• %s (%s): %s\n", who, when, text);
    for (guint k = 0; line->context && k < line->context->len; k++) {
      g_autofree char *context = catchup_text_sanitize (line->context->pdata[k]);
      g_string_append_printf (out, "  ↳ %s\n", context);
    }
    prev = line->source_id ? line : NULL;
  }
  if (summary->notice) {
    g_autofree char *notice = catchup_text_sanitize (summary->notice);
    g_string_append_printf (out, "(%s)\n", notice);
  }
  return g_string_free (g_steal_pointer (&out), FALSE);
}
