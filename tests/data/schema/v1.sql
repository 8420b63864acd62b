-- Schema version 1, frozen: an empty database to version 1. Never edit (a migration test fixture).
CREATE TABLE rooms (  id INTEGER PRIMARY KEY,  protocol TEXT NOT NULL, account TEXT NOT NULL, name TEXT NOT NULL,  last_present INTEGER NOT NULL DEFAULT 0,  UNIQUE (protocol, account, name));
CREATE TABLE messages (  row INTEGER PRIMARY KEY,  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,  uid TEXT NOT NULL, ts INTEGER NOT NULL,  speaker TEXT NOT NULL, alias TEXT, body TEXT NOT NULL,  flags INTEGER NOT NULL DEFAULT 0,  UNIQUE (room, uid));
CREATE INDEX messages_order ON messages (room, ts, row);
CREATE VIRTUAL TABLE messages_fts USING fts5 (body, content='messages', content_rowid='row',  tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN  INSERT INTO messages_fts (rowid, body) VALUES (new.row, new.body); END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN  INSERT INTO messages_fts (messages_fts, rowid, body) VALUES ('delete', old.row, old.body); END;
CREATE TABLE chunks (  id INTEGER PRIMARY KEY,  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,  first_ts INTEGER NOT NULL, first_row INTEGER NOT NULL,  last_ts INTEGER NOT NULL, last_row INTEGER NOT NULL,  tokens INTEGER NOT NULL, rows BLOB NOT NULL, vec BLOB);
CREATE INDEX chunks_order ON chunks (room, last_ts, last_row);
CREATE VIRTUAL TABLE chunks_fts USING fts5 (terms, content='', tokenize='unicode61 remove_diacritics 0');
