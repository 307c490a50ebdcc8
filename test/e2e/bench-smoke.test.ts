/**
 * A smoke version of the benchmark harness (bench/, `npm run bench`): its peers must compute the
 * same answers as the test-only reference aggregator before their timings can mean anything. Small
 * simulated traffic, both peers in memory, no wrangler. DuckDB and better-sqlite3 come from
 * bench/package.json (not the root lockfile): the peers' checks run when `npm install --prefix bench`
 * has been done (npm run bench and .ci/run do it) and are skipped otherwise.
 */
import { describe, expect, it } from 'vitest';
import { loadDuckDb, openDuckDbMemory } from '../../bench/peers/engines';
import { COLUMNS, rowsOf, SQLITE_SCHEMA, type ObsRow } from '../../bench/peers/observations';
import {
  assemble,
  benchQueries,
  canonicalJson,
  DUCKDB,
  peerPlan,
  SQLITE,
  type BenchQuery,
  type Dialect,
  type SqlValue,
} from '../../bench/peers/queries';
import { loadSqlite } from '../../bench/lib/sqlite';
import { percentile } from '../../bench/lib/stats';
import { Results } from '../../bench/lib/results';
import { simulateConversations, simulationConfig } from '../../scripts/simulator';
import {
  aggregateObservations,
  DEFAULT_SERVICE_LEVEL_SETTINGS,
  observationsFromRecords,
  type ConversationRecord,
} from '../support/reference-aggregator';

const END = '2026-11-16T00:00:00.000Z';
const SIM = { days: 3, conversations: 1_500, seed: 42, end: new Date(END) };
const records = [...simulateConversations(SIM)] as ConversationRecord[];
const rows: ObsRow[] = records.flatMap((r) => rowsOf(r));
const agentId = simulationConfig(SIM).agents[0]!.id;
const queries = benchQueries(END, agentId);
const settings = DEFAULT_SERVICE_LEVEL_SETTINGS;

async function peerAnswer(q: BenchQuery, dialect: Dialect, run: (sql: string) => Promise<SqlValue[][]>) {
  const plan = peerPlan(q, dialect);
  const cells = await run(plan.cells);
  const sl = plan.serviceLevel ? await run(plan.serviceLevel) : [];
  return canonicalJson(assemble(q, plan, cells, sl, settings), q.body.metrics);
}

const Sqlite = loadSqlite();
const sqliteInstalled = Sqlite !== undefined;

function sqlitePeer(): (sql: string) => Promise<SqlValue[][]> {
  if (!Sqlite) throw new Error('better-sqlite3 is not installed');
  const db = new Sqlite(':memory:');
  db.exec(SQLITE_SCHEMA);
  const insert = db.prepare(`INSERT INTO obs VALUES (${COLUMNS.map(() => '?').join(', ')})`);
  db.transaction(() => rows.forEach((r) => insert.run(r)))();
  return async (sql) => db.prepare(sql).raw(true).all() as SqlValue[][];
}

const duckInstalled = (await loadDuckDb()) !== undefined;

async function duckPeer(): Promise<(sql: string) => Promise<SqlValue[][]>> {
  const { conn } = await openDuckDbMemory(1);
  await conn.run(SQLITE_SCHEMA.replace(/INTEGER/g, 'BIGINT').replace(/TEXT/g, 'VARCHAR'));
  const appender = await conn.createAppender('obs');
  for (const [metric, emit, value, ...dims] of rows) {
    appender.appendVarchar(metric);
    appender.appendBigInt(BigInt(emit));
    appender.appendBigInt(BigInt(value));
    for (const d of dims) {
      if (d === null) appender.appendNull();
      else appender.appendVarchar(d);
    }
    appender.endRow();
  }
  appender.closeSync();
  return async (sql) => (await conn.runAndReadAll(sql)).getRows() as SqlValue[][];
}

describe('the benchmark harness', () => {
  it('derives one peer row per observation the reference aggregator sees', () => {
    expect(rows.length).toBe(observationsFromRecords(records).length);
    expect(rows.length).toBeGreaterThan(10 * records.length);
  });

  const observations = observationsFromRecords(records);
  const expectedFor = (q: BenchQuery) => canonicalJson(aggregateObservations(observations, q.body, settings), q.body.metrics);

  it.runIf(sqliteInstalled)('answers queries a, b and c in the SQLite peer exactly as the reference aggregator does', async () => {
    const sqlite = sqlitePeer();
    for (const q of queries.filter((x) => x.id !== 'd')) {
      const expected = expectedFor(q);
      expect(JSON.parse(expected).results.length, `query ${q.id} has data`).toBeGreaterThan(0);
      expect(await peerAnswer(q, SQLITE, sqlite), `SQLite, query ${q.id}`).toBe(expected);
    }
  });

  // CI installs the bench's dependencies without install scripts (.ci/run): DuckDB's binary comes as a
  // package, better-sqlite3's would compile for minutes, so there the SQLite comparisons are skipped.
  it.runIf(duckInstalled)(
    'answers queries a, b and c in the DuckDB peer exactly as the reference does, and a–d as the SQLite peer (when built)',
    async () => {
      const duck = await duckPeer();
      const sqlite = sqliteInstalled ? sqlitePeer() : undefined;
      for (const q of queries) {
        const fromDuck = await peerAnswer(q, DUCKDB, duck);
        if (sqlite) expect(fromDuck, `DuckDB vs SQLite, query ${q.id}`).toBe(await peerAnswer(q, SQLITE, sqlite));
        if (q.id !== 'd') expect(fromDuck, `DuckDB vs reference, query ${q.id}`).toBe(expectedFor(q));
      }
    },
  );

  it.runIf(sqliteInstalled)(
    'answers query d (New York days, DST end inside) with agent metrics only: no service level, no queue metrics, for a userId filter',
    async () => {
      const q = queries.find((x) => x.id === 'd')!;
      // 31 local midnights; the day holding the end of daylight saving time (1 November 2026) lasts 25 hours.
      expect(q.boundaries).toHaveLength(31);
      const dstDay = q.boundaries.findIndex((b) => new Date(b).toISOString() === '2026-11-01T04:00:00.000Z');
      expect(q.boundaries[dstDay + 1]! - q.boundaries[dstDay]!).toBe(25 * 3_600_000);
      const fromSqlite = await peerAnswer(q, SQLITE, sqlitePeer());
      const answer = JSON.parse(fromSqlite) as { results: { group: Record<string, string>; data: { metrics: { metric: string }[] }[] }[] };
      expect(answer.results.length).toBeGreaterThan(0);
      const metrics = answer.results.flatMap((r) => r.data.flatMap((d) => d.metrics.map((m) => m.metric)));
      expect(metrics).not.toContain('oServiceLevel');
      expect(metrics).not.toContain('nOffered');
    },
  );

  it('takes nearest-rank percentiles and prints every result row', () => {
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95)).toBe(10);
    const results = new Results();
    results.add({ scenario: 'x', metric: 'p50', value: 12.5, unit: 'ms', peer: 'DuckDB', peerValue: 25 });
    expect(results.rows[0]!.ratio).toBe(0.5);
    expect(results.table()).toContain('DuckDB');
  });
});
