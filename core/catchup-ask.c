#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-ask.h"
#include "catchup-embed.h"
#include "catchup-error.h"
#include "catchup-nicks.h"
#include "catchup-retrieve.h"
#include "catchup-text.h"

/* The newest turns a question reads at most: a room's whole history up to this size, its latest part beyond. */
#define MAX_SCAN 20000

/*
 * Turn score for a person's row, measured on the SocialMemBench dev networks: the question's words (BM25 plus
 * the default embedder's cosine, as the verbatim track ranks turns, scaled so the best turn of the room is 1)
 * and the turn's relation to the person: said by them, naming them, or carrying a record about them. A person's
 * own words about the topic beat another's mention; a turn between two people the question names beats both.
 */
#define W_COSINE 2.0
#define W_SPEAKER 0.6
#define W_MENTION 0.3
#define W_RECORD 0.25
#define W_PAIR 0.5
/* The verbatim track's own recall of the question (chunks first, then turns), within the budget: a turn in it
 * gets this much. It carries the chunk ranking, which matters most where one of two partners is asked about. */
#define W_RECALL 0.5
/* Answers follow questions: a turn shortly after one that matches the question well is likely a reply in the
 * same thread ("Not coming." after "brunch on Sunday?"), so it gets part of that turn's score, fading over
 * THREAD_SPAN turns. Only the THREAD_SEEDS best turns seed threads. */
#define W_THREAD 0.5
#define THREAD_SPAN 6
#define THREAD_SEEDS 3
/* A question that names people is answered per person only where a person's turns say something the room's
 * do not: when the people named wrote more than this share of the room (one of two partners), the room's own
 * recall ranks better, and its turns are sorted into the people's rows. */
#define PERSON_SHARE 0.5

/* Records shown per row: the derived track's own allowance of the budget. */
#define RECORD_SHARE 4
#define RECORDS_PER_ROW 5

void
catchup_ask_query_free (CatchupAskQuery *q)
{
  if (q == NULL)
    return;
  g_clear_pointer (&q->people, g_ptr_array_unref);
  g_free (q->source);
  g_free (q->owner);
  g_free (q->topic);
  g_free (q->question);
  g_strfreev (q->roster);
  g_free (q);
}

/* ---------- compiling the question ---------- */

static const char *const everyone_cues[] = {
  "everyone", "everybody", "each of us", "each of them", "each member", "each person", "all members",
  "all of us", "all of them", "each family member", "every member", "whole group", "each one", NULL,
};
/* The question is about how the people it names stand to each other, not about each alone. */
static const char *const relation_cues[] = {
  "between", "relationship", "knew", "know", "knows", "each other", "history", "revealed", "who in", NULL,
};
static const char *const full_cues[] = {
  "change", "changed", "changes", "changing", "over time", "over the course", "shift", "shifted", "before",
  "after", "evolve", "evolved", "used to", "anymore", "turning point", "history", "across the sessions",
  "across sessions", "over the sessions", "move from", "still", "always", NULL,
};

/* Words that frame a question about people rather than say what it is about: they are in every question and
 * rarely in the chat, so BM25 would reward the odd turn that happens to use them. */
static const char *const scaffold_words[] = {
  "behavior", "behaviour", "group", "chat", "conversation", "conversations", "suggest", "suggests", "reveal",
  "reveals", "show", "shows", "attitude", "member", "members", "change", "changed", "course", "time", "based",
  "appear", "appears", "seem", "seems", "tell", "know", "knew", "happen", "happened", "relationship",
  "history", "role", "approach", "pattern", "expect", "anticipate", "session", "sessions", "stance",
  "everyone", "everybody", "each", "person", "people", "follow", "norm", "treat", "toward", "towards",
  "regard", "discuss", "discussing", "mention", "mentioned", "indicate", "sign", "signals", "come", "across",
  "way", "particular", "say", "said", "feel", "felt", "does", "did", "do", "what", "how", "who", "whose",
  "which", "why", "when", "where", "within", "position", "reason", "reasoning", "think", "thinks", "view",
  "views", "shared", "gave", "give", "expressed", "presented", "present", "both", "specific", "specifically",
  "already", "actually", "figure", "figured", "out", "drove", "drive", "driven", "marks", "point", "part",
  "later", "early", "earlier", "end", "beginning", "family", "club", "collective", NULL,
};

static gboolean
word_in (const char *word, const char *const *list)
{
  for (guint i = 0; list[i]; i++)
    if (strcmp (word, list[i]) == 0)
      return TRUE;
  return FALSE;
}

typedef struct {
  gssize pos;
  const char *nick;
} Named;

static gint
cmp_named (gconstpointer a, gconstpointer b)
{
  const Named *x = a, *y = b;

  return (x->pos > y->pos) - (x->pos < y->pos);
}

/* "bob's" right after the name: the question is about bob's thing. */
static gboolean
possessive_at (const char *folded, const Named *n)
{
  const char *after = folded + n->pos + strlen (n->nick);

  return after[0] == '\'' && after[1] == 's';
}

static char *
topic_of (const char *question, char **folded_nicks)
{
  g_autofree char *folded = catchup_records_fold (question);
  g_auto (GStrv) words = g_regex_split_simple ("[^\\w'+]+", folded, 0, 0);
  g_autoptr (GPtrArray) kept = g_ptr_array_new ();

  for (guint i = 0; words[i]; i++)
    {
      char *w = words[i];
      gsize n = strlen (w);

      if (n >= 2 && strcmp (w + n - 2, "'s") == 0)
        w[n - 2] = '\0';
      if (*w == '\0' || word_in (w, scaffold_words) || g_strv_contains ((const char *const *) folded_nicks, w))
        continue;
      g_ptr_array_add (kept, w);
    }
  g_ptr_array_add (kept, NULL);
  return g_strjoinv (" ", (char **) kept->pdata);
}

static const char *const month_names[] = {
  "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
  "november", "december", NULL,
};

static int
month_of (const char *name)
{
  g_autofree char *lower = g_ascii_strdown (name, -1);

  for (int i = 0; month_names[i]; i++)
    if (strcmp (lower, month_names[i]) == 0)
      return i + 1;
  return 0;
}

/* The local day (day > 0) or month a question names, as [since, until); FALSE for a day that does not exist. */
static gboolean
span_of (int year, int month, int day, gint64 *since, gint64 *until)
{
  g_autoptr (GDateTime) start = NULL, end = NULL;

  if (day > 0 && (day > 31 || !g_date_valid_dmy ((GDateDay) day, (GDateMonth) month, (GDateYear) year)))
    return FALSE;
  start = g_date_time_new_local (year, month, day > 0 ? day : 1, 0, 0, 0);
  if (start == NULL)
    return FALSE;
  end = day > 0 ? g_date_time_add_days (start, 1) : g_date_time_add_months (start, 1);
  *since = g_date_time_to_unix (start);
  *until = g_date_time_to_unix (end);
  return TRUE;
}

/* "on 3 June, 2023", "May 25, 2023", "8th December, 2023", "in June 2023": a month without a year names no
 * time the room can be asked about. */
static void
dates_of (const char *question, gint64 *since, gint64 *until)
{
  static const char *const patterns[] = {
    "\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+([a-z]+)\\s*,?\\s*(\\d{4})\\b",  /* day month year */
    "\\b([a-z]+)\\s+(\\d{1,2})(?:st|nd|rd|th)?\\s*,\\s*(\\d{4})\\b",    /* month day, year */
    "\\b([a-z]+)\\s*,?\\s+(\\d{4})\\b",                                  /* month year */
  };

  *since = *until = 0;
  for (guint p = 0; p < G_N_ELEMENTS (patterns); p++)
    {
      g_autoptr (GRegex) re = g_regex_new (patterns[p], G_REGEX_CASELESS, 0, NULL);
      g_autoptr (GMatchInfo) mi = NULL;

      for (g_regex_match (re, question, 0, &mi); g_match_info_matches (mi); g_match_info_next (mi, NULL))
        {
          g_auto (GStrv) f = g_match_info_fetch_all (mi);
          const char *day = p == 0 ? f[1] : p == 1 ? f[2] : "0";
          int month = month_of (p == 0 ? f[2] : f[1]);
          int year = atoi (p == 2 ? f[2] : f[3]);

          if (month > 0 && span_of (year, month, atoi (day), since, until))
            return;
        }
    }
}

CatchupAskQuery *
catchup_ask_compile (const char *question, const char *const *roster)
{
  g_autoptr (CatchupAskQuery) q = g_new0 (CatchupAskQuery, 1);
  g_autofree char *folded = catchup_records_fold (question);
  g_autoptr (GArray) named = g_array_new (FALSE, FALSE, sizeof (Named));
  guint n_roster = roster ? g_strv_length ((char **) roster) : 0;
  g_auto (GStrv) nicks = g_new0 (char *, n_roster + 1);

  q->people = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < n_roster; i++)
    {
      Named n = { -1, roster[i] };

      nicks[i] = catchup_records_fold (roster[i]);
      n.pos = catchup_records_find_phrase (folded, nicks[i]);
      if (n.pos >= 0)
        g_array_append_val (named, n);
    }
  g_array_sort (named, cmp_named);
  for (guint i = 0; i < named->len; i++)
    g_ptr_array_add (q->people, g_strdup (g_array_index (named, Named, i).nick));
  q->everyone = catchup_records_has_any_phrase (folded, everyone_cues);
  if (q->everyone)
    for (guint i = 0; i < n_roster; i++)
      if (!g_ptr_array_find_with_equal_func (q->people, roster[i], g_str_equal, NULL))
        g_ptr_array_add (q->people, g_strdup (roster[i]));
  q->mode = catchup_records_has_any_phrase (folded, full_cues) ? CATCHUP_ASK_FULL : CATCHUP_ASK_HEAD;
  q->relation = named->len >= 2 && catchup_records_has_any_phrase (folded, relation_cues);
  /* "what does alice think of bob's plan": the possessive names whose thing it is, the other name whose view */
  for (guint i = 0; i < named->len; i++)
    if (possessive_at (folded, &g_array_index (named, Named, i)))
      {
        q->owner = g_strdup (g_array_index (named, Named, i).nick);
        for (guint j = 0; j < named->len && q->source == NULL; j++)
          if (j != i)
            q->source = g_strdup (g_array_index (named, Named, j).nick);
        break;
      }
  dates_of (question, &q->since, &q->until);
  q->topic = topic_of (question, nicks);
  q->question = g_strdup (question);
  q->roster = g_strdupv ((char **) roster);
  return g_steal_pointer (&q);
}

/* ---------- evidence ---------- */

void
catchup_ask_result_free (CatchupAskResult *res)
{
  if (res == NULL)
    return;
  catchup_ask_query_free (res->query);
  g_clear_pointer (&res->rows, g_ptr_array_unref);
  g_clear_pointer (&res->memory, catchup_memory_free);
  catchup_ask_answer_free (res->answer);
  g_free (res->notice);
  g_free (res);
}

static void
line_free (CatchupAskLine *line)
{
  g_free (line->person);
  g_free (line->text);
  g_ptr_array_unref (line->ids);
  g_free (line);
}

void
catchup_ask_answer_free (CatchupAskAnswer *answer)
{
  if (answer == NULL)
    return;
  g_ptr_array_unref (answer->lines);
  g_free (answer);
}

CatchupAskAnswer *
catchup_ask_answer_new (void)
{
  CatchupAskAnswer *answer = g_new0 (CatchupAskAnswer, 1);

  answer->lines = g_ptr_array_new_with_free_func ((GDestroyNotify) line_free);
  return answer;
}

GPtrArray *
catchup_ask_answer_cited (const CatchupAskAnswer *answer)
{
  GPtrArray *ids = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < answer->lines->len; i++)
    {
      const CatchupAskLine *line = answer->lines->pdata[i];

      for (guint j = 0; j < line->ids->len; j++)
        if (!g_ptr_array_find_with_equal_func (ids, line->ids->pdata[j], g_str_equal, NULL))
          g_ptr_array_add (ids, g_strdup (line->ids->pdata[j]));
    }
  return ids;
}

char *
catchup_ask_answer_text (const CatchupAskAnswer *answer)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < answer->lines->len; i++)
    {
      const CatchupAskLine *line = answer->lines->pdata[i];

      if (out->len)
        g_string_append_c (out, ' ');
      g_string_append (out, line->text);
    }
  return g_string_free (out, FALSE);
}

static void
row_free (CatchupAskRow *row)
{
  g_free (row->person);
  g_clear_pointer (&row->turns, g_ptr_array_unref);
  g_clear_pointer (&row->records, g_ptr_array_unref);
  g_free (row->latest_id);
  g_free (row);
}

static CatchupAskRow *
row_new (const char *person)
{
  CatchupAskRow *row = g_new0 (CatchupAskRow, 1);

  row->person = g_strdup (person);
  row->turns = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  row->records = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_record_free);
  return row;
}

typedef struct {
  CatchupMessage *msg;
  char *folded;
  double base;          /* the question's words, 0..1 */
  double thread;        /* the best seed turn shortly before it, faded, 0..1 */
  gboolean recalled;    /* in the verbatim track's own recall of the question */
  GPtrArray *owners;    /* owners of the records the turn carries (borrowed strings), may be NULL */
} Turn;

typedef struct {
  const Turn *turn;
  double score;
} Ranked;

typedef struct {
  CatchupStore *store;
  gint64 room;
  const CatchupAskQuery *q;
  GPtrArray *msgs;      /* owned */
  Turn *turns;
  guint n;
  GPtrArray *records;   /* every record of the room, owned */
  char **folded_people; /* q->people folded */
  guint budget;
  CatchupNicks *nicks;  /* the room's renames, owned */
} Ctx;

static void
ctx_clear (Ctx *c)
{
  for (guint i = 0; i < c->n; i++)
    {
      g_free (c->turns[i].folded);
      g_clear_pointer (&c->turns[i].owners, g_ptr_array_unref);
    }
  g_free (c->turns);
  g_clear_pointer (&c->msgs, g_ptr_array_unref);
  g_clear_pointer (&c->records, g_ptr_array_unref);
  g_strfreev (c->folded_people);
  g_clear_pointer (&c->nicks, catchup_nicks_free);
}

/* Whether name (a speaker, a record's owner) is person under one of their nicks. */
static gboolean
is_person (const Ctx *c, const char *name, const char *person)
{
  return catchup_nicks_same (c->nicks, name, person);
}

static GPtrArray *
scan_messages (CatchupStore *store, gint64 room, GError **error)
{
  gint64 count = catchup_store_count (store, room, error);

  if (count < 0)
    return NULL;
  return count <= MAX_SCAN ? catchup_store_range (store, room, NULL, NULL, 0, error)
                           : catchup_store_before (store, room, NULL, MAX_SCAN, error);
}

static gint
cmp_base_desc (gconstpointer a, gconstpointer b)
{
  const Turn *x = *(const Turn *const *) a, *y = *(const Turn *const *) b;

  return (x->base < y->base) - (x->base > y->base);
}

static void
spread_threads (Ctx *c)
{
  g_autoptr (GPtrArray) by_base = g_ptr_array_sized_new (c->n);

  for (guint i = 0; i < c->n; i++)
    g_ptr_array_add (by_base, &c->turns[i]);
  g_ptr_array_sort (by_base, cmp_base_desc);
  for (guint s = 0; s < MIN (THREAD_SEEDS, by_base->len); s++)
    {
      const Turn *seed = by_base->pdata[s];
      guint at = (guint) (seed - c->turns);

      for (guint k = 1; k <= THREAD_SPAN && at + k < c->n; k++)
        {
          Turn *t = &c->turns[at + k];
          double v = seed->base * (1.0 - (double) (k - 1) / THREAD_SPAN);

          t->thread = MAX (t->thread, v);
        }
    }
}

/* The verbatim track ranks chunks first (a turn's neighbours share the question's words more than the turn
 * does): the turns of its recall within the budget carry that ranking into the rows. */
static gboolean
mark_recalled (Ctx *c, GHashTable *by_row, GError **error)
{
  CatchupMemoryOptions mopts;
  g_autoptr (CatchupMemory) mem = NULL;

  catchup_memory_options_init (&mopts);
  mopts.budget = c->budget;
  mem = catchup_memory_recall (c->store, c->room, c->q->question, &mopts, NULL, error);
  if (mem == NULL)
    return FALSE;
  for (guint i = 0; i < mem->turns->len; i++)
    {
      Turn *t = g_hash_table_lookup (by_row, &((CatchupMessage *) mem->turns->pdata[i])->row);

      if (t)
        t->recalled = TRUE;
    }
  return TRUE;
}

static gboolean
score_turns (Ctx *c, GError **error)
{
  g_autoptr (GHashTable) idf = catchup_retrieve_idf (c->store, c->q->topic, NULL, error);
  g_autoptr (GHashTable) by_row = g_hash_table_new (g_int64_hash, g_int64_equal);
  float qvec[CATCHUP_EMBED_DIM];
  double best = 0;

  if (idf == NULL)
    return FALSE;
  catchup_embed_hashed (c->q->topic, qvec);
  c->turns = g_new0 (Turn, c->msgs->len);
  for (guint i = 0; i < c->msgs->len; i++)
    {
      CatchupMessage *m = c->msgs->pdata[i];
      Turn *t = &c->turns[c->n];
      float v[CATCHUP_EMBED_DIM];

      t->msg = m;
      t->folded = catchup_records_fold (m->text);
      catchup_embed_hashed (m->text, v);
      t->base = catchup_retrieve_turn_bm25 (idf, m->text) + W_COSINE * MAX (0.0f, catchup_vec_dot (qvec, v,
                                                                                                    CATCHUP_EMBED_DIM));
      best = MAX (best, t->base);
      g_hash_table_insert (by_row, &m->row, t);
      c->n++;
    }
  for (guint i = 0; i < c->n && best > 0; i++)
    c->turns[i].base /= best;
  spread_threads (c);
  if (!mark_recalled (c, by_row, error))
    return FALSE;
  for (guint i = 0; i < c->records->len; i++)
    {
      CatchupRecord *r = c->records->pdata[i];
      Turn *t = g_hash_table_lookup (by_row, &r->row);

      if (t == NULL || *r->owner == '\0')
        continue;
      if (t->owners == NULL)
        t->owners = g_ptr_array_new ();
      g_ptr_array_add (t->owners, r->owner);
    }
  return TRUE;
}

static gboolean
names (const Turn *t, const char *folded_nick)
{
  return catchup_records_has_phrase (t->folded, folded_nick);
}

static gboolean
carries_record_of (const Ctx *c, const Turn *t, const char *person)
{
  for (guint i = 0; t->owners != NULL && i < t->owners->len; i++)
    if (is_person (c, t->owners->pdata[i], person))
      return TRUE;
  return FALSE;
}

/* How much a turn is about person p (index into q->people): 0 when not at all. */
static double
person_weight (const Ctx *c, const Turn *t, guint p)
{
  const char *person = c->q->people->pdata[p];
  gboolean spoke = is_person (c, t->msg->speaker, person);
  gboolean named = !spoke && names (t, c->folded_people[p]);
  double w = (spoke ? W_SPEAKER : 0) + (named ? W_MENTION : 0) + (carries_record_of (c, t, person) ? W_RECORD : 0);

  if (w == 0 || !c->q->relation)
    return w;
  /* a turn between this person and another one the question names */
  for (guint o = 0; o < c->q->people->len; o++)
    if (o != p && (is_person (c, t->msg->speaker, c->q->people->pdata[o]) || names (t, c->folded_people[o])))
      return w + W_PAIR;
  return w;
}

static gint
cmp_ranked (gconstpointer a, gconstpointer b)
{
  const Ranked *x = a, *y = b;

  if (x->score != y->score)
    return x->score < y->score ? 1 : -1;
  return catchup_pos_cmp (&(CatchupPos) { x->turn->msg->ts, x->turn->msg->row },
                          &(CatchupPos) { y->turn->msg->ts, y->turn->msg->row });
}

static gint
cmp_int64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return (x > y) - (x < y);
}

/* "How did it change": the row's best turns alternate between the earlier and the later half of what the
 * person has on it, so both the old and the new state are in. */
static GArray *
spread_over_time (GArray *ranked)
{
  GArray *out = g_array_sized_new (FALSE, FALSE, sizeof (Ranked), ranked->len);
  g_autoptr (GArray) ts = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint early = 0, late = 0;
  gint64 mid;

  for (guint i = 0; i < ranked->len; i++)
    g_array_append_val (ts, g_array_index (ranked, Ranked, i).turn->msg->ts);
  g_array_sort (ts, cmp_int64);
  mid = ts->len ? g_array_index (ts, gint64, ts->len / 2) : 0;
  while (early < ranked->len || late < ranked->len)
    {
      while (early < ranked->len && g_array_index (ranked, Ranked, early).turn->msg->ts >= mid)
        early++;
      if (early < ranked->len)
        g_array_append_val (out, g_array_index (ranked, Ranked, early++));
      while (late < ranked->len && g_array_index (ranked, Ranked, late).turn->msg->ts < mid)
        late++;
      if (late < ranked->len)
        g_array_append_val (out, g_array_index (ranked, Ranked, late++));
    }
  return out;
}

static GArray *
rank_for_person (const Ctx *c, guint p)
{
  GArray *ranked = g_array_new (FALSE, FALSE, sizeof (Ranked));

  for (guint i = 0; i < c->n; i++)
    {
      double w = person_weight (c, &c->turns[i], p);
      const Turn *t = &c->turns[i];
      Ranked r = { t, t->base + W_THREAD * t->thread + W_RECALL * t->recalled + w };

      if (w > 0)
        g_array_append_val (ranked, r);
    }
  g_array_sort (ranked, cmp_ranked);
  if (c->q->mode == CATCHUP_ASK_FULL)
    {
      GArray *spread = spread_over_time (ranked);

      g_array_unref (ranked);
      return spread;
    }
  return ranked;
}

/* Round robin over the rows' ranked lists, as gap-balanced memory does: no person monopolises the budget. */
static void
accumulate_rows (CatchupMemory *mem, GPtrArray *rows, GPtrArray *lists, guint budget)
{
  gboolean more = TRUE;

  for (guint d = 0; more; d++)
    {
      more = FALSE;
      for (guint r = 0; r < lists->len; r++)
        {
          GArray *l = lists->pdata[r];
          CatchupAskRow *row = rows->pdata[r];
          const CatchupMessage *m;

          if (d >= l->len)
            continue;
          more = TRUE;
          m = g_array_index (l, Ranked, d).turn->msg;
          /* a turn between two people belongs to both rows; the budget counts it once */
          if (g_hash_table_contains (mem->gap_of, m->id) || catchup_memory_add (mem, m, (int) r, budget))
            g_ptr_array_add (row->turns, catchup_message_copy (m));
        }
    }
}

static gint
cmp_msg_chrono (gconstpointer a, gconstpointer b)
{
  const CatchupMessage *x = *(CatchupMessage *const *) a, *y = *(CatchupMessage *const *) b;
  CatchupPos p = catchup_pos_of (x), q = catchup_pos_of (y);

  return catchup_pos_cmp (&p, &q);
}

static gboolean
record_bears_on (const Ctx *c, const CatchupRecord *r, const char *person, GPtrArray *topic_terms)
{
  if (!is_person (c, r->owner, person))
    return FALSE;
  for (guint i = 0; i < topic_terms->len; i++)
    {
      g_autofree char *padded = g_strdup_printf (" %s ", r->subject);
      g_autofree char *needle = g_strdup_printf (" %s ", (char *) topic_terms->pdata[i]);

      if (strstr (padded, needle))
        return TRUE;
    }
  return FALSE;
}

/* The derived track's part of a row: the person's records on the question's subject (heads only unless the
 * question asks how it changed), newest kept when over the row's allowance. */
static void
row_records (const Ctx *c, CatchupAskRow *row, GPtrArray *topic_terms, guint allowance)
{
  guint used = 0;

  for (guint i = c->records->len; i-- > 0 && row->records->len < RECORDS_PER_ROW;)
    {
      CatchupRecord *r = c->records->pdata[i];
      guint t = catchup_text_count_turn (r->source, r->text);

      if (!record_bears_on (c, r, row->person, topic_terms) ||
          (c->q->mode == CATCHUP_ASK_HEAD && r->superseded_by != 0) || used + t > allowance)
        continue;
      used += t;
      g_ptr_array_insert (row->records, 0, catchup_record_copy (r));
    }
}

static void
finish_rows (GPtrArray *rows)
{
  for (guint r = 0; r < rows->len; r++)
    {
      CatchupAskRow *row = rows->pdata[r];

      g_ptr_array_sort (row->turns, cmp_msg_chrono);
      if (row->turns->len)
        row->latest_id = g_strdup (((CatchupMessage *) g_ptr_array_index (row->turns, row->turns->len - 1))->id);
    }
}

/* What the budget leaves once every turn by or about the people asked about is in: the room's turns by the
 * question's own score (its words, the thread, the verbatim recall), without the relation to a person. They
 * join the evidence, never a person's row: a reply by someone else often says what the person's turn left
 * open, but an empty row stays empty. */
static void
fill_leftover (const Ctx *c, CatchupMemory *mem, guint budget)
{
  g_autoptr (GArray) ranked = g_array_new (FALSE, FALSE, sizeof (Ranked));

  for (guint i = 0; i < c->n; i++)
    {
      const Turn *t = &c->turns[i];
      Ranked r = { t, t->base + W_THREAD * t->thread + W_RECALL * t->recalled };

      if (!g_hash_table_contains (mem->gap_of, t->msg->id))
        g_array_append_val (ranked, r);
    }
  g_array_sort (ranked, cmp_ranked);
  for (guint i = 0; i < ranked->len && mem->tokens < budget; i++)
    catchup_memory_add (mem, g_array_index (ranked, Ranked, i).turn->msg, (int) c->q->people->len, budget);
}

static gboolean
ask_people (Ctx *c, CatchupAskResult *res, guint budget, GError **error)
{
  g_autoptr (GPtrArray) lists = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autoptr (GPtrArray) topic_terms = catchup_text_terms (c->q->topic, TRUE);
  guint n = c->q->people->len;

  c->folded_people = g_new0 (char *, n + 1);
  for (guint p = 0; p < n; p++)
    c->folded_people[p] = catchup_records_fold (c->q->people->pdata[p]);
  if ((c->nicks = catchup_nicks_load (c->store, c->room, error)) == NULL ||
      (c->msgs = scan_messages (c->store, c->room, error)) == NULL ||
      (c->records = catchup_records_list (c->store, c->room, NULL, FALSE, error)) == NULL ||
      !score_turns (c, error))
    return FALSE;
  for (guint p = 0; p < n; p++)
    {
      g_ptr_array_add (res->rows, row_new (c->q->people->pdata[p]));
      g_ptr_array_add (lists, rank_for_person (c, p));
    }
  accumulate_rows (res->memory, res->rows, lists, budget);
  fill_leftover (c, res->memory, budget);
  for (guint p = 0; p < n; p++)
    row_records (c, res->rows->pdata[p], topic_terms, budget / RECORD_SHARE / MAX (n, 1));
  return TRUE;
}

static gboolean
turn_involves (const CatchupMessage *m, const char *person)
{
  g_autofree char *folded = NULL, *nick = NULL;

  if (g_strcmp0 (m->speaker, person) == 0)
    return TRUE;
  folded = catchup_records_fold (m->text);
  nick = catchup_records_fold (person);
  return catchup_records_has_phrase (folded, nick);
}

CatchupAskResult *
catchup_ask_from_memory (CatchupAskQuery *q, CatchupMemory *mem)
{
  CatchupAskResult *res = g_new0 (CatchupAskResult, 1);

  res->query = q;
  res->memory = mem;
  res->rows = g_ptr_array_new_with_free_func ((GDestroyNotify) row_free);
  if (q->people->len == 0)
    g_ptr_array_add (res->rows, row_new (NULL));
  for (guint p = 0; p < q->people->len; p++)
    g_ptr_array_add (res->rows, row_new (q->people->pdata[p]));
  for (guint i = 0; i < mem->turns->len; i++)
    for (guint r = 0; r < res->rows->len; r++)
      {
        CatchupAskRow *row = res->rows->pdata[r];

        if (row->person == NULL || turn_involves (mem->turns->pdata[i], row->person))
          g_ptr_array_add (row->turns, catchup_message_copy (mem->turns->pdata[i]));
      }
  finish_rows (res->rows);
  return res;
}

static gboolean
speaker_turns (CatchupStore *store, gint64 room, const char *speaker, gint64 *n, GError **error)
{
  sqlite3_stmt *st = catchup_db_prepare (catchup_store_db (store), "SELECT count(*) FROM messages WHERE room = ?1 AND speaker = ?2",
                                            error);
  int rc;

  *n = 0;
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, room);
  sqlite3_bind_text (st, 2, speaker, -1, SQLITE_TRANSIENT);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    *n = sqlite3_column_int64 (st, 0);
  sqlite3_reset (st);
  if (rc != SQLITE_ROW)
    {
      catchup_db_set_error (catchup_store_db (store), rc, error, _("Could not read the history database"));
      return FALSE;
    }
  return TRUE;
}

gboolean
catchup_ask_per_person (CatchupStore *store, gint64 room, const CatchupAskQuery *q, gboolean *per_person,
                        GError **error)
{
  gint64 total = catchup_store_count (store, room, error), named = 0;

  *per_person = FALSE;
  if (total < 0)
    return FALSE;
  if (q->people->len == 0)
    return TRUE;
  if (q->everyone)
    {
      *per_person = TRUE;
      return TRUE;
    }
  for (guint p = 0; p < q->people->len; p++)
    {
      gint64 n;

      if (!speaker_turns (store, room, q->people->pdata[p], &n, error))
        return FALSE;
      named += n;
    }
  *per_person = named <= PERSON_SHARE * (double) total;
  return TRUE;
}

CatchupAskResult *
catchup_ask_people (CatchupStore *store, gint64 room, CatchupAskQuery *q, guint budget, GError **error)
{
  g_autoptr (CatchupAskResult) res = g_new0 (CatchupAskResult, 1);
  Ctx c = { store, room, q, NULL, NULL, 0, NULL, NULL, budget, NULL };
  gboolean ok;

  res->query = q;
  res->rows = g_ptr_array_new_with_free_func ((GDestroyNotify) row_free);
  res->memory = catchup_memory_new ();
  ok = ask_people (&c, res, budget, error);
  ctx_clear (&c);
  if (!ok)
    return NULL;
  g_ptr_array_sort (res->memory->turns, cmp_msg_chrono);
  finish_rows (res->rows);
  return g_steal_pointer (&res);
}

CatchupAskQuery *
catchup_ask_compile_for_room (CatchupStore *store, gint64 room, const char *question, GError **error)
{
  g_auto (GStrv) roster = catchup_records_roster (store, room, error);

  return roster ? catchup_ask_compile (question, (const char *const *) roster) : NULL;
}
