#pragma once

#include "catchup-memory.h"
#include "catchup-records.h"
#include "catchup-store.h"

G_BEGIN_DECLS

/*
 * Questions to a room: "what does alice think of the release plan", "how did bob's stance change", "did
 * everyone agree". A question is compiled against the room's roster first (who it is about, whose view of
 * whose thing, what holds now or how it changed), then evidence is drawn from both tracks — the verbatim turns
 * and the derived records — per person where the question is about people. A person with no evidence gets an
 * empty row, never someone else's turns.
 */

typedef enum {
  CATCHUP_ASK_HEAD, /* what holds now */
  CATCHUP_ASK_FULL, /* how it changed: every state, in time order */
} CatchupAskMode;

typedef struct {
  GPtrArray *people;  /* roster nicks the question names (char *), in the order named; every row for "everyone" */
  gboolean everyone;  /* "everyone", "each of us", "all members" */
  CatchupAskMode mode;
  gboolean relation;  /* about how the people named stand to each other ("the history between alice and bob") */
  char *source;       /* "what does alice think of bob's plan": alice (whose view); NULL when not said */
  char *owner;        /* ... and bob (whose thing); NULL when not said */
  char *topic;        /* the question's own words without names and question scaffolding */
  char *question;     /* as asked */
  char **roster;      /* the room's speakers it was compiled against */
  gint64 since, until; /* "on 3 June, 2023", "in May 2023": the local day or month it names, [since, until)
                        * in seconds since the epoch; both 0 when it names none */
} CatchupAskQuery;

void catchup_ask_query_free (CatchupAskQuery *q);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupAskQuery, catchup_ask_query_free)

/* roster: the room's speakers (NULL-terminated); names match case-insensitively, whole words, also as "bob's". */
CatchupAskQuery *catchup_ask_compile (const char *question, const char *const *roster);

typedef struct {
  char *person;       /* NULL: the row of the room as a whole (a question about no one) */
  GPtrArray *turns;   /* CatchupMessage, chronological */
  GPtrArray *records; /* CatchupRecord about person that bear on the question, chronological */
  char *latest_id;    /* id of the newest turn of the row: the latest state; NULL when the row is empty */
} CatchupAskRow;

/* One sentence of a model's short answer (catchup-ask-answer.h), checked against the evidence. */
typedef struct {
  char *person;       /* the roster nick it is about; NULL for the group */
  char *text;
  GPtrArray *ids;     /* char *: the evidence turns it cites, at least one */
} CatchupAskLine;

typedef struct {
  GPtrArray *lines;   /* CatchupAskLine, at least one */
} CatchupAskAnswer;

CatchupAskAnswer *catchup_ask_answer_new (void);
void catchup_ask_answer_free (CatchupAskAnswer *answer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupAskAnswer, catchup_ask_answer_free)
/* Every id the answer cites, once, in the order cited (char *). */
GPtrArray *catchup_ask_answer_cited (const CatchupAskAnswer *answer);
/* The sentences joined into one paragraph. */
char *catchup_ask_answer_text (const CatchupAskAnswer *answer);

typedef struct {
  CatchupAskQuery *query;
  GPtrArray *rows;    /* CatchupAskRow */
  CatchupMemory *memory; /* every evidence turn once, chronological (what recall returns) */
  CatchupAskAnswer *answer; /* the model's short answer; NULL without a model or when it fell back */
  char *notice;       /* one line: why a configured model's answer is not shown, or what of it was left out */
} CatchupAskResult;

void catchup_ask_result_free (CatchupAskResult *res);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupAskResult, catchup_ask_result_free)

/* The same against the room's roster as stored. */
CatchupAskQuery *catchup_ask_compile_for_room (CatchupStore *store, gint64 room, const char *question,
                                              GError **error);

/* Evidence for a question that names people (q->people not empty; takes q): a row per person. */
CatchupAskResult *catchup_ask_people (CatchupStore *store, gint64 room, CatchupAskQuery *q, guint budget,
                                      GError **error);
/* Whether a question is answered per person: it names people, and they are not most of the room (for one of
 * two partners, the room's own recall ranks better). */
gboolean catchup_ask_per_person (CatchupStore *store, gint64 room, const CatchupAskQuery *q, gboolean *per_person,
                                 GError **error);
/* A question answered from the verbatim track's recall (takes q and mem): one row for a question about no one,
 * else the memory's turns sorted into the rows of the people they are by or name. */
CatchupAskResult *catchup_ask_from_memory (CatchupAskQuery *q, CatchupMemory *mem);

/* The whole question, with or without a model: catchup_engine_ask (catchup-engine.h). */

G_END_DECLS
