-- Custom (drizzle-kit generate --custom): the cube's second generation (analytics/rollups.ts CUBE_GENERATION)
-- adds agg_user's and agg_user_more's quarter hours (Rollup.withCube). They start empty, so a database
-- already holding conversations is marked `cube:incomplete` again, and a backfill in progress starts over:
-- its emptying phase clears the cube and those quarter hours, and its filling phase adds every conversation
-- whose `in_cube` is not 2. Until then, queries of either read that database's raw rows. No row is rewritten.
DELETE FROM `meta` WHERE `key` = 'cube:backfill';
--> statement-breakpoint
INSERT INTO `meta` (`key`, `value`) SELECT 'cube:incomplete', 1 WHERE EXISTS (SELECT 1 FROM `conversations`)
  ON CONFLICT (`key`) DO NOTHING;
