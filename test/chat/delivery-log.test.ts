import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { CHAT_LIMITS } from '../../src/chat/limits';
import { recordDeliveries } from '../../src/chat/webhook-post/delivery-log';
import { createToken, expectError, send } from '../helpers';
import { createWebhook, post, postOk, roomWithWebhook, waitUntil } from './helpers';

/**
 * Each webhook's delivery log (issue 25, item 10, server side): every request to its URL, refused
 * ones included, with when, status, error, message and bytes; bounded; newest first, paged; and each
 * webhook's lastDeliveryAt. Written after the answer (waitUntil), so the tests wait for it.
 */

type Entry = {
  id: number;
  at: string;
  method: string;
  status: number;
  errorCode: string | null;
  errorMessage: string | null;
  messageId: string | null;
  roomId: string | null;
  seq: number | null;
  bytes: number;
};

async function deliveries(hookId: string, query = ''): Promise<{ entities: Entry[]; nextBefore?: number }> {
  const res = await send('GET', `/api/v1/webhooks/${hookId}/deliveries${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function logged(hookId: string, n: number): Promise<Entry[]> {
  let entities: Entry[] = [];
  await waitUntil(async () => (entities = (await deliveries(hookId, '?limit=100')).entities).length >= n, `${n} log entries`);
  return entities;
}

describe("a webhook's delivery log", () => {
  it('records stored posts and refusals (400, 401, 429), newest first, with status, error, message and bytes', async () => {
    const { roomId, hook } = await roomWithWebhook({ rateLimit: { burst: 2, perSecond: 0.01 } });
    const body = JSON.stringify({ message: 'stored' });
    const [stored] = await postOk(hook, 'stored');
    expectError(await post(hook, { message: 42 }), 400, 'invalid.value', 'message');
    expect((await post(hook, { message: 'second' })).status).toBe(200);
    expectError(await post(hook, { message: 'third' }), 429, 'too.many.requests');

    const entries = await logged(hook.id, 4);
    expect(entries.map((e) => [e.method, e.status, e.errorCode])).toEqual([
      ['POST', 429, 'too.many.requests'],
      ['POST', 200, null],
      ['POST', 400, 'invalid.value'],
      ['POST', 200, null],
    ]);
    expect(entries[3]).toMatchObject({ messageId: stored!.messageId, roomId, seq: 1, bytes: body.length, errorMessage: null });
    expect(entries[2]!.errorMessage).toContain('message');
    expect(entries[2]).toMatchObject({ messageId: null, seq: null });
    expect(new Date(entries[0]!.at).getTime()).toBeGreaterThan(Date.now() - 60_000);

    const view = await send('GET', `/api/v1/webhooks/${hook.id}`);
    expect(view.body.lastDeliveryAt).toBe(entries[0]!.at);
    const list = await send('GET', '/api/v1/webhooks');
    expect(list.body.entities.find((w: { id: string }) => w.id === hook.id).lastDeliveryAt).toBe(entries[0]!.at);
  });

  it('logs nothing for a post to a rotated-away URL, though this isolate had the webhook under it', async () => {
    const { hook } = await roomWithWebhook();
    await postOk(hook, 'under the old URL');
    const rotated = await send('POST', `/api/v1/webhooks/${hook.id}/rotate`);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expectError(await post(hook, { message: 'to the old URL' }), 404, 'not.found');
    const [fresh] = await postOk({ ...hook, url: rotated.body.url }, 'under the new URL');
    // The first and last posts only: the old URL's 404 belongs to no webhook now.
    const entries = await logged(hook.id, 2);
    await new Promise((r) => setTimeout(r, 200));
    const after = (await deliveries(hook.id, '?limit=100')).entities;
    expect(after.map((e) => [e.status, e.messageId])).toEqual([
      [200, fresh!.messageId],
      [200, entries[1]!.messageId],
    ]);
  });

  it('records a bad signature, edits and deletes, and nothing for an unknown secret', async () => {
    const { roomId } = await roomWithWebhook();
    const signed = await createWebhook({ roomId, kind: 'github', secret: 's3cret' });
    expectError(await post(signed, { message: 'unsigned' }), 401, 'bad.signature');
    const [entry] = await logged(signed.id, 1);
    expect(entry).toMatchObject({ status: 401, errorCode: 'bad.signature' });

    const { hook } = await roomWithWebhook();
    const [m] = await postOk(hook, 'v1');
    const path = `${new URL(hook.url).pathname}/messages/${m!.messageId}`;
    expect((await send('PATCH', path, { token: null, json: { message: 'v2' } })).status).toBe(200);
    expect((await send('DELETE', path, { token: null })).status).toBe(200);
    expectError(await send('DELETE', `${new URL(hook.url).pathname}/messages/${crypto.randomUUID()}`, { token: null }), 404, 'not.found');
    const entries = await logged(hook.id, 4);
    expect(entries.map((e) => [e.method, e.status, e.seq])).toEqual([
      ['DELETE', 404, null],
      ['DELETE', 200, 1],
      ['PATCH', 200, 1],
      ['POST', 200, 1],
    ]);

    const unknown = crypto.randomUUID();
    expectError(await post(unknown, { message: 'nobody' }), 404, 'not.found');
    // Logged after it: the log's coalesced write has gone past the unknown post by the time this entry is in.
    await postOk(hook, 'after');
    await logged(hook.id, 5);
    const { results } = await env.DB.prepare('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ?')
      .bind(unknown)
      .all<{ n: number }>();
    expect(results[0]!.n).toBe(0);
  });

  it('keeps the newest 100 per webhook and none older than 7 days, and pages with before and nextBefore', async () => {
    const { hook } = await roomWithWebhook();
    const now = Date.now();
    const entry = {
      webhookId: hook.id,
      method: 'POST' as const,
      status: 200,
      errorCode: null,
      errorMessage: null,
      messageId: null,
      roomId: null,
      seq: null,
      bytes: 1,
    };
    await recordDeliveries(env.DB, [{ ...entry, at: now - CHAT_LIMITS.deliveryLogTtlMs - 1000 }]);
    for (let i = 0; i < CHAT_LIMITS.deliveryLogPerWebhook + 5; i++)
      await recordDeliveries(env.DB, [{ ...entry, bytes: i, at: now - 1000 + i }]);
    const { results } = await env.DB.prepare('SELECT bytes FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id')
      .bind(hook.id)
      .all<{ bytes: number }>();
    expect(results.map((r) => r.bytes)).toEqual(Array.from({ length: 100 }, (_, i) => i + 5));

    const first = await deliveries(hook.id, '?limit=30');
    expect(first.entities.map((e) => e.bytes)).toEqual(Array.from({ length: 30 }, (_, i) => 104 - i));
    expect(first.nextBefore).toBe(first.entities[29]!.id);
    const second = await deliveries(hook.id, `?limit=100&before=${first.nextBefore}`);
    expect(second.entities.map((e) => e.bytes)).toEqual(Array.from({ length: 70 }, (_, i) => 74 - i));
    expect(second.nextBefore).toBeUndefined();

    // Many entries in one batch, as the isolate's coalesced writes send them: two webhooks, each pruned alone.
    const { hook: other } = await roomWithWebhook();
    await recordDeliveries(
      env.DB,
      Array.from({ length: 2 * (CHAT_LIMITS.deliveryLogPerWebhook + 7) }, (_, i) => ({
        ...entry,
        webhookId: i % 2 === 0 ? hook.id : other.id,
        bytes: 1_000 + i,
        at: now + i,
      })),
    );
    for (const [id, parity] of [
      [hook.id, 0],
      [other.id, 1],
    ] as const) {
      const { results: kept } = await env.DB.prepare('SELECT bytes FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id')
        .bind(id)
        .all<{ bytes: number }>();
      expect(kept.map((r) => r.bytes)).toEqual(Array.from({ length: 100 }, (_, i) => 1_000 + 2 * (i + 7) + parity));
    }
    expect((await deliveries(hook.id)).entities).toHaveLength(CHAT_LIMITS.deliveryLogPageDefault);
  });

  it('validates its query, needs chat:admin, answers 404 for an unknown webhook, and goes with its webhook', async () => {
    const { hook } = await roomWithWebhook();
    expectError(await send('GET', `/api/v1/webhooks/${hook.id}/deliveries?limit=0`), 400, 'invalid.value', 'limit');
    expectError(await send('GET', `/api/v1/webhooks/${hook.id}/deliveries?limit=101`), 400, 'invalid.value', 'limit');
    expectError(await send('GET', `/api/v1/webhooks/${hook.id}/deliveries?before=x`), 400, 'invalid.value', 'before');
    expectError(await send('GET', `/api/v1/webhooks/${crypto.randomUUID()}/deliveries`), 404, 'not.found');
    const reader = await createToken(['chat:read']);
    expectError(
      await send('GET', `/api/v1/webhooks/${hook.id}/deliveries`, { token: reader.token }),
      403,
      'missing.permissions',
      'chat:admin',
    );
    expect((await send('GET', `/api/v1/webhooks/${hook.id}`)).body.lastDeliveryAt).toBeNull();

    await postOk(hook, 'x');
    await logged(hook.id, 1);
    expect((await send('DELETE', `/api/v1/webhooks/${hook.id}`)).status).toBe(204);
    const { results } = await env.DB.prepare('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ?')
      .bind(hook.id)
      .all<{ n: number }>();
    expect(results[0]!.n).toBe(0);
  });
});
