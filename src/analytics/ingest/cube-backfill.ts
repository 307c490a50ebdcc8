import { getTableConfig } from 'drizzle-orm/sqlite-core';
import { aggDim, aggMask, aggProj, ROLLUP_SCHEMA } from '../../db/schema';
import { forgetDictionary, readNames } from '../dictionary';
import { analyticsStore, isRetired, type Partition } from '../partitions/partitions';
import { CUBE_BACKFILL_KEY, CUBE_GENERATION, CUBE_INCOMPLETE_KEY, WITH_CUBE } from '../rollups';
import { conversationIdOfKey, keySql, STORED_KEY_SQL } from './conversation-key';
import { DATA_SQL, decodeObservations } from './observation-codec';
import { CLEAR_GUARD_SQL, CubePhase } from './observations-sql';
import { chunkJson, cubePhase, cubeStatements, guardStatements, resolveDimensions } from './observations.store';

/**
 * The dimension cube's backfill. A database that held conversations before the cube existed is marked
 * `cube:incomplete` by migration 0016, and queries of the cube read its raw rows instead. The scheduled
 * handler (src/index.ts) adds those conversations to its cube here, a chunk at a time within a time
 * budget, the next run going on where the last stopped; the last chunk removes the mark, and queries read
 * the cube again.
 *
 * Exact while ingest goes on. Each conversation row says whether the cube holds it (`in_cube`), and ingest
 * adds a fresh observation to the cube only when its conversation is there (write-plan.ts). The phases
 * (observations-sql.ts CubePhase):
 * 1. EMPTYING (marked, no `cube:backfill` key): the cube is emptied, a chunk of rows per statement. What
 *    it holds came from ingests since 0016 of conversations whose earlier observations it lacks; the
 *    backfill adds each conversation whole instead. Ingest meanwhile leaves new conversations out of the
 *    cube (in_cube NULL) for the backfill to add.
 * 2. FILLING (`cube:backfill` = the last rowid done): in rowid order, each chunk of conversations not in
 *    the cube is decoded, its cells added and its rows set in_cube = 1 with their version bumped, in one
 *    batch whose guard fails if any of them changed since they were read (a concurrent ingest): then the
 *    chunk is read again. New conversations go into the cube at ingest now, so no row joins the ones left.
 * 3. The chunk that finds no more rows removes the mark and the key: WHOLE.
 * An ingest planned in one phase and written in another fails its guard (GUARD_SQL ?3) and plans again.
 */

/** Conversations per chunk: ~25 cube rows each, a batch D1 writes in well under a second. */
const CONVERSATIONS_PER_CHUNK = 500;
/** Cube rows per DELETE while emptying (retention.ts deletes as many). */
const ROWS_PER_DELETE = 5_000;
/** Chunks read again after a conflict, per run; the next run tries again. */
const MAX_CONFLICTS = 5;

export interface BackfillReport {
  partition: string;
  /**
   * Where its cube stands at the end of this run; `refused`: marked while conversations hold the current
   * generation (a migration marked the cube without raising CUBE_GENERATION), so nothing was done.
   */
  phase: 'emptying' | 'filling' | 'whole' | 'refused';
  rowsDeleted: number;
  conversationsAdded: number;
  /** Why a run was refused, and the fix. */
  reason?: string;
}

/**
 * The emptying phase's DELETEs (?1: CUBE_BACKFILL_KEY), each of at most ROWS_PER_DELETE rows: every row of
 * agg_dim, agg_mask and agg_proj, and the rows of the resolutions other rollups keep with the cube (Rollup.withCube).
 * Each deletes only while the database is still emptying: a run that read the phase before an overlapping
 * run moved on to filling must not delete the cells that one has filled.
 */
export const EMPTYING_DELETES_SQL = [
  { table: aggDim, where: 'true' },
  { table: aggMask, where: 'true' },
  { table: aggProj, where: 'true' },
  ...WITH_CUBE.map((rollup) => ({ table: ROLLUP_SCHEMA[rollup.table], where: `res IN (${rollup.withCube!.join(', ')})` })),
].map(({ table, where }) => {
  const config = getTableConfig(table);
  const key = config.primaryKeys[0]!.columns.map((c) => c.name).join(', ');
  return `DELETE FROM ${config.name} WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = ?1)
               AND (${key}) IN (SELECT ${key} FROM ${config.name} WHERE ${where} LIMIT ${ROWS_PER_DELETE})`;
});

/** `meta` key: the generation for which no conversation held the current one when the emptying began. */
const CUBE_CHECKED_KEY = 'cube:checked';

/** Whether any conversation holds generation ?1 of the cube. */
const HOLDS_GENERATION_SQL = 'SELECT EXISTS (SELECT 1 FROM conversations WHERE in_cube = ?1) AS found';

/** Conversations not in this generation's cube (?3) after rowid ?1, in rowid order, at most ?2. */
const NEXT_CHUNK_SQL = `SELECT rowid, ${STORED_KEY_SQL} AS key, first_emit, version, ${DATA_SQL} AS data FROM conversations
           WHERE rowid > ?1 AND in_cube IS NOT ?3 ORDER BY rowid LIMIT ?2`;
/** ?1: a JSON array of conversation keys (conversation-key.ts), now in the cube of generation ?2. */
const IN_CUBE_SQL = `UPDATE conversations SET in_cube = ?2, version = version + 1 WHERE id IN (SELECT ${keySql('value')} FROM json_each(?1))`;

/** Backfills the cube of every marked partition that is not retired, until `budgetMs` has passed. */
export async function backfillCubes(
  env: Env,
  now: number,
  { budgetMs, conversationsPerChunk = CONVERSATIONS_PER_CHUNK }: { budgetMs: number; conversationsPerChunk?: number },
): Promise<BackfillReport[]> {
  const store = analyticsStore(env);
  const deadline = Date.now() + budgetMs;
  const reports: BackfillReport[] = [];
  for (const p of store.partitions) {
    if (isRetired(store, p, now)) continue;
    const report = await backfillCube(p, deadline, conversationsPerChunk);
    if (report) reports.push(report);
    if (Date.now() >= deadline) break;
  }
  return reports;
}

/** One database's backfill until `deadline`; undefined when its cube is whole. */
export async function backfillCube(
  p: Pick<Partition, 'name' | 'd1'>,
  deadline: number,
  perChunk: number,
): Promise<BackfillReport | undefined> {
  const { name, d1 } = p;
  let phase = await cubePhase(d1);
  if (phase === CubePhase.WHOLE) return undefined;
  const report: BackfillReport = { partition: name, phase: 'emptying', rowsDeleted: 0, conversationsAdded: 0 };

  if (phase === CubePhase.EMPTYING) {
    // While the cube is emptied no conversation holds the current generation: the migration that marked it
    // raised the generation, and ingest leaves new conversations out meanwhile. One that does means a mark
    // without a new generation; emptying would drop its cells and filling would not add them back (it adds
    // rows of other generations), leaving a cube marked whole that lacks them. Refused instead: queries
    // keep reading the raw rows, and the scheduled handler logs it as an error.
    // The check reads every conversation (no index on in_cube): once per backfill, not in every run
    // that empties (CUBE_CHECKED_KEY holds the generation it was made for until the filling starts).
    const checked =
      (await d1.prepare(`SELECT value FROM meta WHERE key = ?1`).bind(CUBE_CHECKED_KEY).first<number>('value')) === CUBE_GENERATION;
    if (!checked && (await d1.prepare(HOLDS_GENERATION_SQL).bind(CUBE_GENERATION).first<number>('found')) === 1) {
      report.phase = 'refused';
      report.reason =
        'the database is marked cube:incomplete while conversations hold the current generation. The migration that ' +
        'marked it must raise CUBE_GENERATION (src/analytics/rollups.ts); until then queries of the cube read raw rows.';
      return report;
    }
    if (!checked) {
      await d1
        .prepare(`INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`)
        .bind(CUBE_CHECKED_KEY, CUBE_GENERATION)
        .run();
    }
    for (const sql of EMPTYING_DELETES_SQL) {
      for (;;) {
        const { meta } = await d1.prepare(sql).bind(CUBE_BACKFILL_KEY).run();
        report.rowsDeleted += meta.changes;
        if (meta.changes < ROWS_PER_DELETE) break;
        if (Date.now() >= deadline) return report;
      }
    }
    // Empty, and nothing refills it while EMPTYING: ingest adds no conversation to the cube.
    await d1.batch([
      d1.prepare(`INSERT INTO meta (key, value) VALUES (?1, 0) ON CONFLICT (key) DO NOTHING`).bind(CUBE_BACKFILL_KEY),
      d1.prepare(`DELETE FROM meta WHERE key = ?1`).bind(CUBE_CHECKED_KEY),
    ]);
    phase = CubePhase.FILLING;
  }

  report.phase = 'filling';
  let conflicts = 0;
  // At least one chunk a run, whatever the time left: every run makes progress.
  for (let first = true; first || Date.now() < deadline; first = false) {
    const after = (await d1.prepare(`SELECT value FROM meta WHERE key = ?1`).bind(CUBE_BACKFILL_KEY).first<number>('value')) ?? 0;
    const { results } = await d1
      .prepare(NEXT_CHUNK_SQL)
      .bind(after, perChunk, CUBE_GENERATION)
      .all<{ rowid: number; key: string; first_emit: number; version: number; data: string }>();
    const last = results.length < perChunk;
    const names = new Map<number, string>();
    await readNames(
      d1,
      results.map((row) => row.data),
      names,
    );
    const observations = results.flatMap((row) => decodeObservations(row.data, row.first_emit, conversationIdOfKey(row.key), names));
    const dims = await resolveDimensions(d1, name, observations);
    const statements = [
      ...guardStatements(
        d1,
        results.map((row) => [row.key, row.version]),
        dims.guard,
        CubePhase.FILLING,
      ),
      ...cubeStatements(d1, observations, dims),
    ];
    for (const chunk of chunkJson(results.map((row) => row.key))) statements.push(d1.prepare(IN_CUBE_SQL).bind(chunk, CUBE_GENERATION));
    statements.push(
      last
        ? d1.prepare(`DELETE FROM meta WHERE key IN (?1, ?2, ?3)`).bind(CUBE_INCOMPLETE_KEY, CUBE_BACKFILL_KEY, CUBE_CHECKED_KEY)
        : d1.prepare(`UPDATE meta SET value = ?2 WHERE key = ?1`).bind(CUBE_BACKFILL_KEY, results.at(-1)!.rowid),
    );
    statements.push(d1.prepare(CLEAR_GUARD_SQL));
    try {
      await d1.batch(statements);
    } catch (err) {
      // A conversation of the chunk changed since it was read, or a dictionary id this isolate remembers
      // is gone: read the chunk again.
      if (!String(err).includes('ingest_guard_no_conflicts') || ++conflicts > MAX_CONFLICTS) throw err;
      forgetDictionary(name);
      continue;
    }
    report.conversationsAdded += results.length;
    if (last) {
      report.phase = 'whole';
      return report;
    }
  }
  return report;
}
