#include "config.h"

#include <math.h>
#include <string.h>

#include "catchup-summary-private.h"
#include "catchup-text.h"

/*
 * The embedded extractive summary. It never writes a word of its own about the chat: every line quotes (trimmed)
 * the message it is about, under that message's speaker, and every item under a line quotes the message it cites
 * with that message's speaker and time. This module scores every turn of the window for salience and chooses the
 * lines over the whole window; topics and revisions, references and excerpts are their own modules.
 */

/* ---- length ---- */

typedef struct {
  guint min_entries, max_entries;  /* lines of their own, at a window of up to SMALL_WINDOW tokens */
  guint max_rendered;              /* entries and the items under them together, the headline not counted */
  guint grow_entries, grow_rendered; /* added for a window of LARGE_WINDOW tokens or more */
  guint line_chars;                /* of a quoted window message */
  guint context_chars;             /* of a quoted item */
} LengthProfile;

/* a message worth a line of its own */
#define WORTHY_SCORE 1.5

#define SMALL_WINDOW 1500
#define LARGE_WINDOW 9000

/* About 5-12 content lines for a window of 1K tokens, up to about 25 for a week of 500 messages. */
static const LengthProfile profiles[] = {
  [CATCHUP_LENGTH_SHORT] = { 2, 3, 4, 2, 3, 140, 120 },
  [CATCHUP_LENGTH_NORMAL] = { 4, 10, 12, 9, 13, 200, 200 },
  [CATCHUP_LENGTH_DETAILED] = { 8, 14, 19, 12, 17, 300, 240 },
};

typedef struct {
  guint entries, rendered;
  guint line_chars, context_chars;
} Budget;

static guint
window_tokens (GArray *cands)
{
  guint n = 0;
  for (guint i = 0; i < cands->len; i++) {
    const CatchupCandidate *c = &g_array_index (cands, CatchupCandidate, i);
    n += catchup_text_count_turn (c->msg->speaker, c->msg->text);
  }
  return n;
}

/* The number of lines follows the number of topics, within what the length and the window's size allow. */
static Budget
budget_for (const LengthProfile *p, GArray *cands, guint topics)
{
  guint tokens = window_tokens (cands);
  double grow = tokens <= SMALL_WINDOW ? 0 : MIN (1.0, (tokens - SMALL_WINDOW) / (double) (LARGE_WINDOW - SMALL_WINDOW));
  guint max_entries = p->max_entries + (guint) lround (grow * p->grow_entries);
  guint worthy = 0;
  for (guint i = 0; i < cands->len; i++)
    worthy += g_array_index (cands, CatchupCandidate, i).score >= WORTHY_SCORE;
  /* one rendered line stays free for the smaller topics left out */
  Budget b = { CLAMP (MAX (topics + 2, worthy / 2), p->min_entries, max_entries),
               p->max_rendered + (guint) lround (grow * p->grow_rendered) - 1, p->line_chars, p->context_chars };
  return b;
}

/* ---- classifying window messages ---- */

typedef struct {
  CatchupWorth worth;
  const char *const *cues;
  double weight;
} CueClass;

static const char *const decision_cues[] = {
  /* "agreed." opening a reply assents to the line before it; "caught in rc1 instead of by users" compares;
   * "how's it going with yoga?" chooses nothing: going with something needs someone who goes with it */
  "decided", "decision", "we agreed", "agreed on", "agreed to", "as agreed", "all agreed", "we'll go with",
  "we're going with", "i'm going with", "let's go with", "go with that", "go with it", "we went with", "settled",
  "officially", "official", "is final", "final decision", "final call", "vote", "approved", "from now on",
  "let's do that", "let's go", "drops", "dropping", "amendment", "moves to", "moved to", "postponed",
  "rescheduled", "is rm", "takes over", NULL,
};
static const char *const request_cues[] = {
  "please", "pls", "can you", "could you", "would you", "can someone", "can anyone", "need you", "i need your",
  "i need someone", "i need a", "i need the", "ptal", "re-ack", "ack when", "needs an ack", "needs the usual ack",
  "needs a review", "needs review", "sign-off", "want to come", "wanna come", "want to join", "would you like to",
  "do you want to", "you're welcome to", "help me out", "anyone can help", "i'd appreciate",
  "i'd really appreciate", "would appreciate", "any idea", "any ideas", "anyone know",
  "does anyone", NULL,
};
static const char *const plan_cues[] = {
  "i'll", "we'll", "i will", "we will", "going to", "gonna", "plan", "planning", "tomorrow", "tonight",
  "next week", "by noon", "schedule", "later today", "this week", "will be", NULL,
};
static const char *const action_cues[] = {
  "pushed", "merged", "fixed", "fixing", "opened", "filed", "deleted", "reworked", "landed", "reverted",
  "tagged", "deployed", "uploaded", "posted", "rolled back", "bumped", "submitted", "backported", "sent",
  "switching", "switched", "restarted", "migrated", "updating", "rebased", "reviewed", "restored", "restoring",
  "skipping", "is up against", "is up for review", NULL,
};
static const char *const status_cues[] = {
  "failed", "failing", "fails", "broken", "green", "passes", "passing", "blocked", "done", "builds",
  "is down", "outage", "flaky", "timeout", "crash", "regression", "still", "works", "not yet", "reproduce",
  "offline", "snag", "went red", "holding", "stuck", "blocker", "we wait", "waiting for", "waiting on", "rejects",
  "rejected", NULL,
};
static const char *const news_cues[] = {
  "released", "release", "announce", "cve", "security", "advisory", "is out", "new version", "rc1", "rc2",
  "just got", "got a", "got the", "started", "joined", "finished", "guess what", "finally", NULL,
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
  "thank you", "thx", "ta", "lol", "haha", "nice", "cool", "great", "welcome back", "brb", "np", "see you",
  "cya", "awesome", "wow", NULL,
};
/* Encouragement and thanks: a personal chat is full of them, and none is news ("keep going!", "I won't give
 * up", "your support means a lot"). */
static const char *const pep[] = {
  "keep going", "keep it up", "keep pushing", "keep on going", "keep at it", "never quit", "don't quit",
  "give up", "right attitude", "believe in yourself", "proud of you", "thanks for the support",
  "appreciate your help", "appreciate the support", "your support", "means a lot", "mean a lot", "rock on",
  "you got this", "you can do it", "keep up the", "on this journey", "on this trip together", "here for you",
  "every step of the way", "bring me down", "thanks for your support", "kind words", "thanks for the support",
  "doing my best", "do my best", "your belief", "you're incredible", "you're the best", "you're inspiring",
  /* closings: "I'll keep you posted. Have a great day." promises nothing a reader needs */
  "keep you posted", "have a great day", "have a good day", "have a great one", "talk soon", "talk to you soon",
  "take care", "see you later", "see ya", "see you there", "see you tomorrow", "see you soon", "bye",
  "catch you later", "let me know how it goes", "let you know how it goes",
  "wish them luck", "wish you luck", "have a blast", "no problem", "have a safe trip", "safe travels",
  "enjoy your trip", "have fun", NULL,
};
/* Short answers: nothing on their own, but the answer to a question or request. */
static const char *const answers[] = {
  "ok", "okay", "k", "+1", "perfect", "exactly", "yes", "no", "yep", "nope", "sure", "ack", "done", "not yet",
  "agreed", "agree", "fine by me", "sounds good", "lgtm", "works for me", "makes sense", NULL,
};
/* A speaker telling about themselves or their group: the news of a personal chat. */
static const char *const first_person[] = {
  "i", "i'm", "i've", "i'd", "my", "we", "we're", "we've", "our", "me", "us", NULL,
};
static const char *const second_person[] = { "you", "you're", "you've", "you'd", "you'll", "your", "yours", NULL };

/* Whether the n bytes at w are one of the words of list. */
static gboolean
is_word_of (const char *w, gsize n, const char *const *list)
{
  for (guint i = 0; list[i]; i++)
    if (strlen (list[i]) == n && memcmp (w, list[i], n) == 0)
      return TRUE;
  return FALSE;
}

/* How many words of text are one of list, as whole words. */
static guint
count_words_of (const char *folded, const char *const *list)
{
  guint n = 0;
  for (const char *p = folded; *p;) {
    while (*p && !(g_ascii_isalnum (*p) || *p == '\''))
      p++;
    gsize len = strspn (p, "abcdefghijklmnopqrstuvwxyz0123456789'");
    if (len == 0) {
      p += *p ? 1 : 0;
      continue;
    }
    n += is_word_of (p, len, list);
    p += len;
  }
  return n;
}

/* Reactions that open a message ("Wow, that sounds great!"): what follows them is what counts. */
static const char *const reactions[] = {
  "wow", "that's", "thats", "sounds", "awesome", "cool", "nice", "congrats", "congratulations", "aww", "omg",
  "haha", "great", "amazing", "glad", "so happy", "that sounds", "what a", "that looks", "looks", "mmm", "yum",
  "ooh", NULL,
};

gboolean
catchup_summary_has_any (const char *folded, const char *const *phrases)
{
  for (guint i = 0; phrases[i]; i++)
    if (catchup_text_has_folded_phrase (folded, phrases[i]))
      return TRUE;
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

/* Bots speak for CI, trackers and releases: only failures and releases are news to a returning reader. */
static gboolean
looks_like_bot (const char *speaker, const char *folded)
{
  /* the services and factoid bots of the big networks, whose names do not end in "bot" */
  static const char *const services[] = { "ubottu", "ubot5", "chanserv", "nickserv", "memoserv", "operserv",
                                          "github", "gitlab", NULL };
  g_autofree char *name = g_utf8_casefold (speaker ? speaker : "", -1);
  return g_str_has_suffix (name, "bot") || g_str_has_suffix (name, "[bot]") || g_str_has_prefix (name, "bot") ||
         g_strv_contains (services, name) || folded[0] == '[';
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

/* Numbers, names (capitalised inside a sentence), issue numbers: what makes a line specific. */
static guint
specifics (const char *clean)
{
  guint n = 0;
  gboolean sentence_start = TRUE;
  for (const char *p = clean; *p; p++) {
    gboolean word_start = p == clean || p[-1] == ' ';
    if (word_start && (g_ascii_isdigit (*p) || (*p == '#' && g_ascii_isdigit (p[1]))))
      n++;
    else if (word_start && g_ascii_isupper (*p) && !sentence_start)
      n++;
    if (*p == '.' || *p == '!' || *p == '?')
      sentence_start = TRUE;
    else if (*p != ' ')
      sentence_start = FALSE;
  }
  return n;
}

/* A question outside a caption: "?" at the end of a sentence. */
static gboolean
asks (const char *clean)
{
  const char *caption = strstr (clean, "[shares ");
  const char *q = strchr (clean, '?');
  return q && (!caption || q < caption);
}

/* Where the sentence that starts at p ends: at its . ! ? before a space, or at the text's end. */
static const char *
sentence_end (const char *p)
{
  for (const char *start = p; *p; p++)
    if (catchup_summary_ends_sentence (start, p))
      return p;
  return p;
}

/* The sentences of folded text that ask (end in "?") and those that do not, each run joined by spaces. */
static void
split_asked (const char *folded, GString *stated, GString *asked)
{
  for (const char *start = folded;;) {
    const char *end = sentence_end (start);
    GString *to = *end == '?' ? asked : stated;
    g_string_append_len (to, start, end - start + (*end ? 1 : 0));
    g_string_append_c (to, ' ');
    if (!*end)
      break;
    start = end + 1;
  }
}

static guint
count_terms (const char *text)
{
  g_autoptr (GPtrArray) terms = catchup_summary_terms (text);
  return terms->len;
}

/* Folded text without what it quotes: "the rc1 mail said 'please test'" requests nothing. */
#define QUOTE_MAX 120

static const char *
quote_end (const char *folded, const char *p)
{
  const char *close = NULL;
  if (*p == '"')
    close = strchr (p + 1, '"');
  else if (g_str_has_prefix (p, "“"))
    close = strstr (p, "”");
  else if (*p == '\'' && (p == folded || p[-1] == ' '))
    for (const char *q = p + 1; !close && (q = strchr (q, '\'')); q++)
      if (q[1] == '\0' || strchr (" ,.;:!?)", q[1]))
        close = q;
  if (!close || close - p > QUOTE_MAX)
    return NULL;
  return close + (g_str_has_prefix (close, "”") ? strlen ("”") : 1);
}

static char *
without_quotes (const char *folded)
{
  GString *out = g_string_sized_new (strlen (folded));
  for (const char *p = folded; *p;) {
    const char *end = quote_end (folded, p);
    if (end) {
      g_string_append_c (out, ' ');
      p = end;
    } else {
      g_string_append_c (out, *p++);
    }
  }
  return g_string_free (out, FALSE);
}

/* Questions that keep a chat going and ask for nothing in particular. */
static const char *const small_talk[] = {
  "how about you", "and you", "what about you", "been up to", "what's up", "what's new", "what's been up",
  "how are you", "how have you been", "how've you been", "how's it going", "how are things", "anything new",
  "any news", "new things", "what's happening", "up with you", "what do you think", "ever been", "you ever",
  "ever tried", "been good", "since we talked", "since we last talked", "how's everything", "how are you doing",
  "how's life", "how you doing", NULL,
};

/* "What have you been up to lately?", "What do you think?": a question that names nothing it asks about; "How've
 * you been using it?" and "Have you ever been to the Oregon dunes?" name it. */
static gboolean
asks_small_talk (const char *folded_question)
{
  static const char *const when[] = { "lately", "recently", "these days", "today", "this week", NULL };
  if (!catchup_summary_has_any (folded_question, small_talk))
    return FALSE;
  g_autofree char *rest = g_strdup (folded_question);
  const char *const *lists[] = { small_talk, when };
  for (guint l = 0; l < G_N_ELEMENTS (lists); l++)
    for (guint i = 0; lists[l][i]; i++)
      for (char *p = strstr (rest, lists[l][i]); p; p = strstr (p, lists[l][i]))
        memset (p, ' ', strlen (lists[l][i]));
  return count_terms (rest) == 0;
}

/* "Could you show me a picture of it?": a chat's way of staying on a subject, not a request a reader must act on. */
static const char *const photo_requests[] = {
  "show me a picture", "show me a pic", "show me a photo", "send me a pic", "send me a photo", "share a pic",
  "share a photo", "see a picture", "see a pic", "see a photo", "any pics", "any photos", "any pictures", NULL,
};

/* A question that only asks the other to agree with a statement: "… since my first tournament, hasn't it?". */
static const char *const tag_questions[] = {
  "isn't it?", "hasn't it?", "wasn't it?", "didn't it?", "doesn't it?", "aren't they?", "don't you think?",
  "right?", "you know?", "isn't that?", "eh?", "huh?", "don't they?", "didn't they?", "don't we?", "aren't we?",
  "isn't she?", "isn't he?", "wasn't he?", "wasn't she?", "didn't you?", NULL,
};
/* A question the speaker answers at once: "Guess what? I got the job", "My advice? Start small". */
static const char *const rhetorical[] = {
  "guess what?", "and guess what?", "you know what?", "know what?", "my advice?", "the best part?", "the result?",
  "the catch?", "the reason?", "the crazy part?", "the funny part?", "the verdict?", NULL,
};

/* "Nature is truly amazing, isn't it?", "Guess what?": a question that asks nothing of the other. */
static gboolean
is_tag_question (const char *sentence)
{
  if (g_strv_contains (rhetorical, sentence))
    return TRUE;
  for (guint i = 0; tag_questions[i]; i++)
    if (g_str_has_suffix (sentence, tag_questions[i]))
      return TRUE;
  return FALSE;
}

static gboolean
only_tag_questions (const char *asked)
{
  guint questions = 0, tags = 0;
  for (const char *start = asked;;) {
    while (*start == ' ')
      start++;
    const char *end = sentence_end (start);
    if (!*end)
      break;
    g_autofree char *sentence = g_strndup (start, end + 1 - start);
    questions++;
    tags += is_tag_question (sentence);
    start = end + 1;
  }
  return questions > 0 && tags == questions;
}

/* The last questions of clean that ask the other something, outside a photo caption, and how many such runs of
 * questions it has: "Where did you capture this? Nature is truly amazing, isn't it?" asks one, where; "What
 * instrument are you playing? What genres do you want to learn?" is one run of two. NULL when none. */
static char *
earnest_question (const char *clean, guint *runs)
{
  g_autofree char *said = catchup_summary_said (clean);
  const char *run = NULL, *run_end = NULL;
  gboolean in_run = FALSE;
  *runs = 0;
  for (const char *start = said;;) {
    while (*start == ' ')
      start++;
    const char *end = sentence_end (start);
    gboolean earnest = FALSE;
    if (*end == '?') {
      g_autofree char *sentence = g_strndup (start, end + 1 - start);
      g_autofree char *folded = g_utf8_casefold (sentence, -1);
      earnest = !is_tag_question (folded);
    }
    if (earnest && !in_run) {
      (*runs)++;
      run = start;
    }
    if (earnest)
      run_end = end + 1;
    /* a tag question neither starts nor breaks a run */
    in_run = earnest || (in_run && *end == '?');
    if (!*end)
      break;
    start = end + 1;
  }
  return run ? g_strndup (run, run_end - run) : NULL;
}

/* Whether a message asks in earnest. Personal news that ends in a small-talk question ("my son got into an
 * accident … What's been up with you?") is news: its question asks for nothing a reader needs. */
static gboolean
asks_in_earnest (const char *clean, const char *folded)
{
  if (!asks (clean))
    return FALSE;
  g_autoptr (GString) stated = g_string_new (NULL);
  g_autoptr (GString) asked = g_string_new (NULL);
  split_asked (folded, stated, asked);
  if (only_tag_questions (asked->str))
    return FALSE;
  /* "Hey John, been good since we talked?": the greeting and the name are no part of what it asks */
  return count_terms (asked->str) > 4 || !catchup_summary_has_any (asked->str, small_talk) ||
         !catchup_summary_has_any (stated->str, first_person) || count_terms (stated->str) < 4;
}

/* A message of encouragement and thanks: what is left without its pep sentences has hardly a word. */
static gboolean
is_pep (const char *folded)
{
  if (!catchup_summary_has_any (folded, pep))
    return FALSE;
  guint left = 0;
  for (const char *start = folded;;) {
    const char *end = sentence_end (start);
    g_autofree char *sentence = g_strndup (start, end - start);
    if (!catchup_summary_has_any (sentence, pep) && !strstr (sentence, "[shares "))
      left += count_terms (sentence);
    if (!*end)
      break;
    start = end + 1;
  }
  return left < 4;
}

/* "it's only ever going to fail from now on" foretells, it decides nothing: "from now on" decides only in a
 * sentence that says what people will do. */
static gboolean
foretells (const char *folded, const char *cue)
{
  static const char *const forecasts[] = { "going to", "it's", "it will", "it'll", "gonna", NULL };
  if (!g_str_equal (cue, "from now on"))
    return FALSE;
  for (const char *start = folded;;) {
    const char *end = sentence_end (start);
    g_autofree char *sentence = g_strndup (start, end - start);
    if (catchup_text_has_folded_phrase (sentence, cue) && catchup_summary_has_any (sentence, forecasts))
      return TRUE;
    if (!*end)
      return FALSE;
    start = end + 1;
  }
}

/* "not instead of it", "haven't decided", "no decision yet": a decision cue that is negated decides nothing;
 * "reworked per gsteen's amendment" acts on a decision made before. */
static gboolean
not_deciding (const char *folded, const char *cue)
{
  static const char *const negations[] = { "not", "no", "never", "haven't", "hasn't", "didn't", "don't", "isn't",
                                           "nothing", "per", "per the", NULL };
  /* "per gsteen's amendment", "per Friday's call": "per" and a possessive word before the cue */
  for (const char *p = strstr (folded, cue); p; p = strstr (p + 1, cue)) {
    const char *end = p;
    while (end > folded && end[-1] == ' ')
      end--;
    const char *start = end;
    while (start > folded && start[-1] != ' ')
      start--;
    g_autofree char *word = g_strndup (start, end - start);
    gboolean possessive = g_str_has_suffix (word, "'s") || g_str_has_suffix (word, "’s");
    if (possessive && start - folded >= 4 && strncmp (start - 4, "per ", 4) == 0)
      return TRUE;
  }
  g_autofree char *yet = g_strconcat ("yet ", cue, NULL);
  return catchup_summary_after_any (folded, cue, negations) || catchup_summary_after_any (folded, yet, negations);
}

/* "What would you rate it?", "how can you tell": after a question word, "would you" asks, it requests nothing. */
static const char *const wh_words[] = { "what", "how", "where", "which", "who", "when", "why", NULL };

static gboolean
after_wh_word (const char *folded, const char *cue)
{
  return catchup_summary_after_any (folded, cue, wh_words);
}

/* "What genres do you want to learn?": a question a wh-word opens asks; the cue in it requests nothing. */
static gboolean
in_wh_question (const char *folded, const char *cue)
{
  for (const char *p = strstr (folded, cue); p; p = strstr (p + 1, cue)) {
    const char *start = p;
    while (start > folded && !strchr (".!?", start[-1]))
      start--;
    while (*start == ' ')
      start++;
    if (*sentence_end (p) == '?' && catchup_summary_opening_word (start, wh_words))
      return TRUE;
  }
  return FALSE;
}

/* "Can you tell me more about why it's special?": asking to be told is a question, not a request to act. */
static gboolean
asks_to_be_told (const char *folded, const char *cue)
{
  static const char *const telling[] = { "tell me", "tell us", "share more", "describe", "explain", NULL };
  for (const char *p = strstr (folded, cue); p; p = strstr (p + 1, cue)) {
    const char *rest = p + strlen (cue);
    while (*rest == ' ')
      rest++;
    for (guint i = 0; telling[i]; i++)
      if (g_str_has_prefix (rest, telling[i]))
        return TRUE;
  }
  return FALSE;
}

/* The cue class of a message, FALSE when none matches. */
static gboolean
cue_class (const char *folded, CatchupWorth *worth, double *weight, guint *hits)
{
  *hits = 0;
  for (guint c = 0; c < G_N_ELEMENTS (cue_classes); c++)
    for (guint i = 0; cue_classes[c].cues[i]; i++) {
      if (!catchup_text_has_folded_phrase (folded, cue_classes[c].cues[i]) ||
          foretells (folded, cue_classes[c].cues[i]) ||
          (cue_classes[c].worth == CATCHUP_WORTH_DECISION && not_deciding (folded, cue_classes[c].cues[i])) ||
          (cue_classes[c].worth == CATCHUP_WORTH_REQUEST && (after_wh_word (folded, cue_classes[c].cues[i]) ||
                                                             in_wh_question (folded, cue_classes[c].cues[i]) ||
                                                             asks_to_be_told (folded, cue_classes[c].cues[i]))))
        continue;
      if ((*hits)++ == 0) {
        *worth = cue_classes[c].worth;
        *weight = cue_classes[c].weight;
      }
      break;
    }
  return *hits > 0;
}

/* After an opening reaction, the rest of the message: "Wow, Caroline! My kids and I just…" → "my kids…". */
static const char *
after_reaction (const char *folded)
{
  const char *rest = folded;
  /* the reaction is the opening sentence, a short one ("Wow, John! That's awesome."): "It had lots of great
   * things like salads" is a claim however great they were */
  for (guint k = 0; k < 2; k++) {
    const char *end = strpbrk (rest, ".!?");
    g_autofree char *first = g_strndup (rest, end ? (gsize) (end - rest) : strlen (rest));
    if (catchup_summary_count_words (first) > 6 || !catchup_summary_has_any (first, reactions))
      break;
    rest = end ? end + 1 : rest + strlen (rest);
  }
  return rest;
}

/* "I went to a game convention", "we went camping", "my kids and I": a clause whose subject is the speaker or
 * their group tells of them, and with an event ("went", "last weekend") it is the news of a personal chat.
 * "Being in nature helps us take a break" has "us" but tells of nobody: it muses. */
static const char *const self_subjects[] = {
  "i", "i'm", "i've", "i'd", "i'll", "we", "we're", "we've", "we'd", "we'll", "my", "our", NULL,
};
static const char *const clause_openers[] = {
  "and", "so", "but", "then", "because", "'cause", "when", "since", "actually", "also", "just", "recently",
  "finally", "yesterday", "today", "plus", "oh", "yeah", "yes", "now", "still", NULL,
};
/* what happened to the speaker, said with a self subject: the news of a personal chat */
static const char *const events[] = {
  "just got", "just won", "just finished", "just started", "finally", "recently", "yesterday", "last week",
  "last weekend", "last month", "last night", "last year", "last summer", "last friday", "last saturday",
  "last sunday", "a few days ago", "this morning",
  "got", "went", "made", "started", "finished", "bought", "joined", "met", "won", "took", "visited", "read",
  "saw", "tried", "found", "booked", "signed up", "moved", "adopted", "lost", "decided", NULL,
};
/* maxims about life in general: "it's amazing how books take us away", "finding balance is key" */
static const char *const musings[] = {
  "amazing how", "awesome how", "incredible how", "great how", "crazy how", "cool how", "wonderful how",
  "fascinating how", "beautiful how", "it's like", "that's why", "we should", "helps us", "reminds us",
  "makes us", "keeps us", "lets us", "let us", "life's", "is key", "is crucial", "really matters",
  "what matters", "it's important to", "it's so important", "is so important", "is important", "truly", NULL,
};

static gboolean
tells_of_self (const char *stated)
{
  gboolean clause_start = TRUE;
  for (const char *p = stated; *p;) {
    while (*p == ' ')
      p++;
    gsize len = strcspn (p, " ");
    if (len == 0)
      break;
    /* the word without the marks after it ("i'm," is "i'm", and ends a clause) */
    gsize bare = MIN (strcspn (p, ".,;:!?"), len);
    gboolean ends_clause = bare < len || (len == 1 && *p == '-') || (len == strlen ("–") && !strncmp (p, "–", len));
    if (clause_start && is_word_of (p, bare, self_subjects))
      return TRUE;
    clause_start = ends_clause || is_word_of (p, bare, clause_openers);
    p += len;
  }
  return FALSE;
}

#define EVENT_BONUS 0.4
#define MUSING_WEIGHT 0.8

#define YOU_WEIGHT 0.8
#define CHEER_WEIGHT 0.9

/* Thanks and praise beyond the pep phrases: "I appreciate your encouragement", "your words mean a lot". */
static const char *const encouragement[] = {
  "appreciate", "grateful", "thankful", "proud of", "inspiring", "your words", "your encouragement", "let's keep",
  "cheering", "means the world", NULL,
};

/* Thanks, encouragement or cheering in folded text. */
static gboolean
cheers (const char *folded)
{
  return catchup_summary_has_any (folded, pep) || catchup_summary_has_any (folded, encouragement);
}

/* Summary-worthiness of one message and how much it weighs; 0 for chit-chat and bot noise. */
static double
classify (const char *speaker, const char *clean, const char *folded, guint terms, guint words, gboolean earnest,
          CatchupWorth *worth)
{
  double score = 0;
  guint hits = 0;

  *worth = CATCHUP_WORTH_OTHER;
  if (words == 0 || is_only (folded, words, social) || is_only (folded, words, answers))
    return 0;
  if (looks_like_bot (speaker, folded)) {
    *worth = CATCHUP_WORTH_STATUS;
    return bot_news (folded) ? 2.6 : 0;
  }
  const char *rest = after_reaction (folded);
  gboolean reaction_only = rest != folded && catchup_summary_count_words (rest) < 4;
  /* cue words inside a quote are the quoted person's */
  g_autofree char *said = without_quotes (rest);
  g_autoptr (GString) stated = g_string_new (NULL);
  g_autoptr (GString) asked = g_string_new (NULL);
  split_asked (said, stated, asked);
  /* "… since my first tournament, hasn't it?" states */
  if (only_tag_questions (asked->str))
    g_string_append (stated, asked->str);
  if (cue_class (said, worth, &score, &hits)) {
    CatchupWorth stated_worth;
    double stated_score;
    guint stated_hits;
    /* a question that mentions "release" asks about it; it announces nothing, unless a statement around it does */
    if (earnest && (*worth == CATCHUP_WORTH_NEWS || *worth == CATCHUP_WORTH_STATUS) &&
        !(cue_class (stated->str, &stated_worth, &stated_score, &stated_hits) &&
          (stated_worth == CATCHUP_WORTH_NEWS || stated_worth == CATCHUP_WORTH_STATUS)))
      *worth = CATCHUP_WORTH_QUESTION, score = 1.4;
  } else if (earnest && terms >= 3) {
    *worth = CATCHUP_WORTH_QUESTION;
    score = 1.1;
  } else if (catchup_summary_has_any (stated->str, first_person) && terms >= 4) {
    *worth = CATCHUP_WORTH_NEWS;
    score = 1.7;
  } else if (terms >= 8) {
    score = 0.8;  /* a substantial message without cue words may still be the news */
  }
  if (score == 0)
    return 0;
  if (*worth == CATCHUP_WORTH_REQUEST && catchup_summary_has_any (asked->str, photo_requests))
    score *= 0.35;
  /* a message more about "you" than about "I" answers the other's news ("Giving a home to needy kids is such a
   * lovely thing, you'll be a great mom"): the news is theirs, in their own line */
  if ((*worth == CATCHUP_WORTH_NEWS || *worth == CATCHUP_WORTH_QUESTION || *worth == CATCHUP_WORTH_OTHER ||
       *worth == CATCHUP_WORTH_STATUS) &&
      count_words_of (stated->str, second_person) > count_words_of (stated->str, first_person))
    score *= YOU_WEIGHT;
  if (reaction_only)
    score *= 0.4;
  if (is_pep (folded))
    score *= 0.35;
  gboolean of_self = tells_of_self (stated->str);
  gboolean self_event = of_self && catchup_summary_has_any (stated->str, events);
  if (self_event)
    score += EVENT_BONUS;
  else if (!of_self && catchup_summary_has_any (stated->str, musings))
    score *= MUSING_WEIGHT;
  double total = score + 0.3 * MIN (hits, 3) + MIN (terms, 20) / 20.0 + 0.15 * MIN (specifics (clean), 4);
  /* thanks and cheering with more said around them ("Thanks, Gina! Seeing my goals written down really helps
   * keep me motivated"): the news, when there is some, is something that happened to the speaker */
  if (!earnest && !self_event && cheers (folded))
    total *= CHEER_WEIGHT;
  return total;
}

CatchupSection
catchup_summary_classify (const char *speaker, const char *text)
{
  g_autofree char *clean = catchup_summary_clean (text);
  g_autofree char *folded = g_utf8_casefold (clean, -1);
  g_autoptr (GPtrArray) terms = catchup_summary_terms (clean);
  CatchupWorth worth;
  classify (speaker, clean, folded, terms->len, catchup_summary_count_words (clean), asks_in_earnest (clean, folded),
            &worth);
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

/* ---- candidates ---- */

static void
candidate_clear (CatchupCandidate *c)
{
  g_free (c->clean);
  g_free (c->folded);
  g_clear_pointer (&c->terms, g_ptr_array_unref);
  g_clear_pointer (&c->replaces, g_ptr_array_unref);
  g_clear_pointer (&c->gaps, g_array_unref);
  g_clear_pointer (&c->context, g_ptr_array_unref);
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
opens_off_topic (const char *folded)
{
  return g_str_has_prefix (folded, "off-topic") || g_str_has_prefix (folded, "offtopic") ||
         g_str_has_prefix (folded, "ot:") || g_str_has_prefix (folded, "[ot]");
}

/* An off-topic aside runs until the room goes quiet for a while. */
#define ASIDE_PAUSE (15 * 60)

/* A message's cues are in what its speaker wrote: a photo's caption describes the picture ("a person holding a
 * paper bag" made "Yeah, its a great idea!" a status line). */
static double
classify_spoken (CatchupCandidate *c)
{
  g_autofree char *said = g_strstrip (catchup_summary_said (c->clean));
  g_autofree char *folded = g_utf8_casefold (said, -1);
  /* what the picture shows still makes the message specific */
  return classify (c->msg->speaker, said, folded, c->terms->len, catchup_summary_count_words (said), c->question,
                   &c->worth);
}

static GArray *
make_candidates (GPtrArray *window, CatchupMemory *mem)
{
  GArray *cands = g_array_new (FALSE, TRUE, sizeof (CatchupCandidate));
  gboolean aside = FALSE;
  gint64 prev_ts = 0;

  g_array_set_clear_func (cands, (GDestroyNotify) candidate_clear);
  for (guint i = 0; window && i < window->len; i++) {
    CatchupMessage *msg = window->pdata[i];
    CatchupCandidate c = { .msg = msg, .index = i, .answer = -1, .asked = -1, .superseded_by = -1 };
    c.clean = catchup_summary_clean (msg->text);
    c.folded = g_utf8_casefold (c.clean, -1);
    c.terms = catchup_summary_terms (c.clean);
    c.words = catchup_summary_count_words (c.clean);
    c.question = asks_in_earnest (c.clean, c.folded);
    c.replaces = g_ptr_array_new ();
    c.context = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_summary_item_free);
    c.gaps = gaps_of_utterance (mem, msg);
    aside = opens_off_topic (c.folded) || (aside && msg->ts - prev_ts <= ASIDE_PAUSE);
    prev_ts = msg->ts;
    c.score = aside ? 0 : classify_spoken (&c);
    g_array_append_val (cands, c);
  }
  return cands;
}

static CatchupCandidate *
cand (GArray *cands, gint i)
{
  return i >= 0 && (guint) i < cands->len ? &g_array_index (cands, CatchupCandidate, i) : NULL;
}

/* ---- questions and answers ---- */

/* Replies are the few messages right after one, by other people, before the conversation moves on. */
#define REPLY_SPAN 6
#define REPLY_SECONDS (30 * 60)

/* The window speakers, casefolded, each once: who a message can address. */
typedef struct {
  const char *speaker;
  char *folded;
} Person;

static void
person_clear (Person *p)
{
  g_free (p->folded);
}

static GArray *
people_of (GArray *cands)
{
  GArray *people = g_array_new (FALSE, TRUE, sizeof (Person));
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_array_set_clear_func (people, (GDestroyNotify) person_clear);
  for (guint i = 0; i < cands->len; i++) {
    const char *s = g_array_index (cands, CatchupCandidate, i).msg->speaker;
    if (!s || !*s || !g_hash_table_add (seen, (gpointer) s))
      continue;
    Person p = { s, g_utf8_casefold (s, -1) };
    g_array_append_val (people, p);
  }
  return people;
}

/* The window speaker a message addresses by name ("ravi: can you…", "@ravi", "…, ravi?"); NULL when none. */
static const char *
addressee (GArray *people, const CatchupCandidate *c)
{
  for (guint i = 0; i < people->len; i++) {
    const Person *p = &g_array_index (people, Person, i);
    if (g_strcmp0 (p->speaker, c->msg->speaker) != 0 && catchup_text_has_folded_phrase (c->folded, p->folded))
      return p->speaker;
  }
  return NULL;
}

/* Opened by a short answer: "yes, both", "on it", "I'll do it". */
static gboolean
opens_with_answer (const CatchupCandidate *r)
{
  static const char *const short_answers[] = { "yes", "no", "yep", "nope", "yeah", "sure", "ok", "okay", "done",
                                               "not yet", "on it", "will do", "ack", "+1", "i can", "i'll", NULL };
  g_autofree char *bare = bare_words (r->folded);
  return catchup_summary_opening_word (bare, short_answers) != NULL;
}

/* Whether r takes up c: names its speaker, shares a content word, or opens with a short answer. A short answer
 * alone counts only from the one asked, between two people or right after: in a busy channel a later "ok …"
 * answers anyone. */
static gboolean
takes_up (const CatchupCandidate *r, const CatchupCandidate *c, gboolean short_answer_counts)
{
  g_autofree char *asker = g_utf8_casefold (c->msg->speaker ? c->msg->speaker : "", -1);
  g_autoptr (GHashTable) set = catchup_summary_term_set (c->terms);
  if (short_answer_counts && opens_with_answer (r))
    return TRUE;
  return (*asker && catchup_text_has_folded_phrase (r->folded, asker)) || catchup_summary_overlap (r->terms, set) > 0;
}

/* Mostly a question of its own: besides an opening reaction, what it states has hardly a word ("Wow, that
 * looks amazing! What do you love most about it?"). */
static gboolean
is_counter_question (const CatchupCandidate *r)
{
  if (!r->question || opens_with_answer (r))
    return FALSE;
  g_autoptr (GString) stated = g_string_new (NULL);
  g_autoptr (GString) asked = g_string_new (NULL);
  split_asked (after_reaction (r->folded), stated, asked);
  return count_terms (stated->str) < 3;
}

static gboolean greets (const char *sentence);
static char *take_sentence (const char **next, char **folded);

/* Whether every sentence of r greets or is a short reaction: "Hey Caroline! Great to hear from you! Wow, what an
 * amazing journey. Congrats!" */
static gboolean
reacts_only (const CatchupCandidate *r)
{
  if (opens_with_answer (r))
    return FALSE;
  for (const char *next = r->clean; next;) {
    g_autofree char *folded = NULL;
    g_autofree char *sentence = take_sentence (&next, &folded);
    guint words = catchup_summary_count_words (folded);
    if (words > 0 && !greets (sentence) && !is_only (folded, words, social) &&
        !(words <= 6 && catchup_summary_has_any (folded, reactions)))
      return FALSE;
  }
  return TRUE;
}

/* A reply that opens with a reviewer's verdict. */
static gboolean
gives_verdict (const CatchupCandidate *r)
{
  static const char *const verdicts[] = { "reads fine", "reads well", "looks good", "looks fine", "lgtm", "+1", "ack",
                                          "acked", "sgtm", "approved", "fine by me", "works for me", "👍", NULL };
  return !r->question && catchup_summary_opening_word (r->folded, verdicts) != NULL;
}

/* A quick turn right after a question in a two-person exchange answers it even without a shared word; in a
 * room of more people the next turn may be about anything. */
#define QUICK_SECONDS (10 * 60)
#define NEXT_SECONDS (2 * 60)
#define BARE_ANSWER_WORDS 4
/* what an asker may say to a counter-question before the first question's answer */
#define COUNTERED_WORDS 12

/* The turn that answers question or request q: the first turn by someone else (the one asked, when someone
 * was named) soon after it, that takes it up (or follows it at once), and is not only a counter-question. */
static gint
find_answer (GArray *cands, guint q, GArray *people)
{
  const CatchupCandidate *c = cand (cands, q);
  const char *to = addressee (people, c);
  gboolean two_people = people->len <= 2, countered = FALSE;
  for (guint j = q + 1; j < cands->len && j <= q + REPLY_SPAN; j++) {
    const CatchupCandidate *r = cand (cands, j);
    if (r->msg->ts - c->msg->ts > REPLY_SECONDS)
      break;
    if (g_strcmp0 (r->msg->speaker, c->msg->speaker) == 0) {
      /* after a counter-question, the asker's own story ("I just love watching LeBron …") is what the next reply
       * answers; a short answer to it ("Yep, I made it with coconut milk") lets the first question's answer
       * still follow. The asker asking again moves on: what answers now answers that. */
      if ((countered && !opens_with_answer (r) && r->words > COUNTERED_WORDS) || (r->question && c->question))
        return -1;
      continue;
    }
    if (looks_like_bot (r->msg->speaker, r->folded))
      continue;
    /* "Hey Caroline! Great to hear from you! Wow, what an amazing journey. Congrats!" reacts to the news before
     * the question; it answers nothing */
    if (reacts_only (r))
      continue;
    if (to && g_strcmp0 (r->msg->speaker, to) != 0)
      continue;
    if (is_only (r->folded, r->words, social) && !is_only (r->folded, r->words, answers))
      continue;
    gboolean at_once = two_people && j == q + 1 && c->question && r->msg->ts - c->msg->ts <= QUICK_SECONDS;
    /* the next message within a couple of minutes may answer with a bare "done" in any room, but "ok i think is
     * fully updated" there is someone's own thread */
    gboolean next = j == q + 1 && r->msg->ts - c->msg->ts <= NEXT_SECONDS && r->words <= BARE_ANSWER_WORDS;
    /* "can someone sanity-check the wording" … "reads fine to me": a review asked for, and given */
    gboolean verdict = j == q + 1 && c->worth == CATCHUP_WORTH_REQUEST && gives_verdict (r);
    /* "yuki_n: I need your piece by noon tomorrow" … "it builds, … you'll have it today": the one named answers
     * when they speak right after it */
    gboolean named = to && j == q + 1 && r->msg->ts - c->msg->ts <= NEXT_SECONDS;
    if (!at_once && !verdict && !named && !takes_up (r, c, to != NULL || two_people || next))
      return -1;
    /* a counter-question is no answer; "yes, and when?" is; the answer may follow it ("Is it lactose-free?" …
     * "Sure! I'll come over tomorrow") */
    if (is_counter_question (r)) {
      countered = TRUE;
      continue;
    }
    return j;
  }
  return -1;
}

static void
link_answers (GArray *cands, GArray *people)
{
  for (guint i = 0; i < cands->len; i++) {
    CatchupCandidate *c = cand (cands, i);
    if (!c->question && c->worth != CATCHUP_WORTH_REQUEST)
      continue;
    gint a = find_answer (cands, i, people);
    if (a < 0 || cand (cands, a)->asked >= 0)
      continue;
    c->answer = a;
    cand (cands, a)->asked = i;
    /* the answer to a question is what the question was for */
    if (cand (cands, a)->score > 0)
      cand (cands, a)->score += 0.8;
  }
}

/* ---- leaning on history ---- */

/* What a returning reader most needs spelled out leans on what was said before the window: "the same trick ravi
 * found", "the other spot", "ravi's thing", "per Friday's call", "not repeating last time". */
static const char *const history_phrases[] = {
  "the same", "the other", "last time", "as discussed", "as agreed", "as planned", "not repeating", "once again",
  "re the", "like before", NULL,
};
static const char *const weekdays[] = {
  "monday's", "tuesday's", "wednesday's", "thursday's", "friday's", "saturday's", "sunday's", "yesterday's",
  "today's", "last week's", NULL,
};

/* "ravi's thing": a person of the room or a day, in the possessive, before a noun. */
static gboolean
possessive_reference (const char *folded, GArray *people)
{
  for (const char *p = strstr (folded, "'s "); p; p = strstr (p + 1, "'s ")) {
    const char *start = p;
    while (start > folded && start[-1] != ' ' && start[-1] != '(')
      start--;
    g_autofree char *owner = g_strndup (start, p + 2 - start);
    g_autofree char *noun = g_strndup (p + 3, strcspn (p + 3, " ,.;:!?)"));
    /* "ravi's been …" is "ravi has" */
    if (!g_ascii_isalpha (noun[0]) || catchup_text_is_stop_word (noun) || g_str_has_suffix (noun, "ed") ||
        g_str_has_suffix (noun, "ing"))
      continue;
    if (g_strv_contains (weekdays, owner))
      return TRUE;
    owner[strlen (owner) - 2] = '\0';
    for (guint i = 0; i < people->len; i++)
      if (g_str_equal (g_array_index (people, Person, i).folded, owner))
        return TRUE;
  }
  return FALSE;
}

#define HISTORY_BONUS 0.5

static void
weigh_history (GArray *cands, GArray *people)
{
  for (guint i = 0; i < cands->len; i++) {
    CatchupCandidate *c = cand (cands, i);
    if (c->score > 0 && (catchup_summary_has_any (c->folded, history_phrases) ||
                         possessive_reference (c->folded, people)))
      c->score += HISTORY_BONUS;
  }
}

/* A message that fits the line is shown whole, but for an opening greeting ("Hey John!", "Thanks!"): an
 * excerpt that starts at the sentence a focus matches cut the claim away from short messages ("thanks, I'll look
 * after final. I want to give the reader API a proper read" kept only the second sentence; "yes, both. …" lost
 * its answer). NULL when it does not fit. */
static char *
whole_text (const char *full, guint max_chars)
{
  /* a photo caption is what an excerpt leaves out first: the message fits when its words do */
  g_autofree char *clean = g_strdup (full);
  char *caption = strstr (clean, "[shares ");
  if (caption && caption > clean && strchr (caption, ']') && strchr (caption, ']')[1] == '\0') {
    *caption = '\0';
    g_strchomp (clean);
  }
  if (g_utf8_strlen (clean, -1) > (glong) max_chars)
    return NULL;
  const char *from = clean;
  for (guint k = 0; k < 2; k++) {
    const char *end = strpbrk (from, ".!?");
    while (end && end[1] && end[1] != ' ')
      end = strpbrk (end + 1, ".!?");
    if (!end || !end[1])
      break;
    g_autofree char *head = g_strndup (from, end + 1 - from);
    g_autofree char *folded = g_utf8_casefold (head, -1);
    if (!is_only (folded, catchup_summary_count_words (head), social))
      break;
    from = end + 1;
    while (*from == ' ')
      from++;
  }
  return g_strdup (from);
}

/* "I read that book and loved it": the first sentence leans on what was asked for what it is about. */
static gboolean
points_back (const char *folded)
{
  static const char *const pointers[] = { "that", "those", "it", "them", NULL };
  /* within its first few words: "… emotional support outside them" has its referent in the sentence */
  g_autofree char *first = g_strndup (folded, sentence_end (folded) - folded);
  g_auto (GStrv) words = g_strsplit (g_strstrip (first), " ", 6);
  if (g_strv_length (words) == 6)
    words[5][0] = '\0';
  g_autofree char *opening = g_strjoinv (" ", words);
  return count_words_of (opening, pointers) > 0;
}

/* After an opening "yes": a first sentence of its own that a reader understands without the question ("Yep, I'm
 * hiking with some buddies this weekend"), not "yes, both", "no, it did not" or "yep, I read that book". */
static gboolean
says_on_its_own (const char *rest)
{
  static const char *const subjects[] = { "i", "i'm", "i've", "i'll", "we", "we're", "we've", "we'll", "my", "our",
                                          NULL };
  while (*rest && !g_ascii_isalnum (*rest))
    rest++;
  const char *end = sentence_end (rest);
  g_autofree char *first = g_strndup (rest, end - rest);
  g_autofree char *word = g_strndup (first, strcspn (first, " ,"));
  return catchup_summary_count_words (first) >= 5 && g_strv_contains (subjects, word) && !points_back (first);
}

/* An answer that needs its question to be read: short, opened by yes/no or a pronoun ("yes, both", "it
 * did"), or a few words that share none with it ("Three times a week" after "how often do you train?"). A
 * self-contained answer ("carl owns the backup cron since March") stands on its own. */
static gboolean
needs_question (GArray *cands, const CatchupCandidate *a)
{
  const CatchupCandidate *q = cand (cands, a->asked);
  if (q) {
    g_autoptr (GHashTable) asked = catchup_summary_term_set (q->terms);
    /* the words of the answer itself, without "Thanks, Maria!" */
    g_autofree char *own = whole_text (a->clean, G_MAXUINT);
    g_autoptr (GPtrArray) terms = catchup_summary_terms (own);
    g_autofree char *folded = g_utf8_casefold (own, -1);
    /* "Thanks, John! It had lots of great things like salads": what "it" is, the question says */
    if ((terms->len <= 6 && catchup_summary_overlap (terms, asked) == 0) || points_back (after_reaction (folded)))
      return TRUE;
  }
  /* and a fragment that leaves its subject to the question: "Mostly just chilling at home", "like being on call" */
  static const char *const openers[] = { "yes", "no", "yep", "nope", "yeah", "nah", "sure", "not yet", "both",
                                         "neither", "none", "it", "that", "they", "she", "he", "only", "probably",
                                         "maybe", "definitely", "absolutely", "mostly", "just", "like", "kind of",
                                         "pretty", NULL };
  /* "That's great, Joanna! Iron Man is my top pick" opens with a reaction, not with a pronoun */
  g_autofree char *bare = bare_words (after_reaction (a->folded));
  if (a->words <= 8)
    return TRUE;
  const char *opener = catchup_summary_opening_word (bare, openers);
  return opener && !says_on_its_own (bare + strlen (opener));
}

/* ---- agreement ---- */

static const char *const assent_cues[] = {
  "ok", "okay", "agreed", "agree", "+1", "fine by me", "sounds good", "lgtm", "ack", "yes", "yep", "sure",
  "👍", "let's do that", "makes sense", "works for me", "go for it", "sgtm", "deal", NULL,
};
static const char *const leave_cues[] = {
  "bye", "night", "good night", "cya", "see you", "later", "gotta go", "afk", "brb", NULL,
};

/* Explicit assent: opened by an assent word, short, no question, no "but", no goodbye. */
static gboolean
is_assent (const CatchupCandidate *r)
{
  if (r->question || r->words > 8 || catchup_summary_has_any (r->folded, leave_cues) ||
      catchup_text_has_folded_phrase (r->folded, "but"))
    return FALSE;
  for (guint i = 0; assent_cues[i]; i++)
    if (g_str_has_prefix (r->folded, assent_cues[i]) &&
        (r->folded[strlen (assent_cues[i])] == '\0' || !g_ascii_isalnum (r->folded[strlen (assent_cues[i])])))
      return TRUE;
  return FALSE;
}

/* A decision or a proposal for the group rather than the speaker's own to-do. */
static gboolean
is_group_matter (const CatchupCandidate *c)
{
  if (c->worth == CATCHUP_WORTH_DECISION)
    return TRUE;
  if (c->worth != CATCHUP_WORTH_PLAN)
    return FALSE;
  return catchup_text_has_folded_phrase (c->folded, "we") || catchup_text_has_folded_phrase (c->folded, "let's");
}

#define ASSENT_SECONDS (5 * 60)

/* Assents that reply to line i: the turns right after it that are all assents by others (the first of them
 * the next message), or one that names its speaker; within a few minutes, before anyone raises something else. */
static void
add_agreement (CatchupSummaryLine *line, GArray *cands, guint i)
{
  const CatchupCandidate *c = cand (cands, i);
  g_autofree char *speaker = g_utf8_casefold (c->msg->speaker ? c->msg->speaker : "", -1);

  if (!is_group_matter (c))
    return;
  for (guint j = i + 1; j < cands->len && j <= i + REPLY_SPAN; j++) {
    const CatchupCandidate *r = cand (cands, j);
    gboolean named = *speaker && catchup_text_has_folded_phrase (r->folded, speaker);
    if (r->msg->ts - c->msg->ts > ASSENT_SECONDS || g_strcmp0 (r->msg->speaker, c->msg->speaker) == 0)
      break;
    if (!is_assent (r)) {
      if (named)
        continue;
      break;  /* someone raised something else: later "ok"s answer that */
    }
    gboolean seen = FALSE;
    for (guint k = 0; k < line->agreed->len && !seen; k++)
      seen = g_strcmp0 (((CatchupSummaryItem *) line->agreed->pdata[k])->speaker, r->msg->speaker) == 0;
    if (!seen)
      g_ptr_array_add (line->agreed, catchup_summary_item_new (NULL, r->msg->id, r->msg->speaker, r->msg->ts,
                                                               r->clean));
  }
}

/* ---- choosing lines ---- */

static gint
by_score_desc (gconstpointer a, gconstpointer b)
{
  const CatchupCandidate *x = *(CatchupCandidate *const *) a;
  const CatchupCandidate *y = *(CatchupCandidate *const *) b;
  if (x->score != y->score)
    return x->score < y->score ? 1 : -1;
  /* ties go to the later line: what holds now */
  return x->index < y->index ? 1 : (x->index > y->index ? -1 : 0);
}

/* Mostly the same words as lines already chosen: a bot echo of a human line, a repeated status ("job 481
 * finished", "job 482 finished": numbers do not make a line new). */
static gboolean
is_redundant (const CatchupCandidate *c, GHashTable *covered)
{
  guint words = 0, seen = 0;
  /* a question shares its answer's words, and is still what the answer answers */
  if (c->context->len > 0 || c->answer >= 0)
    return FALSE;
  for (guint t = 0; t < c->terms->len; t++) {
    const char *term = c->terms->pdata[t];
    if (g_ascii_isdigit (term[0]))
      continue;
    words++;
    seen += g_hash_table_contains (covered, term);
  }
  return words > 0 && seen * 100 >= words * 85;
}

typedef struct {
  GArray *cands;
  GPtrArray *order;        /* CatchupCandidate *, best first */
  GHashTable *covered;     /* terms of the chosen lines */
  Budget budget;
  guint entries, rendered;
  gboolean two_people;
  guint pairs;             /* questions shown with their answers */
  gboolean *folding;       /* by candidate: a question read in its answer's line (can_fold) */
  GHashTable *cited;       /* ids of the turns the chosen lines' references quote: a turn is quoted once */
} Chooser;

static gboolean tells_news (const CatchupCandidate *c);
static char *last_question (const char *clean);

/* Openings that hedge or react, telling nothing of the speaker: "I bet it was scary", "I'm so glad you liked it". */
static const char *const hedges[] = { "i bet", "i'm sure", "i hope", "i guess", "i think", "i'm glad",
                                      "i'm so glad", "i'm happy for you", "i'm so happy for you",
                                      "i'm happy to hear", NULL };

/* How often stated says "I", "my", "we" outside the sentences that only hedge ("I bet it was scary", "I'm
 * sure it will"): how much it tells of the speaker. */
static guint
speaker_words (const char *stated)
{
  guint n = 0;
  for (const char *start = stated;;) {
    while (*start == ' ')
      start++;
    const char *end = sentence_end (start);
    g_autofree char *sentence = g_strndup (start, end - start);
    /* "Wow, I hope …" hedges as "I hope …" does */
    static const char *const interjections[] = { "wow", "oh", "aw", "aww", "yeah", "haha", "omg", "ooh", "well",
                                                 NULL };
    const char *opener = catchup_summary_opening_word (sentence, interjections);
    const char *rest = opener && sentence[strlen (opener)] == ',' ? sentence + strlen (opener) + 1 : sentence;
    while (*rest == ' ')
      rest++;
    if (!catchup_summary_opening_word (rest, hedges))
      n += count_words_of (sentence, first_person);
    if (!*end)
      return n;
    start = end + 1;
  }
}

/* "Seeing your hard work pay off must've felt amazing. I bet it was scary too. You're so inspiring.": what is
 * said around a question only reacts to the other's news when it tells nothing of the speaker. */
static gboolean
only_reacts (const char *stated)
{
  return speaker_words (stated) == 0;
}

/* Between two people a question that says no more than what it asks ("Wow! How often do you all work out
 * together?") is read in its answer's line, "… (maria asked: “How often …?”)": one line, not two. */
#define FOLD_CHARS 100
#define FOLD_STATED_TERMS 3

static gboolean
can_fold (const Chooser *ch, const CatchupCandidate *q)
{
  const CatchupCandidate *a = cand (ch->cands, q->answer);
  if (!ch->two_people || !a || a->score <= 0 || !q->question || q->worth == CATCHUP_WORTH_REQUEST ||
      q->worth == CATCHUP_WORTH_DECISION || tells_news (q))
    return FALSE;
  g_autoptr (GString) stated = g_string_new (NULL);
  g_autoptr (GString) asked = g_string_new (NULL);
  split_asked (after_reaction (q->folded), stated, asked);
  /* only a message that asks one thing and says nothing else but a reaction: "Do writing conventions exist? I'll
   * have to look into that … Have you been up to anything tonight?" is more than its last question */
  guint questions;
  g_autofree char *question = earnest_question (q->clean, &questions);
  g_autofree char *folded_question = question ? g_utf8_casefold (question, -1) : NULL;
  /* "What do you think?" says nothing of what it asks about: the message before it does */
  return question && questions == 1 && g_utf8_strlen (question, -1) <= FOLD_CHARS &&
         !asks_small_talk (folded_question) &&
         (count_terms (stated->str) <= FOLD_STATED_TERMS || only_reacts (stated->str) || !tells_of_self (stated->str));
}

/* Whether question q is read in its answer's line: worked out once per choice, it is asked at every take. */
static gboolean
folds_into_answer (const Chooser *ch, const CatchupCandidate *q)
{
  return ch->folding[q->index];
}

/* Whether answer a is shown as its line with its question read in it: "I've been playing for about four months
 * (John asked: “How long have you been playing the piano again?”)" says what is played. */
static gboolean
reads_question (const Chooser *ch, const CatchupCandidate *a)
{
  const CatchupCandidate *q = cand (ch->cands, a->asked);
  return q && q->answer == (gint) a->index && folds_into_answer (ch, q);
}

/* The reference lines c's line adds: its own and those of the answer shown with it, each quoted turn once and
 * none that a chosen line quotes already (the summary quotes a turn once, so charging it again left lines
 * unused: three answers about "them" = the same mentoring turn had cost three lines for one). */
static guint
new_references (const Chooser *ch, const CatchupCandidate *c)
{
  const CatchupCandidate *a = cand (ch->cands, c->answer);
  GPtrArray *contexts[2] = { c->context, a ? a->context : NULL };
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  guint n = 0;
  for (guint k = 0; k < G_N_ELEMENTS (contexts); k++)
    for (guint i = 0; contexts[k] && i < contexts[k]->len; i++) {
      const CatchupSummaryItem *item = contexts[k]->pdata[i];
      if (item->id && (g_hash_table_contains (ch->cited, item->id) || !g_hash_table_add (seen, item->id)))
        continue;
      n += !catchup_summary_item_reads_inline (item);
    }
  return n;
}

static void
cite (Chooser *ch, const CatchupCandidate *c)
{
  for (guint i = 0; c && i < c->context->len; i++) {
    const CatchupSummaryItem *item = c->context->pdata[i];
    if (item->id)
      g_hash_table_add (ch->cited, item->id);
  }
}

/* What c's own line costs in rendered lines: itself, its answer, its "was:" and agreement lines, and its
 * references. */
static guint
line_cost (const Chooser *ch, const CatchupCandidate *c)
{
  GArray *cands = ch->cands;
  g_autoptr (CatchupSummaryLine) probe = catchup_summary_line_new (CATCHUP_SECTION_NEWS, NULL, NULL, 0, NULL);
  add_agreement (probe, cands, c - &g_array_index (cands, CatchupCandidate, 0));
  gboolean folds = folds_into_answer (ch, c);
  const CatchupCandidate *a = cand (cands, c->answer);
  return 1 + ((c->answer >= 0 || c->question) && !folds) + (folds && a->question && a->answer >= 0) +
         (c->replaces->len > 0) + new_references (ch, c) + (probe->agreed->len > 0);
}

/* What choosing c costs: its line, or, for an answer that needs its question, the question's line with it as the
 * reply (an answer that asks back is then no question line of its own). */
static guint
cost (const Chooser *ch, const CatchupCandidate *c)
{
  const CatchupCandidate *q = cand (ch->cands, c->asked);
  if (!q || q->chosen || !(needs_question (ch->cands, c) || reads_question (ch, c)))
    return line_cost (ch, c);
  return line_cost (ch, q);
}

/* Questions shown with their answers in a conversation of two, at most. */
#define MAX_PAIRS 3

/* c, when there is one, is shown under a line being chosen: no line of its own any more. */
static void
move_under (Chooser *ch, CatchupCandidate *c)
{
  if (c && c->chosen) {
    c->chosen = FALSE;
    ch->entries--;
    ch->rendered--;
  }
  if (c)
    c->covered = TRUE;
}

static gboolean
take (Chooser *ch, CatchupCandidate *c, gboolean forced)
{
  if (c->chosen || c->covered || c->superseded_by >= 0 || c->score <= 0)
    return FALSE;
  /* a repeat says nothing the line it repeats does not: that line covers it */
  if (is_redundant (c, ch->covered)) {
    c->covered = TRUE;
    return FALSE;
  }
  /* between two people a question that only leads to a self-contained answer is said by the answer: the line
   * is the answer's (in a room of more, who asked whom is part of what happened) */
  CatchupCandidate *answer = cand (ch->cands, c->answer);
  if (ch->two_people && answer && answer->score > 0 && !folds_into_answer (ch, c) &&
      !needs_question (ch->cands, answer) &&
      !points_back (after_reaction (answer->folded)) && !tells_news (c) &&
      c->worth != CATCHUP_WORTH_REQUEST && c->worth != CATCHUP_WORTH_DECISION) {
    c->covered = TRUE;
    return !answer->chosen && take (ch, answer, forced);
  }
  guint n = cost (ch, c);
  /* the last decision may take an entry beyond the count, never room beyond the length */
  if ((!forced && ch->entries >= ch->budget.entries) || ch->rendered + n > ch->budget.rendered)
    return FALSE;
  /* between two people each question and answer costs two lines for what the answer says: a few such pairs,
   * then the room goes to news */
  gboolean pair = (c->answer >= 0 && c->worth != CATCHUP_WORTH_REQUEST) ||
                  (c->asked >= 0 && needs_question (ch->cands, c));
  const CatchupCandidate *question = c->answer >= 0 ? c : cand (ch->cands, c->asked);
  if (ch->two_people && pair && !forced && ch->pairs >= MAX_PAIRS && !(question && folds_into_answer (ch, question)))
    return FALSE;
  /* an answer that needs its question is shown under it: the line is the question's; one whose question folds
   * into it reads the question in its own line */
  if (c->asked >= 0 && (needs_question (ch->cands, c) || reads_question (ch, c))) {
    CatchupCandidate *q = cand (ch->cands, c->asked);
    if (q->chosen || q->covered)
      return FALSE;
    c->covered = TRUE;
    c = q;
  }
  c->folds = folds_into_answer (ch, c);
  ch->pairs += pair && !c->folds;
  c->chosen = TRUE;
  /* a question carries its answer: an answer chosen on its own moves under it */
  CatchupCandidate *a = cand (ch->cands, c->answer);
  move_under (ch, a);
  /* an answer that asks back brings its own answer into the folded line ("… wanna plan something special? ↳
   * Let's plan something special!") */
  move_under (ch, c->folds && a->question ? cand (ch->cands, a->answer) : NULL);
  ch->entries++;
  ch->rendered += n;
  cite (ch, c);
  cite (ch, a);
  for (guint t = 0; t < c->terms->len; t++)
    g_hash_table_add (ch->covered, c->terms->pdata[t]);
  return TRUE;
}

/* The last quarter of the window always gets lines, and its last decision always one: what holds now is what a
 * returning reader needs most. Then the best of the whole window, whatever its place. */
#define TAIL_SCORE 2.0
#define SESSION_SCORE 2.5

/* A pause this long starts another session of the room. */
#define SESSION_PAUSE (3 * 3600)

/* Each session of the window (a stretch without a pause of hours) gets its best line before any gets a further
 * one: "the grand opening is tomorrow", a whole evening's news, is not outweighed by a busier day. */
static void
take_each_session (Chooser *ch)
{
  guint n = ch->cands->len;
  g_autofree guint *session = g_new0 (guint, MAX (n, 1));
  for (guint i = 1; i < n; i++)
    session[i] = session[i - 1] + (cand (ch->cands, i)->msg->ts - cand (ch->cands, i - 1)->msg->ts > SESSION_PAUSE);
  guint sessions = n ? session[n - 1] + 1 : 1;
  g_autofree gboolean *heard = g_new0 (gboolean, sessions);
  for (guint i = 0; i < n; i++)
    heard[session[i]] |= cand (ch->cands, i)->chosen || cand (ch->cands, i)->covered;
  for (guint i = 0; i < ch->order->len; i++) {
    CatchupCandidate *c = ch->order->pdata[i];
    if (!heard[session[c->index]] && c->score >= SESSION_SCORE && take (ch, c, FALSE))
      heard[session[c->index]] = TRUE;
  }
}

#define LEFT_OUT_TERMS 5

static gboolean tells_own_event (const char *folded);
static gboolean muses_or_praises (const char *folded);

/* What the line kept for the footer goes to: a question or answer, the speaker's own news, or what does not
 * only muse or praise; readers found it given to "Yes, Maria! I'm here for you. … Keep shining!" */
static gboolean
worth_the_line (const CatchupCandidate *c)
{
  return c->asked >= 0 || c->answer >= 0 || tells_own_event (c->folded) ||
         !muses_or_praises (after_reaction (c->folded));
}

static gboolean
topic_shown (GArray *cands, guint topic)
{
  for (guint i = 0; i < cands->len; i++) {
    const CatchupCandidate *c = cand (cands, i);
    if (c->topic == topic && (c->chosen || c->covered || c->superseded_by >= 0))
      return TRUE;
  }
  return FALSE;
}

static guint
topics_left_out (GArray *cands)
{
  g_autoptr (GPtrArray) terms = g_ptr_array_new_with_free_func (g_free);
  return catchup_summary_left_out (cands, terms, LEFT_OUT_TERMS);
}

static void
choose (GArray *cands, GArray *people, Budget *budget)
{
  g_autoptr (GPtrArray) order = g_ptr_array_new ();
  g_autoptr (GHashTable) covered = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree gboolean *folding = g_new0 (gboolean, MAX (cands->len, 1));
  g_autoptr (GHashTable) cited = g_hash_table_new (g_str_hash, g_str_equal);
  Chooser ch = { cands, order, covered, *budget, 0, 0, people->len <= 2, 0, folding, cited };
  for (guint i = 0; i < cands->len; i++)
    folding[i] = can_fold (&ch, cand (cands, i));
  guint tail = cands->len - cands->len / 4;

  for (guint i = 0; i < cands->len; i++)
    if (cand (cands, i)->score > 0)
      g_ptr_array_add (order, cand (cands, i));
  g_ptr_array_sort (order, by_score_desc);

  for (guint i = cands->len; i-- > 0;) {
    CatchupCandidate *c = cand (cands, i);
    if (c->worth == CATCHUP_WORTH_DECISION && c->score > 0 && take (&ch, c, TRUE))
      break;
  }
  guint tail_quota = MAX (1, budget->entries / 4);
  for (guint i = 0, got = 0; i < order->len && got < tail_quota; i++) {
    CatchupCandidate *c = order->pdata[i];
    /* a closing "have a great day" does not stand for the window's end */
    if (c->index >= cand (cands, MIN (tail, cands->len - 1))->index && c->score >= TAIL_SCORE &&
        take (&ch, c, FALSE))
      got++;
  }
  take_each_session (&ch);
  for (guint i = 0; i < order->len; i++)
    take (&ch, order->pdata[i], FALSE);
  /* the rendered line kept for "N smaller topics left out" is one more line when no topic is left out, and
   * the line of the topic when one would be: a message worth a line on its own, not a closing "I will keep
   * you posted" */
  guint left = topics_left_out (cands);
  if (left > 1)
    return;
  ch.budget.rendered++;
  ch.budget.entries++;
  for (guint i = 0; i < order->len; i++) {
    CatchupCandidate *c = order->pdata[i];
    if (c->score >= TAIL_SCORE && (left == 0 || !topic_shown (cands, c->topic)) && worth_the_line (c) &&
        take (&ch, c, FALSE))
      break;
  }
  *budget = ch.budget;
}

/* ---- lines ---- */

static CatchupSection
section_of (const CatchupCandidate *c)
{
  /* a question shown with its answer is asked, whatever else it mentions ("question for tomorrow, do you…") */
  if (c->question && c->answer >= 0 && c->worth != CATCHUP_WORTH_DECISION)
    return CATCHUP_SECTION_ASKED;
  switch (c->worth) {
  case CATCHUP_WORTH_DECISION:
    return CATCHUP_SECTION_DECISIONS;
  case CATCHUP_WORTH_QUESTION:
  case CATCHUP_WORTH_REQUEST:
    return CATCHUP_SECTION_ASKED;
  case CATCHUP_WORTH_PLAN:
  case CATCHUP_WORTH_ACTION:
    return CATCHUP_SECTION_PLANS;
  default:
    return c->question ? CATCHUP_SECTION_ASKED : CATCHUP_SECTION_NEWS;
  }
}

/* The text without the questions it ends with, when what comes before them says something: "… Any inspiring
 * things in your room?" closing an answer, or "What about you?" after news, asks what the summary does not
 * answer. */
static char *
without_closing_questions (const char *clean)
{
  g_autofree char *said = g_strstrip (catchup_summary_said (clean));
  const char *cut = NULL;
  for (const char *start = said;;) {
    while (*start == ' ')
      start++;
    if (!*start)
      break;
    const char *end = sentence_end (start);
    /* "who doesn't love Peter Parker's struggles …?" makes a claim: a question to the other says "you", or is
     * short ("Got something new?") */
    g_autofree char *folded = g_utf8_casefold (start, end - start);
    if (*end == '?' && (count_words_of (folded, second_person) > 0 || catchup_summary_count_words (folded) <= 6))
      cut = cut ? cut : start;
    else
      cut = NULL;
    if (!*end)
      break;
    start = end + 1;
  }
  if (!cut)
    return g_strdup (clean);
  g_autofree char *before = g_strstrip (g_strndup (said, cut - said));
  /* the "…" says that the message goes on */
  return count_terms (before) >= 4 ? g_strconcat (before, " …", NULL) : g_strdup (clean);
}

static char *
show_text (const char *clean, GHashTable *focus, guint max_chars)
{
  char *whole = whole_text (clean, max_chars);
  return whole ? whole : catchup_summary_excerpt (clean, focus, max_chars);
}

/* Whether someone else spoke soon after c: then an answer may be there that the summary did not recognise,
 * and "no reply yet" would be a claim it cannot make. */
static gboolean
others_spoke_after (GArray *cands, const CatchupCandidate *c)
{
  for (guint j = c - &g_array_index (cands, CatchupCandidate, 0) + 1; j < cands->len; j++) {
    const CatchupCandidate *r = cand (cands, j);
    if (r->msg->ts - c->msg->ts > REPLY_SECONDS)
      break;
    if (g_strcmp0 (r->msg->speaker, c->msg->speaker) != 0 && !looks_like_bot (r->msg->speaker, r->folded))
      return TRUE;
  }
  return FALSE;
}

/* What a message brings that the window had not said, for an excerpt to start at: "Thanks, Nate! It was a real
 * roller coaster … Spider-Man has always been a favorite of mine" is about Spider-Man. */
/* "He was …", "they seemed interested", "those mountains": a sentence that opens with a pronoun or a
 * demonstrative leans on the one before it for what it is about. */
static gboolean
opens_with_pronoun (const char *folded)
{
  static const char *const pronouns[] = { "he", "she", "it", "they", "them", "his", "her", "their", "those", "these",
                                          "this", "that", "he's", "she's", "it's", "they're", "there", NULL };
  return catchup_summary_opening_word (folded, pronouns) != NULL;
}

/* "Hey Nate, long time no talk!": a short sentence opened by a greeting says nothing of its own. */
static gboolean
greets (const char *sentence)
{
  static const char *const greetings[] = { "hey", "hi", "hello", "long time", "good morning", "morning", NULL };
  g_autofree char *folded = g_utf8_casefold (sentence, -1);
  return catchup_summary_count_words (folded) <= 6 && catchup_summary_opening_word (folded, greetings) != NULL;
}

static guint
new_in (GPtrArray *terms, const CatchupCandidate *c, GHashTable *first_use, GHashTable *add_to)
{
  guint n = 0;
  for (guint t = 0; t < terms->len; t++)
    if (GPOINTER_TO_UINT (g_hash_table_lookup (first_use, terms->pdata[t])) == c->index + 1) {
      n++;
      if (add_to)
        g_hash_table_add (add_to, g_strdup (terms->pdata[t]));
    }
  return n;
}

/* Whether a casefolded sentence is a claim of its own: it decides, plans or tells (a cue), or its subject is the
 * speaker ("I've been busy with writing projects"); "I'm so glad you liked it" counts only when hedges do. */
static gboolean
states_claim (const char *folded, gboolean hedges_count)
{
  CatchupWorth worth;
  double weight;
  guint hits;
  g_autofree char *subject = g_strndup (folded, strcspn (folded, " ,"));
  return cue_class (folded, &worth, &weight, &hits) ||
         (g_strv_contains (first_person, subject) && (hedges_count || !catchup_summary_opening_word (folded, hedges)));
}

/* The sentence that starts at *next (past its spaces), as written, and casefolded in *folded; *next moves past
 * it, to NULL after the last. */
static char *
take_sentence (const char **next, char **folded)
{
  const char *start = *next;
  while (*start == ' ')
    start++;
  const char *end = sentence_end (start);
  *next = *end ? end + 1 : NULL;
  char *sentence = g_strndup (start, end - start);
  *folded = g_utf8_casefold (sentence, -1);
  return sentence;
}

/* "I'm so glad you enjoyed it! … By the way, I finished up my writing for my book last week.": a later sentence
 * that turns to another subject ("by the way", "on another note") after sentences that react or chat brings the
 * news. Its new words are the focus, unless the message opens with news of its own (a cue, or a first
 * sentence that tells of the speaker and is no hedge). */
static gboolean
add_shift_focus (GHashTable *focus, const CatchupCandidate *c, const char *said, GHashTable *first_use)
{
  static const char *const shifts[] = { "by the way", "on another note", "btw", "anyway", "oh, and", "also,",
                                        "guess what", NULL };
  gboolean opening = TRUE;
  for (const char *next = said; next;) {
    g_autofree char *folded = NULL;
    g_autofree char *sentence = take_sentence (&next, &folded);
    if (!opening && catchup_summary_opening_word (folded, shifts)) {
      g_autoptr (GPtrArray) terms = catchup_summary_terms (sentence);
      return new_in (terms, c, first_use, focus) >= 2;
    }
    if (opening && states_claim (folded, FALSE))
      return FALSE;
    opening = FALSE;
  }
  return FALSE;
}

/* "I just joined a fire-fighting brigade", "I'm thinking of setting up something like this for my kids": a
 * clause with the speaker as its subject that tells what happened to them or what they mean to do. */
static gboolean
tells_own_event (const char *folded)
{
  static const char *const intentions[] = { "thinking of", "thinking about", "planning", "going to", "gonna",
                                            "about to", NULL };
  return tells_of_self (folded) &&
         (catchup_summary_has_any (folded, events) || catchup_summary_has_any (folded, intentions));
}

/* A maxim ("it's amazing how books take us away") or praise of the other ("I'm really inspired by your drive"),
 * more "you" than "I". */
static gboolean
muses_or_praises (const char *folded)
{
  guint you = count_words_of (folded, second_person);
  return catchup_summary_has_any (folded, musings) || (you > 0 && you >= count_words_of (folded, first_person));
}

/* The excerpt starts at the first sentence that says something, unless that has no cue of its own and a later one
 * brings at least twice as much that is new: then the focus is that sentence's new words. */
static void
add_news_focus (GHashTable *focus, const CatchupCandidate *c, GHashTable *first_use)
{
  g_autoptr (GPtrArray) sentences = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  g_autoptr (GArray) leans = g_array_new (FALSE, FALSE, sizeof (gboolean));
  guint first = G_MAXUINT, best = 0, best_new = 0, event = G_MAXUINT;
  gboolean skipped = FALSE, first_claims = FALSE;
  /* a photo's caption describes the picture: the claim is in what the speaker wrote */
  g_autofree char *said = g_strstrip (catchup_summary_said (c->clean));
  if (add_shift_focus (focus, c, said, first_use))
    return;
  for (const char *next = said; next;) {
    g_autofree char *folded = NULL;
    g_autofree char *sentence = take_sentence (&next, &folded);
    GPtrArray *terms = catchup_summary_terms (sentence);
    guint n = new_in (terms, c, first_use, NULL);
    /* thanks before the news ("Your support means a lot. Losing my job was a bummer, …") is no claim */
    gboolean pep_only = catchup_summary_has_any (folded, pep);
    skipped |= first == G_MAXUINT && pep_only;
    gboolean content = terms->len >= 3 && !greets (sentence) && !pep_only;
    /* "The meetings went really well. … and they seemed interested": a sentence with a pronoun in it leans
     * on the ones before it */
    static const char *const third_person[] = { "he", "she", "they", "them", "his", "her", "their", "him",
                                                "they're", "he's", "she's", NULL };
    gboolean lean = opens_with_pronoun (folded) || count_words_of (folded, third_person) > 0;
    if (content && first == G_MAXUINT) {
      first = sentences->len;
      /* a first sentence that decides, plans or tells, or tells of the speaker, is the claim, however much
       * follows it, unless it muses and a later one tells what happened to the speaker */
      first_claims = states_claim (folded, TRUE);
      /* only a sentence that tells nothing of the speaker gives way: a maxim ("Taking time off is so
       * important"), or praise of the other ("I'm really inspired by your drive") */
      if (tells_own_event (folded) || (tells_of_self (folded) && !muses_or_praises (folded)))
        event = first;
    } else if (content && event == G_MAXUINT && !lean && tells_own_event (folded)) {
      event = sentences->len;
    }
    if (n > best_new)
      best = sentences->len, best_new = n;
    g_array_append_val (leans, lean);
    g_ptr_array_add (sentences, terms);
  }
  if (first == G_MAXUINT)
    return;
  /* "Taking time off for our fam is so important. … That beach pic reminded me of a vacation we had in
   * California": the speaker's own news is the claim */
  if (event != G_MAXUINT && event != first) {
    new_in (sentences->pdata[event], c, first_use, focus);
    return;
  }
  if (first_claims) {
    if (skipped)
      new_in (sentences->pdata[first], c, first_use, focus);
    return;
  }
  /* the claim starts where the thanks before it end, unless a later sentence brings twice as much and does not
   * lean on the one before it ("…He was such an important part of our family" cut away Max) */
  gboolean later = best != first && best_new >= 2 * new_in (sentences->pdata[first], c, first_use, NULL) &&
                   !g_array_index (leans, gboolean, best);
  if (later || skipped)
    new_in (sentences->pdata[later ? best : first], c, first_use, focus);
}

static void
add_reply (CatchupSummaryLine *line, GArray *cands, const CatchupCandidate *c, GHashTable *first_use,
           guint max_chars)
{
  const CatchupCandidate *a = cand (cands, c->answer);
  if (!a) {
    line->no_reply = section_of (c) == CATCHUP_SECTION_ASKED && !others_spoke_after (cands, c);
    return;
  }
  g_autoptr (GHashTable) focus = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  /* "Nope, never been on a sports team. …": an answer that opens with its answer keeps its start */
  if (!opens_with_answer (a))
    add_news_focus (focus, a, first_use);
  g_autofree char *said = without_closing_questions (a->clean);
  g_autofree char *text = show_text (said, g_hash_table_size (focus) ? focus : NULL, max_chars);
  g_ptr_array_add (line->reply, catchup_summary_item_new (NULL, a->msg->id, a->msg->speaker, a->msg->ts, text));
  g_ptr_array_add (line->sources, g_strdup (a->msg->id));
}

static void
add_replaced (CatchupSummaryLine *line, const CatchupCandidate *c, guint max_chars)
{
  for (guint i = 0; i < c->replaces->len; i++) {
    CatchupMessage *m = c->replaces->pdata[i];
    g_autofree char *clean = catchup_summary_clean (m->text);
    g_autoptr (GHashTable) focus = catchup_summary_term_set (c->terms);
    g_autofree char *text = catchup_summary_excerpt (clean, focus, max_chars);
    g_ptr_array_add (line->supersedes, catchup_summary_item_new (NULL, m->id, m->speaker, m->ts, text));
  }
}

/* A question that first tells the speaker's own news ("Opening the dance studio's been a great experience … Will
 * you show me?"): the news is the claim, the question follows it. */
static gboolean
tells_news (const CatchupCandidate *c)
{
  g_autoptr (GString) stated = g_string_new (NULL);
  g_autoptr (GString) asked = g_string_new (NULL);
  split_asked (after_reaction (c->folded), stated, asked);
  /* "some authors really have such an influence on us" muses: news has the speaker as a subject */
  return speaker_words (stated->str) > 0 && tells_of_self (stated->str) && count_terms (stated->str) >= 6;
}

/* The last sentence of clean that asks, outside a photo caption, or NULL. */
static char *
last_question (const char *clean)
{
  g_autofree char *said = catchup_summary_said (clean);
  char *q = strrchr (said, '?');
  if (!q)
    return NULL;
  char *start = q;
  while (start > said && !(strchr (".!?", start[-1]) && start[0] == ' '))
    start--;
  return g_strstrip (g_strndup (start, q + 1 - start));
}

/* A question that first tells news, shown with its answer: the news, and the question the answer answers even
 * when the message does not fit ("I totally understand why reading means so much to you. … What's your favorite
 * book?"). */
static char *
news_and_question (const char *clean, guint max_chars)
{
  g_autofree char *whole = whole_text (clean, max_chars);
  g_autofree char *question = last_question (clean);
  if (whole || !question || g_utf8_strlen (question, -1) + 20 > (glong) max_chars)
    return show_text (clean, NULL, max_chars);
  guint room = max_chars - (guint) g_utf8_strlen (question, -1) - 3;
  g_autofree char *news = catchup_summary_excerpt (clean, NULL, room);
  if (strstr (news, question))
    return g_steal_pointer (&news);
  /* the excerpt ends in "…" when it was cut: the question follows the elision */
  return g_str_has_suffix (news, "…") ? g_strconcat (news, " ", question, NULL)
                                       : g_strconcat (news, " … ", question, NULL);
}

/* The line's text keeps the expression its reference explains in view, or the reference dangles. */
static char *
line_text (const CatchupCandidate *c, GHashTable *first_use, guint max_chars)
{
  /* a question, answered or not, must show what it asks; a statement that ends in a request ("they come back in
   * rc2 … dfarrow can you do that one too?") keeps its statement */
  gboolean asking = section_of (c) == CATCHUP_SECTION_ASKED && c->question && c->worth != CATCHUP_WORTH_REQUEST;
  g_autoptr (GHashTable) focus = asking && !tells_news (c)
                                   ? catchup_summary_question_focus (c->clean)
                                   : g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  /* the expressions a "↳" line explains stay in view; an expression the detector flagged that nothing explains
   * is no reason to cut the line ("I just joined a new LGBTQ activist group" was cut for "a real difference") */
  for (guint i = 0; c->answer < 0 && i < c->context->len; i++) {
    const CatchupSummaryItem *item = c->context->pdata[i];
    g_autoptr (GPtrArray) terms = catchup_summary_terms (item->ref ? item->ref : "");
    for (guint t = 0; t < terms->len; t++)
      g_hash_table_add (focus, g_strdup (terms->pdata[t]));
  }
  /* a question shown with its answer keeps what it asks */
  if (g_hash_table_size (focus) == 0 && c->answer < 0)
    add_news_focus (focus, c, first_use);
  if (asking && tells_news (c))
    return news_and_question (c->clean, max_chars);
  /* news that ends in small talk ("… What about you?") is shown as news */
  g_autofree char *said = c->question || c->answer >= 0 || c->worth == CATCHUP_WORTH_REQUEST
                            ? g_strdup (c->clean)
                            : without_closing_questions (c->clean);
  return show_text (said, g_hash_table_size (focus) ? focus : NULL, max_chars);
}

/* term -> 1 + the index of the window message that first uses it */
static GHashTable *
first_uses (GArray *cands)
{
  GHashTable *first = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < cands->len; i++) {
    GPtrArray *terms = cand (cands, i)->terms;
    for (guint t = 0; t < terms->len; t++)
      if (!g_hash_table_contains (first, terms->pdata[t]))
        g_hash_table_insert (first, terms->pdata[t], GUINT_TO_POINTER (i + 1));
  }
  return first;
}

/* Moves the references of a candidate to its line (cite_once says each turn once). */
static void
take_context (GPtrArray *to, GPtrArray *from)
{
  while (from->len > 0)
    g_ptr_array_add (to, g_ptr_array_steal_index (from, 0));
}

/* An answer whose first sentence, after a reaction, is a few words: what it answers ("Just the GoT series.",
 * "Movies, dinner out, that kind of thing."). */
static gboolean
answers_at_once (const CatchupCandidate *a)
{
  /* past a reaction and a greeting or thanks ("Thanks, Nate!") */
  for (const char *rest = after_reaction (a->folded);;) {
    while (*rest == ' ')
      rest++;
    const char *end = sentence_end (rest);
    g_autofree char *first = g_strndup (rest, end - rest + (*end ? 1 : 0));
    guint words = catchup_summary_count_words (first);
    if (!*end || !is_only (first, words, social))
      return words <= 6 && !catchup_summary_has_any (first, pep);
    rest = end + 1;
  }
}

/* The start of the last sentence of text, past the spaces before it. */
static const char *
last_sentence (const char *text)
{
  const char *last = NULL;
  for (const char *start = text;;) {
    while (*start == ' ')
      start++;
    if (*start)
      last = start;
    const char *end = sentence_end (start);
    if (!*end)
      return last;
    start = end + 1;
  }
}

/* Whether sentence names a thing: a word the answer uses too ("Those colors really look like a sunset" for "the
 * sunset was …"), or a name that is not a speaker's ("LeBron is incredible"). */
static gboolean
names_subject (GArray *cands, const CatchupCandidate *a, const char *sentence)
{
  g_autoptr (GPtrArray) terms = catchup_summary_terms (sentence);
  g_autoptr (GHashTable) answer = catchup_summary_term_set (a->terms);
  if (catchup_summary_overlap (terms, answer) > 0)
    return TRUE;
  for (const char *p = sentence; *p; p++) {
    if (!g_ascii_isupper (*p) || (p > sentence && p[-1] != ' '))
      continue;
    gsize n = strspn (p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
    g_autofree char *word = g_ascii_strdown (p, n);
    /* "That's …" opens a sentence; "Wow Joanna, …" names the one asked */
    gboolean named = p > sentence;
    for (guint i = 0; named && i < cands->len; i++)
      named = g_ascii_strcasecmp (cand (cands, i)->msg->speaker, word) != 0;
    if (named)
      return TRUE;
  }
  return FALSE;
}

/* What a folded line shows of its question: the question, with "…" when its message said more before it, and
 * with the sentence before it when the question only points at a subject that sentence names ("LeBron is
 * incredible. Have you ever met him?", not "…Have you ever met him?"). */
static char *
asked_part (GArray *cands, const CatchupCandidate *q, const char *question)
{
  static const char *const pointing[] = { "it", "them", "him", "her", NULL };
  static const char *const dummy[] = { "how's it going", "how is it going", "how's it coming", NULL };
  g_autofree char *said = catchup_summary_said (q->clean);
  const char *at = question ? strstr (said, question) : NULL;
  if (!at)
    return g_strdup (question);
  g_autofree char *before = g_strstrip (g_strndup (said, at - said));
  g_autofree char *folded_question = g_utf8_casefold (question, -1);
  const char *lead = catchup_summary_has_any (folded_question, pointing) &&
                     !catchup_summary_has_any (folded_question, dummy) ? last_sentence (before) : NULL;
  g_autofree char *folded_lead = lead ? g_utf8_casefold (lead, -1) : NULL;
  /* "Wow, that must have been awesome!", "Appreciate your support.": nothing the question points at */
  if (lead && (count_terms (after_reaction (folded_lead)) < 2 || cheers (folded_lead) ||
               catchup_summary_has_any (folded_lead, pointing) || !names_subject (cands, cand (cands, q->answer), lead)))
    lead = NULL;
  gboolean more = count_terms (before) > (lead ? count_terms (lead) : 2);
  return g_strconcat (more ? "…" : "", lead ? lead : "", lead ? " " : "", question, NULL);
}

/* A question read in its answer's line: the answer's line, in the answer's section, covering both, with the question's
 * references and the answer's own. */
static CatchupSummaryLine *
folded_line (GArray *cands, CatchupCandidate *q, GHashTable *first_use, const Budget *b)
{
  CatchupCandidate *a = cand (cands, q->answer);
  g_autoptr (GHashTable) focus = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  /* the question read in the line asks what the answer's first words answer ("Just the GoT series.") */
  if (!opens_with_answer (a) && !answers_at_once (a))
    add_news_focus (focus, a, first_use);
  /* an answer that asks back keeps its question when its own answer is shown under it */
  g_autofree char *said = a->question && a->answer >= 0 ? g_strdup (a->clean) : without_closing_questions (a->clean);
  g_autofree char *text = show_text (said, g_hash_table_size (focus) ? focus : NULL, b->line_chars);
  guint questions;
  g_autofree char *question = earnest_question (q->clean, &questions);
  /* the line is the answer's claim: it stands with the news it is part of, in time order, unless it asks back */
  CatchupSection section = a->question ? CATCHUP_SECTION_ASKED : section_of (a);
  CatchupSummaryLine *line = catchup_summary_line_new (section, a->msg->id, a->msg->speaker,
                                                       a->msg->ts, text);
  g_ptr_array_add (line->sources, g_strdup (q->msg->id));
  g_autofree char *shown = asked_part (cands, q, question);
  line->asked = catchup_summary_item_new (NULL, q->msg->id, q->msg->speaker, q->msg->ts, shown);
  take_context (line->context, a->context);
  take_context (line->context, q->context);
  add_replaced (line, a, b->context_chars);
  if (a->question && a->answer >= 0)
    add_reply (line, cands, a, first_use, b->context_chars);
  return line;
}

static CatchupSummaryLine *
make_line (GArray *cands, guint i, CatchupMemory *mem, GHashTable *first_use, const Budget *b)
{
  CatchupCandidate *c = cand (cands, i);
  if (c->folds)
    return folded_line (cands, c, first_use, b);
  g_autofree char *text = line_text (c, first_use, b->line_chars);
  CatchupSummaryLine *line = catchup_summary_line_new (section_of (c), c->msg->id, c->msg->speaker, c->msg->ts,
                                                       text);
  take_context (line->context, c->context);
  add_replaced (line, c, b->context_chars);
  add_agreement (line, cands, i);
  if (c->question || c->worth == CATCHUP_WORTH_REQUEST)
    add_reply (line, cands, c, first_use, b->context_chars);
  /* an answer shown under its question brings the references that explain it */
  if (line->reply->len > 0)
    take_context (line->context, cand (cands, c->answer)->context);
  return line;
}

/* ---- the summary ---- */

/* A line whose reference the memory resolves is what the memory is for: it weighs more. */
#define RESOLVED_BONUS 1.0

static void
weigh_references (GArray *cands, CatchupMemory *mem, guint max_chars)
{
  g_autoptr (CatchupSummaryRefs) refs = NULL;

  if (!mem || !mem->turns || mem->turns->len == 0)
    return;
  refs = catchup_summary_refs_new (mem, cands);
  for (guint i = 0; i < cands->len; i++) {
    CatchupCandidate *c = cand (cands, i);
    if ((c->score > 0 || c->gaps->len > 0) && c->words >= 3) {
      catchup_summary_resolve (c->context, c, i, refs, max_chars);
      if (c->context->len > 0)
        c->score += RESOLVED_BONUS + (c->score == 0 ? MIN (c->terms->len, 20) / 20.0 : 0);
    }
  }
}

/* Whether a line shows expr: in its own text, its question or its reply. */
static gboolean
shows (const CatchupSummaryLine *line, const char *expr)
{
  g_autofree char *phrase = g_utf8_casefold (expr, -1);
  const char *texts[3] = { line->text, line->asked ? line->asked->text : NULL,
                           line->reply->len ? ((CatchupSummaryItem *) line->reply->pdata[0])->text : NULL };
  for (guint i = 0; i < G_N_ELEMENTS (texts); i++) {
    g_autofree char *folded = g_utf8_casefold (texts[i] ? texts[i] : "", -1);
    if (catchup_text_has_folded_phrase (folded, phrase))
      return TRUE;
  }
  return FALSE;
}

/* Whether text writes expr only inside a title: "Lord of the Rings" has no "the rings" to explain. */
static gboolean
in_title (const char *text, const char *expr)
{
  gsize n = strlen (expr);
  if (!text || g_ascii_strncasecmp (expr, "the ", 4) != 0)
    return FALSE;
  for (const char *p = text; (p = strchr (p, ' ')); p++) {
    const char *at = p + 1;
    if (g_ascii_strncasecmp (at, expr, n) != 0 || g_ascii_isalnum (at[n]) || !g_ascii_isupper (at[4]))
      continue;
    /* "… Lord of the Rings": a capitalised word, "of", then the phrase written with a capital */
    const char *of = p - 2;
    if (of < text || strncmp (of, "of", 2) != 0 || of == text || of[-1] != ' ')
      continue;
    const char *word = of - 1;
    while (word > text && word[-1] != ' ')
      word--;
    if (g_ascii_isupper (*word))
      return TRUE;
  }
  return FALSE;
}

/* A reference explains words the line shows: one whose expression the excerpt cut away, or that was in the part
 * of a question its answer's line does not quote ("↳ “the hike”" under "… (Mel asked: “Is that recent?”)"),
 * explains nothing on screen. */
static void
drop_unseen_references (GPtrArray *lines)
{
  for (guint i = 0; i < lines->len; i++) {
    CatchupSummaryLine *line = lines->pdata[i];
    for (guint k = line->context->len; k-- > 0;) {
      const CatchupSummaryItem *item = line->context->pdata[k];
      if (item->ref && (!shows (line, item->ref) || in_title (line->text, item->ref)))
        g_ptr_array_remove_index (line->context, k);
    }
  }
}

/* A turn is quoted once: not again under a later line, nor twice under one ("them" in a question and in its
 * answer, both the lead-in's "younger players"). */
static void
cite_once (GPtrArray *lines)
{
  g_autoptr (GHashTable) cited = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < lines->len; i++) {
    GPtrArray *context = ((CatchupSummaryLine *) lines->pdata[i])->context;
    for (guint k = 0; k < context->len;) {
      const CatchupSummaryItem *item = context->pdata[k];
      /* contains first: g_hash_table_add would store this item's id, freed with the item, in place of the other */
      if (item->id && g_hash_table_contains (cited, item->id)) {
        g_ptr_array_remove_index (context, k);
        continue;
      }
      if (item->id)
        g_hash_table_add (cited, item->id);
      k++;
    }
  }
}

static guint
drop_kind (GPtrArray *lines, guint kind, guint excess)
{
  for (guint i = lines->len; i-- > 0 && excess > 0;) {
    CatchupSummaryLine *l = lines->pdata[i];
    GPtrArray *items[] = { NULL, l->agreed, l->supersedes, l->context };
    if (kind == 0 && l->no_reply) {
      l->no_reply = FALSE;
      excess--;
    } else if (kind == 1 && l->agreed->len > 0) {
      g_ptr_array_set_size (l->agreed, 0);
      excess--;
    } else if (kind > 1) {
      while (items[kind]->len > 0 && excess > 0) {
        g_ptr_array_set_size (items[kind], items[kind]->len - 1);
        excess--;
      }
    }
  }
  return excess;
}

/* Items are dropped where the budget is exceeded, latest lines first: "no reply yet", then agreement,
 * replaced states and references (a line without the reference it leans on dangles; without the state it
 * replaced it still says what holds now); answers stay with their questions. */
static void
fit_items (GPtrArray *lines, guint rendered)
{
  guint total = 0;
  for (guint i = 0; i < lines->len; i++) {
    CatchupSummaryLine *l = lines->pdata[i];
    total += 1 + catchup_summary_items_rendered (l->context) + l->supersedes->len + l->reply->len + (l->agreed->len > 0) + l->no_reply;
  }
  guint excess = total > rendered ? total - rendered : 0;
  for (guint kind = 0; kind < 4 && excess > 0; kind++)
    excess = drop_kind (lines, kind, excess);
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
  const LengthProfile *profile = &profiles[opts->length <= CATCHUP_LENGTH_DETAILED ? opts->length
                                                                                  : CATCHUP_LENGTH_NORMAL];
  CatchupSummary *summary = catchup_summary_new (window);
  g_autoptr (GArray) cands = make_candidates (window, mem);

  /* the window's speakers: who a message can address, name in the possessive, and whether two talk */
  g_autoptr (GArray) people = people_of (cands);
  link_answers (cands, people);
  weigh_history (cands, people);
  weigh_references (cands, mem, profile->context_chars);
  guint topics = catchup_summary_topics (cands);
  catchup_summary_supersede (cands, mem);
  Budget budget = budget_for (profile, cands, topics);
  choose (cands, people, &budget);
  g_autoptr (GHashTable) first_use = first_uses (cands);
  for (guint i = 0; i < cands->len; i++)
    if (cand (cands, i)->chosen)
      g_ptr_array_add (summary->lines, make_line (cands, i, mem, first_use, &budget));
  drop_unseen_references (summary->lines);
  catchup_summary_explain_in_window (summary->lines, cands, budget.context_chars);
  cite_once (summary->lines);
  fit_items (summary->lines, budget.rendered);
  summary->topics_left_out = catchup_summary_left_out (cands, summary->left_out_terms, LEFT_OUT_TERMS);
  /* still in time order here, so "For you" is too */
  catchup_summary_mark_for_you (summary, window, opts->me);
  catchup_summary_sort_lines (summary->lines);
  catchup_summary_apply_records (summary, window, opts->records, opts->me);
  return summary;
}
