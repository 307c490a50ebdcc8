/**
 * better-sqlite3, loaded from bench/package.json's install (`npm run bench` does it), not from the root
 * lockfile: it has no prebuilt binary these machines can fetch and compiles for minutes, which a plain
 * `npm install` at the root should not pay. Typed here with the part the bench uses, so `tsc` at the
 * root needs no bench install.
 */
import { createRequire } from 'node:module';

export interface SqliteStatement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /** Rows as arrays instead of objects. */
  raw(toggle: boolean): SqliteStatement;
}

export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  pragma(source: string, options?: { simple: boolean }): unknown;
  transaction<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
  close(): void;
}

type SqliteConstructor = new (file: string, options?: { readonly?: boolean }) => SqliteDatabase;

let loaded: SqliteConstructor | null | undefined;

/**
 * The better-sqlite3 constructor, or undefined when the bench's dependencies are not installed, or were
 * installed without its native build (`--ignore-scripts`, as .ci/run does): the package then loads, and
 * only opening a database fails.
 */
export function loadSqlite(): SqliteConstructor | undefined {
  if (loaded === undefined) {
    try {
      const Database = createRequire(import.meta.url)('better-sqlite3') as SqliteConstructor;
      new Database(':memory:').close();
      loaded = Database;
    } catch {
      loaded = null;
    }
  }
  return loaded ?? undefined;
}

/** Opens a database with better-sqlite3; throws a clear error when the bench is not installed. */
export function openSqliteFile(file: string, options?: { readonly?: boolean }): SqliteDatabase {
  const Database = loadSqlite();
  if (!Database)
    throw new Error(
      'better-sqlite3 is not installed or not built: run `npm install --prefix bench` (npm run bench does), or `npm rebuild --prefix bench better-sqlite3` after an install without scripts (.ci/run)',
    );
  return new Database(file, options);
}
