#pragma once

#include <gio/gio.h>

#include "catchup-db.h"
#include "catchup-message.h"

G_BEGIN_DECLS

/*
 * The history store: one SQLite file (WAL) holding rooms, messages, settings and renames (nick changes), and
 * its schema with its migrations. The modules above keep their tables in the same file (the retrieval index,
 * the records, the model vectors) and reach it through catchup_store_db; the store calls none of them.
 *
 * Threading contract: a CatchupStore is one SQLite connection (catchup-db.h) and belongs to one thread at a time.
 * Open one store per thread that needs the database (SQLite's WAL lets readers and one writer work side by
 * side); to move a store to another thread, hand it over (catchup_store_hand_over). The store asserts it.
 *
 * Message order within a room is (ts, row): history playback that arrives late still sorts by its own time.
 */

#define CATCHUP_STORE_SCHEMA_VERSION 7

typedef struct _CatchupStore CatchupStore;

/* A room's place in the message order. */
typedef struct {
  gint64 ts;
  gint64 row;
} CatchupPos;

/* Binds a position to parameters i and i + 1 (ts, row); NULL binds open_value to both: an open end of a range. */
void catchup_pos_bind (sqlite3_stmt *stmt, int i, const CatchupPos *pos, gint64 open_value);

typedef struct {
  gint64 id;
  char *protocol;
  char *account;
  char *name;
  gint64 last_present;   /* 0 when unknown */
  gint64 n_messages;
  gint64 first_ts, last_ts;
} CatchupRoomInfo;

void catchup_room_info_free (CatchupRoomInfo *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupRoomInfo, catchup_room_info_free)

/* Opens or creates (with parent folders) the database at path, migrating its schema. ":memory:" works. */
CatchupStore *catchup_store_open (const char *path, GError **error);
void catchup_store_close (CatchupStore *store);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupStore, catchup_store_close)

const char *catchup_store_get_path (CatchupStore *store);
/* The store's connection, for the modules that keep tables of their own in the history database. */
CatchupDb *catchup_store_db (CatchupStore *store);

/* The owner thread (catchup-db.h): the thread that opened the store, or the one it is handed to. The owner
 * hands it over, the next thread takes it over; every use from another thread is a critical and fails. */
void catchup_store_hand_over (CatchupStore *store);
void catchup_store_take_over (CatchupStore *store);

/*
 * Transactions nest: the outermost level is a transaction (BEGIN IMMEDIATE), inner levels are savepoints, so
 * rolling back an inner level undoes only its part and the outer level can still commit the rest. A failed
 * commit has already ended its level (it never needs a rollback after it); when SQLite itself ends the
 * transaction after an error (FULL, IOERR, an interrupt), every further begin and commit inside it fails.
 */
gboolean catchup_store_begin (CatchupStore *store, GError **error);
gboolean catchup_store_commit (CatchupStore *store, GError **error);
void catchup_store_rollback (CatchupStore *store);
/* TRUE while SQLite has a transaction open on this connection. */
gboolean catchup_store_in_transaction (CatchupStore *store);

/*
 * Interruption, for a store whose owner must stop on time. While abort (connection-wide) or cancellable (the
 * running operation's) is cancelled, every statement stops within a fraction of a millisecond with
 * G_IO_ERROR_CANCELLED and no lock is waited for. Either may be NULL. The store keeps a reference.
 * A busy database is waited for up to timeout_ms (5 s by default) before a statement fails with
 * CATCHUP_ERROR_DB_BUSY.
 */
void catchup_store_set_abort (CatchupStore *store, GCancellable *abort);
void catchup_store_set_cancellable (CatchupStore *store, GCancellable *cancellable);
void catchup_store_set_busy_timeout (CatchupStore *store, guint timeout_ms);

/* Rooms. */
gint64 catchup_store_ensure_room (CatchupStore *store, const char *protocol, const char *account,
                                  const char *name, GError **error);
/* spec is a room name, or "protocol/account/name". 0 with CATCHUP_ERROR_NOT_FOUND or _AMBIGUOUS. */
gint64 catchup_store_find_room (CatchupStore *store, const char *spec, GError **error);
CatchupRoomInfo *catchup_store_room_info (CatchupStore *store, gint64 room, GError **error);
GPtrArray *catchup_store_list_rooms (CatchupStore *store, GError **error); /* of CatchupRoomInfo */
gboolean catchup_store_set_last_present (CatchupStore *store, gint64 room, gint64 ts, GError **error);
/*
 * Messages. Idempotent: a message whose (room, id) is stored already is skipped (*inserted = FALSE).
 * A message without id gets catchup_message_derive_id(). msg->row and msg->id are filled in.
 * Adding does not update the retrieval index: the caller runs catchup_index_update() afterwards.
 */
gboolean catchup_store_add (CatchupStore *store, gint64 room, CatchupMessage *msg, gboolean *inserted,
                            GError **error);
/* One transaction (a savepoint inside an open one) for the whole batch. */
gboolean catchup_store_add_batch (CatchupStore *store, gint64 room, GPtrArray *msgs, guint *n_inserted,
                                  GError **error);

CatchupMessage *catchup_store_get_message (CatchupStore *store, gint64 room, const char *id, GError **error);
CatchupMessage *catchup_store_get_message_by_row (CatchupStore *store, gint64 row, GError **error);

/* Messages in order with first <= pos <= last (either may be NULL: open end). limit 0 = all. */
GPtrArray *catchup_store_range (CatchupStore *store, gint64 room, const CatchupPos *first,
                                const CatchupPos *last, guint limit, GError **error);
/* Up to n messages just before pos (exclusive; NULL = the end), returned in chronological order. */
GPtrArray *catchup_store_before (CatchupStore *store, gint64 room, const CatchupPos *pos, guint n,
                                 GError **error);
/* Messages with ts >= since, in order. */
GPtrArray *catchup_store_since (CatchupStore *store, gint64 room, gint64 since, GError **error);

gint64 catchup_store_count (CatchupStore *store, gint64 room, GError **error);
/* Turns with ts >= since; -1 on error. */
gint64 catchup_store_count_turns (CatchupStore *store, gint64 room, gint64 since, GError **error);
/* Per-room settings (key/value text), removed with the room. get returns NULL without error when unset. */
char *catchup_store_get_setting (CatchupStore *store, gint64 room, const char *key, GError **error);
/* value NULL removes the setting. */
gboolean catchup_store_set_setting (CatchupStore *store, gint64 room, const char *key, const char *value,
                                    GError **error);

/* A rename (catchup-nicks.h reads them), idempotent: the same (room, ts, nicks) twice is stored once. */
gboolean catchup_store_add_nick_change (CatchupStore *store, gint64 room, gint64 ts, const char *old_nick,
                                        const char *new_nick, GError **error);

static inline CatchupPos
catchup_pos_of (const CatchupMessage *msg)
{
  CatchupPos p = { msg->ts, msg->row };
  return p;
}

static inline int
catchup_pos_cmp (const CatchupPos *a, const CatchupPos *b)
{
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  return a->row < b->row ? -1 : a->row > b->row;
}

G_END_DECLS
