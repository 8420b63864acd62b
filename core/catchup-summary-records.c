#include "config.h"

#include <string.h>

#include "catchup-summary-private.h"

/*
 * What the derived track adds to a summary. The records say who owes what to whom and which decision replaced
 * which; the window alone cannot say that a request to the user from last week is still open, or that today's
 * decision replaced one from before the window. The summary reads them here, for the lines of any producer.
 */

/* Requests and commitments from before the window: at most this many, the newest, and none older than this. */
#define MAX_EARLIER 3
#define EARLIER_SECONDS (14 * 86400)
/* Subject terms a decision must share with the one its record replaced before the line shows it: the records
 * link on one shared term, which is enough for a chain to be asked about but too loose to print as "was:". */
#define CHAIN_TERMS 3

static gboolean
same_nick (const char *a, const char *b)
{
  g_autofree char *x = catchup_records_fold (a ? a : "");
  g_autofree char *y = catchup_records_fold (b ? b : "");
  return *x && strcmp (x, y) == 0;
}

/* An open commitment that concerns me: a request to me by someone else, or one I made myself. */
static gboolean
is_open_for (const CatchupRecord *r, const char *me)
{
  if (r->kind != CATCHUP_RECORD_COMMITMENT || r->superseded_by != 0 || !same_nick (r->owner, me))
    return FALSE;
  gboolean request = (r->flags & CATCHUP_RECORD_FLAG_REQUEST) != 0;
  return request ? !same_nick (r->source, me) : same_nick (r->source, me);
}

static gboolean
add_unique (GPtrArray *out, GHashTable *seen, CatchupRecord *r)
{
  if (!g_hash_table_add (seen, &r->id)) {
    catchup_record_free (r);
    return FALSE;
  }
  g_ptr_array_add (out, r);
  return TRUE;
}

static gint
by_time (gconstpointer x, gconstpointer y)
{
  const CatchupRecord *a = *(const CatchupRecord *const *) x;
  const CatchupRecord *b = *(const CatchupRecord *const *) y;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  return a->id < b->id ? -1 : (a->id > b->id);
}

GPtrArray *
catchup_summary_records_load (CatchupStore *store, gint64 room, GPtrArray *window, const char *me, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_record_free);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GHashTable) rows = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GPtrArray) between = NULL;
  gint64 first = G_MAXINT64, last = G_MININT64;

  for (guint i = 0; window && i < window->len; i++) {
    CatchupMessage *m = window->pdata[i];
    g_hash_table_add (rows, &m->row);
    first = MIN (first, m->row);
    last = MAX (last, m->row);
  }
  if (first <= last) {
    if (!(between = catchup_records_between (store, room, first, last, error)))
      return NULL;
    /* a window of LAST or SINCE is every row of its span; one of BETWEEN may skip events */
    for (guint i = 0; i < between->len; i++) {
      CatchupRecord *r = between->pdata[i];
      if (!g_hash_table_contains (rows, &r->row))
        continue;
      gint64 earlier = r->supersedes;
      if (add_unique (out, seen, catchup_record_copy (r)) && earlier) {
        CatchupRecord *e = catchup_records_get (store, room, earlier, NULL);
        if (e)
          add_unique (out, seen, e);
      }
    }
  }
  if (me && *me) {
    g_autoptr (GPtrArray) mine = catchup_records_list (store, room, me, TRUE, error);
    if (!mine)
      return NULL;
    for (guint i = 0; i < mine->len; i++)
      if (is_open_for (mine->pdata[i], me))
        add_unique (out, seen, catchup_record_copy (mine->pdata[i]));
  }
  g_ptr_array_sort (out, by_time);
  return g_steal_pointer (&out);
}

/* ---- applying them ---- */

typedef struct {
  CatchupSummary *summary;
  GHashTable *in_window;   /* message id -> CatchupMessage */
  GHashTable *by_id;       /* record id (gint64 *) -> CatchupRecord */
  gint64 start;            /* the window's first turn */
  guint line_chars;
} Apply;

static CatchupSummaryLine *
line_of (const Apply *a, const char *msg_id)
{
  for (guint i = 0; msg_id && i < a->summary->lines->len; i++) {
    CatchupSummaryLine *line = a->summary->lines->pdata[i];
    for (guint k = 0; k < line->sources->len; k++)
      if (g_strcmp0 (line->sources->pdata[k], msg_id) == 0)
        return line;
  }
  return NULL;
}

static char *
record_excerpt (const CatchupRecord *r, guint max_chars)
{
  g_autofree char *clean = catchup_summary_clean (r->text ? r->text : "");
  return catchup_summary_excerpt (clean, NULL, max_chars);
}

static CatchupSummaryItem *
record_item (const CatchupRecord *r, guint max_chars)
{
  g_autofree char *text = record_excerpt (r, max_chars);
  return catchup_summary_item_new (NULL, r->msg_id, r->source, r->ts, text);
}

/* A window request or commitment for me: its line moves to "For you"; when the summary left it out, it gets one. */
static void
for_you_in_window (Apply *a, const CatchupRecord *r)
{
  CatchupSummaryLine *line = line_of (a, r->msg_id);
  if (!line) {
    g_autofree char *text = record_excerpt (r, a->line_chars);
    line = catchup_summary_line_new (CATCHUP_SECTION_FOR_YOU, r->msg_id, r->source, r->ts, text);
    g_ptr_array_add (a->summary->lines, line);
  }
  line->section = CATCHUP_SECTION_FOR_YOU;
}

static gint
by_ts_desc (gconstpointer x, gconstpointer y)
{
  const CatchupRecord *a = *(const CatchupRecord *const *) x;
  const CatchupRecord *b = *(const CatchupRecord *const *) y;
  return a->ts < b->ts ? 1 : (a->ts > b->ts ? -1 : 0);
}

/* Requests and commitments from before the window that are still open: lines of their own, marked, oldest
 * first (they are shown before the window's own lines of "For you"). */
static void
for_you_earlier (Apply *a, GPtrArray *earlier)
{
  g_ptr_array_sort (earlier, by_ts_desc);
  g_ptr_array_set_size (earlier, MIN (earlier->len, MAX_EARLIER));
  for (guint i = earlier->len; i-- > 0;) {
    const CatchupRecord *r = earlier->pdata[i];
    g_autofree char *text = record_excerpt (r, a->line_chars);
    CatchupSummaryLine *line = catchup_summary_line_new (CATCHUP_SECTION_FOR_YOU, NULL, r->source, r->ts, text);
    line->before = record_item (r, a->line_chars);
    g_ptr_array_insert (a->summary->lines, 0, line);
  }
}

static void
apply_for_you (Apply *a, GPtrArray *records, const char *me)
{
  g_autoptr (GPtrArray) earlier = g_ptr_array_new ();
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < records->len; i++) {
    const CatchupRecord *r = records->pdata[i];
    if (!is_open_for (r, me) || !r->msg_id || !g_hash_table_add (seen, r->msg_id))
      continue;
    if (g_hash_table_contains (a->in_window, r->msg_id))
      for_you_in_window (a, r);
    else if (r->ts < a->start && a->start - r->ts <= EARLIER_SECONDS)
      g_ptr_array_add (earlier, (gpointer) r);
  }
  for_you_earlier (a, earlier);
}

static guint
shared_subject (const CatchupRecord *x, const CatchupRecord *y)
{
  g_auto (GStrv) tx = g_strsplit (x->subject ? x->subject : "", " ", -1);
  g_auto (GStrv) ty = g_strsplit (y->subject ? y->subject : "", " ", -1);
  guint n = 0;
  for (guint i = 0; tx[i]; i++)
    n += *tx[i] && g_strv_contains ((const char *const *) ty, tx[i]);
  return n;
}

static gboolean
cites (GPtrArray *items, const char *id)
{
  for (guint i = 0; i < items->len; i++)
    if (g_strcmp0 (((CatchupSummaryItem *) items->pdata[i])->id, id) == 0)
      return TRUE;
  return FALSE;
}

/* "packaging question that needs a decision: do we version …?" asks for a decision, it makes none. */
static gboolean
opens_with_question (const char *text)
{
  for (const char *p = text ? text : ""; *p; p++)
    if (catchup_summary_ends_sentence (text, p))
      return *p == '?';
  return FALSE;
}

/* The earlier decision r replaced, when the two are plainly about the same thing. */
static const CatchupRecord *
replaced_decision (const Apply *a, const CatchupRecord *r)
{
  const CatchupRecord *e = r->supersedes ? g_hash_table_lookup (a->by_id, &r->supersedes) : NULL;
  if (!e || e->kind != CATCHUP_RECORD_DECISION || !e->msg_id || shared_subject (r, e) < CHAIN_TERMS ||
      opens_with_question (e->text) || opens_with_question (r->text))
    return NULL;
  return e;
}

/* A decision line shows what its decision replaced; a shown line whose decision a later shown line replaced is
 * no current state: it moves under that line. */
static void
apply_chains (Apply *a, GPtrArray *records)
{
  for (guint i = 0; i < records->len; i++) {
    const CatchupRecord *r = records->pdata[i];
    const CatchupRecord *e = r->kind == CATCHUP_RECORD_DECISION ? replaced_decision (a, r) : NULL;
    CatchupSummaryLine *line = e ? line_of (a, r->msg_id) : NULL;
    if (!line || cites (line->supersedes, e->msg_id) || line_of (a, e->msg_id) == line)
      continue;
    CatchupSummaryLine *old = line_of (a, e->msg_id);
    if (old && catchup_summary_line_source (old) && g_strcmp0 (catchup_summary_line_source (old), e->msg_id) == 0)
      g_ptr_array_remove (a->summary->lines, old);
    g_ptr_array_add (line->supersedes, record_item (e, a->line_chars));
  }
}

static gint
by_section_then_time (gconstpointer x, gconstpointer y)
{
  const CatchupSummaryLine *a = *(CatchupSummaryLine *const *) x;
  const CatchupSummaryLine *b = *(CatchupSummaryLine *const *) y;
  if (a->section != b->section)
    return (gint) a->section - (gint) b->section;
  if (a->section != CATCHUP_SECTION_FOR_YOU || a->ts == b->ts)
    return 0;
  return a->ts < b->ts ? -1 : 1;
}

/* A quoted earlier state or request: as long as a context item of the normal length. */
#define RECORD_CHARS 160

void
catchup_summary_apply_records (CatchupSummary *summary, GPtrArray *window, GPtrArray *records, const char *me)
{
  g_autoptr (GHashTable) in_window = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) by_id = g_hash_table_new (g_int64_hash, g_int64_equal);
  Apply a = { summary, in_window, by_id, 0, RECORD_CHARS };

  if (!summary || !records || records->len == 0)
    return;
  for (guint i = 0; window && i < window->len; i++) {
    CatchupMessage *m = window->pdata[i];
    if (!m->id)
      continue;
    if (g_hash_table_size (in_window) == 0)
      a.start = m->ts;
    g_hash_table_insert (in_window, m->id, m);
  }
  for (guint i = 0; i < records->len; i++) {
    CatchupRecord *r = records->pdata[i];
    g_hash_table_insert (by_id, &r->id, r);
  }
  apply_chains (&a, records);
  if (me && *me)
    apply_for_you (&a, records, me);
  /* the lines "For you" came from two places: in time order again, the earlier ones first */
  g_ptr_array_sort (summary->lines, by_section_then_time);
}
