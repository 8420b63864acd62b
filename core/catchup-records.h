#pragma once

#include "catchup-message.h"
#include "catchup-store.h"

G_BEGIN_DECLS

/*
 * The derived track: per-person and group records drawn from the verbatim turns, kept beside them in the
 * store. Each record points at the message it came from (provenance). A later record of the same owner and
 * family that shares a subject term with an earlier head supersedes it; the earlier one stays, so the head says
 * what holds now and the chain how it got there.
 *
 * Building is incremental (catchup_records_update reads the messages stored since its last run) and runs where
 * messages are written: on the history writer's thread and in the importer, never on a UI's main loop.
 */

typedef enum {
  CATCHUP_RECORD_FACT,
  CATCHUP_RECORD_STANCE,
  CATCHUP_RECORD_COMMITMENT,
  CATCHUP_RECORD_DECISION,
  CATCHUP_RECORD_NORM,
  CATCHUP_RECORD_RELATION,
  CATCHUP_RECORD_STATUS,
  CATCHUP_RECORD_N_KINDS
} CatchupRecordKind;

typedef enum {
  CATCHUP_RECORD_PERSON,
  CATCHUP_RECORD_GROUP,
} CatchupRecordScope;

typedef enum {
  CATCHUP_RECORD_FLAG_NONE    = 0,
  CATCHUP_RECORD_FLAG_REQUEST = 1 << 0, /* a commitment source asked of owner, not one owner offered */
  CATCHUP_RECORD_FLAG_OWN_TEXT = 1 << 1, /* text is the record's own (a model's words), not its message's */
} CatchupRecordFlags;

typedef struct {
  gint64 id;              /* 0 before it is stored */
  CatchupRecordKind kind;
  CatchupRecordScope scope;
  guint flags;            /* CatchupRecordFlags */
  char *source;           /* who said it */
  char *owner;            /* whom it concerns; "" for the group */
  char *subject;          /* content terms, space-separated */
  char *text;             /* the message's text unless CATCHUP_RECORD_FLAG_OWN_TEXT */
  gint64 ts;
  gint64 row;             /* provenance: the message's row and id */
  char *msg_id;
  gint64 supersedes;      /* 0: none */
  gint64 superseded_by;   /* 0: the head */
} CatchupRecord;

CatchupRecord *catchup_record_copy (const CatchupRecord *rec);
void catchup_record_free (CatchupRecord *rec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupRecord, catchup_record_free)

const char *catchup_record_kind_to_string (CatchupRecordKind kind);
gboolean catchup_record_kind_from_string (const char *name, CatchupRecordKind *out);
/* Kinds that can update one another: a status ("done") closes a commitment of the same owner. */
guint catchup_record_family (CatchupRecordKind kind);

/* The rule-based writer: the records one message yields (GPtrArray of CatchupRecord, not stored; maybe empty).
 * roster: the room's speakers (NULL-terminated), for owners named or addressed in the text. */
GPtrArray *catchup_records_extract (const CatchupMessage *msg, const char *const *roster);

/* The room's speakers, most active first (NULL-terminated). */
char **catchup_records_roster (CatchupStore *store, gint64 room, GError **error);

/* Messages the writer thread reads per call: a backlog (a database migrated from before records) is worked
 * off a slice per write, so no write waits long behind it. */
#define CATCHUP_RECORDS_BATCH 2000

/* Reads up to max_messages (0: all) of the room's messages stored since the last call and stores their records,
 * linked to the heads they update; n_records (may be NULL) gets how many were added. */
gboolean catchup_records_update (CatchupStore *store, gint64 room, guint max_messages, guint *n_records,
                                 GError **error);

/* Stores rec (id, supersedes filled in), superseding the head it updates (same owner, family and scope, a
 * shared subject term), unless force_target is non-zero: then exactly that head is superseded. */
gboolean catchup_records_add (CatchupStore *store, gint64 room, CatchupRecord *rec, gint64 force_target,
                              GError **error);

/* Up to max_messages (0: all) of the room's stored messages after row after_row, by row, events included. */
GPtrArray *catchup_records_messages_after (CatchupStore *store, gint64 room, gint64 after_row, guint max_messages,
                                           GError **error);
/* The row before the room's latest n messages; 0 when it has no more. */
gboolean catchup_records_row_before_latest (CatchupStore *store, gint64 room, guint n, gint64 *row, GError **error);
/* The room's newest heads, at most limit of them, oldest first. */
GPtrArray *catchup_records_recent_heads (CatchupStore *store, gint64 room, guint limit, GError **error);

/* The room's records in time order; owner NULL for all, heads_only for what holds now. */
GPtrArray *catchup_records_list (CatchupStore *store, gint64 room, const char *owner, gboolean heads_only,
                                 GError **error);
/* The records drawn from the room's messages of rows first_row to last_row, in time order. */
GPtrArray *catchup_records_between (CatchupStore *store, gint64 room, gint64 first_row, gint64 last_row,
                                    GError **error);
/* One record by id; NULL with CATCHUP_ERROR_NOT_FOUND. */
CatchupRecord *catchup_records_get (CatchupStore *store, gint64 room, gint64 id, GError **error);
/* The chain a record belongs to, oldest first, up to its head. */
GPtrArray *catchup_records_chain (CatchupStore *store, gint64 room, gint64 id, GError **error);

/* Word-boundary matching on casefolded text: phrase occurs in text with no letter or digit right before or
 * after it. Typographic apostrophes count as "'". */
gboolean catchup_records_has_phrase (const char *folded_text, const char *phrase);
/* Where the first such occurrence starts (bytes); -1 when there is none. */
gssize catchup_records_find_phrase (const char *folded_text, const char *phrase);
/* Whether any of the NULL-terminated phrases occurs so. */
gboolean catchup_records_has_any_phrase (const char *folded_text, const char *const *phrases);
/* Casefolded text with typographic apostrophes made plain, for catchup_records_has_phrase. */
char *catchup_records_fold (const char *text);

G_END_DECLS
