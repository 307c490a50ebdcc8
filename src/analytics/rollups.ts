import { AGG_USER_METRICS, packedColumns } from '../db/packed-columns';
import { DIMENSION_INDEX, METRICS, metricIndex, type Dimension } from './catalog';

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
  /** Slot widths kept, in minutes, coarsest first (RESOLUTIONS_MINUTES, minus or plus a few). */
  resolutions: readonly number[];
  /** An index (db/schema.ts) that reaches one value of `dim` directly; readers use it whenever that dimension is fixed. */
  seekIndex?: { dim: Dimension; name: string };
  /**
   * Set for a packed rollup: one row per (res, slot, dims) with columns per metric of `metrics`
   * (PackedMetric) instead of one row per metric. Every other metric is read from `othersFrom`, a
   * rollup keeping the same resolutions and every dimension of this one that applies to them.
   */
  packed?: { metrics: readonly PackedMetric[]; othersFrom: Rollup['table'] };
}

/** A metric of a packed rollup and its four columns (absent from a row: cnt = sum = 0, mn = mx = NULL). */
export interface PackedMetric {
  metric: number;
  cnt: string;
  sum: string;
  mn: string;
  mx: string;
}

/**
 * The metrics agg_user keeps, packed: those an agent emits (catalog.ts), in catalogue order, which
 * is the table's column order (db/packed-columns.ts).
 * The other metrics never carry a userId (it is not applicable to them), so agg_user held them only
 * under user 0, the same cells agg_queue holds: queries read them from agg_queue.
 * D1 allows at most 100 columns per table: 6 key columns + 4 × 21 metrics = 90. More than 23 agent
 * metrics need a second table.
 */
export const USER_METRICS: readonly PackedMetric[] = AGG_USER_METRICS.map((name) => ({
  metric: metricIndex(name),
  ...packedColumns(name),
}));

// An agent metric without columns would be stored nowhere per user, and answered from agg_queue as if no user had it.
const agentMetrics = METRICS.filter((m) => m.participant === 'agent').map((m) => m.name);
if (agentMetrics.join() !== AGG_USER_METRICS.join()) {
  throw new Error("rollups: the agg_user columns (db/packed-columns.ts) are not the catalogue's agent metrics in catalogue order");
}

function rollup(
  table: Rollup['table'],
  dims: [Dimension, string][],
  resolutions: readonly number[] = RESOLUTIONS_MINUTES,
  seekIndex?: Rollup['seekIndex'],
): Rollup {
  return {
    table,
    dims: dims.map(([dim, column]) => ({ dim, column, index: DIMENSION_INDEX[dim] })),
    resolutions,
    ...(seekIndex ? { seekIndex } : {}),
  };
}

/** Slot widths in minutes, coarsest first. Days and hours are UTC; 15 minutes covers every zone offset in use. */
const RESOLUTIONS_MINUTES = [1440, 60, 15] as const;

/** Smallest first. */
export const ROLLUPS: readonly Rollup[] = [
  // Half hours too, here only: a PT30M query over days of every metric (a wallboard's day view) then
  // reads and adds half the cells; it costs this small table ~40% more rows (migration 0004).
  rollup('agg_media', [['mediaType', 'media']], [1440, 60, 30, 15]),
  rollup('agg_queue', [
    ['mediaType', 'media'],
    ['direction', 'direction'],
    ['queueId', 'queue'],
  ]),
  // No 15-minute cells per user: they were 62% of this table's rows (the largest thing stored after
  // the raw rows), for queries that want one agent in quarter hours, which read the raw store instead.
  // Packed (migration 0005): 7 times fewer rows, and ingest's upsert touches each row once.
  {
    ...rollup(
      'agg_user',
      [
        ['mediaType', 'media'],
        ['direction', 'direction'],
        ['queueId', 'queue'],
        ['userId', 'user'],
      ],
      [1440, 60],
      { dim: 'userId', name: 'agg_user_by_user' },
    ),
    packed: { metrics: USER_METRICS, othersFrom: 'agg_queue' },
  },
];

/**
 * The rollup a query reads, and at which resolution: the smallest rollup keeping every dimension
 * it looks at that has a resolution its buckets align to (the coarsest such one); undefined = raw.
 */
export function pickRollup(
  dimensions: Iterable<Dimension>,
  aligned: (resMinutes: number) => boolean,
): { rollup: Rollup; res: number } | undefined {
  const wanted = [...dimensions];
  for (const rollup of ROLLUPS) {
    if (!wanted.every((d) => rollup.dims.some((x) => x.dim === d))) continue;
    const res = rollup.resolutions.find(aligned);
    if (res !== undefined) return { rollup, res };
  }
  return undefined;
}

/** Dimensions any rollup keeps: only their values go into the dictionary. */
export const ROLLUP_DIMENSIONS: readonly { dim: Dimension; index: number }[] = ROLLUPS[ROLLUPS.length - 1]!.dims;
