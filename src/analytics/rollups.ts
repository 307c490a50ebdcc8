import { DIMENSION_INDEX, type Dimension } from './catalog';

/**
 * The pre-aggregated rollups kept next to the raw observations (tables agg_* in db/schema.ts).
 * Each keeps count/sum/min/max per (resolution, slot, metric, its dimensions). A query whose
 * groupBy and filter dimensions all belong to one rollup, and whose buckets align to one of the
 * resolutions, is answered from the smallest such rollup at the coarsest such resolution.
 */
export interface Rollup {
  table: 'agg_media' | 'agg_queue' | 'agg_user';
  /** Dimensions kept, with the column holding each one's dictionary id (0 = absent). */
  dims: readonly { dim: Dimension; column: string; index: number }[];
}

function rollup(table: Rollup['table'], dims: [Dimension, string][]): Rollup {
  return { table, dims: dims.map(([dim, column]) => ({ dim, column, index: DIMENSION_INDEX[dim] })) };
}

/** Smallest first. */
export const ROLLUPS: readonly Rollup[] = [
  rollup('agg_media', [['mediaType', 'media']]),
  rollup('agg_queue', [
    ['mediaType', 'media'],
    ['direction', 'direction'],
    ['queueId', 'queue'],
  ]),
  rollup('agg_user', [
    ['mediaType', 'media'],
    ['direction', 'direction'],
    ['queueId', 'queue'],
    ['userId', 'user'],
  ]),
];

/** Slot widths in minutes, coarsest first. Days and hours are UTC; 15 minutes covers every zone offset in use. */
export const RESOLUTIONS_MINUTES = [1440, 60, 15] as const;

export function slotOf(emit: number, resMinutes: number): number {
  const width = resMinutes * 60_000;
  return Math.floor(emit / width) * width;
}

/** Dimensions any rollup keeps: only their values go into the dictionary. */
export const ROLLUP_DIMENSIONS: readonly { dim: Dimension; index: number }[] = ROLLUPS[ROLLUPS.length - 1]!.dims;
