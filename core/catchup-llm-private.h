#pragma once

#include "catchup-llm.h"

G_BEGIN_DECLS

/* The reading half of catchup_llm_chat and catchup_llm_embed on the body of a successful (200, JSON) answer,
 * for tests and fuzzing: the same checks and errors as for a real answer. */
char *catchup_llm_parse_chat_reply (CatchupLlm *llm, const char *body, gsize len, GError **error);
float *catchup_llm_parse_embed_reply (CatchupLlm *llm, const char *body, gsize len, guint n, guint *dim,
                                      GError **error);

G_END_DECLS
