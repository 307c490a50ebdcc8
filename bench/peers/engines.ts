/** The two peers: DuckDB in-process (raw observations in an in-memory table) and plain SQLite. */
import { openSqliteFile } from '../lib/sqlite';
import { DIMENSIONS } from '../../src/analytics/catalog';
import type { PeerData } from './observations';
import { DUCKDB, SQLITE, type Dialect, type SqlValue } from './queries';

export interface PeerEngine {
  name: string;
  dialect: Dialect;
  /** Runs one SQL statement and materializes every row. */
  rows(sql: string): Promise<SqlValue[][]>;
  explain(sql: string): Promise<string>;
  close(): Promise<void>;
}

/** The part of @duckdb/node-api the peers use. */
export interface DuckConnection {
  run(sql: string): Promise<unknown>;
  runAndReadAll(sql: string): Promise<{ getRows(): unknown[][] }>;
  createAppender(table: string): Promise<DuckAppender>;
  closeSync(): void;
}
export interface DuckAppender {
  appendVarchar(value: string): void;
  appendBigInt(value: bigint): void;
  appendNull(): void;
  endRow(): void;
  closeSync(): void;
}
interface DuckModule {
  DuckDBInstance: {
    create(path: string, options?: Record<string, string>): Promise<{ connect(): Promise<DuckConnection>; closeSync(): void }>;
  };
}

/**
 * @duckdb/node-api lives in bench/package.json, not in the root lockfile (`npm run bench` installs it
 * first). A non-literal specifier keeps `tsc` and `npm ci` at the root from needing it.
 */
export async function loadDuckDb(): Promise<DuckModule | undefined> {
  const specifier = ['@duckdb', 'node-api'].join('/');
  try {
    return (await import(specifier)) as DuckModule;
  } catch {
    return undefined;
  }
}

export async function openDuckDbMemory(threads: number): Promise<{ conn: DuckConnection; close(): void }> {
  const duck = await loadDuckDb();
  if (!duck) throw new Error('@duckdb/node-api is not installed: run `npm install --prefix bench` (npm run bench does)');
  const instance = await duck.DuckDBInstance.create(':memory:', { threads: String(threads) });
  const conn = await instance.connect();
  return {
    conn,
    close() {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

export async function openDuckDb(data: PeerData, threads: number): Promise<PeerEngine & { loadSeconds: number; bytes: number }> {
  const { conn, close } = await openDuckDbMemory(threads);
  const started = performance.now();
  const columns = `{'metric': 'VARCHAR', 'emit': 'BIGINT', 'value': 'BIGINT', ${DIMENSIONS.map((d) => `'${d}': 'VARCHAR'`).join(', ')}}`;
  await conn.run(
    `CREATE TABLE obs AS SELECT * FROM read_csv('${data.csv.replace(/'/g, "''")}', header = true, nullstr = '', columns = ${columns})`,
  );
  const loadSeconds = (performance.now() - started) / 1000;
  const size = await conn
    .runAndReadAll(`SELECT memory_usage_bytes FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'`)
    .catch(() => undefined);
  const bytes = size ? Number(size.getRows()[0]?.[0] ?? NaN) : NaN;
  return {
    name: 'DuckDB',
    dialect: DUCKDB,
    loadSeconds,
    bytes,
    async rows(sql) {
      const reader = await conn.runAndReadAll(sql);
      return reader.getRows() as SqlValue[][];
    },
    async explain(sql) {
      const reader = await conn.runAndReadAll(`EXPLAIN ${sql}`);
      return reader
        .getRows()
        .map((r) => r.map(String).join('\n'))
        .join('\n');
    },
    async close() {
      close();
    },
  };
}

export function openSqlite(data: PeerData): PeerEngine {
  const db = openSqliteFile(data.sqlite, { readonly: true });
  return {
    name: 'SQLite',
    dialect: SQLITE,
    async rows(sql) {
      return db.prepare(sql).raw(true).all() as SqlValue[][];
    },
    async explain(sql) {
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join('\n');
    },
    async close() {
      db.close();
    },
  };
}
