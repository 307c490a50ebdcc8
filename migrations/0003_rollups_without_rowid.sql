-- Custom migration (drizzle-kit cannot say WITHOUT ROWID): the rollup tables become clustered on
-- their primary key, so the key is stored once instead of in the table plus an automatic index.
-- agg_user loses its 15-minute cells (src/analytics/rollups.ts: agg_user keeps 60 and 1440).
-- Each table is rebuilt keeping its rows: create, copy, drop, rename, recreate indexes.
CREATE TABLE `agg_media_new` (
	`res` integer NOT NULL,
	`slot` integer NOT NULL,
	`metric` integer NOT NULL,
	`media` integer NOT NULL,
	`cnt` integer NOT NULL,
	`sum` integer NOT NULL,
	`mn` integer NOT NULL,
	`mx` integer NOT NULL,
	PRIMARY KEY(`res`, `slot`, `metric`, `media`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `agg_media_new` (`res`, `slot`, `metric`, `media`, `cnt`, `sum`, `mn`, `mx`)
	SELECT `res`, `slot`, `metric`, `media`, `cnt`, `sum`, `mn`, `mx` FROM `agg_media`;
--> statement-breakpoint
DROP TABLE `agg_media`;
--> statement-breakpoint
ALTER TABLE `agg_media_new` RENAME TO `agg_media`;
--> statement-breakpoint
CREATE TABLE `agg_queue_new` (
	`res` integer NOT NULL,
	`slot` integer NOT NULL,
	`metric` integer NOT NULL,
	`media` integer NOT NULL,
	`cnt` integer NOT NULL,
	`sum` integer NOT NULL,
	`mn` integer NOT NULL,
	`mx` integer NOT NULL,
	`direction` integer NOT NULL,
	`queue` integer NOT NULL,
	PRIMARY KEY(`res`, `slot`, `metric`, `media`, `direction`, `queue`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `agg_queue_new` (`res`, `slot`, `metric`, `media`, `cnt`, `sum`, `mn`, `mx`, `direction`, `queue`)
	SELECT `res`, `slot`, `metric`, `media`, `cnt`, `sum`, `mn`, `mx`, `direction`, `queue` FROM `agg_queue`;
--> statement-breakpoint
DROP TABLE `agg_queue`;
--> statement-breakpoint
ALTER TABLE `agg_queue_new` RENAME TO `agg_queue`;
--> statement-breakpoint
CREATE TABLE `agg_user_new` (
	`res` integer NOT NULL,
	`slot` integer NOT NULL,
	`metric` integer NOT NULL,
	`media` integer NOT NULL,
	`cnt` integer NOT NULL,
	`sum` integer NOT NULL,
	`mn` integer NOT NULL,
	`mx` integer NOT NULL,
	`direction` integer NOT NULL,
	`queue` integer NOT NULL,
	`user` integer NOT NULL,
	PRIMARY KEY(`res`, `slot`, `metric`, `media`, `direction`, `queue`, `user`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `agg_user_new` (`res`, `slot`, `metric`, `media`, `cnt`, `sum`, `mn`, `mx`, `direction`, `queue`, `user`)
	SELECT `res`, `slot`, `metric`, `media`, `cnt`, `sum`, `mn`, `mx`, `direction`, `queue`, `user` FROM `agg_user`
	WHERE `res` <> 15;
--> statement-breakpoint
DROP TABLE `agg_user`;
--> statement-breakpoint
ALTER TABLE `agg_user_new` RENAME TO `agg_user`;
--> statement-breakpoint
CREATE INDEX `agg_user_by_user` ON `agg_user` (`user`,`res`,`slot`);
