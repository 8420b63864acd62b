#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Chat logs as libpurple's loggers write them (log.c of libpurple 2.x), parsed into lines: pure text in, lines
 * out, no libpurple. Two formats:
 *  - CATCHUP_CHATLOG_HTML: the HTML logger's file, '<span style="color: #A82F2F"><span style="font-size:
 *    smaller">(07:31:46)</span> <b>Caroline:</b></span> text<br>' (2.14), also the older '<font>' form;
 *  - CATCHUP_CHATLOG_TEXT: the plain-text logger's file as it is on disk, "(07:31:46) Caroline: text".
 * A line's time is "(%X)" or, for lines that were older than 20 minutes when written (history playback),
 * "(%x %X)" in the writer's locale; the date of an undated line comes from the log's start (its file name)
 * and the lines before it (midnight rollovers). System lines (topics, joins, parts, nick changes, errors)
 * never come out as messages; joins, parts and nick changes come out as events.
 */

typedef enum {
  CATCHUP_CHATLOG_HTML,
  CATCHUP_CHATLOG_TEXT,
} CatchupChatlogFormat;

typedef enum {
  CATCHUP_CHATLOG_MESSAGE, /* nick said text (flags: CatchupMessageFlags) */
  CATCHUP_CHATLOG_JOIN,    /* nick entered the room */
  CATCHUP_CHATLOG_PART,    /* nick left; text is the reason or NULL */
  CATCHUP_CHATLOG_NICK,    /* nick is now known as text */
  CATCHUP_CHATLOG_SYSTEM,  /* anything else the client wrote (topic, errors, notices); text is the line */
} CatchupChatlogKind;

typedef struct {
  CatchupChatlogKind kind;
  gint64 ts;        /* seconds since the epoch, UTC */
  char *nick;       /* NULL for SYSTEM */
  char *text;       /* plain text, never markup */
  guint flags;
} CatchupChatlogLine;

void catchup_chatlog_line_free (CatchupChatlogLine *line);

/* What the log's file name and the client know; every field may be left zero. */
typedef struct {
  gint64 start;             /* the log's start, from its file name (seconds, UTC) */
  GTimeZone *zone;          /* the zone its times were written in; NULL: utc_offset */
  int utc_offset;           /* seconds east of UTC, as the file name gives it */
  const char *room;         /* the room's name: lines "said" by the room are the client's own notices */
  const char *own_nick;     /* the user's nick, stored for their own lines */
  const char *const *own_names; /* other names the logger may have written for the user (account alias) */
  GHashTable *nicks;        /* name the logger wrote for someone (a buddy-list alias) -> their nick; may be NULL */
  /* The client's translation of one of libpurple's English notice formats (catchup_chatlog_notice_formats),
   * so that logs written in the user's language are read too; NULL: English only. */
  const char *(*translate) (const char *format, gpointer data);
  gpointer translate_data;
} CatchupChatlogContext;

/* libpurple's English notice formats the parser knows (printf "%s" forms), NULL-terminated. */
const char *const *catchup_chatlog_notice_formats (void);

/* The lines of one log, in file order; text is the file's content (need not be valid UTF-8), ctx may be NULL.
 * Never fails: what cannot be read is skipped. */
GPtrArray *catchup_chatlog_parse (const char *text, CatchupChatlogFormat format, const CatchupChatlogContext *ctx);

/* Markup to plain text as libpurple's purple_markup_strip_html does it for chat messages: tags dropped, <br> as
 * a line break, entities decoded, a link whose address differs from its text followed by "(address)". */
char *catchup_chatlog_strip_markup (const char *html);

G_END_DECLS
