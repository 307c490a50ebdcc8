import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { RoomObject } from '../../src/chat/room/room-object';
import { encodeAck } from '../../src/chat/protocol';
import { roomStub } from '../../src/chat/stubs';
import { expectError, send } from '../helpers';
import {
  createWebhook,
  history,
  post,
  postOk,
  range,
  roomWithWebhook,
  unique,
  Viewer,
  waitUntil,
  webhookPath,
  type PostTarget,
} from './helpers';

/**
 * Messages that update in place (issue 25, item 8): a webhook edits (PATCH) or deletes (DELETE) a
 * message it posted, or posts with a `key` that replaces its previous message with that key. The
 * message keeps its id and seq; viewers get an `update` frame; history and replays give the latest
 * version; a deleted message stays at its seq as a tombstone.
 */

function messagePath(hook: PostTarget, messageId: string): string {
  return `${webhookPath(hook)}/messages/${messageId}`;
}

function patch(hook: PostTarget, messageId: string, json: unknown, headers: Record<string, string> = {}) {
  return send('PATCH', messagePath(hook, messageId), { token: null, json, headers });
}

function del(hook: PostTarget, messageId: string, headers: Record<string, string> = {}) {
  return send('DELETE', messagePath(hook, messageId), { token: null, headers });
}

async function d1Row(id: string) {
  return env.DB.prepare('SELECT seq, markdown, html, metadata, edited_at, deleted_at, version FROM messages WHERE id = ?').bind(id).first<{
    seq: number;
    markdown: string;
    html: string;
    metadata: string | null;
    edited_at: string | null;
    deleted_at: string | null;
    version: number;
  }>();
}

describe('a webhook editing its messages', () => {
  it('edits in place: same id and seq, an update frame to viewers, the latest version in history and replays', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const viewer = await Viewer.open(roomId, { query: '?after=0' });
    await viewer.ready();
    const [first] = await postOk(hook, 'Build #7 **running**', 'ci');
    await postOk(hook, 'after');
    await viewer.untilSeq(2);

    const res = await patch(hook, first!.messageId, { message: 'Build #7 **passed**', metadata: 'ci', level: 'success' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.message).toMatchObject({
      id: first!.messageId,
      seq: 1,
      markdown: 'Build #7 **passed**',
      html: '<p>Build #7 <strong>passed</strong></p>\n',
      level: 'success',
      deletedAt: null,
      editedAt: expect.any(String),
    });

    await waitUntil(() => viewer.updates.length === 1, 'update frame');
    expect(viewer.updates[0]).toMatchObject({ id: first!.messageId, seq: 1, markdown: 'Build #7 **passed**', level: 'success' });
    expect(viewer.seqs()).toEqual([1, 2]); // no new message, no new seq
    const raw = viewer.raw.find((f) => f.includes('"type":"update"'))!;
    expect(JSON.parse(raw).type).toBe('update');

    const h = await history(roomId);
    expect(h.body.entities.map((m: { seq: number }) => m.seq)).toEqual([1, 2]);
    expect(h.body.entities[0]).toMatchObject({ markdown: 'Build #7 **passed**', editedAt: expect.any(String), deletedAt: null });
    expect(await d1Row(first!.messageId)).toMatchObject({ seq: 1, markdown: 'Build #7 **passed**', version: 1 });

    const late = await Viewer.open(roomId, { query: '?after=0' });
    await late.ready();
    expect(late.messages.map((m) => [m.seq, m.markdown])).toEqual([
      [1, 'Build #7 **passed**'],
      [2, 'after'],
    ]);
    viewer.close();
    late.close();
  });

  it('stores the edit durably in the room before the 2xx (it survives an eviction before any flush)', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const [first] = await postOk(hook, 'v1');
    expect((await patch(hook, first!.messageId, { message: 'v2' })).status).toBe(200);
    await runInDurableObject(roomStub(env, roomId), (_, state) => state.abort('evicted by the test')).catch(() => undefined);
    const rows = await runInDurableObject(roomStub(env, roomId) as DurableObjectStub<RoomObject>, (_, state) =>
      state.storage.sql.exec<{ markdown: string }>('SELECT markdown FROM log').toArray(),
    );
    expect(rows.map((r) => r.markdown)).toEqual(['v2']);
    expect((await history(roomId)).body.entities[0]).toMatchObject({ seq: 1, markdown: 'v2' });
  });

  it('acknowledges an edit while D1 refuses it, and writes it to D1 once D1 is back (never an older version)', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const [m] = await postOk(hook, 'v1');
    expect((await history(roomId)).status).toBe(200); // v1 in D1
    const trigger = `fail_edit_${roomId.replace(/-/g, '_')}`;
    await env.DB.exec(
      `CREATE TRIGGER ${trigger} BEFORE UPDATE ON messages WHEN NEW.room_id = '${roomId}' BEGIN SELECT RAISE(ABORT, 'injected D1 failure'); END;`,
    );
    try {
      expect((await patch(hook, m!.messageId, { message: 'v2' })).status).toBe(200);
      expect((await patch(hook, m!.messageId, { message: 'v3' })).status).toBe(200);
      expectError(await history(roomId), 503, 'service.unavailable');
      expect(await d1Row(m!.messageId)).toMatchObject({ markdown: 'v1', version: 0 });
    } finally {
      await env.DB.exec(`DROP TRIGGER ${trigger}`);
    }
    expect((await history(roomId)).body.entities).toMatchObject([{ seq: 1, markdown: 'v3' }]);
    expect(await d1Row(m!.messageId)).toMatchObject({ markdown: 'v3', version: 2 });
    // A late write of an older version changes nothing.
    await env.DB.prepare("UPDATE messages SET markdown = 'stale', version = 1 WHERE id = ? AND version < 1").bind(m!.messageId).run();
    expect(await d1Row(m!.messageId)).toMatchObject({ markdown: 'v3', version: 2 });
  });

  it('reaches a viewer still replaying: an update for what it was sent, the changed message in the rest of its replay', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const ids: string[] = [];
    for (const i of range(1, 24)) ids.push((await postOk(hook, `m${i} ${'x'.repeat(10_000)}`))[0]!.messageId);
    const viewer = await Viewer.open(roomId, { query: '?after=0', ack: false });
    // Without acks the replay stops at about 128 KiB: some messages sent, the rest waiting.
    await waitUntil(() => viewer.messages.length > 0, 'the first replay pages');
    await new Promise((r) => setTimeout(r, 200));
    const sent = viewer.messages.length;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(24);
    expect(viewer.readyAt).toBeUndefined();

    expect((await patch(hook, ids[0]!, { message: 'first, edited' })).status).toBe(200);
    expect((await patch(hook, ids[23]!, { message: 'last, edited' })).status).toBe(200);
    await waitUntil(() => viewer.updates.length === 1, 'the update of a replayed message');
    expect(viewer.updates[0]).toMatchObject({ seq: 1, markdown: 'first, edited' });

    viewer.ws.send(encodeAck(viewer.acks.bytes));
    const resume = setInterval(() => viewer.ws.send(encodeAck(viewer.acks.bytes)), 50);
    try {
      await viewer.ready();
    } finally {
      clearInterval(resume);
    }
    expect(viewer.seqs()).toEqual(range(1, 24));
    expect(viewer.messages[23]!.markdown).toBe('last, edited');
    expect(viewer.updates).toHaveLength(1);
    viewer.close();
  });

  it('deletes: a tombstone at its seq in frames, history and replays, so seq stays gapless', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const viewer = await Viewer.open(roomId, { query: '?after=0' });
    await viewer.ready();
    const ids = [];
    for (const i of range(1, 3)) ids.push((await postOk(hook, `m${i}`, 'secret stuff'))[0]!.messageId);
    await viewer.untilSeq(3);

    const res = await del(hook, ids[1]!);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.message).toMatchObject({ id: ids[1], seq: 2, markdown: '', html: '', metadata: null, deletedAt: expect.any(String) });
    await waitUntil(() => viewer.updates.length === 1, 'update frame');
    expect(viewer.updates[0]).toMatchObject({ seq: 2, deletedAt: expect.any(String), markdown: '' });

    // A repeat answers the same tombstone and sends nothing.
    const again = await del(hook, ids[1]!);
    expect(again.status).toBe(200);
    expect(again.body.message.deletedAt).toBe(res.body.message.deletedAt);

    const h = await history(roomId);
    expect(h.body.entities.map((m: { seq: number }) => m.seq)).toEqual([1, 2, 3]);
    expect(h.body.entities[1]).toMatchObject({ markdown: '', html: '', metadata: null, deletedAt: expect.any(String) });
    const late = await Viewer.open(roomId, { query: '?after=0' });
    await late.ready();
    expect(late.seqs()).toEqual([1, 2, 3]);
    expect(late.messages[1]!.deletedAt).toEqual(expect.any(String));

    // A deleted message cannot be edited back.
    expectError(await patch(hook, ids[1]!, { message: 'back' }), 404, 'not.found');
    await new Promise((r) => setTimeout(r, 100));
    expect(viewer.updates).toHaveLength(1);
    viewer.close();
    late.close();
  });

  it("answers 404 for another webhook's message, an unknown id and an unknown secret, and changes nothing", async () => {
    const { roomId, hook } = await roomWithWebhook();
    const other = await createWebhook({ roomId, rateLimit: { burst: 1000, perSecond: 1000 } });
    const [mine] = await postOk(hook, 'mine');
    expectError(await patch(other, mine!.messageId, { message: 'hijacked' }), 404, 'not.found');
    expectError(await del(other, mine!.messageId), 404, 'not.found');
    expectError(await patch(hook, crypto.randomUUID(), { message: 'x' }), 404, 'not.found');
    expectError(await patch(hook, 'not-a-uuid', { message: 'x' }), 404, 'not.found');
    expectError(await patch(crypto.randomUUID(), mine!.messageId, { message: 'x' }), 404, 'not.found');
    expect((await history(roomId)).body.entities[0]).toMatchObject({ markdown: 'mine', editedAt: null });
  });

  it('refuses bad bodies with a specific 4xx and stores nothing', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const [m] = await postOk(hook, 'original');
    expectError(await patch(hook, m!.messageId, { message: '' }), 400, 'invalid.value', 'message');
    expectError(await patch(hook, m!.messageId, { message: 'x', level: 'loud' }), 400, 'invalid.value', 'level');
    expectError(await patch(hook, m!.messageId, { message: 'x'.repeat(40_001) }), 413, 'payload.too.large', 'message');
    const form = await send('PATCH', messagePath(hook, m!.messageId), {
      token: null,
      body: 'message=x',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expectError(form, 415, 'unsupported.media.type');
    expect((await history(roomId)).body.entities[0]).toMatchObject({ markdown: 'original', editedAt: null });
  });

  it('is idempotent with an Idempotency-Key (the first answer again) and refuses the key for other content', async () => {
    const { hook } = await roomWithWebhook();
    const [m] = await postOk(hook, 'v1');
    const key = unique('edit');
    const first = await patch(hook, m!.messageId, { message: 'v2' }, { 'Idempotency-Key': key });
    expect(first.status).toBe(200);
    const repeat = await patch(hook, m!.messageId, { message: 'v2' }, { 'Idempotency-Key': key });
    expect(repeat.status).toBe(200);
    expect(repeat.headers.get('Idempotent-Replayed')).toBe('true');
    expect(repeat.body).toEqual(first.body);
    expectError(await patch(hook, m!.messageId, { message: 'v3' }, { 'Idempotency-Key': key }), 409, 'conflict');
    expectError(await del(hook, m!.messageId, { 'Idempotency-Key': key }), 409, 'conflict');
  });

  it('counts edits and deletes against the rate limit', async () => {
    const room = await roomWithWebhook({ rateLimit: { burst: 2, perSecond: 0.01 } });
    const [m] = await postOk(room.hook, 'v1');
    expect((await patch(room.hook, m!.messageId, { message: 'v2' })).status).toBe(200);
    const limited = await del(room.hook, m!.messageId);
    expectError(limited, 429, 'too.many.requests');
    expect(limited.headers.get('Retry-After')).toMatch(/^\d+$/);
    expect((await history(room.roomId)).body.entities[0]).toMatchObject({ markdown: 'v2', deletedAt: null });
  });

  it('edits a message older than the local window (read from D1), and a replay from D1 shows the change', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const ids = [];
    for (const i of range(1, 3)) ids.push((await postOk(hook, `m${i}`))[0]!.messageId);
    expect((await history(roomId)).status).toBe(200); // flushed
    await runInDurableObject(roomStub(env, roomId), (_, state) => {
      state.storage.sql.exec('DELETE FROM log WHERE seq <= 2');
    });
    const res = await patch(hook, ids[0]!, { message: 'm1 edited' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.message).toMatchObject({ seq: 1, markdown: 'm1 edited' });
    // Before the flush: a replay reading seq 1 from D1 shows the pending change.
    const viewer = await Viewer.open(roomId, { query: '?after=0' });
    await viewer.ready();
    expect(viewer.messages.map((m) => m.markdown)).toEqual(['m1 edited', 'm2', 'm3']);
    expect((await history(roomId)).body.entities.map((m: { markdown: string }) => m.markdown)).toEqual(['m1 edited', 'm2', 'm3']);
    expect(await d1Row(ids[0]!)).toMatchObject({ markdown: 'm1 edited', version: 1 });
    expectError(await patch(await createWebhook({ roomId }), ids[1]!, { message: 'no' }), 404, 'not.found');
    viewer.close();
  });

  it('requires the signature on a signed webhook', async () => {
    const { roomId } = await roomWithWebhook();
    const hook = await createWebhook({ roomId, kind: 'github', secret: 's3cret' });
    expectError(await patch(hook, crypto.randomUUID(), { message: 'x' }), 401, 'bad.signature');
  });
});

describe('a keyed post', () => {
  it('replaces the previous message with the same key: one line per build, running then passed', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const viewer = await Viewer.open(roomId, { query: '?after=0' });
    await viewer.ready();
    const running = await post(hook, { message: 'Build 1234 running', key: 'build-1234' });
    expect(running.status, JSON.stringify(running.body)).toBe(200);
    const d = running.body.deliveries[0];
    expect(d).toMatchObject({ roomId, seq: 1 });
    expect(d.replaced).toBeUndefined();
    await postOk(hook, 'unrelated');

    const passed = await post(hook, { message: 'Build 1234 **passed**', key: 'build-1234', level: 'success' });
    expect(passed.status).toBe(200);
    expect(passed.body.deliveries).toEqual([{ roomId, messageId: d.messageId, seq: 1, replaced: true }]);
    // Retried: the same answer, nothing new.
    const retried = await post(hook, { message: 'Build 1234 **passed**', key: 'build-1234', level: 'success' });
    expect(retried.body).toEqual(passed.body);

    await viewer.untilSeq(2);
    await waitUntil(() => viewer.updates.length === 1, 'update frame');
    await new Promise((r) => setTimeout(r, 100));
    expect(viewer.updates).toHaveLength(1);
    expect(viewer.seqs()).toEqual([1, 2]);
    const h = await history(roomId);
    expect(h.body.entities.map((m: { seq: number; markdown: string }) => [m.seq, m.markdown])).toEqual([
      [1, 'Build 1234 **passed**'],
      [2, 'unrelated'],
    ]);

    // Another key, or the same key from another webhook: new messages.
    const other = await createWebhook({ roomId });
    expect((await post(hook, { message: 'Build 1235 running', key: 'build-1235' })).body.deliveries[0].seq).toBe(3);
    expect((await post(other, { message: 'theirs', key: 'build-1234' })).body.deliveries[0].seq).toBe(4);
    viewer.close();
  });

  it('starts a new message once the keyed one was deleted', async () => {
    const { hook } = await roomWithWebhook();
    const first = (await post(hook, { message: 'a', key: 'k' })).body.deliveries[0];
    expect((await del(hook, first.messageId)).status).toBe(200);
    const next = (await post(hook, { message: 'b', key: 'k' })).body.deliveries[0];
    expect(next.seq).toBe(2);
    expect(next.messageId).not.toBe(first.messageId);
  });

  it('refuses a bad key (400 naming it) and stores nothing', async () => {
    const { roomId, hook } = await roomWithWebhook();
    expectError(await post(hook, { message: 'x', key: '' }), 400, 'invalid.value', 'key');
    expectError(await post(hook, { message: 'x', key: 'a\nb' }), 400, 'invalid.value', 'key');
    expectError(await post(hook, { message: 'x', key: 7 }), 400, 'invalid.value', 'key');
    expect((await history(roomId)).body.entities).toEqual([]);
  });

  it('keeps a keyed post idempotent under an Idempotency-Key', async () => {
    const { hook } = await roomWithWebhook();
    const a = await post(hook, { message: 'x', key: 'k1' }, { 'Idempotency-Key': 'idem-1' });
    const b = await post(hook, { message: 'x', key: 'k1' }, { 'Idempotency-Key': 'idem-1' });
    expect(b.headers.get('Idempotent-Replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
    expectError(await post(hook, { message: 'x', key: 'k2' }, { 'Idempotency-Key': 'idem-1' }), 409, 'conflict');
  });
});
