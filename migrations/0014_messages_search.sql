-- Custom migration (drizzle-kit cannot declare virtual tables or triggers): full-text search over
-- messages (history's `q`). An external-content FTS5 index of each message's markdown and metadata,
-- kept in step with the messages table by triggers, so no write path changes: an insert adds the
-- message, an edit replaces its text, a deletion (a tombstone: text emptied) or a room's deletion
-- removes it. Built once here from the messages already stored.
CREATE VIRTUAL TABLE `messages_fts` USING fts5(markdown, metadata, content='messages', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2');
--> statement-breakpoint
CREATE TRIGGER `messages_fts_insert` AFTER INSERT ON `messages` BEGIN
  INSERT INTO `messages_fts` (rowid, markdown, metadata) VALUES (new.rowid, new.markdown, new.metadata);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_delete` AFTER DELETE ON `messages` BEGIN
  INSERT INTO `messages_fts` (`messages_fts`, rowid, markdown, metadata) VALUES ('delete', old.rowid, old.markdown, old.metadata);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_update` AFTER UPDATE OF markdown, metadata ON `messages` BEGIN
  INSERT INTO `messages_fts` (`messages_fts`, rowid, markdown, metadata) VALUES ('delete', old.rowid, old.markdown, old.metadata);
  INSERT INTO `messages_fts` (rowid, markdown, metadata) VALUES (new.rowid, new.markdown, new.metadata);
END;
--> statement-breakpoint
INSERT INTO `messages_fts` (`messages_fts`) VALUES ('rebuild');
