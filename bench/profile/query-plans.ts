/**
 * `npx tsx bench/profile/query-plans.ts [--persist DIR] [--quick]`
 *
 * Where the time of queries a–d goes inside SQLite: takes the SQL the Worker's rollup reader
 * sends from src's own builder (`rollupQuery` in src/analytics/query/rollup-sql.ts; the bucket plan
 * and rollup choice use src's pure functions too), prints EXPLAIN QUERY PLAN, rows
 * read, rows returned (cells packed as JSON chunks) and the SQL time with better-sqlite3 on the
 * local D1 file (no Worker, no HTTP). The gap between this and the end-to-end time is the Worker's
 * own share plus D1's transfer.
 * Run it while no `wrangler dev` uses the database.
 */
import { openSqliteFile } from '../lib/sqlite';
import { parseArgs } from 'node:util';
import path from 'node:path';
import { DIMENSIONS, METRIC_INDEX, type Dimension } from '../../src/analytics/catalog';
import { Aggregation } from '../../src/analytics/query/aggregate';
import { filterDimensions, requiredAnyOf, requiredMatches } from '../../src/analytics/query/filter';
import { aggregateQuerySchema } from '../../src/analytics/query/query.schema';
import { rollupQuery } from '../../src/analytics/query/rollup-sql';
import { pickRollup } from '../../src/analytics/rollups';
import { alignedTo, planBuckets, type BucketPlan } from '../../src/analytics/query/interval';
import { agents, FULL_SIM, QUICK_SIM, specKey } from '../lib/sim';
import { findStoreDir } from '../lib/store';
import { d1File } from '../lib/sqlite-file';
import { timeRuns } from '../lib/stats';
import { benchQueries, type BenchQuery } from '../peers/queries';

/** The statement readRollup would run for `q` (src's own builder), or undefined when the query goes to raw rows. */
export function rollupSql(
  q: BenchQuery,
): { sql: string; params: unknown[]; numbered: unknown[]; source: string; plan: BucketPlan; scanned: string[] } | undefined {
  const plan = planBuckets({ interval: q.body.interval, granularity: q.body.granularity, timeZone: q.body.timeZone });
  // The filter as src's schema reads it (defaults filled in); the pushdowns as src's prepare computes them.
  const filter = aggregateQuerySchema.parse(q.body).filter;
  const dimensions = new Set<Dimension>(['mediaType', ...((q.body.groupBy ?? []) as Dimension[]), ...filterDimensions(filter)]);
  const picked = pickRollup(dimensions, (m) => alignedTo(plan, m * 60_000));
  if (!picked) return undefined;
  const { rollup, res } = picked;
  const metrics = Aggregation.metricsToRead({ metrics: q.body.metrics?.map((n) => METRIC_INDEX.get(n)!) });
  const { sql, params, scanned } = rollupQuery(
    {
      plan,
      metrics,
      dimensions,
      pushdown: requiredMatches(filter),
      anyOf: process.env.NO_ANYOF ? [] : requiredAnyOf(filter),
      needsValues: false,
    },
    rollup,
    res,
  );
  // Plain `?` for better-sqlite3, the parameters repeated in the order they are named (a pushed-down value
  // bound once may be named by several parts). `scanned` keeps its numbers (one part may name ?3 and ?4 only).
  const named = [...sql.matchAll(/\?(\d+)/g)].map((m) => params[Number(m[1]) - 1]);
  return { sql: sql.replace(/\?\d+/g, '?'), params: named, numbered: params, source: `rollup:${rollup.table}@${res}`, plan, scanned };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { persist: { type: 'string' }, quick: { type: 'boolean' } } });
  const spec = values.quick ? QUICK_SIM : FULL_SIM;
  const persist = values.persist ?? findStoreDir(`d1-${specKey(spec)}`);
  const db = openSqliteFile(d1File(persist), { readonly: true });
  const queries = benchQueries(spec.end, agents(spec)[0]!.id);
  for (const q of queries) {
    const built = rollupSql(q);
    console.log(`\n=== query ${q.id}: ${q.title}`);
    if (!built) {
      console.log('  raw rows (no rollup fits)');
      continue;
    }
    const stmt = db.prepare(built.sql);
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${built.sql}`).all(...built.params) as { detail: string }[]).map((r) => r.detail);
    const result = stmt.raw(true).all(...built.params) as [number, string][];
    const rows = result.length;
    const cells = result.reduce((n, [slot, json]) => n + (slot === -1 ? 0 : (JSON.parse(json) as unknown[]).length), 0);
    // Rows the scan touches: the same WHEREs, counted (agg_user's answer reads agg_queue too).
    // Each part with plain `?` and the parameters it names, in order.
    const count = (from: string) => {
      const params = [...from.matchAll(/\?(\d+)/g)].map((m) => built.numbered[Number(m[1]) - 1]);
      return (db.prepare(`SELECT count(*) AS n FROM ${from.replace(/\?\d+/g, '?')}`).get(...params) as { n: number }).n;
    };
    const scanned = built.scanned.reduce((n, from) => n + count(from), 0);
    const t = await timeRuns(async () => stmt.raw(true).all(...built.params), { warmup: 2, minRuns: 20, maxRuns: 20, budgetMs: 0 });
    console.log(
      `  source ${built.source}; ${built.plan.boundaries.length - 1} buckets; rows scanned ${scanned}, rows returned ${rows} (${cells} cells)`,
    );
    console.log(`  SQL alone (better-sqlite3): p50 ${t.p50.toFixed(2)} ms, p95 ${t.p95.toFixed(2)} ms`);
    console.log(`  plan:\n    ${plan.join('\n    ')}`);
  }
  const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'agg_*'`).all() as { name: string }[];
  for (const { name } of tables) {
    const byRes = db.prepare(`SELECT res, count(*) AS n FROM ${name} GROUP BY res`).all() as { res: number; n: number }[];
    console.log(`${name}: ${byRes.map((r) => `res ${r.res}: ${r.n} rows`).join(', ')}`);
  }
  console.log(
    `dim_values: ${(db.prepare('SELECT count(*) AS n FROM dim_values').get() as { n: number }).n} rows; dimensions ${DIMENSIONS.length}`,
  );
  db.close();
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
