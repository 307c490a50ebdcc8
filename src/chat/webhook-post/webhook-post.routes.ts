import { Hono } from 'hono';
import type { AppEnv } from '../../http/context';
import { readBodyBytes } from '../../http/json-body';
import { webhookNotFound } from '../chat-errors';
import { CHAT_LIMITS, isUuid } from '../limits';
import { postToWebhook } from './post-webhook';

/** The public webhook post: no authentication (the URL's id is the credential); post-webhook.ts does the rest. */
export const webhookPostRoutes = new Hono<AppEnv>().post('/webhooks/api/v1/webhook/:id', async (c) => {
  const id = c.req.param('id');
  // A malformed id cannot name a webhook: the one 404, before the body is read.
  if (!isUuid(id)) throw webhookNotFound();
  const answer = await postToWebhook(c.env, c.var.db, id, {
    contentType: c.req.header('Content-Type') ?? '',
    header: (name) => c.req.header(name),
    body: () => readBodyBytes(c.req.raw, CHAT_LIMITS.webhookBodyBytes),
  });
  return c.body(answer.body, answer.status as 200, answer.headers);
});
