import { Hono } from 'hono';
import { createMiddleware } from 'hono/factory';
import { z } from 'zod';
import { ApiError } from '../http/api-error';
import type { AppEnv } from '../http/context';
import { jsonBody } from '../http/json-body';
import { sha256Hex } from '../http/secrets';
import { TOO_LARGE_ISSUE, validJson } from '../http/validate';
import { DeliveryError, storeUnavailable, webhookNotFound } from './chat-errors';
import { deliver, gateStub } from './deliver';
import { CHAT_LIMITS, codePointLength, isUuid } from './limits';
import { renderMarkdown } from './markdown';
import { routeMessage } from './routing';
import type { Admission } from './webhook-gate';
import { findWebhookByUrlId, type WebhookRow } from './webhooks.store';

/** `{message, metadata?}` (Genesys' generic webhook body); unknown fields are ignored. */
export const webhookMessageSchema = z.object({
  message: z
    .string({ error: 'message is required and must be a string' })
    .refine((m) => m.trim().length > 0, { message: 'message must not be empty' })
    .refine((m) => codePointLength(m) <= CHAT_LIMITS.messageChars, {
      message: `message is longer than ${CHAT_LIMITS.messageChars} characters`,
      params: TOO_LARGE_ISSUE,
    }),
  metadata: z
    .string({ error: 'metadata must be a string' })
    .refine((m) => codePointLength(m) <= CHAT_LIMITS.metadataChars, {
      message: `metadata is longer than ${CHAT_LIMITS.metadataChars} characters`,
      params: TOO_LARGE_ISSUE,
    })
    .nullish(),
});

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** `Idempotency-Key`, or GitHub's `X-GitHub-Delivery` (the same on a redelivery). */
function idempotencyKey(header: (name: string) => string | undefined): string | undefined {
  for (const name of ['Idempotency-Key', 'X-GitHub-Delivery']) {
    const value = header(name);
    if (value === undefined) continue;
    if (!IDEMPOTENCY_KEY.test(value)) {
      throw ApiError.invalidValue(name, `${name} must be 1 to ${CHAT_LIMITS.idempotencyKeyChars} printable ASCII characters.`);
    }
    return value;
  }
  return undefined;
}

/** A malformed id cannot name a webhook: answer before reading the body, with the one 404. */
const wellFormedId = createMiddleware<AppEnv>(async (c, next) => {
  if (!isUuid(c.req.param('id') ?? '')) throw webhookNotFound();
  await next();
});

function admissionError(admission: Exclude<Admission, { kind: 'go' | 'replay' }>): ApiError {
  switch (admission.kind) {
    case 'limited':
      return new ApiError(429, 'too.many.requests', 'This webhook is over its rate limit.', [], {
        'Retry-After': String(admission.retryAfterSeconds),
      });
    case 'in-progress':
      return new ApiError(409, 'conflict', 'A request with this idempotency key is still in progress.', [], { 'Retry-After': '1' });
    case 'key-reused':
      return new ApiError(409, 'conflict', 'This idempotency key was already used for a different message.');
  }
}

async function lookUp(c: { var: AppEnv['Variables'] }, id: string): Promise<WebhookRow> {
  let hook: WebhookRow | undefined;
  try {
    hook = await findWebhookByUrlId(c.var.db, id);
  } catch (err) {
    console.error('webhook lookup failed', err);
    throw storeUnavailable();
  }
  if (!hook) throw webhookNotFound();
  if (!hook.active) throw new ApiError(403, 'webhook.inactive', 'This webhook is paused.');
  return hook;
}

export const webhookPostRoutes = new Hono<AppEnv>().post(
  '/webhooks/api/v1/webhook/:id',
  wellFormedId,
  jsonBody(CHAT_LIMITS.webhookBodyBytes),
  validJson(webhookMessageSchema),
  async (c) => {
    const { message, metadata = null } = c.req.valid('json');
    const key = idempotencyKey((name) => c.req.header(name));
    const hook = await lookUp(c, c.req.param('id'));

    const gate = gateStub(c.env, hook.id);
    const idempotency = key === undefined ? undefined : { key, fingerprint: await sha256Hex(JSON.stringify([message, metadata])) };
    let admission: Admission;
    try {
      admission = await gate.admit({ rateLimit: { burst: hook.rateBurst, perSecond: hook.ratePerSecond }, idempotency });
    } catch (err) {
      console.error('webhook gate failed', err);
      throw storeUnavailable();
    }
    if (admission.kind === 'replay') {
      return c.body(admission.body, admission.status as 200, { 'Content-Type': 'application/json', 'Idempotent-Replayed': 'true' });
    }
    if (admission.kind !== 'go') throw admissionError(admission);

    let result;
    try {
      const targets = routeMessage(hook, message, metadata);
      const posted = { webhookId: hook.id, markdown: message, html: renderMarkdown(message), metadata };
      result = await deliver(c.env, targets, posted, admission.attempt);
    } catch (err) {
      const maybeStored = err instanceof DeliveryError ? err.maybeStored : false;
      if (key !== undefined) await gate.release(key, maybeStored).catch(() => undefined);
      throw err;
    }
    const body = JSON.stringify({ deliveries: result.deliveries });
    if (key !== undefined) {
      // Stored already: a failure to remember the answer must not turn the success into an error.
      await gate.complete(key, result.status, body).catch((err: unknown) => console.error('idempotency record failed', err));
    }
    return c.body(body, result.status, { 'Content-Type': 'application/json' });
  },
);
