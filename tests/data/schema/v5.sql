-- Schema version 4 to 5, frozen once released: the per-person and group records. A migration test fixture.
CREATE TABLE records (  id INTEGER PRIMARY KEY,  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,  row INTEGER NOT NULL REFERENCES messages (row) ON DELETE CASCADE,  uid TEXT NOT NULL, ts INTEGER NOT NULL,  kind INTEGER NOT NULL, family INTEGER NOT NULL, scope INTEGER NOT NULL, flags INTEGER NOT NULL DEFAULT 0,  source TEXT NOT NULL, owner TEXT NOT NULL, subject TEXT NOT NULL, text TEXT NOT NULL,  supersedes INTEGER REFERENCES records (id) ON DELETE SET NULL,  superseded_by INTEGER REFERENCES records (id) ON DELETE SET NULL);
CREATE INDEX records_owner ON records (room, owner, family, ts);
CREATE INDEX records_row ON records (row);
CREATE INDEX records_supersedes ON records (supersedes);
CREATE INDEX records_superseded_by ON records (superseded_by);
CREATE TABLE records_state (  room INTEGER PRIMARY KEY REFERENCES rooms (id) ON DELETE CASCADE,  max_row INTEGER NOT NULL);
