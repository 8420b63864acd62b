#pragma once

#include "catchup-llm.h"
#include "catchup-memory.h"

G_BEGIN_DECLS

/*
 * Evidence selection by a chat model. Lexical and dense retrieval rank a gap's evidence anywhere in the first
 * 40 turns, too far down for a memory of the 2-3 best; so a catch-up with a model retrieves a wide pool of
 * candidates per gap (catchup_memory_build with pool_size) and one chat call shows the model the gaps and the
 * pooled turns and asks which of them state the missing information. The memory becomes the lead-in plus the
 * chosen turns, gap-balanced within the budget (catchup_memory_select).
 */

/* What the selection prompt costs at most, in tokens (system prompt included), up to a context of twice this;
 * with a larger context, half the context. */
#define CATCHUP_SELECT_PROMPT_TOKENS 4096
/* Turns the model may choose per gap. */
#define CATCHUP_SELECT_PER_GAP 4

typedef struct {
  guint candidates;     /* distinct turns shown */
  guint prompt_tokens;  /* the prompt as sent, by the library's counter */
  guint chosen;         /* chosen turns that went into the memory */
} CatchupSelectInfo;

/* Asks the model to choose the evidence for mem's gaps from mem->pools (window: the CatchupMessage the gaps'
 * utterance indexes point into). The pools are first cut to what the prompt holds, round robin over the gaps
 * in rank order, and mem->pools keeps what was shown. On success the memory is rebuilt from the choices and
 * TRUE returned; when the call fails or chooses nothing usable, FALSE with an error (CATCHUP_ERROR_MODEL for
 * an answer without a usable choice) and the memory's turns as they were. info may be NULL. */
gboolean catchup_llm_select_evidence (CatchupLlm *llm, CatchupMemory *mem, GPtrArray *window, guint budget,
                                      CatchupSelectInfo *info, GCancellable *cancellable, GError **error);

/* The parsing half: {"selected": [{"gap": n, "ids": [...]}]} (also a bare array of such items, "g2" or "2"
 * for a gap, numbers for ids), fences, reasoning and prose tolerated. Returns one GPtrArray of ids per gap
 * (n_gaps of them, possibly empty): only ids in shown (a set of strings), each once per gap, at most per_gap;
 * gap numbers outside 1..n_gaps are dropped. NULL with CATCHUP_ERROR_MODEL when the reply holds no JSON. */
GPtrArray *catchup_llm_select_parse (const char *reply, guint n_gaps, GHashTable *shown, guint per_gap,
                                     GError **error);

G_END_DECLS
