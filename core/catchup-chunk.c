#include "config.h"

#include "catchup-chunk.h"

/* The first turn of the chunk that follows a chunk ending before `end`: back off over the last turns while
 * they fit in the overlap and leave room for the turn at `end` (else the next chunk would hold nothing its
 * predecessor lacks), but always move forward past `start`. */
static guint
next_start (const guint *tokens, guint start, guint end, guint target, guint overlap)
{
  guint k = end, ov = 0;

  while (k - 1 > start && ov + tokens[k - 1] <= overlap && ov + tokens[k - 1] + tokens[end] <= target)
    ov += tokens[--k];
  return k;
}

GArray *
catchup_chunk_spans (const guint *tokens, guint n_turns, guint target, guint overlap)
{
  GArray *spans = g_array_new (FALSE, FALSE, sizeof (CatchupChunkSpan));
  guint i = 0;

  while (i < n_turns)
    {
      CatchupChunkSpan span = { i, 0, 0 };
      guint j = i;

      while (j < n_turns && (span.tokens == 0 || span.tokens + tokens[j] <= target))
        span.tokens += tokens[j++];
      span.n = j - i;
      g_array_append_val (spans, span);
      if (j >= n_turns)
        break;
      i = next_start (tokens, i, j, target, overlap);
    }
  return spans;
}
