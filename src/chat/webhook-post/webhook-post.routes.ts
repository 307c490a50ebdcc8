import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/context';
import { ApiError } from '../../http/api-error';
import { readBodyBytes } from '../../http/json-body';
import { webhookNotFound } from '../chat-errors';
import { CHAT_LIMITS, isUuid } from '../limits';
import { findWebhookByPostSecretHash, postSecretHash } from '../webhooks.store';
import { webhookCopies } from './admission';
import { logDelivery, type DeliveryEntry } from './delivery-log';
import { changeWebhookMessage, postToWebhook, type PostAnswer, type PostRequest, type PostTrace } from './post-webhook';

function postRequest(c: Context<AppEnv>): PostRequest {
  return {
    contentType: c.req.header('Content-Type') ?? '',
    header: (name) => c.req.header(name),
    query: (name) => c.req.query(name),
    body: () => readBodyBytes(c.req.raw, CHAT_LIMITS.webhookBodyBytes),
  };
}

/**
 * Runs one request to a webhook URL and writes its outcome to the webhook's delivery log after the
 * answer is decided (waitUntil: the log never delays or changes the answer). A refusal made before
 * the webhook was read (a malformed generic body) finds it by the secret's hash; an unknown secret
 * has no webhook and no log.
 */
async function logged(
  c: Context<AppEnv>,
  secret: string,
  method: DeliveryEntry['method'],
  run: (trace: PostTrace) => Promise<PostAnswer>,
): Promise<Response> {
  const trace: PostTrace = { bytes: Number(c.req.header('Content-Length') ?? 0) || 0 };
  const log = (entry: Omit<DeliveryEntry, 'webhookId' | 'method' | 'bytes'>) => {
    const write = (webhookId: string | undefined) => {
      if (webhookId !== undefined) logDelivery(c.executionCtx, c.env.DB, { ...entry, webhookId, method, bytes: trace.bytes });
    };
    if (trace.webhookId !== undefined) write(trace.webhookId);
    else c.executionCtx.waitUntil(webhookIdOf(c, secret).then(write));
  };
  let answer: PostAnswer;
  try {
    answer = await run(trace);
  } catch (err) {
    // No webhook has this secret (never had, or it was rotated away: an isolate's copy of the webhook
    // may have matched the old secret before the gate said otherwise), so there is no log to write to.
    const unknownUrl =
      err instanceof ApiError && err.status === 404 && (trace.webhookId === undefined || err.message === webhookNotFound().message);
    if (err instanceof ApiError && !unknownUrl) {
      log({ status: err.status, errorCode: err.code, errorMessage: err.message, messageId: null, roomId: null, seq: null });
    } else if (!(err instanceof ApiError)) {
      log({ status: 500, errorCode: 'internal.server.error', errorMessage: null, messageId: null, roomId: null, seq: null });
    }
    throw err;
  }
  const d = answer.delivery;
  log({
    status: answer.status,
    errorCode: null,
    errorMessage: null,
    messageId: d?.messageId ?? null,
    roomId: d?.roomId ?? null,
    seq: d?.seq ?? null,
  });
  return c.body(answer.body, answer.status as 200, answer.headers);
}

async function webhookIdOf(c: Context<AppEnv>, secret: string): Promise<string | undefined> {
  const hash = await postSecretHash(secret);
  try {
    return (webhookCopies.get(hash) ?? (await findWebhookByPostSecretHash(c.var.db, hash)))?.id;
  } catch {
    return undefined;
  }
}

/**
 * The public webhook post, and a webhook's edits and deletes of its own messages: no authentication
 * (the URL's last segment, the webhook's posting secret, is the credential; it is not the webhook's
 * public id); post-webhook.ts does the rest.
 */
export const webhookPostRoutes = new Hono<AppEnv>()
  .post('/webhooks/api/v1/webhook/:secret', async (c) => {
    const secret = c.req.param('secret');
    // A malformed secret cannot name a webhook: the one 404, before the body is read.
    if (!isUuid(secret)) throw webhookNotFound();
    return logged(c, secret, 'POST', (trace) => postToWebhook(c.env, c.var.db, secret, postRequest(c), trace));
  })
  .on(['PATCH', 'DELETE'], '/webhooks/api/v1/webhook/:secret/messages/:messageId', async (c) => {
    const secret = c.req.param('secret');
    const messageId = c.req.param('messageId');
    if (!isUuid(secret)) throw webhookNotFound();
    const method = c.req.method === 'DELETE' ? 'DELETE' : 'PATCH';
    // Any message id is looked for (an unknown one is a 404 of a known webhook: logged).
    return logged(c, secret, method, (trace) => changeWebhookMessage(c.env, c.var.db, secret, messageId, method, postRequest(c), trace));
  });
