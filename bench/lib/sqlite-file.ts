/**
 * The local D1 database file `wrangler dev` keeps under its persist directory, opened with
 * better-sqlite3 while no server runs: size after a WAL checkpoint, bytes per table and index
 * (dbstat), row counts.
 */
import { openSqliteFile } from './sqlite';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export function d1File(persistTo: string): string {
  const dir = path.join(persistTo, 'v3', 'd1', 'miniflare-D1DatabaseObject');
  if (!existsSync(dir)) throw new Error(`no local D1 database under ${persistTo}`);
  const files = readdirSync(dir).filter((f) => f.endsWith('.sqlite') && f !== 'metadata.sqlite');
  if (files.length !== 1) throw new Error(`expected one D1 database file in ${dir}, found ${files.join(', ') || 'none'}`);
  return path.join(dir, files[0]!);
}

export interface ObjectSize {
  name: string;
  /** The table an index belongs to (itself for a table). */
  table: string;
  kind: 'table' | 'index';
  bytes: number;
  /** Bytes of payload actually used (the rest is page slack). */
  payload: number;
  rows?: number;
}

export interface Footprint {
  file: string;
  pageSize: number;
  pageCount: number;
  freelistCount: number;
  /** page_count × page_size after a checkpoint: what the database takes on disk. */
  bytes: number;
  objects: ObjectSize[];
}

/** Checkpoints the WAL into the main file (the server must be stopped) and measures it. */
export function measureFootprint(file: string, countRows: string[] = []): Footprint {
  const db = openSqliteFile(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const pageCount = db.pragma('page_count', { simple: true }) as number;
    const freelistCount = db.pragma('freelist_count', { simple: true }) as number;
    const objects: ObjectSize[] = [];
    const master = new Map(
      (
        db.prepare(`SELECT name, tbl_name, type FROM sqlite_master WHERE type IN ('table', 'index')`).all() as {
          name: string;
          tbl_name: string;
          type: string;
        }[]
      ).map((r) => [r.name, r]),
    );
    const stat = db
      .prepare(`SELECT name, sum(pgsize) AS bytes, sum(payload) AS payload FROM dbstat GROUP BY name ORDER BY bytes DESC`)
      .all() as {
      name: string;
      bytes: number;
      payload: number;
    }[];
    for (const s of stat) {
      const m = master.get(s.name);
      const table = m?.tbl_name ?? s.name;
      const row: ObjectSize = { name: s.name, table, kind: m?.type === 'table' ? 'table' : 'index', bytes: s.bytes, payload: s.payload };
      if (m?.type === 'table' && countRows.includes(s.name)) {
        row.rows = (db.prepare(`SELECT count(*) AS n FROM "${s.name}"`).get() as { n: number }).n;
      }
      objects.push(row);
    }
    return { file, pageSize, pageCount, freelistCount, bytes: pageSize * pageCount, objects };
  } finally {
    db.close();
  }
}

export function fileBytes(file: string): number {
  let total = 0;
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(file + suffix)) total += statSync(file + suffix).size;
  return total;
}
