import {
  COMPACTIONS,
  CUBE_BACKFILL_KEY,
  CUBE_INCOMPLETE_KEY,
  extremeOf,
  watermarkSql,
  type Compaction,
  type PackedMetric,
  type Rollup,
} from '../rollups';
import { SPAN_CLASS_KEY_PREFIX, spanClass } from '../span-class';
import { keySql, STORED_KEY_SQL } from './conversation-key';
import { DATA_SQL } from './observation-codec';
import type { ConversationWrite } from './write-plan';

/*
 * The SQL of an ingest, and the JSON rows its statements read. Every statement takes its rows as one
 * JSON array parameter (?1, ?2), read with json_each: D1 charges far more for a bound parameter than
 * for a byte of JSON.
 */

/** The stored conversations among ?1, a JSON array of keys (conversation-key.ts lookupKeys). */
export const READ_CONVERSATIONS_SQL = `SELECT ${STORED_KEY_SQL} AS key, first_emit, version, in_cube, ${DATA_SQL} AS data FROM conversations
           WHERE id IN (SELECT ${keySql('value', 'x')} FROM json_each(?1) WHERE substr(value, 1, 1) = 'x')
              OR id IN (SELECT ${keySql('value', 't')} FROM json_each(?1) WHERE substr(value, 1, 1) = 't')`;

/**
 * Where the database's dimension cube stands (ingest/cube-backfill.ts): WHOLE, it holds every stored
 * observation; in a database marked `cube:incomplete`, EMPTYING (the backfill has not started, or empties
 * the cube first) or FILLING (it adds the rows not in the cube, conversation by conversation).
 */
export const CubePhase = { WHOLE: 0, FILLING: 1, EMPTYING: 2 } as const;
export type CubePhase = (typeof CubePhase)[keyof typeof CubePhase];
export const CUBE_PHASE_EXPR = `CASE WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = '${CUBE_INCOMPLETE_KEY}') THEN ${CubePhase.WHOLE}
           WHEN EXISTS (SELECT 1 FROM meta WHERE key = '${CUBE_BACKFILL_KEY}') THEN ${CubePhase.FILLING} ELSE ${CubePhase.EMPTYING} END`;
export const CUBE_PHASE_SQL = `SELECT ${CUBE_PHASE_EXPR} AS phase`;

/**
 * One guard row: conversations changed since they were read (?1: `[key, version read]` rows), plus
 * dictionary ids that do not (any longer) name what this isolate believes (?2: `[id, dim, value]`
 * rows), plus a cube phase other than the one read (?3); a non-zero count fails ingest_guard's CHECK
 * and so the whole batch.
 */
export const GUARD_SQL = `INSERT INTO ingest_guard (conflicts) SELECT
             (SELECT count(*) FROM json_each(?1) j LEFT JOIN conversations c ON c.id = ${keySql('j.value->>0')}
               WHERE coalesce(c.version, 0) <> j.value->>1)
           + (SELECT count(*) FROM json_each(?2) j LEFT JOIN dim_values d ON d.id = j.value->>0
               WHERE d.dim IS NOT j.value->>1 OR d.value IS NOT j.value->>2)
           + ((${CUBE_PHASE_EXPR}) <> ?3)`;

export const CLEAR_GUARD_SQL = 'DELETE FROM ingest_guard';

/**
 * New conversations (rows of insertedRow), `in_cube` ?2 (CUBE_GENERATION, or NULL while a backfill's cube is emptied);
 * fails on the primary key when another writer got there first.
 */
export const INSERT_CONVERSATIONS_SQL = `WITH r AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each(?1))
           INSERT INTO conversations (id, first_emit, last_emit, span_class, version, data, in_cube)
           SELECT ${keySql('value->>0')}, value->>1, (value->>1) + (value->>2), value->>3, 1, unhex(value->>4), ?2 FROM r`;

/** Conversations that get new observations (rows of updatedRow). */
export const UPDATE_CONVERSATIONS_SQL = `WITH r AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each(?1))
           UPDATE conversations SET first_emit = u.value->>1, last_emit = u.value->>2, span_class = u.value->>3,
           version = u.value->>4, data = unhex(u.value->>5)
           FROM r u WHERE conversations.id = ${keySql('u.value->>0')}`;

/**
 * Records the span classes written and the longest span seen in each (?1: `[class, longest span]`
 * rows), which bound the raw scans of queries per class (span-class.ts). A conversation that moves to
 * a larger class leaves its old class's row behind: that only costs reads one empty index seek.
 */
export const SPAN_CLASSES_SQL = `INSERT INTO meta (key, value) SELECT '${SPAN_CLASS_KEY_PREFIX}' || (value->>0), value->>1 FROM json_each(?1) WHERE true
           ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)`;

/** `[class, longest span]` of each span class among these writes. */
export function spanClassRows(writes: readonly ConversationWrite[]): string {
  const longest = new Map<number, number>();
  for (const w of writes) {
    const span = w.lastEmit - w.firstEmit;
    const c = spanClass(span);
    longest.set(c, Math.max(longest.get(c) ?? 0, span));
  }
  return JSON.stringify([...longest]);
}

// The row texts by hand: JSON.stringify would scan every character of the hex data for escapes.

/** `[key, first emit, span, span class, hex data]` (`data`: the write's observations encoded) */
export function insertedRow(w: ConversationWrite, data: string): string {
  const span = w.lastEmit - w.firstEmit;
  return `[${JSON.stringify(w.key)},${w.firstEmit},${span},${spanClass(span)},"${data}"]`;
}

/** `[key, first emit, last emit, span class, new version, hex data]` */
export function updatedRow(w: ConversationWrite, data: string): string {
  return `[${JSON.stringify(w.key)},${w.firstEmit},${w.lastEmit},${spanClass(w.lastEmit - w.firstEmit)},${w.expectedVersion + 1},"${data}"]`;
}

/**
 * Which of an upsert's rows are written (rollups.ts Compaction): a coarse resolution's only before its
 * watermark, read in the same statement, so a batch and a compaction never interleave. `res` and `slot` as SQL.
 */
function writtenSql(table: Compaction['table'], res: string, slot: string): string {
  const c = COMPACTIONS.find((x) => x.table === table);
  if (!c || c.coarse.length === 0) return 'true';
  return `(${res} NOT IN (${c.coarse.join(', ')}) OR ${slot} < CASE ${res} ${c.coarse.map((r) => `WHEN ${r} THEN ${watermarkSql(c.table, r)}`).join(' ')} END)`;
}

/** The upsert of one rollup's cells (one JSON array of rollup-rows.ts rollupRows rows, or cube-rows.ts cubeRows rows). */
export function rollupUpsertSql(rollup: { table: Compaction['table']; dims: readonly { column: string }[] }): string {
  const k = rollup.dims.length;
  const columns = ['res', 'slot', 'metric', ...rollup.dims.map((d) => d.column)];
  const sum = `value->>${3 + k}`;
  // A cell of one observation keeps no min or max (extremeOf).
  const one = `coalesce(value->>${4 + k}, 1) = 1`;
  const values = [
    'value->>0',
    '(value->>0) * 60000 * (value->>1)',
    'value->>2',
    ...rollup.dims.map((_, i) => `value->>${3 + i}`),
    `coalesce(value->>${4 + k}, 1)`,
    sum,
    `CASE WHEN ${one} THEN 0 ELSE coalesce(value->>${5 + k}, ${sum}) END`,
    `CASE WHEN ${one} THEN 0 ELSE coalesce(value->>${6 + k}, ${sum}) END`,
  ];
  // Each row turned into JSONB once, in a materialized CTE: `->>` on JSON text parses the row again
  // for every field read (about 60% of this statement's time on agg_user, measured in better-sqlite3).
  return `WITH cells AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each(?1))
     INSERT INTO ${rollup.table} (${columns.join(', ')}, cnt, sum, mn, mx)
     SELECT ${values.join(', ')} FROM cells WHERE ${writtenSql(rollup.table, 'value->>0', values[1]!)}
     ON CONFLICT (${columns.join(', ')}) DO UPDATE SET cnt = cnt + excluded.cnt, sum = sum + excluded.sum,
       mn = min(${extremeOf('cnt', 'sum', 'mn')}, ${extremeOf('excluded.cnt', 'excluded.sum', 'excluded.mn')}),
       mx = max(${extremeOf('cnt', 'sum', 'mx')}, ${extremeOf('excluded.cnt', 'excluded.sum', 'excluded.mx')})`;
}

/**
 * The upsert of a packed rollup's rows (one JSON array of rollup-rows.ts packedRows objects). Each row is turned into JSONB once, in a materialized CTE (`->>` on JSON text
 * parses the whole row again for every field read), and each metric's value is looked up once, in
 * a second one, before its four columns are read from it: 19 ms per 1,000 conversations against
 * 28 ms reading every column from the row (better-sqlite3, the bench's 1M-conversation database).
 * Count and sum add up; min and max keep the stored one where the new row lacks the metric (NULL),
 * which SQLite's two-argument min()/max() would turn into NULL.
 */
export function packedUpsertSql(rollup: Rollup): string {
  const columns = ['res', 'slot', ...rollup.dims.map((d) => d.column)];
  const metrics: readonly PackedMetric[] = rollup.packed!.metrics;
  const keys = [
    "value->>'$.k[0]'",
    "(value->>'$.k[0]') * 60000 * (value->>'$.k[1]')",
    ...rollup.dims.map((_, i) => `value->>'$.k[${2 + i}]'`),
  ];
  // m<i>: the metric's value (a number: one observation) or [cnt, sum, mn, mx], as JSON; NULL when the
  // row lacks it. One observation keeps no min or max (extremeOf).
  const values = metrics.flatMap(({ metric: i }) => [
    `CASE WHEN m${i} IS NULL THEN 0 ELSE coalesce(m${i}->>0, 1) END`,
    `CASE WHEN m${i} IS NULL THEN 0 ELSE coalesce(m${i}->>1, m${i}->>'$') END`,
    `CASE WHEN coalesce(m${i}->>0, 1) = 1 THEN NULL ELSE m${i}->>2 END`,
    `CASE WHEN coalesce(m${i}->>0, 1) = 1 THEN NULL ELSE m${i}->>3 END`,
  ]);
  // Min and max as stored and as added (cnt 0: NULL, the metric absent); the result NULL again for one observation.
  const merge = metrics.flatMap((m) => {
    const pair = (column: string, fn: 'min' | 'max') => {
      const stored = extremeOf(m.cnt, m.sum, column);
      const added = extremeOf(`excluded.${m.cnt}`, `excluded.${m.sum}`, `excluded.${column}`);
      return `${column} = CASE WHEN ${m.cnt} + excluded.${m.cnt} <= 1 THEN NULL ELSE coalesce(${fn}(${stored}, ${added}), ${stored}, ${added}) END`;
    };
    return [`${m.cnt} = ${m.cnt} + excluded.${m.cnt}`, `${m.sum} = ${m.sum} + excluded.${m.sum}`, pair(m.mn, 'min'), pair(m.mx, 'max')];
  });
  return `WITH b AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each(?1)),
     r AS MATERIALIZED (SELECT ${[...keys.map((k, i) => `${k} AS ${columns[i]}`), ...metrics.map((m) => `value->'${m.metric}' AS m${m.metric}`)].join(', ')}
       FROM b WHERE ${writtenSql(rollup.table, keys[0]!, keys[1]!)})
     INSERT INTO ${rollup.table} (${[...columns, ...metrics.flatMap((m) => [m.cnt, m.sum, m.mn, m.mx])].join(', ')})
     SELECT ${[...columns, ...values].join(', ')} FROM r WHERE true
     ON CONFLICT (${columns.join(', ')}) DO UPDATE SET ${merge.join(', ')}`;
}
