import { COMPACTION_LAG_MS, COMPACTIONS, compactedKey, extremeOf, ROLLUP_TABLES, type Compaction } from '../rollups';
import { CUBE_DIM_COLUMNS, CUBE_MASK_COLUMNS } from './cube-rows';
import { CubePhase, CUBE_PHASE_EXPR } from './observations-sql';
import { PROJECTION_COLUMNS } from './projection-rows';

/*
 * Compaction (rollups.ts Compaction): the statements an ingest batch ends with, adding the fine rows of
 * whole past periods up into each coarse resolution and moving its watermark, in the batch's transaction.
 */

/** The key columns of a table after (res, slot[, metric]), and a packed table's metric columns. */
function layout(table: Compaction['table']): {
  keys: readonly string[];
  packed?: readonly { cnt: string; sum: string; mn: string; mx: string }[];
} {
  if (table === 'agg_dim') return { keys: CUBE_DIM_COLUMNS };
  if (table === 'agg_mask') return { keys: CUBE_MASK_COLUMNS };
  if (table === 'agg_proj') return { keys: PROJECTION_COLUMNS };
  const rollup = ROLLUP_TABLES.find((r) => r.table === table)!;
  return { keys: rollup.dims.map((d) => d.column), ...(rollup.packed ? { packed: rollup.packed.metrics } : {}) };
}

/**
 * The INSERT that adds `table`'s rows at its fine resolution from the watermark of `res` up to ?1 (ms,
 * a multiple of the period) into rows at `res`. No row of `res` exists there (ingest writes none past the
 * watermark), so it inserts only. A cell of one observation keeps no min or max (rollups.ts extremeOf):
 * 0, or NULL in a packed table, where a metric absent from a row is NULL too.
 */
export function compactionInsertSql(c: Compaction, res: number): string {
  const period = res * 60_000;
  const { keys, packed } = layout(c.table);
  const where = [
    ...(c.leading ? [`${c.leading.column} IN (${c.leading.values.join(', ')})`] : []),
    `res = ${c.fine}`,
    `slot >= (SELECT value FROM meta WHERE key = '${compactedKey(c.table, res)}')`,
    'slot < ?1',
    ...(c.withCube ? [`(${CUBE_PHASE_EXPR}) = ${CubePhase.WHOLE}`] : []),
  ];
  // The period's start (rounded down for slots before 1970 too: SQLite's `/` truncates toward zero).
  const slot = `slot - ((slot % ${period}) + ${period}) % ${period}`;
  if (packed) {
    const values = packed.flatMap((m) => [
      `sum(${m.cnt})`,
      `sum(${m.sum})`,
      `CASE WHEN sum(${m.cnt}) <= 1 THEN NULL ELSE min(${extremeOf(m.cnt, m.sum, m.mn)}) END`,
      `CASE WHEN sum(${m.cnt}) <= 1 THEN NULL ELSE max(${extremeOf(m.cnt, m.sum, m.mx)}) END`,
    ]);
    return `INSERT INTO ${c.table} (res, slot, ${keys.join(', ')}, ${packed.flatMap((m) => [m.cnt, m.sum, m.mn, m.mx]).join(', ')})
      SELECT ${res}, ${slot}, ${keys.join(', ')}, ${values.join(', ')}
      FROM ${c.table} WHERE ${where.join(' AND ')}
      GROUP BY 2, ${keys.join(', ')}`;
  }
  return `INSERT INTO ${c.table} (res, slot, metric, ${keys.join(', ')}, cnt, sum, mn, mx)
    SELECT ${res}, ${slot}, metric, ${keys.join(', ')}, sum(cnt), sum(sum),
      CASE WHEN sum(cnt) = 1 THEN 0 ELSE min(${extremeOf('cnt', 'sum', 'mn')}) END,
      CASE WHEN sum(cnt) = 1 THEN 0 ELSE max(${extremeOf('cnt', 'sum', 'mx')}) END
    FROM ${c.table} WHERE ${where.join(' AND ')}
    GROUP BY 2, metric, ${keys.join(', ')}`;
}

/** Moves the watermark of `table` at `res` to ?1 when it is behind (and, with the cube, while it is whole). */
export function watermarkUpdateSql(c: Compaction, res: number): string {
  return `UPDATE meta SET value = ?1 WHERE key = '${compactedKey(c.table, res)}' AND value < ?1${
    c.withCube ? ` AND (${CUBE_PHASE_EXPR}) = ${CubePhase.WHOLE}` : ''
  }`;
}

/** Each (table, coarse resolution) with its two statements' SQL, built once. */
const STEPS = COMPACTIONS.flatMap((c) =>
  c.coarse.map((res) => ({ period: res * 60_000, insert: compactionInsertSql(c, res), move: watermarkUpdateSql(c, res) })),
);

/**
 * The compaction statements of a batch whose newest observation is at `newest` (ms): for each coarse
 * resolution, the whole periods that ended COMPACTION_LAG_MS or more before it, and before `now`. Each
 * reads the watermark itself, so one that cannot move finds nothing (an index seek).
 */
export function compactionStatements(d1: D1Database, newest: number, now: number): D1PreparedStatement[] {
  const limit = Math.min(newest - COMPACTION_LAG_MS, now);
  if (!Number.isFinite(limit)) return [];
  return STEPS.flatMap((step) => {
    const until = Math.floor(limit / step.period) * step.period;
    return [d1.prepare(step.insert).bind(until), d1.prepare(step.move).bind(until)];
  });
}
