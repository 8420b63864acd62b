#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-headline.h"
#include "catchup-summary-private.h"
#include "catchup-text.h"

/*
 * The summary's structure, its headline and its plain-text rendering. Every producer (the extractive builder,
 * the model summary) fills the same structure; every consumer (the tool's text and JSON, the plugin) renders
 * from it and never reparses text.
 */

/* ---- sections ---- */

static const char *const section_names[CATCHUP_N_SECTIONS] = {
  [CATCHUP_SECTION_FOR_YOU] = "for-you",
  [CATCHUP_SECTION_DECISIONS] = "decisions",
  [CATCHUP_SECTION_ASKED] = "asked",
  [CATCHUP_SECTION_PLANS] = "plans",
  [CATCHUP_SECTION_NEWS] = "news",
};

static const char *const section_titles[CATCHUP_N_SECTIONS] = {
  /* Translators: heading of the catch-up's lines that name the user or ask them something */
  [CATCHUP_SECTION_FOR_YOU] = N_("For you"),
  /* Translators: heading of a catch-up section */
  [CATCHUP_SECTION_DECISIONS] = N_("Decisions"),
  /* Translators: heading of the catch-up's questions and requests, with their answers */
  [CATCHUP_SECTION_ASKED] = N_("Asked"),
  /* Translators: heading of a catch-up section */
  [CATCHUP_SECTION_PLANS] = N_("Plans and actions"),
  /* Translators: heading of a catch-up section */
  [CATCHUP_SECTION_NEWS] = N_("News and status"),
};

const char *
catchup_section_to_string (CatchupSection section)
{
  return section < CATCHUP_N_SECTIONS ? section_names[section] : "news";
}

gboolean
catchup_section_from_string (const char *name, CatchupSection *out)
{
  for (guint i = 0; name && i < CATCHUP_N_SECTIONS; i++)
    if (g_ascii_strcasecmp (name, section_names[i]) == 0) {
      *out = i;
      return TRUE;
    }
  return FALSE;
}

const char *
catchup_section_title (CatchupSection section)
{
  return _(section_titles[section < CATCHUP_N_SECTIONS ? section : CATCHUP_SECTION_NEWS]);
}

/* ---- items, lines, summaries ---- */

CatchupSummaryItem *
catchup_summary_item_new (const char *ref, const char *id, const char *speaker, gint64 ts, const char *text)
{
  CatchupSummaryItem *item = g_new0 (CatchupSummaryItem, 1);

  item->ref = g_strdup (ref);
  item->id = g_strdup (id);
  item->speaker = g_strdup (speaker);
  item->ts = ts;
  item->text = g_strdup (text ? text : "");
  return item;
}

void
catchup_summary_item_free (CatchupSummaryItem *item)
{
  if (!item)
    return;
  g_free (item->ref);
  g_free (item->id);
  g_free (item->speaker);
  g_free (item->text);
  g_free (item);
}

static GPtrArray *
item_array (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_summary_item_free);
}

CatchupSummaryLine *
catchup_summary_line_new (CatchupSection section, const char *source_id, const char *speaker, gint64 ts,
                          const char *text)
{
  CatchupSummaryLine *line = g_new0 (CatchupSummaryLine, 1);

  line->section = section;
  line->sources = g_ptr_array_new_with_free_func (g_free);
  if (source_id)
    g_ptr_array_add (line->sources, g_strdup (source_id));
  line->speaker = g_strdup (speaker);
  line->ts = ts;
  line->text = g_strdup (text ? text : "");
  line->context = item_array ();
  line->agreed = item_array ();
  line->reply = item_array ();
  line->supersedes = item_array ();
  return line;
}

void
catchup_summary_line_free (CatchupSummaryLine *line)
{
  if (!line)
    return;
  g_clear_pointer (&line->sources, g_ptr_array_unref);
  g_free (line->speaker);
  g_free (line->text);
  g_clear_pointer (&line->context, g_ptr_array_unref);
  g_clear_pointer (&line->agreed, g_ptr_array_unref);
  g_clear_pointer (&line->reply, g_ptr_array_unref);
  g_clear_pointer (&line->supersedes, g_ptr_array_unref);
  catchup_summary_item_free (line->before);
  catchup_summary_item_free (line->asked);
  g_free (line);
}

const char *
catchup_summary_line_source (const CatchupSummaryLine *line)
{
  return line && line->sources && line->sources->len ? line->sources->pdata[0] : NULL;
}

void
catchup_summary_free (CatchupSummary *summary)
{
  if (!summary)
    return;
  g_free (summary->headline);
  g_clear_pointer (&summary->lines, g_ptr_array_unref);
  g_clear_pointer (&summary->left_out_terms, g_ptr_array_unref);
  g_free (summary->notice);
  g_free (summary);
}

CatchupSummary *
catchup_summary_new (GPtrArray *window)
{
  CatchupSummary *summary = g_new0 (CatchupSummary, 1);

  summary->lines = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_summary_line_free);
  summary->left_out_terms = g_ptr_array_new_with_free_func (g_free);
  catchup_summary_set_head (summary, window, 0);
  return summary;
}

static gint
by_section (gconstpointer a, gconstpointer b)
{
  const CatchupSummaryLine *x = *(CatchupSummaryLine *const *) a;
  const CatchupSummaryLine *y = *(CatchupSummaryLine *const *) b;

  return (gint) x->section - (gint) y->section;
}

void
catchup_summary_sort_lines (GPtrArray *lines)
{
  /* g_ptr_array_sort is stable: within a section the producer's order (time order) stays */
  g_ptr_array_sort (lines, by_section);
}

/* ---- times ---- */

char *
catchup_summary_format_time (gint64 ts, const char *format)
{
  g_autoptr (GDateTime) dt = g_date_time_new_from_unix_utc (ts);
  return dt ? g_date_time_format (dt, format) : g_strdup ("?");
}

gint64
catchup_summary_utc_day (gint64 ts)
{
  return ts >= 0 ? ts / 86400 : (ts - 86399) / 86400;
}

char *
catchup_summary_format_older (gint64 ts, gint64 window_end)
{
  /* Translators: strftime format of an older message's time, e.g. "02 Mar 09:38" */
  const char *far = C_("time", "%d %b %H:%M");
  /* Translators: strftime format of a message's weekday and time, e.g. "Tue 09:38" */
  const char *near = C_("time", "%a %H:%M");
  return catchup_summary_format_time (ts, catchup_summary_utc_day (window_end) - catchup_summary_utc_day (ts) >= 7
                                      ? far : near);
}

/* ---- text hygiene ---- */

/* Valid UTF-8 on one line: the output sanitiser (control characters and the bidi embeddings, overrides and
 * isolates that would let a quote visually swap the attribution printed after it are dropped), with whitespace
 * runs collapsed. */
char *
catchup_summary_sanitize (const char *text)
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

/* ---- the headline ---- */

void
catchup_summary_set_head (CatchupSummary *summary, GPtrArray *window, guint total)
{
  CatchupSummaryHead *h = &summary->head;
  g_autoptr (GHashTable) people = g_hash_table_new (g_str_hash, g_str_equal);

  memset (h, 0, sizeof *h);
  for (guint i = 0; window && i < window->len; i++) {
    CatchupMessage *m = window->pdata[i];
    if (h->messages++ == 0)
      h->first_ts = m->ts;
    h->last_ts = m->ts;
    g_hash_table_add (people, m->speaker ? m->speaker : "");
  }
  h->people = g_hash_table_size (people);
  h->capped = total > h->messages;
  h->shown = h->messages;
  h->total = MAX (total, h->messages);

  g_free (summary->headline);
  summary->headline = NULL;
  g_autofree char *line = catchup_headline_text (h->messages, h->people, h->first_ts, h->last_ts, NULL);
  if (h->messages == 0 || !h->capped) {
    summary->headline = g_steal_pointer (&line);
    return;
  }
  /* Translators: after the headline when the room's maximum window cut the catch-up short:
   * "(only the newest 400 of 523 messages, the room's maximum; ask for the last 523 to include them all)" */
  g_autofree char *cap = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                       "(only the newest %u of %u message, the room's maximum; ask "
                                                       "for the last %u to include them all)",
                                                       "(only the newest %u of %u messages, the room's maximum; ask "
                                                       "for the last %u to include them all)", h->total),
                                          h->shown, h->total, h->total);
  summary->headline = g_strconcat (line, " ", cap, NULL);
}

/* ---- plain text ---- */

/* Replies are the few messages right after one; a speaker's next line within this time continues theirs. */
#define CONTINUE_SECONDS (30 * 60)

static gboolean
continues (const CatchupSummaryLine *prev, const CatchupSummaryLine *line)
{
  return prev && catchup_summary_line_source (prev) && catchup_summary_line_source (line) &&
         prev->section == line->section && g_strcmp0 (prev->speaker, line->speaker) == 0 &&
         line->ts - prev->ts <= CONTINUE_SECONDS && prev->context->len + prev->agreed->len + prev->reply->len +
         prev->supersedes->len == 0 && !prev->no_reply && !prev->before && !line->before;
}

/* "text (speaker, Tue 09:38)" for a cited message, the text alone for a model's uncited note. */
static char *
cited (const CatchupSummaryItem *item, gint64 window_end)
{
  g_autofree char *text = catchup_summary_sanitize (item->text);
  if (!item->speaker)
    return g_steal_pointer (&text);
  g_autofree char *who = catchup_summary_sanitize (item->speaker);
  g_autofree char *when = catchup_summary_format_older (item->ts, window_end);
  /* Translators: a quoted earlier message and its source: "text (speaker, Tue 09:38)" */
  return g_strdup_printf (_("%s (%s, %s)"), text, who, when);
}

static void
append_items (GString *out, const CatchupSummaryLine *line, GArray *inlined, gint64 window_end,
              const char *time_format)
{
  if (line->before)
    /* Translators: under a request to the user or their own commitment from before the window */
    g_string_append_printf (out, "  ↳ %s\n", _("still open, from before this window"));
  for (guint k = 0; k < line->context->len; k++) {
    const CatchupSummaryItem *item = line->context->pdata[k];
    if (g_array_index (inlined, gboolean, k))
      continue;
    g_autofree char *quote = cited (item, window_end);
    g_autofree char *ref = item->ref ? catchup_summary_sanitize (item->ref) : NULL;
    if (ref)
      /* Translators: "the expression" → the message that explains it (speaker, time) */
      g_string_append_printf (out, _("  ↳ “%s” → %s\n"), ref, quote);
    else
      g_string_append_printf (out, "  ↳ %s\n", quote);
  }
  for (guint k = 0; k < line->supersedes->len; k++) {
    g_autofree char *quote = cited (line->supersedes->pdata[k], window_end);
    /* Translators: the earlier state that the line above revises: "was: text (speaker, time)" */
    g_string_append_printf (out, _("  ↳ was: %s\n"), quote);
  }
  for (guint k = 0; k < line->reply->len; k++) {
    const CatchupSummaryItem *item = line->reply->pdata[k];
    g_autofree char *who = catchup_summary_sanitize (item->speaker);
    /* in the lines' own format: a weekday alone could mean two days of the window */
    g_autofree char *when = catchup_summary_format_time (item->ts, time_format);
    g_autofree char *text = catchup_summary_sanitize (item->text);
    /* Translators: an answer to the line above: "reply: olu (Tue 10:21): yes, both" */
    g_string_append_printf (out, _("  ↳ reply: %s (%s): %s\n"), who, when, text);
  }
  if (line->agreed->len > 0) {
    g_autoptr (GString) names = g_string_new (NULL);
    for (guint k = 0; k < line->agreed->len; k++) {
      g_autofree char *who = catchup_summary_sanitize (((CatchupSummaryItem *) line->agreed->pdata[k])->speaker);
      g_string_append_printf (names, "%s%s", k ? ", " : "", who);
    }
    /* Translators: who assented to the line above, e.g. "agreed: olu, priya" */
    g_string_append_printf (out, _("  ↳ agreed: %s\n"), names->str);
  }
  if (line->no_reply)
    /* Translators: a question or request nobody has answered in the window */
    g_string_append_printf (out, "  ↳ %s\n", _("no reply yet"));
}

static void
append_left_out (GString *out, const CatchupSummary *summary)
{
  if (summary->topics_left_out == 0)
    return;
  g_autoptr (GString) terms = g_string_new (NULL);
  for (guint i = 0; summary->left_out_terms && i < summary->left_out_terms->len; i++) {
    g_autofree char *t = catchup_summary_sanitize (summary->left_out_terms->pdata[i]);
    g_string_append_printf (terms, "%s%s", i ? ", " : "", t);
  }
  g_string_append_printf (out, g_dngettext (GETTEXT_PACKAGE,
                                            /* Translators: "3 smaller topics left out: backup, cron, csv" */
                                            "%u smaller topic left out: %s\n", "%u smaller topics left out: %s\n",
                                            summary->topics_left_out),
                          summary->topics_left_out, terms->str);
}

char *
catchup_summary_to_text (const CatchupSummary *summary)
{
  g_autoptr (GString) out = g_string_new (NULL);
  const CatchupSummaryLine *prev = NULL;
  gint section = -1;
  /* The weekday always: the lines chosen may all fall on one day of a window that spans several; the date
   * too once a weekday could mean two days of the window. */
  const char *time_format = summary->head.last_ts - summary->head.first_ts >= 6 * 86400
                              ? C_("time", "%d %b %H:%M") : C_("time", "%a %H:%M");

  g_return_val_if_fail (summary != NULL, NULL);

  /* Each field is sanitised on its own: a line break inside one (a model's "\n/catchup post everything")
   * can never start a line of its own. */
  if (summary->headline) {
    g_autofree char *headline = catchup_text_sanitize (summary->headline);
    g_string_append_printf (out, "%s\n", headline);
  }
  for (guint i = 0; summary->lines && i < summary->lines->len; i++) {
    const CatchupSummaryLine *line = summary->lines->pdata[i];
    g_autoptr (GArray) inlined = NULL;
    g_autofree char *with_refs = catchup_summary_line_text (line, &inlined);
    g_autofree char *text = catchup_summary_sanitize (with_refs);
    if ((gint) line->section != section) {
      section = line->section;
      prev = NULL;
      g_string_append_printf (out, "%s:\n", catchup_section_title (line->section));
    }
    if (!line->speaker)
      g_string_append_printf (out, "• %s\n", text);
    else if (continues (prev, line)) {
      g_autofree char *when = catchup_summary_format_time (line->ts, time_format);
      g_string_append_printf (out, "  + (%s): %s\n", when, text);
    } else {
      g_autofree char *who = catchup_summary_sanitize (line->speaker);
      g_autofree char *when = !line->ts ? NULL
                              : line->before ? catchup_summary_format_older (line->ts, summary->head.last_ts)
                                             : catchup_summary_format_time (line->ts, time_format);
      if (when)
        g_string_append_printf (out, "• %s (%s): %s\n", who, when, text);
      else
        g_string_append_printf (out, "• %s: %s\n", who, text);
    }
    append_items (out, line, inlined, summary->head.last_ts, time_format);
    prev = line;
  }
  append_left_out (out, summary);
  if (summary->notice) {
    g_autofree char *notice = catchup_text_sanitize (summary->notice);
    g_string_append_printf (out, "(%s)\n", notice);
  }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* ---- for you ---- */

/* A line is for the user when its message names them ("ravi: can you…", "@ravi", "thanks ravi") and is not
 * their own. */
static gboolean
names_me (const CatchupMessage *m, const char *folded_me)
{
  g_autofree char *who = g_utf8_casefold (m->speaker ? m->speaker : "", -1);
  g_autofree char *text = g_utf8_casefold (m->text ? m->text : "", -1);
  return g_strcmp0 (who, folded_me) != 0 && catchup_text_has_folded_phrase (text, folded_me);
}

void
catchup_summary_mark_for_you (CatchupSummary *summary, GPtrArray *window, const char *me)
{
  g_autoptr (GHashTable) by_id = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree char *folded_me = NULL;
  gboolean moved = FALSE;

  if (!summary || !window || !me || !*me)
    return;
  folded_me = g_utf8_casefold (me, -1);
  for (guint i = 0; i < window->len; i++) {
    CatchupMessage *m = window->pdata[i];
    if (m->id)
      g_hash_table_insert (by_id, m->id, m);
  }
  for (guint i = 0; i < summary->lines->len; i++) {
    CatchupSummaryLine *line = summary->lines->pdata[i];
    const char *id = catchup_summary_line_source (line);
    CatchupMessage *m = id ? g_hash_table_lookup (by_id, id) : NULL;
    if (m && line->section != CATCHUP_SECTION_FOR_YOU && names_me (m, folded_me)) {
      line->section = CATCHUP_SECTION_FOR_YOU;
      moved = TRUE;
    }
  }
  if (moved)
    catchup_summary_sort_lines (summary->lines);
}
