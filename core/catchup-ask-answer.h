#pragma once

#include "catchup-ask.h"
#include "catchup-llm.h"

G_BEGIN_DECLS

/*
 * The model's short answer to a question to the room, from the evidence catchup_engine_ask gathered: the
 * model sees the question, the roster, the rows asked about and the evidence turns (with the rows' records) as
 * data blocks, and answers with sentences that cite turn ids:
 *   {"answer": [{"person": "alice", "text": "Alice now favours Monday.", "ids": ["m12", "m40"]}]}
 * Each sentence is checked as the summary's lines are: ids that are not evidence are dropped, and a sentence
 * left without one goes; so does one about a person outside the roster, or about a person none of its cited
 * turns is by, names, or carries a record about (a view moved to someone else is worse than one left out).
 */

/* Sentences a reply may keep: the answer is short, the evidence stays beside it. */
#define CATCHUP_ASK_ANSWER_MAX_LINES 6

/* The prompt for res (template "ask.txt"); NULL when the template cannot be read. */
char *catchup_ask_answer_prompt (const CatchupAskResult *res, GError **error);

/* The checked answer of a model's reply; n_dropped (may be NULL) gets the sentences left out. NULL with
 * CATCHUP_ERROR_MODEL when the reply holds no usable JSON or no sentence survives the checks. */
CatchupAskAnswer *catchup_ask_answer_parse (const char *reply, const CatchupAskResult *res, guint *n_dropped,
                                            GError **error);

/* One call of the model, then the reply checked. Sets res->answer, or leaves it NULL and puts why into
 * res->notice (a cancellation is the only error returned: FALSE). */
gboolean catchup_ask_answer (CatchupLlm *llm, CatchupAskResult *res, GCancellable *cancellable, GError **error);

/* The same in a worker thread (llm is shared, see catchup-llm.h): takes res and hands it back, answered or
 * with its notice, in _finish on the caller's thread-default main context. */
void catchup_ask_answer_async (CatchupLlm *llm, CatchupAskResult *res, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data);
/* res as given to _async (NULL only for a cancellation, with the error). */
CatchupAskResult *catchup_ask_answer_finish (GAsyncResult *result, GError **error);

G_END_DECLS
