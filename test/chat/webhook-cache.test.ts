import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { expectError, send } from '../helpers';
import { webhookCopies } from '../../src/chat/webhook-post/admission';
import type { WebhookRow } from '../../src/chat/webhooks.store';
import { createRoom, history, post, postOk, roomWithWebhook } from './helpers';

/**
 * The post path keeps copies of webhook rows (the isolate's cache, the gate's copy) so a post
 * needs no D1 query. None of them may ever make a post act on a webhook as it was before a change.
 */

async function row(id: string): Promise<WebhookRow> {
  const found = await env.DB.prepare('SELECT * FROM webhooks WHERE id = ?').bind(id).first<Record<string, unknown>>();
  expect(found).not.toBeNull();
  return {
    id: found!.id as string,
    idHash: found!.id_hash as string,
    name: found!.name as string,
    kind: found!.kind as string,
    roomId: found!.room_id as string,
    active: found!.active === 1,
    mappings: JSON.parse(found!.mappings as string) as WebhookRow['mappings'],
    rateBurst: found!.rate_burst as number,
    ratePerSecond: found!.rate_per_second as number,
    secret: (found!.secret as string | null) ?? null,
    createdAt: found!.created_at as string,
    updatedAt: found!.updated_at as string,
  } as WebhookRow;
}

async function markdowns(roomId: string): Promise<string[]> {
  return (await history(roomId)).body.entities.map((m: { markdown: string }) => m.markdown);
}

describe('the webhook copies of the post path', () => {
  it('refuse the very next post after a pause, and accept the very next one after resuming', async () => {
    const { roomId, hook } = await roomWithWebhook();
    await postOk(hook.id, 'one');
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { active: false } })).status).toBe(200);
    expectError(await post(hook.id, { message: 'paused' }), 403, 'webhook.inactive');
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { active: true } })).status).toBe(200);
    await postOk(hook.id, 'two');
    expect(await markdowns(roomId)).toEqual(['one', 'two']);
  });

  it('route the very next post by the new room and mappings', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const other = await createRoom();
    const mapped = await createRoom();
    await postOk(hook.id, 'before');
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { roomId: other.id } })).status).toBe(200);
    expect((await postOk(hook.id, 'moved'))[0]!.roomId).toBe(other.id);
    const mappings = [{ field: 'message', match: 'prefix', value: 'ops:', roomIds: [mapped.id] }];
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { mappings } })).status).toBe(200);
    expect((await postOk(hook.id, 'ops: mapped'))[0]!.roomId).toBe(mapped.id);
    expect(await markdowns(roomId)).toEqual(['before']);
    expect(await markdowns(other.id)).toEqual(['moved']);
    expect(await markdowns(mapped.id)).toEqual(['ops: mapped']);
  });

  it('apply a new rate limit from the very next post', async () => {
    const { hook } = await roomWithWebhook();
    await postOk(hook.id, 'fast');
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { rateLimit: { burst: 1, perSecond: 0.01 } } })).status).toBe(200);
    // The gate's bucket holds what is left of the old burst (10,000): the new one caps it at 1.
    expect((await post(hook.id, { message: 'first' })).status).toBe(200);
    expectError(await post(hook.id, { message: 'second' }), 429, 'too.many.requests');
  });

  it('require the new secret from the very next post', async () => {
    const room = await createRoom();
    const created = await send('POST', '/api/v1/webhooks', {
      json: { name: 'gh', kind: 'github', roomId: room.id, rateLimit: { burst: 1000, perSecond: 1000 } },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await postOk(id, 'unsigned');
    expect((await send('PATCH', `/api/v1/webhooks/${id}`, { json: { secret: 's3cret' } })).status).toBe(200);
    expectError(await post(id, { message: 'unsigned again' }), 401, 'bad.signature');
  });

  it('answer 404 from the very next post after a rotation or a deletion, and serve the new id at once', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const { hook: doomed } = await roomWithWebhook();
    await postOk(hook.id, 'old id');
    await postOk(doomed.id, 'doomed');
    const rotated = await send('POST', `/api/v1/webhooks/${hook.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect((await send('DELETE', `/api/v1/webhooks/${doomed.id}`)).status).toBe(204);
    expectError(await post(hook.id, { message: 'old id again' }), 404, 'not.found');
    expectError(await post(doomed.id, { message: 'doomed again' }), 404, 'not.found');
    await postOk(rotated.body.id, 'new id');
    expect(await markdowns(roomId)).toEqual(['old id', 'new id']);
    expect(webhookCopies.get(hook.id)).toBeUndefined();
    expect(webhookCopies.get(doomed.id)).toBeUndefined();
  });

  it('never serve a stale isolate copy: the gate checks its version before admitting', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const other = await createRoom();
    await postOk(hook.id, 'one');
    const before = await row(hook.id);
    // Another isolate pauses the webhook and moves it; this isolate's copy is the old row.
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { active: false, roomId: other.id } })).status).toBe(200);
    webhookCopies.remember(hook.id, before);
    expectError(await post(hook.id, { message: 'stale copy' }), 403, 'webhook.inactive');
    // The refusal replaced the copy with the current row.
    expect(webhookCopies.get(hook.id)).toEqual(await row(hook.id));

    // Active again; a copy that still says "paused" must not refuse.
    const paused = await row(hook.id);
    expect((await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { active: true } })).status).toBe(200);
    webhookCopies.remember(hook.id, paused);
    expect((await postOk(hook.id, 'two'))[0]!.roomId).toBe(other.id);

    // A deleted webhook behind a copy that says it exists.
    const last = await row(hook.id);
    expect((await send('DELETE', `/api/v1/webhooks/${hook.id}`)).status).toBe(204);
    webhookCopies.remember(hook.id, last);
    expectError(await post(hook.id, { message: 'deleted' }), 404, 'not.found');
    expect(webhookCopies.get(hook.id)).toBeUndefined();
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

  it('never remember an unknown id', async () => {
    const id = crypto.randomUUID();
    expectError(await post(id, { message: 'nobody' }), 404, 'not.found');
    expect(webhookCopies.get(id)).toBeUndefined();
  });
});
