/**
 * The SQL text of a rollup read (pure): one statement that returns a query's cells from the rollup and
 * resolution `pickRollup` chose (packed as JSON, with the dictionary of the ids it returns), and its
 * one-cell-per-row fallback. query.store.ts runs it and adds what it returns into the Aggregation.
 */
import { METRICS, MULTI_VALUED, type Dimension } from '../catalog';
import {
  compactedFrom,
  CUBE_INCOMPLETE_KEY,
  CUBE_MASK_RESOLUTIONS,
  extremeOf,
  maskBitSql,
  needsWholeCube,
  ROLLUPS,
  watermarkSql,
  type Compaction,
  type PackedMetric,
  type Rollup,
} from '../rollups';
import type { Match } from './filter';
import { alignedTo, uniformRuns, type UniformRun } from './interval';
import type { ReadSpec } from './read-spec';
import { ANALYTICS_LIMITS } from '../limits';

/** The slot of rollupQuery's last row, `[OVER_SLOT, characters of cells, 0]`: what the read would return. */
export const OVER_SLOT = -2;
/**
 * What one row of the unpacked fallback stands for against the read's budget of characters: about a
 * packed cell's text (its values come back as a row of numbers and names instead).
 */
export const UNPACKED_ROW_CHARS = 40;

/** More uniform runs than this and buckets are never computed inside SQL. */
const MAX_SQL_RUNS = 64;
/**
 * Cells are added into buckets by SQL when every bucket spans at least this many slots: then the
 * sort that GROUP BY bucket costs buys several times fewer cells to carry out of D1 (query b: 12
 * hourly slots per PT12H bucket, 9,216 cells become 1,712); with 1 or 2 slots per bucket it does not.
 */
const MIN_SLOTS_TO_GROUP_IN_SQL = 4;
/** Slot lists up to this long are spelled out (`slot IN (…)`) when that lets the primary key reach pushed-down columns. */
const MAX_SLOT_LIST = 1_000;

/**
 * The statement that reads one rollup for a query (pure; exported for bench/profile).
 *
 * It returns the matching cells as they are stored, packed as JSON: one row `[slot, cells, 0]` per slot
 * (per slot and metric in the larger rollups, to keep each value small), `cells` being one flat array
 * `[metric, ids of dims…, cnt, sum, mn, mx, metric, …]`, and one row `[-1, {id: value}, 0]`, the dictionary
 * of the ids returned. Why packed: D1 hands a result to the Worker value by value (local D1 through two
 * isolates, as JSON), which cost more than everything else for a query returning ten thousand rows.
 * Grouping by slot follows the primary key (no sort); the Worker adds the cells of a bucket together
 * (Aggregation does that anyway). Where buckets span many slots, SQL adds them up first and the rows
 * are `[bucket index, cells, 0]` instead (`bucketsInSql`). Ids become strings through the dictionary,
 * read by the same statement (one snapshot), instead of joining dim_values onto every cell.
 * Dimensions fixed by a pushed-down `matches` are filtered in SQL and not returned (`fixed`).
 *
 * A packed rollup (agg_user) returns rows `[slot, rows, 1]` instead, `rows` being flat too, each row
 * `ids of dims…, then each metric of packedMetrics as packedCellSql writes it` (`0`: none of it; `1, sum`:
 * one observation; `cnt, sum, mn, mx`), and
 * the other metrics the query reads come, in the same statement, as cells of the rollups they are
 * kept in: the packed rollup's companion (Rollup.packed.more, same dimensions) and Rollup.packed.othersFrom,
 * with 0 for the dimensions that one lacks, as they were stored here.
 */
export function rollupQuery(spec: ReadSpec, rollup: Rollup, res: number, maxChars: number = ANALYTICS_LIMITS.maxRollupReadBytes) {
  const pushdown = spec.pushdown ?? [];
  const fixed = fixedDims(spec, rollup);
  const dims = rollup.dims.filter((d) => spec.dimensions.has(d.dim) && !fixed.includes(d));
  const runs = uniformRuns(spec.plan);
  const bucketsInSql = runs.length <= MAX_SQL_RUNS && runs.every((r) => r.width >= MIN_SLOTS_TO_GROUP_IN_SQL * res * 60_000);
  const read: Read = { spec, res, dims, params: [], pushed: new Map(), runs, bucketsInSql };

  const parts: Part[] = [];
  let packedMetrics: PackedMetric[] = [];
  if (!rollup.packed) {
    parts.push(windowed(read, rollup.table, (r) => cellsPart(r, rollup, spec.metrics)));
    // The cube's cells where the dimension is absent; none can match a pushed-down value of it.
    if (rollup.cube && !fixed.some((d) => d.index === rollup.cube!.index)) {
      // Masks are kept by day too (rollups.ts CUBE_MASK_RESOLUTIONS): 24 times fewer rows to add up.
      const res = CUBE_MASK_RESOLUTIONS.find((r) => alignedTo(spec.plan, r * 60_000))!;
      parts.push(windowed({ ...read, res }, 'agg_mask', (r) => absentPart(r, rollup.cube!.index, spec.metrics)));
    }
  } else {
    const { more } = rollup.packed;
    const wanted = spec.metrics ?? METRICS.map((_, i) => i);
    packedMetrics = rollup.packed.metrics.filter((m) => wanted.includes(m.metric));
    const inMore = wanted.filter((i) => more.keeps!.includes(i));
    const others = wanted.filter((i) => !rollup.packed!.metrics.some((m) => m.metric === i) && !inMore.includes(i));
    if (packedMetrics.length > 0) parts.push(windowed(read, rollup.table, (r) => packedPart(r, rollup, packedMetrics)));
    if (inMore.length > 0) parts.push(windowed(read, more.table, (r) => cellsPart(r, more, inMore)));
    // A filter on a dimension the other rollup lacks (userId = X) matches none of these metrics: they
    // were stored here with 0 for it.
    const from = ROLLUPS.find((r) => r.table === rollup.packed!.othersFrom)!;
    if (others.length > 0 && pushdown.every((p) => from.dims.some((d) => d.dim === p.dimension))) {
      parts.push(windowed(read, from.table, (r) => cellsPart(r, from, others)));
    }
  }

  // Dimension names are catalogue constants, safe as literals.
  // A multi-valued dimension's value is its list's JSON text (the cube's), handed over as the list.
  const multi = dims.filter((d) => MULTI_VALUED[d.index]).map((d) => `'${d.dim}'`);
  const entry = multi.length > 0 ? `CASE WHEN dim IN (${multi.join(', ')}) THEN json(value) ELSE value END` : 'value';
  const dictionary = dims.length
    ? `(SELECT json_group_object(id, ${entry}) FROM dim_values WHERE dim IN (${dims.map((d) => `'${d.dim}'`).join(', ')}))`
    : `'{}'`;
  // On the cube (or a resolution kept with it), the dictionary row says in its last column whether the cube lacks earlier conversations.
  const flag = needsWholeCube(rollup, res) ? `(SELECT count(*) FROM meta WHERE key = '${CUBE_INCOMPLETE_KEY}')` : '0';
  const cellsSql = [`SELECT -1 AS slot, ${dictionary} AS cells, ${flag} AS packed`, ...parts.map((p) => p.sql)].join(
    '\n    UNION ALL\n    ',
  );
  // The bound on what one read hands the Worker: the cells are computed and kept in D1 (materialized)
  // and measured there; beyond ?budget only the dictionary row and the measure come back (a row
  // [-2, characters, 0]), so a read far too large is refused before it reaches the isolate's 128 MB.
  // The length of the text taken as a blob is its stored byte length, read without scanning it (length()
  // of the text counts characters: up to 12 % of the bench queries' SQL time). Not octet_length(): the
  // same cost, but it needs SQLite 3.43 and a place on D1's list of functions allowed (local D1 refuses
  // e.g. sqlite_version()); CAST and length() are core SQL everywhere.
  const budget = `?${read.params.push(maxChars)}`;
  const sql = `WITH r AS MATERIALIZED (${cellsSql}),
    n AS (SELECT coalesce(sum(length(CAST(cells AS BLOB))), 0) AS chars FROM r WHERE slot >= 0)
    SELECT slot, cells, packed FROM r WHERE slot < 0 OR (SELECT chars FROM n) <= ${budget}
    UNION ALL SELECT ${OVER_SLOT}, chars, 0 FROM n`;
  // The same cells one per row, names joined from dim_values: the fallback when a packed value would
  // exceed SQLite's maximum string length (D1: 2 MB), e.g. a bucket with tens of thousands of agents.
  const cells =
    parts.length > 0
      ? parts.map((p) => p.unpacked).join(' UNION ALL ')
      : `SELECT ${['0 AS slot', '0 AS metric', ...dims.map((d) => `0 AS ${d.column}`), '0 AS cnt', '0 AS sum', '0 AS mn', '0 AS mx'].join(', ')} WHERE false`;
  // Bounded as the packed read is, in rows (UNPACKED_ROW_CHARS each): one past the bound says it is too large.
  const unpackedSql = `SELECT g.slot, g.metric, ${dims.map((_, i) => `v${i}.value, `).join('')}g.cnt, g.sum, g.mn, g.mx
    FROM (${cells}) g
    ${dims.map((d, i) => `LEFT JOIN dim_values v${i} ON v${i}.id = g.${d.column}`).join(' ')}
    LIMIT CAST(${budget} / ${UNPACKED_ROW_CHARS} AS INTEGER) + 1`;
  return { sql, unpackedSql, params: read.params, dims, fixed, bucketsInSql, packedMetrics, scanned: parts.flatMap((p) => p.scanned) };
}

/**
 * The slots of the interval a read takes, with its window's watermark (`windowed`) folded into the bounds:
 * one bound per side, so SQLite seeks the key to the larger start (a separate `slot >= W` would be a filter
 * over every fine row of the interval: query e read 30 days of hours that way).
 */
function slotRange(read: Read): string[] {
  const { start, end } = read.spec.plan;
  return [`slot >= ${read.from ? `max(${start}, ${read.from})` : start}`, `slot < ${read.below ? `min(${end}, ${read.below})` : end}`];
}

/** What every part of one rollupQuery shares. */
interface Read {
  spec: ReadSpec;
  res: number;
  /** Dimensions returned (as ids), in the order of the rollup the query picked. */
  dims: Rollup['dims'];
  /** Bound parameters, numbered across parts. */
  params: unknown[];
  /** The subquery of each (dimension, values) pushed down, bound once and named by every part that applies it. */
  pushed: Map<string, string>;
  runs: UniformRun[];
  bucketsInSql: boolean;
  /** A coarse resolution's rows only before its compaction watermark (`below`), or the fine rows from it (`from`): SQL. */
  below?: string;
  from?: string;
}

/**
 * One part of a read of `table` at `read.res`; for a compacted resolution (rollups.ts Compaction), that
 * part read twice as one: its rows before the watermark and the fine rows from it, whose slots fall in
 * the same buckets (a bucket holds whole slots of the coarse resolution, so of the fine one too).
 */
function windowed(read: Read, table: Compaction['table'], part: (read: Read) => Part): Part {
  const fine = compactedFrom(table, read.res);
  if (fine === undefined) return part(read);
  const watermark = watermarkSql(table, read.res);
  const both = [part({ ...read, below: watermark }), part({ ...read, res: fine, from: watermark })];
  // Nested, because D1 allows few terms in one compound SELECT (5: the dictionary row and up to 4 parts).
  const union = (key: 'sql' | 'unpacked') => `SELECT * FROM (${both.map((p) => p[key]).join(' UNION ALL ')})`;
  return { sql: union('sql'), unpacked: union('unpacked'), scanned: both.flatMap((p) => p.scanned) };
}

/** One SELECT of rollupQuery's UNION ALL, its one-cell-per-row form, and the rows it reads (`FROM … WHERE …`). */
interface Part {
  sql: string;
  unpacked: string;
  scanned: string[];
}

/** Dimensions of `rollup` the query looks at that a pushed-down `matches` fixes. */
function fixedDims(spec: ReadSpec, rollup: Rollup): Rollup['dims'][number][] {
  const pushdown = spec.pushdown ?? [];
  return rollup.dims.filter((d) => pushdown.some((p) => p.dimension === d.dim) && spec.dimensions.has(d.dim));
}

/**
 * The rows of `rollup` in the interval at the resolution, pushed-down filters applied: its FROM and
 * WHERE, and the GROUP BY that chunks them by slot in the order they are read.
 * `metricListed`: the key (res, slot, metric, …) has its metric column fixed by a list.
 */
function scan(read: Read, rollup: Rollup, metricListed: boolean): { from: string; where: string[]; chunk: string } {
  const { spec, res } = read;
  const fixed = fixedDims(spec, rollup);
  const where = rollup.cube
    ? [`dim = ${rollup.cube.index}`, `res = ${res}`]
    : rollup.projection
      ? [`proj = ${rollup.projection.index}`, `res = ${res}`]
      : [`res = ${res}`];
  // Chunks follow the primary key (res, slot, metric, …), so SQLite groups them without sorting;
  // agg_media holds few cells per slot, the others many. A packed row holds up to 84 values: chunks
  // of (slot, media, direction) keep each JSON value well below D1's 2 MB.
  let chunk = rollup.packed ? 'slot, media, direction' : rollup.dims.length > 1 ? 'slot, metric' : 'slot';
  // With the slots listed, SQLite seeks (res, slot, metric, media, …) straight to the pushed-down
  // columns that follow metric in the key instead of scanning the whole interval.
  const width = res * 60_000;
  const slotCount = (spec.plan.end - spec.plan.start) / width;
  // The cube's key is (dim, res, slot, metric, …): listed slots reach a listed metric directly, so a
  // query of 4 metrics reads their cells, not those of the ~40 others stored by the same hours.
  const keyReachesPushdown =
    (metricListed && (rollup.cube !== undefined || rollup.projection !== undefined)) ||
    ((metricListed || rollup.packed !== undefined) && rollup.dims[0] !== undefined && fixed.includes(rollup.dims[0]));
  // One agent's cells: through the rollup's by-user index, always. Named, because on a WITHOUT ROWID
  // table SQLite's planner prefers walking the primary key over the whole interval (query d: 158 ms
  // instead of 2 ms, measured on the bench's 1M-conversation file).
  const seek = rollup.seekIndex && fixed.some((d) => d.dim === rollup.seekIndex!.dim) ? rollup.seekIndex : undefined;
  const from = seek ? `${rollup.table} INDEXED BY ${seek.name}` : rollup.table;
  // Not for the fine rows past a watermark (`windowed`): the list would be the whole interval's fine slots, a
  // seek each, where the watermark leaves a day or so of them to read.
  if (!seek && !read.from && keyReachesPushdown && Number.isInteger(slotCount) && slotCount <= MAX_SLOT_LIST) {
    const slots = Array.from({ length: slotCount }, (_, i) => spec.plan.start + i * width);
    where.push(`slot IN (${slots.join(',')})`);
    if (read.below) where.push(`slot < ${read.below}`);
  } else {
    where.push(...slotRange(read));
    // Grouping in key order would make SQLite walk the key over the whole interval; grouping by an
    // expression leaves it free to reach the few matching cells through another index (agg_user's
    // by user), sorting only those.
    if (fixed.length > 0) chunk = 'slot + 0';
  }
  for (const [dimension, values] of byDimension(spec.pushdown ?? [])) {
    const column = rollup.dims.find((d) => d.dim === dimension)!.column;
    // Two values required of one single-valued dimension: no cell has both.
    where.push(values.length === 1 ? pushedMatch(read, column, dimension, values) : 'false');
  }
  for (const anyOf of spec.anyOf ?? []) {
    const groups = [...byDimension(anyOf)].map(([dimension, values]) => ({
      dimension,
      values,
      key: pushedKey(dimension, values),
      column: rollup.dims.find((d) => d.dim === dimension)?.column,
    }));
    // A rollup lacking one of the dimensions (a packed rollup's companions) reads all its cells: the Aggregation judges them.
    if (groups.some((g) => g.column === undefined)) continue;
    // Past D1's bound-parameter limit the rest are left to the Aggregation too (a filter of many clauses).
    const unbound = groups.filter((g) => !read.pushed.has(g.key)).length;
    if (read.params.length + 2 * unbound > MAX_PUSHED_PARAMS) continue;
    where.push(`(${groups.map((g) => pushedMatch(read, g.column!, g.dimension, g.values, g.key)).join(' OR ')})`);
  }
  return { from, where, chunk };
}

/**
 * Parameters a read binds for its pushed-down values, of D1's 100 per statement: two per distinct
 * (dimension, values), however many parts name them. Required matches take at most one pair per
 * dimension of the rollup; disjunctions beyond the budget are left to the Aggregation.
 */
const MAX_PUSHED_PARAMS = 64;

/** The distinct values of each dimension among these matches, in order. */
function byDimension(matches: readonly Match[]): Map<Dimension, string[]> {
  const out = new Map<Dimension, string[]>();
  for (const { dimension, value } of matches) {
    const values = out.get(dimension);
    if (!values) out.set(dimension, [value]);
    else if (!values.includes(value)) values.push(value);
  }
  return out;
}

const pushedKey = (dimension: Dimension, values: readonly string[]) => JSON.stringify([dimension, ...values]);

/**
 * `column` holds the dictionary id of one of `values` of `dimension`: a subquery of dim_values binding
 * two parameters the first time the read names these values, reused after.
 */
function pushedMatch(
  read: Read,
  column: string,
  dimension: Dimension,
  values: readonly string[],
  key = pushedKey(dimension, values),
): string {
  let ids = read.pushed.get(key);
  if (ids === undefined) {
    read.params.push(dimension, values.length === 1 ? values[0] : JSON.stringify(values));
    const [d, v] = [read.params.length - 1, read.params.length];
    ids =
      values.length === 1
        ? `(SELECT id FROM dim_values WHERE dim = ?${d} AND value = ?${v})`
        : `(SELECT id FROM dim_values WHERE dim = ?${d} AND value IN (SELECT value FROM json_each(?${v})))`;
    read.pushed.set(key, ids);
  }
  return values.length === 1 ? `${column} = ${ids}` : `${column} IN ${ids}`;
}

/** A stored cell's min and max (rollups.ts extremeOf: a cell of one observation keeps neither). */
const CELL_MIN = extremeOf('cnt', 'sum', 'mn');
const CELL_MAX = extremeOf('cnt', 'sum', 'mx');

/** Cells of a rollup keeping one row per metric; `metrics` undefined = all. */
function cellsPart(read: Read, rollup: Rollup, metrics: number[] | undefined): Part {
  const { from, where, chunk } = scan(read, rollup, metrics !== undefined);
  // Metric indexes are catalogue integers: literal, so the planner sees the list.
  if (metrics) where.push(`metric IN (${metrics.length > 0 ? metrics.join(',') : 'NULL'})`);
  const scanned = `${from} WHERE ${where.join(' AND ')}`;
  // Dimensions of the rollup picked that this one lacks: 0 (absent), as the picked one stored them.
  const has = (d: Rollup['dims'][number]) => rollup.dims.some((x) => x.dim === d.dim);
  const kept = read.dims.filter(has).map((d) => d.column);
  const keys = ['metric', ...kept].join(', ');
  const source = read.bucketsInSql
    ? `(SELECT ${sqlBucket(read.runs)} AS slot, ${keys}, sum(cnt) AS cnt, sum(sum) AS sum, min(${CELL_MIN}) AS mn, max(${CELL_MAX}) AS mx
      FROM ${scanned} GROUP BY 1, ${keys})`
    : scanned;
  const dimValues = read.dims.map((d) => (has(d) ? d.column : `0`));
  // Cells as stored: one of one observation has no min or max of its own, readRollup takes its sum.
  const cell = ['metric', ...dimValues, 'cnt', 'sum', 'mn', 'mx'].join(', ');
  return {
    sql: `SELECT slot, ${flatArray(cell)} AS cells, 0 AS packed
    FROM ${source}
    GROUP BY ${read.bucketsInSql ? (rollup.dims.length > 1 ? 'slot, metric' : 'slot') : chunk}`,
    unpacked: `SELECT ${['slot', 'metric', ...read.dims.map((d, i) => `${dimValues[i]} AS ${d.column}`), 'cnt', 'sum', 'mn', 'mx'].join(', ')} FROM ${source}`,
    scanned: [scanned],
  };
}

/**
 * The dimension cube's cells where the dimension `index` is absent: agg_mask's rows without its bit,
 * their masks added together per (slot, metric, media), returned like cellsPart's with 0 (absent)
 * for the dimension, at the coarsest mask resolution the buckets align to (every bucket holds whole
 * slots of it, so a slot's bucket is its start's). A pushed-down mediaType applies here too.
 */
function absentPart(read: Read, index: number, metrics: number[] | undefined): Part {
  const { spec, res } = read;
  const where = [`res = ${res}`, ...slotRange(read), `${maskBitSql(index)} = 0`];
  if (metrics) where.push(`metric IN (${metrics.length > 0 ? metrics.join(',') : 'NULL'})`);
  const media = byDimension(spec.pushdown ?? []).get('mediaType');
  if (media) where.push(media.length === 1 ? pushedMatch(read, 'media', 'mediaType', media) : 'false');
  const scanned = `agg_mask WHERE ${where.join(' AND ')}`;
  const slot = read.bucketsInSql ? sqlBucket(read.runs) : 'slot';
  const source = `(SELECT ${slot} AS slot, metric, media, sum(cnt) AS cnt, sum(sum) AS sum, min(${CELL_MIN}) AS mn, max(${CELL_MAX}) AS mx
      FROM ${scanned} GROUP BY 1, metric, media)`;
  const dimValues = read.dims.map((d) => (d.column === 'media' ? 'media' : '0'));
  const cell = ['metric', ...dimValues, 'cnt', 'sum', 'mn', 'mx'].join(', ');
  return {
    sql: `SELECT slot, ${flatArray(cell)} AS cells, 0 AS packed FROM ${source} GROUP BY slot`,
    unpacked: `SELECT ${['slot', 'metric', ...read.dims.map((d, i) => `${dimValues[i]} AS ${d.column}`), 'cnt', 'sum', 'mn', 'mx'].join(', ')} FROM ${source}`,
    scanned: [scanned],
  };
}

/**
 * One flat JSON array of the values of every row of a group, row after row (`[a1, b1, a2, b2, …]`):
 * JSON text from json_array, so numbers read back exactly as they were stored. Flat rather than
 * an array per row: parsing tens of thousands of small arrays was a third of the Worker's time for
 * a query of many cells. trim only drops json_array's brackets (numbers and null contain none).
 */
function flatArray(columns: string): string {
  return `'[' || group_concat(trim(json_array(${columns}), '[]'), ',') || ']'`;
}

/**
 * One metric of a packed row as JSON numbers, as few as say it: `0` when the row lacks it, `1,sum` for
 * one observation (its min and max are its sum: rollups.ts extremeOf), else `cnt,sum,mn,mx`. Most of a
 * row's metrics are one of the first two (query f of the bench: 89 %), and a result's bytes are what D1
 * carries and the Worker parses: written as 4 values each, f's rows were 2.2 times as many numbers.
 * Integers as SQLite prints them, as json_array does.
 */
function packedCellSql(m: PackedMetric): string {
  return `CASE WHEN ${m.cnt} = 0 THEN '0' WHEN ${m.cnt} = 1 THEN '1,' || ${m.sum} ELSE ${m.cnt} || ',' || ${m.sum} || ',' || coalesce(${m.mn}, 'null') || ',' || coalesce(${m.mx}, 'null') END`;
}

/** Rows of a packed rollup: only `metrics`' columns, and only rows holding one of them. */
function packedPart(read: Read, rollup: Rollup, metrics: PackedMetric[]): Part {
  const { from, where, chunk } = scan(read, rollup, false);
  if (metrics.length < rollup.packed!.metrics.length) where.push(`(${metrics.map((m) => `${m.cnt} > 0`).join(' OR ')})`);
  const scanned = `${from} WHERE ${where.join(' AND ')}`;
  const keys = read.dims.map((d) => d.column);
  // As stored (a metric of one observation has no min or max of its own: readRollup takes its sum); added
  // up in SQL, each row's own first (rollups.ts extremeOf).
  const values = metrics.map((m) => packedCellSql(m));
  const sums = metrics.flatMap((m) => [
    `sum(${m.cnt}) AS ${m.cnt}`,
    `sum(${m.sum}) AS ${m.sum}`,
    `min(${extremeOf(m.cnt, m.sum, m.mn)}) AS ${m.mn}`,
    `max(${extremeOf(m.cnt, m.sum, m.mx)}) AS ${m.mx}`,
  ]);
  const source = read.bucketsInSql
    ? `(SELECT ${[`${sqlBucket(read.runs)} AS slot`, ...keys, ...sums].join(', ')} FROM ${scanned} GROUP BY ${['1', ...keys].join(', ')})`
    : scanned;
  // The fallback's cells: each row once per metric (a literal list), kept where it holds that metric.
  const pick = (column: keyof PackedMetric) => `CASE m.metric ${metrics.map((x) => `WHEN ${x.metric} THEN ${x[column]}`).join(' ')} END`;
  const unpivot = `SELECT ${['slot', 'm.metric AS metric', ...keys, `${pick('cnt')} AS cnt`, `${pick('sum')} AS sum`, `${pick('mn')} AS mn`, `${pick('mx')} AS mx`].join(', ')}
      FROM ${read.bucketsInSql ? source : `(SELECT * FROM ${source})`} CROSS JOIN (${metrics.map((x) => `SELECT ${x.metric} AS metric`).join(' UNION ALL ')}) m`;
  return {
    sql: `SELECT slot, '[' || group_concat(${[...keys.map((k) => `coalesce(${k}, 'null')`), ...values].join(" || ',' || ")}, ',') || ']' AS cells, 1 AS packed
    FROM ${source}
    GROUP BY ${read.bucketsInSql ? 'slot' : chunk}`,
    unpacked: `SELECT * FROM (${unpivot}) WHERE cnt > 0`,
    scanned: [scanned],
  };
}

/** `firstIndex + (slot - start) / width` for the run containing `slot`, as SQL over integer literals. */
function sqlBucket(runs: UniformRun[]): string {
  const expr = (r: UniformRun) => `(${r.firstIndex} + (slot - ${r.start}) / ${r.width})`;
  if (runs.length === 1) return expr(runs[0]!);
  const whens = runs.slice(0, -1).map((r, i) => `WHEN slot < ${runs[i + 1]!.start} THEN ${expr(r)}`);
  return `CASE ${whens.join(' ')} ELSE ${expr(runs[runs.length - 1]!)} END`;
}
