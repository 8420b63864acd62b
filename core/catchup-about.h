#pragma once

#include "catchup-records.h"
#include "catchup-store.h"

G_BEGIN_DECLS

/*
 * A per-person catch-up: what one person said, decided and committed to in a window, what they were asked in
 * it, and their commitments still open in the room's records (from the whole history, not only the window),
 * under every nick the room's nick history links to them (catchup-nicks.h).
 */
typedef struct {
  char *person;          /* as the roster spells it */
  GPtrArray *said;       /* CatchupMessage: the person's turns in the window, in order */
  GPtrArray *asked;      /* CatchupMessage: other people's turns in the window that address or name the person */
  GPtrArray *decided;    /* CatchupRecord: decisions the person stated in the window */
  GPtrArray *committed;  /* CatchupRecord: commitments the person made in the window */
  GPtrArray *open;       /* CatchupRecord: the person's open commitments, offered or asked of them, oldest first */
} CatchupAbout;

void catchup_about_free (CatchupAbout *about);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupAbout, catchup_about_free)

/* Finds person in the room's roster (case-insensitively; a leading '@' is ignored). NULL with
 * CATCHUP_ERROR_NOT_FOUND when nobody of that name spoke in the room. */
char *catchup_about_resolve (CatchupStore *store, gint64 room, const char *person, GError **error);

/* window: the messages of the catch-up window (CatchupMessage, stored in room), may be empty. */
CatchupAbout *catchup_about_build (CatchupStore *store, gint64 room, GPtrArray *window, const char *person,
                                   GError **error);

G_END_DECLS
