#pragma once

#include <gio/gio.h>

#include "catchup-store.h"

G_BEGIN_DECLS

/*
 * Importers: history from files into the store, for `catchup import` and the plugin's log backfill.
 *
 * Importing is idempotent (re-importing a file inserts nothing) and streamed: messages are written in
 * transactions of CATCHUP_IMPORT_BATCH messages, each followed by the rooms' index update. A bad line is
 * reported in the result and skipped; only an unreadable file or a database failure is an error, and then
 * the batch being written is rolled back (earlier batches stay): the counts are those of the batches committed,
 * and the error names the first line that was not saved.
 */

/* The room of a JSON Lines record is ensured as (CATCHUP_IMPORT_PROTOCOL, CATCHUP_IMPORT_ACCOUNT, "room"). */
#define CATCHUP_IMPORT_PROTOCOL "import"
#define CATCHUP_IMPORT_ACCOUNT ""
#define CATCHUP_IMPORT_BATCH 5000

typedef struct {
  guint64 line;   /* 1-based */
  char *message;  /* translated, for the user */
} CatchupImportProblem;

typedef struct {
  guint64 read;        /* records read: messages, actions and events; malformed lines included */
  guint64 inserted;    /* new messages stored */
  guint64 duplicates;  /* messages already stored */
  guint64 events;      /* joins, parts, quits and nick changes read; only the nick changes are kept */
  guint64 malformed;   /* lines skipped, each with a problem */
  GPtrArray *problems; /* of CatchupImportProblem, in line order */
} CatchupImportResult;

CatchupImportResult *catchup_import_result_new (void);
void catchup_import_result_free (CatchupImportResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupImportResult, catchup_import_result_free)

/*
 * JSON Lines: one object a line, {"id", "room", "ts" (ISO 8601), "speaker", "text"}; "id" is optional (a
 * string or a number, kept as written even beyond int64) and so is "alias". room > 0 puts every record into
 * that room and makes "room" optional; with room 0 each record's room is used (an empty name is malformed).
 * Blank lines are skipped; several values on one line (a lost line break) are each a record of that line.
 * Text is cleaned as it enters (catchup_text_clean): NUL, escaped or raw, is dropped and the rest kept. An id
 * already stored with another text is reported as a problem of its line, not counted as a duplicate.
 */
gboolean catchup_import_jsonl (CatchupStore *store, const char *path, gint64 room, CatchupImportResult *result,
                               GCancellable *cancellable, GError **error);
gboolean catchup_import_jsonl_stream (CatchupStore *store, GInputStream *input, gint64 room,
                                      CatchupImportResult *result, GCancellable *cancellable, GError **error);

/*
 * Plain IRC logs into room: "[HH:MM] <nick> text" or "[HH:MM:SS] ...", "* nick action" (stored with
 * CATCHUP_MESSAGE_ACTION, text without the nick), "-nick- notice", and the event
 * lines "=== nick [user@host] has joined #c" / "has left #c [reason]" / "has quit [reason]" /
 * "=== old is now known as new" (also introduced by "***" or "-!-"); other "=== nick ..." lines are actions.
 * Lines may carry their own date as "channel YYYY-MM-DD [HH:MM:SS] ...". date ("YYYY-MM-DD", UTC) is the day
 * of the first line; a time earlier than the previous one is the next day. Lines without a time take the
 * previous line's time.
 */
gboolean catchup_import_irc (CatchupStore *store, const char *path, gint64 room, const char *date,
                             CatchupImportResult *result, GCancellable *cancellable, GError **error);
gboolean catchup_import_irc_stream (CatchupStore *store, GInputStream *input, gint64 room, const char *date,
                                    CatchupImportResult *result, GCancellable *cancellable, GError **error);

G_END_DECLS
