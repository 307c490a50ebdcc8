/**
 * `npx tsx bench/profile/ingest-steps.ts [--persist DIR] [--quick] [--batches N]`
 *
 * Times the pieces of one 1,000-conversation ingest request outside workerd: the JS steps with
 * src's own pure functions (record schema, toObservations, the observation codec) in Node's V8,
 * and every SQL statement of the ingest batch with better-sqlite3 on a copy of the benchmark's D1
 * file. The rollup cells, chunking and upsert come from src/analytics/ingest/observations.store.ts
 * itself; the other statements (those for new conversations) are written out here, and all run in one transaction, as D1's batch does. New conversations
 * come from the same simulator with another seed, so they hit existing rollup cells as live
 * traffic would. Run while no `wrangler dev` uses the database. A copy still in the layout before
 * migration 0005 (agg_user one row per metric) gets 0005 applied first, timed.
 */
import { openSqliteFile, type SqliteDatabase } from '../lib/sqlite';
import { copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fastIngestBody } from '../../src/analytics/ingest/record.fast';
import { ingestBodySchema, type ConversationRecord } from '../../src/analytics/ingest/record.schema';
import { encodeObservations } from '../../src/analytics/ingest/observation-codec';
import { toObservations, type Observation } from '../../src/analytics/ingest/to-observations';
import { chunkJson, chunkTexts } from '../../src/analytics/ingest/observations.store';
import {
  INSERT_CONVERSATIONS_SQL,
  insertedRow,
  packedUpsertSql,
  rollupUpsertSql as srcRollupUpsertSql,
  SPAN_CLASSES_SQL,
  spanClassRows,
} from '../../src/analytics/ingest/observations-sql';
import { packedRows, rollupRows } from '../../src/analytics/ingest/rollup-rows';
import { notStoredYet, type ConversationWrite } from '../../src/analytics/ingest/write-plan';
import { ROLLUP_DIMENSIONS, ROLLUP_TABLES as ROLLUPS, type Rollup } from '../../src/analytics/rollups';
import { simulateConversations } from '../../scripts/simulator/index';
import { FULL_SIM, QUICK_SIM, specKey } from '../lib/sim';
import { findStoreDir } from '../lib/store';
import { d1File } from '../lib/sqlite-file';

/** src's statement, with plain `?` for better-sqlite3 (its one parameter is ?1). */
const rollupUpsertSql = (rollup: Rollup) => (rollup.packed ? packedUpsertSql(rollup) : srcRollupUpsertSql(rollup)).replace(/\?\d+/g, '?');

const MIGRATION_0005 = path.join(import.meta.dirname, '../../migrations/0005_agg_user_packed.sql');

/** Applies migration 0005 when agg_user is still one row per metric; returns its time in ms, or undefined. */
function packAggUser(db: SqliteDatabase): number | undefined {
  const perMetric = db.prepare(`SELECT 1 FROM pragma_table_info('agg_user') WHERE name = 'metric'`).get();
  if (!perMetric) return undefined;
  const t0 = performance.now();
  const statements = readFileSync(MIGRATION_0005, 'utf8').split('--> statement-breakpoint');
  db.transaction(() => statements.forEach((sql) => db.exec(sql)))();
  db.pragma('wal_checkpoint(TRUNCATE)');
  return performance.now() - t0;
}

const MIGRATION_0011 = path.join(import.meta.dirname, '../../migrations/0011_agg_user_more.sql');

/** Applies migration 0011 (agg_user_more, empty) to a copy made before it. */
function addAggUserMore(db: SqliteDatabase): void {
  if (db.prepare(`SELECT 1 FROM sqlite_schema WHERE name = 'agg_user_more'`).get()) return;
  for (const sql of readFileSync(MIGRATION_0011, 'utf8').split('--> statement-breakpoint')) db.exec(sql);
}

type Timings = Map<string, number[]>;
function time<T>(t: Timings, name: string, fn: () => T): T {
  const t0 = performance.now();
  const out = fn();
  const list = t.get(name) ?? [];
  list.push(performance.now() - t0);
  t.set(name, list);
  return out;
}

function main(): void {
  const { values } = parseArgs({ options: { persist: { type: 'string' }, quick: { type: 'boolean' }, batches: { type: 'string' } } });
  const spec = values.quick ? QUICK_SIM : FULL_SIM;
  const batches = Number(values.batches ?? 10);
  const persist = values.persist ?? findStoreDir(`d1-${specKey(spec)}`);
  const source = d1File(persist);
  const copy = path.join('/tmp', `sb-bench-ingest-steps-${process.pid}.sqlite`);
  console.log(`copying ${source} to ${copy}`);
  copyFileSync(source, copy);
  if (existsSync(`${source}-wal`)) copyFileSync(`${source}-wal`, `${copy}-wal`);
  const db = openSqliteFile(copy);
  const migrated = packAggUser(db);
  addAggUserMore(db);
  if (migrated !== undefined) console.log(`applied migration 0005 to the copy in ${(migrated / 1000).toFixed(1)} s`);
  const t: Timings = new Map();
  const sizes: Record<string, number[]> = {};
  const note = (k: string, v: number) => (sizes[k] ??= []).push(v);

  const fresh = simulateConversations({
    days: spec.days,
    conversations: spec.conversations,
    seed: spec.seed + 1000,
    end: new Date(spec.end),
  });
  const select = db.prepare('SELECT id, first_emit, version, data FROM conversations WHERE id IN (SELECT value FROM json_each(?))');
  const guard = db.prepare(`INSERT INTO ingest_guard (conflicts) SELECT
             (SELECT count(*) FROM json_each(?) j LEFT JOIN conversations c ON c.id = j.value->>0
               WHERE coalesce(c.version, 0) <> j.value->>1)
           + (SELECT count(*) FROM json_each(?) j LEFT JOIN dim_values d ON d.id = j.value->>0
               WHERE d.dim IS NOT j.value->>1 OR d.value IS NOT j.value->>2)`);
  const upsertConv = db.prepare(INSERT_CONVERSATIONS_SQL.replace(/\?\d+/g, '?'));
  const meta = db.prepare(SPAN_CLASSES_SQL.replace(/\?\d+/g, '?'));
  const dimValues = db.prepare('INSERT OR IGNORE INTO dim_values (dim, value) SELECT value->>0, value->>1 FROM json_each(?)');
  const dimSelect = db.prepare(
    'SELECT id, dim, value FROM dim_values WHERE (dim, value) IN (SELECT value->>0, value->>1 FROM json_each(?))',
  );
  const rollupStmts = ROLLUPS.map((r) => ({ rollup: r, stmt: db.prepare(rollupUpsertSql(r)) }));
  const clearGuard = db.prepare('DELETE FROM ingest_guard');

  for (let b = 0; b < batches; b++) {
    // next() by hand: `break` out of a for-of would close the generator.
    const batch: unknown[] = [];
    for (let r = fresh.next(); !r.done && batch.length < 1000; r = batch.length < 999 ? fresh.next() : { done: true, value: undefined })
      batch.push(r.value);
    const body = JSON.stringify({ conversations: batch });
    note('request body bytes', body.length);
    const parsed = time(t, 'js: JSON.parse body', () => JSON.parse(body) as unknown);
    // The route's fast path; zod only for a body it declines (the simulator's never are).
    const valid = time(t, 'js: record validation (fast path)', () => fastIngestBody(parsed) ?? ingestBodySchema.parse(parsed));
    time(t, 'js: the zod schema alone (what a declined body costs)', () => ingestBodySchema.parse(parsed));
    const records = valid.conversations as ConversationRecord[];
    const byConversation = time(t, 'js: toObservations', () => {
      const m = new Map<string, Observation[]>();
      for (const record of records) m.set(record.conversationId, toObservations(record));
      return m;
    });
    const idChunks = chunkJson([...byConversation.keys()]);
    const existing = time(t, 'sql: SELECT existing conversations', () => idChunks.flatMap((c) => select.all(c)));
    if (existing.length > 0) throw new Error('expected new conversations');
    const plan = time(t, 'js: plan (dedupe keys, encode rows)', () => {
      const writes: ConversationWrite[] = [];
      const fresh: Observation[] = [];
      for (const [id, obs] of byConversation) {
        const added = notStoredYet([], obs);
        let first = Infinity;
        let last = -Infinity;
        for (const o of added) {
          first = Math.min(first, o.emit);
          last = Math.max(last, o.emit);
        }
        writes.push({ id, firstEmit: first, lastEmit: last, expectedVersion: 0, data: encodeObservations(added, first, id) });
        fresh.push(...added);
      }
      return { writes, fresh };
    });
    note('observations', plan.fresh.length);
    // The Worker resolves dictionary ids before its batch (src/analytics/dictionary.ts): an insert of
    // the missing pairs and a select, outside the transaction; its isolate cache makes that rare.
    const ids = time(t, 'sql+js: resolve dictionary ids (no isolate cache)', () => {
      const pairs = new Map<string, [string, string]>();
      for (const obs of plan.fresh)
        for (const { dim, index } of ROLLUP_DIMENSIONS)
          if (obs.dims[index] !== undefined) pairs.set(`${dim}\u0000${obs.dims[index]}`, [dim, obs.dims[index] as string]);
      const json = JSON.stringify([...pairs.values()]);
      dimValues.run(json);
      const map = new Map<string, number>();
      for (const row of dimSelect.all(json) as { id: number; dim: string; value: string }[])
        map.set(`${row.dim}\u0000${row.value}`, row.id);
      const k = ROLLUP_DIMENSIONS.length;
      const out = new Int32Array(plan.fresh.length * k);
      plan.fresh.forEach((obs, i) =>
        ROLLUP_DIMENSIONS.forEach(
          ({ dim, index }, j) => (out[i * k + j] = obs.dims[index] === undefined ? 0 : map.get(`${dim}\u0000${obs.dims[index]}`)!),
        ),
      );
      return { ids: out, guard: [...pairs.keys()].map((key) => [map.get(key), ...key.split('\u0000')]) };
    });
    const params = time(t, 'js: rollup cells + JSON parameters', () => {
      // agg_user: packed rows (one per slot and dimension tuple), the others: cells.
      const rows = ROLLUPS.map((r) => (r.packed ? packedRows(r, plan.fresh, ids.ids) : rollupRows(r, plan.fresh, ids.ids)));
      return {
        dictGuard: chunkJson(ids.guard),
        conv: chunkTexts(plan.writes.map(insertedRow)),
        spanClasses: spanClassRows(plan.writes),
        rollups: rows.map((r) => chunkTexts(r)),
        cells: rows.map((r) => r.length),
      };
    });
    note(
      'conversations JSON parameter bytes',
      params.conv.reduce((a, c) => a + c.length, 0),
    );
    ROLLUPS.forEach((r, i) => {
      note(`${r.table} ${r.packed ? 'packed rows' : 'cells'} upserted`, params.cells[i]!);
      note(
        `${r.table} JSON parameter bytes`,
        params.rollups[i]!.reduce((a, c) => a + c.length, 0),
      );
    });
    const tx = db.transaction(() => {
      // New conversations need no version check (their INSERT fails on the key): only the dictionary's.
      time(t, 'sql: ingest_guard check (dictionary)', () => params.dictGuard.forEach((c) => guard.run('[]', c)));
      time(t, 'sql: INSERT conversations (data hex -> BLOB)', () => params.conv.forEach((c) => upsertConv.run(c)));
      time(t, 'sql: meta span classes', () => meta.run(params.spanClasses));
      rollupStmts.forEach(({ rollup, stmt }, i) =>
        time(t, `sql: upsert ${rollup.table} (${rollup.resolutions.join('/')} min)`, () => params.rollups[i]!.forEach((c) => stmt.run(c))),
      );
      time(t, 'sql: DELETE ingest_guard', () => clearGuard.run());
    });
    time(t, 'sql: whole transaction incl. commit', () => tx());
  }
  db.close();
  for (const suffix of ['', '-wal', '-shm']) rmSync(copy + suffix, { force: true });

  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  let js = 0;
  console.log(
    `\nPer 1,000-conversation batch (mean of ${batches}), Node ${process.version} V8 + better-sqlite3 on a copy of the ${spec.conversations.toLocaleString('en-US')}-conversation database:`,
  );
  const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[xs.length >> 1]!;
  console.log(`      mean   median`);
  for (const [name, xs] of t) {
    const m = mean(xs);
    if (name.startsWith('js:')) js += m;
    console.log(`  ${m.toFixed(1).padStart(8)} ${median(xs).toFixed(1).padStart(8)} ms  ${name}`);
  }
  const sql = mean(t.get('sql: whole transaction incl. commit')!) + mean(t.get('sql: SELECT existing conversations')!);
  console.log(`  ${js.toFixed(1).padStart(8)} ms  = JS steps`);
  console.log(`  ${sql.toFixed(1).padStart(8)} ms  = SQL (select + transaction)`);
  console.log(
    `  → at most ${Math.round(1000 / ((js + sql) / 1000)).toLocaleString('en-US')} conversations/s on one core, without HTTP, D1's RPC or workerd`,
  );
  for (const [k, xs] of Object.entries(sizes)) console.log(`  ${mean(xs).toFixed(0).padStart(10)}  ${k}`);
}

main();
