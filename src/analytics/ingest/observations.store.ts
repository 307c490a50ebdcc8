import { JSON_PARAM_MAX_CHARS, jsonChunks } from '../../db/json-chunks';
import { DIMENSIONS, type Dimension } from '../catalog';
import { unavailable } from '../../errors';
import { dictionaryGuard, dictionaryIds, forgetDictionary, readNames } from '../dictionary';
import { CUBE_DIMENSIONS, CUBE_GENERATION, ROLLUP_DIMENSIONS, ROLLUP_TABLES, WITH_CUBE, type Rollup } from '../rollups';
import { CUBE_DIM_COLUMNS, CUBE_MASK_COLUMNS, cubeRows, type CubeValues } from './cube-rows';
import { PROJECTION_COLUMNS, projectionRows } from './projection-rows';
import {
  CLEAR_GUARD_SQL,
  CUBE_PHASE_SQL,
  CubePhase,
  GUARD_SQL,
  INSERT_CONVERSATIONS_SQL,
  insertedRow,
  packedUpsertSql,
  READ_CONVERSATIONS_SQL,
  rollupUpsertSql,
  SPAN_CLASSES_SQL,
  spanClassRows,
  UPDATE_CONVERSATIONS_SQL,
  updatedRow,
} from './observations-sql';
import { compactionStatements } from './compaction-sql';
import { conversationIdOfKey, lookupKeys } from './conversation-key';
import { encodeObservations, type DictionaryRefs } from './observation-codec';
import type { ConversationRecord } from './record.schema';
import { packedRows, rollupRows } from './rollup-rows';
import { toObservations, type Observation } from './to-observations';
import { planWrites, type StoredConversation, type WritePlan } from './write-plan';

export interface IngestResult {
  conversations: number;
  observations: number;
  duplicates: number;
  /**
   * Session metrics of the records that are not stored, by name, with how many: metrics of other
   * queries (flow metrics such as nFlow belong to the flow aggregate query) and names not in the catalogue.
   */
  skippedMetrics: Record<string, number>;
  /**
   * Conversations of the body none of whose records names a metric of the catalogue, so nothing of them
   * is stored: records in the 2016 format (segments, no metrics), or only flow metrics. Silence would read
   * as success; the count and (in body order, at most MAX_LISTED) their ids say what was left out.
   */
  withoutObservations: { count: number; conversationIds: string[] };
}

/** What one database's batch stored. */
type StoredCounts = Pick<IngestResult, 'conversations' | 'observations' | 'duplicates'>;

const MAX_ATTEMPTS = 5;
/** Distinct skipped metric names, and conversation ids without observations, listed in an answer (a body can name thousands). */
const MAX_LISTED = 100;

/** JSON array parameters of `items`. */
export function chunkJson(items: readonly unknown[]): string[] {
  return jsonChunks(items, JSON_PARAM_MAX_CHARS, JSON.stringify);
}

/** JSON array parameters of these JSON texts. */
export function chunkTexts(texts: readonly string[]): string[] {
  return jsonChunks(texts, JSON_PARAM_MAX_CHARS);
}

/** One database of the analytics store (a partition, partitions.ts): its binding name and binding. */
export interface IngestDatabase {
  name: string;
  d1: D1Database;
}

/** Records, every record of a conversation among them, bound for one database. */
export interface RoutedRecords {
  database: IngestDatabase;
  records: ConversationRecord[];
}

/** `ingestRouted` into the one database `DB` (the default configuration; tests call it so). */
export async function ingestRecords(d1: D1Database, records: ConversationRecord[]): Promise<IngestResult> {
  return ingestRouted([{ database: { name: 'DB', d1 }, records }]);
}

/**
 * Stores the observations of the records that are not stored yet, and adds exactly those to the
 * rollups: one D1 batch per database (a transaction each: all or nothing there), all at once. When
 * one database's batch fails after another's succeeded, the answer is 503 and the request may be
 * sent again as it is: what was stored counts as duplicates then (idempotency is per observation).
 */
export async function ingestRouted(routed: readonly RoutedRecords[]): Promise<IngestResult> {
  const skipped = new Map<string, number>();
  const groups = routed.map(({ database, records }) => ({ database, byConversation: observationsByConversation(records, skipped) }));
  // Sorted by name (the answer is the same for the same body), at most MAX_LISTED names.
  const skippedMetrics = Object.fromEntries([...skipped].sort(([a], [b]) => (a < b ? -1 : 1)).slice(0, MAX_LISTED));

  const settled = await Promise.allSettled(groups.map((g) => storeObservations(g.database, g.byConversation)));
  const failed = groups.filter((_, i) => settled[i]!.status === 'rejected').map((g) => g.database.name);
  if (failed.length > 0) {
    const first = settled.find((s) => s.status === 'rejected') as PromiseRejectedResult;
    if (failed.length === groups.length) throw first.reason;
    const stored = groups.map((g) => g.database.name).filter((name) => !failed.includes(name));
    console.error('ingest: a partition failed after others were stored', failed, first.reason);
    throw unavailable(
      `The observations bound for ${failed.join(', ')} could not be stored; those for ${stored.join(', ')} were. ` +
        'Send the same request again: what is stored already counts as duplicates.',
    );
  }
  const empty = groups.flatMap((g) => [...g.byConversation].filter(([, list]) => list.length === 0).map(([id]) => id));
  const withoutObservations = { count: empty.length, conversationIds: empty.slice(0, MAX_LISTED) };
  const result: IngestResult = { conversations: 0, observations: 0, duplicates: 0, skippedMetrics, withoutObservations };
  for (const s of settled as PromiseFulfilledResult<StoredCounts>[]) {
    result.conversations += s.value.conversations;
    result.observations += s.value.observations;
    result.duplicates += s.value.duplicates;
  }
  return result;
}

function observationsByConversation(records: ConversationRecord[], skipped: Map<string, number>): Map<string, Observation[]> {
  const byConversation = new Map<string, Observation[]>();
  for (const record of records) {
    const observations = toObservations(record, skipped);
    const list = byConversation.get(record.conversationId);
    if (list) for (const o of observations) list.push(o);
    else byConversation.set(record.conversationId, observations);
  }
  return byConversation;
}

/**
 * One database's share, in one batch. A conversation changed by a concurrent writer between our read
 * and our write makes the batch fail on ingest_guard's CHECK; then it is planned again from a fresh
 * read, so no observation is ever counted twice.
 */
async function storeObservations({ name, d1 }: IngestDatabase, byConversation: Map<string, Observation[]>): Promise<StoredCounts> {
  for (let attempt = 1; ; attempt++) {
    const { phase, stored } = await readStored(d1, [...byConversation.keys()]);
    // The dictionary's values the stored rows name (one more read, only when a conversation is sent again).
    const names = new Map<number, string>();
    await readNames(
      d1,
      [...stored.values()].map((row) => row.data),
      names,
    );
    // A whole cube holds every stored row, whatever its in_cube says (NULL before migration 0017, 1 or 2 before 0019).
    const plan = planWrites(
      byConversation,
      stored,
      { wholeCube: phase === CubePhase.WHOLE, newInCube: phase !== CubePhase.EMPTYING },
      names,
    );
    if (plan.writes.length === 0) return { conversations: byConversation.size, observations: 0, duplicates: plan.duplicates };
    const dims = await resolveDimensions(d1, name, plan.fresh);
    try {
      await d1.batch([...buildStatements(d1, plan, dims, phase), ...compactionStatements(d1, newestEmit(plan.fresh), Date.now())]);
      return { conversations: byConversation.size, observations: plan.fresh.length, duplicates: plan.duplicates };
    } catch (err) {
      const conflict =
        String(err).includes('ingest_guard_no_conflicts') || String(err).includes('UNIQUE constraint failed: conversations.id');
      if (conflict && attempt < MAX_ATTEMPTS) {
        // The guard also fails on dictionary ids this isolate remembers but the database lacks.
        forgetDictionary(name);
        continue;
      }
      console.error('ingest batch failed', name, err);
      throw unavailable('The observations could not be stored; nothing of this request was kept. Retry later.');
    }
  }
}

function newestEmit(observations: readonly Observation[]): number {
  let newest = Number.NEGATIVE_INFINITY;
  for (const o of observations) if (o.emit > newest) newest = o.emit;
  return newest;
}

/** Where the database's dimension cube stands (cube-backfill.ts). */
export async function cubePhase(d1: D1Database): Promise<CubePhase> {
  return (await d1.prepare(CUBE_PHASE_SQL).first<CubePhase>('phase'))!;
}

/**
 * The stored rows among `ids` and where the database's cube stands, in one D1 request (one snapshot); a
 * row's `inCube` says whether its `in_cube` holds this generation, its `key` the form its id is stored in
 * (a UUID is looked up as its bytes and as the text of rows of before: conversation-key.ts).
 */
async function readStored(d1: D1Database, ids: string[]): Promise<{ phase: CubePhase; stored: Map<string, StoredConversation> }> {
  type Row = { key: string; first_emit: number; version: number; in_cube: number | null; data: string };
  const [phase, ...chunks] = await d1.batch<unknown>([
    d1.prepare(CUBE_PHASE_SQL),
    ...chunkJson(ids.flatMap(lookupKeys)).map((chunk) => d1.prepare(READ_CONVERSATIONS_SQL).bind(chunk)),
  ]);
  const stored = new Map<string, StoredConversation>();
  for (const { results } of chunks as D1Result<Row>[]) {
    for (const row of results) {
      stored.set(conversationIdOfKey(row.key), {
        key: row.key,
        firstEmit: row.first_emit,
        version: row.version,
        data: row.data,
        inCube: row.in_cube === CUBE_GENERATION,
      });
    }
  }
  return { phase: (phase as D1Result<{ phase: CubePhase }>).results[0]!.phase, stored };
}

/** Per fresh observation, the dictionary ids of ROLLUP_DIMENSIONS (0 = absent) and of the cube dimensions it carries, and the ids used. */
export interface ResolvedDims {
  /** ROLLUP_DIMENSIONS.length ids per observation of the plan's fresh ones, in order. */
  ids: Int32Array;
  cube: CubeValues;
  guard: [number, string, string][];
  /** The same ids by dimension, for the observation codec (every one of them is in `guard`). */
  refs: DictionaryRefs;
}

export async function resolveDimensions(d1: D1Database, database: string, fresh: Observation[]): Promise<ResolvedDims> {
  // One pass numbers each dimension's distinct values (1, 2, …; 0 = absent) and notes each
  // observation's numbers; once the dictionary has answered, a lookup per distinct value turns them
  // into ids in place: half the string-keyed lookups of reading every observation's values twice.
  const k = ROLLUP_DIMENSIONS.length;
  const locals = ROLLUP_DIMENSIONS.map(() => new Map<string, number>());
  const ids = new Int32Array(fresh.length * k);
  // The cube dimensions present, sparse: most observations carry a few of them. A list is one
  // value, its JSON text (rollups.ts CUBE_DIMENSIONS).
  const cubeLocals = CUBE_DIMENSIONS.map(() => new Map<string, number>());
  const starts = new Int32Array(fresh.length + 1);
  let entries = new Int32Array(Math.max(16, fresh.length * 8));
  let e = 0;
  for (let i = 0; i < fresh.length; i++) {
    const dims = fresh[i]!.dims;
    for (let j = 0; j < k; j++) {
      // Rollup dimensions are single-valued (rollups.ts).
      const value = dims[ROLLUP_DIMENSIONS[j]!.index] as string | undefined;
      if (value === undefined) continue;
      const local = locals[j]!;
      let n = local.get(value);
      if (n === undefined) local.set(value, (n = local.size + 1));
      ids[i * k + j] = n;
    }
    starts[i] = e;
    // Observations with equal dimensions mostly share one array (to-observations.ts): copy the entries.
    if (i > 0 && dims === fresh[i - 1]!.dims) {
      const from = starts[i - 1]!;
      const count = e - from;
      if (2 * (e + count) > entries.length) {
        const grown = new Int32Array(Math.max(entries.length * 2, 2 * (e + count)));
        grown.set(entries);
        entries = grown;
      }
      entries.copyWithin(2 * e, 2 * from, 2 * e);
      e += count;
      continue;
    }
    for (let j = 0; j < CUBE_DIMENSIONS.length; j++) {
      const value = dims[CUBE_DIMENSIONS[j]!.index];
      if (value === undefined) continue;
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      const local = cubeLocals[j]!;
      let n = local.get(text);
      if (n === undefined) local.set(text, (n = local.size + 1));
      if (2 * e + 2 > entries.length) {
        const grown = new Int32Array(entries.length * 2);
        grown.set(entries);
        entries = grown;
      }
      entries[2 * e] = j;
      entries[2 * e + 1] = n;
      e++;
    }
  }
  starts[fresh.length] = e;
  const wanted = new Map<Dimension, Set<string>>(ROLLUP_DIMENSIONS.map(({ dim }, j) => [dim, new Set(locals[j]!.keys())]));
  CUBE_DIMENSIONS.forEach(({ dim }, j) => {
    if (cubeLocals[j]!.size > 0) wanted.set(dim, new Set(cubeLocals[j]!.keys()));
  });
  const dictionary = await dictionaryIds(d1, wanted, database);
  const byLocal = ROLLUP_DIMENSIONS.map(({ dim }, j) => {
    const found = dictionary.get(dim)!;
    const out = new Int32Array(locals[j]!.size + 1);
    for (const [value, n] of locals[j]!) out[n] = found.get(value)!;
    return out;
  });
  for (let x = 0; x < ids.length; x++) ids[x] = byLocal[x % k]![ids[x]!]!;
  // The cube's entries keep their local numbers (small: cubeRows keys cells by them), with the ids beside.
  const cubeIds = CUBE_DIMENSIONS.map(({ dim }, j) => {
    const out = new Int32Array(cubeLocals[j]!.size + 1);
    if (out.length === 1) return out;
    const found = dictionary.get(dim)!;
    for (const [value, n] of cubeLocals[j]!) out[n] = found.get(value)!;
    return out;
  });
  return {
    ids,
    cube: { starts, entries, ids: cubeIds },
    guard: dictionaryGuard(dictionary),
    refs: DIMENSIONS.map((dim) => dictionary.get(dim)),
  };
}

/** agg_dim and agg_mask as rollupUpsertSql sees them: a table and its key columns after (res, slot, metric). */
const CUBE_TABLES = [
  { table: 'agg_dim', dims: CUBE_DIM_COLUMNS.map((column) => ({ column })) },
  { table: 'agg_mask', dims: CUBE_MASK_COLUMNS.map((column) => ({ column })) },
] as const;

/** Each rollup with the resolutions every ingest writes (those kept with the cube go with it: cubeStatements). */
const ALWAYS_WRITTEN = ROLLUP_TABLES.map((rollup) => ({
  rollup,
  resolutions: rollup.resolutions.filter((res) => !rollup.withCube?.includes(res)),
}));

function buildStatements(d1: D1Database, plan: WritePlan, dims: ResolvedDims, phase: CubePhase): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  // Encoded now that the dictionary has the ids of the new observations' values (ids this batch's guard checks).
  const created: string[] = [];
  const updated: string[] = [];
  for (const w of plan.writes) {
    const data = encodeObservations(w.observations, w.firstEmit, w.id, dims.refs);
    if (w.expectedVersion === 0) created.push(insertedRow(w, data));
    else updated.push(updatedRow(w, data));
  }

  // New conversations need no version check: their plain INSERT fails on the primary key if another
  // writer got there first.
  statements.push(
    ...guardStatements(
      d1,
      plan.writes.flatMap((w) => (w.expectedVersion === 0 ? [] : [[w.key, w.expectedVersion] as [string, number]])),
      dims.guard,
      phase,
    ),
  );
  // While a backfill empties the cube, new conversations are left for it to add whole.
  const inCube = phase === CubePhase.EMPTYING ? null : CUBE_GENERATION;
  for (const chunk of chunkTexts(created)) statements.push(d1.prepare(INSERT_CONVERSATIONS_SQL).bind(chunk, inCube));
  for (const chunk of chunkTexts(updated)) statements.push(d1.prepare(UPDATE_CONVERSATIONS_SQL).bind(chunk));

  statements.push(d1.prepare(SPAN_CLASSES_SQL).bind(spanClassRows(plan.writes)));

  for (const { rollup, resolutions } of ALWAYS_WRITTEN) statements.push(...rollupStatements(d1, rollup, plan.fresh, dims, resolutions));
  const inCubeFresh = plan.inCube === plan.fresh.length ? plan.fresh : plan.fresh.slice(0, plan.inCube);
  statements.push(...cubeStatements(d1, inCubeFresh, dims));

  statements.push(d1.prepare(CLEAR_GUARD_SQL));
  return statements;
}

/**
 * The guard rows of a batch (GUARD_SQL): `[id, version read]` of the conversations it changes, the
 * dictionary ids it relies on, the cube phase it was planned in. At least one: the phase is always checked.
 */
export function guardStatements(
  d1: D1Database,
  versions: [string, number][],
  dictionary: ResolvedDims['guard'],
  phase: CubePhase,
): D1PreparedStatement[] {
  const versionChunks = chunkJson(versions);
  const dictionaryChunks = chunkJson(dictionary);
  return Array.from({ length: Math.max(1, versionChunks.length, dictionaryChunks.length) }, (_, i) =>
    d1.prepare(GUARD_SQL).bind(versionChunks[i] ?? '[]', dictionaryChunks[i] ?? '[]', phase),
  );
}

/**
 * The upserts of the cube for these observations (`dims` resolved for them, or for a list they begin):
 * agg_dim, agg_mask, the resolutions of the rollups kept with it (Rollup.withCube) and the declared projections.
 */
export function cubeStatements(d1: D1Database, observations: Observation[], dims: ResolvedDims): D1PreparedStatement[] {
  const cube = cubeRows(observations, dims.ids, dims.cube);
  return [
    ...[cube.dim, cube.mask].flatMap((rows, i) => {
      const sql = rollupUpsertSql(CUBE_TABLES[i]!);
      return chunkTexts(rows).map((chunk) => d1.prepare(sql).bind(chunk));
    }),
    ...WITH_CUBE.flatMap((rollup) => rollupStatements(d1, rollup, observations, dims, rollup.withCube!)),
    ...projectionRows(observations, dims.ids, dims.cube).flatMap((rows) =>
      chunkTexts(rows).map((chunk) => d1.prepare(PROJECTION_UPSERT_SQL).bind(chunk)),
    ),
  ];
}

const PROJECTION_UPSERT_SQL = rollupUpsertSql({ table: 'agg_proj', dims: PROJECTION_COLUMNS.map((column) => ({ column })) });

/** The upserts of one rollup at `resolutions` for these observations. */
function rollupStatements(
  d1: D1Database,
  rollup: Rollup,
  observations: Observation[],
  dims: ResolvedDims,
  resolutions: readonly number[],
): D1PreparedStatement[] {
  const rows = rollup.packed
    ? packedRows(rollup, observations, dims.ids, resolutions)
    : rollupRows(rollup, observations, dims.ids, resolutions);
  const sql = rollup.packed ? packedUpsertSql(rollup) : rollupUpsertSql(rollup);
  return chunkTexts(rows).map((chunk) => d1.prepare(sql).bind(chunk));
}
