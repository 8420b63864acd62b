#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * A catch-up's headline, "45 messages from 6 people, Tue 14:43 – Wed 10:23", and the way it writes times,
 * which every line of a catch-up shares: the clock within one day, the weekday within six days, the date beyond
 * (a weekday alone could then mean two days). The command-line tool writes them in UTC, the plugin in the
 * user's zone.
 */

typedef enum {
  CATCHUP_TIME_CLOCK,
  CATCHUP_TIME_WEEKDAY,
  CATCHUP_TIME_DATE,
} CatchupTimeStyle;

/* What a time needs to be told apart in a span from first to last, in zone tz (NULL: UTC). */
CatchupTimeStyle catchup_headline_time_style (gint64 first, gint64 last, GTimeZone *tz);
/* ts in zone tz (NULL: UTC) as style says; "?" for a time GLib cannot represent. */
char *catchup_headline_format_time (gint64 ts, CatchupTimeStyle style, GTimeZone *tz);

/* "45 messages from 6 people, Tue 14:43 – Wed 10:23" for messages turns of people speakers from first_ts to
 * last_ts in zone tz; NULL tz writes UTC times and says so. "No messages to catch up on." for none. */
char *catchup_headline_text (guint messages, guint people, gint64 first_ts, gint64 last_ts, GTimeZone *tz);

G_END_DECLS
