import { getTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import { aggDim, aggMask, aggMedia, aggProj, aggQueue, aggUser, aggUserMore } from '../../db/schema';
import { SPAN_CLASS_KEY_PREFIX } from '../span-class';
import { analyticsStore, isRetired, type Partition } from './partitions';

/**
 * Retention: a partition whose whole period ended more than ANALYTICS_RETENTION_DAYS ago is never read
 * nor written again (partitions.ts) and its rows are deleted here, from the scheduled handler (the
 * cron in wrangler.toml), a chunk of rows per statement: one statement deleting a 10 GB database
 * would run far past what D1 allows a statement. Each run deletes until `budgetMs` has passed; the
 * next run goes on where it stopped. Only the analytics tables are emptied: a partition that is also
 * the main database `DB` keeps its tokens, rooms and jobs.
 */

/** Rows per DELETE: a few MB of rows, well within a D1 statement's time. */
const ROWS_PER_STATEMENT = 5_000;
/** Time one run spends deleting; a scheduled run may last 15 minutes, the rest waits for the next. */
const BUDGET_MS = 5 * 60_000;

/** Rowid tables deleted by rowid; WITHOUT ROWID rollups by their primary key (from the Drizzle schema). */
const TABLES: { table: string; key: string[] }[] = [
  { table: 'conversations', key: ['rowid'] },
  ...[aggMedia, aggQueue, aggUser, aggUserMore, aggDim, aggMask, aggProj].map(withoutRowid),
  { table: 'dim_values', key: ['rowid'] },
  { table: 'ingest_guard', key: ['rowid'] },
];

function withoutRowid(table: SQLiteTable): { table: string; key: string[] } {
  const config = getTableConfig(table);
  return { table: config.name, key: config.primaryKeys[0]!.columns.map((c) => c.name) };
}

export interface DropReport {
  partition: string;
  rowsDeleted: number;
  /** Every analytics row of the partition is gone. */
  empty: boolean;
}

/** Deletes the rows of every retired partition at `now`, within the budget. */
export async function dropRetiredPartitions(
  env: Env,
  now: number,
  { rowsPerStatement = ROWS_PER_STATEMENT, budgetMs = BUDGET_MS } = {},
): Promise<DropReport[]> {
  const store = analyticsStore(env);
  const deadline = Date.now() + budgetMs;
  const reports: DropReport[] = [];
  for (const p of store.partitions) {
    if (!isRetired(store, p, now)) continue;
    reports.push(await emptyPartition(p, rowsPerStatement, deadline));
    if (Date.now() >= deadline) break;
  }
  return reports;
}

async function emptyPartition(p: Partition, rows: number, deadline: number): Promise<DropReport> {
  let rowsDeleted = 0;
  for (const { table, key } of TABLES) {
    for (;;) {
      const columns = key.join(', ');
      const { meta } = await p.d1
        .prepare(`DELETE FROM ${table} WHERE (${columns}) IN (SELECT ${columns} FROM ${table} LIMIT ${rows})`)
        .run();
      rowsDeleted += meta.changes;
      if (meta.changes < rows) break;
      if (Date.now() >= deadline) return { partition: p.name, rowsDeleted, empty: false };
    }
  }
  // Last: a span-class row bounds reads of rows that may still be there.
  const { meta } = await p.d1
    .prepare(`DELETE FROM meta WHERE substr(key, 1, ?1) = ?2`)
    .bind(SPAN_CLASS_KEY_PREFIX.length, SPAN_CLASS_KEY_PREFIX)
    .run();
  return { partition: p.name, rowsDeleted: rowsDeleted + meta.changes, empty: true };
}
