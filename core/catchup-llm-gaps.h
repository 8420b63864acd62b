#pragma once

#include "catchup-gaps.h"
#include "catchup-llm.h"

G_BEGIN_DECLS

/*
 * Gap detection by a chat model: the prompt template gaps.txt with the window quoted as untrusted data, the
 * reply parsed tolerantly and every item validated. An empty array (the model found nothing usable) and an
 * error both mean: use the embedded detector (catchup_gaps_detect) instead.
 */

/* window: GPtrArray of CatchupMessage. Returns a GPtrArray of CatchupGap (at most max_gaps, most important
 * first; possibly empty) or NULL with a CATCHUP_ERROR. A window too long for the model's context is sent in
 * segments (one call each). */
GPtrArray *catchup_llm_gaps_detect (CatchupLlm *llm, GPtrArray *window, guint max_gaps, GCancellable *cancellable,
                                    GError **error);

/* The parsing and validation half, on a reply text: code fences, <think> blocks and prose around the JSON
 * are ignored; a {"gaps": [...]} object, a bare array or a single gap object are accepted. Items whose
 * utterance id is not in window, whose type is not in the taxonomy, or whose query is empty are dropped;
 * at most max_gaps are kept. NULL with CATCHUP_ERROR_MODEL when the reply holds no JSON at all. */
GPtrArray *catchup_llm_gaps_parse (const char *reply, GPtrArray *window, guint max_gaps, GError **error);

G_END_DECLS
