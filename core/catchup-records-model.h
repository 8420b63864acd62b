#pragma once

#include "catchup-llm.h"
#include "catchup-records.h"

G_BEGIN_DECLS

/*
 * The derived track's writer with a model: for one segment of new messages, the model sees the roster, the
 * current heads of the records it may update and the segment (as a data block), and answers with actions:
 *   {"actions": [{"op": "add", "kind": "stance", "source": "bob", "owner": "bob", "subject": "office",
 *                 "text": "finds the new office too far", "evidence": ["m12"]},
 *                {"op": "update", "target": 17, ...same fields...}, {"op": "noop"}]}
 * Every action is checked and dropped when it fails, as SpeakerMem-R1's writer is: an unknown op or kind; no
 * evidence, or evidence naming a message outside the segment; a source who did not write one of the evidence
 * messages; an owner outside the roster (or "" / "group" for the group); an update whose target is not a current
 * head of this room or has another owner.
 */

/* The prompt of one segment (CatchupMessage, stored in the room). heads: CatchupRecord. */
char *catchup_records_model_prompt (GPtrArray *segment, const char *const *roster, GPtrArray *heads);

/* Checks and stores the actions of a model's reply for segment. n_applied, n_dropped may be NULL. FALSE with
 * error only when the store fails; a reply without usable JSON drops everything (CATCHUP_ERROR_MODEL). */
gboolean catchup_records_apply_model_reply (CatchupStore *store, gint64 room, GPtrArray *segment, const char *reply,
                                            guint *n_applied, guint *n_dropped, GError **error);

/* One call of the model for segment, then its actions applied. */
gboolean catchup_records_model_write (CatchupStore *store, gint64 room, CatchupLlm *llm, GPtrArray *segment,
                                      guint *n_applied, guint *n_dropped, GCancellable *cancellable,
                                      GError **error);

G_END_DECLS
