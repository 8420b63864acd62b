#pragma once

#include "catchup-memory.h"
#include "catchup-records.h"

G_BEGIN_DECLS

typedef enum {
  CATCHUP_LENGTH_SHORT,
  CATCHUP_LENGTH_NORMAL,
  CATCHUP_LENGTH_DETAILED,
} CatchupLength;

/* The sections of a catch-up, in the order they are shown; each is shown only when it has a line. */
typedef enum {
  CATCHUP_SECTION_FOR_YOU,    /* lines that name the user or ask them something */
  CATCHUP_SECTION_DECISIONS,
  CATCHUP_SECTION_ASKED,      /* questions and requests, with their answers or "no reply yet" */
  CATCHUP_SECTION_PLANS,      /* plans and actions */
  CATCHUP_SECTION_NEWS,       /* news and status */
} CatchupSection;

#define CATCHUP_N_SECTIONS (CATCHUP_SECTION_NEWS + 1)

/* "for-you", "decisions", "asked", "plans", "news": stable names for JSON. */
const char *catchup_section_to_string (CatchupSection section);
gboolean catchup_section_from_string (const char *name, CatchupSection *out);
/* The section's heading, translated: "For you", "Decisions", "Asked", "Plans and actions", "News and status". */
const char *catchup_section_title (CatchupSection section);

/*
 * A message a summary line points to. The same shape serves four jobs (see CatchupSummaryLine): what an
 * expression of the line refers to, an answer, an assent, and a state the line replaces. Speaker, time and text
 * are the cited message's own (text is the excerpt shown: the words that carry the point), never invented.
 */
typedef struct {
  char *ref;      /* context only: the expression of the line it explains ("that fallback"); else NULL */
  char *id;       /* the cited message's id, in the window or the memory; NULL only for a model's uncited note */
  char *speaker;  /* NULL only for a model's uncited note */
  gint64 ts;      /* 0 when id is NULL */
  char *text;
} CatchupSummaryItem;

CatchupSummaryItem *catchup_summary_item_new (const char *ref, const char *id, const char *speaker, gint64 ts,
                                              const char *text);
void catchup_summary_item_free (CatchupSummaryItem *item);

/* One line of a summary: what one speaker said or did, with what it needs to be read on its own. */
typedef struct {
  CatchupSection section;
  GPtrArray *sources;     /* char*: ids of the window messages the line covers, the main one first; may be empty
                           * for a model line that cites none */
  char *speaker;          /* of the main source */
  gint64 ts;              /* of the main source; 0 when there is none */
  char *text;             /* plain text (a trimmed quote, or the model's sentence) */
  GPtrArray *context;     /* CatchupSummaryItem with ref: checked references, each citing the turn that explains
                           * the expression (window, lead-in or retrieved memory) */
  GPtrArray *agreed;      /* CatchupSummaryItem: explicit assents to this line by others, replying to it */
  GPtrArray *reply;       /* CatchupSummaryItem: answers to this question or request, in the window */
  GPtrArray *supersedes;  /* CatchupSummaryItem: earlier states (window or memory) that this line revises */
  gboolean no_reply;      /* a question or request nobody answered in the window */
  CatchupSummaryItem *before; /* a line about a message from before the window that is still open (a request
                               * to the user, their own commitment): that message, which speaker, ts and text
                               * quote; sources is then empty. NULL for a line about the window. */
  CatchupSummaryItem *asked;  /* the question this line's message answers, read as part of the line ("… (maria
                               * asked: “How often do you train?”)") when it says no more than what it asks;
                               * NULL otherwise */
} CatchupSummaryLine;

CatchupSummaryLine *catchup_summary_line_new (CatchupSection section, const char *source_id, const char *speaker,
                                              gint64 ts, const char *text);
void catchup_summary_line_free (CatchupSummaryLine *line);
/* The main source id, or NULL. */
const char *catchup_summary_line_source (const CatchupSummaryLine *line);
/* The line's text with each short reference put in after the expression it explains, where it reads as part of
 * the line: "the art show (caroline: “Next month I'm having an LGBTQ art show”)". inlined (may be NULL) gets one
 * gboolean per context item: TRUE when the text carries it and it needs no line of its own. */
char *catchup_summary_line_text (const CatchupSummaryLine *line, GArray **inlined);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupSummaryLine, catchup_summary_line_free)

/* The headline as data: what the window holds. */
typedef struct {
  guint messages;          /* turns in the window */
  guint people;            /* distinct speakers among them */
  gint64 first_ts, last_ts;
  gboolean capped;         /* the window was cut to the room's maximum: only the newest shown of total */
  guint shown, total;
} CatchupSummaryHead;

typedef struct {
  CatchupSummaryHead head;
  char *headline;          /* head as text: "45 messages from 6 people, Tue 14:43 – Wed 10:23 UTC" (+ the cap) */
  GPtrArray *lines;        /* CatchupSummaryLine, by section, then in time order */
  guint topics_left_out;   /* smaller topics that did not fit the length */
  GPtrArray *left_out_terms; /* char*: a few keywords of them */
  char *notice;            /* why the model was not used, etc.; may be NULL */
} CatchupSummary;

void catchup_summary_free (CatchupSummary *summary);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupSummary, catchup_summary_free)

/* An empty summary of window (GPtrArray of CatchupMessage), its head and headline filled in. */
CatchupSummary *catchup_summary_new (GPtrArray *window);
/* Fills head and headline from window; total is how many messages were asked for before the room's maximum cut
 * the window to its newest (0, or not more than the window: not capped). */
void catchup_summary_set_head (CatchupSummary *summary, GPtrArray *window, guint total);

typedef struct {
  CatchupLength length;
  const char *me;          /* the user's nick in the room (NULL: no "For you" section) */
  GPtrArray *records;      /* CatchupRecord (borrowed): what catchup_summary_records_load read; NULL: none */
} CatchupSummaryOptions;

void catchup_summary_options_init (CatchupSummaryOptions *opts);

/* The embedded extractive summary of window, with references resolved from mem. opts NULL: the defaults. */
CatchupSummary *catchup_summary_extractive (GPtrArray *window, CatchupMemory *mem,
                                            const CatchupSummaryOptions *opts);
/* Moves lines whose main source names me or asks me something into "For you" (any producer's lines). */
void catchup_summary_mark_for_you (CatchupSummary *summary, GPtrArray *window, const char *me);

/* The derived track's records a summary of window reads (GPtrArray of CatchupRecord): those drawn from the
 * window's messages, the earlier records they directly supersede, and, when me is given, me's open
 * commitments and the open requests to me. */
GPtrArray *catchup_summary_records_load (CatchupStore *store, gint64 room, GPtrArray *window, const char *me,
                                         GError **error);
/* What the records add to any producer's summary: "For you" gets the open requests to me and my own open
 * commitments (those from before the window as lines of their own, marked), and a decision line shows the
 * earlier decision its record replaced; a line whose decision a later shown line replaced moves under it. */
void catchup_summary_apply_records (CatchupSummary *summary, GPtrArray *window, GPtrArray *records,
                                    const char *me);
/* Plain text: the headline, then each non-empty section under its heading, one "•" line per entry and one "↳"
 * line per context item, answer, assent or replaced state; the left-out topics; the notice. */
char *catchup_summary_to_text (const CatchupSummary *summary);

G_END_DECLS
