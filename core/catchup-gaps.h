#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  CATCHUP_GAP_REFERENTIAL,  /* missing referent: "that solution", "they" */
  CATCHUP_GAP_ATTRIBUTE,    /* missing attribute/state/spec: "the usual time", "the new limit" */
  CATCHUP_GAP_RELATIONAL,   /* missing rationale/relation: "so we went with", "as agreed" */
} CatchupGapType;

typedef enum {
  CATCHUP_WORTH_DECISION, CATCHUP_WORTH_PLAN, CATCHUP_WORTH_REQUEST, CATCHUP_WORTH_ACTION,
  CATCHUP_WORTH_STATUS, CATCHUP_WORTH_NEWS, CATCHUP_WORTH_QUESTION, CATCHUP_WORTH_OTHER,
} CatchupWorth;

/* A summary-worthy, gap-bearing utterance of the window and the evidence-seeking query for it. */
typedef struct {
  char *utterance_id;     /* id of the window message */
  guint utterance_index;  /* its index in the window */
  CatchupGapType type;
  CatchupWorth worth;
  char *expression;       /* the unresolved expression as written ("that fallback") */
  char *reason;           /* why it is not self-contained */
  char *evidence;         /* what kind of evidence would resolve it */
  char *anchors;          /* lexical anchors from the window, space separated */
  char *query;            /* the retrieval query built from all of the above; never a guessed answer */
  double weight;          /* salience, for ordering */
} CatchupGap;

CatchupGap *catchup_gap_new (void);
CatchupGap *catchup_gap_copy (const CatchupGap *gap);
void catchup_gap_free (CatchupGap *gap);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupGap, catchup_gap_free)
const char *catchup_gap_type_to_string (CatchupGapType type);
gboolean catchup_gap_type_from_string (const char *s, CatchupGapType *out);
const char *catchup_worth_to_string (CatchupWorth worth);

/* The embedded detector: window is a GPtrArray of CatchupMessage; returns a GPtrArray of CatchupGap, at most
 * max_gaps, most salient first. */
GPtrArray *catchup_gaps_detect (GPtrArray *window, guint max_gaps);

G_END_DECLS
