#include "config.h"

#include "catchup-plugin-private.h"

/* A catch-up's structure in words, for the conversation and for posting to the room: every time in the user's
 * zone, formatted here from the timestamps core hands over, with the weekday once the catch-up spans days and the
 * date once it spans a week (a weekday alone could then mean two days). Every field is sanitised on its own. */

typedef struct {
  GPtrArray *rows;      /* CatchupRow */
  GTimeZone *tz;         /* the user's */
  CatchupTimeStyle style; /* of the window's lines */
  gint64 last_ts;       /* the window's end: a cited turn from another day gets its day */
} Render;

static void
add_row (Render *r, CatchupRowKind kind, const char *speaker, char *when, char *text)
{
  CatchupRow *row = g_new0 (CatchupRow, 1);

  row->kind = kind;
  row->speaker = speaker ? catchup_text_sanitize (speaker) : NULL;
  row->when = when;
  row->text = catchup_text_sanitize (text);
  g_free (text);
  g_ptr_array_add (r->rows, row);
}

static void
row_free (CatchupRow *row)
{
  g_free (row->speaker);
  g_free (row->when);
  g_free (row->text);
  g_free (row);
}

/* A cited turn's time: as the window's lines show theirs, with its day when it is from another day. */
static char *
item_time (const Render *r, gint64 ts)
{
  CatchupTimeStyle own = catchup_headline_time_style (ts, r->last_ts, r->tz);

  return catchup_headline_format_time (ts, MAX (r->style, own), r->tz);
}

/* "text (speaker, Tue 09:38)" for a cited turn, the text alone for a model's uncited note. */
static char *
cited (const Render *r, const CatchupSummaryItem *item)
{
  g_autofree char *when = NULL;

  if (item->speaker == NULL)
    return g_strdup (item->text ? item->text : "");
  when = item_time (r, item->ts);
  /* Translators: a quoted earlier message and its source: "text (speaker, Tue 09:38)" */
  return g_strdup_printf (_("%s (%s, %s)"), item->text ? item->text : "", item->speaker, when);
}

static void
add_items (Render *r, const CatchupSummaryLine *line, GArray *inlined)
{
  if (line->before != NULL)
    /* Translators: under a request to the user or their own commitment from before the window */
    add_row (r, CATCHUP_ROW_ITEM, NULL, NULL, g_strdup (_("still open, from before this window")));
  for (guint i = 0; line->context != NULL && i < line->context->len; i++)
    {
      const CatchupSummaryItem *item = line->context->pdata[i];
      g_autofree char *quote = NULL;

      if (g_array_index (inlined, gboolean, i))
        continue;
      quote = cited (r, item);
      /* Translators: what an expression of the line above refers to: "“that fallback” → text (speaker, time)" */
      add_row (r, CATCHUP_ROW_ITEM, NULL, NULL,
               item->ref ? g_strdup_printf (_("“%s” → %s"), item->ref, quote) : g_steal_pointer (&quote));
    }
  for (guint i = 0; line->supersedes != NULL && i < line->supersedes->len; i++)
    {
      g_autofree char *quote = cited (r, line->supersedes->pdata[i]);

      /* Translators: the earlier state that the line above revises */
      add_row (r, CATCHUP_ROW_ITEM, NULL, NULL, g_strdup_printf (_("was: %s"), quote));
    }
  for (guint i = 0; line->reply != NULL && i < line->reply->len; i++)
    {
      const CatchupSummaryItem *item = line->reply->pdata[i];
      g_autofree char *when = item_time (r, item->ts);

      /* Translators: an answer to the line above: "reply: olu (09:40): yes, both" */
      add_row (r, CATCHUP_ROW_ITEM, NULL, NULL,
               g_strdup_printf (_("reply: %s (%s): %s"), item->speaker ? item->speaker : "?", when,
                                item->text ? item->text : ""));
    }
  if (line->agreed != NULL && line->agreed->len > 0)
    {
      g_autoptr (GString) names = g_string_new (NULL);

      for (guint i = 0; i < line->agreed->len; i++)
        {
          const CatchupSummaryItem *item = line->agreed->pdata[i];

          g_string_append_printf (names, "%s%s", i ? ", " : "", item->speaker ? item->speaker : "?");
        }
      /* Translators: who assented to the line above: "agreed: olu, priya" */
      add_row (r, CATCHUP_ROW_ITEM, NULL, NULL, g_strdup_printf (_("agreed: %s"), names->str));
    }
  if (line->no_reply)
    /* Translators: a question or request nobody has answered in the window */
    add_row (r, CATCHUP_ROW_ITEM, NULL, NULL, g_strdup (_("no reply yet")));
}

static void
add_left_out (Render *r, const CatchupSummary *summary)
{
  g_autoptr (GString) terms = g_string_new (NULL);

  if (summary->topics_left_out == 0)
    return;
  for (guint i = 0; summary->left_out_terms != NULL && i < summary->left_out_terms->len; i++)
    g_string_append_printf (terms, "%s%s", i ? ", " : "", (const char *) summary->left_out_terms->pdata[i]);
  /* Translators: "3 smaller topics left out: backup, cron, csv" */
  add_row (r, CATCHUP_ROW_NOTE, NULL, NULL,
           g_strdup_printf (ngettext ("%u smaller topic left out: %s", "%u smaller topics left out: %s",
                                      summary->topics_left_out),
                            summary->topics_left_out, terms->str));
}

GPtrArray *
catchup_render_rows (const CatchupSummary *summary, gboolean for_room)
{
  const CatchupSummaryHead *head = &summary->head;
  g_autoptr (GTimeZone) tz = g_time_zone_new_local ();
  Render r = { g_ptr_array_new_with_free_func ((GDestroyNotify) row_free), tz,
               catchup_headline_time_style (head->first_ts, head->last_ts, tz), head->last_ts };
  gint section = -1;

  add_row (&r, CATCHUP_ROW_HEADLINE, NULL, NULL,
           catchup_headline_text (head->messages, head->people, head->first_ts, head->last_ts, tz));
  for (guint i = 0; summary->lines != NULL && i < summary->lines->len; i++)
    {
      const CatchupSummaryLine *line = summary->lines->pdata[i];
      g_autoptr (GArray) inlined = NULL;
      /* a short reference reads as part of the line; a longer one keeps a row of its own */
      char *text = catchup_summary_line_text (line, &inlined);

      if ((gint) line->section != section)
        {
          section = line->section;
          add_row (&r, CATCHUP_ROW_SECTION, NULL, NULL, g_strdup (catchup_section_title (line->section)));
        }
      add_row (&r, CATCHUP_ROW_LINE, line->speaker,
               !line->speaker || !line->ts ? NULL
               : line->before != NULL ? item_time (&r, line->ts) : catchup_headline_format_time (line->ts, r.style, tz),
               text);
      add_items (&r, line, inlined);
    }
  /* what is only for the user: topics left out, why the model was not used */
  if (!for_room)
    {
      add_left_out (&r, summary);
      if (summary->notice != NULL)
        add_row (&r, CATCHUP_ROW_NOTE, NULL, NULL, g_strdup (summary->notice));
    }
  return r.rows;
}

char *
catchup_render_time (gint64 ts)
{
  g_autoptr (GTimeZone) tz = g_time_zone_new_local ();
  CatchupTimeStyle style = catchup_headline_time_style (ts, g_get_real_time () / G_USEC_PER_SEC, tz);

  return catchup_headline_format_time (ts, style, tz);
}

char *
catchup_render_count (gint64 n)
{
  return g_strdup_printf ("%" G_GINT64_FORMAT, n);
}

gulong
catchup_render_plural (gint64 n)
{
  return (gulong) CLAMP (n, 0, G_MAXLONG);
}
