import { and, desc, eq, gt, lt, max, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { webhookDeliveries } from '../../db/schema';
import { JSON_PARAM_MAX_CHARS, jsonChunks } from '../../db/json-chunks';
import { CHAT_LIMITS } from '../limits';

/** JSON array parameters of these rows. */
const chunkJson = (rows: readonly unknown[]) => jsonChunks(rows, JSON_PARAM_MAX_CHARS, JSON.stringify);

/** One request to a webhook's URL as its log keeps it (`GET /api/v1/webhooks/{id}/deliveries`). */
export interface DeliveryEntry {
  webhookId: string;
  method: 'POST' | 'PATCH' | 'DELETE';
  status: number;
  errorCode: string | null;
  errorMessage: string | null;
  /** The stored (or changed) message, in the first room it went to; null for a refusal. */
  messageId: string | null;
  roomId: string | null;
  seq: number | null;
  bytes: number;
}

export interface DeliveryView extends Omit<DeliveryEntry, 'webhookId'> {
  id: number;
  at: string;
}

/** An error message is kept to this many characters (UTF-16 units), enough for every message this service writes. */
const ERROR_MESSAGE_CHARS = 500;

/** A logged entry and when it was made (epoch ms). */
export interface TimedDelivery extends DeliveryEntry {
  at: number;
}

/**
 * Writes entries and prunes each webhook they name to its log's bounds (the newest
 * CHAT_LIMITS.deliveryLogPerWebhook, none older than CHAT_LIMITS.deliveryLogTtlMs), as one D1 batch.
 */
export async function recordDeliveries(d1: D1Database, entries: readonly TimedDelivery[]): Promise<void> {
  if (entries.length === 0) return;
  const rows = entries.map((e) => [
    e.webhookId,
    e.at,
    e.method,
    e.status,
    e.errorCode,
    e.errorMessage?.slice(0, ERROR_MESSAGE_CHARS) ?? null,
    e.messageId,
    e.roomId,
    e.seq,
    e.bytes,
  ]);
  const now = Math.max(...entries.map((e) => e.at));
  await d1.batch([
    ...chunkJson(rows).map((chunk) =>
      d1
        .prepare(
          `INSERT INTO webhook_deliveries (webhook_id, at, method, status, error_code, error_message, message_id, room_id, seq, bytes)
           SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7, value->>8, value->>9
           FROM json_each(?1)`,
        )
        .bind(chunk),
    ),
    ...[...new Set(entries.map((e) => e.webhookId))].map((webhookId) =>
      d1
        .prepare(
          `DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND (at < ?2 OR id <= (
             SELECT id FROM webhook_deliveries WHERE webhook_id = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?3))`,
        )
        .bind(webhookId, now - CHAT_LIMITS.deliveryLogTtlMs, CHAT_LIMITS.deliveryLogPerWebhook),
    ),
  ]);
}

/**
 * The isolate's entries not written yet. Writes are coalesced: a D1 batch per post was 200 batches a
 * second at the bench's steady rate, and under wrangler dev it stalled posts for seconds and closed
 * viewers as too slow (bench/FINDINGS.md, 11-27). Entries wait at most FLUSH_AFTER_MS (or until
 * FLUSH_AT_ENTRIES), then go as one batch.
 */
let pending: TimedDelivery[] = [];
let scheduled: Promise<void> | undefined;
const FLUSH_AFTER_MS = 250;
const FLUSH_AT_ENTRIES = 200;

/**
 * Logs one delivery, after the answer is decided: it never delays or changes that answer. The request
 * that starts a batch keeps the isolate (waitUntil) until the batch is written; a log that cannot be
 * written is reported in the Worker's log.
 */
export function logDelivery(ctx: Pick<ExecutionContext, 'waitUntil'>, d1: D1Database, entry: DeliveryEntry): void {
  pending.push({ ...entry, at: Date.now() });
  if (pending.length >= FLUSH_AT_ENTRIES) ctx.waitUntil(flushDeliveries(d1));
  else if (scheduled === undefined) {
    scheduled = new Promise<void>((resolve) => setTimeout(resolve, FLUSH_AFTER_MS)).then(() => flushDeliveries(d1));
    ctx.waitUntil(scheduled);
  }
}

/** Writes this isolate's pending entries now (the log's readers call it first: they see their own isolate's posts). */
export async function flushDeliveries(d1: D1Database): Promise<void> {
  const entries = pending;
  pending = [];
  scheduled = undefined;
  await recordDeliveries(d1, entries).catch((err: unknown) => console.error('delivery log write failed', err));
}

/** The webhook's deliveries, newest first, `limit` of them with `id < before`; `nextBefore` when more remain. */
export async function listDeliveries(
  db: Db,
  webhookId: string,
  page: { before?: number; limit: number },
  now = Date.now(),
): Promise<{ entities: DeliveryView[]; nextBefore?: number }> {
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.webhookId, webhookId),
        gt(webhookDeliveries.at, now - CHAT_LIMITS.deliveryLogTtlMs),
        page.before !== undefined ? lt(webhookDeliveries.id, page.before) : undefined,
      ),
    )
    .orderBy(desc(webhookDeliveries.id))
    .limit(page.limit + 1);
  const entities = rows.slice(0, page.limit).map(
    (r): DeliveryView => ({
      id: r.id,
      at: new Date(r.at).toISOString(),
      method: r.method as DeliveryView['method'],
      status: r.status,
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
      messageId: r.messageId,
      roomId: r.roomId,
      seq: r.seq,
      bytes: r.bytes,
    }),
  );
  const last = entities.at(-1);
  return rows.length > page.limit && last ? { entities, nextBefore: last.id } : { entities };
}

/** Each webhook's latest delivery (epoch ms), within the log's bounds. */
export async function lastDeliveries(db: Db, webhookIds?: readonly string[]): Promise<Map<string, number>> {
  const rows = await db
    .select({ webhookId: webhookDeliveries.webhookId, at: max(webhookDeliveries.at) })
    .from(webhookDeliveries)
    .where(
      webhookIds === undefined
        ? undefined
        : sql`${webhookDeliveries.webhookId} IN (SELECT value FROM json_each(${JSON.stringify(webhookIds)}))`,
    )
    .groupBy(webhookDeliveries.webhookId);
  return new Map(rows.filter((r) => r.at !== null).map((r) => [r.webhookId, r.at as number]));
}
