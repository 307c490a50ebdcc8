-- Custom migration: agg_media gains a 30-minute resolution (src/analytics/rollups.ts), so a PT30M
-- query with no dimension beyond mediaType reads half the cells it read from quarter hours (the
-- bench's query c: 7 days, every metric). Built exactly from the 15-minute cells already stored
-- (count and sum add up, min and max of the parts); slots are UTC epoch ms >= 1971, so integer
-- division floors.
INSERT INTO `agg_media` (`res`, `slot`, `metric`, `media`, `cnt`, `sum`, `mn`, `mx`)
	SELECT 30, (`slot` / 1800000) * 1800000, `metric`, `media`, sum(`cnt`), sum(`sum`), min(`mn`), max(`mx`)
	FROM `agg_media` WHERE `res` = 15
	GROUP BY 2, `metric`, `media`;
