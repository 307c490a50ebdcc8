import { Hono } from 'hono';
import { z } from 'zod';
import { ApiError, type ErrorDetail } from '../http/api-error';
import { requirePermission } from '../http/auth';
import type { AppEnv } from '../http/context';
import type { Db } from '../db/client';
import type { WebhookMapping } from '../db/schema';
import { jsonBody } from '../http/json-body';
import { validJson, validQuery } from '../http/validate';
import { flushDeliveries, lastDeliveries, listDeliveries } from './webhook-post/delivery-log';
import { takesSecret } from './integrations';
import { CHAT_LIMITS, isUuid, RATE_LIMIT_MAX, WEBHOOK_KINDS } from './limits';
import { uuidParam } from './params';
import { iconUrlProblem } from './webhook-post/sender';
import { gateStub } from './stubs';
import { existingRoomIds } from './rooms.store';
import { createWebhook, getWebhook, listWebhooks, webhookView, type WebhookRow } from './webhooks.store';

const roomIdField = z.string().refine(isUuid, { message: 'must be a room id (UUID)' });

const mappingSchema = z.strictObject({
  field: z.enum(['message', 'metadata']),
  match: z.enum(['exact', 'contains', 'prefix']),
  value: z.string().min(1).max(CHAT_LIMITS.mappingValueChars),
  roomIds: z.array(roomIdField).min(1).max(CHAT_LIMITS.roomIdsPerMapping),
});

const rateLimitSchema = z.strictObject({
  burst: z.number().int().min(1).max(RATE_LIMIT_MAX.burst).optional(),
  perSecond: z.number().positive().max(RATE_LIMIT_MAX.perSecond).optional(),
});

/** Any text a sender's settings page takes; the HMAC key is its UTF-8 bytes. */
const secretField = z
  .string()
  .min(1, { message: 'must not be empty (send null to remove the secret)' })
  .max(256, { message: 'must be at most 256 characters' })
  .regex(/^[^\u0000-\u001f\u007f]+$/, { message: 'must not contain control characters' });

/** The webhook's own icon: an https URL, as a post's own icon must be (webhook-post/sender.ts). */
const avatarUrlField = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    const problem = iconUrlProblem(value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

const SIGNED_KINDS = 'only github, bitbucket and jira webhooks take a secret (their deliveries are signed)';

const fields = {
  name: z.string().trim().min(1).max(CHAT_LIMITS.nameChars),
  kind: z.enum(WEBHOOK_KINDS),
  roomId: roomIdField,
  active: z.boolean(),
  mappings: z.array(mappingSchema).max(CHAT_LIMITS.mappings),
  rateLimit: rateLimitSchema,
  secret: secretField.nullable(),
  avatarUrl: avatarUrlField.nullable(),
  allowOverrides: z.boolean(),
};

const createWebhookSchema = z
  .strictObject({
    ...fields,
    // As Slack's and Mattermost's incoming webhooks: a name and a room make one; the generic body is what any system can send.
    kind: fields.kind.default('generic'),
    active: fields.active.optional(),
    mappings: fields.mappings.optional(),
    rateLimit: fields.rateLimit.optional(),
    secret: fields.secret.optional(),
    avatarUrl: fields.avatarUrl.optional(),
    allowOverrides: fields.allowOverrides.optional(),
  })
  .superRefine((input, ctx) => {
    // For the other kinds `secret` is not a field at all: refused like any unknown field.
    if (input.secret != null && !takesSecret(input.kind)) {
      ctx.addIssue({ code: 'custom', path: [], message: `Unrecognized key: "secret" (${SIGNED_KINDS})` });
    }
  });

const patchWebhookSchema = z
  .strictObject(fields)
  .partial()
  .refine((p) => Object.keys(p).length > 0, { message: 'Give at least one field to change.' });

/** Every room a webhook would post to must exist; the first missing one is named like a field. */
async function assertRoomsExist(db: Db, roomId: string | undefined, mappings: WebhookMapping[] | undefined): Promise<void> {
  const refs: { fieldName: string; id: string }[] = [];
  if (roomId !== undefined) refs.push({ fieldName: 'roomId', id: roomId });
  mappings?.forEach((m, i) => m.roomIds.forEach((id, j) => refs.push({ fieldName: `mappings[${i}].roomIds[${j}]`, id })));
  const found = await existingRoomIds(
    db,
    refs.map((r) => r.id),
  );
  const missing: ErrorDetail[] = refs.filter((r) => !found.has(r.id)).map((r) => ({ errorCode: 'invalid.value', fieldName: r.fieldName }));
  if (missing.length > 0) {
    throw new ApiError(400, 'invalid.value', `${missing[0]!.fieldName}: no room has this id`, missing.slice(0, 20));
  }
}

const deliveriesQuery = z.object({
  before: z
    .string()
    .regex(/^\d{1,15}$/, { message: 'must be a whole number' })
    .transform(Number)
    .optional(),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, { message: 'must be a whole number' })
    .transform(Number)
    .pipe(z.number().int().min(1).max(CHAT_LIMITS.deliveryLogPageMax))
    .optional(),
});

const admin = requirePermission('chat:admin');
const webhookId = uuidParam('No webhook has this id.');

function notFound(): ApiError {
  return ApiError.notFound('No webhook has this id.');
}

function origin(url: string): string {
  return new URL(url).origin;
}

async function lastDeliveryAt(db: Db, id: string): Promise<number | null> {
  return (await lastDeliveries(db, [id])).get(id) ?? null;
}

async function found(db: Db, id: string): Promise<WebhookRow> {
  const row = await getWebhook(db, id);
  if (!row) throw notFound();
  return row;
}

export const webhooksRoutes = new Hono<AppEnv>()
  .post('/api/v1/webhooks', admin, jsonBody(CHAT_LIMITS.adminBodyBytes), validJson(createWebhookSchema), async (c) => {
    const input = c.req.valid('json');
    await assertRoomsExist(c.var.db, input.roomId, input.mappings);
    return c.json(webhookView(await createWebhook(c.var.db, input), origin(c.req.url), null), 201);
  })
  .get('/api/v1/webhooks', admin, async (c) => {
    const base = origin(c.req.url);
    // The log as this isolate's own posts left it (delivery-log.ts coalesces its writes).
    await flushDeliveries(c.env.DB);
    const [rows, last] = await Promise.all([listWebhooks(c.var.db), lastDeliveries(c.var.db)]);
    return c.json({ entities: rows.map((row) => webhookView(row, base, last.get(row.id) ?? null)) });
  })
  .get('/api/v1/webhooks/:id', admin, webhookId, async (c) => {
    const id = c.req.param('id');
    await flushDeliveries(c.env.DB);
    const [row, last] = await Promise.all([found(c.var.db, id), lastDeliveryAt(c.var.db, id)]);
    return c.json(webhookView(row, origin(c.req.url), last));
  })
  /**
   * The webhook's recent requests (its delivery log), newest first: `limit` (1–100, default 50) with
   * `id < before`; `nextBefore` when more remain. The newest 100 of the last 7 days are kept.
   */
  .get('/api/v1/webhooks/:id/deliveries', admin, webhookId, validQuery(deliveriesQuery), async (c) => {
    const id = c.req.param('id');
    await found(c.var.db, id);
    const { before, limit = CHAT_LIMITS.deliveryLogPageDefault } = c.req.valid('query');
    await flushDeliveries(c.env.DB);
    return c.json(await listDeliveries(c.var.db, id, { before, limit }));
  })
  .patch('/api/v1/webhooks/:id', admin, webhookId, jsonBody(CHAT_LIMITS.adminBodyBytes), validJson(patchWebhookSchema), async (c) => {
    const patch = c.req.valid('json');
    const current = await found(c.var.db, c.req.param('id'));
    const kind = patch.kind ?? current.kind;
    const secret = patch.secret !== undefined ? patch.secret : current.secret;
    if (secret !== null && !takesSecret(kind)) {
      if (patch.secret != null) throw ApiError.invalidValue('secret', `secret: ${SIGNED_KINDS}.`);
      throw ApiError.invalidValue(
        'kind',
        `kind: this webhook has a secret, which a ${kind} webhook cannot check; send "secret": null with the new kind.`,
      );
    }
    await assertRoomsExist(c.var.db, patch.roomId, patch.mappings);
    // Changes go through the webhook's gate, which keeps the copy the post path uses.
    const row = await gateStub(c.env, current.id).update(current.id, patch);
    if (!row) throw notFound();
    return c.json(webhookView(row, origin(c.req.url), await lastDeliveryAt(c.var.db, row.id)));
  })
  .delete('/api/v1/webhooks/:id', admin, webhookId, async (c) => {
    const id = c.req.param('id');
    if (!(await gateStub(c.env, id).remove(id))) throw notFound();
    return c.body(null, 204);
  })
  /**
   * New posting secret, hence a new URL; the old URL answers 404 from this moment. The id (public, in
   * every message) stays. Also how a webhook that migration 0007 left without a URL gets one.
   */
  .post('/api/v1/webhooks/:id/rotate', admin, webhookId, async (c) => {
    const id = c.req.param('id');
    const row = await gateStub(c.env, id).rotate(id);
    if (!row) throw notFound();
    return c.json(webhookView(row, origin(c.req.url), await lastDeliveryAt(c.var.db, id)));
  });
