#include "config.h"

#include <glib/gi18n-lib.h>

#include "catchup-headline.h"

static GDateTime *
moment (gint64 ts, GTimeZone *tz)
{
  g_autoptr (GDateTime) utc = g_date_time_new_from_unix_utc (ts);

  if (utc == NULL)
    return NULL;
  return tz ? g_date_time_to_timezone (utc, tz) : g_date_time_ref (utc);
}

CatchupTimeStyle
catchup_headline_time_style (gint64 first, gint64 last, GTimeZone *tz)
{
  g_autoptr (GDateTime) x = moment (first, tz);
  g_autoptr (GDateTime) y = moment (last, tz);

  if (x && y && g_date_time_get_year (x) == g_date_time_get_year (y)
      && g_date_time_get_day_of_year (x) == g_date_time_get_day_of_year (y))
    return CATCHUP_TIME_CLOCK;
  return ABS (last - first) < 6 * 86400 ? CATCHUP_TIME_WEEKDAY : CATCHUP_TIME_DATE;
}

char *
catchup_headline_format_time (gint64 ts, CatchupTimeStyle style, GTimeZone *tz)
{
  g_autoptr (GDateTime) dt = moment (ts, tz);
  /* Translators: times of a catch-up, strftime formats: the clock, weekday and clock, weekday date and clock */
  const char *format = style == CATCHUP_TIME_CLOCK ? C_("time", "%H:%M")
                       : style == CATCHUP_TIME_WEEKDAY ? C_("time", "%a %H:%M") : C_("time", "%a %d %b %H:%M");

  return dt ? g_date_time_format (dt, format) : g_strdup ("?");
}

char *
catchup_headline_text (guint messages, guint people, gint64 first_ts, gint64 last_ts, GTimeZone *tz)
{
  CatchupTimeStyle style = catchup_headline_time_style (first_ts, last_ts, tz);
  /* the first time names its day even within one day: "Tue 09:02 – 09:55" */
  g_autofree char *from = catchup_headline_format_time (first_ts, MAX (style, CATCHUP_TIME_WEEKDAY), tz);
  g_autofree char *to = catchup_headline_format_time (last_ts, style, tz);
  g_autofree char *msgs = NULL, *ppl = NULL;

  if (messages == 0)
    return g_strdup (_("No messages to catch up on."));
  msgs = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u message", "%u messages", messages), messages);
  ppl = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u person", "%u people", people), people);
  if (tz == NULL)
    /* Translators: "45 messages from 6 people, Tue 14:43 – Wed 10:23 UTC" */
    return g_strdup_printf (_("%s from %s, %s – %s UTC"), msgs, ppl, from, to);
  /* Translators: "45 messages from 6 people, Tue 14:43 – Wed 10:23", in the user's time zone */
  return g_strdup_printf (_("%s from %s, %s – %s"), msgs, ppl, from, to);
}
