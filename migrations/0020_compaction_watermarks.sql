-- Custom migration (no schema change): the compaction watermarks (analytics/rollups.ts Compaction), one per
-- coarse resolution of each rollup table. Each starts just past the last slot that resolution holds, so the
-- rows before it stay as they are (complete), none exists after it, and ingest from now on writes that
-- resolution only before it and lets its batches compact what follows. An empty database starts at 0.
INSERT INTO `meta` (`key`, `value`) SELECT 'compacted:agg_media:1440', coalesce((SELECT max(`slot`) FROM `agg_media` WHERE `res` = 1440) + 86400000, 0) WHERE true
  ON CONFLICT (`key`) DO NOTHING;
--> statement-breakpoint
INSERT INTO `meta` (`key`, `value`) SELECT 'compacted:agg_media:60', coalesce((SELECT max(`slot`) FROM `agg_media` WHERE `res` = 60) + 3600000, 0) WHERE true
  ON CONFLICT (`key`) DO NOTHING;
--> statement-breakpoint
INSERT INTO `meta` (`key`, `value`) SELECT 'compacted:agg_media:30', coalesce((SELECT max(`slot`) FROM `agg_media` WHERE `res` = 30) + 1800000, 0) WHERE true
  ON CONFLICT (`key`) DO NOTHING;
--> statement-breakpoint
INSERT INTO `meta` (`key`, `value`) SELECT 'compacted:agg_queue:1440', coalesce((SELECT max(`slot`) FROM `agg_queue` WHERE `res` = 1440) + 86400000, 0) WHERE true
  ON CONFLICT (`key`) DO NOTHING;
--> statement-breakpoint
INSERT INTO `meta` (`key`, `value`) SELECT 'compacted:agg_queue:60', coalesce((SELECT max(`slot`) FROM `agg_queue` WHERE `res` = 60) + 3600000, 0) WHERE true
  ON CONFLICT (`key`) DO NOTHING;
--> statement-breakpoint
INSERT INTO `meta` (`key`, `value`) SELECT 'compacted:agg_user:1440', coalesce((SELECT max(`slot`) FROM `agg_user` WHERE `res` = 1440) + 86400000, 0) WHERE true
  ON CONFLICT (`key`) DO NOTHING;
--> statement-breakpoint
INSERT INTO `meta` (`key`, `value`) SELECT 'compacted:agg_user_more:1440', coalesce((SELECT max(`slot`) FROM `agg_user_more` WHERE `res` = 1440) + 86400000, 0) WHERE true
  ON CONFLICT (`key`) DO NOTHING;
--> statement-breakpoint
INSERT INTO `meta` (`key`, `value`) SELECT 'compacted:agg_dim:1440', coalesce((SELECT max((SELECT max(`slot`) FROM `agg_dim` WHERE `dim` = j.value AND `res` = 1440)) FROM json_each('[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95]') j) + 86400000, 0) WHERE true
  ON CONFLICT (`key`) DO NOTHING;
--> statement-breakpoint
INSERT INTO `meta` (`key`, `value`) SELECT 'compacted:agg_mask:1440', coalesce((SELECT max(`slot`) FROM `agg_mask` WHERE `res` = 1440) + 86400000, 0) WHERE true
  ON CONFLICT (`key`) DO NOTHING;
--> statement-breakpoint
INSERT INTO `meta` (`key`, `value`) SELECT 'compacted:agg_proj:1440', coalesce((SELECT max((SELECT max(`slot`) FROM `agg_proj` WHERE `proj` = j.value AND `res` = 1440)) FROM json_each('[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]') j) + 86400000, 0) WHERE true
  ON CONFLICT (`key`) DO NOTHING;
