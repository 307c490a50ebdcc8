import { asc, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { webhooks, type WebhookMapping } from '../db/schema';
import { sha256Hex } from '../http/secrets';
import { takesSecret } from './integrations';
import { DEFAULT_RATE_LIMIT, WEBHOOK_PATH, type RateLimit, type WebhookKind } from './limits';

export type WebhookRow = typeof webhooks.$inferSelect;

export interface WebhookView {
  id: string;
  /** The full URL to post to; the id in it is the only credential a sender needs. */
  url: string;
  name: string;
  kind: WebhookKind;
  roomId: string;
  active: boolean;
  mappings: WebhookMapping[];
  rateLimit: RateLimit;
  /**
   * Only on kinds whose sender signs deliveries (github, bitbucket, jira): whether a shared secret
   * is set. The secret itself is never returned.
   */
  hasSecret?: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookInput {
  name: string;
  kind: WebhookKind;
  roomId: string;
  active?: boolean;
  mappings?: WebhookMapping[];
  rateLimit?: Partial<RateLimit>;
  /** Shared secret for signed deliveries; null clears it. */
  secret?: string | null;
}

export type WebhookPatch = Partial<Omit<WebhookInput, 'rateLimit'>> & { rateLimit?: Partial<RateLimit> };

export function webhookView(row: WebhookRow, origin: string): WebhookView {
  return {
    id: row.id,
    url: origin + WEBHOOK_PATH + row.id,
    name: row.name,
    kind: row.kind as WebhookKind,
    roomId: row.roomId,
    active: row.active,
    mappings: row.mappings,
    rateLimit: { burst: row.rateBurst, perSecond: row.ratePerSecond },
    ...(takesSecret(row.kind) ? { hasSecret: row.secret !== null } : {}),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export async function createWebhook(db: Db, input: WebhookInput): Promise<WebhookRow> {
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  const row: WebhookRow = {
    id,
    idHash: await sha256Hex(id),
    name: input.name,
    kind: input.kind,
    roomId: input.roomId,
    active: input.active ?? true,
    mappings: input.mappings ?? [],
    rateBurst: input.rateLimit?.burst ?? DEFAULT_RATE_LIMIT.burst,
    ratePerSecond: input.rateLimit?.perSecond ?? DEFAULT_RATE_LIMIT.perSecond,
    secret: input.secret ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await db.insert(webhooks).values(row);
  return row;
}

export async function listWebhooks(db: Db): Promise<WebhookRow[]> {
  return db.select().from(webhooks).orderBy(asc(webhooks.createdAt), asc(webhooks.id));
}

export async function getWebhook(db: Db, id: string): Promise<WebhookRow | undefined> {
  return db.select().from(webhooks).where(eq(webhooks.id, id)).get();
}

/** The post path's lookup: by the id's SHA-256, so index timing tells nothing about the id. */
export async function findWebhookByUrlId(db: Db, urlId: string): Promise<WebhookRow | undefined> {
  return db
    .select()
    .from(webhooks)
    .where(eq(webhooks.idHash, await sha256Hex(urlId)))
    .get();
}

/** Made by the webhook's gate (webhook-gate.ts), which keeps its copy of the row and picks `updatedAt`. */
export async function updateWebhook(
  db: Db,
  current: WebhookRow,
  patch: WebhookPatch,
  updatedAt = new Date().toISOString(),
): Promise<WebhookRow | undefined> {
  const { rateLimit, ...rest } = patch;
  return db
    .update(webhooks)
    .set({
      ...rest,
      ...(rateLimit?.burst !== undefined ? { rateBurst: rateLimit.burst } : {}),
      ...(rateLimit?.perSecond !== undefined ? { ratePerSecond: rateLimit.perSecond } : {}),
      updatedAt,
    })
    .where(eq(webhooks.id, current.id))
    .returning()
    .get();
}

/** Gives the webhook a fresh id; the old URL stops matching with this one UPDATE. Made by the webhook's gate. */
export async function rotateWebhook(db: Db, id: string): Promise<WebhookRow | undefined> {
  const next = crypto.randomUUID();
  return db
    .update(webhooks)
    .set({ id: next, idHash: await sha256Hex(next), updatedAt: new Date().toISOString() })
    .where(eq(webhooks.id, id))
    .returning()
    .get();
}

export async function deleteWebhook(db: Db, id: string): Promise<boolean> {
  const rows = await db.delete(webhooks).where(eq(webhooks.id, id)).returning({ id: webhooks.id });
  return rows.length > 0;
}
