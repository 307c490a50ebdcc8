import { CUBE_DIMENSIONS, PROJECTION_ROLLUPS, PROJECTION_WIDTH, ROLLUP_DIMENSIONS } from '../rollups';
import type { CubeValues } from './cube-rows';
import { rollupRows } from './rollup-rows';
import type { Observation } from './to-observations';

/*
 * What an ingest adds to the declared projections (rollups.ts PROJECTIONS) as the JSON texts of agg_proj's
 * upsert rows, one list per projection: `[res, slot, metric, proj, media, v0, v1, v2, v3, sum…]`, a cell per
 * (slot, metric, mediaType, tuple of the projection's ids), 0 for a dimension the observation lacks.
 * Pure: observations and their dictionary ids in.
 */

/** agg_proj's key columns after (res, slot, metric), in the order rows give them. */
export const PROJECTION_COLUMNS = ['proj', 'media', ...Array.from({ length: PROJECTION_WIDTH }, (_, k) => `v${k}`)] as const;

const STRIDE = PROJECTION_COLUMNS.length;
const ROLLUP_STRIDE = ROLLUP_DIMENSIONS.length;
const MEDIA_AT = ROLLUP_DIMENSIONS.findIndex((d) => d.dim === 'mediaType');

/** Per projection, where each of its dimensions comes from: a position in ROLLUP_DIMENSIONS or in CUBE_DIMENSIONS. */
const SOURCES = PROJECTION_ROLLUPS.map((rollup) => {
  const own = rollup.dims.slice(1);
  const fromRollup = own.flatMap((d, k) => {
    const at = ROLLUP_DIMENSIONS.findIndex((r) => r.dim === d.dim);
    return at >= 0 ? [{ k, at }] : [];
  });
  // Cube position j -> column k (-1: not in this projection).
  const fromCube = new Int32Array(CUBE_DIMENSIONS.length).fill(-1);
  own.forEach((d, k) => {
    const j = CUBE_DIMENSIONS.findIndex((c) => c.dim === d.dim);
    if (j >= 0) fromCube[j] = k;
  });
  if (fromRollup.length + [...fromCube].filter((k) => k >= 0).length !== own.length)
    throw new Error('projection-rows: a projection names a dimension that is neither a rollup column nor in the cube');
  return { fromRollup, fromCube };
});

/** The writer's view of agg_proj: every key column is a "dimension" of rollupRows. */
const WRITER = PROJECTION_ROLLUPS.map((rollup) => ({ dims: PROJECTION_COLUMNS, resolutions: rollup.resolutions }));

/**
 * agg_proj's rows for `observations`: `ids` holds ROLLUP_DIMENSIONS.length ids per observation, `cube`
 * the cube dimensions each carries (a multi-valued one's id is its whole list's).
 */
export function projectionRows(observations: Observation[], ids: Int32Array, cube: CubeValues): string[][] {
  const n = observations.length;
  return SOURCES.map(({ fromRollup, fromCube }, p) => {
    const tuple = new Int32Array(n * STRIDE);
    for (let i = 0; i < n; i++) {
      const at = i * STRIDE;
      tuple[at] = p;
      tuple[at + 1] = ids[i * ROLLUP_STRIDE + MEDIA_AT]!;
      for (const { k, at: from } of fromRollup) tuple[at + 2 + k] = ids[i * ROLLUP_STRIDE + from]!;
      for (let e = cube.starts[i]!; e < cube.starts[i + 1]!; e++) {
        const j = cube.entries[2 * e]!;
        const k = fromCube[j]!;
        if (k >= 0) tuple[at + 2 + k] = cube.ids[j]![cube.entries[2 * e + 1]!]!;
      }
    }
    return rollupRows(WRITER[p]!, observations, tuple, WRITER[p]!.resolutions, STRIDE);
  });
}
