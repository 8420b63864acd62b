-- Schema version 2 to 3, frozen (the migration also fills chunks.text_hash). Never edit.
ALTER TABLE chunks ADD COLUMN text_hash BLOB;
CREATE TABLE embeddings (  model TEXT NOT NULL, hash BLOB NOT NULL, vec BLOB NOT NULL,  PRIMARY KEY (model, hash));
