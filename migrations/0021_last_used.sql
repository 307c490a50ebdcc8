ALTER TABLE `oauth_clients` ADD `last_used_at` text;--> statement-breakpoint
ALTER TABLE `tokens` ADD `last_used_at` text;