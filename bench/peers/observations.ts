/**
 * The raw observations the peers aggregate, derived from the simulated records without src/: by
 * the test-only reference aggregator's `observationsFromRecords` (written from the README contract,
 * sharing no code with src/analytics/ingest), one conversation at a time so memory stays flat.
 * Dimensions that never apply to a metric are already dropped there (NULL in the peers' tables).
 *
 * Written once per simulation to bench/data/peers-<key>/: obs.csv (DuckDB loads it) and obs.sqlite
 * (the plain SQLite peer: one row per observation, text dimensions, an index on emit).
 */
import { openSqliteFile } from '../lib/sqlite';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { DIMENSIONS } from '../../src/analytics/catalog';
import { observationsFromRecords, type ConversationRecord } from '../../test/support/reference-aggregator';
import { progress } from '../lib/results';
import { DATA_DIR, records, specKey, type SimSpec } from '../lib/sim';

export const COLUMNS = ['metric', 'emit', 'value', ...DIMENSIONS] as const;

export interface PeerData {
  dir: string;
  csv: string;
  sqlite: string;
  observations: number;
  conversations: number;
}

/**
 * One observation as a row: metric, emit (ms), value, then every dimension (null = absent). A
 * multi-valued dimension's list is its JSON text: today's bench queries neither group nor filter by
 * one (queries that do would unnest it: DuckDB's from_json, SQLite's json_each).
 */
export type ObsRow = [string, number, number, ...(string | null)[]];

export function rowsOf(record: unknown): ObsRow[] {
  return observationsFromRecords([record as ConversationRecord]).map((o) => {
    const values = DIMENSIONS.map((d) => {
      const v = o.dims[d];
      return v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);
    });
    return [o.metric, o.time, o.value, ...values] as ObsRow;
  });
}

function csvField(v: string | number | null): string {
  if (v === null) return '';
  const s = String(v);
  if (s === '') throw new Error('empty dimension values never occur (the contract drops them)');
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const SQLITE_SCHEMA = `CREATE TABLE obs (metric TEXT NOT NULL, emit INTEGER NOT NULL, value INTEGER NOT NULL, ${DIMENSIONS.map((d) => `${d} TEXT`).join(', ')})`;

export async function preparePeerData(spec: SimSpec): Promise<PeerData> {
  const dir = path.join(DATA_DIR, `peers-${specKey(spec)}`);
  const csv = path.join(dir, 'obs.csv');
  const sqlite = path.join(dir, 'obs.sqlite');
  const marker = path.join(dir, 'done.json');
  if (existsSync(marker)) {
    const done = JSON.parse(readFileSync(marker, 'utf8')) as { observations: number; conversations: number };
    progress(`peers: reusing ${done.observations.toLocaleString('en-US')} observations in ${dir}`);
    return { dir, csv, sqlite, ...done };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = performance.now();

  const db = openSqliteFile(sqlite);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.exec(SQLITE_SCHEMA);
  const insert = db.prepare(`INSERT INTO obs VALUES (${COLUMNS.map(() => '?').join(', ')})`);
  const insertMany = db.transaction((rows: ObsRow[]) => {
    for (const r of rows) insert.run(r);
  });

  const out = createWriteStream(csv);
  out.write(`${COLUMNS.join(',')}\n`);
  let observations = 0;
  let conversations = 0;
  let pendingRows: ObsRow[] = [];
  let lines: string[] = [];
  const flush = async () => {
    insertMany(pendingRows);
    if (!out.write(lines.join(''))) await once(out, 'drain');
    pendingRows = [];
    lines = [];
  };
  for (const record of records(spec)) {
    for (const row of rowsOf(record)) {
      pendingRows.push(row);
      lines.push(`${row.map(csvField).join(',')}\n`);
      observations++;
    }
    conversations++;
    if (conversations % 2000 === 0) await flush();
    if (conversations % 100_000 === 0) progress(`peers: derived ${conversations.toLocaleString('en-US')} conversations`);
  }
  await flush();
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  progress('peers: indexing the SQLite peer on emit');
  db.exec('CREATE INDEX obs_emit ON obs (emit)');
  db.close();
  writeFileSync(marker, JSON.stringify({ observations, conversations }));
  progress(
    `peers: ${observations.toLocaleString('en-US')} observations of ${conversations.toLocaleString('en-US')} conversations written in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  return { dir, csv, sqlite, observations, conversations };
}
