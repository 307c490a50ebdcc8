import { and, desc, eq, gt, lt, max, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { webhookDeliveries } from '../../db/schema';
import { CHAT_LIMITS } from '../limits';

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

/**
 * Writes one entry and prunes the webhook's log to its bounds (the newest
 * CHAT_LIMITS.deliveryLogPerWebhook, none older than CHAT_LIMITS.deliveryLogTtlMs), as one D1 batch.
 * Called through waitUntil after the answer is decided: it never delays or changes that answer.
 */
export async function recordDelivery(d1: D1Database, entry: DeliveryEntry, now = Date.now()): Promise<void> {
  await d1.batch([
    d1
      .prepare(
        `INSERT INTO webhook_deliveries (webhook_id, at, method, status, error_code, error_message, message_id, room_id, seq, bytes)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        entry.webhookId,
        now,
        entry.method,
        entry.status,
        entry.errorCode,
        entry.errorMessage?.slice(0, ERROR_MESSAGE_CHARS) ?? null,
        entry.messageId,
        entry.roomId,
        entry.seq,
        entry.bytes,
      ),
    d1
      .prepare(
        `DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND (at < ?2 OR id <= (
           SELECT id FROM webhook_deliveries WHERE webhook_id = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?3))`,
      )
      .bind(entry.webhookId, now - CHAT_LIMITS.deliveryLogTtlMs, CHAT_LIMITS.deliveryLogPerWebhook),
  ]);
}

/** Records without ever failing the caller (a log that cannot be written is reported in the Worker's log). */
export function recordDeliveryQuietly(d1: D1Database, entry: DeliveryEntry): Promise<void> {
  return recordDelivery(d1, entry).catch((err: unknown) => console.error('delivery log write failed', err));
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
