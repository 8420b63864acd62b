-- Schema version 5 to 6, frozen once released: record text read through the message, the heads index, the roster. A migration test fixture.
ALTER TABLE records DROP COLUMN uid;
UPDATE records SET text = '';
CREATE INDEX records_heads ON records (room, owner, family, scope, ts) WHERE superseded_by IS NULL;
CREATE TABLE room_speakers (  room INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,  speaker TEXT NOT NULL, turns INTEGER NOT NULL,  PRIMARY KEY (room, speaker));
INSERT INTO room_speakers (room, speaker, turns)  SELECT m.room, m.speaker, count(*) FROM messages m JOIN records_state s ON s.room = m.room AND m.row <= s.max_row  WHERE m.flags & 8 = 0 AND m.speaker != '' GROUP BY m.room, m.speaker;
