CREATE TABLE `agg_media` (
	`res` integer NOT NULL,
	`slot` integer NOT NULL,
	`metric` integer NOT NULL,
	`media` integer NOT NULL,
	`cnt` integer NOT NULL,
	`sum` integer NOT NULL,
	`mn` integer NOT NULL,
	`mx` integer NOT NULL,
	PRIMARY KEY(`res`, `slot`, `metric`, `media`)
);
--> statement-breakpoint
CREATE TABLE `agg_queue` (
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
);
--> statement-breakpoint
CREATE TABLE `agg_user` (
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
);
--> statement-breakpoint
CREATE INDEX `agg_user_by_user` ON `agg_user` (`user`,`res`,`slot`);--> statement-breakpoint
CREATE TABLE `conversations` (
	`id` text PRIMARY KEY NOT NULL,
	`first_emit` integer NOT NULL,
	`last_emit` integer NOT NULL,
	`version` integer NOT NULL,
	`data` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `conversations_first_emit` ON `conversations` (`first_emit`);--> statement-breakpoint
CREATE TABLE `dim_values` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`dim` text NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dim_values_dim_value` ON `dim_values` (`dim`,`value`);--> statement-breakpoint
CREATE TABLE `ingest_guard` (
	`conflicts` integer NOT NULL,
	CONSTRAINT "ingest_guard_no_conflicts" CHECK("ingest_guard"."conflicts" = 0)
);
--> statement-breakpoint
CREATE TABLE `meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`permissions` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text NOT NULL,
	`revoked_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tokens_token_hash` ON `tokens` (`token_hash`);