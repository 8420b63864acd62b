-- Schema version 1 to 2, frozen. Never edit (a migration test fixture).
CREATE TABLE room_settings (  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,  key TEXT NOT NULL, value TEXT NOT NULL,  PRIMARY KEY (room, key));
CREATE TABLE nicks (  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,  ts INTEGER NOT NULL, old_nick TEXT NOT NULL, new_nick TEXT NOT NULL,  UNIQUE (room, ts, old_nick, new_nick));
CREATE TABLE room_events (  id INTEGER PRIMARY KEY,  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,  ts INTEGER NOT NULL, kind INTEGER NOT NULL, nick TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '',  UNIQUE (room, ts, kind, nick, detail));
CREATE INDEX room_events_order ON room_events (room, ts);
CREATE TABLE index_state (  room INTEGER PRIMARY KEY REFERENCES rooms (id) ON DELETE CASCADE,  max_row INTEGER NOT NULL);
