import type { Dimension } from './catalog';
import { JSON_PARAM_MAX_CHARS, jsonChunks } from '../db/json-chunks';
import { missingNames } from './ingest/observation-codec';

/**
 * The dimension-value dictionary (table dim_values): (dimension, value) -> small integer id, used by
 * the rollups. Rows are only ever added, so an id once read stays right for as long as the database
 * does, and this isolate keeps every id it has seen, per database: each analytics partition
 * (partitions.ts) numbers its values on its own, so the cache is keyed by the partition's binding
 * name. A database replaced underneath the isolate (a restore, a test's fresh storage) is caught by
 * ingest's guard (`dictionaryGuard`), which then calls `forgetDictionary` and plans again.
 */
const cache = new Map<string, Map<Dimension, Map<string, number>>>();
let cached = 0;
/** Dimension values are agents, queues and the like, but nothing stops a client inventing more. All databases together. */
const MAX_CACHED = 200_000;

/** Value -> id, per dimension. */
export type DictionaryIds = Map<Dimension, Map<string, number>>;

/**
 * Ids for the values of each dimension, adding the missing ones to dim_values first. That insert
 * commits on its own, before the caller's batch: an unused dictionary row is harmless, and only ids
 * read back from the table are used, so two writers adding the same value agree on its id.
 */
export async function dictionaryIds(
  d1: D1Database,
  values: Map<Dimension, Set<string>>,
  /** The database's binding name: whose ids these are. */
  database = 'DB',
): Promise<DictionaryIds> {
  const ids: DictionaryIds = new Map();
  const missing: [Dimension, string][] = [];
  for (const [dim, set] of values) {
    const known = cache.get(database)?.get(dim);
    const mine = new Map<string, number>();
    ids.set(dim, mine);
    for (const value of set) {
      const id = known?.get(value);
      if (id === undefined) missing.push([dim, value]);
      else mine.set(value, id);
    }
  }
  if (missing.length === 0) return ids;

  const json = JSON.stringify(missing);
  const [, found] = await d1.batch<{ id: number; dim: Dimension; value: string }>([
    d1.prepare('INSERT OR IGNORE INTO dim_values (dim, value) SELECT value->>0, value->>1 FROM json_each(?1)').bind(json),
    d1.prepare('SELECT id, dim, value FROM dim_values WHERE (dim, value) IN (SELECT value->>0, value->>1 FROM json_each(?1))').bind(json),
  ]);
  if (cached + missing.length > MAX_CACHED) forgetDictionary();
  let kept = cache.get(database);
  if (!kept) cache.set(database, (kept = new Map()));
  for (const row of found!.results) {
    ids.get(row.dim)!.set(row.value, row.id);
    let known = kept.get(row.dim);
    if (!known) kept.set(row.dim, (known = new Map()));
    known.set(row.value, row.id);
    cached++;
  }
  for (const [dim, value] of missing) {
    if (!ids.get(dim)!.has(value)) throw new Error(`dictionary: ${dim}=${value} was not stored`);
  }
  return ids;
}

/**
 * `[[id, dim, value], …]` for every id in `ids`: ingest's guard counts those dim_values does not
 * hold, so a batch built on stale ids fails as a whole instead of writing wrong cells.
 */
export function dictionaryGuard(ids: DictionaryIds): [number, Dimension, string][] {
  const out: [number, Dimension, string][] = [];
  for (const [dim, values] of ids) for (const [value, id] of values) out.push([id, dim, value]);
  return out;
}

/** Forgets the ids kept for `database`, or for every database. */
export function forgetDictionary(database?: string): void {
  if (database === undefined) {
    cache.clear();
    cached = 0;
    return;
  }
  for (const values of cache.get(database)?.values() ?? []) cached -= values.size;
  cache.delete(database);
}

/**
 * Adds to `names` the values of the dictionary ids that these stored rows (`data` as DATA_SQL selects
 * it) name and `names` lacks: what decoding them needs (observation-codec.ts missingNames), in one
 * statement. Read per request, never kept: a database replaced underneath the isolate must not be read
 * with another's names.
 */
export async function readNames(d1: D1Database, rows: Iterable<string>, names: Map<number, string>): Promise<void> {
  const ids = new Set<number>();
  for (const data of rows) missingNames(data, names, ids);
  if (ids.size === 0) return;
  const chunks = jsonChunks([...ids], JSON_PARAM_MAX_CHARS, JSON.stringify);
  const found = await d1.batch<{ id: number; value: string }>(
    chunks.map((chunk) => d1.prepare('SELECT id, value FROM dim_values WHERE id IN (SELECT value FROM json_each(?1))').bind(chunk)),
  );
  for (const { results } of found) for (const row of results) names.set(row.id, row.value);
  for (const id of ids) if (!names.has(id)) throw new Error(`dictionary: id ${id} is not in dim_values`);
}
