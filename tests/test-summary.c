#include "config.h"

#include <string.h>

#include "catchup.h"

/* A Tuesday, 09:00 UTC. */
#define T0 ((gint64) 1772528400)
#define MIN_ (60)
#define HOUR_ (3600)
#define DAY (86400)

typedef struct {
  const char *id;
  gint64 ts;
  const char *speaker;
  const char *text;
} Row;

static GPtrArray *
messages_from (const Row *rows, guint n)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (out, catchup_message_new (rows[i].id, rows[i].ts, rows[i].speaker, rows[i].text));
  return out;
}

/* The memory module owns the real constructor; tests build the struct the summary reads. */
static CatchupMemory *
memory_new (const Row *rows, guint n)
{
  CatchupMemory *mem = g_new0 (CatchupMemory, 1);
  mem->turns = messages_from (rows, n);
  mem->gaps = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_gap_free);
  mem->gap_of = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return mem;
}

static void
memory_add_gap (CatchupMemory *mem, const char *utterance_id, const char *expression, const char *query,
                const char *const *turn_ids)
{
  CatchupGap *gap = catchup_gap_new ();
  gap->utterance_id = g_strdup (utterance_id);
  gap->expression = g_strdup (expression);
  gap->query = g_strdup (query);
  gap->type = CATCHUP_GAP_REFERENTIAL;
  g_ptr_array_add (mem->gaps, gap);
  for (guint i = 0; turn_ids && turn_ids[i]; i++)
    g_hash_table_insert (mem->gap_of, g_strdup (turn_ids[i]), GINT_TO_POINTER ((gint) mem->gaps->len));
}

static void
memory_free (CatchupMemory *mem)
{
  g_ptr_array_unref (mem->turns);
  g_ptr_array_unref (mem->gaps);
  g_hash_table_unref (mem->gap_of);
  g_free (mem);
}

static CatchupSummary *
summarize (GPtrArray *window, CatchupMemory *mem, CatchupLength length)
{
  CatchupSummaryOptions opts;
  catchup_summary_options_init (&opts);
  opts.length = length;
  return catchup_summary_extractive (window, mem, &opts);
}

static const CatchupMessage *
find_message (GPtrArray *msgs, const char *id)
{
  for (guint i = 0; i < msgs->len; i++) {
    const CatchupMessage *m = msgs->pdata[i];
    if (g_strcmp0 (m->id, id) == 0)
      return m;
  }
  return NULL;
}

/* Every piece of quoted text between ellipses is the speaker's own words. */
static void
assert_quotes (const char *quoted, const char *source)
{
  g_auto (GStrv) pieces = g_strsplit (quoted, "…", -1);
  for (guint i = 0; pieces[i]; i++) {
    g_autofree char *piece = g_strstrip (g_strdup (pieces[i]));
    if (*piece)
      g_assert_nonnull (strstr (source, piece));
  }
}

static const CatchupSummaryLine *line_for (const CatchupSummary *s, const char *source_id);

/* The summary of rows has a line for rows[k] that shows needle and quotes the message. */
static void
assert_line_shows (const Row *rows, guint n, CatchupLength length, guint k, const char *needle)
{
  g_autoptr (GPtrArray) window = messages_from (rows, n);
  g_autoptr (CatchupSummary) s = summarize (window, NULL, length);
  const CatchupSummaryLine *line = line_for (s, rows[k].id);

  g_assert_nonnull (line);
  g_assert_nonnull (strstr (line->text, needle));
  assert_quotes (line->text, rows[k].text);
}

/* A window of one message, summarized short: its line starts with prefix and quotes the message. */
static void
assert_one_line_starts (const char *text, const char *prefix)
{
  const Row rows[] = { { "o1", T0, "someone", text } };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_SHORT);
  const CatchupSummaryLine *line = s->lines->len ? s->lines->pdata[0] : NULL;

  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line->text, prefix));
  assert_quotes (line->text, text);
}

static void
assert_attributed (const CatchupSummary *s, GPtrArray *window)
{
  for (guint i = 0; i < s->lines->len; i++) {
    const CatchupSummaryLine *line = s->lines->pdata[i];
    if (!catchup_summary_line_source (line))
      continue;
    const CatchupMessage *src = find_message (window, catchup_summary_line_source (line));
    g_assert_nonnull (src);
    g_assert_cmpstr (line->speaker, ==, src->speaker);
    g_assert_cmpint (line->ts, ==, src->ts);
    assert_quotes (line->text, src->text);
  }
}

static guint
rendered_lines (const CatchupSummary *s)
{
  g_autofree char *text = catchup_summary_to_text (s);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = 0;
  g_test_message ("%s", text);
  /* section headings are layout, not content */
  for (guint i = 0; lines[i]; i++)
    n += *lines[i] && !g_str_has_suffix (lines[i], ":");
  return n;
}

/* Whether a reference line of the summary explains the expression ref. */
static gboolean
has_ref (const CatchupSummary *s, const char *ref)
{
  for (guint i = 0; i < s->lines->len; i++) {
    const CatchupSummaryLine *line = s->lines->pdata[i];
    for (guint k = 0; k < line->context->len; k++)
      if (g_strcmp0 (((CatchupSummaryItem *) line->context->pdata[k])->ref, ref) == 0)
        return TRUE;
  }
  return FALSE;
}

static gboolean
has_context (const CatchupSummary *s, const char *needle)
{
  for (guint i = 0; i < s->lines->len; i++) {
    const CatchupSummaryLine *line = s->lines->pdata[i];
    for (guint k = 0; k < line->context->len; k++) {
      const CatchupSummaryItem *item = line->context->pdata[k];
      if (strstr (item->text, needle) || (item->speaker && strstr (item->speaker, needle)))
        return TRUE;
    }
  }
  return FALSE;
}

static const CatchupSummaryLine *
line_for (const CatchupSummary *s, const char *source_id)
{
  for (guint i = 0; i < s->lines->len; i++) {
    const CatchupSummaryLine *line = s->lines->pdata[i];
    if (g_strcmp0 (catchup_summary_line_source (line), source_id) == 0)
      return line;
  }
  return NULL;
}

static const Row team[] = {
  { "w01", T0 + 0 * MIN_, "ines", "morning all" },
  { "w02", T0 + 1 * MIN_, "bert", "o/" },
  { "w03", T0 + 2 * MIN_, "ines", "the staging database ran out of disk overnight, the nightly import failed at 03:10" },
  { "w04", T0 + 3 * MIN_, "carl", "I can resize the volume after lunch, it needs a short downtime" },
  { "w05", T0 + 4 * MIN_, "ines", "let's go with the resize then, and we'll move the import to 05:00 so it stops colliding with backups" },
  { "w06", T0 + 5 * MIN_, "bert", "fine by me" },
  { "w07", T0 + 6 * MIN_, "carl", "ok" },
  { "w08", T0 + 8 * MIN_, "dana", "could you also rotate the old import logs? they are 40 GB now" },
  { "w09", T0 + 9 * MIN_, "carl", "sure, I'll do that together with the resize" },
  { "w10", T0 + 12 * MIN_, "ci-bot", "[ci] importer main 1a2b3c: FAILED on arm64 (test_csv_quotes)" },
  { "w11", T0 + 13 * MIN_, "ci-bot", "[gh] dana opened #88: csv: handle doubled quotes" },
  { "w12", T0 + 14 * MIN_, "dana", "opened #88 for the csv quoting bug, it should fix the arm64 failure too. please review when you can" },
  { "w13", T0 + 20 * MIN_, "bert", "I think we should switch the importer to streaming parsing instead of loading the file at once" },
  { "w14", T0 + 30 * MIN_, "ines", "lol" },
  { "w15", T0 + 40 * MIN_, "dana", "does anyone know who owns the backup cron now?" },
};

static void
test_attribution (void)
{
  g_autoptr (GPtrArray) window = messages_from (team, G_N_ELEMENTS (team));
  CatchupMemory *mem = memory_new (NULL, 0);
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_NORMAL);

  rendered_lines (s);
  g_assert_nonnull (s->headline);
  g_assert_nonnull (strstr (s->headline, "15 messages from 5 people"));
  assert_attributed (s, window);
  /* Greetings, reactions and bot echoes are not news; a CI failure is. */
  g_assert_null (line_for (s, "w01"));
  g_assert_null (line_for (s, "w02"));
  g_assert_null (line_for (s, "w07"));
  g_assert_null (line_for (s, "w14"));
  g_assert_null (line_for (s, "w11"));
  g_assert_nonnull (line_for (s, "w10"));
  g_assert_nonnull (line_for (s, "w05"));
  memory_free (mem);
}

static void
test_agreement (void)
{
  g_autoptr (GPtrArray) window = messages_from (team, G_N_ELEMENTS (team));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *decided = line_for (s, "w05");
  const CatchupSummaryLine *proposed = line_for (s, "w13");

  /* ines's decision got others' assent: it is agreed, and still hers. */
  g_assert_nonnull (decided);
  g_assert_cmpstr (decided->speaker, ==, "ines");
  g_assert_cmpuint (decided->agreed->len, ==, 2);
  g_assert_cmpstr (((CatchupSummaryItem *) decided->agreed->pdata[0])->speaker, ==, "bert");
  g_assert_cmpstr (((CatchupSummaryItem *) decided->agreed->pdata[0])->id, ==, "w06");
  g_assert_cmpstr (((CatchupSummaryItem *) decided->agreed->pdata[1])->speaker, ==, "carl");
  /* bert's opinion nobody answered stays bert's opinion. */
  g_assert_nonnull (proposed);
  g_assert_cmpstr (proposed->speaker, ==, "bert");
  g_assert_cmpuint (proposed->agreed->len, ==, 0);
}

static void
test_reply (void)
{
  const Row rows[] = {
    { "r1", T0, "ines", "can you restart the exporter on db2?" },
    { "r2", T0 + 60, "bert", "done" },
    { "r3", T0 + 120, "carl", "the dashboards for the billing cluster were empty for an hour this morning" },
    { "r4", T0 + 180, "dana", "who is on call for the payment gateway this weekend?" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *asked = line_for (s, "r1");
  const CatchupSummaryLine *open = line_for (s, "r4");

  assert_attributed (s, window);
  /* bert's "done" is his, quoted under the request it answers, not a line floating on its own. */
  g_assert_null (line_for (s, "r2"));
  g_assert_nonnull (asked);
  g_assert_cmpuint (asked->reply->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) asked->reply->pdata[0])->id, ==, "r2");
  g_assert_cmpstr (((CatchupSummaryItem *) asked->reply->pdata[0])->text, ==, "done");
  g_assert_false (asked->no_reply);
  g_assert_nonnull (open);
  g_assert_cmpuint (open->reply->len, ==, 0);
  g_assert_true (open->no_reply);
  g_autofree char *text = catchup_summary_to_text (s);
  g_assert_nonnull (strstr (text, "↳ reply: bert (Tue 09:01): done"));
  g_assert_nonnull (strstr (text, "↳ no reply yet"));
}

/* A long day of a busy room: many worthy messages from several people. */
static GPtrArray *
busy_window (guint n)
{
  static const char *const who[] = { "ines", "bert", "carl", "dana", "emil" };
  static const char *const what[][2] = {
    { "I'll migrate the ", " service to the new cluster tomorrow" },
    { "the ", " deploy failed again on the canary, rolling back" },
    { "could you review the ", " config change before noon?" },
    { "we decided to freeze the ", " schema until the audit is done" },
    { "status: ", " latency is back under 200 ms after the cache fix" },
  };
  static const char *const topics[] = { "billing", "search", "auth", "mailer", "reports", "uploads", "metrics",
                                        "gateway", "scheduler", "exports", "ledger", "avatars" };
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  for (guint i = 0; i < n; i++) {
    g_autofree char *id = g_strdup_printf ("b%03u", i);
    const char *const *w = what[i % G_N_ELEMENTS (what)];
    g_autofree char *text = g_strconcat (w[0], topics[i % G_N_ELEMENTS (topics)], w[1], NULL);
    g_ptr_array_add (out, catchup_message_new (id, T0 + i * 7 * MIN_, who[(i * 3) % G_N_ELEMENTS (who)], text));
  }
  return out;
}

static void
test_length (void)
{
  g_autoptr (GPtrArray) window = busy_window (60);
  const struct {
    CatchupLength length;
    guint min, max;
  } cases[] = {
    { CATCHUP_LENGTH_SHORT, 3, 5 },
    { CATCHUP_LENGTH_NORMAL, 5, 12 },
    { CATCHUP_LENGTH_DETAILED, 13, 20 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (CatchupSummary) s = summarize (window, NULL, cases[i].length);
    guint n = rendered_lines (s);
    g_assert_cmpuint (n, >=, cases[i].min);
    g_assert_cmpuint (n, <=, cases[i].max);
    assert_attributed (s, window);
  }
}

static const Row history[] = {
  { "h01", T0 - DAY + 9 * 3600, "carl", "if the primary queue broker dies again we fall back to the HTTP poller, it is slower but it works" },
  { "h02", T0 - DAY + 9 * 3600 + 60, "dana", "lunch anyone?" },
  { "h03", T0 - DAY + 10 * 3600, "ines", "the weekly deploy window is Tuesday 18:00" },
  { "h04", T0 - DAY + 15 * 3600, "bert", "update: the weekly deploy window moved to Thursday 09:00, ops asked for it" },
};

static const Row incident[] = {
  { "i01", T0, "emil", "broker is down again" },
  { "i02", T0 + 2 * MIN_, "ines", "ok, switching to that fallback now, expect slower deliveries" },
  { "i03", T0 + 4 * MIN_, "dana", "we ship the fix in the usual deploy window then" },
};

static void
test_gap_context (void)
{
  g_autoptr (GPtrArray) window = messages_from (incident, G_N_ELEMENTS (incident));
  CatchupMemory *mem = memory_new (history, G_N_ELEMENTS (history));
  static const char *const fallback_turns[] = { "h01", "h02", NULL };
  memory_add_gap (mem, "i02", "that fallback", "that fallback broker fallback switch", fallback_turns);
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "i02");
  g_autoptr (GDateTime) when = g_date_time_new_from_unix_utc (history[0].ts);
  g_autofree char *stamp = g_date_time_format (when, "%a %H:%M");

  g_assert_nonnull (line);
  g_assert_cmpstr (line->speaker, ==, "ines");
  g_assert_cmpuint (line->context->len, >=, 1);
  const CatchupSummaryItem *ctx = line->context->pdata[0];
  g_assert_cmpstr (ctx->ref, ==, "that fallback");
  g_assert_cmpstr (ctx->id, ==, "h01");
  g_assert_nonnull (strstr (ctx->text, "HTTP poller"));
  g_assert_cmpstr (ctx->speaker, ==, "carl");
  g_assert_cmpint (ctx->ts, ==, history[0].ts);
  g_autofree char *text = catchup_summary_to_text (s);
  g_autofree char *cited = g_strdup_printf ("(carl, %s)", stamp);
  g_assert_nonnull (strstr (text, "↳ “that fallback” → "));
  g_assert_nonnull (strstr (text, cited));
  g_assert_null (strstr (text, "lunch"));
  assert_attributed (s, window);
  memory_free (mem);
}

/* A memory turn that does not name what the expression names is no resolution, however it was retrieved. */
static void
test_unnamed_referent (void)
{
  g_autoptr (GPtrArray) window = messages_from (incident, G_N_ELEMENTS (incident));
  /* the memory lacks carl's turn about the fallback */
  CatchupMemory *mem = memory_new (history + 1, G_N_ELEMENTS (history) - 1);
  static const char *const wrong_turns[] = { "h02", "h03", NULL };
  memory_add_gap (mem, "i02", "that fallback", "that fallback broker switch", wrong_turns);
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_DETAILED);
  const CatchupSummaryLine *line = line_for (s, "i02");

  g_assert_nonnull (line);
  for (guint i = 0; i < line->context->len; i++)
    g_assert_cmpstr (((CatchupSummaryItem *) line->context->pdata[i])->ref, !=, "that fallback");
  g_assert_false (has_context (s, "lunch"));
  g_assert_false (has_context (s, "deploy window is Tuesday"));
  memory_free (mem);
}

static void
test_revised (void)
{
  g_autoptr (GPtrArray) window = messages_from (incident, G_N_ELEMENTS (incident));
  CatchupMemory *mem = memory_new (history, G_N_ELEMENTS (history));
  static const char *const window_turns[] = { "h03", "h04", NULL };
  memory_add_gap (mem, "i03", "the usual deploy window", "usual weekly deploy window time", window_turns);

  for (CatchupLength length = CATCHUP_LENGTH_NORMAL; length <= CATCHUP_LENGTH_DETAILED; length++) {
    g_autoptr (CatchupSummary) s = summarize (window, mem, length);
    const CatchupSummaryLine *line = line_for (s, "i03");
    g_assert_nonnull (line);
    g_assert_cmpuint (line->context->len, >=, 1);
    const CatchupSummaryItem *ctx = line->context->pdata[0];
    g_assert_nonnull (strstr (ctx->text, "Thursday 09:00"));
    g_assert_cmpstr (ctx->speaker, ==, "bert");
    /* the revised state is never shown as what the expression means */
    g_assert_false (has_context (s, "Tuesday 18:00"));
  }
  memory_free (mem);
}

/* A weekday would be ambiguous once the window holds a day with the same name: older turns get a date. */
static void
test_old_memory (void)
{
  const Row old[] = {
    /* one shared word is no evidence: the turn shares two of the line's new words */
    { "o1", T0 - 7 * DAY + 3600, "carl", "if the primary queue broker dies we fall back to the HTTP poller, slower" },
  };
  g_autoptr (GPtrArray) window = messages_from (incident, G_N_ELEMENTS (incident));
  CatchupMemory *mem = memory_new (old, G_N_ELEMENTS (old));
  static const char *const turns[] = { "o1", NULL };
  memory_add_gap (mem, "i02", "that fallback", "that fallback broker", turns);
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_NORMAL);
  g_autoptr (GDateTime) when = g_date_time_new_from_unix_utc (old[0].ts);
  g_autofree char *stamp = g_date_time_format (when, "(carl, %d %b %H:%M)");
  g_autofree char *text = catchup_summary_to_text (s);

  g_assert_nonnull (strstr (text, stamp));
  memory_free (mem);
}

static void
test_empty (void)
{
  g_autoptr (GPtrArray) none = g_ptr_array_new ();
  g_autoptr (GPtrArray) window = messages_from (incident, G_N_ELEMENTS (incident));
  CatchupMemory *mem = memory_new (NULL, 0);
  /* A gap whose memory came back empty: the line stays, with nothing made up for it. */
  memory_add_gap (mem, "i02", "that fallback", "that fallback", NULL);

  g_autoptr (CatchupSummary) empty = summarize (none, mem, CATCHUP_LENGTH_NORMAL);
  g_assert_cmpuint (empty->lines->len, ==, 0);
  g_autofree char *text = catchup_summary_to_text (empty);
  g_assert_nonnull (text);

  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "i02");
  g_assert_nonnull (line);
  g_assert_cmpuint (line->context->len, ==, 0);

  g_autoptr (CatchupSummary) no_mem = summarize (window, NULL, CATCHUP_LENGTH_SHORT);
  g_assert_cmpuint (no_mem->lines->len, >, 0);
  assert_attributed (no_mem, window);
  memory_free (mem);
}

static void
assert_sane_text (const char *text, guint max_chars)
{
  g_assert_true (g_utf8_validate (text, -1, NULL));
  g_assert_cmpuint (g_utf8_strlen (text, -1), <=, max_chars);
  g_assert_null (strstr (text, "\u202e"));
  g_assert_null (strstr (text, "\n"));
}

static void
test_hostile (void)
{
  g_autofree char *blob = g_strnfill (100 * 1024, 'x');
  g_autoptr (GString) words = g_string_new (NULL);
  g_autoptr (GString) wide = g_string_new ("we decided: ");
  while (words->len < 100 * 1024)
    g_string_append (words, "please review the patch ");
  while (wide->len < 100 * 1024)
    g_string_append (wide, "é漢😀");
  const Row rows[] = {
    { "x1", T0, "mallory", blob },
    { "x2", T0 + 60, "mallory", words->str },
    { "x3", T0 + 120, "mallory", wide->str },
    { "x4", T0 + 180, "eve\u202e", "we decided to ship \u202etxt.exe\u202c tonight, please confirm" },
    { "x5", T0 + 240, "eve", "<b>please</b> review <a href='javascript:x'>this</a> &amp; merge &#x202e; now" },
    { "x6", T0 + 300, "eve", "\xff\xfe broken \xc3 bytes: we'll release today \xe2\x80" },
    { "x7", T0 + 360, "eve", "we will deploy \u200f\u0645\u0631\u062d\u0628\u0627\u200e 🎉👩‍💻 tonight\r\n\tok?" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  CatchupMemory *mem = memory_new (rows, G_N_ELEMENTS (rows));
  static const char *const turns[] = { "x1", "x2", "x3", "x4", NULL };
  memory_add_gap (mem, "x4", "\u202ethat\u202c", "that patch", turns);

  for (CatchupLength length = CATCHUP_LENGTH_SHORT; length <= CATCHUP_LENGTH_DETAILED; length++) {
    g_autoptr (CatchupSummary) s = summarize (window, mem, length);
    g_autofree char *text = catchup_summary_to_text (s);
    g_assert_true (g_utf8_validate (text, -1, NULL));
    g_assert_null (strstr (text, "\u202e"));
    g_assert_cmpuint (strlen (text), <, 8 * 1024);
    for (guint i = 0; i < s->lines->len; i++) {
      const CatchupSummaryLine *line = s->lines->pdata[i];
      if (!catchup_summary_line_source (line))
        continue;
      assert_sane_text (line->text, 320);
      for (guint k = 0; k < line->context->len; k++)
        assert_sane_text (((CatchupSummaryItem *) line->context->pdata[k])->text, 400);
    }
  }
  memory_free (mem);
}

static void
test_trim (void)
{
  const Row rows[] = {
    { "t1", T0, "ines", "we decided to keep the old importer for one more week. the new one still mangles dates in "
                        "Ünïcödé-heavy files — ñ, ç, 漢字, and emoji 😀 all break it. bert will look into it next "
                        "week; until then nobody should switch the cron over, and please tell the data team" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_SHORT);
  const CatchupSummaryLine *line = line_for (s, "t1");

  g_assert_nonnull (line);
  g_assert_true (g_utf8_validate (line->text, -1, NULL));
  g_assert_cmpuint (g_utf8_strlen (line->text, -1), <, g_utf8_strlen (rows[0].text, -1));
  g_assert_true (g_str_has_prefix (line->text, "we decided to keep the old importer"));
  assert_quotes (line->text, rows[0].text);
}

static void
test_to_text (void)
{
  g_autoptr (GPtrArray) window = messages_from (team, G_N_ELEMENTS (team));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  g_autofree char *text = catchup_summary_to_text (s);

  g_assert_true (g_str_has_prefix (text, s->headline));
  g_assert_nonnull (strstr (text, "• ines (Tue 09:04): let's go with the resize"));
  g_assert_nonnull (strstr (text, "  ↳ "));
  /* sections in their order, each once, each only with lines */
  const char *decisions = strstr (text, "\nDecisions:\n");
  const char *asked = strstr (text, "\nAsked:\n");
  const char *news = strstr (text, "\nNews and status:\n");
  g_assert_nonnull (decisions);
  g_assert_nonnull (asked);
  g_assert_nonnull (news);
  g_assert_true (decisions < asked && asked < news);
  g_assert_null (strstr (text, "For you:"));
  for (guint i = 1; i < s->lines->len; i++)
    g_assert_cmpint (((CatchupSummaryLine *) s->lines->pdata[i - 1])->section, <=,
                     ((CatchupSummaryLine *) s->lines->pdata[i])->section);
}

/* The headline as data and as text; a capped window says so and how to see the rest. */
static void
test_headline (void)
{
  g_autoptr (GPtrArray) window = messages_from (team, G_N_ELEMENTS (team));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);

  g_assert_cmpuint (s->head.messages, ==, 15);
  g_assert_cmpuint (s->head.people, ==, 5);
  g_assert_cmpint (s->head.first_ts, ==, team[0].ts);
  g_assert_cmpint (s->head.last_ts, ==, team[14].ts);
  g_assert_false (s->head.capped);
  g_assert_cmpstr (s->headline, ==, "15 messages from 5 people, Tue 09:00 – 09:40 UTC");

  catchup_summary_set_head (s, window, 40);
  g_assert_true (s->head.capped);
  g_assert_cmpuint (s->head.shown, ==, 15);
  g_assert_cmpuint (s->head.total, ==, 40);
  g_assert_true (g_str_has_prefix (s->headline, "15 messages from 5 people, Tue 09:00 – 09:40 UTC (only the newest 15 "
                                                "of 40 messages"));
  g_assert_nonnull (strstr (s->headline, "the last 40"));

  const Row one[] = { { "a", T0, "ines", "we decided to ship" }, { "b", T0 + DAY, "ines", "shipped" } };
  g_autoptr (GPtrArray) two_days = messages_from (one, G_N_ELEMENTS (one));
  catchup_summary_set_head (s, two_days, 0);
  /* within six days the weekday tells the days apart, as the plugin's headline and the lines do */
  g_assert_cmpstr (s->headline, ==, "2 messages from 1 person, Tue 09:00 – Wed 09:00 UTC");

  const Row far[] = { { "a", T0, "ines", "we decided to ship" }, { "b", T0 + 8 * DAY, "ines", "shipped" } };
  g_autoptr (GPtrArray) eight_days = messages_from (far, G_N_ELEMENTS (far));
  catchup_summary_set_head (s, eight_days, 0);
  /* beyond, a weekday alone could mean two days: the date too */
  g_assert_cmpstr (s->headline, ==, "2 messages from 1 person, Tue 03 Mar 09:00 – Wed 11 Mar 09:00 UTC");
}

/* --me: a line that names the user goes first, under "For you"; the user's own lines do not. */
static void
test_for_you (void)
{
  g_autoptr (GPtrArray) window = messages_from (team, G_N_ELEMENTS (team));
  CatchupSummaryOptions opts;
  catchup_summary_options_init (&opts);
  opts.me = "Carl";
  g_autoptr (CatchupSummary) s = catchup_summary_extractive (window, NULL, &opts);
  g_autoptr (CatchupSummary) none = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const Row rows[] = { { "c1", T0, "dana", "carl: could you rotate the import logs before friday?" } };
  g_autoptr (GPtrArray) addressed = messages_from (rows, 1);
  g_autoptr (CatchupSummary) to_carl = catchup_summary_extractive (addressed, NULL, &opts);

  g_assert_cmpuint (to_carl->lines->len, ==, 1);
  g_assert_cmpint (((CatchupSummaryLine *) to_carl->lines->pdata[0])->section, ==, CATCHUP_SECTION_FOR_YOU);
  g_autofree char *text = catchup_summary_to_text (to_carl);
  g_assert_nonnull (strstr (text, "\nFor you:\n• dana"));
  /* "carl" is not in "carlos"; carl's own lines are not for him */
  for (guint i = 0; i < s->lines->len; i++) {
    const CatchupSummaryLine *line = s->lines->pdata[i];
    if (line->section == CATCHUP_SECTION_FOR_YOU)
      g_assert_cmpstr (line->speaker, !=, "carl");
  }
  for (guint i = 0; i < none->lines->len; i++)
    g_assert_cmpint (((CatchupSummaryLine *) none->lines->pdata[i])->section, !=, CATCHUP_SECTION_FOR_YOU);
}

/* ---- the rules of the issue, one small window each ---- */

static gboolean
has_line (const CatchupSummary *s, const char *id)
{
  return line_for (s, id) != NULL;
}

/* A later date supersedes the earlier one: the latest is shown, with what it replaced, never the old one. */
static void
test_superseded_date (void)
{
  const Row rows[] = {
    { "d1", T0, "mira", "the final release of 3.0 is on Tue Mar 17, I'll tag it in the morning" },
    { "d2", T0 + 5 * MIN_, "bert", "the windows build still needs a look before then" },
    { "d3", T0 + 60 * MIN_, "mira", "update: the final release of 3.0 moves to Thu Mar 19, the header fix is not in yet" },
    { "d4", T0 + 65 * MIN_, "carl", "noted" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *latest = line_for (s, "d3");

  rendered_lines (s);
  g_assert_nonnull (latest);
  g_assert_false (has_line (s, "d1"));
  g_assert_cmpuint (latest->supersedes->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) latest->supersedes->pdata[0])->id, ==, "d1");
  g_autofree char *text = catchup_summary_to_text (s);
  g_assert_nonnull (strstr (text, "↳ was: "));
  g_assert_nonnull (strstr (text, "Tue Mar 17"));
}

/* The window revises a memory turn older than the window: the memory's state is shown as replaced. */
static void
test_revises_memory (void)
{
  const Row old[] = {
    { "o1", T0 - DAY, "mira", "the final release of 3.0 is on Tue Mar 17" },
    { "o2", T0 - DAY + 60, "bert", "lunch anyone?" },
  };
  const Row rows[] = {
    { "r1", T0, "mira", "heads up: the final release of 3.0 moves to Thu Mar 19, the header fix is not in yet" },
    { "r2", T0 + MIN_, "bert", "ok, I'll tell the packagers" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  CatchupMemory *mem = memory_new (old, G_N_ELEMENTS (old));
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "r1");

  rendered_lines (s);
  g_assert_nonnull (line);
  g_assert_cmpuint (line->supersedes->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) line->supersedes->pdata[0])->id, ==, "o1");
  memory_free (mem);
}

/* The window's line id is shown and replaces no turn of the memory. */
static void
assert_revises_no_memory (const Row *old, guint n_old, const Row *rows, guint n_rows, const char *id)
{
  g_autoptr (GPtrArray) window = messages_from (rows, n_rows);
  CatchupMemory *mem = memory_new (old, n_old);
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, id);

  g_assert_nonnull (line);
  g_assert_cmpuint (line->supersedes->len, ==, 0);
  memory_free (mem);
}

/* A number alone is no revised state against an older turn: "instead" with another version number on a loosely
 * shared topic replaces nothing. */
static void
test_number_not_revision_of_memory (void)
{
  const Row old[] = {
    { "o1", T0 - DAY, "mira", "the release notes for 2.9 mention the parser rewrite" },
  };
  const Row rows[] = {
    { "r1", T0, "mira", "let's put the parser rewrite into the 3.0 release notes instead" },
    { "r2", T0 + MIN_, "bert", "ok, I'll update the draft" },
  };
  assert_revises_no_memory (old, G_N_ELEMENTS (old), rows, G_N_ELEMENTS (rows), "r1");
}

/* A question whose answer comes two lines later, after the asker's own follow-up. */
static void
test_answer_two_lines_later (void)
{
  const Row rows[] = {
    { "q1", T0, "ines", "who owns the backup cron now?" },
    { "q2", T0 + MIN_, "ines", "it failed again last night and nobody got paged" },
    { "q3", T0 + 3 * MIN_, "bert", "carl owns the backup cron since March, he moved it to the new host" },
    { "q4", T0 + 20 * MIN_, "dana", "the staging certificates expire on Friday, I'll renew them tomorrow" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *q = line_for (s, "q1");

  rendered_lines (s);
  g_assert_nonnull (q);
  g_assert_cmpint (q->section, ==, CATCHUP_SECTION_ASKED);
  g_assert_false (q->no_reply);
  g_assert_cmpuint (q->reply->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) q->reply->pdata[0])->id, ==, "q3");
  /* the answer is covered by the question's line: its id is among the line's sources */
  g_assert_cmpuint (q->sources->len, ==, 2);
  g_assert_cmpstr (q->sources->pdata[1], ==, "q3");
}

/* An "ok" that answers a different line is no agreement with the decision before it. */
static void
test_ok_answers_other_line (void)
{
  const Row rows[] = {
    { "a1", T0, "ines", "let's go with the resize then, we move the import to 05:00" },
    { "a2", T0 + MIN_, "dana", "can you also rotate the old import logs, carl?" },
    { "a3", T0 + 2 * MIN_, "carl", "ok" },
    { "a4", T0 + 3 * MIN_, "bert", "bye all, off for today" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *decision = line_for (s, "a1");
  const CatchupSummaryLine *request = line_for (s, "a2");

  rendered_lines (s);
  g_assert_nonnull (decision);
  g_assert_cmpuint (decision->agreed->len, ==, 0);
  g_assert_nonnull (request);
  g_assert_cmpuint (request->reply->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) request->reply->pdata[0])->speaker, ==, "carl");

  /* an assent right after the line, and a goodbye that is none */
  const Row agreed[] = {
    { "b1", T0, "ines", "we decided to freeze the schema until the audit is done" },
    { "b2", T0 + MIN_, "bert", "+1" },
    { "b3", T0 + 2 * MIN_, "carl", "ok bye, see you tomorrow" },
  };
  g_autoptr (GPtrArray) w2 = messages_from (agreed, G_N_ELEMENTS (agreed));
  g_autoptr (CatchupSummary) s2 = summarize (w2, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *frozen = line_for (s2, "b1");
  g_assert_nonnull (frozen);
  g_assert_cmpuint (frozen->agreed->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) frozen->agreed->pdata[0])->speaker, ==, "bert");
}

static const Row dog_window[] = {
  { "g1", T0, "ana", "my dog finally learned the new trick, took three weeks of treats" },
  { "g2", T0 + MIN_, "bo", "haha nice" },
};

/* "my dog" is the speaker's: another speaker's dog in memory explains nothing; the speaker's own does. */
static void
test_my_dog (void)
{
  const Row others[] = { { "m1", T0 - DAY, "bo", "my dog Rex loves the beach, we go every Sunday" } };
  const Row own[] = {
    { "m1", T0 - DAY, "bo", "my dog Rex loves the beach, we go every Sunday" },
    { "m2", T0 - DAY + 60, "ana", "we adopted a dog last month, a border collie called Pixel, she loves treats" },
  };
  g_autoptr (GPtrArray) window = messages_from (dog_window, G_N_ELEMENTS (dog_window));
  CatchupMemory *mem = memory_new (others, G_N_ELEMENTS (others));
  memory_add_gap (mem, "g1", "my dog", "my dog", NULL);
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "g1");

  g_assert_nonnull (line);
  g_assert_cmpuint (line->context->len, ==, 0);
  memory_free (mem);

  mem = memory_new (own, G_N_ELEMENTS (own));
  memory_add_gap (mem, "g1", "my dog", "my dog", NULL);
  g_autoptr (CatchupSummary) s2 = summarize (window, mem, CATCHUP_LENGTH_NORMAL);
  line = line_for (s2, "g1");
  g_assert_nonnull (line);
  g_assert_cmpuint (line->context->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) line->context->pdata[0])->id, ==, "m2");
  g_assert_cmpstr (((CatchupSummaryItem *) line->context->pdata[0])->speaker, ==, "ana");
  memory_free (mem);
}

/* A stock phrase and a pronoun with two candidate antecedents get no reference line. */
static void
test_no_reference (void)
{
  const Row history_rows[] = {
    { "p1", T0 - DAY, "lea", "Mira will review the parser patch, she knows the tokenizer best" },
    { "p2", T0 - DAY + 60, "lea", "Ines wrote the first draft of the tokenizer docs, she asked for feedback" },
    { "p3", T0 - DAY + 120, "lea", "by the way the way we parse dates is broken" },
  };
  const Row rows[] = {
    { "n1", T0, "bo", "by the way, the parser patch is merged and the tokenizer tests pass" },
    { "n2", T0 + MIN_, "bo", "she said the tokenizer docs are next, please review them this week" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  CatchupMemory *mem = memory_new (history_rows, G_N_ELEMENTS (history_rows));
  memory_add_gap (mem, "n1", "by the way", "by the way", NULL);
  memory_add_gap (mem, "n2", "she", "she tokenizer docs", NULL);
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_DETAILED);

  rendered_lines (s);
  g_assert_true (has_line (s, "n1"));
  g_assert_true (has_line (s, "n2"));
  g_assert_false (has_ref (s, "by the way"));
  g_assert_false (has_ref (s, "she"));
  memory_free (mem);
}

/* 500 messages of routine, the decisive lines at the end: they are shown, and the end of the window is. */
static void
test_decisive_last (void)
{
  g_autoptr (GPtrArray) window = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  static const char *const who[] = { "ines", "bert", "carl", "dana" };
  for (guint i = 0; i < 497; i++) {
    g_autofree char *id = g_strdup_printf ("c%03u", i);
    g_autofree char *text = g_strdup_printf ("status: nightly job %u finished, the dashboard for shard %u is green",
                                             i, i % 7);
    g_ptr_array_add (window, catchup_message_new (id, T0 + i * 20 * MIN_, who[i % 4], text));
  }
  g_ptr_array_add (window, catchup_message_new ("c497", T0 + 497 * 20 * MIN_, "mira",
                                                "decision: tkovac is release manager for 3.1 from now on, I step back"));
  g_ptr_array_add (window, catchup_message_new ("c498", T0 + 498 * 20 * MIN_, "tkovac",
                                                "ok, I'll tag 3.1.0 on Friday and send the announcement"));
  g_ptr_array_add (window, catchup_message_new ("c499", T0 + 499 * 20 * MIN_, "bert", "+1"));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);

  guint n = rendered_lines (s);
  g_assert_true (has_line (s, "c497"));
  g_assert_true (has_line (s, "c498"));
  g_assert_cmpuint (n, <=, 30);
  guint late = 0;
  for (guint i = 0; i < s->lines->len; i++)
    late += g_strcmp0 (catchup_summary_line_source (s->lines->pdata[i]), "c375") >= 0;
  g_assert_cmpuint (late, >=, 2);
  /* chosen lines are in time order within their section */
  for (guint i = 1; i < s->lines->len; i++) {
    const CatchupSummaryLine *a = s->lines->pdata[i - 1], *b = s->lines->pdata[i];
    if (a->section == b->section)
      g_assert_cmpint (a->ts, <=, b->ts);
  }
}

/* "actually" says nothing changed: a later line using it with another number replaces no earlier line. */
static void
test_actually_no_revision (void)
{
  const Row rows[] = {
    { "x1", T0, "tkovac", "#1473 landed on the release branch last night around 21:40, rc2 goes out today" },
    { "x2", T0 + 5 * MIN_, "pbaird", "the big-endian runner is back, the queue is 14 jobs deep" },
    { "x3", T0 + 60 * MIN_, "mira", "for the announcement I'll quote the numbers for what actually ships in 3.0 from the release branch" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);

  rendered_lines (s);
  g_assert_true (has_line (s, "x1"));
  for (guint i = 0; i < s->lines->len; i++)
    g_assert_cmpuint (((CatchupSummaryLine *) s->lines->pdata[i])->supersedes->len, ==, 0);
}

/* Personal news that ends in a small-talk question is news, not a question waiting for its reply. */
static void
test_news_with_small_talk (void)
{
  const Row rows[] = {
    { "n1", T0, "Melanie", "Hey Caroline, that roadtrip this past weekend was insane! We were all freaked when my son got "
                           "into an accident. We were so lucky he was okay. What's been up with you lately?" },
    { "n2", T0 + MIN_, "Caroline", "Oops, sorry 'bout the accident! Thank goodness your son's okay. Life sure can be a "
                                   "roller coaster." },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "n1");

  rendered_lines (s);
  g_assert_nonnull (line);
  g_assert_cmpint (line->section, ==, CATCHUP_SECTION_NEWS);
  g_assert_nonnull (strstr (line->text, "my son got into an accident"));
}

/* The topics left out are named by words as written: never a stem ("packag") or a contraction ("doesn"), and by
 * a name or a noun, never a verb or an adjective ("rebooted", "previous"). */
static void
test_left_out_words (void)
{
  g_autoptr (GPtrArray) window = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  static const char *const topics[] = {
    "the packaging for debian doesn't need the compat package anymore, I checked the dependencies",
    "the checksums section of the download page is generated from the published files now",
    "someone broke the nightly fuzzing builds, the corpus generator writes broken headers",
    "the translations for the porting guide are missing the deprecation table",
    "our gateways rolled out the update, the telemetry looks normal on every device",
    "the mirrors were slower than usual because the tarballs were downloaded thousands of times",
    "the keyboard shortcut for the search dialog conflicts with the accessibility settings",
    "the conference talk about the parser rewrite was accepted for the autumn programme",
    "the benchmark machine rebooted during the profiling runs and lost the results",
    "the license headers in the examples folder still name the previous copyright holder",
    "the roadmap page lists features that were deferred to the next major version",
    "the mailing list archive search is broken since the hosting migration happened",
  };
  for (guint i = 0; i < G_N_ELEMENTS (topics); i++) {
    g_autofree char *id = g_strdup_printf ("t%02u", i);
    g_ptr_array_add (window, catchup_message_new (id, T0 + i * 90 * MIN_, i % 2 ? "bert" : "carl", topics[i]));
  }
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_SHORT);

  rendered_lines (s);
  g_assert_cmpuint (s->topics_left_out, >, 0);
  g_assert_cmpuint (s->left_out_terms->len, >, 0);
  for (guint i = 0; i < s->left_out_terms->len; i++) {
    const char *word = s->left_out_terms->pdata[i];
    gboolean written = FALSE;
    for (guint k = 0; k < G_N_ELEMENTS (topics) && !written; k++) {
      g_autofree char *padded = g_strdup_printf (" %s ", topics[k]);
      g_autofree char *needle = g_strdup_printf (" %s", word);
      const char *at = strstr (padded, needle);
      written = at && strchr (" ,.", at[strlen (needle)]);
    }
    g_assert_true (written);
    g_assert_null (strchr (word, '\''));
    /* a name or the noun of a phrase, never what is said of it */
    static const char *const unnamed[] = { "broke", "writes", "rolled", "looks", "slower", "rebooted", "lost",
                                           "deferred", "happened", "previous", "broken", NULL };
    g_assert_false (g_strv_contains (unnamed, word));
  }
}

/* ---- the records ---- */

static CatchupRecord *
record_new (gint64 id, CatchupRecordKind kind, guint flags, const char *source, const char *owner, const char *subject,
            const char *msg_id, gint64 ts, const char *text)
{
  CatchupRecord *r = g_new0 (CatchupRecord, 1);
  r->id = id;
  r->kind = kind;
  r->scope = *owner ? CATCHUP_RECORD_PERSON : CATCHUP_RECORD_GROUP;
  r->flags = flags;
  r->source = g_strdup (source);
  r->owner = g_strdup (owner);
  r->subject = g_strdup (subject);
  r->text = g_strdup (text);
  r->ts = ts;
  r->row = id;
  r->msg_id = g_strdup (msg_id);
  return r;
}

static GPtrArray *
records_array (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_record_free);
}

static CatchupSummary *
summarize_with (GPtrArray *window, GPtrArray *records, const char *me)
{
  CatchupSummaryOptions opts;
  catchup_summary_options_init (&opts);
  opts.me = me;
  opts.records = records;
  return catchup_summary_extractive (window, NULL, &opts);
}

static const CatchupSummaryLine *
line_before (const CatchupSummary *s, const char *id)
{
  for (guint i = 0; i < s->lines->len; i++) {
    const CatchupSummaryLine *line = s->lines->pdata[i];
    if (line->before && g_strcmp0 (line->before->id, id) == 0)
      return line;
  }
  return NULL;
}

static const Row release_week[] = {
  { "r1", T0, "carl", "the windows runners are green again after the image update" },
  { "r2", T0 + 2 * MIN_, "bert", "mira: could you review the header split in #1473 today?" },
  { "r3", T0 + 4 * MIN_, "dana", "I pushed the fuzz corpus fix, the s390x smoke run passes now" },
  { "r4", T0 + 6 * MIN_, "mira", "the release announcement draft is mine, I'll write it tonight" },
};

/* "For you" reads the records: open requests to me (from before the window too, marked), my own open
 * commitments; a request already closed, a request to someone else and one from long ago stay out. */
static void
test_for_you_records (void)
{
  g_autoptr (GPtrArray) window = messages_from (release_week, G_N_ELEMENTS (release_week));
  g_autoptr (GPtrArray) records = records_array ();
  guint req = CATCHUP_RECORD_FLAG_REQUEST;

  g_ptr_array_add (records, record_new (1, CATCHUP_RECORD_COMMITMENT, req, "bert", "mira", "send advisory text distro",
                                        "e1", T0 - 2 * DAY, "mira: can you send the advisory text to the distros list?"));
  g_ptr_array_add (records, record_new (2, CATCHUP_RECORD_COMMITMENT, 0, "mira", "mira", "updat port guid limit", "e2",
                                        T0 - DAY, "I'll update the porting guide with the new buffer limits"));
  CatchupRecord *closed = record_new (3, CATCHUP_RECORD_COMMITMENT, req, "carl", "mira", "tag rc2", "e3", T0 - DAY,
                                      "mira: can you tag rc2?");
  closed->superseded_by = 9;
  g_ptr_array_add (records, closed);
  g_ptr_array_add (records, record_new (4, CATCHUP_RECORD_COMMITMENT, req, "carl", "dana", "rotat log", "e4", T0 - DAY,
                                        "dana: can you rotate the logs?"));
  g_ptr_array_add (records, record_new (5, CATCHUP_RECORD_COMMITMENT, req, "carl", "mira", "renew cert", "e5",
                                        T0 - 40 * DAY, "mira: can you renew the certificates?"));
  g_ptr_array_add (records, record_new (6, CATCHUP_RECORD_COMMITMENT, req, "bert", "mira", "review header split 1473",
                                        "r2", T0 + 2 * MIN_, release_week[1].text));
  g_ptr_array_add (records, record_new (7, CATCHUP_RECORD_COMMITMENT, 0, "mira", "mira", "writ announcement draft",
                                        "r4", T0 + 6 * MIN_, release_week[3].text));
  g_autoptr (CatchupSummary) s = summarize_with (window, records, "mira");
  g_autofree char *text = catchup_summary_to_text (s);

  g_test_message ("%s", text);
  const CatchupSummaryLine *asked = line_before (s, "e1"), *own = line_before (s, "e2");
  g_assert_nonnull (asked);
  g_assert_nonnull (own);
  g_assert_cmpint (asked->section, ==, CATCHUP_SECTION_FOR_YOU);
  g_assert_cmpstr (asked->speaker, ==, "bert");
  g_assert_cmpuint (asked->sources->len, ==, 0);
  g_assert_nonnull (strstr (asked->text, "advisory text"));
  g_assert_null (line_before (s, "e3"));
  g_assert_null (line_before (s, "e4"));
  g_assert_null (line_before (s, "e5"));
  g_assert_nonnull (line_for (s, "r2"));
  g_assert_nonnull (line_for (s, "r4"));
  g_assert_cmpint (line_for (s, "r2")->section, ==, CATCHUP_SECTION_FOR_YOU);
  g_assert_cmpint (line_for (s, "r4")->section, ==, CATCHUP_SECTION_FOR_YOU);
  g_assert_nonnull (strstr (text, "still open, from before this window"));
  /* the earlier ones first, then the window's, in time order */
  g_assert_true (s->lines->pdata[0] == asked);
  g_assert_true (s->lines->pdata[1] == own);
  /* without a nick, nothing is for anyone */
  g_autoptr (CatchupSummary) plain = summarize_with (window, records, NULL);
  g_assert_null (line_before (plain, "e1"));
}

static const Row decided[] = {
  { "d1", T0, "carl", "decided: the 3.0 release date is Thursday, tarballs from the release branch" },
  { "d2", T0 + 5 * MIN_, "dana", "the windows runners are green again after the image update" },
  { "d3", T0 + 60 * MIN_, "carl", "change of plan: the 3.0 release goes out on Friday, tarballs still from the release branch" },
};

/* A decision shows what its record replaced, from before the window or in it; a replaced decision is no
 * current state of its own. One shared subject word is no chain to print. */
static void
test_decision_chain_records (void)
{
  g_autoptr (GPtrArray) window = messages_from (decided + 2, 1);
  g_ptr_array_add (window, catchup_message_new ("d3", decided[2].ts, decided[2].speaker, decided[2].text));
  g_autoptr (GPtrArray) records = records_array ();
  CatchupRecord *old = record_new (1, CATCHUP_RECORD_DECISION, 0, "carl", "", "releas dat thursday tarball branch", "o1",
                                   T0 - DAY, "decided: the 3.0 release date is Thursday, tarballs from the release branch");
  CatchupRecord *now = record_new (2, CATCHUP_RECORD_DECISION, 0, "carl", "", "releas friday tarball branch", "d3",
                                   decided[2].ts, decided[2].text);
  old->superseded_by = 2;
  now->supersedes = 1;
  g_ptr_array_add (records, old);
  g_ptr_array_add (records, now);
  g_autoptr (CatchupSummary) s = summarize_with (window, records, NULL);
  const CatchupSummaryLine *line = line_for (s, "d3");

  rendered_lines (s);
  g_assert_nonnull (line);
  g_assert_cmpuint (line->supersedes->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) line->supersedes->pdata[0])->id, ==, "o1");
  g_assert_nonnull (strstr (((CatchupSummaryItem *) line->supersedes->pdata[0])->text, "Thursday"));

  /* both in the window: the earlier decision moves under the later one */
  g_autoptr (GPtrArray) both = messages_from (decided, G_N_ELEMENTS (decided));
  g_free (old->msg_id);
  old->msg_id = g_strdup ("d1");
  g_autoptr (CatchupSummary) t = summarize_with (both, records, NULL);
  rendered_lines (t);
  g_assert_false (has_line (t, "d1"));
  g_assert_cmpuint (line_for (t, "d3")->supersedes->len, ==, 1);

  /* a chain on one shared word is not shown */
  g_free (now->subject);
  now->subject = g_strdup ("branch schedule");
  g_autoptr (CatchupSummary) u = summarize_with (window, records, NULL);
  g_assert_cmpuint (line_for (u, "d3")->supersedes->len, ==, 0);
}

/* The summary of a window (rows) with a memory of past turns, the detector's expression expr flagged in the
 * window message gap_id (none when NULL), the memory's evidence for it the turns evidence (NULL-terminated, or
 * NULL). */
static CatchupSummary *
summarize_with_evidence (const Row *rows, guint n, const Row *past, guint n_past, const char *gap_id,
                         const char *expr, const char *const *evidence, CatchupLength length)
{
  g_autoptr (GPtrArray) window = messages_from (rows, n);
  CatchupMemory *mem = memory_new (past, n_past);
  if (gap_id)
    memory_add_gap (mem, gap_id, expr, expr, evidence);
  CatchupSummary *s = summarize (window, mem, length);
  rendered_lines (s);
  memory_free (mem);
  return s;
}

static CatchupSummary *
summarize_rows (const Row *rows, guint n, const Row *past, guint n_past, const char *gap_id, const char *expr,
                CatchupLength length)
{
  return summarize_with_evidence (rows, n, past, n_past, gap_id, expr, NULL, length);
}

/* The context items of the line about id, or NULL when it has no line. */
static GPtrArray *
context_of (const CatchupSummary *s, const char *id)
{
  for (guint i = 0; i < s->lines->len; i++) {
    const CatchupSummaryLine *line = s->lines->pdata[i];
    for (guint k = 0; k < line->sources->len; k++)
      if (g_strcmp0 (line->sources->pdata[k], id) == 0)
        return line->context;
  }
  return NULL;
}

/* "…, hasn't it?" asks nobody anything; "from now on" after "it's only ever going to fail" foretells, it does not
 * decide; the same words saying what people will do do; "not instead of it" decides nothing. */
static CatchupSection
section_alone (const char *speaker, const char *text)
{
  const Row rows[] = { { "s1", T0, speaker, text } };
  g_autoptr (GPtrArray) window = messages_from (rows, 1);
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "s1");
  g_assert_nonnull (line);
  return line->section;
}

static void
test_tag_and_forecast (void)
{
  g_assert_cmpint (section_alone ("Nate", "Thanks! It has been a while since my first regional tournament in Denver, hasn't it?"), ==,
                   CATCHUP_SECTION_NEWS);
  g_assert_cmpint (section_alone ("pbaird", "ok, I'll rework the windows part of the matrix tomorrow. the manual "
                                            "workflow can go too, it's only ever going to fail from now on"),
                   !=, CATCHUP_SECTION_DECISIONS);
  g_assert_cmpint (section_alone ("mira", "from now on we squash-merge every PR into main"), ==,
                   CATCHUP_SECTION_DECISIONS);
  /* a cue after "per X's" acts on an earlier decision */
  g_assert_cmpint (section_alone ("pbaird", "windows matrix reworked per gsteen's amendment: the 2019 image is gone, "
                                            "and we now build with the oldest supported MSVC plus latest"),
                   !=, CATCHUP_SECTION_DECISIONS);
  /* a negated cue decides nothing */
  g_assert_cmpint (section_alone ("tkovac", "that's still a nice headline for the release notes. and whatever the "
                                            "reader adds later comes on top of that, not instead of it"),
                   !=, CATCHUP_SECTION_DECISIONS);
}

/* Between two people a question that only leads to a self-contained answer ("Yep, I'm hiking …") is said by the
 * answer: one line, not two; "yes, both." still needs its question and is shown under it. */
static void
test_answer_stands_alone (void)
{
  const Row rows[] = {
    { "a1", T0, "Nate", "Thanks, I just like helping people. Do you have any plans for the weekend?" },
    { "a2", T0 + MIN_, "Joanna", "Yep, I'm hiking with some buddies this weekend. We're checking out a new trail with "
                                 "a rad waterfall near the lake. Can't wait!" },
    { "a3", T0 + 30 * MIN_, "Joanna", "Are you inviting your tournament friends and the old teammates to the gaming "
                                       "party?" },
    { "a4", T0 + 31 * MIN_, "Nate", "yes, both." },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);

  const CatchupSummaryLine *hike = line_for (s, "a2");
  g_assert_nonnull (hike);
  g_assert_cmpuint (hike->reply->len, ==, 0);
  g_assert_null (line_for (s, "a1"));
  const CatchupSummaryLine *upload = line_for (s, "a3");
  g_assert_nonnull (upload);
  g_assert_cmpuint (upload->reply->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) upload->reply->pdata[0])->id, ==, "a4");
}

/* A long message whose first sentence only reacts is shown from the sentence that brings what is new; one whose
 * first sentence decides is shown from its start. */
static void
test_excerpt_at_news (void)
{
  const Row rows[] = {
    { "e1", T0, "Nate", "Congrats, Joanna! Seeing your hard work pay off like that must've felt amazing. Do you have "
                        "a favorite superhero?" },
    { "e2", T0 + MIN_, "Joanna", "Thanks, Nate! It was a real roller coaster, but seeing the hard work pay off was "
                                 "amazing. Spider-Man has always been a favorite of mine - I mean, who doesn't love Peter "
                                 "Parker's struggles between being a hero and being a person with rent to pay and an aunt "
                                 "to look after?" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_SHORT);
  const CatchupSummaryLine *line = line_for (s, "e2");
  if (!line)
    line = line_for (s, "e1");
  g_assert_nonnull (line);
  const char *text = line->reply->len ? ((CatchupSummaryItem *) line->reply->pdata[0])->text : line->text;
  g_assert_nonnull (strstr (text, "Spider-Man has always been a favorite"));
  assert_quotes (text, rows[1].text);
}

/* A maxim or praise of the other before the speaker's own news gives way to it: the excerpt starts where the
 * speaker tells what happened to them or what they mean to do. */
static void
test_excerpt_at_own_news (void)
{
  assert_one_line_starts ("It's always great to have fun and bring out everyone's creative and silly sides with games "
                          "like that, and laughter and joy are really important for all of us, every single day of the "
                          "year. I'm thinking of setting up a board game night like this for my kids and their cousins "
                          "soon.",
                          "…I'm thinking of setting up a board game night");
  assert_one_line_starts ("I'm really inspired by your drive to make a difference in the neighbourhood. You mentioned "
                          "your work at the homeless shelter last time and it made me think of how I could help too, so "
                          "I just joined the volunteer fire brigade in Riverside. It's such a great feeling to give back.",
                          "…You mentioned your work at the homeless shelter");
  /* the speaker's own first sentence stays the claim */
  assert_one_line_starts ("We were lucky to find a lovely greenhouse venue for a smaller, more intimate gathering with "
                          "just our families. We made sure to follow the necessary safety protocols and ensure that "
                          "everyone felt safe and comfortable all evening long. It was wonderful to have our loved ones "
                          "celebrate with us.",
                          "We were lucky to find a lovely greenhouse venue");
}

/* "My advice?" leads into the sentence after it: an excerpt that leaves that sentence out leaves it out too. */
static void
test_excerpt_no_lead_in (void)
{
  const char *text = "I've had some tough times with my business, Jon. Sourcing trendy pieces for my store was a big "
                     "hurdle. My advice? Don't be scared to reach out to people in your field for help and contacts, "
                     "it opened me up to amazing products.";
  const Row rows[] = { { "l1", T0, "Gina", text } };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_SHORT);
  const CatchupSummaryLine *line = line_for (s, "l1");
  g_assert_nonnull (line);
  g_assert_null (strstr (line->text, "My advice?"));
  assert_quotes (line->text, text);
}

/* An answer that asks back ("… Any inspiring things in your room?") and news that ends in small talk ("What's up
 * with you?") are shown without the questions they end with: the summary does not show what answers them. */
static void
test_closing_question_cut (void)
{
  const Row rows[] = {
    { "c1", T0, "Joanna", "What made you get that Iron Man figure for your desk?" },
    { "c2", T0 + MIN_, "Nate", "It reminded me of the first comic my dad bought me, so it keeps me working on my "
                               "goals. Any inspiring things in your room?" },
    { "c3", T0 + DAY, "Joanna", "Long time no talk! Last week I built a new website for customers to order dresses. "
                                "What's up with you?" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  g_autofree char *text = catchup_summary_to_text (s);

  g_assert_nonnull (strstr (text, "keeps me working on my goals. …"));
  g_assert_null (strstr (text, "Any inspiring things"));
  g_assert_nonnull (strstr (text, "built a new website for customers to order dresses."));
  g_assert_null (strstr (text, "What's up with you?"));
}

/* A later sentence that brings more is no start for the excerpt when it leans on the one before with a pronoun:
 * "… and they seemed interested" needs "The meetings went really well". */
static void
test_excerpt_keeps_antecedent (void)
{
  assert_one_line_starts ("The meetings went really well. I felt confident discussing my script, my characters "
                          "and my vision for the ending with both producers, and they seemed interested and excited "
                          "about the festival cut. It was such a relief after all those weeks of rewriting.",
                          "The meetings went really well.");
}

/* A question read in its answer's line shows only its last sentence, unless the question only points at its
 * subject: a reference to words not shown ("the hike") explains nothing on screen and is left out. "What do you think?" says nothing of what it asks about, so
 * it keeps its own line. */
static void
test_folded_question_references (void)
{
  const Row past[] = {
    { "p0", T0 - 2 * DAY, "Melanie", "The kids painted the fence blue over the weekend, what a mess." },
    { "p1", T0 - DAY, "Caroline", "The hike to Bear Lake with my church group got cancelled when the trail flooded." },
    { "p2", T0 - DAY + MIN_, "Melanie", "Oliver chewed my slipper again, that dog is a menace." },
  };
  const Row rows[] = {
    { "q1", T0, "Melanie", "Sorry about the hike to Bear Lake, that sounds awful. Did you still see your friends?" },
    { "q2", T0 + MIN_, "Caroline", "Yes, we moved the picnic into the community hall instead and all of them came." },
    { "q3", T0 + HOUR_, "Tim", "Edinburgh in August has the festival, the castle and the old town all at once. "
                               "What do you think?" },
    { "q4", T0 + HOUR_ + MIN_, "John", "That sounds like a great idea, we will look at flights to Scotland tonight." },
  };
  const char *const ids[] = { "p1", NULL };
  g_autoptr (CatchupSummary) s = summarize_with_evidence (rows, 2, past, G_N_ELEMENTS (past), "q1", "the hike", ids,
                                                          CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "q2");
  g_assert_nonnull (line);
  g_assert_nonnull (line->asked);
  g_assert_cmpstr (line->asked->text, ==, "…Did you still see your friends?");
  g_assert_false (has_ref (s, "the hike"));

  /* a question that only points at its subject ("Is it still closed?") shows the sentence before it that names
   * it, and so the reference in it; a reaction before it names nothing */
  const Row pointing[] = {
    { "r1", T0, "Melanie", "Sorry about the hike to Bear Lake, that sounds awful. Is it still closed?" },
    { "r2", T0 + MIN_, "Caroline", "Yes, until spring, so we moved the picnic into the community hall instead." },
  };
  g_autoptr (CatchupSummary) s3 = summarize_with_evidence (pointing, 2, past, G_N_ELEMENTS (past), "r1", "the hike",
                                                           ids, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *recent = line_for (s3, "r2");
  g_assert_nonnull (recent);
  g_assert_cmpstr (recent->asked->text, ==, "Sorry about the hike to Bear Lake, that sounds awful. Is it still closed?");
  g_assert_true (has_ref (s3, "the hike"));

  g_autoptr (GPtrArray) window2 = messages_from (rows + 2, 2);
  g_autoptr (CatchupSummary) t = summarize (window2, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *answer = line_for (t, "q4");
  g_assert_true (answer == NULL || answer->asked == NULL);
}

/* "watched the screencast, …" leans on a window message the summary does not show (the bot's note that a
 * screencast was uploaded): explained in place. Not from what another speaker calls their own ("our own
 * advisory"). */
static void
test_explained_in_window (void)
{
  const Row rows[] = {
    { "v1", T0, "foobot", "gsteen uploaded a screencast of the new installer to the wiki" },
    { "v2", T0 + MIN_, "mira", "watched the screencast, the installer flow is great. ship it with rc2 tomorrow" },
    { "v3", T0 + 2 * MIN_, "gsteen", "thanks, I'll tag rc2 tomorrow morning after the last CI run" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "v2");
  g_assert_nonnull (line);
  g_assert_null (line_for (s, "v1"));
  g_assert_cmpuint (line->context->len, ==, 1);
  const CatchupSummaryItem *item = line->context->pdata[0];
  g_assert_cmpstr (item->ref, ==, "the screencast");
  g_assert_cmpstr (item->id, ==, "v1");
  g_assert_nonnull (strstr (item->text, "screencast of the new installer"));
  g_assert_cmpuint (g_utf8_strlen (item->text, -1), <=, 90);

  const Row own[] = {
    { "o1", T0, "ravi_k", "we're publishing our own advisory for the gateways this afternoon, referencing yours" },
    { "o2", T0 + MIN_, "dfarrow", "ok"},
    { "o3", T0 + 2 * MIN_, "tkovac", "first reply on oss-security: someone asking whether rc1 is affected. yes, and "
                                     "rc2 will have the fix. answered, and added a line to the advisory" },
  };
  g_autoptr (GPtrArray) window2 = messages_from (own, G_N_ELEMENTS (own));
  g_autoptr (CatchupSummary) t = summarize (window2, NULL, CATCHUP_LENGTH_SHORT);
  g_assert_false (has_ref (t, "the advisory"));

  /* two earlier messages name a screencast: which one is meant would be a guess */
  const Row two[] = {
    { "t1", T0, "foobot", "gsteen uploaded a screencast of the new installer to the wiki" },
    { "t2", T0 + 30, "foobot", "dfarrow uploaded a screencast of the porting steps to the wiki" },
    { "t3", T0 + MIN_, "mira", "watched the screencast, the installer flow is great. ship it with rc2 tomorrow" },
  };
  g_autoptr (GPtrArray) window3 = messages_from (two, G_N_ELEMENTS (two));
  g_autoptr (CatchupSummary) u = summarize (window3, NULL, CATCHUP_LENGTH_NORMAL);
  g_assert_false (has_ref (u, "the screencast"));
}

/* "Guess what?" is answered by its own speaker, and "been good since we talked?" greets: neither is a question
 * with the next message as its reply. */
static void
test_rhetorical_question (void)
{
  const Row rows[] = {
    { "g1", T0, "John", "Guess what? I'm now part of the fire-fighting brigade in our town, we train on Tuesdays." },
    { "g2", T0 + MIN_, "Maria", "That's amazing, John! I started volunteering at the dog shelter downtown last month." },
    { "g3", T0 + DAY, "Maria", "Hey John, been good since we talked? I joined a gym last week and I'm sticking to my "
                               "workout plan." },
    { "g4", T0 + DAY + MIN_, "John", "Congrats! My knee is finally healed, so I'm back to running five miles a day." },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  for (guint i = 0; i < s->lines->len; i++) {
    const CatchupSummaryLine *line = s->lines->pdata[i];
    g_assert_cmpuint (line->reply->len, ==, 0);
    g_assert_null (line->asked);
  }
  g_assert_nonnull (line_for (s, "g1"));
  g_assert_nonnull (line_for (s, "g3"));
}

/* "Thanks for the offer, Maria!" thanks her for what she has just said in the window, not for an older offer the
 * memory holds. */
static void
test_thanked_for_is_in_window (void)
{
  const Row past[] = {
    { "p0", T0 - 90 * DAY, "Maria", "The kids painted the fence blue over the weekend." },
    { "p1", T0 - 60 * DAY, "John", "That'd be great, Maria! Thanks for offering to help with the offer paperwork." },
    { "p2", T0 - 30 * DAY, "Maria", "Oliver chewed my slipper again, that dog is a menace." },
  };
  const Row rows[] = {
    { "w1", T0, "Maria", "If there's anything I can do for you and the kids this week, just say the word." },
    { "w2", T0 + MIN_, "John", "Thanks for the offer, Maria! We're adopting a rescue dog next month, so we'll call you." },
  };
  const char *const ids[] = { "p1", NULL };
  g_autoptr (CatchupSummary) s = summarize_with_evidence (rows, G_N_ELEMENTS (rows), past, G_N_ELEMENTS (past), "w2",
                                                          "the offer", ids, CATCHUP_LENGTH_NORMAL);
  g_assert_nonnull (line_for (s, "w2"));
  g_assert_false (has_ref (s, "the offer"));
}

/* "per Friday's call" acts on what the room decided that Friday: the one decision the memory holds from that day.
 * Two decisions that day leave it open. (T0 is a Tuesday; the Friday before is T0 - 4 days.) */
static void
test_reference_meeting_day (void)
{
  const Row past[] = {
    { "p1", T0 - 4 * DAY + 3600, "mira", "decision: the reader API (#1448, #1449) goes into 3.1, not 3.0" },
    { "p2", T0 - 4 * DAY + 7200, "pbaird", "lunch. someone remind me to eat something that isn't soup" },
    { "p3", T0 - 2 * DAY, "gsteen", "decision: we drop the MSVC 2019 builds after rc2" },
  };
  const Row second[] = {
    { "p1", T0 - 4 * DAY + 3600, "mira", "decision: the reader API (#1448, #1449) goes into 3.1, not 3.0" },
    { "p4", T0 - 4 * DAY + 9000, "tkovac", "decision: rc2 moves to next Friday" },
  };
  const Row rows[] = {
    { "w1", T0, "dfarrow", "per Friday's call, I've rebased my two remaining PRs onto main and updated their milestone" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  CatchupMemory *mem = memory_new (past, G_N_ELEMENTS (past));
  CatchupMemory *mem2 = memory_new (second, G_N_ELEMENTS (second));
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_NORMAL);
  g_autoptr (CatchupSummary) t = summarize (window, mem2, CATCHUP_LENGTH_NORMAL);
  memory_free (mem);
  memory_free (mem2);

  GPtrArray *context = context_of (s, "w1");
  g_assert_nonnull (context);
  g_assert_cmpuint (context->len, ==, 1);
  const CatchupSummaryItem *item = context->pdata[0];
  g_assert_cmpstr (item->ref, ==, "Friday's call");
  g_assert_cmpstr (item->id, ==, "p1");
  g_assert_false (has_ref (t, "Friday's call"));
}

/* "I'm so glad you enjoyed it! … By the way, I finished up my writing for my book last week.": after sentences
 * that react and chat, the one that turns to another subject brings the news, and the excerpt starts there. */
static void
test_excerpt_at_shift (void)
{
  const Row rows[] = {
    { "b1", T0, "Joanna", "I'm so glad you enjoyed it! I recommended it to you a while back. I watched it too and it "
                          "really spoke to me. Themes like sisterhood, love, and chasing dreams were explored so "
                          "well. By the way, I finished up my writing for my book last week. Put in a ton of late "
                          "nights and edits but finally got it done." },
  };
  assert_line_shows (rows, G_N_ELEMENTS (rows), CATCHUP_LENGTH_NORMAL, 0, "I finished up my writing for my book");
}

/* "can someone sanity-check the wording" asks for a review; "reads fine to me" right after it is the review,
 * though it shares no word with it. */
static void
test_review_verdict_answers (void)
{
  const Row rows[] = {
    { "r1", T0, "tkovac", "porting guide: added a section on the max record size. can someone sanity-check the "
                          "wording" },
    { "r2", T0 + 5 * MIN_, "ravi_k", "reads fine to me, and it's a number we can live with :)" },
    { "r3", T0 + 6 * MIN_, "mira", "+1, clear" },
    { "r4", T0 + 20 * MIN_, "yuki_n", "rc2 is in experimental now, the rdep rebuilds run over the weekend" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "r1");
  g_assert_nonnull (line);
  g_assert_cmpuint (line->reply->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) line->reply->pdata[0])->id, ==, "r2");
  g_assert_false (line->no_reply);

  /* the one a request names answers it when they speak right after it, whatever their words */
  const Row named[] = {
    { "n1", T0, "tkovac", "yuki_n: I need your piece by noon tomorrow at the latest, put it in patches/ next to the "
                          "others" },
    { "n2", T0 + MIN_, "yuki_n", "it builds, running the testsuite in a bookworm chroot now. you'll have it today" },
    { "n3", T0 + 20 * MIN_, "pbaird", "the s390x runner is back, the queue is draining" },
  };
  g_autoptr (GPtrArray) window2 = messages_from (named, G_N_ELEMENTS (named));
  g_autoptr (CatchupSummary) t = summarize (window2, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *request = line_for (t, "n1");
  g_assert_nonnull (request);
  g_assert_cmpuint (request->reply->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) request->reply->pdata[0])->id, ==, "n2");
}

/* A window of more than a week names days by date, and a reply's time is written the same way as its line's: a
 * weekday alone could mean two days of it. */
static void
test_reply_time_format (void)
{
  const Row rows[] = {
    { "f1", T0, "ines", "who owns the backup cron now?" },
    { "f2", T0 + MIN_, "bert", "yes, carl does" },
    { "f3", T0 + 7 * DAY, "dana", "the staging certificates expire on Friday, I'll renew them tomorrow" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  g_autofree char *text = catchup_summary_to_text (s);

  g_assert_nonnull (strstr (text, "ines (03 Mar 09:00)"));
  g_assert_nonnull (strstr (text, "reply: bert (03 Mar 09:01)"));
}

/* A photo's caption states nothing that holds, and a name after a greeting addresses someone: "Hey Joanna … my
 * tournament got pushed back" revises no turn of Joanna's that only a caption shares words with. */
static void
test_caption_no_state (void)
{
  const Row old[] = {
    { "o1", T0 - DAY, "Joanna", "Here's my list for the week, Nate! [shares a photo: a photo of a person holding a "
                                "notebook with a list of tournament dates on it for Monday]" },
  };
  const Row rows[] = {
    { "c1", T0, "Nate", "Hey Joanna, what a wild week! My game tournament got pushed back to next month, so I tried "
                        "out some cooking with a notebook of recipes on Saturday" },
    { "c2", T0 + MIN_, "Joanna", "Oh no, that's a bummer about the tournament! What did you cook?" },
  };
  assert_revises_no_memory (old, G_N_ELEMENTS (old), rows, G_N_ELEMENTS (rows), "c1");
}

/* A numbered list or a tally states no value: "(1) … (5) splitting big PRs early instead of in freeze week"
 * revises no earlier line with a number in it. */
static void
test_list_no_revision (void)
{
  const Row rows[] = {
    { "l1", T0, "dfarrow", "#1473 is up, the header split. it touches 14 files but it's almost all moving struct "
                           "bodies around, big PRs like this need an early review" },
    { "l2", T0 + DAY, "mira", "retro notes: (1) a C++ consumer check, (2) run abidiff before rc1, (3) key expiry "
                              "check, (4) big-endian back in the required set, (5) splitting big PRs early instead "
                              "of in freeze week" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *later = line_for (s, "l2");

  g_assert_nonnull (later);
  g_assert_cmpuint (later->supersedes->len, ==, 0);
  g_assert_nonnull (line_for (s, "l1"));
}

/* A line that leans on what was said before the window ("the same trick ravi found", "per Friday's call") is what
 * a returning reader most needs: among lines of equal weight it is chosen first. */
static void
test_history_first (void)
{
  const Row rows[] = {
    { "h1", T0, "dfarrow", "pushed the importer cleanup with the same trick ravi found, tests pass" },
    { "h2", T0 + 5 * MIN_, "pbaird", "pushed the docs cleanup to main, the links pass on every page" },
    { "h3", T0 + 10 * MIN_, "ravi", "pushed the parser cleanup to main, the tests pass on every runner" },
    { "h4", T0 + 15 * MIN_, "gsteen", "pushed the logging cleanup to main, the checks pass on every build" },
    { "h5", T0 + 20 * MIN_, "yuki_n", "pushed the packaging cleanup to main, the builds pass on every arch" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_SHORT);

  g_assert_cmpuint (s->lines->len, <, G_N_ELEMENTS (rows));
  g_assert_nonnull (line_for (s, "h1"));
}

/* Question id is shown with no answer: its own line has no reply, and no answer's line reads it. */
static void
assert_unanswered (const CatchupSummary *s, const char *id)
{
  for (guint i = 0; i < s->lines->len; i++) {
    const CatchupSummaryLine *l = s->lines->pdata[i];
    if (g_str_equal (l->sources->pdata[0], id))
      g_assert_cmpuint (l->reply->len, ==, 0);
    if (l->asked)
      g_assert_cmpstr (l->asked->id, !=, id);
  }
}

/* An invitation is asked like a question, and its answer may come after a counter-question: "want to come over
 * and try some?" … "Is it lactose-free?" … "Sure! I'll come over tomorrow"; not after the asker's own story. */
static void
test_invitation_answer (void)
{
  const Row rows[] = {
    { "i1", T0, "Nate", "On another note, want to come over and try some of this? It's super yummy, just made it "
                        "yesterday!" },
    { "i2", T0 + MIN_, "Joanna", "Mmm, that looks delicious! Is it lactose-free by any chance?" },
    { "i3", T0 + 2 * MIN_, "Nate", "Yep, I made it with coconut milk so it's lactose-free!" },
    { "i4", T0 + 3 * MIN_, "Joanna", "Thanks so much, Nate! Sure! I'll come over tomorrow if that's fine." },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "i1");

  g_assert_nonnull (line);
  g_assert_cmpuint (line->reply->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) line->reply->pdata[0])->id, ==, "i4");

  /* when the asker answers the counter-question with a story of their own, the next reply is about that story */
  const Row story[] = {
    { "s1", T0, "Tim", "That must have been an incredible feeling! Do you have any photos or keepsakes from the game?" },
    { "s2", T0 + MIN_, "John", "Wow! What makes your favorite player so inspiring?" },
    { "s3", T0 + 2 * MIN_, "Tim", "I just love watching LeBron. There was this Finals game a few years back with an epic "
                                  "block that totally changed the game and ended up winning it." },
    { "s4", T0 + 3 * MIN_, "John", "Remember that epic block in Game 7 of the '16 Finals? He chased down Iguodala and "
                                   "pinned the ball against the backboard." },
  };
  g_autoptr (GPtrArray) window2 = messages_from (story, G_N_ELEMENTS (story));
  g_autoptr (CatchupSummary) t = summarize (window2, NULL, CATCHUP_LENGTH_NORMAL);
  assert_unanswered (t, "s1");
}

/* A reply that only greets and reacts answers nothing ("Hey Caroline! … Congrats!"); after the asker asks again,
 * what follows answers the new question. */
static void
test_reaction_is_no_answer (void)
{
  const Row rows[] = {
    { "c1", T0, "Caroline", "Hey Mel, what's up? I just contacted my mentor for adoption advice, I'm ready to be a "
                            "mom. Anything new with you? Anything exciting going on?" },
    { "c2", T0 + 30, "Melanie", "Hey Caroline! Great to hear from you! Wow, what an amazing journey. Congrats!" },
    { "c3", T0 + 60, "Caroline", "Thanks, Melanie! Do you know anyone who's gone through an adoption?" },
    { "c4", T0 + 90, "Melanie", "Yeah, a buddy of mine adopted a boy from Ohio last year, it took them two years." },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  assert_unanswered (s, "c1");
  for (guint i = 0; i < s->lines->len; i++) {
    const CatchupSummaryLine *l = s->lines->pdata[i];
    for (guint k = 0; k < l->reply->len; k++)
      g_assert_cmpstr (((CatchupSummaryItem *) l->reply->pdata[k])->id, !=, "c2");
  }
  const CatchupSummaryLine *buddy = line_for (s, "c4");
  if (!buddy)
    buddy = line_for (s, "c3");
  g_assert_nonnull (buddy);
}

/* A long message that tells news and then asks, shown with its answer: the news and the question both, the
 * middle left out, so the reply answers something the reader can see. */
static void
test_news_and_question (void)
{
  const Row rows[] = {
    { "n1", T0, "John", "I totally understand why reading means so much to you. It's amazing how much playing a "
                        "game can help us grow, and I've been reading a lot more myself since the season ended and "
                        "the team went on break. Thanks for showing us your collection! Which one do you like best?" },
    { "n2", T0 + MIN_, "Tim", "Harry Potter is my favorite book. It's so immersive!" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "n1");

  g_assert_nonnull (line);
  g_assert_cmpuint (line->reply->len, ==, 1);
  g_assert_true (g_str_has_prefix (line->text, "I totally understand"));
  g_assert_true (g_str_has_suffix (line->text, "Which one do you like best?"));
  assert_quotes (line->text, rows[0].text);
}

/* Closings and thanks are chit-chat: "I'll keep you posted. Have a great day." promises nothing a reader needs. */
static void
test_closing_is_chit_chat (void)
{
  const Row rows[] = {
    { "k1", T0, "Joanna", "I just adopted a puppy named Max from the shelter downtown last weekend!" },
    { "k2", T0 + MIN_, "Nate", "I won the regional Valorant tournament in Denver yesterday, first prize!" },
    { "k3", T0 + 2 * MIN_, "Joanna", "My screenplay got accepted by a studio in Los Angeles this morning." },
    { "k4", T0 + 3 * MIN_, "Joanna", "Thanks, Nate. I'll keep you posted. Have a great day." },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_SHORT);

  g_assert_nonnull (line_for (s, "k2"));
  g_assert_null (line_for (s, "k4"));
}

/* The rendered line kept for "N smaller topics left out" is one more line when no topic is left out, or the line
 * of the one topic that would be; a closing or praise of the other does not take it. */
static void
test_footer_line_when_nothing_left_out (void)
{
  const Row rows[] = {
    { "v1", T0, "Nate", "I won the regional Valorant tournament in Denver yesterday, first prize!" },
    { "v2", T0 + MIN_, "Joanna", "I watched your Valorant final on the stream with my brother last night, that clutch "
                                 "was unreal." },
    { "v3", T0 + 2 * MIN_, "Nate", "The Valorant prize money goes into a new gaming chair and a trip to see my "
                                   "parents." },
    { "v4", T0 + 3 * MIN_, "Joanna", "My Valorant team at the studio booked a scrim against yours next Friday at six." },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_SHORT);
  g_assert_cmpuint (s->topics_left_out, ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    g_assert_nonnull (line_for (s, rows[i].id));

  /* one topic that would be left out takes the line instead of being named in it; of two, both are named */
  const Row topics[] = {
    { "d1", T0, "Joanna", "I just adopted a puppy named Max from the shelter downtown last weekend!" },
    { "d2", T0 + MIN_, "Nate", "I won the regional Valorant tournament in Denver yesterday, first prize!" },
    { "d3", T0 + 2 * MIN_, "Joanna", "My screenplay got accepted by a studio in Los Angeles this morning." },
    { "d4", T0 + 3 * MIN_, "Nate", "My sister finally moved into her new apartment in Chicago on Saturday." },
    { "d5", T0 + 4 * MIN_, "Joanna", "Our landlord raised the rent by two hundred dollars starting in March." },
  };
  g_autoptr (GPtrArray) four = messages_from (topics, 4);
  g_autoptr (CatchupSummary) t = summarize (four, NULL, CATCHUP_LENGTH_SHORT);
  g_assert_cmpuint (t->topics_left_out, ==, 0);
  for (guint i = 0; i < 4; i++)
    g_assert_nonnull (line_for (t, topics[i].id));
  g_autoptr (GPtrArray) five = messages_from (topics, G_N_ELEMENTS (topics));
  g_autoptr (CatchupSummary) u = summarize (five, NULL, CATCHUP_LENGTH_SHORT);
  g_assert_cmpuint (u->topics_left_out, ==, 2);

  /* praise of the other does not get the line */
  const Row praise[] = {
    { "m1", T0, "Melanie", "I just finished the Riverside youth center mural yesterday, all twelve metres of it!" },
    { "m2", T0 + MIN_, "Caroline", "Wow, Mel, you are amazing! Volunteering at the Riverside youth center and making a "
                                   "difference there, it is so heartwarming. You are an inspiration to us all at the "
                                   "center!" },
    { "m3", T0 + 2 * MIN_, "Melanie", "I just agreed with the Riverside center director yesterday to lead the next "
                                      "mural project in March." },
    { "m4", T0 + 3 * MIN_, "Caroline", "I signed up for the Riverside pottery class last week, it starts on Monday." },
  };
  g_autoptr (GPtrArray) cheering = messages_from (praise, G_N_ELEMENTS (praise));
  g_autoptr (CatchupSummary) v = summarize (cheering, NULL, CATCHUP_LENGTH_SHORT);
  g_assert_nonnull (line_for (v, "m1"));
  g_assert_nonnull (line_for (v, "m3"));
  g_assert_nonnull (line_for (v, "m4"));
  g_assert_null (line_for (v, "m2"));
}

/* "We went camping with my brother last weekend" tells what happened to the speaker; "it's amazing how places
 * like Yosemite remind us …" has "us" and names, but tells of nobody: the news takes the line. */
static void
test_event_before_musing (void)
{
  const Row rows[] = {
    { "e1", T0, "Tim", "It's amazing how places like Yosemite and Big Sur remind us that the world is huge and "
                       "beautiful." },
    { "e2", T0 + MIN_, "John", "It's incredible how Lake Tahoe and the Sierra Nevada let us forget the noise of "
                               "Chicago." },
    { "e3", T0 + 2 * MIN_, "John", "We went camping with my brother last weekend and hiked up to a waterfall." },
    { "e4", T0 + 3 * MIN_, "Tim", "It's wonderful how Paris and Rome in the spring remind us to slow down and "
                                  "enjoy good food." },
    { "e5", T0 + 4 * MIN_, "John", "It's crazy how Christmas in New York makes us feel like kids again every "
                                   "single December." },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_SHORT);

  g_assert_nonnull (line_for (s, "e3"));
}

/* In a busy channel the next "ok …" of someone else's thread answers nothing, and the channel's factoid bot is
 * no speaker of news. */
static void
test_busy_channel (void)
{
  const Row rows[] = {
    { "b1", T0, "VSpike", "am I right that the software sound mixing option in 8.04 controls whether pulseaudio "
                          "starts at login?" },
    { "b2", T0 + MIN_, "yogi_", "ok i think is fully updated" },
    { "b3", T0 + 2 * MIN_, "ubottu", "rogerio: Please don't ask to ask a question, simply ask the question (all on "
                                     "ONE line, so others can read and follow it easily)" },
    { "b4", T0 + 3 * MIN_, "franic", "Futurama140: WoW works fine with the latest Wine, I use it myself" },
    { "b5", T0 + 4 * MIN_, "chu_", "my webcam is detected now after the kernel update, thanks all" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *asked = line_for (s, "b1");

  g_assert_nonnull (asked);
  g_assert_cmpuint (asked->reply->len, ==, 0);
  g_assert_null (line_for (s, "b3"));
}

/* A revising line that names what it replaced ("goes to 256 MiB instead of 64") says it itself: no "was:" from
 * the memory repeats it, and a turn that already said 256 MiB is no earlier state; a commit id is no value; a
 * state's revised value is in the sentence that says it changed. A line that does not name the old value
 * ("final moves to Thu Mar 19") gets the memory's "was:". */
static void
test_instead_of_old_value (void)
{
  const Row said_new[] = {
    { "o1", T0 - DAY, "gsteen", "for the default max record size: our biggest firmware image at 256 MiB still "
                                "fits, so a default of 256 MiB still does that" },
  };
  const Row said_old[] = {
    { "o2", T0 - DAY, "tkovac", "the default max record size is 64 MiB in rc1, per context overridable" },
    { "o3", T0 - DAY, "mira", "the final release of 3.0 is on Tue Mar 17" },
  };
  const Row rows[] = {
    { "v1", T0, "tkovac", "ok: the default max record size goes to 256 MiB instead of 64. still overridable per "
                          "context like before" },
    { "v2", T0 + MIN_, "mira", "release/3.0 is cut from main at 5e0c1d2. main is now 3.1.0-dev. rules until final: "
                               "fixes only, and they need an ack from me or gsteen" },
    { "v3", T0 + 2 * MIN_, "mira", "heads up: the final release of 3.0 moves to Thu Mar 19" },
  };
  assert_revises_no_memory (said_new, G_N_ELEMENTS (said_new), rows, G_N_ELEMENTS (rows), "v1");
  assert_revises_no_memory (said_new, G_N_ELEMENTS (said_new), rows, G_N_ELEMENTS (rows), "v2");
  assert_revises_no_memory (said_old, G_N_ELEMENTS (said_old), rows, G_N_ELEMENTS (rows), "v1");

  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  CatchupMemory *mem = memory_new (said_old, G_N_ELEMENTS (said_old));
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "v3");
  g_assert_nonnull (line);
  g_assert_cmpuint (line->supersedes->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) line->supersedes->pdata[0])->id, ==, "o3");
  memory_free (mem);
}

/* Each session of a window (a stretch without hours of silence) gets its best line before another gets more:
 * a quieter later evening's news is not outweighed by a busier day. */
static void
test_each_session (void)
{
  const Row rows[] = {
    { "s1", T0, "ravi", "pushed the parser fix for #812 to main, the tests pass on all 14 runners now" },
    { "s2", T0 + 5 * MIN_, "pbaird", "merged the docs fix #813, the release notes pass the link check on 40 pages" },
    { "s3", T0 + 10 * MIN_, "dfarrow", "fixed the importer bug #814, and I tagged the 2.1 branch for the release" },
    { "s4", T0 + 15 * MIN_, "gsteen", "merged the logging fix #815 and deployed it, the checks pass on 3 hosts" },
    { "s5", T0 + 3 * DAY, "yuki_n", "I started on the packaging for the new distro, the first builds look fine" },
    { "s6", T0 + 3 * DAY + MIN_, "yuki_n", "thanks all" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_SHORT);

  g_assert_cmpuint (s->lines->len, <, 5);
  g_assert_nonnull (line_for (s, "s5"));
}

/* A period after an initial ends no sentence: the quote by "J.K. Rowling" is not cut after "J.K.". */
static void
test_initials_no_sentence_end (void)
{
  const Row rows[] = {
    { "j1", T0, "John", "Do you have a favorite quote from the books?" },
    { "j2", T0 + MIN_, "Tim", "Yes! There's a quote by J.K. Rowling that I really like: \"Turn on the light - "
                              "happiness hides in the darkest of times.\" That's how I keep hope alive during tough "
                              "times, and I've written it on the first page of every notebook I own since school." },
  };
  /* the answer's line, the question read in it */
  assert_line_shows (rows, G_N_ELEMENTS (rows), CATCHUP_LENGTH_SHORT, 1, "J.K. Rowling");
}

/* Between two people a question that says no more than what it asks is read in its answer's line: one line,
 * covering both, in the answer's section (its news, in time order), with the question and who asked it; a
 * question that tells news first keeps its own line with the answer under it. */
static void
test_question_in_answer (void)
{
  const Row rows[] = {
    { "f1", T0, "Maria", "Wow, John! How often do you all work out together?" },
    { "f2", T0 + MIN_, "John", "Three times a week at the park near our place; it keeps the whole family on track." },
    { "f3", T0 + DAY, "John", "I just got back from a road trip along the coast with my brother. Have you ever been "
                              "to the Oregon dunes?" },
    { "f4", T0 + DAY + MIN_, "Maria", "Only once, when I was ten, and I still remember the wind up there!" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "f2");

  g_assert_nonnull (line);
  g_assert_cmpint (line->section, ==, CATCHUP_SECTION_NEWS);
  g_assert_cmpuint (line->reply->len, ==, 0);
  g_assert_nonnull (line->asked);
  g_assert_cmpstr (line->asked->id, ==, "f1");
  g_assert_cmpstr (line->asked->text, ==, "How often do you all work out together?");
  g_assert_cmpuint (line->sources->len, ==, 2);
  g_assert_null (line_for (s, "f1"));
  g_autofree char *text = catchup_summary_to_text (s);
  g_assert_nonnull (strstr (text, "on track. (Maria asked: “How often do you all work out together?”)"));
  g_assert_null (strstr (text, "reply: John"));
  const CatchupSummaryLine *news = line_for (s, "f3");
  if (news)
    g_assert_null (news->asked);

  /* a message that asks two things and says more keeps its own line */
  const Row more[] = {
    { "m1", T0, "Joanna", "Do writing conventions exist? I'll have to look into that, it could be fun! Thanks for "
                          "the idea. Have you been up to anything tonight?" },
    { "m2", T0 + MIN_, "Nate", "Mostly just chilling at home. Playing video games or watching movies helps me unwind." },
  };
  g_autoptr (GPtrArray) window2 = messages_from (more, G_N_ELEMENTS (more));
  g_autoptr (CatchupSummary) s2 = summarize (window2, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *asks = line_for (s2, "m1");
  g_assert_nonnull (asks);
  g_assert_cmpuint (asks->reply->len, ==, 1);
  g_assert_null (line_for (s2, "m2"));

  /* praise of the other's news around the question only reacts: it is read in the answer's line too; a
   * question after the speaker's own news keeps its line */
  const Row praise[] = {
    { "p1", T0, "Nate", "Congrats, Joanna! Seeing your hard work pay off like that must've felt amazing. I bet it "
                        "was scary too, but you're so inspiring. Is Spider-Man your favorite superhero?" },
    { "p2", T0 + MIN_, "Joanna", "Spider-Man has always been a favorite of mine, ever since my brother gave me the "
                                 "comics when I was eight." },
    { "p3", T0 + 2 * MIN_, "Joanna", "I finished my second screenplay draft this week and mailed it to the studio. "
                                     "Do you still write for the gaming blog?" },
    { "p4", T0 + 3 * MIN_, "Nate", "Only now and then, mostly reviews of strategy games for the newsletter." },
  };
  g_autoptr (GPtrArray) window3 = messages_from (praise, G_N_ELEMENTS (praise));
  g_autoptr (CatchupSummary) s3 = summarize (window3, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *answer = line_for (s3, "p2");
  g_assert_nonnull (answer);
  g_assert_nonnull (answer->asked);
  g_assert_cmpstr (answer->asked->text, ==, "…Is Spider-Man your favorite superhero?");
  g_assert_null (line_for (s3, "p1"));
  const CatchupSummaryLine *own = line_for (s3, "p3");
  g_assert_nonnull (own);
  g_assert_null (own->asked);

  /* an answer chosen on its own reads its question too: "four months" of what, the question says */
  const Row alone[] = {
    { "a1", T0, "John", "Wow, I hope I can hear you play some day! How long have you been playing the piano?" },
    { "a2", T0 + MIN_, "Tim", "I've been playing for about four months now and it's been an amazing adventure, "
                              "mostly Chopin and film themes." },
    { "a3", T0 + HOUR_, "John", "We won the regional championship in Denver last night, I scored 31 points in the "
                                "final!" },
    { "a4", T0 + HOUR_ + MIN_, "Tim", "I finally finished the first draft of my fantasy novel last weekend, all "
                                      "90,000 words of it." },
    { "a5", T0 + HOUR_ + 2 * MIN_, "John", "My wife and I just booked a trip to Kyoto for April, our first vacation "
                                           "in three years." },
  };
  /* the answer's first words are what the question asks: an excerpt keeps them */
  const Row first_words[] = {
    { "j1", T0, "Tim", "Wow! What are you watching these days?" },
    { "j2", T0 + MIN_, "John", "Just the GoT series. I binge it every Sunday night with my roommates from the team, and "
                               "afterwards we argue about the dragons and the battles for hours." },
  };
  g_autoptr (GPtrArray) window5 = messages_from (first_words, G_N_ELEMENTS (first_words));
  g_autoptr (CatchupSummary) s5 = summarize (window5, NULL, CATCHUP_LENGTH_SHORT);
  const CatchupSummaryLine *got = line_for (s5, "j2");
  g_assert_nonnull (got);
  g_assert_nonnull (got->asked);
  g_assert_true (g_str_has_prefix (got->text, "Just the GoT series."));

  /* a tag question asks nothing: the question read is the one the answer answers; a musing around it tells
   * nothing of the speaker */
  const Row tagged[] = {
    { "t1", T0, "John", "Where did you capture this? Nature is truly amazing, isn't it?" },
    { "t2", T0 + MIN_, "Tim", "I snapped that pic on my trip to the Smoky Mountains last year, on the hike to "
                              "Clingmans Dome." },
    { "t3", T0 + HOUR_, "John", "Wow, some authors really have such an influence on us! They become part of our life "
                                "and shape our interests. Do you have a favorite Rowling quote?" },
    { "t4", T0 + HOUR_ + MIN_, "Tim", "Yeah! \"Happiness can be found even in the darkest of times\" is the one I "
                                      "keep on my desk." },
  };
  g_autoptr (GPtrArray) window6 = messages_from (tagged, G_N_ELEMENTS (tagged));
  g_autoptr (CatchupSummary) s6 = summarize (window6, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *where = line_for (s6, "t2");
  g_assert_nonnull (where);
  g_assert_nonnull (where->asked);
  g_assert_cmpstr (where->asked->text, ==, "Where did you capture this?");
  const CatchupSummaryLine *quote = line_for (s6, "t4");
  g_assert_nonnull (quote);
  g_assert_nonnull (quote->asked);
  g_assert_null (line_for (s6, "t1"));
  g_assert_null (line_for (s6, "t3"));

  /* "How've you been using it?" names what it asks, "can you tell me more" asks to be told, and two questions in
   * a row are one run: each is read in its answer's line */
  const Row named[] = {
    { "n1", T0, "Gina", "Nice one, Jon! How've you been using it?" },
    { "n2", T0 + MIN_, "Jon", "I'm using the planner app to track every class booking and the studio's rent." },
    { "n3", T0 + HOUR_, "Melanie", "Glad you found them! Can you tell me more about why the mural is special to you?" },
    { "n4", T0 + HOUR_ + MIN_, "Caroline", "The rainbow flag mural reflects the courage of the trans community in our "
                                           "town." },
    { "n5", T0 + 2 * HOUR_, "John", "Learning an instrument is cool. What instrument are you playing? What genres do "
                                    "you want to learn?" },
    { "n6", T0 + 2 * HOUR_ + MIN_, "Tim", "The violin, mostly classical, and I'm keen to try jazz next spring." },
  };
  for (guint k = 0; k < G_N_ELEMENTS (named); k += 2) {
    g_autoptr (GPtrArray) pair = messages_from (named + k, 2);
    g_autoptr (CatchupSummary) sp = summarize (pair, NULL, CATCHUP_LENGTH_NORMAL);
    const CatchupSummaryLine *said = line_for (sp, named[k + 1].id);
    g_assert_nonnull (said);
    g_assert_nonnull (said->asked);
    g_assert_null (line_for (sp, named[k].id));
  }
  g_autoptr (GPtrArray) run = messages_from (named + 4, 2);
  g_autoptr (CatchupSummary) sr = summarize (run, NULL, CATCHUP_LENGTH_NORMAL);
  g_assert_cmpstr (line_for (sr, "n6")->asked->text, ==,
                   "…What instrument are you playing? What genres do you want to learn?");

  g_autoptr (GPtrArray) window4 = messages_from (alone, G_N_ELEMENTS (alone));
  g_autoptr (CatchupSummary) s4 = summarize (window4, NULL, CATCHUP_LENGTH_SHORT);
  const CatchupSummaryLine *months = line_for (s4, "a2");
  g_assert_nonnull (months);
  g_assert_nonnull (months->asked);
  g_assert_cmpstr (months->asked->text, ==, "…How long have you been playing the piano?");
}

/* A short opening sentence does not stand for the whole line: the next one is cut at a clause instead of
 * being left out ("tomorrow's the day. …" said nothing). */
static void
test_short_opening_sentence (void)
{
  assert_one_line_starts ("tomorrow's the day. everyone with private repo access: nothing sec-related gets pushed "
                          "anywhere public until I say so, and that includes rebasing anything on top of the fix "
                          "branch and pushing it to your fork",
                          "tomorrow's the day. everyone with private repo access");
}

/* Between two people, at most a few questions are shown with their answers: each pair costs two lines, and the
 * room goes to the news. */
static void
test_few_pairs (void)
{
  static const char *const asks[] = {
    "How often do you train with the basketball team these days?", "Which city did you like best on the road trip?",
    "What did the coach say about your shooting form?", "How long did the drive to the tournament take?",
    "Who came with you to the finals in the end?", "What did you eat at the harbour restaurant?",
  };
  static const char *const answers[] = { "Three times a week.", "Lisbon, by far.", "Yes, he loved it.",
                                         "About six hours.", "Only my brother.", "Mostly seafood." };
  g_autoptr (GPtrArray) window = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  for (guint i = 0; i < G_N_ELEMENTS (asks); i++) {
    g_autofree char *qid = g_strdup_printf ("q%u", i);
    g_autofree char *aid = g_strdup_printf ("a%u", i);
    g_ptr_array_add (window, catchup_message_new (qid, T0 + i * 10 * MIN_, "Tim", asks[i]));
    g_ptr_array_add (window, catchup_message_new (aid, T0 + i * 10 * MIN_ + MIN_, "John", answers[i]));
  }
  g_ptr_array_add (window, catchup_message_new ("n1", T0 + DAY / 4, "John", "I just signed with a new team in "
                                                "Lisbon for the next season, the contract starts in August!"));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  guint pairs = 0;
  for (guint i = 0; i < s->lines->len; i++)
    pairs += ((CatchupSummaryLine *) s->lines->pdata[i])->reply->len > 0;

  g_assert_cmpuint (pairs, <=, 3);
  g_assert_nonnull (line_for (s, "n1"));
}

/* "What would you rate it?" asks; after a question word "would you" requests nothing, so the question is read in
 * its answer's line like any other. */
static void
test_wh_question_no_request (void)
{
  const Row rows[] = {
    { "w1", T0, "Nate", "Wow, that must have been awesome! What would you rate it?" },
    { "w2", T0 + MIN_, "Joanna", "Well, it was amazing, so probably 9 or 10 out of 10! Movies can take us to different "
                                 "places and make us feel lots of emotions." },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (CatchupSummary) s = summarize (window, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *line = line_for (s, "w2");

  g_assert_nonnull (line);
  g_assert_nonnull (line->asked);
  g_assert_cmpstr (line->asked->text, ==, "…What would you rate it?");

  /* "They help me take a step back" asks nothing of anyone */
  const Row helps[] = {
    { "h1", T0, "John", "I'm glad my photos can capture that feeling. They help me take a step back and appreciate the "
                        "little things in life. There've been some tough times lately for me." },
    { "h2", T0 + MIN_, "Maria", "Sorry to hear that, John. Is there anything on your mind lately?" },
  };
  g_autoptr (GPtrArray) window2 = messages_from (helps, G_N_ELEMENTS (helps));
  g_autoptr (CatchupSummary) t = summarize (window2, NULL, CATCHUP_LENGTH_NORMAL);
  const CatchupSummaryLine *photos = line_for (t, "h1");
  g_assert_nonnull (photos);
  g_assert_cmpint (photos->section, !=, CATCHUP_SECTION_ASKED);
  g_assert_cmpuint (photos->reply->len, ==, 0);
}

static const Row pet_memory[] = {
  { "q1", T0 - 2 * DAY, "maria", "the shelter was packed this weekend, so many volunteers showed up" },
  { "q2", T0 - DAY, "maria", "I'm so sorry about Max, losing a pet after ten years is tough" },
};

static const Row pet_window[] = {
  { "w1", T0, "john", "pets really lift our spirits. I still miss Max after those ten years, here's a pic of him" },
  { "w2", T0 + MIN_, "maria", "he looks so happy in that one" },
};

/* A name the window has not introduced is looked up like a flagged expression: "Max" is the dog another speaker
 * was sorry about, a turn that shares the line's other new words too. */
static void
test_reference_by_name (void)
{
  g_autoptr (CatchupSummary) s = summarize_rows (pet_window, G_N_ELEMENTS (pet_window), pet_memory,
                                                 G_N_ELEMENTS (pet_memory), NULL, NULL, CATCHUP_LENGTH_NORMAL);
  GPtrArray *context = context_of (s, "w1");

  g_assert_nonnull (context);
  g_assert_cmpuint (context->len, ==, 1);
  const CatchupSummaryItem *item = context->pdata[0];
  g_assert_cmpstr (item->ref, ==, "Max");
  g_assert_cmpstr (item->id, ==, "q2");
  g_assert_nonnull (strstr (item->text, "sorry about Max"));
}

/* "the big" of "the big-endian job" is no noun phrase, and "that sounds" no demonstrative: no reference line
 * for either, though memory turns have the words. */
static void
test_reference_cut_phrase (void)
{
  const Row past[] = {
    { "b1", T0 - DAY, "pbaird", "the big runner for endian tests is offline again, jobs are queued behind it" },
    { "b2", T0 - DAY + 60, "ines", "that sounds like the queue from last week, the runner sounds overloaded" },
  };
  const Row rows[] = {
    { "x1", T0, "tkovac", "holding the tag: the big-endian job went red as soon as the runner came back" },
    { "x2", T0 + MIN_, "ines", "that sounds bad, the runner queue again?" },
  };
  g_autoptr (CatchupSummary) s = summarize_rows (rows, G_N_ELEMENTS (rows), past, G_N_ELEMENTS (past), "x1",
                                                 "the big", CATCHUP_LENGTH_DETAILED);
  g_autoptr (CatchupSummary) t = summarize_rows (rows, G_N_ELEMENTS (rows), past, G_N_ELEMENTS (past), "x2",
                                                 "that sounds", CATCHUP_LENGTH_DETAILED);

  g_assert_false (has_ref (s, "the big"));
  g_assert_false (has_ref (t, "that sounds"));
}

/* Two memory turns about different things that explain the line about as well: ambiguous, no line. */
static void
test_reference_ambiguous (void)
{
  const Row past[] = {
    { "a1", T0 - DAY, "ines", "the database migration cutover is planned for Friday noon" },
    { "a2", T0 - DAY + 60, "carl", "the office migration cutover means new desks on Monday" },
  };
  const Row rows[] = {
    { "y1", T0, "dana", "done: the migration cutover is finished, nobody noticed anything" },
    { "y2", T0 + MIN_, "ines", "great" },
  };
  g_autoptr (CatchupSummary) s = summarize_rows (rows, G_N_ELEMENTS (rows), past, G_N_ELEMENTS (past), "y1",
                                                 "the migration cutover", CATCHUP_LENGTH_NORMAL);

  g_assert_true (has_line (s, "y1"));
  g_assert_false (has_context (s, "Friday noon"));
  g_assert_false (has_context (s, "new desks"));
}

/* An answer shown under its question brings the reference that explains it. */
static void
test_reference_under_question (void)
{
  const Row past[] = {
    { "r1", T0 - 3 * DAY, "nate", "I'm organizing a gaming party two weekends from now, chess included" },
  };
  const Row rows[] = {
    { "z1", T0, "joanna", "hey Nate, long time! how have you been?" },
    { "z2", T0 + MIN_, "nate", "great! the gaming party was a success, we even played chess afterwards" },
  };
  g_autoptr (CatchupSummary) s = summarize_rows (rows, G_N_ELEMENTS (rows), past, G_N_ELEMENTS (past), "z2",
                                                 "the gaming party", CATCHUP_LENGTH_NORMAL);
  GPtrArray *context = context_of (s, "z2");

  g_assert_nonnull (context);
  g_assert_cmpuint (context->len, ==, 1);
  g_assert_cmpstr (((CatchupSummaryItem *) context->pdata[0])->id, ==, "r1");
  g_assert_cmpstr (((CatchupSummaryItem *) context->pdata[0])->ref, ==, "the gaming party");
}

/* A stock phrase run on into its verb by the detector ("your support means") is still a stock phrase. */
static void
test_reference_stock_run_on (void)
{
  const Row past[] = {
    { "s1", T0 - DAY, "john", "your support means a lot, together we can make a difference for the veterans" },
  };
  const Row rows[] = {
    { "v1", T0, "maria", "your support means a lot to the veterans, we will make a difference at the shelter" },
    { "v2", T0 + MIN_, "john", "anytime" },
  };
  g_autoptr (CatchupSummary) s = summarize_rows (rows, G_N_ELEMENTS (rows), past, G_N_ELEMENTS (past), "v1",
                                                 "your support means", CATCHUP_LENGTH_NORMAL);

  g_assert_true (has_line (s, "v1"));
  g_assert_false (has_context (s, "together we can"));
}

/* Whether the summary of rows with the memory past shows a reference line for expr, flagged in gap_id. */
static gboolean
ref_shown (const Row *rows, guint n, const Row *past, guint n_past, const char *gap_id, const char *expr)
{
  g_autoptr (CatchupSummary) s = summarize_rows (rows, n, past, n_past, gap_id, expr, CATCHUP_LENGTH_DETAILED);
  return has_ref (s, expr);
}

#define REF_SHOWN(rows, past, gap_id, expr) \
  ref_shown (rows, G_N_ELEMENTS (rows), past, G_N_ELEMENTS (past), gap_id, expr)

/* A demonstrative points at what was just said: inside the window that is the turn before it, so only the
 * window's first message gets a reference for "that community center". */
static void
test_reference_demonstrative (void)
{
  const Row past[] = {
    { "p1", T0 - DAY, "caroline", "I joined the pride community center downtown, the volunteers meet every Tuesday" },
  };
  const Row first[] = {
    { "w1", T0, "melanie", "how is that community center going? do the volunteers still meet every Tuesday?" },
    { "w2", T0 + MIN_, "caroline", "yes, every week" },
  };
  const Row later[] = {
    { "w0", T0 - MIN_, "caroline", "I went to a pride parade last Friday, so much love everywhere" },
    { "w1", T0, "melanie", "how is that community center going? do the volunteers still meet every Tuesday?" },
    { "w2", T0 + MIN_, "caroline", "yes, every week" },
  };

  g_assert_true (REF_SHOWN (first, past, "w1", "that community center"));
  g_assert_false (REF_SHOWN (later, past, "w1", "that community center"));
}

/* A capitalised field label ("Version: 3.0.0-rc1") is no name to look up. */
static void
test_reference_field_label (void)
{
  const Row past[] = {
    { "v1", T0 - DAY, "yuki_n", "pkgconf compares the Version field, so rc tags sort after the final 3.0.0" },
  };
  const Row rows[] = {
    { "f1", T0, "gsteen", "one thing: the .pc says Version: 3.0.0-rc and pkgconf sorts that after 3.0.0" },
    { "f2", T0 + MIN_, "yuki_n", "annoying" },
  };
  g_autoptr (CatchupSummary) s = summarize_rows (rows, G_N_ELEMENTS (rows), past, G_N_ELEMENTS (past), NULL, NULL,
                                                 CATCHUP_LENGTH_DETAILED);

  g_assert_true (has_line (s, "f1"));
  g_assert_false (has_ref (s, "Version"));
}

/* One memory turn, one window line that leans on it (and a reply), and whether the line gets a reference. */
typedef struct {
  const char *past_speaker, *past_text, *speaker, *text, *expr;
  gboolean shown;
} RefCase;

static const RefCase ref_cases[] = {
  /* "on the court" is a speaker's usual setting: a memory turn with the same phrase explains nothing, while the
   * same noun outside the phrase is looked up */
  { "tim", "gaining confidence on the court must feel great after all that strength training",
    "john", "same with me on the court, strength training finally paid off with confidence", "the court", FALSE },
  { "tim", "gaining confidence on the court must feel great after all that strength training",
    "john", "strength training for the court finally paid off with confidence", "the court", TRUE },
  /* "one of the residents, Cindy" is not the resident Laura of a memory turn: another of the same kind */
  { "maria", "one of the shelter residents, Laura, wrote us a heartfelt letter of gratitude",
    "maria", "one of the residents at the shelter, Cindy, wrote the heartfelt letter of gratitude", "the residents",
    FALSE },
  { "maria", "one of the shelter residents, Cindy, wrote us a heartfelt letter of gratitude",
    "maria", "one of the residents at the shelter, Cindy, wrote the heartfelt letter of gratitude", "the residents",
    TRUE },
  /* a turn that only asks about a thing ("How's the dance studio?") tells nothing about it */
  { "gina", "How's the dance studio with the investors? Fashion editors noticed my store.",
    "jon", "the dance studio lost its investors, the fashion crowd never came", "the dance studio", FALSE },
  { "gina", "The dance studio found investors, fashion editors noticed my store.",
    "jon", "the dance studio lost its investors, the fashion crowd never came", "the dance studio", TRUE },
  /* "my list" is the speaker's own: their own "add it to your list" was about the other's */
  { "tim", "definitely add rome food tours to your list, such a fun experience",
    "tim", "rome food tours are high on my list this summer", "my list", FALSE },
  { "tim", "rome food tours are on my list, such a fun experience",
    "tim", "rome food tours are high on my list this summer", "my list", TRUE },
  /* "moments like these that make": a relative "that" points at nothing */
  { "melanie", "family camping moments make it all worth it, the lake was so calm",
    "melanie", "camping moments like these that make me appreciate my family, the lake was calm", "that make",
    FALSE },
  /* a flagged word without a determiner ("still") is no noun phrase, and a generic noun run on into its verb
   * ("your hard work paid", "your kind words mean") names nothing */
  { "jon", "I'm still searching for a place to open my dance studio downtown",
    "jon", "Still working on opening a dance studio downtown, searching is tough", "still", FALSE },
  { "joanna", "Your hard work really paid off with the script, keep it up!",
    "nate", "not surprised at all that your hard work paid off with the script", "your hard work paid", FALSE },
  { "caroline", "Your kind words mean a lot, the pottery class was lovely.",
    "melanie", "Thanks! Your kind words mean a lot. Pottery class is lovely", "your kind words mean", FALSE },
  /* a feeling or quality names no thing a turn could explain: "the courage" */
  { "melanie", "keep on inspiring people at the mural with your strength and courage",
    "caroline", "the mural reflects the courage of the trans community, people keep inspiring", "the courage", FALSE },
  { "john", "it was cool to see how our actions can make a big impact in the neighborhood",
    "maria", "our actions, no matter how small, can make a big impact in the neighborhood", "our actions", FALSE },
  /* a day names no thing: "make that tomorrow" */
  { "tkovac", "tomorrow the abidiff report and probably cutting the release branch",
    "pbaird", "abidiff report on rc1 is queued... make that tomorrow, the cache is gone", "that tomorrow", FALSE },
};

/* Whether the line about id in the summary of rows (memory past, nothing flagged) has a reference to turn. */
static gboolean
cites (const Row *rows, guint n, const Row *past, guint n_past, const char *id, const char *turn)
{
  g_autoptr (CatchupSummary) s = summarize_rows (rows, n, past, n_past, NULL, NULL, CATCHUP_LENGTH_DETAILED);
  GPtrArray *context = context_of (s, id);
  for (guint i = 0; context && i < context->len; i++)
    if (g_strcmp0 (((const CatchupSummaryItem *) context->pdata[i])->id, turn) == 0)
      return TRUE;
  return FALSE;
}

#define CITES(rows, past, id, turn) cites (rows, G_N_ELEMENTS (rows), past, G_N_ELEMENTS (past), id, turn)

/* A copy of rows (size bytes) with the text of row k changed: the same exchange with one message told otherwise. */
static void
with_text (Row *out, const Row *rows, gsize size, guint k, const char *text)
{
  memcpy (out, rows, size);
  out[k].text = text;
}

/* Each case: a memory of its one turn, a window of its line and a reply; with an expression flagged in the line,
 * whether it gets a reference line, else whether the line cites the turn. */
static void
run_ref_cases (const RefCase *cases, guint n)
{
  for (guint i = 0; i < n; i++) {
    const RefCase *rc = &cases[i];
    const Row past[] = { { "p1", T0 - DAY, rc->past_speaker, rc->past_text } };
    const Row rows[] = {
      { "w1", T0, rc->speaker, rc->text },
      { "w2", T0 + MIN_, rc->past_speaker, "I see" },
    };
    g_test_message ("case %u: %s", i, rc->text);
    if (rc->expr)
      g_assert_cmpint (REF_SHOWN (rows, past, "w1", rc->expr), ==, rc->shown);
    else
      g_assert_cmpint (CITES (rows, past, "w1", "p1"), ==, rc->shown);
  }
}

static void
test_reference_cases (void)
{
  run_ref_cases (ref_cases, G_N_ELEMENTS (ref_cases));
}

/* A short reference is put into the line after its expression, in the text and for the plugin; a long one
 * keeps a line of its own. The structure keeps the item with its id either way. */
static void
test_reference_inline (void)
{
  g_autoptr (CatchupSummary) s = summarize_rows (pet_window, G_N_ELEMENTS (pet_window), pet_memory,
                                                 G_N_ELEMENTS (pet_memory), NULL, NULL, CATCHUP_LENGTH_NORMAL);
  CatchupSummaryLine *line = NULL;
  for (guint i = 0; i < s->lines->len && !line; i++)
    if (g_strcmp0 (catchup_summary_line_source (s->lines->pdata[i]), "w1") == 0)
      line = s->lines->pdata[i];
  g_assert_nonnull (line);
  g_assert_cmpuint (line->context->len, ==, 1);

  g_autoptr (GArray) inlined = NULL;
  g_autofree char *text = catchup_summary_line_text (line, &inlined);
  g_assert_nonnull (strstr (text, "miss Max (maria: “I'm so sorry about Max"));
  g_assert_true (g_array_index (inlined, gboolean, 0));
  g_autofree char *out = catchup_summary_to_text (s);
  g_assert_nonnull (strstr (out, "miss Max (maria: “"));
  g_assert_null (strstr (out, "↳ “Max”"));
  g_assert_cmpstr (((CatchupSummaryItem *) line->context->pdata[0])->id, ==, "q2");

  /* a quote too long to read as part of the line */
  CatchupSummaryItem *item = line->context->pdata[0];
  g_free (item->text);
  item->text = g_strdup ("I'm so sorry about Max, losing a pet after ten years is tough, and the shelter was "
                         "packed this weekend with so many volunteers");
  g_autoptr (GArray) kept = NULL;
  g_autofree char *plain = catchup_summary_line_text (line, &kept);
  g_assert_null (strstr (plain, "(maria"));
  g_assert_false (g_array_index (kept, gboolean, 0));
  g_autofree char *out2 = catchup_summary_to_text (s);
  g_assert_nonnull (strstr (out2, "↳ “Max” → I'm so sorry"));
}

/* A window that opens with a reaction answers the other person's turn just before it: "great news about your
 * friend" is the friend's adoption of the lead-in. When the window itself has an earlier turn by someone else,
 * that turn is what the reaction may answer: no line from the lead-in. */
static void
test_reference_lead_in_reply (void)
{
  const Row past[] = {
    { "p1", T0 - DAY, "caroline", "I just contacted my mentor for adoption advice, I'm ready to be a mom" },
    { "p2", T0 - 30, "melanie", "Yeah, a buddy of mine adopted a boy last year. It was a long process, but now they're super happy." },
  };
  const Row rows[] = {
    { "w1", T0, "caroline", "That's great news about your friend! Adopting takes patience, but it is so worth it for a family." },
    { "w2", T0 + MIN_, "melanie", "Thanks! Do you have any tips for getting started on the paperwork?" },
    { "w3", T0 + 2 * MIN_, "caroline", "Start with an agency that does home studies, the waitlist takes months." },
  };
  const Row control[] = {
    { "w0", T0, "melanie", "My cousin just got engaged in Lisbon, the wedding is planned for June." },
    { "w1", T0 + 30, "caroline", "That's great news about your friend! Adopting takes patience, but it is so worth it for a family." },
    { "w2", T0 + MIN_, "melanie", "Thanks! Do you have any tips for getting started on the paperwork?" },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (GPtrArray) window2 = messages_from (control, G_N_ELEMENTS (control));
  CatchupMemory *mem = memory_new (past, G_N_ELEMENTS (past));
  /* the turn just before the window is the memory's lead-in */
  g_hash_table_insert (mem->gap_of, g_strdup ("p2"), GINT_TO_POINTER (0));
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_DETAILED);
  g_autoptr (CatchupSummary) t = summarize (window2, mem, CATCHUP_LENGTH_DETAILED);
  memory_free (mem);
  GPtrArray *context = context_of (s, "w1");

  g_assert_nonnull (context);
  g_assert_cmpuint (context->len, ==, 1);
  const CatchupSummaryItem *item = context->pdata[0];
  g_assert_cmpstr (item->ref, ==, "That's great news about your friend");
  g_assert_cmpstr (item->id, ==, "p2");
  g_assert_nonnull (strstr (item->text, "a buddy of mine adopted"));
  g_assert_false (has_ref (t, "That's great news about your friend"));
  context = context_of (t, "w1");
  for (guint i = 0; context && i < context->len; i++)
    g_assert_cmpstr (((const CatchupSummaryItem *) context->pdata[i])->id, !=, "p2");
}

/* "They're great friends" at the window's start continues the lead-in: "they" are the teammates its latest turn
 * names, quoted where it first names them. Not when that turn names two kinds of people, nor when the window
 * names people of the kind before the pronoun. */
static void
test_reference_continued_pronoun (void)
{
  const Row past[] = {
    { "p1", T0 - 3 * MIN_, "john", "Something cool happened! I went to a local restaurant with some new teammates "
                                    "last week." },
    { "p2", T0 - 2 * MIN_, "tim", "That sounds like a fun evening out, where was it?" },
    { "p3", T0 - MIN_, "john", "Downtown, the place with the huge burgers. The teammates picked it." },
  };
  const Row two_kinds[] = {
    { "p1", T0 - 2 * MIN_, "john", "I had dinner with my cousins and some new teammates last week." },
    { "p2", T0 - MIN_, "tim", "That sounds like a fun evening out, where was it?" },
  };
  const Row rows[] = {
    { "w1", T0, "tim", "Nice, I'm glad you had a good time downtown." },
    { "w2", T0 + 30, "john", "They're great friends. We connected over basketball and stayed until midnight." },
  };
  const Row named[] = {
    { "w1", T0, "tim", "Nice, my cousins love that burger place too." },
    { "w2", T0 + 30, "john", "They're great friends. We connected over basketball and stayed until midnight." },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  g_autoptr (GPtrArray) window2 = messages_from (named, G_N_ELEMENTS (named));
  CatchupMemory *mem = memory_new (past, G_N_ELEMENTS (past));
  CatchupMemory *mem2 = memory_new (two_kinds, G_N_ELEMENTS (two_kinds));
  for (guint i = 0; i < G_N_ELEMENTS (past); i++)
    g_hash_table_insert (mem->gap_of, g_strdup (past[i].id), GINT_TO_POINTER (0));
  for (guint i = 0; i < G_N_ELEMENTS (two_kinds); i++)
    g_hash_table_insert (mem2->gap_of, g_strdup (two_kinds[i].id), GINT_TO_POINTER (0));
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_DETAILED);
  g_autoptr (CatchupSummary) t = summarize (window, mem2, CATCHUP_LENGTH_DETAILED);
  g_autoptr (CatchupSummary) u = summarize (window2, mem, CATCHUP_LENGTH_DETAILED);
  memory_free (mem);
  memory_free (mem2);

  GPtrArray *context = context_of (s, "w2");
  g_assert_nonnull (context);
  g_assert_cmpuint (context->len, ==, 1);
  const CatchupSummaryItem *item = context->pdata[0];
  g_assert_cmpstr (item->ref, ==, "They're");
  g_assert_cmpstr (item->id, ==, "p1");
  g_assert_nonnull (strstr (item->text, "some new teammates"));
  g_assert_false (has_ref (t, "They're"));
  g_assert_false (has_ref (u, "They're"));
}

/* The summary quotes a turn once, so a line whose reference another line quotes already costs no room for it:
 * two answers about "them", the same players of the lead-in, fit a short summary together. */
static void
test_reference_charged_once (void)
{
  const Row past[] = {
    { "p1", T0 - 3 * MIN_, "john", "Big news: I'm now mentoring the younger players on my team during the "
                                    "off-season." },
    { "p2", T0 - 2 * MIN_, "tim", "That's so cool, how did that start?" },
    { "p3", T0 - MIN_, "john", "The coach asked me after practice. The younger players were thrilled." },
  };
  const Row rows[] = {
    { "w1", T0, "tim", "You're really doing great with them. Do they see you as a mentor?" },
    { "w2", T0 + 30, "john", "They do see me as a mentor, two of them asked me to help with their free throws." },
    { "w3", T0 + 60, "tim", "How does it feel to have their trust?" },
    { "w4", T0 + 90, "john", "They call me coach now and it feels great, I even got them matching wristbands." },
  };
  g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
  CatchupMemory *mem = memory_new (past, G_N_ELEMENTS (past));
  for (guint i = 0; i < G_N_ELEMENTS (past); i++)
    g_hash_table_insert (mem->gap_of, g_strdup (past[i].id), GINT_TO_POINTER (0));
  g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_SHORT);
  memory_free (mem);
  g_autofree char *text = catchup_summary_to_text (s);
  g_test_message ("%s", text);
  g_assert_true (has_ref (s, "They"));
  g_assert_nonnull (line_for (s, "w2"));
  g_assert_nonnull (line_for (s, "w4"));
}

/* "the rings" in "Lord of the Rings" is part of a title: no "↳" line explains it. */
static void
test_reference_not_in_title (void)
{
  const Row past[] = {
    { "p1", T0 - DAY, "tim", "I'm a huge fan of this genre! Here's a pic of my favorite, the rings from the films." },
  };
  const Row rows[] = {
    { "w1", T0, "john", "I'm a huge fan of Lord of the Rings! The adventure, the world, and the characters are "
                        "awesome." },
  };
  const char *const ids[] = { "p1", NULL };
  g_autoptr (CatchupSummary) s = summarize_with_evidence (rows, G_N_ELEMENTS (rows), past, G_N_ELEMENTS (past), "w1",
                                                          "the rings", ids, CATCHUP_LENGTH_NORMAL);
  g_assert_nonnull (line_for (s, "w1"));
  g_assert_false (has_ref (s, "the rings"));
}

/* A name a determiner puts before a noun names the compound: "the ABI report" is not a turn that only says ABI;
 * a turn that names the report, or names two more of the line's names besides ("GCC", "Clang"), is. */
static void
test_reference_name_modifier (void)
{
  const Row generic[] = {
    { "p1", T0 - DAY, "mira", "what I check in any new header: who owns every pointer, and whether we can extend it without breaking ABI" },
  };
  const Row report[] = {
    { "p1", T0 - DAY, "pbaird", "the ABI report is up: two accessors vanished when the struct became opaque" },
  };
  const Row abi_rows[] = {
    { "w1", T0, "tkovac", "so, re the two accessors from the ABI report: they come back as exported functions over the opaque struct" },
    { "w2", T0 + MIN_, "dfarrow", "ok" },
  };
  const Row floors[] = {
    { "p1", T0 - DAY, "gsteen", "amendment: MSVC floor is VS 2022 17.5 instead of 2019 16.8. GCC and Clang floors unchanged" },
  };
  const Row msvc_rows[] = {
    { "w1", T0, "mira", "updating the toolchains table: the MSVC row gets the new minimum, the gcc/clang rows stay as voted" },
    { "w2", T0 + MIN_, "gsteen", "ok" },
  };

  g_assert_false (CITES (abi_rows, generic, "w1", "p1"));
  g_assert_true (CITES (abi_rows, report, "w1", "p1"));
  g_assert_true (CITES (msvc_rows, floors, "w1", "p1"));
}

/* A message that opens with a pronoun leans on what was said before it: two words it writes side by side that
 * exactly one memory turn states side by side too ("rejection letter") are that turn's. Two such turns (two
 * letters) are ambiguous, and a message without the pronoun tells its own news: no line for either. */
static void
test_reference_pronoun_phrase (void)
{
  const Row one[] = {
    { "p1", T0 - 10 * MIN_, "joanna", "Nate, after finishing my screenplay I got a rejection letter from a major company" },
    { "p2", T0 - 5 * MIN_, "nate", "sorry to hear that, did something happen with the company?" },
  };
  const Row rows[] = {
    { "w1", T0, "joanna", "They just sent me a generic rejection letter without much feedback." },
    { "w2", T0 + MIN_, "nate", "ugh, so frustrating" },
  };
  Row two[G_N_ELEMENTS (one)], own[G_N_ELEMENTS (rows)];
  with_text (two, one, sizeof one, 1, "and my cousin got a rejection letter from the bank about the loan");
  two[1].speaker = "joanna";
  with_text (own, rows, sizeof rows, 0, "Today the post brought a generic rejection letter without much feedback.");

  g_assert_true (REF_SHOWN (rows, one, NULL, "rejection letter"));
  g_assert_true (CITES (rows, one, "w1", "p1"));
  /* the quote without the address it opens with */
  g_autoptr (CatchupSummary) s = summarize_rows (rows, G_N_ELEMENTS (rows), one, G_N_ELEMENTS (one), NULL, NULL,
                                                 CATCHUP_LENGTH_DETAILED);
  g_assert_true (has_context (s, "after finishing my screenplay"));
  g_assert_false (has_context (s, "Nate,"));
  g_assert_false (CITES (rows, two, "w1", "p1") || CITES (rows, two, "w1", "p2"));
  g_assert_false (CITES (own, one, "w1", "p1"));
}

/* "another painting like our last one" stands for the latest painting its speaker told of: a memory turn of
 * theirs, not the other person's painting, and none when the window has told of theirs before the line. */
static void
test_reference_one_phrase (void)
{
  const Row past[] = {
    { "p1", T0 - 3 * DAY, "melanie", "We love painting together lately. Here's our latest work from last weekend, a sunset." },
    { "p2", T0 - 2 * DAY, "caroline", "I finished a painting of a tree for the art show" },
  };
  const Row others[] = {
    { "p2", T0 - 2 * DAY, "caroline", "I finished a painting of a tree for the art show" },
  };
  const Row rows[] = {
    { "w1", T0, "caroline", "that painting of mine goes to the show next month" },
    { "w2", T0 + MIN_, "melanie", "Gorgeous! My kids and I just finished another painting like our last one." },
    { "w3", T0 + 2 * MIN_, "caroline", "can't wait to see it" },
  };
  const Row told[] = {
    { "w1", T0, "melanie", "our painting from the lake is drying on the porch" },
    { "w2", T0 + MIN_, "melanie", "Gorgeous! My kids and I just finished another painting like our last one." },
    { "w3", T0 + 2 * MIN_, "caroline", "can't wait to see it" },
  };

  g_assert_true (REF_SHOWN (rows, past, NULL, "our last one"));
  g_assert_true (CITES (rows, past, "w2", "p1"));
  g_assert_false (CITES (rows, others, "w2", "p2"));
  g_assert_false (CITES (told, past, "w2", "p1"));
}

/* "yuki_n: I need your piece … put it in patches/" is the task the memory gave the addressee that shares a word
 * with the line. Not addressed, it is nobody's in particular; two tasks that fit as well are ambiguous. */
static void
test_reference_addressed_yours (void)
{
  const Row past[] = {
    { "p1", T0 - 2 * DAY, "yuki_n", "I'll rework the debian packaging once rc1 is out" },
    { "p2", T0 - DAY, "tkovac", "ok: yuki_n prepares a backport patch against 2.8.6 and we attach it to the advisory" },
  };
  const Row rows[] = {
    { "w1", T0, "tkovac", "yuki_n: I need your piece by noon tomorrow. put it in patches/ next to the others" },
    { "w2", T0 + MIN_, "yuki_n", "will do" },
  };
  Row two[G_N_ELEMENTS (past)], unaddressed[G_N_ELEMENTS (rows)];
  with_text (two, past, sizeof past, 0, "I can write the patch notes for the fedora side");
  Row thanked[G_N_ELEMENTS (past)];
  with_text (thanked, past, sizeof past, 1, "thanks yuki_n for the backport patch against 2.8.6, the advisory is done");
  with_text (unaddressed, rows, sizeof rows, 0, strchr (rows[0].text, ' ') + 1);

  g_assert_true (REF_SHOWN (rows, past, NULL, "your piece"));
  g_assert_true (CITES (rows, past, "w1", "p2"));
  g_assert_false (CITES (unaddressed, past, "w1", "p2"));
  g_assert_false (CITES (rows, two, "w1", "p1") || CITES (rows, two, "w1", "p2"));
  /* thanking the addressee gives them no task */
  g_assert_false (CITES (rows, thanked, "w1", "p2"));
}

/* The window's first message answers the other person's question just before the window: "this story" is the
 * one it tells about, not an earlier turn's story. When the turn before asks nothing, it is looked up. */
static void
test_reference_demonstrative_answer (void)
{
  const Row past[] = {
    { "p1", T0 - DAY, "nate", "I watched a movie recently, the acting was awesome and the story was so captivating" },
    { "p2", T0 - 30, "nate", "Is there a favorite piece from your early writings that stands out to you?" },
  };
  const Row rows[] = {
    { "w1", T0, "joanna", "Yup, I still remember this story from when I was 10, the acting of a brave turtle was so captivating" },
    { "w2", T0 + MIN_, "nate", "love it" },
  };
  Row told[G_N_ELEMENTS (past)];
  with_text (told, past, sizeof past, 1, "Those old notebooks of yours must be full of ideas.");
  for (guint k = 0; k < 2; k++) {
    g_autoptr (GPtrArray) window = messages_from (rows, G_N_ELEMENTS (rows));
    CatchupMemory *mem = memory_new (k == 0 ? past : told, G_N_ELEMENTS (past));
    g_hash_table_insert (mem->gap_of, g_strdup ("p2"), GINT_TO_POINTER (0));
    memory_add_gap (mem, "w1", "this story", "this story", NULL);
    g_autoptr (CatchupSummary) s = summarize (window, mem, CATCHUP_LENGTH_DETAILED);
    memory_free (mem);
    g_assert_cmpint (has_ref (s, "this story"), ==, k == 1);
  }
}

/* A reference quotes what the speaker said about the referent, not the caption of their photo of it; a caption
 * only when nothing said names it. */
static const Row store_memory[] = {
  { "p1", T0 - DAY, "gina", "Things have been hectic. I just launched an ad campaign for my clothing store downtown. "
                            "[shares a photo: a photo of a clothing store downtown with clothes on display]" },
};

static const Row store_window[] = {
  { "w1", T0, "jon", "congrats on the clothing store downtown! the dance studio is on tenuous grounds right now" },
  { "w2", T0 + MIN_, "gina", "thanks!" },
};

static void
test_reference_quote_not_caption (void)
{
  g_autoptr (CatchupSummary) s =
    summarize_rows (store_window, G_N_ELEMENTS (store_window), store_memory, G_N_ELEMENTS (store_memory), "w1",
                    "the clothing store downtown", CATCHUP_LENGTH_DETAILED);

  g_assert_true (has_context (s, "ad campaign for my clothing store"));
  g_assert_false (has_context (s, "[shares"));
}

/* After a preposition a name before a noun is a modifier too ("fighting for LGBTQ rights" is about rights, not
 * the group a memory turn names); before a time word it is the name itself ("with Max yesterday"). */
static void
test_reference_name_after_preposition (void)
{
  const Row group[] = {
    { "p1", T0 - DAY, "caroline", "our group, Connected LGBTQ Activists, meets weekly to plan campaigns" },
  };
  const Row parade[] = {
    { "w1", T0, "caroline", "so inspiring, it pushed me to keep fighting for LGBTQ rights with weekly campaigns" },
    { "w2", T0 + MIN_, "melanie", "so inspiring" },
  };
  const Row dog[] = {
    { "w1", T0, "john", "pets really lift our spirits, I sat with Max yesterday looking at those ten years of pics" },
    { "w2", T0 + MIN_, "maria", "he looks so happy" },
  };

  g_assert_false (CITES (parade, group, "w1", "p1"));
  g_assert_true (CITES (dog, pet_memory, "w1", "q2"));
}

/* A reference's quote starts at what was said about the referent, not at a greeting that matches as well. */
static const Row brigade_memory[] = {
  { "p1", T0 - DAY, "john", "Hey Maria, that's awesome! So I joined a brigade to protect my community." },
};

static const Row brigade_window[] = {
  { "w1", T0, "john", "that's awesome, Maria. we all help protecting our community, a bond like in the military" },
  { "w2", T0 + MIN_, "maria", "so true" },
};

static void
test_reference_quote_not_greeting (void)
{
  g_autoptr (CatchupSummary) s =
    summarize_rows (brigade_window, G_N_ELEMENTS (brigade_window), brigade_memory, G_N_ELEMENTS (brigade_memory),
                    "w1", "our community", CATCHUP_LENGTH_DETAILED);

  g_assert_true (has_context (s, "So I joined a brigade"));
  g_assert_false (has_context (s, "Hey Maria"));
}

/* What is no compound and what is no name: a noun taking an object is a verb ("the UK gave me loads of ideas"
 * names the UK); a compound's noun may come a word later in the turn ("our OTA test suite" is "the OTA suite"); a
 * unit after a number ("200 MiB") and a name in capitals that a turn writes in lower case ("VS" and "vs") name
 * nothing the turn is about. One memory turn, one window line (and a reply): whether the line cites the turn. */
static const RefCase name_cases[] = {
  { "tim", "I read this awesome book about castles in the UK, it blew me away",
    "tim", "for example, reading about castles in the UK gave me loads of ideas", NULL, TRUE },
  { "ravi_k", "tried main on our x86 build host: builds, our OTA test suite passes with real firmware",
    "ravi_k", "with the OTA suite, real firmware images pass on rc1 too", NULL, TRUE },
  { "tkovac", "3.0 gets a default max record size of 64 MiB, overridable per context",
    "ravi_k", "our biggest firmware records are a bit under 200 MiB, overridable or not", NULL, FALSE },
  { "dfarrow", "decode throughput: foo_reader_next() vs foo_parse_ex() on a hard build floor",
    "gsteen", "the compiler floor is a problem: tried rc1 with VS 2019 16.11, the build is hard to get", NULL, FALSE },
  /* a date or a quantity names nothing: "Tue Mar 10", "timeout after 60s" */
  { "gsteen", "the vote closes Thu Mar 5 17:00 UTC, distros list and embargo dates pending",
    "tkovac", "the date I'm proposing to the distros list: Tue Mar 10, embargo pending their acks", NULL, FALSE },
  { "foobot", "nightly: FAILED on qemu (test_stream_chunked: timeout after 60s)",
    "foobot", "#1432: FAILED on qemu (test_stream_chunked: timeout after 60s), 20/21 passed", NULL, FALSE },
  /* "his story" is the story of the person the line names, not another turn's stories */
  { "john", "everyone at a shelter has their own inspiring story of hardship and hope",
    "maria", "I met someone named David at a shelter. Hearing his story of hardship was humbling", "his story",
    FALSE },
  { "maria", "last week David from a shelter told me his story of hardship and hope",
    "maria", "I met someone named David at a shelter. Hearing his story of hardship was humbling", "his story",
    TRUE },
};

static void
test_reference_name_shapes (void)
{
  run_ref_cases (name_cases, G_N_ELEMENTS (name_cases));
}

/* A pronoun's pair must read as a noun compound: "taking care" is a verb phrase that a farewell ("take care!")
 * shares by chance. */
static const RefCase phrase_cases[] = {
  { "joanna", "after finishing my screenplay I got a rejection letter from a major company",
    "joanna", "They just sent me a generic rejection letter without much feedback.", NULL, TRUE },
  { "joanna", "Later, take care!",
    "joanna", "They look so peaceful with their shells! Is taking care of them tough?", NULL, FALSE },
  { "joanna", "your turtles look great in that tank",
    "nate", "They look great now: the new terrarium arrived this week and both turtles moved in", NULL, FALSE },
};

static void
test_reference_pronoun_noun_pair (void)
{
  run_ref_cases (phrase_cases, G_N_ELEMENTS (phrase_cases));
}

/* "That pic is so beautiful, the colors really pop" right after the other person shared a photo is about the
 * photo: no earlier turn explains its colors. Without the photo the line is looked up. */
static const Row colors_memory[] = {
  { "p1", T0 - DAY, "caroline", "I painted the sunset at the beach, all the amazing colors dipping below the horizon" },
};

static void
test_reference_about_photo (void)
{
  Row rows[] = {
    { "w1", T0, "caroline", "biking by the beach at sunset! [shares a photo: a sunset over the beach]" },
    { "w2", T0 + MIN_, "melanie", "That pic is so beautiful, the colors really pop, the horizon and the sunset too" },
    { "w3", T0 + 2 * MIN_, "caroline", "thanks!" },
  };
  g_assert_false (REF_SHOWN (rows, colors_memory, "w2", "the colors"));
  rows[0].text = "biking by the beach at sunset was lovely";
  g_assert_true (REF_SHOWN (rows, colors_memory, "w2", "the colors"));
}

/* A title in quotes inside a sentence is a name of several words: "Little Women", not "Women". */
static const Row film_memory[] = {
  { "p1", T0 - DAY, "joanna", "I just watched \"Little Women\" and it was amazing, a great story about sisterhood" },
};

static const Row film_window[] = {
  { "w1", T0, "nate", "I watched \"Little Women\" recently, a story about sisterhood, so captivating" },
  { "w2", T0 + MIN_, "joanna", "right?" },
};

static void
test_reference_quoted_title (void)
{
  g_autoptr (CatchupSummary) s = summarize_rows (film_window, G_N_ELEMENTS (film_window), film_memory,
                                                 G_N_ELEMENTS (film_memory), NULL, NULL, CATCHUP_LENGTH_DETAILED);
  g_assert_true (has_ref (s, "Little Women"));
  g_assert_false (has_ref (s, "Women"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/summary/attribution", test_attribution);
  g_test_add_func ("/catchup/summary/agreement", test_agreement);
  g_test_add_func ("/catchup/summary/reply", test_reply);
  g_test_add_func ("/catchup/summary/length", test_length);
  g_test_add_func ("/catchup/summary/gap-context", test_gap_context);
  g_test_add_func ("/catchup/summary/unnamed-referent", test_unnamed_referent);
  g_test_add_func ("/catchup/summary/revised", test_revised);
  g_test_add_func ("/catchup/summary/old-memory", test_old_memory);
  g_test_add_func ("/catchup/summary/empty", test_empty);
  g_test_add_func ("/catchup/summary/hostile", test_hostile);
  g_test_add_func ("/catchup/summary/trim", test_trim);
  g_test_add_func ("/catchup/summary/to-text", test_to_text);
  g_test_add_func ("/catchup/summary/headline", test_headline);
  g_test_add_func ("/catchup/summary/for-you", test_for_you);
  g_test_add_func ("/catchup/summary/superseded-date", test_superseded_date);
  g_test_add_func ("/catchup/summary/revises-memory", test_revises_memory);
  g_test_add_func ("/catchup/summary/number-not-revision-of-memory", test_number_not_revision_of_memory);
  g_test_add_func ("/catchup/summary/answer-two-lines-later", test_answer_two_lines_later);
  g_test_add_func ("/catchup/summary/ok-answers-other-line", test_ok_answers_other_line);
  g_test_add_func ("/catchup/summary/my-dog", test_my_dog);
  g_test_add_func ("/catchup/summary/no-reference", test_no_reference);
  g_test_add_func ("/catchup/summary/decisive-last", test_decisive_last);
  g_test_add_func ("/catchup/summary/actually-no-revision", test_actually_no_revision);
  g_test_add_func ("/catchup/summary/news-with-small-talk", test_news_with_small_talk);
  g_test_add_func ("/catchup/summary/left-out-words", test_left_out_words);
  g_test_add_func ("/catchup/summary/for-you-records", test_for_you_records);
  g_test_add_func ("/catchup/summary/decision-chain-records", test_decision_chain_records);
  g_test_add_func ("/catchup/summary/tag-and-forecast", test_tag_and_forecast);
  g_test_add_func ("/catchup/summary/answer-stands-alone", test_answer_stands_alone);
  g_test_add_func ("/catchup/summary/excerpt-at-news", test_excerpt_at_news);
  g_test_add_func ("/catchup/summary/excerpt-at-own-news", test_excerpt_at_own_news);
  g_test_add_func ("/catchup/summary/excerpt-no-lead-in", test_excerpt_no_lead_in);
  g_test_add_func ("/catchup/summary/reply-time-format", test_reply_time_format);
  g_test_add_func ("/catchup/summary/caption-no-state", test_caption_no_state);
  g_test_add_func ("/catchup/summary/list-no-revision", test_list_no_revision);
  g_test_add_func ("/catchup/summary/history-first", test_history_first);
  g_test_add_func ("/catchup/summary/invitation-answer", test_invitation_answer);
  g_test_add_func ("/catchup/summary/reaction-is-no-answer", test_reaction_is_no_answer);
  g_test_add_func ("/catchup/summary/news-and-question", test_news_and_question);
  g_test_add_func ("/catchup/summary/closing-is-chit-chat", test_closing_is_chit_chat);
  g_test_add_func ("/catchup/summary/footer-line-when-nothing-left-out", test_footer_line_when_nothing_left_out);
  g_test_add_func ("/catchup/summary/event-before-musing", test_event_before_musing);
  g_test_add_func ("/catchup/summary/closing-question-cut", test_closing_question_cut);
  g_test_add_func ("/catchup/summary/excerpt-keeps-antecedent", test_excerpt_keeps_antecedent);
  g_test_add_func ("/catchup/summary/excerpt-at-shift", test_excerpt_at_shift);
  g_test_add_func ("/catchup/summary/folded-question-references", test_folded_question_references);
  g_test_add_func ("/catchup/summary/explained-in-window", test_explained_in_window);
  g_test_add_func ("/catchup/summary/rhetorical-question", test_rhetorical_question);
  g_test_add_func ("/catchup/summary/review-verdict-answers", test_review_verdict_answers);
  g_test_add_func ("/catchup/summary/thanked-for-is-in-window", test_thanked_for_is_in_window);
  g_test_add_func ("/catchup/summary/busy-channel", test_busy_channel);
  g_test_add_func ("/catchup/summary/instead-of-old-value", test_instead_of_old_value);
  g_test_add_func ("/catchup/summary/each-session", test_each_session);
  g_test_add_func ("/catchup/summary/initials-no-sentence-end", test_initials_no_sentence_end);
  g_test_add_func ("/catchup/summary/question-in-answer", test_question_in_answer);
  g_test_add_func ("/catchup/summary/wh-question-no-request", test_wh_question_no_request);
  g_test_add_func ("/catchup/summary/short-opening-sentence", test_short_opening_sentence);
  g_test_add_func ("/catchup/summary/few-pairs", test_few_pairs);
  g_test_add_func ("/catchup/summary/reference-by-name", test_reference_by_name);
  g_test_add_func ("/catchup/summary/reference-cut-phrase", test_reference_cut_phrase);
  g_test_add_func ("/catchup/summary/reference-ambiguous", test_reference_ambiguous);
  g_test_add_func ("/catchup/summary/reference-under-question", test_reference_under_question);
  g_test_add_func ("/catchup/summary/reference-stock-run-on", test_reference_stock_run_on);
  g_test_add_func ("/catchup/summary/reference-demonstrative", test_reference_demonstrative);
  g_test_add_func ("/catchup/summary/reference-field-label", test_reference_field_label);
  g_test_add_func ("/catchup/summary/reference-cases", test_reference_cases);
  g_test_add_func ("/catchup/summary/reference-inline", test_reference_inline);
  g_test_add_func ("/catchup/summary/reference-lead-in-reply", test_reference_lead_in_reply);
  g_test_add_func ("/catchup/summary/reference-continued-pronoun", test_reference_continued_pronoun);
  g_test_add_func ("/catchup/summary/reference-charged-once", test_reference_charged_once);
  g_test_add_func ("/catchup/summary/reference-not-in-title", test_reference_not_in_title);
  g_test_add_func ("/catchup/summary/reference-meeting-day", test_reference_meeting_day);
  g_test_add_func ("/catchup/summary/reference-name-modifier", test_reference_name_modifier);
  g_test_add_func ("/catchup/summary/reference-pronoun-phrase", test_reference_pronoun_phrase);
  g_test_add_func ("/catchup/summary/reference-one-phrase", test_reference_one_phrase);
  g_test_add_func ("/catchup/summary/reference-addressed-yours", test_reference_addressed_yours);
  g_test_add_func ("/catchup/summary/reference-demonstrative-answer", test_reference_demonstrative_answer);
  g_test_add_func ("/catchup/summary/reference-quote-not-caption", test_reference_quote_not_caption);
  g_test_add_func ("/catchup/summary/reference-name-after-preposition", test_reference_name_after_preposition);
  g_test_add_func ("/catchup/summary/reference-quote-not-greeting", test_reference_quote_not_greeting);
  g_test_add_func ("/catchup/summary/reference-name-shapes", test_reference_name_shapes);
  g_test_add_func ("/catchup/summary/reference-pronoun-noun-pair", test_reference_pronoun_noun_pair);
  g_test_add_func ("/catchup/summary/reference-about-photo", test_reference_about_photo);
  g_test_add_func ("/catchup/summary/reference-quoted-title", test_reference_quoted_title);
  return g_test_run ();
}
