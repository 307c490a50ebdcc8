import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatMessage } from '../../src/chat/protocol';
import { createToken, expectError, send, type Sent } from '../helpers';
import { call } from '../hostile/support/client';
import { createRoom, createWebhook, history, post, postOk, roomWithWebhook, unique, Viewer, webhookPath } from './helpers';

/** The post path, written out here rather than taken from the code under test. */
const POST_PATH = '/webhooks/api/v1/webhook/';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

function withoutContextId(res: Sent): unknown {
  return { ...res.body, contextId: 'x' };
}

describe('the webhook post', () => {
  it('answers 200 with one delivery and stores the markdown, the metadata and the rendered HTML', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const res = await post(hook, { message: '**Build** passed', metadata: 'ci' });
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toContain('application/json');
    expect(res.body).toEqual({ deliveries: [{ roomId, messageId: expect.stringMatching(/^[0-9a-f-]{36}$/), seq: 1 }] });

    const stored = (await history(roomId)).body.entities;
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      id: res.body.deliveries[0].messageId,
      roomId,
      seq: 1,
      webhookId: hook.id,
      markdown: '**Build** passed',
      metadata: 'ci',
    });
    expect(stored[0].html).toContain('<strong>Build</strong>');
  });

  it('accepts a charset parameter and ignores unknown fields', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const res = await send('POST', webhookPath(hook), {
      token: null,
      body: JSON.stringify({ message: 'hi', color: 'red', nested: { a: 1 } }),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(200);
    expect((await history(roomId)).body.entities[0]).toMatchObject({ markdown: 'hi', metadata: null });
  });

  it('numbers consecutive posts 1, 2, 3', async () => {
    const { hook } = await roomWithWebhook();
    const seqs = [];
    for (const m of ['a', 'b', 'c']) seqs.push((await postOk(hook, m))[0]!.seq);
    expect(seqs).toEqual([1, 2, 3]);
  });

  it('answers malformed JSON with 400 bad.request', async () => {
    const { hook } = await roomWithWebhook();
    const res = await send('POST', webhookPath(hook), {
      token: null,
      body: '{"message": "x"',
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(res, 400, 'bad.request');
  });

  it.each([
    ['missing', {}],
    ['empty', { message: '' }],
    ['only whitespace', { message: ' \n\t ' }],
    ['a number', { message: 42 }],
    ['null', { message: null }],
  ])('answers a message that is %s with 400 naming the field', async (_, body) => {
    const { roomId, hook } = await roomWithWebhook();
    expectError(await post(hook, body), 400, 'invalid.value', 'message');
    expect((await history(roomId)).body.entities).toEqual([]);
  });

  it('answers non-string metadata with 400 naming metadata, and a body that is not an object with 400', async () => {
    const { hook } = await roomWithWebhook();
    expectError(await post(hook, { message: 'ok', metadata: 7 }), 400, 'invalid.value', 'metadata');
    expectError(await post(hook, ['message']), 400, 'invalid.value');
  });

  it('takes exactly 40,000 characters, counted as code points, and refuses 40,001 with 413 instead of truncating', async () => {
    const { roomId, hook } = await roomWithWebhook();
    expect((await post(hook, { message: 'x'.repeat(40_000) })).status).toBe(200);
    expect((await post(hook, { message: '😀'.repeat(40_000) })).status).toBe(200);
    expectError(await post(hook, { message: 'x'.repeat(40_001) }), 413, 'payload.too.large', 'message');
    const stored = (await history(roomId)).body.entities;
    expect(stored.map((m: { markdown: string }) => m.markdown.length)).toEqual([40_000, 80_000]);
  });

  it('refuses metadata over 4,000 characters with 413 naming metadata', async () => {
    const { hook } = await roomWithWebhook();
    expect((await post(hook, { message: 'm', metadata: 'x'.repeat(4_000) })).status).toBe(200);
    expectError(await post(hook, { message: 'm', metadata: 'x'.repeat(4_001) }), 413, 'payload.too.large', 'metadata');
  });

  it('refuses a body over 512 KiB with 413', async () => {
    const { hook } = await roomWithWebhook();
    expectError(await post(hook, { message: 'm', padding: 'x'.repeat(600 * 1024) }), 413, 'payload.too.large');
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['form-encoded', 'application/x-www-form-urlencoded'],
    ['absent', undefined],
  ])('answers a %s body with 415', async (_, contentType) => {
    const { hook } = await roomWithWebhook();
    const res = await send('POST', webhookPath(hook), {
      token: null,
      body: JSON.stringify({ message: 'x' }),
      headers: contentType ? { 'Content-Type': contentType } : {},
    });
    expectError(res, 415, 'unsupported.media.type');
  });

  it('answers malformed, unknown, deleted and rotated ids with the same 404 body', async () => {
    const { hook: deleted } = await roomWithWebhook();
    expect((await send('DELETE', `/api/v1/webhooks/${deleted.id}`)).status).toBe(204);
    const { hook: rotated } = await roomWithWebhook();
    expect((await send('POST', `/api/v1/webhooks/${rotated.id}/rotate`)).status).toBe(200);

    const answers = await Promise.all(
      ['not-a-uuid', crypto.randomUUID(), deleted.url!, rotated.url!].map((target) => post(target, { message: 'hello' })),
    );
    for (const res of answers) expectError(res, 404, 'not.found');
    const [first, ...rest] = answers.map(withoutContextId);
    for (const body of rest) expect(body).toEqual(first);
    expect(new Set(answers.map((a) => a.body.contextId)).size).toBe(4);
  });

  it('answers a paused webhook with 403 webhook.inactive, and posts again once resumed', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const paused = await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { active: false } });
    expect(paused.body.active).toBe(false);
    expectError(await post(hook, { message: 'while paused' }), 403, 'webhook.inactive');
    await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { active: true } });
    expect((await postOk(hook, 'resumed'))[0]!.seq).toBe(1);
    expect((await history(roomId)).body.entities.map((m: { markdown: string }) => m.markdown)).toEqual(['resumed']);
  });

  it('answers 429 with Retry-After once the burst is spent, and stores nothing for it', async () => {
    const { roomId, hook } = await roomWithWebhook({ rateLimit: { burst: 2, perSecond: 0.01 } });
    expect((await post(hook, { message: '1' })).status).toBe(200);
    expect((await post(hook, { message: '2' })).status).toBe(200);
    const limited = await post(hook, { message: '3' });
    expectError(limited, 429, 'too.many.requests');
    // One token at 0.01/s takes 100 s to come back (a little less has already refilled).
    expect(Number(limited.headers.get('Retry-After'))).toBeGreaterThanOrEqual(99);
    expect(Number(limited.headers.get('Retry-After'))).toBeLessThanOrEqual(100);
    expect((await history(roomId)).body.entities).toHaveLength(2);
  });

  it('applies a rate limit changed by PATCH to the next post', async () => {
    const { hook } = await roomWithWebhook({ rateLimit: { burst: 1, perSecond: 0.01 } });
    expect((await post(hook, { message: '1' })).status).toBe(200);
    expectError(await post(hook, { message: '2' }), 429, 'too.many.requests');
    await send('PATCH', `/api/v1/webhooks/${hook.id}`, { json: { rateLimit: { perSecond: 10_000 } } });
    await new Promise((r) => setTimeout(r, 5));
    expect((await post(hook, { message: '3' })).status).toBe(200);
  });

  it('answers a malformed Idempotency-Key with 400 naming the header', async () => {
    const { hook } = await roomWithWebhook();
    expectError(await post(hook, { message: 'x' }, { 'Idempotency-Key': 'has space' }), 400, 'invalid.value', 'Idempotency-Key');
    expectError(await post(hook, { message: 'x' }, { 'Idempotency-Key': 'k'.repeat(256) }), 400, 'invalid.value', 'Idempotency-Key');
  });
});

describe('the body as bytes', () => {
  it('refuses a body that is not UTF-8 (400), where it used to store U+FFFD, and stores nothing', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const valid = new TextEncoder().encode('{"message": "caf\u00e9 \ud83c\udf89"}');
    const broken = new Uint8Array([...new TextEncoder().encode('{"message": "caf'), 0xe9, ...new TextEncoder().encode('"}')]);
    const refused = await send('POST', webhookPath(hook), {
      token: null,
      body: broken,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(refused, 400, 'bad.request');
    expect(refused.body.message).toContain('UTF-8');
    const ok = await send('POST', webhookPath(hook), { token: null, body: valid, headers: { 'Content-Type': 'application/json' } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await history(roomId)).body.entities.map((m: { markdown: string }) => m.markdown)).toEqual(['café 🎉']);
  });
});

describe('idempotent posts', () => {
  it('returns the first answer to a repeated Idempotency-Key and stores nothing new', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const key = unique('key');
    const first = await post(hook, { message: 'once' }, { 'Idempotency-Key': key });
    const again = await post(hook, { message: 'once' }, { 'Idempotency-Key': key });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(first.headers.get('Idempotent-Replayed')).toBeNull();
    expect((await history(roomId)).body.entities).toHaveLength(1);
  });

  it("treats GitHub's X-GitHub-Delivery as the idempotency key", async () => {
    const { roomId, hook } = await roomWithWebhook();
    const delivery = crypto.randomUUID();
    const first = await post(hook, { message: 'push' }, { 'X-GitHub-Delivery': delivery });
    const redelivered = await post(hook, { message: 'push' }, { 'X-GitHub-Delivery': delivery });
    expect(redelivered.body).toEqual(first.body);
    expect((await history(roomId)).body.entities).toHaveLength(1);
  });

  it('stores posts with different keys, and keeps keys apart per webhook', async () => {
    const room = await createRoom();
    const a = await createWebhook({ roomId: room.id });
    const b = await createWebhook({ roomId: room.id });
    await post(a, { message: 'x' }, { 'Idempotency-Key': 'k1' });
    await post(a, { message: 'x' }, { 'Idempotency-Key': 'k2' });
    await post(b, { message: 'x' }, { 'Idempotency-Key': 'k1' });
    expect((await history(room.id)).body.entities.map((m: { seq: number }) => m.seq)).toEqual([1, 2, 3]);
  });

  it('refuses a key reused for a different message with 409', async () => {
    const { hook } = await roomWithWebhook();
    await post(hook, { message: 'first' }, { 'Idempotency-Key': 'reuse' });
    expectError(await post(hook, { message: 'second' }, { 'Idempotency-Key': 'reuse' }), 409, 'conflict');
  });

  it('does not count a replay against the rate limit', async () => {
    const { hook } = await roomWithWebhook({ rateLimit: { burst: 1, perSecond: 0.01 } });
    expect((await post(hook, { message: 'a' }, { 'Idempotency-Key': 'r' })).status).toBe(200);
    expect((await post(hook, { message: 'a' }, { 'Idempotency-Key': 'r' })).status).toBe(200);
    expectError(await post(hook, { message: 'b' }), 429, 'too.many.requests');
  });

  it('stores a message once when the same key is posted concurrently', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(hook, { message: 'race' }, { 'Idempotency-Key': 'same' })));
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const a of ok) expect(a.body).toEqual(ok[0]!.body);
    for (const a of answers.filter((x) => x.status !== 200)) expectError(a, 409, 'conflict');
    expect((await history(roomId)).body.entities).toHaveLength(1);
  });
});

describe('routing by mappings', () => {
  it('sends a message to every room of every matching mapping, each once, and to the default room when none matches', async () => {
    const [home, r1, r2, r3, r4] = await Promise.all([createRoom(), createRoom(), createRoom(), createRoom(), createRoom()]);
    const hook = await createWebhook({
      roomId: home!.id,
      mappings: [
        { field: 'message', match: 'contains', value: 'deploy', roomIds: [r1!.id, r2!.id] },
        { field: 'metadata', match: 'exact', value: 'prod', roomIds: [r2!.id, r3!.id] },
        { field: 'message', match: 'prefix', value: '[alert]', roomIds: [r4!.id] },
      ],
    });

    const both = await post(hook, { message: 'deploy finished', metadata: 'prod' });
    expect(both.status).toBe(200);
    expect(both.body.deliveries.map((d: { roomId: string }) => d.roomId)).toEqual([r1!.id, r2!.id, r3!.id]);
    expect(both.body.deliveries.map((d: { seq: number }) => d.seq)).toEqual([1, 1, 1]);
    expect(new Set(both.body.deliveries.map((d: { messageId: string }) => d.messageId)).size).toBe(3);

    const deliveredTo = async (json: unknown) => (await post(hook, json)).body.deliveries.map((d: { roomId: string }) => d.roomId);
    expect(await deliveredTo({ message: '[alert] disk full' })).toEqual([r4!.id]);
    expect(await deliveredTo({ message: 'hello', metadata: 'prod ' })).toEqual([home!.id]);
    expect(await deliveredTo({ message: 'Deploy (capital D) is not deploy-lowercase?' })).toEqual([r1!.id, r2!.id]);
    expect(await deliveredTo({ message: 'Deploy only' })).toEqual([home!.id]);
    expect(await deliveredTo({ message: 'note [alert] inside' })).toEqual([home!.id]);

    const markdowns = async (roomId: string) => (await history(roomId)).body.entities.map((m: { markdown: string }) => m.markdown);
    expect(await markdowns(r2!.id)).toEqual(['deploy finished', 'Deploy (capital D) is not deploy-lowercase?']);
    expect(await markdowns(r3!.id)).toEqual(['deploy finished']);
    expect(await markdowns(home!.id)).toEqual(['hello', 'Deploy only', 'note [alert] inside']);
  });
});

describe('rotation', () => {
  it('gives a new URL and keeps the id; the old URL stops at once and every message carries the same webhookId', async () => {
    const { roomId, hook } = await roomWithWebhook();
    await postOk(hook, 'before');
    const rotated = await send('POST', `/api/v1/webhooks/${hook.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.id).toBe(hook.id);
    expect(rotated.body.url).not.toBe(hook.url);
    expect(rotated.body.url).toMatch(
      /^http:\/\/switchboard\.test\/webhooks\/api\/v1\/webhook\/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(rotated.body.url).not.toContain(hook.id);
    expect(rotated.body).toMatchObject({ name: hook.name, roomId, active: true });
    expect(Date.parse(rotated.body.updatedAt)).toBeGreaterThan(Date.parse(hook.updatedAt));
    // Not lastDeliveryAt: the delivery log of the post before is written after its answer (waitUntil), maybe not yet.
    const { lastDeliveryAt: _read, ...read } = (await send('GET', `/api/v1/webhooks/${hook.id}`)).body;
    const { lastDeliveryAt: _rotated, ...rotatedView } = rotated.body;
    expect(read).toEqual(rotatedView);

    expectError(await post(hook.url, { message: 'old url' }), 404, 'not.found');
    await postOk(rotated.body.url, 'after');
    const stored = (await history(roomId)).body.entities;
    expect(stored.map((m: { markdown: string; webhookId: string }) => [m.markdown, m.webhookId])).toEqual([
      ['before', hook.id],
      ['after', hook.id],
    ]);
  });
});

describe('what a reader sees', () => {
  it('never includes a value that posts: history and frames carry the public id, which answers 404; the admin url posts', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const reader = await createToken(['chat:read']);
    await postOk(hook, 'first');
    const viewer = await Viewer.open(roomId, { token: reader.token, query: '?after=0' });
    await viewer.ready();
    await postOk(hook, 'second');
    await viewer.untilSeq(2);
    viewer.close();

    const read = await send('GET', `/api/v1/rooms/${roomId}/messages`, { token: reader.token });
    expect(read.status).toBe(200);
    const messages: ChatMessage[] = [...read.body.entities, ...viewer.messages];
    expect(messages.map((m) => m.webhookId)).toEqual([hook.id, hook.id, hook.id, hook.id]);
    // The reader can find no webhook URL, and admin views are closed to it.
    expect(`${JSON.stringify(read.body)}${viewer.raw.join('')}`).not.toContain(new URL(hook.url).pathname.split('/').pop()!);
    expectError(await send('GET', `/api/v1/webhooks/${hook.id}`, { token: reader.token }), 403, 'missing.permissions');

    // Every id-shaped value the reader has, tried as a webhook URL: none posts.
    const values = new Set([...JSON.stringify(read.body).matchAll(UUID), ...viewer.raw.join('').matchAll(UUID)].map((m) => m[0]));
    expect(values).toContain(hook.id);
    for (const value of values) {
      expectError(await send('POST', POST_PATH + value, { token: null, json: { message: 'forged' } }), 404, 'not.found');
    }
    expect((await history(roomId)).body.entities.map((m: { markdown: string }) => m.markdown)).toEqual(['first', 'second']);
    expect((await send('POST', new URL(hook.url).pathname, { token: null, json: { message: 'real' } })).status).toBe(200);
  });
});

describe('the rate limit, counted in room deliveries', () => {
  /** A webhook whose posts containing "fan" go to `k` rooms, the others to its own room. */
  async function fanOut(k: number, rateLimit: { burst: number; perSecond: number }) {
    const rooms = await Promise.all(Array.from({ length: k + 1 }, () => createRoom()));
    const [home, ...mapped] = rooms.map((r) => r.id);
    const hook = await createWebhook({
      roomId: home,
      mappings: [{ field: 'message', match: 'contains', value: 'fan', roomIds: mapped }],
      rateLimit,
    });
    return { hook, home: home!, mapped };
  }

  it('admits burst / k posts routed to k rooms, then 429 with a Retry-After for k tokens', async () => {
    // burst 10, 3 rooms a post: 3 posts take 9 tokens, 1 is left; 0.01 tokens a second.
    const { hook, home, mapped } = await fanOut(3, { burst: 10, perSecond: 0.01 });
    for (let i = 1; i <= 3; i++) expect((await post(hook, { message: `fan ${i}` })).status, `post ${i}`).toBe(200);
    const limited = await post(hook, { message: 'fan 4' });
    expectError(limited, 429, 'too.many.requests');
    // 3 tokens needed, 1 there: 2 more at 0.01/s = 200 s (less what refilled since, under a second here).
    const retryAfter = Number(limited.headers.get('Retry-After'));
    expect(retryAfter).toBeGreaterThanOrEqual(199);
    expect(retryAfter).toBeLessThanOrEqual(200);
    for (const roomId of mapped) expect((await history(roomId)).body.entities).toHaveLength(3);
    // A post routed to one room costs one token: the one left admits it.
    expect((await post(hook, { message: 'one room' })).body.deliveries.map((d: { roomId: string }) => d.roomId)).toEqual([home]);
    expectError(await post(hook, { message: 'one room again' }), 429, 'too.many.requests');
  });

  it('admits a post costing more than the burst on a full bucket, and makes the next post wait for the debt', async () => {
    // 3 rooms a post, burst 2: the first post leaves the bucket at 2 - 3 = -1 tokens.
    const { hook, mapped } = await fanOut(3, { burst: 2, perSecond: 0.01 });
    expect((await post(hook, { message: 'fan out' })).status).toBe(200);
    const limited = await post(hook, { message: 'one room' });
    expectError(limited, 429, 'too.many.requests');
    // 1 token needed, -1 there: 2 tokens at 0.01/s = 200 s.
    const retryAfter = Number(limited.headers.get('Retry-After'));
    expect(retryAfter).toBeGreaterThanOrEqual(199);
    expect(retryAfter).toBeLessThanOrEqual(200);
    for (const roomId of mapped) expect((await history(roomId)).body.entities).toHaveLength(1);
  });
});

describe('a body cut off mid-upload', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** A body that sends its first bytes, then fails as a client going away does. */
  function cutOffBody(): ReadableStream<Uint8Array> {
    let sent = false;
    return new ReadableStream({
      pull(controller) {
        if (sent) {
          controller.error(new Error('the client went away'));
          return;
        }
        sent = true;
        controller.enqueue(new TextEncoder().encode('{"message": "half a mess'));
      },
    });
  }

  // Straight to the Worker's fetch handler (src/index.ts): through the test loopback the stream's
  // error would reach the Worker as a plain early end of the body.
  it('answers 400 bad.request, logged as a client event and not as an error, and stores nothing', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const errors = vi.spyOn(console, 'error');
    const info = vi.spyOn(console, 'info');
    const headers = { 'Content-Type': 'application/json' };
    const res = await call('POST', webhookPath(hook), { token: null, headers, body: cutOffBody() });
    expectError(res, 400, 'bad.request');
    expect(res.body.message).toBe('The request body was cut off before its end.');
    expect(errors).not.toHaveBeenCalled();
    expect(info.mock.calls.map((c) => String(c[0]))).toContain('client event: the request body was cut off');
    expect((await history(roomId)).body.entities).toEqual([]);

    // The admin routes read their bodies the same way.
    const rooms = (await send('GET', '/api/v1/rooms')).body.entities.length;
    expectError(await call('POST', '/api/v1/rooms', { headers, body: cutOffBody() }), 400, 'bad.request');
    expect(errors).not.toHaveBeenCalled();
    expect((await send('GET', '/api/v1/rooms')).body.entities).toHaveLength(rooms);
  });
});
