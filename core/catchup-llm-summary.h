#pragma once

#include "catchup-llm.h"
#include "catchup-summary.h"

G_BEGIN_DECLS

/*
 * The summary by a chat model: the prompt template summary.txt with the memory and the window quoted as
 * untrusted data (each turn with id, speaker and time), the reply parsed into CatchupSummary lines, and a
 * post-check against invention. A window longer than the model's context is summarised in consecutive
 * segments (one call each) whose lines are merged in order; nothing is silently left out.
 */

/* window: GPtrArray of CatchupMessage; mem may be NULL; language NULL means the chat's dominant language. */
CatchupSummary *catchup_llm_summarize (CatchupLlm *llm, GPtrArray *window, CatchupMemory *mem,
                                       CatchupLength length, const char *language, GCancellable *cancellable,
                                       GError **error);

/* The parsing half, on a reply text ({"lines": [...]}, a bare array of lines, fences and prose tolerated).
 * Lines get the time of the turn they cite; context items become "“ref” = meaning (speaker, time)". Runs
 * catchup_llm_summary_check. NULL with CATCHUP_ERROR_MODEL when the reply holds no usable line. */
CatchupSummary *catchup_llm_summary_parse (const char *reply, GPtrArray *window, CatchupMemory *mem,
                                           GError **error);

/* Removes every line that attributes something to a speaker who is in neither the memory nor the window,
 * cites a message id that is in neither, attributes a cited window turn to someone else, or mentions a
 * clock time (HH:MM) that no turn was sent at and no turn's text states; drops context items citing unknown
 * ids. Says so in summary->notice.
 * Returns how many lines were removed. */
guint catchup_llm_summary_check (CatchupSummary *summary, GPtrArray *window, CatchupMemory *mem);

G_END_DECLS
