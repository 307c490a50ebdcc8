import { asc, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { webhookDeliveries, webhooks, type WebhookMapping } from '../db/schema';
import { sha256Hex } from '../http/secrets';
import { takesSecret } from './integrations';
import { DEFAULT_RATE_LIMIT, defaultIconUrl, WEBHOOK_PATH, type RateLimit, type WebhookKind } from './limits';

export type WebhookRow = typeof webhooks.$inferSelect;

export interface WebhookView {
  /** Public: every message the webhook posts carries it (`webhookId`); it does not post. */
  id: string;
  /**
   * The full URL to post to; its last segment, the posting secret, is the only credential a sender
   * needs and appears nowhere but here. Null for a webhook that migration 0007 left without one.
   */
  url: string | null;
  /** Only when `url` is null: POST /api/v1/webhooks/{id}/rotate gives the webhook a URL. */
  needsRotation?: true;
  name: string;
  kind: WebhookKind;
  roomId: string;
  active: boolean;
  mappings: WebhookMapping[];
  rateLimit: RateLimit;
  /** The webhook's own icon (https); null: its messages show the default icon of its kind. */
  avatarUrl: string | null;
  /** Whether a post may name its own sender (`username`, `iconUrl`, or the sender format's spelling of them). */
  allowOverrides: boolean;
  /**
   * Only on kinds whose sender signs deliveries (github, bitbucket, jira): whether a shared secret
   * is set. The secret itself is never returned.
   */
  hasSecret?: boolean;
  /**
   * When its URL last got a request, refused ones included (its delivery log, GET
   * /api/v1/webhooks/{id}/deliveries); null: none in the last 7 days.
   */
  lastDeliveryAt?: string | null;
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
  avatarUrl?: string | null;
  allowOverrides?: boolean;
}

export type WebhookPatch = Partial<Omit<WebhookInput, 'rateLimit'>> & { rateLimit?: Partial<RateLimit> };

/** `lastDeliveryAt`: epoch ms of the newest entry of its delivery log (null: none); undefined: not shown. */
export function webhookView(row: WebhookRow, origin: string, lastDeliveryAt?: number | null): WebhookView {
  return {
    id: row.id,
    url: row.postSecret === null ? null : origin + WEBHOOK_PATH + row.postSecret,
    ...(row.postSecret === null ? { needsRotation: true as const } : {}),
    name: row.name,
    kind: row.kind as WebhookKind,
    roomId: row.roomId,
    active: row.active,
    mappings: row.mappings,
    rateLimit: { burst: row.rateBurst, perSecond: row.ratePerSecond },
    avatarUrl: row.avatarUrl,
    allowOverrides: row.allowOverrides,
    ...(takesSecret(row.kind) ? { hasSecret: row.secret !== null } : {}),
    ...(lastDeliveryAt === undefined ? {} : { lastDeliveryAt: lastDeliveryAt === null ? null : new Date(lastDeliveryAt).toISOString() }),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/**
 * A fresh posting secret and its SHA-256. A UUIDv4 (122 random bits), the URL's shape since the
 * first release; unrelated to the public id.
 */
async function newPostSecret(): Promise<{ postSecret: string; postSecretHash: string }> {
  const postSecret = crypto.randomUUID();
  return { postSecret, postSecretHash: await sha256Hex(postSecret) };
}

export async function createWebhook(db: Db, input: WebhookInput): Promise<WebhookRow> {
  const now = new Date().toISOString();
  const row: WebhookRow = {
    id: crypto.randomUUID(),
    ...(await newPostSecret()),
    name: input.name,
    kind: input.kind,
    roomId: input.roomId,
    active: input.active ?? true,
    mappings: input.mappings ?? [],
    rateBurst: input.rateLimit?.burst ?? DEFAULT_RATE_LIMIT.burst,
    ratePerSecond: input.rateLimit?.perSecond ?? DEFAULT_RATE_LIMIT.perSecond,
    secret: input.secret ?? null,
    avatarUrl: input.avatarUrl ?? null,
    allowOverrides: input.allowOverrides ?? false,
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

/**
 * The post path's lookup: by the SHA-256 of the URL's posting secret (`postSecretHash(secret)`), so
 * index timing tells nothing about the secret.
 */
export async function findWebhookByPostSecretHash(db: Db, hash: string): Promise<WebhookRow | undefined> {
  return db.select().from(webhooks).where(eq(webhooks.postSecretHash, hash)).get();
}

/**
 * Who the webhook's messages come from when a post does not say (or may not say): its name, and its
 * own icon or else its kind's.
 */
export function webhookSender(row: Pick<WebhookRow, 'name' | 'kind' | 'avatarUrl'>): { name: string; iconUrl: string } {
  return { name: row.name, iconUrl: row.avatarUrl ?? defaultIconUrl(row.kind) };
}

export function postSecretHash(secret: string): Promise<string> {
  return sha256Hex(secret);
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

/**
 * Gives the webhook a fresh posting secret, keeping its id; the old URL stops matching with this one
 * UPDATE. Made by the webhook's gate, which picks `updatedAt` (a new version: copies of the row made
 * before it are stale).
 */
export async function rotateWebhook(db: Db, id: string, updatedAt: string): Promise<WebhookRow | undefined> {
  return db
    .update(webhooks)
    .set({ ...(await newPostSecret()), updatedAt })
    .where(eq(webhooks.id, id))
    .returning()
    .get();
}

export async function deleteWebhook(db: Db, id: string): Promise<boolean> {
  const [rows] = await db.batch([
    db.delete(webhooks).where(eq(webhooks.id, id)).returning({ id: webhooks.id }),
    db.delete(webhookDeliveries).where(eq(webhookDeliveries.webhookId, id)),
  ]);
  return rows.length > 0;
}
