import { conversationKey } from './conversation-key';
import { decodeObservations, type DictionaryNames } from './observation-codec';
import { ObservationKeys, type Observation } from './to-observations';

/** A conversation's row as it is to be written. */
export interface ConversationWrite {
  id: string;
  /** Where it is (or will be) stored: conversation-key.ts. */
  key: string;
  firstEmit: number;
  lastEmit: number;
  /** Version read before the merge (0 = new); the write must find it unchanged. */
  expectedVersion: number;
  /** Every observation of the conversation, stored and new (encoded once the dictionary has its ids). */
  observations: Observation[];
}

/** A conversation's row as it was read: `data` as DATA_SQL selects it (its dictionary ids in the plan's `names`). */
export interface StoredConversation {
  /** The row's key as read (conversation-key.ts): an update writes that row. */
  key: string;
  firstEmit: number;
  version: number;
  data: string;
  /** The dimension cube holds its observations (cube-backfill.ts): then it gets the new ones too. */
  inCube: boolean;
}

export interface WritePlan {
  writes: ConversationWrite[];
  /**
   * The observations not stored yet, which the rollups get; the first `inCube` of them go to the
   * dimension cube as well. The others belong to conversations the cube's backfill has still to add
   * whole (cube-backfill.ts).
   */
  fresh: Observation[];
  inCube: number;
  duplicates: number;
}

/**
 * What an ingest writes: for each conversation with observations not stored yet, its stored ones
 * (from `stored`, by id) and the new ones, as one new row. Where the cube stands: `wholeCube`, it holds
 * every stored conversation (whatever their `inCube`); `newInCube`, it takes the observations of
 * conversations not stored yet; `names`, the dictionary's values of the ids the stored rows name. Pure:
 * the store reads and writes.
 */
export function planWrites(
  byConversation: Map<string, Observation[]>,
  stored: Map<string, StoredConversation>,
  { wholeCube, newInCube }: { wholeCube: boolean; newInCube: boolean },
  names?: DictionaryNames,
): WritePlan {
  const writes: ConversationWrite[] = [];
  const fresh: Observation[] = [];
  const outsideCube: Observation[] = [];
  let duplicates = 0;
  for (const [id, incoming] of byConversation) {
    const row = stored.get(id);
    const before = row ? decodeObservations(row.data, row.firstEmit, id, names) : [];
    const added = notStoredYet(before, incoming);
    duplicates += incoming.length - added.length;
    if (added.length === 0) continue;
    const all = before.length === 0 ? added : before.concat(added);
    let firstEmit = Infinity;
    let lastEmit = -Infinity;
    for (const o of all) {
      if (o.emit < firstEmit) firstEmit = o.emit;
      if (o.emit > lastEmit) lastEmit = o.emit;
    }
    writes.push({ id, key: row?.key ?? conversationKey(id), firstEmit, lastEmit, expectedVersion: row?.version ?? 0, observations: all });
    if (row ? wholeCube || row.inCube : newInCube) fresh.push(...added);
    else outsideCube.push(...added);
  }
  const inCube = fresh.length;
  for (const o of outsideCube) fresh.push(o);
  return { writes, fresh, inCube, duplicates };
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
