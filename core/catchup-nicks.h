#pragma once

#include "catchup-store.h"

G_BEGIN_DECLS

/*
 * People behind nicks: the room's nick history (renames the plugin saw and the chat logs told) links every nick a
 * person went by, so that "alice" who wrote as "alice_away" for an hour is one person to the per-person catch-up
 * and to questions about people. A nick taken by someone else after its owner left links the two as well: the
 * history holds no more than who was renamed to what.
 */

typedef struct _CatchupNicks CatchupNicks;

/* The room's renames; a room without any gives a map where every nick is only itself. */
CatchupNicks *catchup_nicks_load (CatchupStore *store, gint64 room, GError **error);
void catchup_nicks_free (CatchupNicks *nicks);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupNicks, catchup_nicks_free)

/* Whether a and b are one person: the same nick, or linked by renames (nicks may be NULL: the same nick only). */
gboolean catchup_nicks_same (const CatchupNicks *nicks, const char *a, const char *b);

/* Every nick of nick's person, nick first, then the others in the order of their renames. */
char **catchup_nicks_aliases (const CatchupNicks *nicks, const char *nick);

G_END_DECLS
