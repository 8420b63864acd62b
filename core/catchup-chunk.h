#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define CATCHUP_CHUNK_TOKENS 128
#define CATCHUP_CHUNK_OVERLAP 32

/* A chunk as a run of turns [first, first + n) of an array of turns. */
typedef struct {
  guint first;
  guint n;
  guint tokens;
} CatchupChunkSpan;

/*
 * Cuts turns (token counts given) into chunks of about target tokens on turn boundaries; each chunk after
 * the first starts with the turns that make up about overlap tokens at the end of its predecessor. A turn
 * longer than target is a chunk of its own. Deterministic: cutting a suffix that starts at a chunk's first
 * turn yields the same chunks from there on. Returns a GArray of CatchupChunkSpan.
 */
GArray *catchup_chunk_spans (const guint *turn_tokens, guint n_turns, guint target, guint overlap);

G_END_DECLS
