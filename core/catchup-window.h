#pragma once

#include <gio/gio.h>

#include "catchup-store.h"

G_BEGIN_DECLS

/*
 * Which part of a room a catch-up covers, decided once for every caller: the command-line tool, the /catchup
 * command and the automatic catch-up on rejoin all parse, cap and resolve their windows here.
 */

typedef enum {
  CATCHUP_WINDOW_LAST,     /* the last n messages */
  CATCHUP_WINDOW_SINCE,    /* messages with ts >= since */
  CATCHUP_WINDOW_BETWEEN,  /* from first_id to last_id, inclusive */
  CATCHUP_WINDOW_UNREAD,   /* since the user was last present (since, when not 0, is a start the caller knows
                            * better than the store, e.g. the join's); without one the room's newest messages */
} CatchupWindowKind;

typedef struct {
  CatchupWindowKind kind;
  guint last_n;
  gint64 since;
  char *first_id, *last_id;
  guint max_messages;       /* cap (0: none); the newest are kept */
} CatchupWindow;

/* The largest count a window asks for: more than any room's maximum, small enough to load. */
#define CATCHUP_WINDOW_MAX_LAST 100000

/* An age, "45m", "2h", "1d" or "1w" (1 or more of the unit; seconds are no span to catch up on), into the time
 * it reaches back to from now; an age beyond the epoch means everything (0). FALSE for anything else. */
gboolean catchup_window_parse_age (const char *text, gint64 now, gint64 *since);

/* A window as the user says it: NULL for since last read, a count ("500", at most CATCHUP_WINDOW_MAX_LAST), or
 * an age (catchup_window_parse_age). FALSE (window untouched) for anything else. */
gboolean catchup_window_parse (const char *arg, gint64 now, CatchupWindow *window);

/* The room's maximum (0: none): a count asked for is its own cap, every other window keeps only its newest
 * room_max messages. A cap already set stays. */
void catchup_window_cap (CatchupWindow *window, guint room_max);

/* What resolving a window found besides its messages. */
typedef struct {
  guint total;          /* turns of the window before the cap (for an unread window without a known presence:
                         * every turn of the room) */
  guint others;         /* of these, turns that are not the user's own */
  gint64 start_ts;      /* the first of these turns; 0 when there is none */
  gint64 since;         /* where an unread window started; 0 when no presence was known (or another kind) */
  gboolean room_empty;  /* nothing of the room is stored */
} CatchupWindowInfo;

/* The window's turns in order, only the newest max_messages of them; an empty window gives an empty array.
 * CATCHUP_ERROR_NOT_FOUND for an id that is not in the room, CATCHUP_ERROR_INVALID for a between-window without
 * both ids or with its ends reversed. info may be NULL. */
GPtrArray *catchup_window_resolve (CatchupStore *store, gint64 room, const CatchupWindow *window,
                                   CatchupWindowInfo *info, GError **error);

/* Turns an unread window into the window it resolved to (info from catchup_window_resolve), so that a run later,
 * on another connection, covers the same turns even when the user was marked present meanwhile. */
void catchup_window_settle (CatchupWindow *window, const CatchupWindowInfo *info);

G_END_DECLS
