-- Custom migration: span classes (src/analytics/span-class.ts). A conversation whose emits lie far
-- apart (1971 and 2999) made the one longest span in meta (max_span_ms) cover the whole table, so
-- every raw read scanned every row before its interval. Now each conversation has a span class, its
-- span's bit length (class c holds spans 2^(c-1) to 2^c - 1), and a raw read scans, per class present,
-- first_emit from the interval start minus that class's longest span, through (span_class,
-- first_emit). meta keeps one row per class present ('span_class:<c>' = the longest span seen in it).
-- The class below is the same sum of comparisons as spanClassSql (45 terms: spans stay below 2^45 ms).
-- The old first_emit index served only the raw read, which the new index serves now.
ALTER TABLE `conversations` ADD `span_class` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
UPDATE `conversations` SET `span_class` = (`last_emit` - `first_emit` >= 1) + (`last_emit` - `first_emit` >= 2) + (`last_emit` - `first_emit` >= 4) + (`last_emit` - `first_emit` >= 8) + (`last_emit` - `first_emit` >= 16) + (`last_emit` - `first_emit` >= 32) + (`last_emit` - `first_emit` >= 64) + (`last_emit` - `first_emit` >= 128) + (`last_emit` - `first_emit` >= 256) + (`last_emit` - `first_emit` >= 512) + (`last_emit` - `first_emit` >= 1024) + (`last_emit` - `first_emit` >= 2048) + (`last_emit` - `first_emit` >= 4096) + (`last_emit` - `first_emit` >= 8192) + (`last_emit` - `first_emit` >= 16384) + (`last_emit` - `first_emit` >= 32768) + (`last_emit` - `first_emit` >= 65536) + (`last_emit` - `first_emit` >= 131072) + (`last_emit` - `first_emit` >= 262144) + (`last_emit` - `first_emit` >= 524288) + (`last_emit` - `first_emit` >= 1048576) + (`last_emit` - `first_emit` >= 2097152) + (`last_emit` - `first_emit` >= 4194304) + (`last_emit` - `first_emit` >= 8388608) + (`last_emit` - `first_emit` >= 16777216) + (`last_emit` - `first_emit` >= 33554432) + (`last_emit` - `first_emit` >= 67108864) + (`last_emit` - `first_emit` >= 134217728) + (`last_emit` - `first_emit` >= 268435456) + (`last_emit` - `first_emit` >= 536870912) + (`last_emit` - `first_emit` >= 1073741824) + (`last_emit` - `first_emit` >= 2147483648) + (`last_emit` - `first_emit` >= 4294967296) + (`last_emit` - `first_emit` >= 8589934592) + (`last_emit` - `first_emit` >= 17179869184) + (`last_emit` - `first_emit` >= 34359738368) + (`last_emit` - `first_emit` >= 68719476736) + (`last_emit` - `first_emit` >= 137438953472) + (`last_emit` - `first_emit` >= 274877906944) + (`last_emit` - `first_emit` >= 549755813888) + (`last_emit` - `first_emit` >= 1099511627776) + (`last_emit` - `first_emit` >= 2199023255552) + (`last_emit` - `first_emit` >= 4398046511104) + (`last_emit` - `first_emit` >= 8796093022208) + (`last_emit` - `first_emit` >= 17592186044416);
--> statement-breakpoint
DROP INDEX `conversations_first_emit`;
--> statement-breakpoint
CREATE INDEX `conversations_span_first_emit` ON `conversations` (`span_class`,`first_emit`);
--> statement-breakpoint
INSERT INTO `meta` (`key`, `value`)
  SELECT 'span_class:' || `span_class`, max(`last_emit` - `first_emit`) FROM `conversations` WHERE true GROUP BY `span_class`
  ON CONFLICT (`key`) DO UPDATE SET `value` = max(`value`, excluded.`value`);
--> statement-breakpoint
DELETE FROM `meta` WHERE `key` = 'max_span_ms';
