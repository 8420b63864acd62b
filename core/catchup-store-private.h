#pragma once

#include "catchup-db.h"
#include "catchup-store.h"

G_BEGIN_DECLS

/*
 * Schema, version 1. Migrations live in catchup-store.c, one function per step, tested from an older file.
 *
 * chunks: the retrieval index, kept by catchup-index.c. A chunk is a run of turns (message rows, in order,
 * stored in `rows` as little-endian int64s) of about 128 tokens overlapping its predecessor by about 32.
 * chunks_fts is contentless: its rows are deleted by regenerating the indexed terms from `rows`.
 * vec is the default embedder's vector of the chunk (int8, CATCHUP_EMBED_DIM bytes).
 */
#define CATCHUP_STORE_SCHEMA_V1 \
  "CREATE TABLE rooms (" \
  "  id INTEGER PRIMARY KEY," \
  "  protocol TEXT NOT NULL, account TEXT NOT NULL, name TEXT NOT NULL," \
  "  last_present INTEGER NOT NULL DEFAULT 0," \
  "  UNIQUE (protocol, account, name));" \
  "CREATE TABLE messages (" \
  "  row INTEGER PRIMARY KEY," \
  "  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE," \
  "  uid TEXT NOT NULL, ts INTEGER NOT NULL," \
  "  speaker TEXT NOT NULL, alias TEXT, body TEXT NOT NULL," \
  "  flags INTEGER NOT NULL DEFAULT 0," \
  "  UNIQUE (room, uid));" \
  "CREATE INDEX messages_order ON messages (room, ts, row);" \
  "CREATE VIRTUAL TABLE messages_fts USING fts5 (body, content='messages', content_rowid='row'," \
  "  tokenize='unicode61 remove_diacritics 2');" \
  "CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN" \
  "  INSERT INTO messages_fts (rowid, body) VALUES (new.row, new.body); END;" \
  "CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN" \
  "  INSERT INTO messages_fts (messages_fts, rowid, body) VALUES ('delete', old.row, old.body); END;" \
  "CREATE TABLE chunks (" \
  "  id INTEGER PRIMARY KEY," \
  "  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE," \
  "  first_ts INTEGER NOT NULL, first_row INTEGER NOT NULL," \
  "  last_ts INTEGER NOT NULL, last_row INTEGER NOT NULL," \
  "  tokens INTEGER NOT NULL, rows BLOB NOT NULL, vec BLOB);" \
  "CREATE INDEX chunks_order ON chunks (room, last_ts, last_row);" \
  "CREATE VIRTUAL TABLE chunks_fts USING fts5 (terms, content='', tokenize='unicode61 remove_diacritics 0');"

/* Version 2: per-room settings, nick changes, presence events, and the highest message row the
 * retrieval index has seen per room (catchup-index.c). */
#define CATCHUP_STORE_SCHEMA_V2 \
  "CREATE TABLE room_settings (" \
  "  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE," \
  "  key TEXT NOT NULL, value TEXT NOT NULL," \
  "  PRIMARY KEY (room, key));" \
  "CREATE TABLE nicks (" \
  "  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE," \
  "  ts INTEGER NOT NULL, old_nick TEXT NOT NULL, new_nick TEXT NOT NULL," \
  "  UNIQUE (room, ts, old_nick, new_nick));" \
  "CREATE TABLE room_events (" \
  "  id INTEGER PRIMARY KEY," \
  "  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE," \
  "  ts INTEGER NOT NULL, kind INTEGER NOT NULL, nick TEXT NOT NULL, detail TEXT NOT NULL DEFAULT ''," \
  "  UNIQUE (room, ts, kind, nick, detail));" \
  "CREATE INDEX room_events_order ON room_events (room, ts);" \
  "CREATE TABLE index_state (" \
  "  room INTEGER PRIMARY KEY REFERENCES rooms (id) ON DELETE CASCADE," \
  "  max_row INTEGER NOT NULL);"

/*
 * Version 3: model embeddings, computed in the background and never at catch-up time. A vector is keyed by
 * the embedder's name (which holds the model and the dimension, so that a change of either leaves old rows
 * unused) and a hash of the text (catchup_index_text_hash), so a text shared by rooms or re-chunked
 * unchanged is embedded once. vec: dim little-endian float32s. chunks.text_hash is the hash of the chunk's
 * text as the index builds it; the migration fills it for the chunks already there.
 */
#define CATCHUP_STORE_SCHEMA_V3 \
  "ALTER TABLE chunks ADD COLUMN text_hash BLOB;" \
  "CREATE TABLE embeddings (" \
  "  model TEXT NOT NULL, hash BLOB NOT NULL, vec BLOB NOT NULL," \
  "  PRIMARY KEY (model, hash));"

/* Version 4: the full-text index over single messages goes. Retrieval and search use the chunk index, and
 * the second index over the same words cost a fifth of the file and of the import time. */
#define CATCHUP_STORE_SCHEMA_V4 \
  "DROP TRIGGER messages_ai;" \
  "DROP TRIGGER messages_ad;" \
  "DROP TABLE messages_fts;"

/*
 * Version 5: the derived track (catchup-records.c). A record is one fact, stance, commitment, decision, norm,
 * relation or status drawn from a stored message (row, uid: its provenance), by source (who said it) about
 * owner (whom it concerns; '' for the group). subject holds the record's content terms, space-separated: a
 * later record of the same owner and family sharing one of them supersedes the earlier, which is kept, so the
 * chain shows how it changed and the head what holds now. records_state: the highest message row the writer of
 * records has read per room, so building is incremental and survives a restart.
 */
#define CATCHUP_STORE_SCHEMA_V5 \
  "CREATE TABLE records (" \
  "  id INTEGER PRIMARY KEY," \
  "  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE," \
  "  row INTEGER NOT NULL REFERENCES messages (row) ON DELETE CASCADE," \
  "  uid TEXT NOT NULL, ts INTEGER NOT NULL," \
  "  kind INTEGER NOT NULL, family INTEGER NOT NULL, scope INTEGER NOT NULL, flags INTEGER NOT NULL DEFAULT 0," \
  "  source TEXT NOT NULL, owner TEXT NOT NULL, subject TEXT NOT NULL, text TEXT NOT NULL," \
  "  supersedes INTEGER REFERENCES records (id) ON DELETE SET NULL," \
  "  superseded_by INTEGER REFERENCES records (id) ON DELETE SET NULL);" \
  "CREATE INDEX records_owner ON records (room, owner, family, ts);" \
  "CREATE INDEX records_row ON records (row);" \
  "CREATE INDEX records_supersedes ON records (supersedes);" \
  "CREATE INDEX records_superseded_by ON records (superseded_by);" \
  "CREATE TABLE records_state (" \
  "  room INTEGER PRIMARY KEY REFERENCES rooms (id) ON DELETE CASCADE," \
  "  max_row INTEGER NOT NULL);"

/*
 * Version 6: a rule-based record's text is its message's, read through the message instead of stored twice
 * ('' in records.text; the provenance id is the message's uid, so records.uid goes too). records_heads finds
 * the heads without walking the chains. room_speakers: each room's roster with its turns, counted as records
 * are built (a room of IRC logs has thousands of nicks; counting them from the messages every time is a scan);
 * the migration counts what the records already cover.
 */
#define CATCHUP_STORE_SCHEMA_V6 \
  "ALTER TABLE records DROP COLUMN uid;" \
  "UPDATE records SET text = '';" \
  "CREATE INDEX records_heads ON records (room, owner, family, scope, ts) WHERE superseded_by IS NULL;" \
  "CREATE TABLE room_speakers (" \
  "  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE," \
  "  speaker TEXT NOT NULL, turns INTEGER NOT NULL," \
  "  PRIMARY KEY (room, speaker));" \
  "INSERT INTO room_speakers (room, speaker, turns)" \
  "  SELECT m.room, m.speaker, count(*) FROM messages m JOIN records_state s ON s.room = m.room AND m.row <= s.max_row" \
  "  WHERE m.flags & 8 = 0 AND m.speaker != '' GROUP BY m.room, m.speaker;"

/*
 * Version 7: no presence events. Every join, part and quit of everyone in a room (with the quit reasons) was
 * kept and nothing read it: a record of who came and went, people who never spoke included, that outgrew the
 * messages in busy IRC channels. Renames stay in nicks: they tell which nicks are one person.
 */
#define CATCHUP_STORE_SCHEMA_V7 \
  "DROP TABLE room_events;"

/* Reads a message from a statement whose columns are: row, uid, ts, speaker, alias, body, flags. */
CatchupMessage *catchup_store_message_from_stmt (sqlite3_stmt *stmt);
#define CATCHUP_STORE_MESSAGE_COLUMNS "row, uid, ts, speaker, alias, body, flags"

G_END_DECLS
