import { AGG_USER_METRICS, packedColumns } from '../db/packed-columns';
import { APPLIES, DIMENSION_INDEX, DIMENSIONS, METRICS, MULTI_VALUED, metricIndex, UNBOUNDED, type Dimension } from './catalog';

/**
 * The pre-aggregated rollups kept next to the raw observations (tables agg_* in db/schema.ts).
 * Each keeps count/sum/min/max per (resolution, slot, metric, its dimensions). A query whose
 * groupBy and filter dimensions all belong to one rollup, and whose buckets align to one of the
 * resolutions, is answered from the smallest such rollup at the coarsest such resolution.
 */
export interface Rollup {
  table: 'agg_media' | 'agg_queue' | 'agg_user' | 'agg_user_more' | 'agg_dim' | 'agg_proj';
  /** Dimensions kept, with the column holding each one's dictionary id (0 = absent). */
  dims: readonly { dim: Dimension; column: string; index: number }[];
  /** Slot widths kept, in minutes, coarsest first (RESOLUTIONS_MINUTES, minus or plus a few). */
  resolutions: readonly number[];
  /** The only metrics it keeps (catalogue indexes); undefined = every metric. */
  keeps?: readonly number[];
  /** An index (db/schema.ts) that reaches one value of `dim` directly; readers use it whenever that dimension is fixed. */
  seekIndex?: { dim: Dimension; name: string };
  /**
   * Set for a packed rollup: one row per (res, slot, dims) with columns per metric of `metrics`
   * (PackedMetric) instead of one row per metric. The metrics of `more` are read from it, a rollup
   * keeping the same dimensions and resolutions one row per metric; every other metric from
   * `othersFrom`, a rollup keeping the same resolutions and every dimension of this one that applies to them.
   */
  packed?: { metrics: readonly PackedMetric[]; more: Rollup; othersFrom: Rollup['table'] };
  /**
   * Set for the dimension cube's share of one dimension (CUBE): agg_dim's rows with `dim` = this
   * catalogue index hold the cells where the dimension is present, with its value's id in `value`;
   * the cells where it is absent are agg_mask's rows whose presence mask lacks this bit.
   */
  cube?: { index: number };
  /** Set for a declared projection's share of agg_proj (PROJECTIONS): its rows with `proj` = this position. */
  projection?: { index: number };
  /**
   * Resolutions of `resolutions` kept with the dimension cube rather than always (CUBE_GENERATION): written
   * only for conversations in the cube, added by its backfill, and read only while the cube is whole.
   */
  withCube?: readonly number[];
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
 * The metrics agg_user keeps, packed: the 21 agent metrics of the first catalogue, in catalogue order,
 * which is the table's column order (db/packed-columns.ts). D1 allows at most 100 columns per table
 * (6 key columns + 4 × 21 = 90), so this layout does not grow: the agent metrics added since (issue
 * 23: tCfcAnswered, tPark, response times, nConversations…) are kept per user in agg_user_more, one
 * row per metric, and metrics that never carry a userId are read from agg_queue (the same cells).
 */
export const USER_METRICS: readonly PackedMetric[] = AGG_USER_METRICS.map((name) => ({
  metric: metricIndex(name),
  ...packedColumns(name),
}));

// Each packed metric must be one a userId can apply to, in catalogue order (the columns' order).
const packedIndexes = AGG_USER_METRICS.map((name) => metricIndex(name));
if (packedIndexes.some((m, i) => METRICS[m]!.notApplicable.includes('userId') || (i > 0 && m < packedIndexes[i - 1]!))) {
  throw new Error('rollups: the agg_user columns (db/packed-columns.ts) must be metrics a userId applies to, in catalogue order');
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

const USER_DIMS: [Dimension, string][] = [
  ['mediaType', 'media'],
  ['direction', 'direction'],
  ['queueId', 'queue'],
  ['userId', 'user'],
];

/**
 * agg_user's companion (migration 0011): every stored metric a userId applies to that agg_user has no
 * columns for, one row per metric like agg_queue. A metric added to the catalogue lands here with no
 * migration. Not a rollup of its own for the planner: queries reach it through agg_user.
 */
const USER_MORE: Rollup = {
  ...rollup('agg_user_more', USER_DIMS, [1440, 60, 15], { dim: 'userId', name: 'agg_user_more_by_user' }),
  withCube: [15],
  keeps: METRICS.flatMap((m, i) =>
    m.kind !== 'calculated' && APPLIES[i]![DIMENSION_INDEX.userId] && !USER_METRICS.some((p) => p.metric === i) ? [i] : [],
  ),
};

/**
 * A rollup cell of one observation (cnt = 1) keeps no min and max of its own: both are its sum. It stores
 * 0 there (NULL in agg_user's nullable columns), which SQLite's record holds in no byte, where the two
 * integers cost ~24 bytes a conversation across the rollups (most of an agent's quarter-hour cells hold
 * one observation). Readers and merges take `extremeOf` (the min or max column `column` as it reads);
 * cells written before 2026-11-27 hold them explicitly, which reads the same. In agg_user a metric the
 * row lacks (cnt = 0) is NULL.
 */
export function extremeOf(cnt: string, sum: string, column: string): string {
  return `CASE WHEN ${cnt} = 1 THEN ${sum} ELSE ${column} END`;
}

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
  // Packed (migration 0005): 7 times fewer rows, and ingest's upsert touches each row once. Quarter
  // hours per agent (a wallboard's or a schedule's interval; bench query f) are kept with the cube
  // (migration 0018): a database from before them answers such queries from its raw rows until the
  // backfill has added them, as it does for the cube's dimensions.
  {
    ...rollup('agg_user', USER_DIMS, [1440, 60, 15], { dim: 'userId', name: 'agg_user_by_user' }),
    withCube: [15],
    packed: { metrics: USER_METRICS, more: USER_MORE, othersFrom: 'agg_queue' },
  },
];

/** Every rollup table ingest writes (but the cube's, ingest/cube-rows.ts): the planner's rollups and the packed one's companion. */
export const ROLLUP_TABLES: readonly Rollup[] = [...ROLLUPS, USER_MORE];

/**
 * The dimension cube (issue 24; docs/analytics-storage.md, "The dimension cube"): every dimension
 * that is neither a rollup column nor unbounded (catalog.ts), each on its own beside mediaType.
 * agg_dim keeps count/sum/min/max per (dim, hour, metric, media, value) for the observations
 * where the dimension is present (a multi-valued one's value is its whole list, JSON text in the
 * dictionary, so grouping per element, flattening and any-element filters all stay exact); agg_mask
 * keeps them per (res, slot, metric, media, presence mask) for every observation, the mask having
 * the bit DIMENSION_INDEX of each cube dimension the observation carries. A dimension's absent cells
 * are the mask cells without its bit: one small table instead of an "absent" cell per dimension per
 * metric (about as many rows again as the present ones). A query whose groupBy and filter name one
 * cube dimension (and mediaType) reads only that dimension's cells: a new catalogue dimension joins
 * the cube with no migration.
 */
export const CUBE_DIMENSIONS: readonly { dim: Dimension; index: number }[] = DIMENSIONS.flatMap((dim, index) =>
  UNBOUNDED[index] || ['mediaType', 'direction', 'queueId', 'userId'].includes(dim) ? [] : [{ dim, index }],
);

/**
 * agg_dim's resolutions, coarsest first: days and hours. Days cost half as many rows again at ingest
 * (4,141 daily against 8,513 hourly cells per 1,000 bench conversations) and spare a 30-day query
 * adding 24 times as many cells (query e: 57,823 hourly cells took SQLite ~42 ms to add into days).
 * Local days of whole-hour zones read the hours.
 */
export const CUBE_DIM_RESOLUTIONS = [1440, 60] as const;
/** agg_mask's resolutions, coarsest first: its rows are few, and a 30-day read of them by hour would be 24 times more. */
export const CUBE_MASK_RESOLUTIONS = [1440, 60] as const;

/**
 * What `conversations.in_cube` holds for a conversation the cube holds: the cube's generation. Each
 * generation's migration marks a database holding conversations incomplete (0016: agg_dim and agg_mask;
 * 0018: agg_user's and agg_user_more's quarter hours, Rollup.withCube; 0019: agg_proj, PROJECTIONS), and its backfill adds every
 * conversation of an earlier generation (or none) again, whole: no row needs rewriting in a migration.
 * A mark without a new generation is refused by the backfill (cube-backfill.ts), and a test pins one per marking migration.
 */
export const CUBE_GENERATION = 3;

/** Whether reading `rollup` at `res` needs the cube whole (else the database's raw rows answer). */
export function needsWholeCube(rollup: Rollup, res: number): boolean {
  return rollup.cube !== undefined || (rollup.withCube?.includes(res) ?? false);
}

/** The rollups with resolutions kept with the cube (Rollup.withCube); the cube's backfill empties and fills them too. */
export const WITH_CUBE: readonly Rollup[] = ROLLUP_TABLES.filter((r) => r.withCube !== undefined);

/**
 * `meta` keys of a database whose cube lacks conversations stored before it (migration 0016 sets the
 * first; queries of the cube read such a database's raw rows), and of the backfill that adds them
 * (ingest/cube-backfill.ts: present while it fills the cube, its value the last conversation rowid done).
 */
export const CUBE_INCOMPLETE_KEY = 'cube:incomplete';
export const CUBE_BACKFILL_KEY = 'cube:backfill';

/** Bits per presence-mask column (agg_mask m0, m1): exact in a JS number and a SQLite integer. */
export const MASK_BITS = 48;
if (DIMENSIONS.length > 2 * MASK_BITS) throw new Error('rollups: agg_mask holds 96 dimension bits; add a mask column for more');

/** The mask column and bit test of one dimension, as SQL (its bit unset: the dimension is absent). */
export function maskBitSql(index: number): string {
  return index < MASK_BITS ? `(m0 >> ${index}) & 1` : `(m1 >> ${index - MASK_BITS}) & 1`;
}

const CUBE_ROLLUPS: readonly Rollup[] = CUBE_DIMENSIONS.map(({ dim, index }) => ({
  table: 'agg_dim',
  dims: [
    { dim: 'mediaType', column: 'media', index: DIMENSION_INDEX.mediaType },
    { dim, column: 'value', index },
  ],
  resolutions: CUBE_DIM_RESOLUTIONS,
  cube: { index },
}));

/**
 * Declared projections (ClickHouse's term): combinations of dimensions that reports group and filter by
 * together, each kept with the cube in agg_proj as cells per (day or hour, metric, mediaType, the tuple
 * of its dimensions' ids), 0 where a dimension is absent, a multi-valued one's id that of its whole list
 * (as in agg_dim). A query whose dimensions are all in one of them (and mediaType) and that no smaller
 * rollup answers reads it. Every observation is in every projection, so each costs bytes and ingest time
 * (bench/FINDINGS.md); declare what the reports need. Adding one: an entry here, CUBE_GENERATION + 1, and
 * a custom migration that marks the cube incomplete as 0019 does (the backfill then fills it). At most
 * PROJECTION_WIDTH dimensions each; the position is stored, so append only (or empty agg_proj when changing).
 */
export const PROJECTIONS: readonly (readonly Dimension[])[] = [
  // Skills requested by team (bench query g): a multi-valued dimension beside another.
  ['requestedRoutingSkillId', 'teamId'],
  // Queues by routing, team and wrap-up (bench query h: usedRouting and (teamId or wrapUpCode) by queueId).
  ['queueId', 'usedRouting', 'teamId', 'wrapUpCode'],
];

/** agg_proj's value columns: v0…v3. */
export const PROJECTION_WIDTH = 4;

export const PROJECTION_ROLLUPS: readonly Rollup[] = PROJECTIONS.map((dims, index) => {
  if (dims.length > PROJECTION_WIDTH || dims.some((d) => UNBOUNDED[DIMENSION_INDEX[d]] || d === 'mediaType'))
    throw new Error(`rollups: projection ${index} must name at most ${PROJECTION_WIDTH} bounded dimensions besides mediaType`);
  return {
    table: 'agg_proj',
    dims: [
      { dim: 'mediaType', column: 'media', index: DIMENSION_INDEX.mediaType },
      ...dims.map((dim, k) => ({ dim, column: `v${k}`, index: DIMENSION_INDEX[dim] })),
    ],
    resolutions: CUBE_DIM_RESOLUTIONS,
    withCube: CUBE_DIM_RESOLUTIONS,
    projection: { index },
  };
});

/** What the planner may pick, smallest first: the rollups, one dimension's share of the cube, then the projections. */
const PLANNED: readonly Rollup[] = [...ROLLUPS, ...CUBE_ROLLUPS, ...PROJECTION_ROLLUPS];

/**
 * Whether `rollup` holds every cell of these metrics (undefined = all) that a query needs: a packed
 * rollup (with its companion) would miss metrics it keeps nowhere that carry one of its extra
 * dimensions (userId). Today every metric is kept somewhere; this keeps the planner honest if not.
 */
function holds(rollup: Rollup, metrics: readonly number[] | undefined): boolean {
  if (!rollup.packed) return true;
  const from = ROLLUP_BY_TABLE.get(rollup.packed.othersFrom)!;
  const extra = rollup.dims.filter((d) => !from.dims.some((x) => x.dim === d.dim));
  const kept = new Set([...rollup.packed.metrics.map((m) => m.metric), ...(rollup.packed.more.keeps ?? [])]);
  const list = metrics ?? METRICS.map((_, i) => i);
  return list.every((m) => kept.has(m) || METRICS[m]!.kind === 'calculated' || extra.every((d) => !APPLIES[m]![d.index]));
}

/**
 * The rollup a query reads, and at which resolution: the smallest rollup keeping every dimension
 * it looks at, and every cell of its metrics (undefined = all), that has a resolution its buckets
 * align to (the coarsest such one); undefined = raw.
 */
export function pickRollup(
  dimensions: Iterable<Dimension>,
  aligned: (resMinutes: number) => boolean,
  metrics?: readonly number[],
): { rollup: Rollup; res: number } | undefined {
  const wanted = [...dimensions];
  for (const rollup of PLANNED) {
    if (!wanted.every((d) => rollup.dims.some((x) => x.dim === d))) continue;
    if (!holds(rollup, metrics)) continue;
    const res = rollup.resolutions.find(aligned);
    if (res !== undefined) return { rollup, res };
  }
  return undefined;
}

const ROLLUP_BY_TABLE = new Map(ROLLUPS.map((r) => [r.table, r]));

// Rollup columns hold one value: a multi-valued dimension cannot be one.
if (ROLLUPS.some((r) => r.dims.some((d) => MULTI_VALUED[d.index])))
  throw new Error('rollups: a multi-valued dimension cannot be a rollup column');

/** Dimensions the rollups keep as columns, in the order ingest resolves their ids (each rollup's are a prefix). */
export const ROLLUP_DIMENSIONS: readonly { dim: Dimension; index: number }[] = ROLLUPS[ROLLUPS.length - 1]!.dims;

/**
 * Compaction (docs/analytics-storage.md, "Compaction"): of each rollup table, ingest upserts the cells of
 * its finest resolution always (`fine`, the finest of those written together: agg_user's quarter hours go
 * with the cube, so its hours are its fine ones), and those of each coarser one (`coarse`) only before that
 * resolution's watermark, the `meta` value under `compactedKey`. Past the watermark a coarse resolution has
 * no rows: ingest's batches add the fine rows of whole periods up into it once the data has moved
 * COMPACTION_LAG_MS past them, and move the watermark. Readers take the coarse rows before it and the fine
 * ones from it. A coarse cell was upserted once per ingest batch that touched its period (a day: ~30 in
 * the bench), and a day cell of agg_user rewrote a 90-column row each time; compacted, it is written once.
 * A missing key means "never compacted": every resolution is upserted, as before migration 0020.
 */
export interface Compaction {
  table: Rollup['table'] | 'agg_mask';
  fine: number;
  /** Coarser resolutions kept, coarsest first. */
  coarse: readonly number[];
  /** Written with the cube (CUBE_GENERATION): compacted only while the cube is whole. */
  withCube: boolean;
  /** The values of the key's leading column that precedes `res` (agg_dim's dim, agg_proj's proj), for index seeks. */
  leading?: { column: string; values: readonly number[] };
}

/** A table's compaction from the resolutions written together (the finest is the fine one). */
function compaction(
  table: Compaction['table'],
  resolutions: readonly number[],
  withCube: boolean,
  leading?: Compaction['leading'],
): Compaction {
  const fine = Math.min(...resolutions);
  return { table, fine, coarse: resolutions.filter((res) => res !== fine), withCube, ...(leading ? { leading } : {}) };
}

export const COMPACTIONS: readonly Compaction[] = [
  ...ROLLUP_TABLES.map((r) =>
    compaction(
      r.table,
      r.resolutions.filter((res) => !r.withCube?.includes(res)),
      false,
    ),
  ),
  compaction('agg_dim', CUBE_DIM_RESOLUTIONS, true, { column: 'dim', values: CUBE_DIMENSIONS.map((d) => d.index) }),
  compaction('agg_mask', CUBE_MASK_RESOLUTIONS, true),
  compaction('agg_proj', CUBE_DIM_RESOLUTIONS, true, { column: 'proj', values: PROJECTIONS.map((_, i) => i) }),
];

/** How long after a period ends its observations may still arrive cheaply: later ones are upserted into the coarse rows too. */
export const COMPACTION_LAG_MS = 60 * 60_000;

/** The `meta` key of a coarse resolution's watermark (ms: the first slot not compacted). */
export function compactedKey(table: Compaction['table'], res: number): string {
  return `compacted:${table}:${res}`;
}

/** A watermark as SQL: its value, or (never compacted) beyond any slot. */
export function watermarkSql(table: Compaction['table'], res: number): string {
  return `coalesce((SELECT value FROM meta WHERE key = '${compactedKey(table, res)}'), ${NEVER_COMPACTED})`;
}

/** Beyond any slot (year ~285,000), exact in SQLite's integers and a JS number. */
const NEVER_COMPACTED = 9_000_000_000_000_000;

/** The resolution whose rows hold `table`'s cells at `res` past its watermark; undefined when `res` is not compacted. */
export function compactedFrom(table: Compaction['table'], res: number): number | undefined {
  const c = COMPACTIONS.find((x) => x.table === table);
  return c?.coarse.includes(res) ? c.fine : undefined;
}
