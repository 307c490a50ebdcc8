-- Issue 22, item 1: a webhook's URL no longer contains its id.
--
-- Until now the id was both the webhook's name in every message (`webhookId` in history, WebSocket
-- frames and the room page) and the secret in its URL: any `chat:read` token could read it and post
-- as the webhook. From this migration on, `id` is public and the URL carries a separate posting
-- secret (`post_secret`, shown only to `chat:admin` as the webhook's `url`; posts find the row by
-- `post_secret_hash`, its SHA-256).
--
-- What changes for an operator upgrading a database that has webhooks:
-- - Every existing webhook keeps its id, its settings, its gate (rate limit, idempotency keys) and
--   its messages (stored messages and the rooms' copies keep the same `webhookId`: nothing is
--   rewritten).
-- - Every existing webhook URL stops working at once (404 not.found): those URLs were readable by
--   every reader, so keeping them would keep the hole open, and SQL cannot compute the SHA-256 of a
--   new secret. The admin view shows such a webhook with `"url": null` and `"needsRotation": true`.
-- - To give one a URL again: `POST /api/v1/webhooks/{id}/rotate` answers the webhook with its new
--   `url`; give that URL to the sender. Webhooks created after this migration have a URL at once.
DROP INDEX `webhooks_id_hash`;--> statement-breakpoint
ALTER TABLE `webhooks` DROP COLUMN `id_hash`;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `post_secret` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `post_secret_hash` text;--> statement-breakpoint
CREATE UNIQUE INDEX `webhooks_post_secret_hash` ON `webhooks` (`post_secret_hash`);
