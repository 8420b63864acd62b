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

/*
 * The model writer in the background, as the embedding fill runs: a pass reads each room's messages after the
 * model writer's mark (the room setting CATCHUP_RECORDS_MODEL_MARK) from its own connection, asks the model
 * per segment without holding any lock, and stores each reply's checked actions and the new mark through a
 * sink — the history writer's, so the database keeps its one writer. A room it has not seen before starts
 * with its latest messages (limits->backlog), not its whole history. A reply without usable actions drops
 * its segment and moves the mark on: a model that keeps answering badly is not asked the same again and
 * again. A failing call (endpoint down, timeout) ends the pass with the mark where it was.
 */

#define CATCHUP_RECORDS_MODEL_MARK "records-model-row"

typedef struct {
  guint max_calls;   /* model calls per pass; 0: no bound */
  guint max_ms;      /* a pass starts no call after this long; 0: no bound */
  guint segment;     /* messages per call at most */
  guint backlog;     /* a room not seen before: how many of its latest messages are written */
} CatchupRecordsModelLimits;

void catchup_records_model_limits_init (CatchupRecordsModelLimits *limits);

/* One segment's reply, to store on the writer's side. applied, dropped: filled in there. */
typedef struct {
  gint64 room;
  GPtrArray *segment;  /* CatchupMessage */
  const char *reply;
  gint64 mark;         /* the room's mark once the segment is written */
  guint applied, dropped;
} CatchupRecordsModelWrite;

/* Stores a segment's checked actions and the room's new mark, together. */
gboolean catchup_records_model_store (CatchupStore *store, CatchupRecordsModelWrite *write, GError **error);

typedef gboolean (*CatchupRecordsModelSink) (CatchupRecordsModelWrite *write, gpointer user_data,
                                            GCancellable *cancellable, GError **error);

typedef struct {
  guint calls, segments, applied, dropped;
  gboolean more;       /* a bound ended the pass with messages left */
} CatchupRecordsModelStats;

/* One pass over rooms (gint64 ids), reading from store and writing through sink (NULL: into store). */
gboolean catchup_records_model_fill (CatchupStore *store, GArray *rooms, CatchupLlm *llm,
                                     const CatchupRecordsModelLimits *limits, CatchupRecordsModelSink sink,
                                     gpointer sink_data, CatchupRecordsModelStats *stats, GCancellable *cancellable,
                                     GError **error);

G_END_DECLS
