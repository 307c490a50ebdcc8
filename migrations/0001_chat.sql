CREATE TABLE `messages` (
	`id` text PRIMARY KEY NOT NULL,
	`room_id` text NOT NULL,
	`seq` integer NOT NULL,
	`webhook_id` text NOT NULL,
	`markdown` text NOT NULL,
	`html` text NOT NULL,
	`metadata` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_room_seq` ON `messages` (`room_id`,`seq`);--> statement-breakpoint
CREATE TABLE `rooms` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`topic` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `rooms_created_at` ON `rooms` (`created_at`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`id_hash` text NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`room_id` text NOT NULL,
	`active` integer NOT NULL,
	`mappings` text NOT NULL,
	`rate_burst` integer NOT NULL,
	`rate_per_second` real NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhooks_id_hash` ON `webhooks` (`id_hash`);--> statement-breakpoint
CREATE INDEX `webhooks_room_id` ON `webhooks` (`room_id`);--> statement-breakpoint
CREATE TABLE `ws_tickets` (
	`ticket_hash` text PRIMARY KEY NOT NULL,
	`room_id` text NOT NULL,
	`token_id` text NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `ws_tickets_expires_at` ON `ws_tickets` (`expires_at`);