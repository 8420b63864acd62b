#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Flags kept with a stored message. */
typedef enum {
  CATCHUP_MESSAGE_NONE    = 0,
  CATCHUP_MESSAGE_OWN     = 1 << 0, /* written by the local user */
  CATCHUP_MESSAGE_DELAYED = 1 << 1, /* history playback */
  CATCHUP_MESSAGE_ACTION  = 1 << 2, /* "/me" */
  /* 1 << 3 marked join, part and rename rows, which no source ever stored as messages */
} CatchupMessageFlags;

/* One chat turn as the core sees it: plain text, never markup. */
typedef struct {
  gint64 row;       /* the store's row id; 0 before it is stored */
  char *id;         /* stable id within the room (the source's, or derived from ts+speaker+text) */
  gint64 ts;        /* seconds since the epoch, UTC */
  char *speaker;
  char *alias;      /* display name when it differs from speaker; may be NULL */
  char *text;
  guint flags;      /* CatchupMessageFlags */
} CatchupMessage;

CatchupMessage *catchup_message_new (const char *id, gint64 ts, const char *speaker, const char *text);
CatchupMessage *catchup_message_copy (const CatchupMessage *msg);
void catchup_message_free (CatchupMessage *msg);

/* A message's derived id when the source gives none: same room+ts+speaker+text => same id. */
char *catchup_message_derive_id (gint64 ts, const char *speaker, const char *text);

/* The last second that has a date (9999-12-31T23:59:59Z): importers refuse later times. */
#define CATCHUP_TIME_MAX G_GINT64_CONSTANT (253402300799)

/* "2026-03-02T09:02:11Z" <-> seconds; FALSE on a malformed time. Accepts offsets and fractions. A time without
 * a date (before year 1 or after 9999) is formatted as "@SECONDS", never NULL. */
gboolean catchup_time_parse_iso (const char *text, gint64 *out);
char *catchup_time_format_iso (gint64 ts);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupMessage, catchup_message_free)

G_END_DECLS
