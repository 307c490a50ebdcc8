ALTER TABLE `messages` ADD `sender_name` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `messages` ADD `sender_icon_url` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `level` text DEFAULT 'info' NOT NULL;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `avatar_url` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `allow_overrides` integer DEFAULT false NOT NULL;--> statement-breakpoint
-- Hand-added backfill (drizzle-kit writes only the columns above): every earlier message gets the
-- sender it would have had, its webhook's name and its kind's default icon (no webhook had an avatar
-- before this migration); a message whose webhook was deleted gets 'Webhook' and no icon. Its level
-- is the column's default, 'info'.
UPDATE `messages` SET
  `sender_name` = COALESCE((SELECT `name` FROM `webhooks` WHERE `webhooks`.`id` = `messages`.`webhook_id`), 'Webhook'),
  `sender_icon_url` = (SELECT '/assets/chat/icons/' || `kind` || '.svg' FROM `webhooks` WHERE `webhooks`.`id` = `messages`.`webhook_id`);
