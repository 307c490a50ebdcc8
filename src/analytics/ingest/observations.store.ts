import { ApiError } from '../../http/api-error';
import { ROLLUPS, ROLLUP_DIMENSIONS, RESOLUTIONS_MINUTES, slotOf, type Rollup } from '../rollups';
import { decodeObservations, encodeObservations } from './observation-codec';
import type { ConversationRecord } from './record.schema';
import { observationKey, toObservations, type Observation } from './to-observations';

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
    await options.afterPlan?.(attempt);
    try {
      await d1.batch(buildStatements(d1, plan));
      return { conversations: byConversation.size, observations: plan.fresh.length, duplicates: plan.duplicates };
    } catch (err) {
      const conflict = String(err).includes('ingest_guard_no_conflicts') || String(err).includes('UNIQUE constraint failed: conversations.id');
      if (conflict && attempt < MAX_ATTEMPTS) continue;
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
      .prepare('SELECT id, first_emit, version, data FROM conversations WHERE id IN (SELECT value FROM json_each(?1))')
      .bind(chunk)
      .all<{ id: string; first_emit: number; version: number; data: string }>();
    for (const row of results) existing.set(row.id, { firstEmit: row.first_emit, version: row.version, data: row.data });
  }

  const writes: ConversationWrite[] = [];
  const fresh: Observation[] = [];
  let duplicates = 0;
  for (const [id, incoming] of byConversation) {
    const row = existing.get(id);
    const stored = row ? decodeObservations(row.data, row.firstEmit) : [];
    const seen = new Set(stored.map(observationKey));
    const added: Observation[] = [];
    for (const obs of incoming) {
      const key = observationKey(obs);
      if (seen.has(key)) {
        duplicates++;
        continue;
      }
      seen.add(key);
      added.push(obs);
    }
    if (added.length === 0) continue;
    const all = stored.concat(added);
    let firstEmit = Infinity;
    let lastEmit = -Infinity;
    for (const o of all) {
      if (o.emit < firstEmit) firstEmit = o.emit;
      if (o.emit > lastEmit) lastEmit = o.emit;
    }
    writes.push({ id, firstEmit, lastEmit, expectedVersion: row?.version ?? 0, data: encodeObservations(all, firstEmit) });
    fresh.push(...added);
  }
  return { writes, fresh, duplicates };
}

function buildStatements(d1: D1Database, plan: Plan): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];

  for (const chunk of chunkJson(plan.writes.map((w) => [w.id, w.expectedVersion]))) {
    statements.push(
      d1
        .prepare(
          `INSERT INTO ingest_guard (conflicts)
           SELECT count(*) FROM json_each(?1) j LEFT JOIN conversations c ON c.id = j.value->>0
           WHERE coalesce(c.version, 0) <> j.value->>1`,
        )
        .bind(chunk),
    );
  }

  for (const chunk of chunkJson(plan.writes.map((w) => [w.id, w.firstEmit, w.lastEmit, w.expectedVersion + 1, w.data]))) {
    statements.push(
      d1
        .prepare(
          `INSERT INTO conversations (id, first_emit, last_emit, version, data)
           SELECT value->>0, value->>1, value->>2, value->>3, value->>4 FROM json_each(?1) WHERE true
           ON CONFLICT (id) DO UPDATE SET first_emit = excluded.first_emit, last_emit = excluded.last_emit,
             version = excluded.version, data = excluded.data`,
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

  const dimPairs = new Set<string>();
  for (const obs of plan.fresh) {
    for (const { dim, index } of ROLLUP_DIMENSIONS) {
      const value = obs.dims[index];
      if (value !== undefined) dimPairs.add(JSON.stringify([dim, value]));
    }
  }
  for (const chunk of chunkJson([...dimPairs].map((p) => JSON.parse(p) as [string, string]))) {
    statements.push(d1.prepare('INSERT OR IGNORE INTO dim_values (dim, value) SELECT value->>0, value->>1 FROM json_each(?1)').bind(chunk));
  }

  for (const rollup of ROLLUPS) {
    for (const chunk of chunkJson(rollupCells(rollup, plan.fresh))) statements.push(rollupUpsert(d1, rollup).bind(chunk));
  }

  statements.push(d1.prepare('DELETE FROM ingest_guard'));
  return statements;
}

/** Cells of one rollup at every resolution: [res, slot, metric, dim values…, cnt, sum, min, max]. */
export function rollupCells(rollup: Rollup, observations: Observation[]): unknown[][] {
  const cells = new Map<string, (string | number | null)[]>();
  for (const obs of observations) {
    const dims = rollup.dims.map(({ index }) => obs.dims[index] ?? null);
    for (const res of RESOLUTIONS_MINUTES) {
      const key = JSON.stringify([res, slotOf(obs.emit, res), obs.metric, dims]);
      const cell = cells.get(key);
      if (!cell) {
        cells.set(key, [res, slotOf(obs.emit, res), obs.metric, ...dims, 1, obs.value, obs.value, obs.value]);
        continue;
      }
      const n = cell.length;
      (cell[n - 4] as number) += 1;
      (cell[n - 3] as number) += obs.value;
      cell[n - 2] = Math.min(cell[n - 2] as number, obs.value);
      cell[n - 1] = Math.max(cell[n - 1] as number, obs.value);
    }
  }
  return [...cells.values()];
}

/** The upsert of one rollup's cells (one JSON array parameter); exported for bench/profile. */
export function rollupUpsertSql(rollup: Rollup): string {
  const k = rollup.dims.length;
  const dimColumns = rollup.dims.map((d) => d.column);
  // Dimension values travel as strings and become dictionary ids here, inside the transaction.
  const dimIds = rollup.dims.map(
    (d, i) => `coalesce((SELECT id FROM dim_values WHERE dim = '${d.dim}' AND value = j.value->>${3 + i}), 0)`,
  );
  const key = ['res', 'slot', 'metric', ...dimColumns].join(', ');
  return `INSERT INTO ${rollup.table} (res, slot, metric, ${dimColumns.join(', ')}, cnt, sum, mn, mx)
     SELECT j.value->>0, j.value->>1, j.value->>2, ${dimIds.join(', ')},
       j.value->>${3 + k}, j.value->>${4 + k}, j.value->>${5 + k}, j.value->>${6 + k}
     FROM json_each(?1) j WHERE true
     ON CONFLICT (${key}) DO UPDATE SET cnt = cnt + excluded.cnt, sum = sum + excluded.sum,
       mn = min(mn, excluded.mn), mx = max(mx, excluded.mx)`;
}

function rollupUpsert(d1: D1Database, rollup: Rollup): D1PreparedStatement {
  return d1.prepare(rollupUpsertSql(rollup));
}

/** JSON arrays of `items`, each at most MAX_PARAM_CHARS long. */
export function chunkJson(items: unknown[]): string[] {
  const out: string[] = [];
  let parts: string[] = [];
  let size = 2;
  for (const item of items) {
    const text = JSON.stringify(item);
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
