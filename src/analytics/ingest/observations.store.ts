import { ApiError } from '../../http/api-error';
import type { Dimension } from '../catalog';
import { dictionaryGuard, dictionaryIds, forgetDictionary } from '../dictionary';
import { ROLLUPS, ROLLUP_DIMENSIONS, type PackedMetric, type Rollup } from '../rollups';
import { DATA_SQL, decodeObservations, encodeObservations } from './observation-codec';
import type { ConversationRecord } from './record.schema';
import { ObservationKeys, toObservations, type Observation } from './to-observations';

export interface IngestResult {
  conversations: number;
  observations: number;
  duplicates: number;
}

/** D1 caps a bound string at 2 MB; JSON parameters are cut well below it. */
const MAX_PARAM_CHARS = 900_000;
const MAX_ATTEMPTS = 5;

interface ConversationWrite {
  id: string;
  firstEmit: number;
  lastEmit: number;
  /** Version read before the merge (0 = new); the write must find it unchanged. */
  expectedVersion: number;
  /** Encoded observations, hex (see observation-codec.ts). */
  data: string;
}

interface Plan {
  writes: ConversationWrite[];
  fresh: Observation[];
  duplicates: number;
}

/**
 * Stores the observations of `records` that are not stored yet, and adds exactly those to the
 * rollups, in one D1 batch (a transaction: all or nothing). A conversation changed by a concurrent
 * writer between our read and our write makes the batch fail on ingest_guard's CHECK; then the
 * whole ingest is planned again from a fresh read, so no observation is ever counted twice.
 */
export interface IngestOptions {
  /** Runs between reading and writing, on every attempt: lets a test interleave a concurrent writer. */
  afterPlan?: (attempt: number) => Promise<void>;
}

export async function ingestRecords(d1: D1Database, records: ConversationRecord[], options: IngestOptions = {}): Promise<IngestResult> {
  const byConversation = new Map<string, Observation[]>();
  for (const record of records) {
    const list = byConversation.get(record.conversationId) ?? [];
    list.push(...toObservations(record));
    byConversation.set(record.conversationId, list);
  }

  for (let attempt = 1; ; attempt++) {
    const plan = await planWrites(d1, byConversation);
    if (plan.writes.length === 0) {
      return { conversations: byConversation.size, observations: 0, duplicates: plan.duplicates };
    }
    const dims = await resolveDimensions(d1, plan.fresh);
    await options.afterPlan?.(attempt);
    try {
      await d1.batch(buildStatements(d1, plan, dims));
      return { conversations: byConversation.size, observations: plan.fresh.length, duplicates: plan.duplicates };
    } catch (err) {
      const conflict = String(err).includes('ingest_guard_no_conflicts') || String(err).includes('UNIQUE constraint failed: conversations.id');
      if (conflict && attempt < MAX_ATTEMPTS) {
        // The guard also fails on dictionary ids this isolate remembers but the database lacks.
        forgetDictionary();
        continue;
      }
      console.error('ingest batch failed', err);
      throw new ApiError(503, 'service.unavailable', 'The observations could not be stored; nothing of this request was kept. Retry later.', [], {
        'Retry-After': '1',
      });
    }
  }
}

async function planWrites(d1: D1Database, byConversation: Map<string, Observation[]>): Promise<Plan> {
  const ids = [...byConversation.keys()];
  const existing = new Map<string, { firstEmit: number; version: number; data: string }>();
  for (const chunk of chunkJson(ids)) {
    const { results } = await d1
      .prepare(`SELECT id, first_emit, version, ${DATA_SQL} AS data FROM conversations WHERE id IN (SELECT value FROM json_each(?1))`)
      .bind(chunk)
      .all<{ id: string; first_emit: number; version: number; data: string }>();
    for (const row of results) existing.set(row.id, { firstEmit: row.first_emit, version: row.version, data: row.data });
  }

  const writes: ConversationWrite[] = [];
  const fresh: Observation[] = [];
  let duplicates = 0;
  for (const [id, incoming] of byConversation) {
    const row = existing.get(id);
    const stored = row ? decodeObservations(row.data, row.firstEmit, id) : [];
    const seen = new ObservationKeys();
    for (const obs of stored) seen.add(obs);
    const added: Observation[] = [];
    for (const obs of incoming) {
      if (seen.add(obs)) added.push(obs);
      else duplicates++;
    }
    if (added.length === 0) continue;
    const all = stored.concat(added);
    let firstEmit = Infinity;
    let lastEmit = -Infinity;
    for (const o of all) {
      if (o.emit < firstEmit) firstEmit = o.emit;
      if (o.emit > lastEmit) lastEmit = o.emit;
    }
    writes.push({ id, firstEmit, lastEmit, expectedVersion: row?.version ?? 0, data: encodeObservations(all, firstEmit, id) });
    fresh.push(...added);
  }
  return { writes, fresh, duplicates };
}

/** Per fresh observation, the dictionary ids of ROLLUP_DIMENSIONS (0 = absent), and the ids used. */
interface ResolvedDims {
  /** ROLLUP_DIMENSIONS.length ids per observation of plan.fresh, in order. */
  ids: Int32Array;
  guard: [number, string, string][];
}

async function resolveDimensions(d1: D1Database, fresh: Observation[]): Promise<ResolvedDims> {
  const values = new Map<Dimension, Set<string>>(ROLLUP_DIMENSIONS.map(({ dim }) => [dim, new Set<string>()]));
  const sets = ROLLUP_DIMENSIONS.map(({ dim }) => values.get(dim)!);
  const k = ROLLUP_DIMENSIONS.length;
  for (const obs of fresh) {
    for (let j = 0; j < k; j++) {
      const value = obs.dims[ROLLUP_DIMENSIONS[j]!.index];
      if (value !== undefined) sets[j]!.add(value);
    }
  }
  const dictionary = await dictionaryIds(d1, values);
  const maps = ROLLUP_DIMENSIONS.map(({ dim }) => dictionary.get(dim)!);
  const ids = new Int32Array(fresh.length * k);
  for (let i = 0; i < fresh.length; i++) {
    const dims = fresh[i]!.dims;
    for (let j = 0; j < k; j++) {
      const value = dims[ROLLUP_DIMENSIONS[j]!.index];
      ids[i * k + j] = value === undefined ? 0 : maps[j]!.get(value)!;
    }
  }
  return { ids, guard: dictionaryGuard(dictionary) };
}

function buildStatements(d1: D1Database, plan: Plan, dims: ResolvedDims): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  const created = plan.writes.filter((w) => w.expectedVersion === 0);
  const updated = plan.writes.filter((w) => w.expectedVersion !== 0);

  // One guard row: conversations changed since planWrites read them, plus dictionary ids that do not
  // (any longer) name what this isolate believes; either aborts the batch. New conversations need no
  // version check: their plain INSERT fails on the primary key if another writer got there first.
  const versions = chunkJson(updated.map((w) => [w.id, w.expectedVersion]));
  const dictionary = chunkJson(dims.guard);
  for (let i = 0; i < Math.max(versions.length, dictionary.length); i++) {
    statements.push(
      d1
        .prepare(
          `INSERT INTO ingest_guard (conflicts) SELECT
             (SELECT count(*) FROM json_each(?1) j LEFT JOIN conversations c ON c.id = j.value->>0
               WHERE coalesce(c.version, 0) <> j.value->>1)
           + (SELECT count(*) FROM json_each(?2) j LEFT JOIN dim_values d ON d.id = j.value->>0
               WHERE d.dim IS NOT j.value->>1 OR d.value IS NOT j.value->>2)`,
        )
        .bind(versions[i] ?? '[]', dictionary[i] ?? '[]'),
    );
  }

  for (const chunk of chunkJson(created.map((w) => [w.id, w.firstEmit, w.lastEmit - w.firstEmit, w.data]))) {
    statements.push(
      d1
        .prepare(
          `INSERT INTO conversations (id, first_emit, last_emit, version, data)
           SELECT value->>0, value->>1, (value->>1) + (value->>2), 1, unhex(value->>3) FROM json_each(?1)`,
        )
        .bind(chunk),
    );
  }
  for (const chunk of chunkJson(updated.map((w) => [w.id, w.firstEmit, w.lastEmit, w.expectedVersion + 1, w.data]))) {
    statements.push(
      d1
        .prepare(
          `UPDATE conversations SET first_emit = u.value->>1, last_emit = u.value->>2, version = u.value->>3, data = unhex(u.value->>4)
           FROM json_each(?1) u WHERE conversations.id = u.value->>0`,
        )
        .bind(chunk),
    );
  }

  const longestSpan = Math.max(...plan.writes.map((w) => w.lastEmit - w.firstEmit));
  statements.push(
    d1
      .prepare(`INSERT INTO meta (key, value) VALUES ('max_span_ms', ?1) ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)`)
      .bind(longestSpan),
  );

  for (const rollup of ROLLUPS) {
    const chunks = rollup.packed
      ? chunkTexts(packedRows(rollup, plan.fresh, dims.ids))
      : chunkJson(rollupCells(rollup, plan.fresh, dims.ids).map((cell) => cellRow(cell, rollup.dims.length)));
    const sql = rollup.packed ? packedUpsertSql(rollup) : rollupUpsertSql(rollup);
    for (const chunk of chunks) statements.push(d1.prepare(sql).bind(chunk));
  }

  statements.push(d1.prepare('DELETE FROM ingest_guard'));
  return statements;
}

/**
 * A small number per dimension tuple of a rollup (a cell's or row's key is numeric), found one
 * dimension at a time: (previous tuple number, next dictionary id) -> tuple number.
 */
class TupleNumbers {
  private readonly levels: Map<number, number>[];
  private count = 0;

  constructor(private readonly k: number) {
    this.levels = Array.from({ length: k }, () => new Map<number, number>());
  }

  /** The number of the tuple of the k ids at `ids[at…]`. */
  of(ids: Int32Array, at: number): number {
    let tuple = 0;
    for (let j = 0; j < this.k; j++) {
      const key = tuple * 2_147_483_648 + ids[at + j]!;
      const level = this.levels[j]!;
      let next = level.get(key);
      if (next === undefined) level.set(key, (next = this.count++));
      tuple = next;
    }
    return tuple;
  }
}

/**
 * Cells of one rollup at each of its resolutions: [res, slot, metric, dim ids…, cnt, sum, min, max].
 * `ids` holds ROLLUP_DIMENSIONS.length dictionary ids per observation; every rollup's dimensions are
 * a prefix of those.
 */
export function rollupCells(rollup: Rollup, observations: Observation[], ids: Int32Array): number[][] {
  const k = rollup.dims.length;
  const stride = ROLLUP_DIMENSIONS.length;
  const resolutions = rollup.resolutions;
  const widths = resolutions.map((res) => res * 60_000);
  // A cell's key is numeric: (slot number, metric) and the number of its dimension tuple.
  const tuples = new TupleNumbers(k);
  const byRes = resolutions.map(() => new Map<number, number[]>());
  for (let i = 0; i < observations.length; i++) {
    const obs = observations[i]!;
    const at = i * stride;
    const tuple = tuples.of(ids, at);
    for (let r = 0; r < resolutions.length; r++) {
      const slotNumber = Math.floor(obs.emit / widths[r]!);
      // Below 2^53: slot numbers < 2^26 (15 minutes up to the year 2999, ingest's limit); metric < 256;
      // tuples < 2^19 (a 5 MB body holds fewer observations than that).
      const key = (slotNumber * 256 + obs.metric) * 524_288 + tuple;
      const cells = byRes[r]!;
      const cell = cells.get(key);
      if (!cell) {
        const fresh = [resolutions[r]!, slotNumber * widths[r]!, obs.metric];
        for (let j = 0; j < k; j++) fresh.push(ids[at + j]!);
        fresh.push(1, obs.value, obs.value, obs.value);
        cells.set(key, fresh);
        continue;
      }
      cell[k + 3]! += 1;
      cell[k + 4]! += obs.value;
      if (obs.value < cell[k + 5]!) cell[k + 5] = obs.value;
      if (obs.value > cell[k + 6]!) cell[k + 6] = obs.value;
    }
  }
  return byRes.flatMap((cells) => [...cells.values()]);
}

/**
 * A cell as it travels to D1 (whose isolates parse every byte of it): the slot as a count of slot
 * widths, and count, min and max left out when the cell holds one observation. See rollupUpsertSql.
 */
export function cellRow(cell: number[], k: number): number[] {
  const [res, slot, ...rest] = cell;
  const row = [res!, slot! / (res! * 60_000), ...rest.slice(0, k + 1), cell[k + 4]!];
  if (cell[k + 3] !== 1) row.push(cell[k + 3]!, cell[k + 5]!, cell[k + 6]!);
  return row;
}

/** The upsert of one rollup's cells (one JSON array of cellRow rows); exported for bench/profile. */
export function rollupUpsertSql(rollup: Rollup): string {
  const k = rollup.dims.length;
  const columns = ['res', 'slot', 'metric', ...rollup.dims.map((d) => d.column)];
  const sum = `value->>${3 + k}`;
  const values = [
    'value->>0',
    '(value->>0) * 60000 * (value->>1)',
    'value->>2',
    ...rollup.dims.map((_, i) => `value->>${3 + i}`),
    `coalesce(value->>${4 + k}, 1)`,
    sum,
    `coalesce(value->>${5 + k}, ${sum})`,
    `coalesce(value->>${6 + k}, ${sum})`,
  ];
  // Each row turned into JSONB once, in a materialized CTE: `->>` on JSON text parses the row again
  // for every field read (about 60% of this statement's time on agg_user, measured in better-sqlite3).
  return `WITH cells AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each(?1))
     INSERT INTO ${rollup.table} (${columns.join(', ')}, cnt, sum, mn, mx)
     SELECT ${values.join(', ')} FROM cells WHERE true
     ON CONFLICT (${columns.join(', ')}) DO UPDATE SET cnt = cnt + excluded.cnt, sum = sum + excluded.sum,
       mn = min(mn, excluded.mn), mx = max(mx, excluded.mx)`;
}

/**
 * The rows of a packed rollup (agg_user) for `observations`, as JSON texts, one per (resolution,
 * slot, dimension tuple): `{"k":[res, slot in widths, dim ids…], "<metric>": x, …}` for each of
 * its metrics present, x being the value when the row holds one observation of it, else
 * [cnt, sum, mn, mx]. Objects, not dense arrays: a row holds a few of its 21 metrics. Observations of
 * other metrics are left out (see Rollup.packed). See packedUpsertSql.
 */
export function packedRows(rollup: Rollup, observations: Observation[], ids: Int32Array): string[] {
  const packed = rollup.packed!;
  const k = rollup.dims.length;
  const stride = ROLLUP_DIMENSIONS.length;
  const kept = new Uint8Array(Math.max(...packed.metrics.map((m) => m.metric)) + 1);
  for (const m of packed.metrics) kept[m.metric] = 1;
  const resolutions = rollup.resolutions;
  const widths = resolutions.map((res) => res * 60_000);
  // Numeric row keys as in rollupCells, without the metric.
  const tuples = new TupleNumbers(k);
  type Row = { key: number[]; metrics: (number[] | undefined)[] };
  const byRes = resolutions.map(() => new Map<number, Row>());
  for (let i = 0; i < observations.length; i++) {
    const obs = observations[i]!;
    if (kept[obs.metric] !== 1) continue;
    const at = i * stride;
    const tuple = tuples.of(ids, at);
    for (let r = 0; r < resolutions.length; r++) {
      const slotNumber = Math.floor(obs.emit / widths[r]!);
      const key = slotNumber * 524_288 + tuple;
      const rows = byRes[r]!;
      let row = rows.get(key);
      if (!row) {
        const rowKey = [resolutions[r]!, slotNumber];
        for (let j = 0; j < k; j++) rowKey.push(ids[at + j]!);
        rows.set(key, (row = { key: rowKey, metrics: [] }));
      }
      const acc = row.metrics[obs.metric];
      if (!acc) row.metrics[obs.metric] = [1, obs.value, obs.value, obs.value];
      else {
        acc[0]! += 1;
        acc[1]! += obs.value;
        if (obs.value < acc[2]!) acc[2] = obs.value;
        if (obs.value > acc[3]!) acc[3] = obs.value;
      }
    }
  }
  const texts: string[] = [];
  for (const rows of byRes) {
    for (const row of rows.values()) {
      let text = `{"k":[${row.key.join(',')}]`;
      for (const { metric } of packed.metrics) {
        const acc = row.metrics[metric];
        if (acc) text += acc[0] === 1 ? `,"${metric}":${acc[1]}` : `,"${metric}":[${acc.join(',')}]`;
      }
      texts.push(text + '}');
    }
  }
  return texts;
}

/**
 * The upsert of a packed rollup's rows (one JSON array of packedRows objects); exported for
 * bench/profile. Each row is turned into JSONB once, in a materialized CTE (`->>` on JSON text
 * parses the whole row again for every field read), and each metric's value is looked up once, in
 * a second one, before its four columns are read from it: 19 ms per 1,000 conversations against
 * 28 ms reading every column from the row (better-sqlite3, the bench's 1M-conversation database).
 * Count and sum add up; min and max keep the stored one where the new row lacks the metric (NULL),
 * which SQLite's two-argument min()/max() would turn into NULL.
 */
export function packedUpsertSql(rollup: Rollup): string {
  const columns = ['res', 'slot', ...rollup.dims.map((d) => d.column)];
  const metrics: readonly PackedMetric[] = rollup.packed!.metrics;
  const keys = ["value->>'$.k[0]'", "(value->>'$.k[0]') * 60000 * (value->>'$.k[1]')", ...rollup.dims.map((_, i) => `value->>'$.k[${2 + i}]'`)];
  // m<i>: the metric's value (a number) or [cnt, sum, mn, mx], as JSON; NULL when the row lacks it.
  const values = metrics.flatMap(({ metric: i }) => [
    `CASE WHEN m${i} IS NULL THEN 0 ELSE coalesce(m${i}->>0, 1) END`,
    `CASE WHEN m${i} IS NULL THEN 0 ELSE coalesce(m${i}->>1, m${i}->>'$') END`,
    `CASE WHEN m${i} IS NULL THEN NULL ELSE coalesce(m${i}->>2, m${i}->>'$') END`,
    `CASE WHEN m${i} IS NULL THEN NULL ELSE coalesce(m${i}->>3, m${i}->>'$') END`,
  ]);
  const merge = metrics.flatMap((m) => [
    `${m.cnt} = ${m.cnt} + excluded.${m.cnt}`,
    `${m.sum} = ${m.sum} + excluded.${m.sum}`,
    `${m.mn} = coalesce(min(${m.mn}, excluded.${m.mn}), ${m.mn}, excluded.${m.mn})`,
    `${m.mx} = coalesce(max(${m.mx}, excluded.${m.mx}), ${m.mx}, excluded.${m.mx})`,
  ]);
  return `WITH b AS MATERIALIZED (SELECT jsonb(value) AS value FROM json_each(?1)),
     r AS MATERIALIZED (SELECT ${[...keys.map((k, i) => `${k} AS ${columns[i]}`), ...metrics.map((m) => `value->'${m.metric}' AS m${m.metric}`)].join(', ')} FROM b)
     INSERT INTO ${rollup.table} (${[...columns, ...metrics.flatMap((m) => [m.cnt, m.sum, m.mn, m.mx])].join(', ')})
     SELECT ${[...columns, ...values].join(', ')} FROM r WHERE true
     ON CONFLICT (${columns.join(', ')}) DO UPDATE SET ${merge.join(', ')}`;
}

/** JSON arrays of `items`, each at most MAX_PARAM_CHARS long. */
export function chunkJson(items: unknown[]): string[] {
  return chunkTexts(items.map((item) => JSON.stringify(item)));
}

/** JSON arrays of these JSON texts, each at most MAX_PARAM_CHARS long. */
export function chunkTexts(texts: string[]): string[] {
  const out: string[] = [];
  let parts: string[] = [];
  let size = 2;
  for (const text of texts) {
    if (parts.length > 0 && size + text.length + 1 > MAX_PARAM_CHARS) {
      out.push(`[${parts.join(',')}]`);
      parts = [];
      size = 2;
    }
    parts.push(text);
    size += text.length + 1;
  }
  if (parts.length > 0) out.push(`[${parts.join(',')}]`);
  return out;
}
