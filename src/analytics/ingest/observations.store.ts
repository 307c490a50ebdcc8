import { ApiError } from '../../http/api-error';
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
    const observations = toObservations(record);
    const list = byConversation.get(record.conversationId);
    if (list) for (const o of observations) list.push(o);
    else byConversation.set(record.conversationId, observations);
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
    const added = notStoredYet(stored, incoming);
    duplicates += incoming.length - added.length;
    if (added.length === 0) continue;
    const all = stored.length === 0 ? added : stored.concat(added);
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

/** Scratch for sharesEmitMetric, cleared per conversation (one Set, not one per conversation). */
const emitMetrics = new Set<number>();

/** Whether two of these observations have one metric at one instant (sessions aside). */
function sharesEmitMetric(stored: Observation[], incoming: Observation[]): boolean {
  // A typical conversation's dozen or two: comparing pairs beats hashing.
  if (stored.length + incoming.length <= 24) {
    for (let i = 0; i < incoming.length; i++) {
      const { emit, metric } = incoming[i]!;
      for (const o of stored) if (o.emit === emit && o.metric === metric) return true;
      for (let j = 0; j < i; j++) if (incoming[j]!.emit === emit && incoming[j]!.metric === metric) return true;
    }
    return false;
  }
  emitMetrics.clear();
  // emit < 3.3e13 (ingest accepts years up to 2999) and metric < 256 keep this below 2^53.
  for (const o of stored) emitMetrics.add(o.emit * 256 + o.metric);
  for (const o of incoming) emitMetrics.add(o.emit * 256 + o.metric);
  return emitMetrics.size !== stored.length + incoming.length;
}

/**
 * The observations of `incoming` whose identity (sessionId, metric, emitDate; see ObservationKeys) is
 * neither in `stored` nor earlier in `incoming`, in order. Almost no conversation holds two
 * observations of one metric at one instant even across sessions, and sharesEmitMetric tells that
 * at a fraction of ObservationKeys' cost (a Map and a Set per session: 0.7 ms per 1,000 new
 * conversations against 0.16, in Node); only when it does are the full identities compared.
 * `incoming` itself is returned when all are new.
 */
export function notStoredYet(stored: Observation[], incoming: Observation[]): Observation[] {
  if (!sharesEmitMetric(stored, incoming)) return incoming;
  const seen = new ObservationKeys();
  for (const o of stored) seen.add(o);
  return incoming.filter((o) => seen.add(o));
}

/** Per fresh observation, the dictionary ids of ROLLUP_DIMENSIONS (0 = absent), and the ids used. */
interface ResolvedDims {
  /** ROLLUP_DIMENSIONS.length ids per observation of plan.fresh, in order. */
  ids: Int32Array;
  guard: [number, string, string][];
}

async function resolveDimensions(d1: D1Database, fresh: Observation[]): Promise<ResolvedDims> {
  // One pass numbers each dimension's distinct values (1, 2, …; 0 = absent) and notes each
  // observation's numbers; once the dictionary has answered, a lookup per distinct value turns them
  // into ids in place: half the string-keyed lookups of reading every observation's values twice.
  const k = ROLLUP_DIMENSIONS.length;
  const locals = ROLLUP_DIMENSIONS.map(() => new Map<string, number>());
  const ids = new Int32Array(fresh.length * k);
  for (let i = 0; i < fresh.length; i++) {
    const dims = fresh[i]!.dims;
    for (let j = 0; j < k; j++) {
      const value = dims[ROLLUP_DIMENSIONS[j]!.index];
      if (value === undefined) continue;
      const local = locals[j]!;
      let n = local.get(value);
      if (n === undefined) local.set(value, (n = local.size + 1));
      ids[i * k + j] = n;
    }
  }
  const dictionary = await dictionaryIds(d1, new Map(ROLLUP_DIMENSIONS.map(({ dim }, j) => [dim, new Set(locals[j]!.keys())])));
  const byLocal = ROLLUP_DIMENSIONS.map(({ dim }, j) => {
    const found = dictionary.get(dim)!;
    const out = new Int32Array(locals[j]!.size + 1);
    for (const [value, n] of locals[j]!) out[n] = found.get(value)!;
    return out;
  });
  for (let x = 0; x < ids.length; x++) ids[x] = byLocal[x % k]![ids[x]!]!;
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

  // The row texts by hand: JSON.stringify would scan every character of the hex data for escapes.
  for (const chunk of chunkTexts(created.map((w) => `[${JSON.stringify(w.id)},${w.firstEmit},${w.lastEmit - w.firstEmit},"${w.data}"]`))) {
    statements.push(
      d1
        .prepare(
          `INSERT INTO conversations (id, first_emit, last_emit, version, data)
           SELECT value->>0, value->>1, (value->>1) + (value->>2), 1, unhex(value->>3) FROM json_each(?1)`,
        )
        .bind(chunk),
    );
  }
  for (const chunk of chunkTexts(updated.map((w) => `[${JSON.stringify(w.id)},${w.firstEmit},${w.lastEmit},${w.expectedVersion + 1},"${w.data}"]`))) {
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
      : chunkTexts(rollupRows(rollup, plan.fresh, dims.ids));
    const sql = rollup.packed ? packedUpsertSql(rollup) : rollupUpsertSql(rollup);
    for (const chunk of chunks) statements.push(d1.prepare(sql).bind(chunk));
  }

  statements.push(d1.prepare('DELETE FROM ingest_guard'));
  return statements;
}

/**
 * A small number per dimension tuple of a rollup (a cell's or row's key is numeric), found one
 * dimension at a time: (previous tuple number, next dictionary id) -> tuple number. The keys are
 * tuple × (largest id + 1) + id: mostly below 2^30, so V8 keeps them as small integers
 * (no heap number per lookup, and the Map hashes them cheaply); still exact far beyond that.
 */
class TupleNumbers {
  private readonly levels: Map<number, number>[];
  private readonly base: number;
  private count = 0;

  constructor(
    private readonly k: number,
    ids: Int32Array,
  ) {
    this.levels = Array.from({ length: k }, () => new Map<number, number>());
    let max = 0;
    for (let i = 0; i < ids.length; i++) if (ids[i]! > max) max = ids[i]!;
    this.base = max + 1;
  }

  /** The number of the tuple of the k ids at `ids[at…]`. */
  of(ids: Int32Array, at: number): number {
    let tuple = 0;
    for (let j = 0; j < this.k; j++) {
      const key = tuple * this.base + ids[at + j]!;
      const level = this.levels[j]!;
      let next = level.get(key);
      if (next === undefined) level.set(key, (next = this.count++));
      tuple = next;
    }
    return tuple;
  }
}

/**
 * The cells of one rollup (not packed) at each of its resolutions, as the JSON texts of its upsert's
 * rows: `[res, slot in widths, metric, dim ids…, sum]` for a cell holding one observation, else
 * `[…, sum, cnt, mn, max]` (D1's isolates parse every byte of it; see rollupUpsertSql). The text is
 * written directly, not through number arrays and JSON.stringify: the same bytes (values are
 * integers, sums finite). `ids` holds ROLLUP_DIMENSIONS.length dictionary ids per observation;
 * every rollup's dimensions are a prefix of those.
 */
export function rollupRows(rollup: Rollup, observations: Observation[], ids: Int32Array): string[] {
  const n = observations.length;
  if (n === 0) return [];
  const k = rollup.dims.length;
  const stride = ROLLUP_DIMENSIONS.length;
  // A series is a (dimension tuple, metric); numbered densely, so a cell's key, series × slots in
  // the batch's span + slot, stays a small integer for any real batch (see TupleNumbers).
  const tuples = new TupleNumbers(k, ids);
  const seriesOf = new Map<number, number>();
  const series = new Int32Array(n);
  let minEmit = Infinity;
  let maxEmit = -Infinity;
  for (let i = 0; i < n; i++) {
    const obs = observations[i]!;
    // tuple < 2^19 (a 5 MB body holds fewer observations than that), metric < 256.
    const key = tuples.of(ids, i * stride) * 256 + obs.metric;
    let s = seriesOf.get(key);
    if (s === undefined) seriesOf.set(key, (s = seriesOf.size));
    series[i] = s;
    if (obs.emit < minEmit) minEmit = obs.emit;
    if (obs.emit > maxEmit) maxEmit = obs.emit;
  }
  // Per cell: the observation that opened it (for its metric and ids), then cnt, sum, mn, mx.
  type Cell = { first: number; slot: number; cnt: number; sum: number; mn: number; mx: number };
  const cellsAt = (res: number, from: Cell[] | undefined, fromRes: number): Map<number, Cell> => {
    const width = res * 60_000;
    const firstSlot = Math.floor(minEmit / width);
    // Below 2^53: series < 2^19 (at most one per observation), slots < 2^26 (see packedRows).
    const span = Math.floor(maxEmit / width) - firstSlot + 1;
    const cells = new Map<number, Cell>();
    if (from) {
      // Finer cells merged, in their order: each cell still comes first where its first observation does.
      const ratio = res / fromRes;
      for (const fine of from) {
        const slot = Math.floor(fine.slot / ratio);
        const key = series[fine.first]! * span + (slot - firstSlot);
        const cell = cells.get(key);
        if (!cell) {
          cells.set(key, { ...fine, slot });
          continue;
        }
        cell.cnt += fine.cnt;
        cell.sum += fine.sum;
        if (fine.mn < cell.mn) cell.mn = fine.mn;
        if (fine.mx > cell.mx) cell.mx = fine.mx;
      }
      return cells;
    }
    for (let i = 0; i < n; i++) {
      const obs = observations[i]!;
      const slot = Math.floor(obs.emit / width);
      const key = series[i]! * span + (slot - firstSlot);
      const value = obs.value;
      const cell = cells.get(key);
      if (!cell) {
        cells.set(key, { first: i, slot, cnt: 1, sum: value, mn: value, mx: value });
        continue;
      }
      cell.cnt += 1;
      cell.sum += value;
      if (value < cell.mn) cell.mn = value;
      if (value > cell.mx) cell.mx = value;
    }
    return cells;
  };
  // The finest resolution from the observations, the others (multiples of it: its slots nest in
  // theirs) from its cells, a few hundred against thousands of observations. Sums of integers are
  // exact in any order.
  const finest = Math.min(...rollup.resolutions);
  const fine = [...cellsAt(finest, undefined, finest).values()];
  const texts: string[] = [];
  for (const res of rollup.resolutions) {
    const cells = res === finest ? fine : res % finest === 0 ? cellsAt(res, fine, finest).values() : cellsAt(res, undefined, finest).values();
    for (const cell of cells) {
      const at = cell.first * stride;
      let text = `[${res},${cell.slot},${observations[cell.first]!.metric}`;
      for (let j = 0; j < k; j++) text += `,${ids[at + j]}`;
      texts.push(cell.cnt === 1 ? `${text},${cell.sum}]` : `${text},${cell.sum},${cell.cnt},${cell.mn},${cell.mx}]`);
    }
  }
  return texts;
}

/** The upsert of one rollup's cells (one JSON array of rollupRows rows); exported for bench/profile. */
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
  // A numeric row key: the slot number and the number of the dimension tuple.
  const tuples = new TupleNumbers(k, ids);
  type Row = { key: number[]; metrics: (number[] | undefined)[] };
  const byRes = resolutions.map(() => new Map<number, Row>());
  for (let i = 0; i < observations.length; i++) {
    const obs = observations[i]!;
    if (kept[obs.metric] !== 1) continue;
    const at = i * stride;
    const tuple = tuples.of(ids, at);
    for (let r = 0; r < resolutions.length; r++) {
      const slotNumber = Math.floor(obs.emit / widths[r]!);
      // Below 2^53: slot numbers < 2^26 (15 minutes up to the year 2999, ingest's limit), tuples < 2^19.
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
