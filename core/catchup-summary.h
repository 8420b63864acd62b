#pragma once

#include "catchup-memory.h"

G_BEGIN_DECLS

typedef enum {
  CATCHUP_LENGTH_SHORT,
  CATCHUP_LENGTH_NORMAL,
  CATCHUP_LENGTH_DETAILED,
} CatchupLength;

/* One line of a summary: what one speaker said or did, with resolved references. */
typedef struct {
  char *speaker;
  gint64 ts;
  char *text;          /* plain text, may quote chat */
  char *source_id;     /* window message the line is about; NULL for a header line */
  GPtrArray *context;  /* char*: resolved references, e.g. "\"that fallback\" = the HTTP poller (mira, Mon 10:02)" */
} CatchupSummaryLine;

typedef struct {
  char *headline;      /* "312 messages from 6 people, Mon 09:14 - Tue 11:02" */
  GPtrArray *lines;    /* CatchupSummaryLine */
  char *notice;        /* why the model was not used, etc.; may be NULL */
} CatchupSummary;

void catchup_summary_line_free (CatchupSummaryLine *line);
void catchup_summary_free (CatchupSummary *summary);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupSummary, catchup_summary_free)

/* The embedded extractive summary of window, with references resolved from mem. */
CatchupSummary *catchup_summary_extractive (GPtrArray *window, CatchupMemory *mem, CatchupLength length);
/* Plain text, one line per entry. */
char *catchup_summary_to_text (const CatchupSummary *summary);

G_END_DECLS
