#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-error.h"
#include "catchup-records.h"
#include "catchup-store-private.h"
#include "catchup-text.h"

/* A record keeps the first few content terms of its message as its subject: enough for a later message on
 * the same thing to share one, few enough that unrelated lines of one person rarely do. */
#define SUBJECT_TERMS 8
/* Heads looked at when a new record looks for the one it updates. */
#define LINK_CANDIDATES 32

static const char *const kind_names[] = {
  "fact", "stance", "commitment", "decision", "norm", "relation", "status", NULL,
};

const char *
catchup_record_kind_to_string (CatchupRecordKind kind)
{
  return kind < CATCHUP_RECORD_N_KINDS ? kind_names[kind] : "fact";
}

gboolean
catchup_record_kind_from_string (const char *name, CatchupRecordKind *out)
{
  for (guint i = 0; name && kind_names[i]; i++)
    if (strcmp (name, kind_names[i]) == 0)
      {
        *out = i;
        return TRUE;
      }
  return FALSE;
}

guint
catchup_record_family (CatchupRecordKind kind)
{
  return kind == CATCHUP_RECORD_STATUS ? CATCHUP_RECORD_COMMITMENT : kind;
}

CatchupRecord *
catchup_record_copy (const CatchupRecord *rec)
{
  CatchupRecord *copy = g_memdup2 (rec, sizeof *rec);

  copy->source = g_strdup (rec->source);
  copy->owner = g_strdup (rec->owner);
  copy->subject = g_strdup (rec->subject);
  copy->text = g_strdup (rec->text);
  copy->msg_id = g_strdup (rec->msg_id);
  return copy;
}

void
catchup_record_free (CatchupRecord *rec)
{
  if (rec == NULL)
    return;
  g_free (rec->source);
  g_free (rec->owner);
  g_free (rec->subject);
  g_free (rec->text);
  g_free (rec->msg_id);
  g_free (rec);
}

/* ---------- word-boundary matching ---------- */

static gboolean
is_ascii (const char *text)
{
  for (const guchar *p = (const guchar *) text; *p; p++)
    if (*p >= 0x80)
      return FALSE;
  return TRUE;
}

char *
catchup_records_fold (const char *text)
{
  g_autofree char *valid = NULL, *folded = NULL;
  GString *out;

  /* most chat lines: casefolding plain ASCII is lowering it, and it holds no typographic apostrophe */
  if (text == NULL || is_ascii (text))
    return g_ascii_strdown (text ? text : "", -1);
  valid = g_utf8_make_valid (text, -1);
  folded = g_utf8_casefold (valid, -1);
  out = g_string_sized_new (strlen (folded));
  for (const char *p = folded; *p; p++)
    {
      /* U+2018 and U+2019, the typographic apostrophes phones type */
      if ((guchar) p[0] == 0xe2 && (guchar) p[1] == 0x80 && ((guchar) p[2] == 0x98 || (guchar) p[2] == 0x99))
        {
          g_string_append_c (out, '\'');
          p += 2;
          continue;
        }
      g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

static gboolean
is_word_char (gunichar c)
{
  if (c < 0x80)
    return g_ascii_isalnum (c);
  return g_unichar_isalnum (c) || g_unichar_ismark (c);
}

gssize
catchup_records_find_phrase (const char *folded_text, const char *phrase)
{
  gsize len = strlen (phrase);
  gboolean word_start, word_end;

  if (len == 0 || folded_text == NULL)
    return -1;
  word_start = is_word_char (g_utf8_get_char (phrase));
  word_end = is_word_char (g_utf8_get_char (g_utf8_find_prev_char (phrase, phrase + len)));
  for (const char *hit = strstr (folded_text, phrase); hit; hit = strstr (hit + 1, phrase))
    {
      const char *prev = hit > folded_text ? g_utf8_find_prev_char (folded_text, hit) : NULL;
      gboolean open_before = !word_start || prev == NULL || !is_word_char (g_utf8_get_char (prev));
      gboolean open_after = !word_end || hit[len] == '\0' || !is_word_char (g_utf8_get_char (hit + len));

      if (open_before && open_after)
        return hit - folded_text;
    }
  return -1;
}

gboolean
catchup_records_has_phrase (const char *folded_text, const char *phrase)
{
  return catchup_records_find_phrase (folded_text, phrase) >= 0;
}

gboolean
catchup_records_has_any_phrase (const char *folded_text, const char *const *phrases)
{
  for (guint i = 0; phrases[i]; i++)
    if (catchup_records_has_phrase (folded_text, phrases[i]))
      return TRUE;
  return FALSE;
}

/* ---------- the rule-based writer ---------- */

typedef struct {
  CatchupRecordKind kind;
  CatchupRecordScope scope;
  const char *const *cues;
} Rule;

/* Cues are casefolded, with plain apostrophes. Each says the message holds a record of its kind; a line can
 * hold several ("I think we should go with X, I'll book it"). */
static const char *const commitment_cues[] = {
  "i'll", "i will", "i'm going to", "i am going to", "on it", "i'm on it", "will do", "leave it with me",
  "i can do", "i can take", "count me in", "i'm in", "i promise", "i'll take", "i'll handle", "i'll sort",
  "i'll be there", "we'll make it work", NULL,
};
static const char *const decision_cues[] = {
  "decided", "decision", "let's go with", "lets go with", "going with", "go with", "from now on", "from now",
  "we're doing", "we are doing", "agreed", "settled", "change of plan", "the plan is", "final answer",
  "we'll do", "it's official", "booked", NULL,
};
static const char *const stance_cues[] = {
  "i think", "i'd rather", "i would rather", "i prefer", "i'd prefer", "prefer", "rather", "against", "+1",
  "i agree", "i disagree", "i love", "i hate", "not a fan", "i don't like", "i like", "i vote", "vote",
  "i feel", "i'm not sure", "not sure", "honestly", "ngl", "worried", "i'd love", "no way", "i want",
  "i don't want", "happy to", "not keen", "keen", "i'm happy", NULL,
};
static const char *const norm_cues[] = {
  "always", "never", "as usual", "every time", "every week", "every year", "tradition", "the rule",
  "our rule", "again", "third time", "classic", "usual", "standing", "we don't", "not everything needs",
  NULL,
};
static const char *const relation_cues[] = {
  "owns", "in charge of", "responsible for", "reports to", "my sister", "my brother", "my wife",
  "my husband", "my partner", "my mum", "my mom", "my dad", "my boss", "my friend", "my team", "my kids",
  "my son", "my daughter", "is rm", "the reason i", "together", "with me", "you and i", "and i", NULL,
};
static const char *const fact_cues[] = {
  "is away", "away until", "i'm away", "i'm off", "on holiday", "on vacation", "out of office", "ooo",
  "sick", "i've been", "i'm still", "still", "lately", "these days", "my job", "my new", "i'm now", "is now",
  "used to", "anymore", "i can't", "i can", "i'm not", "ankle", "knee", "allergic", "diet", NULL,
};
static const char *const status_cues[] = {
  "merged", "done", "blocked on", "blocked", "fixed", "shipped", "deployed", "finished", "released",
  "landed", "resolved", "closed", "sorted", "cancelled", "canceled", NULL,
};
static const char *const request_cues[] = {
  "can you", "could you", "would you", "will you", "please", "pls", "can u", "mind ", "are you able",
  NULL,
};

static const Rule rules[] = {
  { CATCHUP_RECORD_COMMITMENT, CATCHUP_RECORD_PERSON, commitment_cues },
  { CATCHUP_RECORD_DECISION, CATCHUP_RECORD_GROUP, decision_cues },
  { CATCHUP_RECORD_STANCE, CATCHUP_RECORD_PERSON, stance_cues },
  { CATCHUP_RECORD_NORM, CATCHUP_RECORD_GROUP, norm_cues },
  { CATCHUP_RECORD_RELATION, CATCHUP_RECORD_PERSON, relation_cues },
  { CATCHUP_RECORD_FACT, CATCHUP_RECORD_PERSON, fact_cues },
  { CATCHUP_RECORD_STATUS, CATCHUP_RECORD_PERSON, status_cues },
};

/*
 * The cues of every rule in one table, looked up by the word they start with: a line is walked once, word by
 * word, and only the cues starting with one of its words are compared, instead of searching it for each of the
 * ~200 cues. A cue that starts with no letter or digit ("+1") is searched for on every line. The matches are
 * those of catchup_records_has_phrase.
 */
#define REQUEST_RULE G_N_ELEMENTS (rules)
#define MAX_CUE_WORD 32

typedef struct {
  const char *phrase;
  gsize len;
  guint rule;          /* index into rules, or REQUEST_RULE */
  gboolean word_end;   /* ends with a letter or digit: the text's next character must not be one */
  GPtrArray *terms;    /* its retrieval terms: they say what kind a record is, never what it is about */
} Cue;

typedef struct {
  GArray *cues;            /* Cue */
  GHashTable *by_word;     /* first word -> GArray of guint (indices into cues) */
  GArray *anywhere;        /* guint: the cues starting with no word */
} CueIndex;

/* The end of the word starting at p (letters, digits and marks). */
static const char *
word_end_at (const char *p)
{
  while (*p)
    {
      if ((guchar) *p < 0x80)
        {
          if (!g_ascii_isalnum (*p))
            break;
          p++;
        }
      else if (is_word_char (g_utf8_get_char (p)))
        p = g_utf8_next_char (p);
      else
        break;
    }
  return p;
}

static void
cue_index_add (CueIndex *x, const char *phrase, guint rule)
{
  const char *end = word_end_at (phrase);
  Cue cue = { phrase, strlen (phrase), rule, FALSE, catchup_text_terms (phrase, TRUE) };
  guint at = x->cues->len;

  cue.word_end = is_word_char (g_utf8_get_char (g_utf8_find_prev_char (phrase, phrase + cue.len)));
  g_array_append_val (x->cues, cue);
  if (end == phrase || end - phrase > MAX_CUE_WORD)
    g_array_append_val (x->anywhere, at);
  else
    {
      g_autofree char *word = g_strndup (phrase, end - phrase);
      GArray *list = g_hash_table_lookup (x->by_word, word);

      if (list == NULL)
        g_hash_table_insert (x->by_word, g_steal_pointer (&word), list = g_array_new (FALSE, FALSE, sizeof (guint)));
      g_array_append_val (list, at);
    }
}

static const CueIndex *
cue_index (void)
{
  static CueIndex x;
  static gsize once;

  if (g_once_init_enter (&once))
    {
      x.cues = g_array_new (FALSE, FALSE, sizeof (Cue));
      x.by_word = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_array_unref);
      x.anywhere = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint r = 0; r < G_N_ELEMENTS (rules); r++)
        for (guint i = 0; rules[r].cues[i]; i++)
          cue_index_add (&x, rules[r].cues[i], r);
      for (guint i = 0; request_cues[i]; i++)
        cue_index_add (&x, request_cues[i], REQUEST_RULE);
      g_once_init_leave (&once, 1);
    }
  return &x;
}

/* What a line's cues say: the rules they belong to (bits, REQUEST_RULE included) and the cues themselves. */
typedef struct {
  guint rules;
  GPtrArray *cues;         /* const Cue *, each once; NULL until one matches */
} CueMatch;

static void
match_cue (CueMatch *m, const Cue *cue)
{
  if (m->cues == NULL)
    m->cues = g_ptr_array_new ();
  else if (g_ptr_array_find (m->cues, cue, NULL))
    return;
  m->rules |= 1u << cue->rule;
  g_ptr_array_add (m->cues, (gpointer) cue);
}

/* Whether cue occurs at p, a word start of the text, ending on a word boundary. */
static gboolean
cue_at (const Cue *cue, const char *p)
{
  return strncmp (p, cue->phrase, cue->len) == 0 && (!cue->word_end || !is_word_char (g_utf8_get_char (p + cue->len)));
}

static void
match_cues (const char *folded, CueMatch *m)
{
  const CueIndex *x = cue_index ();
  char word[MAX_CUE_WORD + 1];

  memset (m, 0, sizeof *m);
  for (guint i = 0; i < x->anywhere->len; i++)
    {
      const Cue *cue = &g_array_index (x->cues, Cue, g_array_index (x->anywhere, guint, i));

      if (catchup_records_has_phrase (folded, cue->phrase))
        match_cue (m, cue);
    }
  for (const char *p = folded; *p;)
    {
      const char *end = word_end_at (p);
      GArray *list;

      if (end == p)
        {
          p = g_utf8_next_char (p);
          continue;
        }
      if (end - p <= MAX_CUE_WORD)
        {
          memcpy (word, p, end - p);
          word[end - p] = '\0';
          list = g_hash_table_lookup (x->by_word, word);
          for (guint i = 0; list && i < list->len; i++)
            {
              const Cue *cue = &g_array_index (x->cues, Cue, g_array_index (list, guint, i));

              if (cue_at (cue, p))
                match_cue (m, cue);
            }
        }
      p = end;
    }
}

static void
cue_match_clear (CueMatch *m)
{
  g_clear_pointer (&m->cues, g_ptr_array_unref);
}

/*
 * The room's roster prepared once per run of the writer: a room of IRC logs has thousands of nicks, so a line
 * looks its words up in a table instead of searching for every nick. Nicks that are not one word ("Mary Ann",
 * "dr.who") are searched for on every line; there are few.
 */
typedef struct {
  GPtrArray *names;      /* char *, owned */
  GPtrArray *folded;     /* char *, owned: names casefolded */
  GHashTable *by_word;   /* folded one-word nick -> index + 1 */
  GArray *odd;           /* guint: indices of the other nicks */
  GHashTable *terms;     /* retrieval terms of every nick: never part of a subject */
} Roster;

static gboolean
is_nick_char (gunichar c)
{
  return is_word_char (c) || (c < 128 && strchr ("_-[]\\`^{}|", (int) c) != NULL);
}

/* The end of the nick-shaped word starting at p. */
static const char *
nick_word_end (const char *p)
{
  while (*p && is_nick_char (g_utf8_get_char (p)))
    p = g_utf8_next_char (p);
  return p;
}

/* A nick more; the roster grows as a room's speakers come (a new one is added, nothing is built again). */
static void
roster_add (Roster *r, const char *name)
{
  g_autoptr (GPtrArray) nt = catchup_text_terms (name, FALSE);
  char *f = catchup_records_fold (name);
  guint i = r->names->len;

  g_ptr_array_add (r->names, g_strdup (name));
  g_ptr_array_add (r->folded, f);
  if (*f == '\0')
    return;
  if (*nick_word_end (f) == '\0')
    g_hash_table_insert (r->by_word, f, GUINT_TO_POINTER (i + 1));
  else
    g_array_append_val (r->odd, i);
  for (guint j = 0; j < nt->len; j++)
    g_hash_table_add (r->terms, g_strdup (nt->pdata[j]));
}

static void
roster_init (Roster *r, const char *const *names)
{
  r->names = g_ptr_array_new_with_free_func (g_free);
  r->folded = g_ptr_array_new_with_free_func (g_free);
  r->by_word = g_hash_table_new (g_str_hash, g_str_equal);
  r->odd = g_array_new (FALSE, FALSE, sizeof (guint));
  r->terms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; names && names[i]; i++)
    roster_add (r, names[i]);
}

static void
roster_clear (Roster *r)
{
  g_hash_table_unref (r->by_word);
  g_ptr_array_unref (r->folded);
  g_ptr_array_unref (r->names);
  g_array_unref (r->odd);
  g_hash_table_unref (r->terms);
}

/* The roster index of the nick spelled by folded[0..len), -1 when there is none. */
static int
roster_find (const Roster *r, const char *word, gsize len)
{
  /* nicks with a space or a dot are not one word: the callers look those up whole (r->odd) */
  g_autofree char *key = g_strndup (word, len);
  gpointer hit = g_hash_table_lookup (r->by_word, key);

  return hit ? GPOINTER_TO_INT (hit) - 1 : -1;
}

typedef struct {
  const char *speaker;
  char *folded;
  const Roster *roster;
  const char *addressed; /* the roster nick the line starts with ("bob: ...", "@bob ...") */
  const char *named;     /* the roster nick the line is about ("bob owns ...", "bob is away ...") */
  const char *mentioned; /* the first other roster nick named anywhere */
} Line;

static gboolean
is_other (const Line *l, int i)
{
  return i >= 0 && g_strcmp0 ((const char *) l->roster->names->pdata[i], l->speaker) != 0;
}

/* "bob: ", "bob, ", "@bob " at the start address bob; "bob owns", "bob's" make bob what the line is about. */
static void
line_start (Line *l)
{
  const char *text = l->folded;
  const char *at, *end;
  int i;

  while (*text == ' ')
    text++;
  at = text[0] == '@' ? text + 1 : text;
  end = nick_word_end (at);
  i = end > at ? roster_find (l->roster, at, end - at) : -1;
  for (guint k = 0; i < 0 && k < l->roster->odd->len; k++)
    {
      guint j = g_array_index (l->roster->odd, guint, k);

      if (g_str_has_prefix (at, (const char *) l->roster->folded->pdata[j]))
        {
          i = (int) j;
          end = at + strlen ((const char *) l->roster->folded->pdata[j]);
        }
    }
  if (!is_other (l, i))
    return;
  if (*end == ':' || *end == ',' || at != text)
    l->addressed = (const char *) l->roster->names->pdata[i];
  else if (*end == ' ' || *end == '\'')
    l->named = (const char *) l->roster->names->pdata[i];
}

/* The first other person the line names anywhere, as a whole word. */
static void
line_mention (Line *l)
{
  for (const char *p = l->folded; *p && l->mentioned == NULL;)
    {
      const char *end = nick_word_end (p);

      if (end == p)
        {
          p = g_utf8_next_char (p);
          continue;
        }
      int i = roster_find (l->roster, p, end - p);

      if (is_other (l, i))
        l->mentioned = (const char *) l->roster->names->pdata[i];
      p = end;
    }
  for (guint k = 0; l->mentioned == NULL && k < l->roster->odd->len; k++)
    {
      guint j = g_array_index (l->roster->odd, guint, k);

      if (is_other (l, (int) j) && catchup_records_has_phrase (l->folded, (const char *) l->roster->folded->pdata[j]))
        l->mentioned = (const char *) l->roster->names->pdata[j];
    }
}

static char *
subject_of (const char *text, const CueMatch *match, const Roster *roster)
{
  g_autoptr (GPtrArray) terms = catchup_text_terms (text, TRUE);
  g_autoptr (GHashTable) skip = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) kept = g_ptr_array_new ();

  /* the terms of the cues the line matched: two stances "I think ..." must not chain on "think" */
  for (guint c = 0; match->cues && c < match->cues->len; c++)
    {
      const Cue *cue = match->cues->pdata[c];

      for (guint w = 0; w < cue->terms->len; w++)
        g_hash_table_add (skip, cue->terms->pdata[w]);
    }
  for (guint i = 0; i < terms->len && kept->len < SUBJECT_TERMS; i++)
    {
      char *t = terms->pdata[i];

      if (g_hash_table_contains (skip, t) || g_hash_table_contains (roster->terms, t) || strlen (t) < 3)
        continue;
      g_hash_table_add (skip, t);
      g_ptr_array_add (kept, t);
    }
  g_ptr_array_add (kept, NULL);
  return g_strjoinv (" ", (char **) kept->pdata);
}

static CatchupRecord *
record_new (const CatchupMessage *msg, CatchupRecordKind kind, CatchupRecordScope scope, const char *owner,
            const char *subject)
{
  CatchupRecord *rec = g_new0 (CatchupRecord, 1);

  rec->kind = kind;
  rec->scope = scope;
  rec->source = g_strdup (msg->speaker ? msg->speaker : "");
  rec->owner = g_strdup (owner ? owner : "");
  rec->subject = g_strdup (subject);
  rec->text = g_strdup (msg->text ? msg->text : "");
  rec->ts = msg->ts;
  rec->row = msg->row;
  rec->msg_id = g_strdup (msg->id);
  return rec;
}

/* Whom a record of this kind concerns: the person the line is about when it names one first ("bob is away",
 * "bob owns the release"), else its speaker; the group for group rules, unless the line is about one person
 * ("leon didn't come again" is a pattern of Leon's). */
static const char *
owner_for (const Line *l, const Rule *rule)
{
  if (l->named)
    return l->named;
  if (rule->scope == CATCHUP_RECORD_GROUP)
    return rule->kind == CATCHUP_RECORD_NORM && l->mentioned ? l->mentioned : "";
  return l->speaker;
}

static GPtrArray *
extract_line (const CatchupMessage *msg, const Roster *roster)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_record_free);
  g_autofree char *subject = NULL;
  Line l = { msg->speaker ? msg->speaker : "", NULL, roster, NULL, NULL, NULL };
  CueMatch match;

  if (msg->text == NULL || *msg->text == '\0')
    return out;
  l.folded = catchup_records_fold (msg->text);
  match_cues (l.folded, &match);
  /* most lines match no cue: who they address or name is looked for only in the others */
  if (match.rules != 0)
    {
      line_start (&l);
      line_mention (&l);
      subject = subject_of (msg->text, &match, roster);
    }
  for (guint r = 0; r < G_N_ELEMENTS (rules); r++)
    if (match.rules & (1u << r))
      {
        const Rule *rule = &rules[r];
        CatchupRecordScope scope = rule->scope;
        const char *owner = owner_for (&l, rule);

        if (scope == CATCHUP_RECORD_GROUP && *owner != '\0')
          scope = CATCHUP_RECORD_PERSON;
        g_ptr_array_add (out, record_new (msg, rule->kind, scope, owner, subject));
      }
  /* a request belongs to the one asked: the nick the line starts with, else the first one it names */
  if ((match.rules & (1u << REQUEST_RULE)) && (l.addressed || l.mentioned))
    {
      CatchupRecord *rec = record_new (msg, CATCHUP_RECORD_COMMITMENT, CATCHUP_RECORD_PERSON,
                                       l.addressed ? l.addressed : l.mentioned, subject);

      rec->flags |= CATCHUP_RECORD_FLAG_REQUEST;
      g_ptr_array_add (out, rec);
    }
  cue_match_clear (&match);
  g_free (l.folded);
  return out;
}

GPtrArray *
catchup_records_extract (const CatchupMessage *msg, const char *const *roster)
{
  Roster r;
  GPtrArray *out;

  roster_init (&r, roster);
  out = extract_line (msg, &r);
  roster_clear (&r);
  return out;
}

/* ---------- storage ---------- */

/* A record with its provenance message's id, and that message's text when the record has none of its own. */
#define RECORD_SELECT \
  "SELECT r.id, r.kind, r.scope, r.flags, r.source, r.owner, r.subject, coalesce (nullif (r.text, ''), m.body)," \
  " r.ts, r.row," \
  " m.uid, r.supersedes, r.superseded_by FROM records r JOIN messages m ON m.row = r.row"

static gpointer
record_from_stmt (sqlite3_stmt *st)
{
  CatchupRecord *rec = g_new0 (CatchupRecord, 1);
  gint64 kind = sqlite3_column_int64 (st, 1);

  rec->id = sqlite3_column_int64 (st, 0);
  rec->kind = kind >= 0 && kind < CATCHUP_RECORD_N_KINDS ? (CatchupRecordKind) kind : CATCHUP_RECORD_FACT;
  rec->scope = sqlite3_column_int64 (st, 2) == CATCHUP_RECORD_GROUP ? CATCHUP_RECORD_GROUP : CATCHUP_RECORD_PERSON;
  rec->flags = (guint) sqlite3_column_int64 (st, 3);
  rec->source = g_strdup ((const char *) sqlite3_column_text (st, 4));
  rec->owner = g_strdup ((const char *) sqlite3_column_text (st, 5));
  rec->subject = g_strdup ((const char *) sqlite3_column_text (st, 6));
  rec->text = g_strdup ((const char *) sqlite3_column_text (st, 7));
  rec->ts = sqlite3_column_int64 (st, 8);
  rec->row = sqlite3_column_int64 (st, 9);
  rec->msg_id = g_strdup ((const char *) sqlite3_column_text (st, 10));
  rec->supersedes = sqlite3_column_int64 (st, 11);
  rec->superseded_by = sqlite3_column_int64 (st, 12);
  return rec;
}

/* Every row of a bound statement, each read by from_stmt. */
static GPtrArray *
collect_rows (CatchupStore *store, sqlite3_stmt *st, gpointer (*from_stmt) (sqlite3_stmt *), GDestroyNotify free_row,
              GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (free_row);
  int rc;

  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    g_ptr_array_add (out, from_stmt (st));
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    {
      catchup_db_set_error (catchup_store_db (store), rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_steal_pointer (&out);
}

static GPtrArray *
collect_records (CatchupStore *store, sqlite3_stmt *st, GError **error)
{
  return collect_rows (store, st, record_from_stmt, (GDestroyNotify) catchup_record_free, error);
}

/* The length of the term at t of a space-separated list. */
static gsize
term_len (const char *t)
{
  const char *end = strchr (t, ' ');

  return end ? (gsize) (end - t) : strlen (t);
}

/* Whether the space-separated term lists a and b share a term (subjects hold a few terms each). */
static gboolean
shares_term (const char *a, const char *b)
{
  for (const char *t = a ? a : ""; *t; t += term_len (t) + (t[term_len (t)] == ' '))
    {
      gsize n = term_len (t);

      for (const char *u = b ? b : ""; n && *u; u += term_len (u) + (u[term_len (u)] == ' '))
        if (term_len (u) == n && memcmp (t, u, n) == 0)
          return TRUE;
    }
  return FALSE;
}

/* The head rec updates: the newest of the same owner, family and scope that shares a subject term. */
static gboolean
find_target (CatchupStore *store, gint64 room, const CatchupRecord *rec, gint64 *target, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
                                            "SELECT id, subject FROM records WHERE room = ?1 AND owner = ?2"
                                            " AND family = ?3 AND scope = ?4 AND superseded_by IS NULL"
                                            " ORDER BY ts DESC, id DESC LIMIT ?5",
                                            error);
  int rc;

  *target = 0;
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_text (st, 2, rec->owner, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 3, catchup_record_family (rec->kind));
  sqlite3_bind_int64 (st, 4, rec->scope);
  sqlite3_bind_int64 (st, 5, LINK_CANDIDATES);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    if (shares_term (rec->subject, (const char *) sqlite3_column_text (st, 1)))
      {
        *target = sqlite3_column_int64 (st, 0);
        break;
      }
  sqlite3_reset (st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    {
      catchup_db_set_error (catchup_store_db (store), rc, error, _("Could not read the history database"));
      return FALSE;
    }
  return TRUE;
}

static gboolean
insert_record (CatchupStore *store, gint64 room, CatchupRecord *rec, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
                                            "INSERT INTO records (room, row, ts, kind, family, scope, flags,"
                                            " source, owner, subject, text, supersedes)"
                                            " VALUES (?1, ?2, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                                            error);

  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, rec->row);
  sqlite3_bind_int64 (st, 4, rec->ts);
  sqlite3_bind_int64 (st, 5, rec->kind);
  sqlite3_bind_int64 (st, 6, catchup_record_family (rec->kind));
  sqlite3_bind_int64 (st, 7, rec->scope);
  sqlite3_bind_int64 (st, 8, rec->flags);
  /* the record outlives the statement's step */
  sqlite3_bind_text (st, 9, rec->source, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 10, rec->owner, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 11, rec->subject ? rec->subject : "", -1, SQLITE_STATIC);
  /* the rule-based writer's text is the message's own: it is read through the message, not stored twice */
  sqlite3_bind_text (st, 12, (rec->flags & CATCHUP_RECORD_FLAG_OWN_TEXT) && rec->text ? rec->text : "", -1,
                     SQLITE_TRANSIENT);
  if (rec->supersedes)
    sqlite3_bind_int64 (st, 13, rec->supersedes);
  if (!catchup_db_step_done (catchup_store_db (store), st, error))
    {
      sqlite3_reset (st);
      return FALSE;
    }
  sqlite3_reset (st);
  rec->id = catchup_db_last_insert_rowid (catchup_store_db (store));
  return TRUE;
}

/* Runs a statement that binds two integers and returns no rows. */
static gboolean
run_ints (CatchupStore *store, const char *sql, gint64 a, gint64 b, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), sql, error);
  int rc;

  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, a);
  sqlite3_bind_int64 (st, 2, b);
  rc = sqlite3_step (st);
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    {
      catchup_db_set_error (catchup_store_db (store), rc, error, _("Could not write to the history database"));
      return FALSE;
    }
  return TRUE;
}

gboolean
catchup_records_add (CatchupStore *store, gint64 room, CatchupRecord *rec, gint64 force_target, GError **error)
{
  gint64 target = force_target;

  if (target == 0 && !find_target (store, room, rec, &target, error))
    return FALSE;
  rec->supersedes = target;
  if (!insert_record (store, room, rec, error))
    return FALSE;
  return target == 0 || run_ints (store, "UPDATE records SET superseded_by = ?2 WHERE id = ?1", target, rec->id, error);
}

static char **
roster_query (CatchupStore *store, gint64 room, const char *sql, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), sql, error);
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
  int rc;

  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, room);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    g_strv_builder_add (b, (const char *) sqlite3_column_text (st, 0));
  sqlite3_reset (st);
  if (rc != SQLITE_DONE)
    {
      catchup_db_set_error (catchup_store_db (store), rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_strv_builder_end (b);
}

char **
catchup_records_roster (CatchupStore *store, gint64 room, GError **error)
{
  char **roster = roster_query (store, room,
                                "SELECT speaker FROM room_speakers WHERE room = ?1 ORDER BY turns DESC, speaker",
                                error);

  if (roster == NULL || roster[0] != NULL)
    return roster;
  /* messages stored without records built yet (a caller that adds rows itself): count them */
  g_strfreev (roster);
  return roster_query (store, room,
                       "SELECT speaker FROM messages WHERE room = ?1 AND speaker != ''"
                       " GROUP BY speaker ORDER BY count(*) DESC, speaker",
                       error);
}

/* Runs a statement on a speaker's row (?1 room, ?2 speaker, ?3 turns); *changed: whether it touched a row. */
static gboolean
speaker_row (CatchupStore *store, const char *sql, gint64 room, const char *speaker, guint n, gboolean *changed,
             GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), sql, error);
  int rc;

  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_text (st, 2, speaker, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 3, n);
  rc = sqlite3_step (st);
  *changed = rc == SQLITE_DONE && catchup_db_changes (catchup_store_db (store)) > 0;
  sqlite3_reset (st);
  if (rc == SQLITE_DONE)
    return TRUE;
  catchup_db_set_error (catchup_store_db (store), rc, error, _("Could not write to the history database"));
  return FALSE;
}

/* The roster's turn counts, for the messages about to be read; new_speakers gets the speakers the room has
 * not had before (borrowed from msgs). One statement per speaker of the batch, not per message: an import's
 * batch has thousands of messages. */
static gboolean
count_speakers (CatchupStore *store, gint64 room, GPtrArray *msgs, GPtrArray *new_speakers, GError **error)
{
  g_autoptr (GHashTable) counts = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  gpointer speaker, n;

  for (guint i = 0; i < msgs->len; i++)
    {
      const CatchupMessage *m = msgs->pdata[i];

      if (m->speaker == NULL || *m->speaker == '\0')
        continue;
      n = g_hash_table_lookup (counts, m->speaker);
      g_hash_table_insert (counts, m->speaker, GUINT_TO_POINTER (GPOINTER_TO_UINT (n) + 1));
    }
  g_hash_table_iter_init (&iter, counts);
  while (g_hash_table_iter_next (&iter, &speaker, &n))
    {
      gboolean known, added;

      if (!speaker_row (store, "UPDATE room_speakers SET turns = turns + ?3 WHERE room = ?1 AND speaker = ?2", room,
                        speaker, GPOINTER_TO_UINT (n), &known, error))
        return FALSE;
      if (known)
        continue;
      if (!speaker_row (store, "INSERT INTO room_speakers (room, speaker, turns) VALUES (?1, ?2, ?3)", room, speaker,
                        GPOINTER_TO_UINT (n), &added, error))
        return FALSE;
      g_ptr_array_add (new_speakers, speaker);
    }
  return TRUE;
}

/* A prepared roster kept with the store between runs: a live room's writer runs once per message or so, and
 * preparing thousands of nicks each time would cost more than the records. A new speaker is added to it. */
static void
cached_roster_free (Roster *r)
{
  roster_clear (r);
  g_free (r);
}

/* The prepared rosters of the rooms this connection has written records for: room -> Roster. */
#define ROSTERS_KEY "catchup-records-rosters"

static const Roster *
prepared_roster (CatchupStore *store, gint64 room, GPtrArray *new_speakers, GError **error)
{
  GHashTable *rosters = catchup_db_get_data (catchup_store_db (store), ROSTERS_KEY);
  g_auto (GStrv) names = NULL;
  Roster *r;

  if (rosters == NULL)
    {
      rosters = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, (GDestroyNotify) cached_roster_free);
      catchup_db_set_data (catchup_store_db (store), ROSTERS_KEY, rosters, (GDestroyNotify) g_hash_table_unref);
    }
  r = g_hash_table_lookup (rosters, &room);
  if (r != NULL)
    {
      for (guint i = 0; i < new_speakers->len; i++)
        roster_add (r, new_speakers->pdata[i]);
      return r;
    }
  /* the first run on this connection: the speakers counted so far, the new ones among them */
  if ((names = catchup_records_roster (store, room, error)) == NULL)
    return NULL;
  r = g_new0 (Roster, 1);
  roster_init (r, (const char *const *) names);
  g_hash_table_insert (rosters, g_memdup2 (&room, sizeof room), r);
  return r;
}

/* The first column of the first row of a query binding two integers; *out stays 0 when there is no row. */
static gboolean
query_int (CatchupStore *store, const char *sql, gint64 a, gint64 b, gint64 *out, GError **error)
{
  g_autoptr (CatchupDbStmt) st = catchup_db_prepare (catchup_store_db (store), sql, error);
  gboolean found;

  *out = 0;
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, a);
  sqlite3_bind_int64 (st, 2, b);
  return catchup_db_query_int64 (catchup_store_db (store), st, out, &found, error);
}

static gboolean
read_state (CatchupStore *store, gint64 room, gint64 *seen, GError **error)
{
  return query_int (store, "SELECT max_row FROM records_state WHERE room = ?1 AND ?2 = ?2", room, 0, seen, error);
}

gboolean
catchup_records_row_before_latest (CatchupStore *store, gint64 room, guint n, gint64 *row, GError **error)
{
  return query_int (store, "SELECT row FROM messages WHERE room = ?1 ORDER BY row DESC LIMIT 1 OFFSET ?2", room, n,
                    row, error);
}

static gpointer
message_from_stmt (sqlite3_stmt *st)
{
  return catchup_store_message_from_stmt (st);
}

static GPtrArray *
new_messages (CatchupStore *store, gint64 room, gint64 seen, guint max_messages, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
                                            "SELECT " CATCHUP_STORE_MESSAGE_COLUMNS " FROM messages"
                                            /* "+room": by row, not through the room's whole order index
                                             * and a sort of it; only rows after ?2 are read */
                                            " WHERE +room = ?1 AND row > ?2 ORDER BY row LIMIT ?3",
                                            error);

  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, seen);
  sqlite3_bind_int64 (st, 3, max_messages ? (gint64) max_messages : -1);
  return collect_rows (store, st, message_from_stmt, (GDestroyNotify) catchup_message_free, error);
}

static gboolean
update_locked (CatchupStore *store, gint64 room, guint max_messages, guint *n_records, GError **error)
{
  g_autoptr (GPtrArray) msgs = NULL;
  const Roster *roster;
  g_autoptr (GPtrArray) new_speakers = g_ptr_array_new ();
  gboolean ok = TRUE;
  gint64 seen;

  if (!read_state (store, room, &seen, error) ||
      (msgs = new_messages (store, room, seen, max_messages, error)) == NULL)
    return FALSE;
  if (msgs->len == 0)
    return TRUE;
  if (!count_speakers (store, room, msgs, new_speakers, error) ||
      (roster = prepared_roster (store, room, new_speakers, error)) == NULL)
    return FALSE;
  for (guint i = 0; i < msgs->len && ok; i++)
    {
      CatchupMessage *m = msgs->pdata[i];
      g_autoptr (GPtrArray) recs = extract_line (m, roster);

      for (guint r = 0; r < recs->len && ok; r++)
        ok = catchup_records_add (store, room, recs->pdata[r], 0, error);
      *n_records += recs->len;
      seen = MAX (seen, m->row);
    }
  return ok && run_ints (store, "INSERT OR REPLACE INTO records_state (room, max_row) VALUES (?1, ?2)", room, seen, error);
}

gboolean
catchup_records_update (CatchupStore *store, gint64 room, guint max_messages, guint *n_records, GError **error)
{
  guint n = 0;

  if (n_records)
    *n_records = 0;
  if (!catchup_store_begin (store, error))
    return FALSE;
  if (!update_locked (store, room, max_messages, &n, error))
    {
      catchup_store_rollback (store);
      return FALSE;
    }
  if (!catchup_store_commit (store, error))
    return FALSE;
  if (n_records)
    *n_records = n;
  return TRUE;
}

GPtrArray *
catchup_records_messages_after (CatchupStore *store, gint64 room, gint64 after_row, guint max_messages,
                                GError **error)
{
  return new_messages (store, room, after_row, max_messages, error);
}

GPtrArray *
catchup_records_recent_heads (CatchupStore *store, gint64 room, guint limit, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
                                            RECORD_SELECT " WHERE r.room = ?1 AND r.superseded_by IS NULL"
                                            " ORDER BY r.ts DESC, r.id DESC LIMIT ?2",
                                            error);
  GPtrArray *heads;

  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, limit);
  heads = collect_records (store, st, error);
  for (guint i = 0; heads && i < heads->len / 2; i++)
    {
      gpointer t = heads->pdata[i];

      heads->pdata[i] = heads->pdata[heads->len - 1 - i];
      heads->pdata[heads->len - 1 - i] = t;
    }
  return heads;
}

GPtrArray *
catchup_records_between (CatchupStore *store, gint64 room, gint64 first_row, gint64 last_row, GError **error)
{
  /* "+r.room": the rows narrow it down; by the room's index the planner walked all of the room's records */
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
                                            RECORD_SELECT " WHERE +r.room = ?1 AND r.row BETWEEN ?2 AND ?3"
                                            " ORDER BY r.ts, r.id",
                                            error);

  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, first_row);
  sqlite3_bind_int64 (st, 3, last_row);
  return collect_records (store, st, error);
}

GPtrArray *
catchup_records_list (CatchupStore *store, gint64 room, const char *owner, gboolean heads_only, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
                                            RECORD_SELECT " WHERE r.room = ?1"
                                            " AND (?2 IS NULL OR r.owner = ?2) AND (?3 = 0 OR r.superseded_by IS NULL)"
                                            " ORDER BY r.ts, r.id",
                                            error);

  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, room);
  if (owner)
    sqlite3_bind_text (st, 2, owner, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int (st, 3, heads_only ? 1 : 0);
  return collect_records (store, st, error);
}

CatchupRecord *
catchup_records_get (CatchupStore *store, gint64 room, gint64 id, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store),
                                            RECORD_SELECT " WHERE r.room = ?1 AND r.id = ?2",
                                            error);
  g_autoptr (GPtrArray) found = NULL;

  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_int64 (st, 2, id);
  found = collect_records (store, st, error);
  if (found == NULL)
    return NULL;
  if (found->len == 0)
    {
      g_autofree char *number = g_strdup_printf ("%" G_GINT64_FORMAT, id);

      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND, _("No record %s in the room"), number);
      return NULL;
    }
  return g_ptr_array_steal_index (found, 0);
}

GPtrArray *
catchup_records_chain (CatchupStore *store, gint64 room, gint64 id, GError **error)
{
  g_autoptr (GPtrArray) chain = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_record_free);
  g_autoptr (CatchupRecord) start = catchup_records_get (store, room, id, error);
  gint64 next;

  if (start == NULL)
    return NULL;
  /* back to the first, then forward to the head; bounded by the room's records so a damaged file cannot loop */
  for (next = start->supersedes; next != 0 && chain->len < 10000;)
    {
      CatchupRecord *r = catchup_records_get (store, room, next, NULL);

      if (r == NULL)
        break;
      next = r->supersedes;
      g_ptr_array_insert (chain, 0, r);
    }
  next = start->superseded_by;
  g_ptr_array_add (chain, g_steal_pointer (&start));
  while (next != 0 && chain->len < 20000)
    {
      CatchupRecord *r = catchup_records_get (store, room, next, NULL);

      if (r == NULL)
        break;
      next = r->superseded_by;
      g_ptr_array_add (chain, r);
    }
  return g_steal_pointer (&chain);
}
