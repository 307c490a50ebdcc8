import { DIMENSIONS, type Dimension } from '../catalog';
import { decodeObservations } from '../ingest/observation-codec';
import type { DimValues } from '../ingest/to-observations';
import { RESOLUTIONS_MINUTES, ROLLUPS, type Rollup } from '../rollups';
import type { Aggregation } from './aggregate';
import { alignedTo, bucketIndex, uniformRuns, type BucketPlan } from './interval';

/** Where an answer was read from, e.g. `rollup:agg_queue@1440` or `raw`; sent as a response header. */
export type QuerySource = string;

export interface ReadSpec {
  plan: BucketPlan;
  /** Observed metrics to read; undefined = all. */
  metrics?: number[];
  /** Dimensions the aggregation looks at (mediaType, groupBy, filter). */
  dimensions: Set<Dimension>;
  /** Conjunctive `matches` predicates that may be applied while reading, when the filter is that simple. */
  pushdown?: { dimension: Dimension; value: string }[];
  /** Metric predicates and views judge single values: only raw observations have them. */
  needsValues: boolean;
}

/** More uniform runs than this and the bucket is computed in the Worker instead of inside SQL. */
const MAX_SQL_RUNS = 64;
const RAW_PAGE_ROWS = 2_000;

/**
 * Reads every observation (or pre-aggregated cell) the query needs into `aggregation`, from the
 * smallest rollup that keeps all the dimensions it looks at, at the coarsest resolution its buckets
 * align to; otherwise from the raw observations.
 */
export async function readInto(d1: D1Database, spec: ReadSpec, aggregation: Aggregation): Promise<QuerySource> {
  const rollup = ROLLUPS.find((r) => [...spec.dimensions].every((d) => r.dims.some((x) => x.dim === d)));
  const res = RESOLUTIONS_MINUTES.find((m) => alignedTo(spec.plan, m * 60_000));
  if (rollup && res !== undefined && !spec.needsValues) {
    await readRollup(d1, spec, rollup, res, aggregation);
    return `rollup:${rollup.table}@${res}`;
  }
  await readRaw(d1, spec, aggregation);
  return 'raw';
}

/** The statement that reads one rollup for a query (pure; exported for bench/profile). */
export function rollupQuery(spec: ReadSpec, rollup: Rollup, res: number) {
  const runs = uniformRuns(spec.plan);
  const bucketsInSql = runs.length <= MAX_SQL_RUNS;
  const bucketExpr = bucketsInSql ? sqlBucket(runs) : 'slot';
  const dims = rollup.dims.filter((d) => spec.dimensions.has(d.dim));
  const cols = dims.map((d) => d.column);

  const params: unknown[] = [res, spec.plan.start, spec.plan.end];
  const where = ['res = ?1', 'slot >= ?2', 'slot < ?3'];
  if (spec.metrics) {
    params.push(JSON.stringify(spec.metrics));
    where.push(`metric IN (SELECT value FROM json_each(?${params.length}))`);
  }
  for (const p of spec.pushdown ?? []) {
    const column = rollup.dims.find((d) => d.dim === p.dimension)!.column;
    params.push(p.dimension, p.value);
    where.push(`${column} = (SELECT id FROM dim_values WHERE dim = ?${params.length - 1} AND value = ?${params.length})`);
  }
  const inner = `SELECT ${bucketExpr} AS b, metric, ${cols.map((c, i) => `${c} AS c${i}`).join(', ')},
      sum(cnt) AS cnt, sum(sum) AS total, min(mn) AS mn, max(mx) AS mx
    FROM ${rollup.table} WHERE ${where.join(' AND ')}
    GROUP BY b, metric${cols.map((_, i) => `, c${i}`).join('')}`;
  const sql = `SELECT g.b, g.metric, ${cols.map((_, i) => `v${i}.value`).join(', ')}${cols.length ? ',' : ''} g.cnt, g.total, g.mn, g.mx
    FROM (${inner}) g ${cols.map((_, i) => `LEFT JOIN dim_values v${i} ON v${i}.id = g.c${i}`).join(' ')}`;
  return { sql, params, dims, bucketsInSql };
}

async function readRollup(d1: D1Database, spec: ReadSpec, rollup: Rollup, res: number, aggregation: Aggregation): Promise<void> {
  const { sql, params, dims, bucketsInSql } = rollupQuery(spec, rollup, res);
  const rows = await d1.prepare(sql).bind(...params).raw<(number | string | null)[]>();
  const k = dims.length;
  for (const row of rows) {
    const values: DimValues = new Array(DIMENSIONS.length).fill(undefined);
    for (let i = 0; i < k; i++) values[dims[i]!.index] = (row[2 + i] as string | null) ?? undefined;
    const bucket = bucketsInSql ? (row[0] as number) : bucketIndex(spec.plan, row[0] as number);
    if (bucket < 0) continue;
    aggregation.add(bucket, row[1] as number, values, row[2 + k] as number, row[3 + k] as number, row[4 + k] as number, row[5 + k] as number);
  }
}

/** `firstIndex + (slot - start) / width` for the run containing `slot`, as SQL over integer literals. */
function sqlBucket(runs: ReturnType<typeof uniformRuns>): string {
  const expr = (r: (typeof runs)[number]) => `(${r.firstIndex} + (slot - ${r.start}) / ${r.width})`;
  if (runs.length === 1) return expr(runs[0]!);
  const whens = runs.slice(0, -1).map((r, i) => `WHEN slot < ${runs[i + 1]!.start} THEN ${expr(r)}`);
  return `CASE ${whens.join(' ')} ELSE ${expr(runs[runs.length - 1]!)} END`;
}

/**
 * Scans the conversations whose observations can fall in the interval: those that started at most
 * the longest conversation span before it, found through the first_emit index, page by page.
 */
async function readRaw(d1: D1Database, spec: ReadSpec, aggregation: Aggregation): Promise<void> {
  const span = (await d1.prepare(`SELECT value FROM meta WHERE key = 'max_span_ms'`).first<number>('value')) ?? 0;
  const { start, end } = spec.plan;
  const wanted = spec.metrics ? new Set(spec.metrics) : undefined;
  let after: [number, string] = [start - span - 1, ''];
  for (;;) {
    const { results } = await d1
      .prepare(
        `SELECT id, first_emit, data FROM conversations
         WHERE first_emit >= ?1 AND (first_emit > ?1 OR id > ?2) AND first_emit < ?3 AND last_emit >= ?4
         ORDER BY first_emit, id LIMIT ${RAW_PAGE_ROWS}`,
      )
      .bind(after[0], after[1], end, start)
      .all<{ id: string; first_emit: number; data: string }>();
    for (const row of results) {
      for (const obs of decodeObservations(row.data, row.first_emit)) {
        if (obs.emit < start || obs.emit >= end || (wanted && !wanted.has(obs.metric))) continue;
        aggregation.add(bucketIndex(spec.plan, obs.emit), obs.metric, obs.dims, 1, obs.value, obs.value, obs.value, obs.value);
      }
    }
    if (results.length < RAW_PAGE_ROWS) return;
    const last = results[results.length - 1]!;
    after = [last.first_emit, last.id];
  }
}
