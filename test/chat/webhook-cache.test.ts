import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { expectError, send } from '../helpers';
import { webhookCopies } from '../../src/chat/webhook-post/admission';
import type { WebhookRow } from '../../src/chat/webhooks.store';
import { sha256Hex } from '../../src/http/secrets';
import { createRoom, history, post, postOk, roomWithWebhook, webhookPath, type PostTarget } from './helpers';

/**
 * The post path keeps copies of webhook rows (the isolate's cache, the gate's copy) so a post
 * needs no D1 query. None of them may ever make a post act on a webhook as it was before a change.
 */

async function row(id: string): Promise<WebhookRow> {
  const found = await env.DB.prepare('SELECT * FROM webhooks WHERE id = ?').bind(id).first<Record<string, unknown>>();
  expect(found).not.toBeNull();
  return {
    id: found!.id as string,
    postSecret: (found!.post_secret as string | null) ?? null,
    postSecretHash: (found!.post_secret_hash as string | null) ?? null,
    name: found!.name as string,
    kind: found!.kind as string,
    roomId: found!.room_id as string,
    active: found!.active === 1,
    mappings: JSON.parse(found!.mappings as string) as WebhookRow['mappings'],
    rateBurst: found!.rate_burst as number,
    ratePerSecond: found!.rate_per_second as number,
    secret: (found!.secret as string | null) ?? null,
    avatarUrl: (found!.avatar_url as string | null) ?? null,
    allowOverrides: found!.allow_overrides === 1,
    createdAt: found!.created_at as string,
    updatedAt: found!.updated_at as string,
  } as WebhookRow;
}

/** The isolate cache's key for a webhook URL: the SHA-256 of its posting secret, computed here. */
function cacheKey(target: PostTarget): Promise<string> {
  return sha256Hex(webhookPath(target).split('/').pop()!);
}

async function markdowns(roomId: string): Promise<string[]> {
  return (await history(roomId)).body.entities.map((m: { markdown: string }) => m.markdown);
}

describe('the webhook copies of the post path', () => {
  it('refuse the very next post after a pause, and accept the very next one after resuming', async () => {
    const { roomId, hook } = await roomWithWebhook();
    await postOk(hook, 'one');
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { active: false } })).status).toBe(200);
    expectError(await post(hook, { message: 'paused' }), 403, 'webhook.inactive');
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { active: true } })).status).toBe(200);
    await postOk(hook, 'two');
    expect(await markdowns(roomId)).toEqual(['one', 'two']);
  });

  it('route the very next post by the new room and mappings', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const other = await createRoom();
    const mapped = await createRoom();
    await postOk(hook, 'before');
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { roomId: other.id } })).status).toBe(200);
    expect((await postOk(hook, 'moved'))[0]!.roomId).toBe(other.id);
    const mappings = [{ field: 'message', match: 'prefix', value: 'ops:', roomIds: [mapped.id] }];
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { mappings } })).status).toBe(200);
    expect((await postOk(hook, 'ops: mapped'))[0]!.roomId).toBe(mapped.id);
    expect(await markdowns(roomId)).toEqual(['before']);
    expect(await markdowns(other.id)).toEqual(['moved']);
    expect(await markdowns(mapped.id)).toEqual(['ops: mapped']);
  });

  it('apply a new rate limit from the very next post', async () => {
    const { hook } = await roomWithWebhook();
    await postOk(hook, 'fast');
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { rateLimit: { burst: 1, perSecond: 0.01 } } })).status).toBe(200);
    // The gate's bucket holds what is left of the old burst (10,000): the new one caps it at 1.
    expect((await post(hook, { message: 'first' })).status).toBe(200);
    expectError(await post(hook, { message: 'second' }), 429, 'too.many.requests');
  });

  it('require the new secret from the very next post', async () => {
    const room = await createRoom();
    const created = await send('POST', '/api/v1/webhooks', {
      json: { name: 'gh', kind: 'github', roomId: room.id, rateLimit: { burst: 1000, perSecond: 1000 } },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await postOk(created.body, 'unsigned');
    expect((await send('PATCH', `/api/v1/webhooks/${id}`, { json: { secret: 's3cret' } })).status).toBe(200);
    expectError(await post(created.body, { message: 'unsigned again' }), 401, 'bad.signature');
  });

  it('answer 404 from the very next post after a rotation or a deletion, and serve the new URL at once', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const { hook: doomed } = await roomWithWebhook();
    await postOk(hook, 'old URL');
    await postOk(doomed, 'doomed');
    const rotated = await send('POST', `/api/v1/webhooks/${hook.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect((await send('DELETE', `/api/v1/webhooks/${doomed.id}`)).status).toBe(204);
    expectError(await post(hook, { message: 'old URL again' }), 404, 'not.found');
    expectError(await post(doomed, { message: 'doomed again' }), 404, 'not.found');
    await postOk(rotated.body, 'new URL');
    expect(await markdowns(roomId)).toEqual(['old URL', 'new URL']);
    expect(webhookCopies.get(await cacheKey(hook))).toBeUndefined();
    expect(webhookCopies.get(await cacheKey(doomed))).toBeUndefined();
  });

  it('never let an isolate copy from before a rotation post under the old URL', async () => {
    const { roomId, hook } = await roomWithWebhook();
    await postOk(hook, 'before');
    const before = await row(hook.id);
    // Another isolate rotates; this isolate still holds the old row under the old secret's hash.
    const rotated = await send('POST', `/api/v1/webhooks/${hook.id}/rotate`);
    expect(rotated.status).toBe(200);
    webhookCopies.remember(await cacheKey(hook), before);
    expect(webhookCopies.get(await cacheKey(hook))).toEqual(before);
    // The gate calls the copy stale and answers the current row, which has another secret: 404.
    expectError(await post(hook, { message: 'old URL, stale copy' }), 404, 'not.found');
    expect(webhookCopies.get(await cacheKey(hook))).toBeUndefined();
    // A row is never kept under a secret it does not hold.
    webhookCopies.remember(await cacheKey(hook), await row(hook.id));
    expect(webhookCopies.get(await cacheKey(hook))).toBeUndefined();
    await postOk(rotated.body, 'after');
    expect(await markdowns(roomId)).toEqual(['before', 'after']);
  });

  it('never serve a stale isolate copy: the gate checks its version before admitting', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const other = await createRoom();
    await postOk(hook, 'one');
    const before = await row(hook.id);
    // Another isolate pauses the webhook and moves it; this isolate's copy is the old row.
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { active: false, roomId: other.id } })).status).toBe(200);
    const key = await cacheKey(hook);
    webhookCopies.remember(key, before);
    expectError(await post(hook, { message: 'stale copy' }), 403, 'webhook.inactive');
    // The refusal replaced the copy with the current row.
    expect(webhookCopies.get(key)).toEqual(await row(hook.id));

    // Active again; a copy that still says "paused" must not refuse.
    const paused = await row(hook.id);
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { active: true } })).status).toBe(200);
    webhookCopies.remember(key, paused);
    expect((await postOk(hook, 'two'))[0]!.roomId).toBe(other.id);

    // A deleted webhook behind a copy that says it exists.
    const last = await row(hook.id);
    expect((await send('DELETE', `/api/v1/webhooks/${hook.id}`)).status).toBe(204);
    webhookCopies.remember(key, last);
    expectError(await post(hook, { message: 'deleted' }), 404, 'not.found');
    expect(webhookCopies.get(key)).toBeUndefined();
    expect(await markdowns(roomId)).toEqual(['one']);
    expect(await markdowns(other.id)).toEqual(['two']);
  });

  it('give every change a strictly later version, even several in one millisecond', async () => {
    const { hook } = await roomWithWebhook();
    const versions: string[] = [(await row(hook.id)).updatedAt];
    for (let i = 0; i < 5; i++) {
      const res = await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { name: `n${i}` } });
      expect(res.status).toBe(200);
      versions.push(res.body.updatedAt);
    }
    for (let i = 1; i < versions.length; i++) expect(Date.parse(versions[i]!)).toBeGreaterThan(Date.parse(versions[i - 1]!));
  });

  it('never remember an unknown secret', async () => {
    const secret = crypto.randomUUID();
    expectError(await post(secret, { message: 'nobody' }), 404, 'not.found');
    expect(webhookCopies.get(await cacheKey(secret))).toBeUndefined();
  });
});
