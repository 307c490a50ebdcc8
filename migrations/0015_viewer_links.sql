CREATE TABLE `viewer_links` (
	`id` text PRIMARY KEY NOT NULL,
	`room_id` text NOT NULL,
	`label` text NOT NULL,
	`secret_hash` text NOT NULL,
	`principal_id` text NOT NULL,
	`created_at` text NOT NULL,
	`rotated_at` text,
	`last_used_at` text,
	FOREIGN KEY (`room_id`) REFERENCES `rooms`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `viewer_links_secret_hash` ON `viewer_links` (`secret_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `viewer_links_principal_id` ON `viewer_links` (`principal_id`);--> statement-breakpoint
CREATE INDEX `viewer_links_room_id` ON `viewer_links` (`room_id`,`created_at`);