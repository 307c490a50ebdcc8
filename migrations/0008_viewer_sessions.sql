-- Issue 22, item 6: revocation closes a token's WebSockets and voids its tickets; tickets are rate-limited.
--
-- - `ws_tickets.used_at`: a redeemed ticket is kept (marked used) until it expires instead of deleted,
--   so the tickets a token minted in the last 60 s can be counted (at most 30: CHAT_LIMITS.wsTicketsPerToken).
-- - `viewer_sessions`: the rooms where a token opened a WebSocket within the socket lifetime (1 h), so
--   revoking the token can tell exactly those rooms to close its sockets. One row per (token, room),
--   refreshed on every upgrade; rows older than the lifetime are pruned (their sockets are closed by then).
ALTER TABLE `ws_tickets` ADD `used_at` integer;--> statement-breakpoint
CREATE INDEX `ws_tickets_token_expires_at` ON `ws_tickets` (`token_id`,`expires_at`);--> statement-breakpoint
CREATE TABLE `viewer_sessions` (
	`token_id` text NOT NULL,
	`room_id` text NOT NULL,
	`opened_at` integer NOT NULL,
	PRIMARY KEY(`token_id`, `room_id`)
);
--> statement-breakpoint
CREATE INDEX `viewer_sessions_opened_at` ON `viewer_sessions` (`opened_at`);
