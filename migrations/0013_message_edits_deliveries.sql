CREATE TABLE `webhook_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`webhook_id` text NOT NULL,
	`at` integer NOT NULL,
	`method` text NOT NULL,
	`status` integer NOT NULL,
	`error_code` text,
	`error_message` text,
	`message_id` text,
	`room_id` text,
	`seq` integer,
	`bytes` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_id` ON `webhook_deliveries` (`webhook_id`,`id`);--> statement-breakpoint
ALTER TABLE `messages` ADD `person_id` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `edited_at` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `deleted_at` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `version` integer DEFAULT 0 NOT NULL;