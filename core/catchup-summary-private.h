#pragma once

/* Helpers the summary's modules share (structure and rendering, the extractive builder). */

#include "catchup-summary.h"

G_BEGIN_DECLS

/* Valid UTF-8 on one line: whitespace runs collapsed, control and bidi-override characters dropped. */
char *catchup_summary_sanitize (const char *text);

/* ts in UTC by a strftime format. */
char *catchup_summary_format_time (gint64 ts, const char *format);
/* Days since the epoch, UTC. */
gint64 catchup_summary_utc_day (gint64 ts);
/* An older message's time: its weekday, unless it is a week or more before window_end; then its date. */
char *catchup_summary_format_older (gint64 ts, gint64 window_end);

/* Sorts lines by section, keeping their order within each. */
void catchup_summary_sort_lines (GPtrArray *lines);

/* The section the built-in summary gives a message (its speaker and text). */
CatchupSection catchup_summary_classify (const char *speaker, const char *text);

G_END_DECLS
