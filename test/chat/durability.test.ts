import { env, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { uuidFromName } from '../../src/chat/webhook-post/deliver';
import type { RoomObject } from '../../src/chat/room/room-object';
import { createToken, expectError, send } from '../helpers';
import {
  createRoom,
  createWebhook,
  history,
  post,
  postOk,
  range,
  roomWithWebhook,
  unique,
  Viewer,
  waitUntil,
  type PostTarget,
  type WebhookBody,
} from './helpers';

function roomStub(roomId: string): DurableObjectStub<RoomObject> {
  return env.ROOMS.get(env.ROOMS.idFromName(roomId));
}

async function d1Rows(roomId: string): Promise<{ seq: number; markdown: string }[]> {
  const { results } = await env.DB.prepare('SELECT seq, markdown FROM messages WHERE room_id = ? ORDER BY seq')
    .bind(roomId)
    .all<{ seq: number; markdown: string }>();
  return results;
}

/** Resets the room's object as an eviction or a crash would: memory and sockets are gone, storage stays. */
async function evict(roomId: string): Promise<void> {
  await runInDurableObject(roomStub(roomId), (_, state) => state.abort('evicted by the test')).catch(() => undefined);
}

/**
 * A room with messages m1..m`total`, all flushed to D1, whose local log keeps only those after
 * `keptAfter`: what its window leaves a long-lived room with.
 */
async function roomWithTrimmedLog(total: number, keptAfter: number): Promise<{ roomId: string; hook: WebhookBody }> {
  const { roomId, hook } = await roomWithWebhook();
  for (const i of range(1, total)) await postOk(hook, `m${i}`);
  expect((await history(roomId)).status).toBe(200); // flushes everything to D1
  await runInDurableObject(roomStub(roomId), (_, state) => {
    state.storage.sql.exec('DELETE FROM log WHERE seq <= ?', keptAfter);
  });
  return { roomId, hook };
}

/** Posts with an Idempotency-Key, retrying 503s with the same key, as a careful sender would. */
async function postUntilStored(hook: PostTarget, message: string): Promise<{ seq: number; messageId: string }> {
  const key = unique('k');
  for (let attempt = 0; attempt < 50; attempt++) {
    const res = await post(hook, { message }, { 'Idempotency-Key': key });
    if (res.status === 200) return res.body.deliveries[0];
    expect([503, 409]).toContain(res.status);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`could not store ${message}`);
}

describe('eviction of a room object', () => {
  it('keeps seq contiguous across an eviction in the middle of a stream, and viewers resume with after=', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const viewer = await Viewer.open(roomId, { query: '?after=0' });
    await viewer.ready();
    for (const i of range(1, 10)) await postOk(hook, `m${i}`);
    await viewer.untilSeq(10);

    // Three senders, ten posts each; the room object is reset while they are at it.
    let acknowledged = 0;
    let acknowledgedAtEviction = 0;
    let evicted: Promise<void> | undefined;
    const sender = async (from: number) => {
      const out = [];
      for (const i of range(from, from + 9)) {
        out.push(await postUntilStored(hook, `m${i}`));
        if (++acknowledged === 8) evicted = evict(roomId).then(() => void (acknowledgedAtEviction = acknowledged));
      }
      return out;
    };
    const later = (await Promise.all([sender(11), sender(21), sender(31)])).flat();
    await evicted;
    await waitUntil(() => viewer.closed !== undefined, 'the viewer to be disconnected');
    expect(acknowledgedAtEviction).toBeLessThan(30); // posts went on after the reset
    for (const i of range(41, 50)) await postOk(hook, `m${i}`);

    expect(later.map((d) => d.seq).sort((a, b) => a - b)).toEqual(range(11, 40));
    const seen = viewer.seqs();
    expect(seen).toEqual(range(1, seen.length));

    const resumed = await Viewer.open(roomId, { query: `?after=${seen.length}` });
    await resumed.untilSeq(50);
    expect([...seen, ...resumed.seqs()]).toEqual(range(1, 50));
    const markdowns = [...viewer.messages, ...resumed.messages].map((m) => m.markdown);
    expect(new Set(markdowns).size).toBe(50);
    resumed.close();

    const stored = (await history(roomId, '?limit=500')).body.entities;
    expect(stored.map((m: { seq: number }) => m.seq)).toEqual(range(1, 50));
  });
  it('continues seq after a restart from the newest message it keeps, or from the counter rooms used to write', async () => {
    const { roomId, hook } = await roomWithTrimmedLog(5, 4);
    await evict(roomId);
    expect((await postOk(hook, 'm6'))[0]!.seq).toBe(6);
    // A room from before this change kept its last seq in meta; a restart honours it.
    await runInDurableObject(roomStub(roomId), (_, state) => {
      state.storage.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_seq', '20')");
    });
    await evict(roomId);
    expect((await postOk(hook, 'm21'))[0]!.seq).toBe(21);
  });
});

describe('D1 failing during posts', () => {
  it('acknowledges only what the room stored durably, and delivers it to D1 exactly once after the retry', async () => {
    const { roomId, hook } = await roomWithWebhook();
    await postOk(hook, 'before the outage');
    await waitUntil(async () => (await d1Rows(roomId)).length === 1, 'the first flush');

    const trigger = `fail_${roomId.replace(/-/g, '_')}`;
    await env.DB.exec(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON messages WHEN NEW.room_id = '${roomId}' BEGIN SELECT RAISE(ABORT, 'injected D1 failure'); END;`,
    );
    const viewer = await Viewer.open(roomId, { query: '?after=0' });
    try {
      const during = await Promise.all(['during 1', 'during 2', 'during 3'].map((m) => post(hook, { message: m })));
      expect(during.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(during.map((r) => r.body.deliveries[0].seq).sort()).toEqual([2, 3, 4]);
      // Stored by the room: viewers have them, although D1 refused them.
      await viewer.untilSeq(4);
      expect(viewer.seqs()).toEqual([1, 2, 3, 4]);
      expect(await d1Rows(roomId)).toHaveLength(1);
      expectError(await history(roomId), 503, 'service.unavailable');
    } finally {
      await env.DB.exec(`DROP TRIGGER ${trigger}`);
    }

    await runDurableObjectAlarm(roomStub(roomId));
    await waitUntil(async () => (await d1Rows(roomId)).length === 4, 'the retried flush');
    const rows = await d1Rows(roomId);
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(rows.map((r) => r.markdown).sort()).toEqual(['before the outage', 'during 1', 'during 2', 'during 3']);
    // Later flushes (and the history route's own flush) do not write them again.
    await postOk(hook, 'after the outage');
    expect((await history(roomId)).body.entities.map((m: { seq: number }) => m.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(await d1Rows(roomId)).toHaveLength(5);
    viewer.close();
  });
});

describe('posts to several rooms', () => {
  it('store nothing in any room when one room cannot prepare, and answer 503', async () => {
    const [home, a, b] = await Promise.all([createRoom(), createRoom(), createRoom()]);
    const hook = await createWebhook({
      roomId: home!.id,
      mappings: [{ field: 'message', match: 'contains', value: 'x', roomIds: [a!.id, b!.id] }],
    });
    // Room b's object is gone (as if deleted under the webhook's feet): it refuses every call.
    await roomStub(b!.id).purge(b!.id);
    const res = await post(hook, { message: 'x marks the spot' });
    expectError(res, 503, 'service.unavailable');
    const prepared = await runInDurableObject(
      roomStub(a!.id),
      (_, state) => state.storage.sql.exec('SELECT COUNT(*) AS n FROM prepared').one().n,
    );
    expect(prepared).toBe(0);
    expect((await history(a!.id)).body.entities).toEqual([]);
  });

  it('commits a stale prepared message by itself once the coordinator recorded "commit"', async () => {
    const room = await createRoom();
    const coordinator = crypto.randomUUID();
    const txId = crypto.randomUUID();
    const stub = roomStub(room.id);
    const draft = { id: crypto.randomUUID(), webhookId: coordinator, markdown: 'late', html: '<p>late</p>', metadata: null, dedupe: false };
    await stub.prepare(room.id, txId, coordinator, draft);
    expect(await env.WEBHOOK_GATES.get(env.WEBHOOK_GATES.idFromName(coordinator)).decide(txId, 'commit')).toBe('commit');
    await runInDurableObject(stub, (_, state) => {
      state.storage.sql.exec('UPDATE prepared SET prepared_at = prepared_at - 60000');
    });
    await runDurableObjectAlarm(stub);
    const stored = (await history(room.id)).body.entities;
    expect(stored).toMatchObject([{ id: draft.id, seq: 1, markdown: 'late' }]);
  });

  it('drops a stale prepared message the coordinator never decided, and a late commit request then gets "abort"', async () => {
    const room = await createRoom();
    const coordinator = crypto.randomUUID();
    const txId = crypto.randomUUID();
    const stub = roomStub(room.id);
    await stub.prepare(room.id, txId, coordinator, {
      id: crypto.randomUUID(),
      webhookId: coordinator,
      markdown: 'orphan',
      html: '',
      metadata: null,
      dedupe: false,
    });
    await runInDurableObject(stub, (_, state) => {
      state.storage.sql.exec('UPDATE prepared SET prepared_at = prepared_at - 60000');
    });
    await runDurableObjectAlarm(stub);
    expect(await env.WEBHOOK_GATES.get(env.WEBHOOK_GATES.idFromName(coordinator)).decide(txId, 'commit')).toBe('abort');
    expect((await history(room.id)).body.entities).toEqual([]);
    const refused = await stub.commit(room.id, txId).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(String(refused)).toContain('not prepared');
  });
});

describe('retrying a post whose answer was lost', () => {
  it('answers the stored delivery instead of storing the message again', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const key = unique('lost');
    const gate = env.WEBHOOK_GATES.get(env.WEBHOOK_GATES.idFromName(hook.id));
    // What a Worker does before its connection dies: claim the key, have the room store the message...
    const fingerprint = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(['lost answer', null])));
    const fingerprintHex = [...new Uint8Array(fingerprint)].map((b) => b.toString(16).padStart(2, '0')).join('');
    const admission = await gate.admit({
      rateLimit: { burst: 10, perSecond: 10 },
      cost: 1,
      idempotency: { key, fingerprint: fingerprintHex },
    });
    expect(admission.kind).toBe('go');
    const attempt = (admission as { attempt: string }).attempt;
    const stored = await roomStub(roomId).append(roomId, {
      id: await uuidFromName(`${attempt}/${roomId}`),
      webhookId: hook.id,
      markdown: 'lost answer',
      html: '<p>lost answer</p>',
      metadata: null,
      dedupe: true,
    });
    // ...and the room's answer never arrives.
    await gate.release(key, true);

    const retry = await post(hook, { message: 'lost answer' }, { 'Idempotency-Key': key });
    expect(retry.status).toBe(200);
    expect(retry.body.deliveries).toEqual([{ roomId, messageId: stored.messageId, seq: stored.seq }]);
    expect((await history(roomId)).body.entities).toHaveLength(1);
  });
});

describe('idempotency claims', () => {
  it("keep a repeat's claim when the attempt it took over fails having stored nothing", async () => {
    const { hook } = await roomWithWebhook();
    const gate = env.WEBHOOK_GATES.getByName(hook.id);
    const rateLimit = { burst: 100, perSecond: 100 };
    const idempotency = { key: unique('claim'), fingerprint: 'f' };
    const first = await gate.admit({ rateLimit, cost: 1, idempotency });
    if (first.kind !== 'go') throw new Error(`expected go, got ${first.kind}`);
    // The first attempt's claim runs out while it is still on its way; a repeat takes the key over.
    await runInDurableObject(gate, (_, state) => {
      state.storage.sql.exec('UPDATE idempotency SET expires_at = ? WHERE key = ?', Date.now() - 1, idempotency.key);
    });
    const repeat = await gate.admit({ rateLimit, cost: 1, idempotency });
    if (repeat.kind !== 'go') throw new Error(`expected go, got ${repeat.kind}`);
    expect(repeat.attempt).toBe(first.attempt);
    // The first attempt fails, having stored nothing: the repeat still holds the key.
    await gate.release(idempotency.key, false, first.claim);
    expect((await gate.admit({ rateLimit, cost: 1, idempotency })).kind).toBe('in-progress');
    // The repeat fails the same way: now the key is free, for a fresh attempt.
    await gate.release(idempotency.key, false, repeat.claim);
    const fresh = await gate.admit({ rateLimit, cost: 1, idempotency });
    if (fresh.kind !== 'go') throw new Error(`expected go, got ${fresh.kind}`);
    expect(fresh.attempt).not.toBe(first.attempt);
  });
});

describe('replays older than the room object keeps', () => {
  it('come from D1 and join the local messages without a gap', async () => {
    const { roomId, hook } = await roomWithTrimmedLog(30, 25);
    const viewer = await Viewer.open(roomId, { query: '?after=3' });
    await viewer.ready();
    expect(viewer.seqs()).toEqual(range(4, 30));
    expect(viewer.messages.map((m) => m.markdown)).toEqual(range(4, 30).map((i) => `m${i}`));
    await postOk(hook, 'm31');
    await viewer.untilSeq(31);
    expect(viewer.seqs()).toEqual(range(4, 31));
    viewer.close();
  });
});

describe('history', () => {
  it('pages by seq with after, before, limit and nextAfter', async () => {
    const { roomId, hook } = await roomWithWebhook();
    await Promise.all(range(1, 25).map((i) => post(hook, { message: `m${i}` })));
    const page = async (query: string) => (await history(roomId, query)).body;
    const seqs = (body: { entities: { seq: number }[] }) => body.entities.map((m) => m.seq);

    const first = await page('?limit=10');
    expect(seqs(first)).toEqual(range(1, 10));
    expect(first.nextAfter).toBe(10);
    const second = await page(`?after=${first.nextAfter}&limit=10`);
    expect(seqs(second)).toEqual(range(11, 20));
    expect(second.nextAfter).toBe(20);
    const last = await page('?after=20&limit=10');
    expect(seqs(last)).toEqual(range(21, 25));
    expect(last.nextAfter).toBeUndefined();
    const window = await page('?after=5&before=9');
    expect(seqs(window)).toEqual([6, 7, 8]);
    expect(window.nextAfter).toBeUndefined();
    expect(seqs(await page(''))).toEqual(range(1, 25));
    expect(first.entities[0]).toMatchObject({
      roomId,
      seq: 1,
      webhookId: hook.id,
      html: expect.any(String),
      createdAt: expect.any(String),
    });
  });

  it('validates its query and needs chat:read', async () => {
    const room = await createRoom();
    expectError(await history(room.id, '?limit=0'), 400, 'invalid.value', 'limit');
    expectError(await history(room.id, '?limit=501'), 400, 'invalid.value', 'limit');
    expectError(await history(room.id, '?after=-3'), 400, 'invalid.value', 'after');
    expectError(await history(crypto.randomUUID()), 404, 'not.found');
    expectError(await send('GET', `/api/v1/rooms/${room.id}/messages`, { token: null }), 401, 'authentication.required');
    const { token: adminOnly } = await createToken(['chat:admin']);
    expectError(await send('GET', `/api/v1/rooms/${room.id}/messages`, { token: adminOnly }), 403, 'missing.permissions', 'chat:read');
    const { token: reader } = await createToken(['chat:read']);
    expect((await send('GET', `/api/v1/rooms/${room.id}/messages`, { token: reader })).body).toEqual({ entities: [] });
  });
});
