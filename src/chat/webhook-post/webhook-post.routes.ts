import { Hono } from 'hono';
import type { AppEnv } from '../../http/context';
import { readBodyBytes } from '../../http/json-body';
import { webhookNotFound } from '../chat-errors';
import { CHAT_LIMITS, isUuid } from '../limits';
import { postToWebhook } from './post-webhook';

/**
 * The public webhook post: no authentication (the URL's last segment, the webhook's posting secret, is
 * the credential; it is not the webhook's public id); post-webhook.ts does the rest.
 */
export const webhookPostRoutes = new Hono<AppEnv>().post('/webhooks/api/v1/webhook/:secret', async (c) => {
  const secret = c.req.param('secret');
  // A malformed secret cannot name a webhook: the one 404, before the body is read.
  if (!isUuid(secret)) throw webhookNotFound();
  const answer = await postToWebhook(c.env, c.var.db, secret, {
    contentType: c.req.header('Content-Type') ?? '',
    header: (name) => c.req.header(name),
    query: (name) => c.req.query(name),
    body: () => readBodyBytes(c.req.raw, CHAT_LIMITS.webhookBodyBytes),
  });
  return c.body(answer.body, answer.status as 200, answer.headers);
});
