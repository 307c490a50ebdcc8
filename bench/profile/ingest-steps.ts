/**
 * `npx tsx bench/profile/ingest-steps.ts [--quick] [--batches N] [--persist DIR]`
 *
 * Where an ingest request's time goes, outside workerd: src's own ingest runs in Node's V8 — the
 * route's validation (its fast path), then `ingestRecords` of src/analytics/ingest/observations.store.ts
 * (the read of stored rows, the write plan and encoding, the dictionary, the rollup, cube and projection
 * rows, one batch) — against a copy of the benchmark's D1 file, through a small D1 stand-in on
 * better-sqlite3 (a batch is one transaction, as D1's is). Every statement is timed and filed under the
 * table it writes (or reads); what is left of the request is JavaScript. New conversations come from the
 * same simulator with another seed, so they meet existing rollup cells as live traffic does. D1's own
 * costs (its RPC, JSON transport of parameters and results) are not here: `cpu-profile.ts --workload
 * ingest` shows those. Run while no `wrangler dev` uses the database.
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { simulateConversations } from '../../scripts/simulator/index';
import { ingestRecords } from '../../src/analytics/ingest/observations.store';
import { fastIngestBody } from '../../src/analytics/ingest/record.fast';
import { ingestBodySchema, type ConversationRecord } from '../../src/analytics/ingest/record.schema';
import { FULL_SIM, QUICK_SIM, specKey } from '../lib/sim';
import { openSqliteFile, type SqliteDatabase, type SqliteStatement } from '../lib/sqlite';
import { d1File } from '../lib/sqlite-file';
import { findStoreDir } from '../lib/store';

/** Milliseconds and calls per label. */
type Timings = Map<string, { ms: number; calls: number; paramChars: number; changes: number }>;

/** What a statement touches, for its label: the table it writes, else the first table it reads. */
function label(sql: string): string {
  const write = /INSERT (?:OR \w+ )?INTO (\w+)/i.exec(sql) ?? /^\s*UPDATE (\w+)/i.exec(sql) ?? /DELETE FROM (\w+)/i.exec(sql);
  if (write) return `${write[0].split(/\s+/)[0]!.toUpperCase()} ${write[1]}`;
  const read = /FROM (?!json_each)(\w+)/i.exec(sql);
  return read ? `SELECT ${read[1]}` : sql.slice(0, 40);
}

/**
 * Enough of D1's API for the ingest path, on better-sqlite3: numbered parameters as D1 takes them,
 * a batch in one transaction, results shaped as D1's.
 */
class StandInD1 {
  /** Per SQL text: the statement with plain `?` (better-sqlite3 does not take D1's `?1`), and which parameter each is. */
  private readonly cache = new Map<string, { stmt: SqliteStatement & { reader?: boolean }; order: number[] }>();
  constructor(
    private readonly db: SqliteDatabase,
    readonly timings: Timings,
  ) {}

  prepare(sql: string): StandInStatement {
    return new StandInStatement(this, sql, []);
  }

  async batch(statements: StandInStatement[]): Promise<unknown[]> {
    return this.db.transaction(() => statements.map((s) => s.execute()))() as unknown as unknown[];
  }

  /** Runs one statement, timed under its label. */
  execute(sql: string, params: unknown[], mode: 'all' | 'raw'): { rows: unknown[]; changes: number } {
    let prepared = this.cache.get(sql);
    if (!prepared) {
      const order = [...sql.matchAll(/\?(\d+)/g)].map((m) => Number(m[1]) - 1);
      prepared = { stmt: this.db.prepare(sql.replace(/\?\d+/g, '?')), order };
      this.cache.set(sql, prepared);
    }
    const { stmt } = prepared;
    params = prepared.order.map((i) => params[i]);
    const t0 = performance.now();
    let out: { rows: unknown[]; changes: number };
    if (stmt.reader) out = { rows: mode === 'raw' ? stmt.raw(true).all(...params) : stmt.raw(false).all(...params), changes: 0 };
    else out = { rows: [], changes: (stmt.run(...params) as { changes: number }).changes };
    const key = label(sql);
    const t = this.timings.get(key) ?? { ms: 0, calls: 0, paramChars: 0, changes: 0 };
    t.changes += out.changes;
    t.ms += performance.now() - t0;
    t.calls++;
    t.paramChars += params.reduce<number>((n, p) => n + (typeof p === 'string' ? p.length : 8), 0);
    this.timings.set(key, t);
    return out;
  }
}

class StandInStatement {
  constructor(
    private readonly d1: StandInD1,
    private readonly sql: string,
    private readonly params: unknown[],
  ) {}

  bind(...params: unknown[]): StandInStatement {
    return new StandInStatement(this.d1, this.sql, params);
  }

  execute(): { results: unknown[]; meta: { changes: number } } {
    const { rows, changes } = this.d1.execute(this.sql, this.params, 'all');
    return { results: rows, meta: { changes } };
  }

  async all(): Promise<{ results: unknown[]; meta: { changes: number } }> {
    return this.execute();
  }

  async run(): Promise<{ results: unknown[]; meta: { changes: number } }> {
    return this.execute();
  }

  async first(column?: string): Promise<unknown> {
    const row = this.execute().results[0] as Record<string, unknown> | undefined;
    if (row === undefined) return null;
    return column === undefined ? row : (row[column] ?? null);
  }

  async raw(): Promise<unknown[]> {
    return this.d1.execute(this.sql, this.params, 'raw').rows;
  }
}

/**
 * The project's migrations the copy lacks, applied as `wrangler d1 migrations apply` would (its table
 * d1_migrations, statements split at drizzle's breakpoints): the profile runs today's code on today's schema.
 */
function applyPendingMigrations(db: SqliteDatabase): void {
  const applied = new Set((db.prepare('SELECT name FROM d1_migrations').all() as { name: string }[]).map((r) => r.name));
  const dir = path.join(import.meta.dirname, '..', '..', 'migrations');
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    if (applied.has(file)) continue;
    console.log(`applying migration ${file} to the copy`);
    db.transaction(() => {
      for (const statement of readFileSync(path.join(dir, file), 'utf8').split('--> statement-breakpoint')) db.exec(statement);
      db.prepare('INSERT INTO d1_migrations (name) VALUES (?)').run(file);
    })();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { persist: { type: 'string' }, quick: { type: 'boolean' }, batches: { type: 'string' } } });
  const spec = values.quick ? QUICK_SIM : FULL_SIM;
  const batches = Number(values.batches ?? 10);
  const persist = values.persist ?? findStoreDir(`d1-${specKey(spec)}`);
  const source = d1File(persist);
  const copy = path.join('/dev/shm', `sb-bench-ingest-steps-${process.pid}.sqlite`);
  console.log(`copying ${source} to ${copy}`);
  copyFileSync(source, copy);
  if (existsSync(`${source}-wal`)) copyFileSync(`${source}-wal`, `${copy}-wal`);
  const db = openSqliteFile(copy);
  applyPendingMigrations(db);
  const timings: Timings = new Map();
  const d1 = new StandInD1(db, timings) as unknown as D1Database;

  // The days after the stored ones, as a live centre sends them (in time order): what a running ingest
  // writes, compaction included. Conversations of the stored days would all be late (before the watermarks).
  const fresh = simulateConversations({
    days: spec.days,
    conversations: spec.conversations,
    seed: spec.seed + 1000,
    end: new Date(Date.parse(spec.end) + spec.days * 86_400_000),
  });
  let js = 0;
  let bodyChars = 0;
  let observations = 0;
  let conversations = 0;
  try {
    for (let b = 0; b < batches; b++) {
      // next() by hand: `break` out of a for-of would close the generator.
      const batch: unknown[] = [];
      for (let r = fresh.next(); !r.done; r = fresh.next()) {
        batch.push(r.value);
        if (batch.length === 1000) break;
      }
      const body = JSON.stringify({ conversations: batch });
      bodyChars += body.length;
      const sqlBefore = [...timings.values()].reduce((n, t) => n + t.ms, 0);
      const t0 = performance.now();
      const parsed = JSON.parse(body) as unknown;
      // The route's fast path; zod only for a body it declines (the simulator's never are).
      const valid = fastIngestBody(parsed) ?? ingestBodySchema.parse(parsed);
      const result = await ingestRecords(d1, valid.conversations as ConversationRecord[]);
      const total = performance.now() - t0;
      const sql = [...timings.values()].reduce((n, t) => n + t.ms, 0) - sqlBefore;
      js += total - sql;
      observations += result.observations;
      conversations += result.conversations;
    }
  } finally {
    db.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(copy + suffix, { force: true });
  }

  const per = (x: number) => (x / batches).toFixed(1).padStart(8);
  const sqlTotal = [...timings.values()].reduce((n, t) => n + t.ms, 0);
  console.log(
    `\nPer 1,000-conversation request (mean of ${batches}; ${(observations / batches).toFixed(0)} observations, body ${(bodyChars / batches / 1024).toFixed(0)} KiB), ` +
      `Node ${process.version} + better-sqlite3 on a copy of the ${spec.conversations.toLocaleString('en-US')}-conversation database:`,
  );
  console.log('        ms  statements  parameter KiB  rows changed  µs a row');
  for (const [name, t] of [...timings].sort((a, b) => b[1].ms - a[1].ms)) {
    console.log(
      `  ${per(t.ms)}  ${(t.calls / batches).toFixed(1).padStart(10)}  ${(t.paramChars / batches / 1024).toFixed(0).padStart(13)}  ${(t.changes / batches).toFixed(0).padStart(12)}  ${(t.changes ? (t.ms * 1000) / t.changes : 0).toFixed(2).padStart(8)}  sql: ${name}`,
    );
  }
  console.log(`  ${per(sqlTotal)}  = SQL`);
  console.log(`  ${per(js)}  = JavaScript (validation, observations, plan and encoding, rows, parameters)`);
  console.log(
    `  → at most ${Math.round((conversations / (sqlTotal + js)) * 1000).toLocaleString('en-US')} conversations/s on one core, without HTTP, D1's RPC or workerd; ` +
      `the SQL alone ${Math.round((conversations / sqlTotal) * 1000).toLocaleString('en-US')}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
