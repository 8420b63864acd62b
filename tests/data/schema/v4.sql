-- Schema version 3 to 4, frozen. Never edit (a migration test fixture).
DROP TRIGGER messages_ai;
DROP TRIGGER messages_ad;
DROP TABLE messages_fts;
