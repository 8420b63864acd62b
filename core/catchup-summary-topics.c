#include "config.h"

#include <string.h>

#include "catchup-summary-private.h"
#include "catchup-text.h"

/*
 * Topics and the latest state. Turns belong to one topic when one answers the other, or when they share what
 * names a topic: an issue or PR number, a name, a date, a number, a rare word. Within a topic a later turn that
 * changes a date, a time, a number or a person of an earlier one, with a word that says so ("moves to", "from
 * now on", "instead"), supersedes it: the summary shows the later one, with what it replaced, and never the
 * earlier as current. Memory turns older than the window can be revised the same way.
 */

/* ---- union-find over candidates ---- */

static guint
root (guint *parent, guint i)
{
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

static void
join (guint *parent, guint a, guint b)
{
  a = root (parent, a);
  b = root (parent, b);
  if (a != b)
    parent[MAX (a, b)] = MIN (a, b);
}

/* ---- words that name a topic ---- */

static GHashTable *
document_frequency (GArray *cands)
{
  GHashTable *df = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < cands->len; i++) {
    CatchupCandidate *c = &g_array_index (cands, CatchupCandidate, i);
    g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
    for (guint t = 0; t < c->terms->len; t++) {
      char *term = c->terms->pdata[t];
      if (!g_hash_table_add (seen, term))
        continue;
      g_hash_table_insert (df, term, GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (df, term)) + 1));
    }
  }
  return df;
}

static guint
rare_limit (GArray *cands)
{
  return MAX (2, cands->len / 8);
}

/* A candidate's rare terms (rare in the window: at most limit turns use them), each once, as sorted ids: topics
 * compare every turn with the 80 before it, and comparing strings there cost more than the rest of the summary. */
static GArray *
rare_terms (const CatchupCandidate *c, GHashTable *df, GHashTable *ids, guint limit)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint t = 0; t < c->terms->len; t++) {
    char *term = c->terms->pdata[t];
    if (strlen (term) < 3 || GPOINTER_TO_UINT (g_hash_table_lookup (df, term)) > limit)
      continue;
    gpointer id;
    if (!g_hash_table_lookup_extended (ids, term, NULL, &id)) {
      id = GUINT_TO_POINTER (g_hash_table_size (ids));
      g_hash_table_insert (ids, term, id);
    }
    guint v = GPOINTER_TO_UINT (id), k = 0;
    while (k < out->len && g_array_index (out, guint, k) < v)
      k++;
    if (k == out->len || g_array_index (out, guint, k) != v)
      g_array_insert_val (out, k, v);
  }
  return out;
}

static guint
shared_rare (GArray *a, GArray *b)
{
  guint n = 0;
  for (guint i = 0, k = 0; i < a->len && k < b->len;) {
    guint x = g_array_index (a, guint, i), y = g_array_index (b, guint, k);
    n += x == y;
    i += x <= y;
    k += y <= x;
  }
  return n;
}

/* Turns this close may continue each other's topic on one rare word; farther apart they need two. */
#define NEAR_TURNS 3
#define TOPIC_REACH 80

guint
catchup_summary_topics (GArray *cands)
{
  g_autofree guint *parent = g_new (guint, MAX (cands->len, 1));
  g_autoptr (GHashTable) df = document_frequency (cands);
  g_autoptr (GHashTable) worthy = g_hash_table_new (g_direct_hash, g_direct_equal);
  guint limit = rare_limit (cands);

  g_autoptr (GHashTable) ids = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) rare = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);

  for (guint i = 0; i < cands->len; i++) {
    parent[i] = i;
    g_ptr_array_add (rare, rare_terms (&g_array_index (cands, CatchupCandidate, i), df, ids, limit));
  }
  for (guint i = 0; i < cands->len; i++) {
    CatchupCandidate *c = &g_array_index (cands, CatchupCandidate, i);
    if (c->asked >= 0)
      join (parent, i, c->asked);
    if (((GArray *) rare->pdata[i])->len == 0)
      continue;
    for (guint j = i > TOPIC_REACH ? i - TOPIC_REACH : 0; j < i; j++) {
      guint shared = shared_rare (rare->pdata[i], rare->pdata[j]);
      if (shared >= 2 || (shared >= 1 && i - j <= NEAR_TURNS))
        join (parent, i, j);
    }
  }
  for (guint i = 0; i < cands->len; i++) {
    CatchupCandidate *c = &g_array_index (cands, CatchupCandidate, i);
    c->topic = root (parent, i);
    if (c->score >= 1.0)
      g_hash_table_add (worthy, GUINT_TO_POINTER (c->topic + 1));
  }
  return g_hash_table_size (worthy);
}

/* ---- values: dates, times, numbers, people ---- */

typedef enum { VALUE_DATE, VALUE_TIME, VALUE_NUMBER, VALUE_PERSON, N_VALUE_KINDS } ValueKind;
#define ALL_KINDS ((1u << N_VALUE_KINDS) - 1)

static const char *const date_words[] = {
  "mon", "monday", "tue", "tues", "tuesday", "wed", "wednesday", "thu", "thur", "thurs", "thursday", "fri",
  "friday", "sat", "saturday", "sun", "sunday", "jan", "january", "feb", "february", "mar", "march", "apr",
  "april", "may", "jun", "june", "jul", "july", "aug", "august", "sep", "sept", "september", "oct", "october",
  "nov", "november", "dec", "december", "tomorrow", "tonight", "today", NULL,
};

static gboolean
in_words (const char *w, const char *const *list)
{
  for (guint i = 0; list[i]; i++)
    if (strcmp (w, list[i]) == 0)
      return TRUE;
  return FALSE;
}

/* Every word of every turn compared is looked up: a set, filled once (lookups are thread-safe). */
static gboolean
is_date_word (const char *w)
{
  static GHashTable *set;
  if (g_once_init_enter (&set)) {
    GHashTable *s = g_hash_table_new (g_str_hash, g_str_equal);
    for (guint i = 0; date_words[i]; i++)
      g_hash_table_add (s, (gpointer) date_words[i]);
    g_once_init_leave (&set, s);
  }
  return g_hash_table_contains (set, w);
}

static ValueKind
kind_of_word (const char *w)
{
  gsize len = strlen (w);
  if (!g_ascii_isdigit (w[0]) && w[0] != '#')
    return is_date_word (w) ? VALUE_DATE : N_VALUE_KINDS;
  if (strchr (w, ':') && g_ascii_isdigit (w[0]))
    return VALUE_TIME;
  if (len > 2 && g_ascii_isdigit (w[0]) && (g_str_has_suffix (w, "am") || g_str_has_suffix (w, "pm")))
    return VALUE_TIME;
  if (len > 2 && g_ascii_isdigit (w[0]) && (g_str_has_suffix (w, "st") || g_str_has_suffix (w, "nd") ||
                                            g_str_has_suffix (w, "rd") || g_str_has_suffix (w, "th")))
    return VALUE_DATE;
  /* a commit id or a name with digits in it ("5e0c1d2", "s390x", "3b") names a thing, it holds no value */
  gsize letters = 0;
  for (const char *p = w; *p; p++)
    letters += g_ascii_isalpha (*p);
  if (g_ascii_isdigit (w[0]) && letters > 1)
    return N_VALUE_KINDS;
  if (g_ascii_isdigit (w[0]) || (w[0] == '#' && g_ascii_isdigit (w[1])))
    return VALUE_NUMBER;
  return N_VALUE_KINDS;
}

typedef struct {
  GHashTable *values[N_VALUE_KINDS];  /* casefolded value words */
  GHashTable *words;                  /* content terms that are not values */
} Facts;

static void
facts_clear (Facts *f)
{
  for (guint k = 0; k < N_VALUE_KINDS; k++)
    g_clear_pointer (&f->values[k], g_hash_table_unref);
  g_clear_pointer (&f->words, g_hash_table_unref);
}

/* The values a text states and its other content terms. People are the room's speakers it names. */
#define MAX_NUMBERS 3

/* "Hey Joanna", "thanks ravi": the name after a greeting addresses a person, it is no state. */
static const char *const greetings[] = { "hey", "hi", "hello", "thanks", "thx", "ty", "congrats", "morning", "bye",
                                         "night", "welcome", NULL };

static void
facts_of (Facts *f, const char *text, GPtrArray *text_terms, const char *own_speaker, GHashTable *people)
{
  /* a photo's caption describes the picture: it states nothing that holds */
  g_autofree char *said = catchup_summary_said (text);
  gboolean caption = strstr (text ? text : "", "[shares ") != NULL;
  g_autofree char *folded = g_utf8_casefold (said, -1);
  g_auto (GStrv) words = g_strsplit_set (folded, " ,;()[]!?\"", -1);
  g_autoptr (GPtrArray) terms = text_terms && !caption ? g_ptr_array_ref (text_terms) : catchup_summary_terms (said);
  g_autofree char *own = g_utf8_casefold (own_speaker ? own_speaker : "", -1);

  for (guint k = 0; k < N_VALUE_KINDS; k++)
    f->values[k] = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; words[i]; i++) {
    char *w = words[i];
    gsize len = strlen (w);
    /* "ravi: ..." addresses ravi; it says nothing about who does what */
    gboolean address = (i == 0 && len > 1 && w[len - 1] == ':') || (i > 0 && in_words (words[i - 1], greetings));
    while (len > 0 && strchr (".:", w[len - 1]))
      w[--len] = '\0';
    if (!*w)
      continue;
    ValueKind k = kind_of_word (w);
    /* an issue number or a version names what a line is about, not a state it holds */
    if (k == VALUE_NUMBER && (w[0] == '#' || strchr (w, '.')))
      continue;
    if (k == N_VALUE_KINDS && !address && g_hash_table_contains (people, w) && strcmp (w, own) != 0)
      k = VALUE_PERSON;
    if (k != N_VALUE_KINDS)
      g_hash_table_add (f->values[k], g_strdup (w));
  }
  /* "(1) … (2) … (5)", "14 total, 12 closed, 2 open": a list or a tally, not one value that a state holds */
  if (g_hash_table_size (f->values[VALUE_NUMBER]) > MAX_NUMBERS)
    g_hash_table_remove_all (f->values[VALUE_NUMBER]);
  f->words = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint t = 0; t < terms->len; t++) {
    const char *term = terms->pdata[t];
    if (kind_of_word (term) == N_VALUE_KINDS && !g_hash_table_contains (people, term))
      g_hash_table_add (f->words, g_strdup (term));
  }
}

/* A kind of value both state, with a value the later one has and the earlier has not; kinds: a mask of
 * 1 << ValueKind. */
static gboolean
changes_value (const Facts *later, const Facts *earlier, guint kinds)
{
  for (guint k = 0; k < N_VALUE_KINDS; k++) {
    if (!(kinds & (1u << k)))
      continue;
    if (g_hash_table_size (later->values[k]) == 0 || g_hash_table_size (earlier->values[k]) == 0)
      continue;
    GHashTableIter it;
    gpointer v;
    g_hash_table_iter_init (&it, later->values[k]);
    while (g_hash_table_iter_next (&it, &v, NULL))
      if (!g_hash_table_contains (earlier->values[k], v))
        return TRUE;
  }
  return FALSE;
}

/* Whether the earlier states one of the values of old (the state a line says it replaced), in kinds. */
static gboolean
states_old_value (const Facts *old, const Facts *earlier, guint kinds)
{
  for (guint k = 0; k < N_VALUE_KINDS; k++) {
    if (!(kinds & (1u << k)))
      continue;
    GHashTableIter it;
    gpointer v;
    g_hash_table_iter_init (&it, old->values[k]);
    while (g_hash_table_iter_next (&it, &v, NULL))
      if (g_hash_table_contains (earlier->values[k], v))
        return TRUE;
  }
  return FALSE;
}

/* What a revising line says: the values of its revising sentences, and those it says it replaced ("… Thu Mar
 * 19 instead of Tue 17th": Tue 17th), which an earlier state must hold to be the one replaced ("the default goes
 * to 256 MiB instead of 64" replaces no turn that already says 256 MiB). */
typedef struct {
  Facts revised;
  Facts old;
} Revision;

static gboolean
names_old_value (const Revision *r)
{
  for (guint k = 0; k < N_VALUE_KINDS; k++)
    if (g_hash_table_size (r->old.values[k]) > 0)
      return TRUE;
  return FALSE;
}

static gboolean
replaces_state (const Revision *r, const Facts *earlier, guint kinds)
{
  gboolean said_old = FALSE;
  for (guint k = 0; k < N_VALUE_KINDS; k++)
    said_old |= (kinds & (1u << k)) && g_hash_table_size (r->old.values[k]) > 0;
  return changes_value (&r->revised, earlier, kinds) && (!said_old || states_old_value (&r->old, earlier, kinds));
}

static guint
shared_words (const Facts *a, const Facts *b)
{
  guint n = 0;
  GHashTableIter it;
  gpointer w;
  g_hash_table_iter_init (&it, a->words);
  while (g_hash_table_iter_next (&it, &w, NULL))
    n += g_hash_table_contains (b->words, w);
  return n;
}

/* Words that say a state changed. Only words that say it of a state: "actually", "anymore", "no longer" and a
 * bare "now" read as revisions on the dev windows replaced lines they had nothing to do with ("what actually
 * ships", "your reproducer no longer crashes"). */
static const char *const revision_cues[] = {
  "moves to", "moved to", "move to", "moving to", "is now", "are now", "it's now", "now on", "from now",
  "instead", "changed to", "change to", "correction", "rescheduled", "postponed", "pushed to", "pushed back",
  "new date", "new time", "takes over", "taking over", "switch to", "switched to", "replaced", "replaces",
  "after all", "scratch that", NULL,
};

static GHashTable *
people_of (GArray *cands, CatchupMemory *mem)
{
  GHashTable *people = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < cands->len; i++) {
    const char *s = g_array_index (cands, CatchupCandidate, i).msg->speaker;
    if (s && *s)
      g_hash_table_add (people, g_utf8_casefold (s, -1));
  }
  for (guint i = 0; mem && mem->turns && i < mem->turns->len; i++) {
    const char *s = ((CatchupMessage *) mem->turns->pdata[i])->speaker;
    if (s && *s)
      g_hash_table_add (people, g_utf8_casefold (s, -1));
  }
  return people;
}

/* Memory turns revised at most this many per line: the latest states they replace. */
#define MAX_REPLACED 2

/* Facts are cut only for the turns a revising line is compared with, each once. */
typedef struct {
  Facts *window;     /* per candidate */
  Facts *memory;     /* per memory turn */
  GHashTable *people;
} FactCache;

static const Facts *
window_facts (FactCache *fc, GArray *cands, guint i)
{
  Facts *f = &fc->window[i];
  if (!f->words) {
    CatchupCandidate *c = &g_array_index (cands, CatchupCandidate, i);
    facts_of (f, c->clean, c->terms, c->msg->speaker, fc->people);
  }
  return f;
}

/* A text without its sentences that ask: "do we version the pkg-config file for 3.x?" states no state. */
static char *
stated_only (const char *text)
{
  GString *out = g_string_new (NULL);
  const char *start = text ? text : "";
  for (const char *p = start;; p++) {
    if (*p && !catchup_summary_ends_sentence (text, p))
      continue;
    if (*p != '?')
      g_string_append_len (out, start, p - start + (*p ? 1 : 0));
    if (!*p)
      break;
    start = p + 1;
  }
  return g_string_free (out, FALSE);
}

static const Facts *
memory_facts (FactCache *fc, CatchupMemory *mem, guint i)
{
  Facts *f = &fc->memory[i];
  if (!f->words) {
    CatchupMessage *t = mem->turns->pdata[i];
    g_autofree char *stated = stated_only (t->text);
    facts_of (f, stated, NULL, t->speaker, fc->people);
  }
  return f;
}

/* Whether an ASCII text can share two of the line's words: each word (a stem) must occur in it. Cutting a
 * turn's facts costs more than the rest of the check; most memory turns fail here. Other text is cut anyway. */
static gboolean
may_share (const Facts *line, const char *text)
{
  for (const char *p = text; *p; p++)
    if ((guchar) *p >= 0x80)
      return TRUE;
  g_autofree char *lower = g_ascii_strdown (text, -1);
  guint n = 0;
  GHashTableIter it;
  gpointer w;
  g_hash_table_iter_init (&it, line->words);
  while (g_hash_table_iter_next (&it, &w, NULL)) {
    /* a stem is a piece of its word but for "policies" -> "policy" */
    g_autofree char *piece = g_str_has_suffix (w, "y") ? g_strndup (w, strlen (w) - 1) : g_strdup (w);
    if (strstr (lower, piece) && ++n >= 2)
      return TRUE;
  }
  return FALSE;
}

/* The sentences of a line that say a state changed: the value it revises is in them ("main is now 3.1.0-dev";
 * "… need an ack from me or gsteen" two sentences on names no new owner of anything). */
static char *
revising_sentences (const char *clean)
{
  GString *out = g_string_new (NULL);
  const char *start = clean;
  for (const char *p = clean;; p++) {
    if (*p && !catchup_summary_ends_sentence (clean, p) && !(*p == ';' && (p[1] == ' ' || p[1] == '\0')))
      continue;
    g_autofree char *sentence = g_strndup (start, p - start);
    g_autofree char *folded = g_utf8_casefold (sentence, -1);
    if (catchup_summary_has_any (folded, revision_cues))
      g_string_append_printf (out, "%s%s", out->len ? ". " : "", sentence);
    if (!*p)
      break;
    start = p + 1;
  }
  return g_string_free (out, FALSE);
}

/* What a revising text says it replaced: the words after each "instead of" up to the clause's end. */
static char *
replaced_text (const char *revising)
{
  GString *out = g_string_new (NULL);
  g_autofree char *folded = g_utf8_casefold (revising, -1);
  for (const char *p = strstr (folded, "instead of "); p; p = strstr (p + 1, "instead of ")) {
    const char *from = p + strlen ("instead of ");
    gsize len = strcspn (from, ",;.!?");
    g_string_append_printf (out, "%s%.*s", out->len ? ", " : "", (int) len, from);
  }
  return g_string_free (out, FALSE);
}

static void
supersede_memory (CatchupCandidate *c, const Facts *fc_line, const Revision *revised, FactCache *fc,
                  CatchupMemory *mem, gint64 start)
{
  for (guint i = mem && mem->turns ? mem->turns->len : 0; i-- > 0 && c->replaces->len < MAX_REPLACED;) {
    CatchupMessage *t = mem->turns->pdata[i];
    if (t->ts >= start || !may_share (fc_line, t->text ? t->text : ""))
      continue;
    const Facts *ft = memory_facts (fc, mem, i);
    /* A bare number is no state against an older turn on a loosely shared topic: a version, a count or an
     * issue number differs between any two messages about a release. Dates, times and people are; a number is
     * when the line names the one it replaced and the turn states it ("256 MiB instead of 64"). */
    guint kinds = states_old_value (&revised->old, ft, 1u << VALUE_NUMBER) ? ALL_KINDS
                                                                           : ALL_KINDS & ~(1u << VALUE_NUMBER);
    if (shared_words (fc_line, ft) >= 2 && replaces_state (revised, ft, kinds))
      g_ptr_array_add (c->replaces, t);
  }
}

void
catchup_summary_supersede (GArray *cands, CatchupMemory *mem)
{
  guint n_mem = mem && mem->turns ? mem->turns->len : 0;
  g_autoptr (GHashTable) people = people_of (cands, mem);
  g_autofree Facts *window = g_new0 (Facts, MAX (cands->len, 1));
  g_autofree Facts *memory = g_new0 (Facts, MAX (n_mem, 1));
  FactCache fc = { window, memory, people };
  gint64 start = cands->len ? g_array_index (cands, CatchupCandidate, 0).msg->ts : 0;

  for (guint i = 0; i < cands->len; i++) {
    CatchupCandidate *c = &g_array_index (cands, CatchupCandidate, i);
    if (c->score <= 0 || c->question || !catchup_summary_has_any (c->folded, revision_cues))
      continue;
    const Facts *fi = window_facts (&fc, cands, i);
    g_autofree char *cue_text = revising_sentences (c->clean);
    g_autofree char *old_text = replaced_text (cue_text);
    Revision revised;
    memset (&revised, 0, sizeof revised);
    facts_of (&revised.revised, cue_text, NULL, c->msg->speaker, people);
    facts_of (&revised.old, old_text, NULL, c->msg->speaker, people);
    for (guint j = i; j-- > 0;) {
      CatchupCandidate *e = &g_array_index (cands, CatchupCandidate, j);
      if (e->score <= 0 || e->superseded_by >= 0 || e->question)
        continue;
      const Facts *fj = window_facts (&fc, cands, j);
      guint shared = shared_words (fi, fj);
      /* one shared word is a topic only when one line answers the other; a topic of rare words alone let a
       * line replace unrelated ones */
      gboolean replies = c->asked == (gint) j || e->answer == (gint) i;
      if ((shared >= 2 || (shared >= 1 && replies)) && replaces_state (&revised, fj, ALL_KINDS)) {
        e->superseded_by = i;
        g_ptr_array_add (c->replaces, e->msg);
      }
    }
    /* a line that names what it replaced ("… instead of 2019 16.8") needs no "was:" from the memory to say it */
    if (c->replaces->len == 0 && !names_old_value (&revised))
      supersede_memory (c, fi, &revised, &fc, mem, start);
    facts_clear (&revised.revised);
    facts_clear (&revised.old);
  }
  for (guint i = 0; i < cands->len; i++)
    facts_clear (&window[i]);
  for (guint i = 0; i < n_mem; i++)
    facts_clear (&memory[i]);
}

/* ---- what did not fit ---- */

#define LEFT_OUT_SCORE 2.0

/* Words that are no stop words for retrieval but name no topic either. */
static const char *const vague_words[] = {
  "anyone", "anybody", "someone", "somebody", "everyone", "everybody", "anything", "something", "everything",
  "nothing", "rather", "actually", "maybe", "still", "always", "never", "already", "again", "soon", "later",
  "today", "tonight", "tomorrow", "yesterday", "week", "weekend", "time", "thing", "things", "stuff", "lots",
  "little", "good", "great", "nice", "sure", "thanks", "thank", "though", "anyway", "pretty", "quite", "kind",
  "sort", "well", "back", "right", "able", "going", "gonna", "want", "need", "think", "know", "like", "make",
  "made", "said", "says", "looks", "look", "sounds", "sound", "glad", "love", "awesome", "amazing", "cool",
  "fine", "last", "next", "first", "many", "every", "since", "without", "around", "there", "these", "those",
  "yours", "mine", "where", "whether", NULL,
};

typedef struct {
  char *word;           /* without the punctuation around it */
  gboolean starts;      /* the first word of a sentence */
} Word;

static void
word_clear (Word *w)
{
  g_free (w->word);
}

/* The words of what a message's speaker wrote (its photo caption left out), each marked when it opens a
 * sentence: a capital there names nothing. */
static GArray *
words_of (const char *clean)
{
  GArray *out = g_array_new (FALSE, TRUE, sizeof (Word));
  g_array_set_clear_func (out, (GDestroyNotify) word_clear);
  g_autofree char *said = catchup_summary_said (clean);
  g_auto (GStrv) raw = g_strsplit (said, " ", -1);
  gboolean starts = TRUE;
  for (guint i = 0; raw[i]; i++) {
    const char *r = raw[i];
    gsize len = strlen (r);
    gsize a = strspn (r, ",.;:!?()[]{}\"/'-");
    gsize b = len;
    while (b > a && strchr (",.;:!?()[]{}\"/'-", r[b - 1]))
      b--;
    if (b > a) {
      Word w = { g_strndup (r + a, b - a), starts };
      g_array_append_val (out, w);
    }
    if (len > 0)
      starts = strchr (".!?", r[len - 1]) != NULL;
  }
  return out;
}

static gboolean
is_stop (const Word *w)
{
  g_autofree char *lower = g_utf8_strdown (w->word, -1);
  return catchup_text_is_stop_word (lower);
}

/* Whether word i ends a phrase a determiner opens: "the poetry reading", "my pottery", "the biggest challenge"
 * names its noun, not "biggest". */
static gboolean
ends_noun_phrase (GArray *words, guint i, const char *const *determiners)
{
  const Word *next = i + 1 < words->len ? &g_array_index (words, Word, i + 1) : NULL;
  /* "a puppy named Max": a participle after the noun starts what is said of it */
  if (next && !next->starts && !is_stop (next) && !g_str_has_suffix (next->word, "ed") &&
      !g_str_has_suffix (next->word, "ing"))
    return FALSE;
  for (guint k = 1; k <= 2 && k <= i; k++) {
    const Word *w = &g_array_index (words, Word, i - k);
    g_autofree char *lower = g_utf8_strdown (w->word, -1);
    if (in_words (lower, determiners))
      return TRUE;
    if (catchup_text_is_stop_word (lower) || g_array_index (words, Word, i - k + 1).starts)
      return FALSE;
  }
  return FALSE;
}

/* How well a word of a line names its topic: a name written with a capital inside a sentence ("Catan",
 * "Prague") or a technical token ("s390x", "rc2") best, then a noun after a determiner or a possessive ("the
 * poetry reading", "my pottery"), then any longer word; a word another message uses too gains. 0 for words
 * that name nothing: stop and vague words, contractions, a person of the room, the message's opening word,
 * words in -ly. */
static double
naming_weight (GArray *words, guint i, GHashTable *df, GHashTable *people)
{
  static const char *const determiners[] = { "the", "a", "an", "my", "our", "your", "his", "her", "their", "this",
                                             "that", "new", "some", NULL };
  const Word *word = &g_array_index (words, Word, i);
  const char *w = word->word;
  g_autofree char *lower = g_utf8_strdown (w, -1);
  if (i == 0 || strlen (w) < 4 || strchr (w, '\'') || strstr (w, "’") || in_words (lower, vague_words) ||
      g_str_has_suffix (lower, "ly") || catchup_text_is_stop_word (lower) || g_hash_table_contains (people, lower))
    return 0;
  g_autoptr (GPtrArray) terms = catchup_summary_terms (w);
  if (terms->len != 1)
    return 0;
  gboolean digit = FALSE, alpha = FALSE;
  for (const char *p = w; *p; p++) {
    digit |= g_ascii_isdigit (*p);
    alpha |= g_ascii_isalpha (*p);
  }
  double weight = 1.0;
  if ((digit && alpha) || (!word->starts && g_ascii_isupper (w[0]) && g_ascii_islower (w[1])))
    weight += 2.0;
  else if (ends_noun_phrase (words, i, determiners))
    weight += 1.0;
  if (!digit && GPOINTER_TO_UINT (g_hash_table_lookup (df, terms->pdata[0])) >= 2)
    weight += 0.5;
  return weight;
}

/* What a word must weigh to name a topic: a name or a technical token, or the noun of a determiner's phrase. */
#define NAMING_WEIGHT 2.0

/* The keyword of a topic: the word of its best line that names it best, as written. */
static char *
keyword (const CatchupCandidate *c, GHashTable *df, GHashTable *people)
{
  g_autoptr (GArray) words = words_of (c->clean);
  gint best = -1;
  double best_weight = 0;
  for (guint i = 0; i < words->len; i++) {
    double weight = naming_weight (words, i, df, people);
    if (weight > best_weight)
      best = (gint) i, best_weight = weight;
  }
  /* a word that is neither a name nor a noun after a determiner ("liked", "helps", "together") names no topic */
  return best >= 0 && best_weight >= NAMING_WEIGHT ? g_strdup (g_array_index (words, Word, best).word) : NULL;
}

guint
catchup_summary_left_out (GArray *cands, GPtrArray *terms_out, guint max_terms)
{
  g_autoptr (GHashTable) shown = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr (GHashTable) best = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr (GHashTable) df = document_frequency (cands);
  g_autoptr (GHashTable) people = people_of (cands, NULL);
  g_autoptr (GHashTable) named = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint n = 0;

  for (guint i = 0; i < cands->len; i++) {
    CatchupCandidate *c = &g_array_index (cands, CatchupCandidate, i);
    gpointer key = GUINT_TO_POINTER (c->topic + 1);
    CatchupCandidate *b = g_hash_table_lookup (best, key);
    if (c->chosen || c->covered || c->superseded_by >= 0)
      g_hash_table_add (shown, key);
    if (c->score >= LEFT_OUT_SCORE && c->superseded_by < 0 && (!b || c->score > b->score))
      g_hash_table_insert (best, key, c);
  }
  for (guint i = 0; i < cands->len; i++) {
    CatchupCandidate *c = &g_array_index (cands, CatchupCandidate, i);
    gpointer key = GUINT_TO_POINTER (c->topic + 1);
    if (g_hash_table_lookup (best, key) != c || g_hash_table_contains (shown, key))
      continue;
    /* a topic with no word to name it by is no help in "N smaller topics left out: …", and two named by the
     * same word read as one */
    g_autofree char *k = keyword (c, df, people);
    if (!k || g_hash_table_contains (named, k))
      continue;
    n++;
    g_hash_table_add (named, g_strdup (k));
    if (terms_out->len < max_terms)
      g_ptr_array_add (terms_out, g_steal_pointer (&k));
  }
  return n;
}
