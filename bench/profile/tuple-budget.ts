/**
 * `npx tsx bench/profile/tuple-budget.ts [--quick] [--threads N] [--unique N] [--exclude dim,dim]`
 *
 * The budget measurement of docs/design-any-dimension.md: over the bench's observations (the peers'
 * obs.csv, through DuckDB), how many distinct tuples of the low-cardinality dimensions there are per
 * hour and per day, and how many cells (metric, mediaType, tuple) a per-slot tuple cube would hold.
 * A dimension is conversation-unique (left on the raw path) when it has more than `--unique` distinct
 * values (default 5,000: the simulator's agents, queues and codes are far fewer; conversation, session
 * and contact ids are about one per conversation). Prints each dimension's distinct count, then the
 * per-slot figures (median, p95, max) and the whole month's.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DIMENSIONS } from '../../src/analytics/catalog';
import { DATA_DIR, FULL_SIM, QUICK_SIM, specKey } from '../lib/sim';
import { COLUMNS } from '../peers/observations';
import { openDuckDbMemory } from '../peers/engines';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean' }, threads: { type: 'string' }, unique: { type: 'string' }, exclude: { type: 'string' } },
  });
  const spec = values.quick ? QUICK_SIM : FULL_SIM;
  const csv = path.join(DATA_DIR, `peers-${specKey(spec)}`, 'obs.csv');
  const uniqueAbove = Number(values.unique ?? 5_000);
  // Dimensions left out of the tuple on purpose (comma-separated), e.g. the agent's per-offer context.
  const excluded = new Set((values.exclude ?? '').split(',').filter(Boolean));
  const { conn, close } = await openDuckDbMemory(Number(values.threads ?? 1));
  const q = async (sql: string) => (await conn.runAndReadAll(sql)).getRows();
  try {
    const columns = `{${COLUMNS.map((c) => `'${c}': '${c === 'emit' || c === 'value' ? 'BIGINT' : 'VARCHAR'}'`).join(', ')}}`;
    const t0 = performance.now();
    await conn.run(
      `CREATE VIEW obs AS SELECT * FROM read_csv('${csv.replace(/'/g, "''")}', header = true, nullstr = '', columns = ${columns})`,
    );
    const counts = await q(`SELECT ${DIMENSIONS.map((d) => `approx_count_distinct("${d}")`).join(', ')}, count(*) FROM obs`);
    const distinct = DIMENSIONS.map((d, i) => ({ d, n: Number(counts[0]![i]) }));
    const observations = Number(counts[0]![DIMENSIONS.length]);
    const present = distinct.filter((x) => x.n > 0);
    const unique = present.filter((x) => x.n > uniqueAbove);
    const tuple = present.filter((x) => x.n <= uniqueAbove && x.d !== 'mediaType' && !excluded.has(x.d));
    console.log(`${observations.toLocaleString('en-US')} observations (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    console.log(`dimensions present: ${present.length} of ${DIMENSIONS.length}`);
    console.log(`conversation-unique (> ${uniqueAbove} values): ${unique.map((x) => `${x.d} ${x.n}`).join(', ')}`);
    console.log(`in the tuple (${tuple.length}): ${tuple.map((x) => `${x.d} ${x.n}`).join(', ')}`);
    const key = tuple.map((x) => `"${x.d}"`).join(', ');
    await conn.run(`CREATE TABLE t AS SELECT emit // 3600000 AS hour, metric, "mediaType" AS media, hash(${key}) AS tup FROM obs`);
    for (const [name, slot] of [
      ['hour', 'hour'],
      ['day', 'hour // 24'],
    ] as const) {
      const rows = await q(
        `WITH per AS (SELECT ${slot} AS s, count(DISTINCT tup) AS tuples, count(DISTINCT (metric, media, tup)) AS cells FROM t GROUP BY 1)
         SELECT count(*), median(tuples), quantile_cont(tuples, 0.95), max(tuples), median(cells), quantile_cont(cells, 0.95), max(cells), sum(cells) FROM per`,
      );
      const [slots, tMed, tP95, tMax, cMed, cP95, cMax, cSum] = rows[0]!.map(Number);
      console.log(
        `per ${name} (${slots} slots with data): tuples median ${tMed} p95 ${tP95!.toFixed(0)} max ${tMax}; cells (metric, media, tuple) median ${cMed} p95 ${cP95!.toFixed(0)} max ${cMax}; all slots ${cSum!.toLocaleString('en-US')} cells`,
      );
    }
    const whole = await q(`SELECT count(DISTINCT tup) FROM t`);
    console.log(`distinct tuples over the whole window: ${Number(whole[0]![0]).toLocaleString('en-US')}`);
  } finally {
    close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
