import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { PROTOCOL } from '../../src/chat/protocol';
import { createToken, expectError, send } from '../helpers';
import { createRoom, post, postOk, range, roomWithWebhook, Viewer, waitUntil } from './helpers';

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

async function ticketFor(roomId: string, token?: string): Promise<string> {
  const res = await send('POST', `/api/v1/rooms/${roomId}/ws-ticket`, token === undefined ? {} : { token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.ticket;
}

/** A message draft as the Worker hands it to a room (appended straight to the room object). */
const draft = (i: number) => ({
  id: crypto.randomUUID(),
  webhookId: crypto.randomUUID(),
  markdown: `m${i}`,
  html: `<p>m${i}</p>`,
  metadata: null,
  dedupe: false,
});

describe('live viewers', () => {
  it('gives three viewers every one of 200 concurrent posts exactly once, in seq order', async () => {
    const { roomId, hook } = await roomWithWebhook();
    const viewers = await Promise.all([Viewer.open(roomId), Viewer.open(roomId), Viewer.open(roomId)]);
    await Promise.all(viewers.map((v) => v.ready()));
    expect(viewers.map((v) => v.readyLastSeq)).toEqual([0, 0, 0]);

    const answers = await Promise.all(range(1, 200).map((i) => post(hook, { message: `message ${i}` })));
    expect(answers.map((a) => a.status)).toEqual(Array(200).fill(200));
    const seqToId = new Map(answers.map((a) => [a.body.deliveries[0].seq as number, a.body.deliveries[0].messageId as string]));
    expect([...seqToId.keys()].sort((a, b) => a - b)).toEqual(range(1, 200));

    await Promise.all(viewers.map((v) => v.untilSeq(200)));
    for (const viewer of viewers) {
      expect(viewer.seqs()).toEqual(range(1, 200));
      expect(viewer.messages.map((m) => m.id)).toEqual(range(1, 200).map((seq) => seqToId.get(seq)));
    }
    viewers.forEach((v) => v.close());
  });

  it('replays after= and then goes live, with no gap or duplicate at the seam while posts continue', async () => {
    const { roomId, hook } = await roomWithWebhook();
    for (const i of range(1, 20)) await postOk(hook, `m${i}`);

    // Viewers join at different moments while 60 more posts arrive, ten at a time.
    const joining: Promise<Viewer>[] = [];
    for (let batch = 0; batch < 6; batch++) {
      await Promise.all(range(1, 10).map((i) => post(hook, { message: `b${batch}-${i}` })));
      joining.push(Viewer.open(roomId, { query: `?after=${5 + batch * 7}` }));
    }
    const viewers = await Promise.all(joining);
    await Promise.all(viewers.map((v) => v.untilSeq(80)));
    viewers.forEach((viewer, batch) => {
      const after = 5 + batch * 7;
      expect(viewer.seqs()).toEqual(range(after + 1, 80));
      // Everything before `ready` was replayed; `ready` names the last of them.
      expect(viewer.readyLastSeq).toBe(viewer.messages[viewer.readyAt! - 1]?.seq ?? after);
    });
    viewers.forEach((v) => v.close());
  });

  it('sends messages committed close together in one frame per viewer, each message once, in order', async () => {
    const { roomId } = await roomWithWebhook();
    const viewer = await Viewer.open(roomId);
    await viewer.ready();
    const room = env.ROOMS.get(env.ROOMS.idFromName(roomId));
    // 100 calls in flight at once: the room takes them one after another, faster than its 0 ms timer.
    const deliveries = await Promise.all(range(1, 100).map((i) => room.append(roomId, draft(i))));
    expect(deliveries.map((d) => d.seq).sort((a, b) => a - b)).toEqual(range(1, 100));
    await viewer.untilSeq(100);
    expect(viewer.seqs()).toEqual(range(1, 100));
    const frames = viewer.raw.filter((f) => f.startsWith('{"type":"messages"'));
    expect(frames.length).toBeLessThan(100);
    for (const frame of frames) expect(JSON.parse(frame).messages.length).toBeGreaterThan(0);
    viewer.close();
  });

  it('has no gap or duplicate at the seam when viewers join while messages are waiting to be sent', async () => {
    const { roomId } = await roomWithWebhook();
    const live = await Viewer.open(roomId);
    await live.ready();
    const room = env.ROOMS.get(env.ROOMS.idFromName(roomId));
    // Appends and upgrades interleave in the room's queue: some viewers go live with messages pending.
    const appends: Promise<unknown>[] = [];
    const joining: Promise<Viewer>[] = [];
    for (let i = 1; i <= 150; i++) {
      appends.push(room.append(roomId, draft(i)));
      if (i % 15 === 0) joining.push(Viewer.open(roomId, { query: '?after=0' }));
    }
    await Promise.all(appends);
    const viewers = [live, ...(await Promise.all(joining))];
    await Promise.all(viewers.map((v) => v.untilSeq(150)));
    for (const viewer of viewers) expect(viewer.seqs()).toEqual(range(1, 150));
    viewers.forEach((v) => v.close());
  });

  it('replays the latest n with tail=n, and only live messages without after or tail', async () => {
    const { roomId, hook } = await roomWithWebhook();
    for (const i of range(1, 5)) await postOk(hook, `m${i}`);
    const tail = await Viewer.open(roomId, { query: '?tail=2' });
    const live = await Viewer.open(roomId);
    await Promise.all([tail.ready(), live.ready()]);
    expect(tail.seqs()).toEqual([4, 5]);
    expect(live.seqs()).toEqual([]);
    expect(live.readyLastSeq).toBe(5);
    await postOk(hook, 'm6');
    await Promise.all([tail.untilSeq(6), live.untilSeq(6)]);
    expect(tail.seqs()).toEqual([4, 5, 6]);
    expect(live.seqs()).toEqual([6]);
    expect(live.messages[0]).toMatchObject({ roomId, seq: 6, webhookId: hook.id, markdown: 'm6', metadata: null });
    tail.close();
    live.close();
  });

  it('answers the heartbeat ping with pong', async () => {
    const room = await createRoom();
    const viewer = await Viewer.open(room.id);
    await viewer.ready();
    viewer.ws.send(PROTOCOL.ping);
    await waitUntil(() => viewer.raw.includes(PROTOCOL.pong), 'pong');
    viewer.close();
  });

  it('closes viewers with code 4404 when the room is deleted', async () => {
    const room = await createRoom();
    const viewer = await Viewer.open(room.id);
    await viewer.ready();
    expect((await send('DELETE', `/api/v1/rooms/${room.id}`)).status).toBe(204);
    await waitUntil(() => viewer.closed !== undefined, 'close');
    expect(viewer.closed!.code).toBe(PROTOCOL.close.roomDeleted);
  });
});

describe('the WebSocket route', () => {
  it('requires a token with chat:read', async () => {
    const room = await createRoom();
    expect((await Viewer.request(room.id, { token: null })).status).toBe(401);
    const bad = await send('GET', `/api/v1/rooms/${room.id}/ws`, { token: null, headers: { Upgrade: 'websocket' } });
    expectError(bad, 401, 'authentication.required');
    const { token: adminOnly } = await createToken(['chat:admin']);
    expectError(
      await send('GET', `/api/v1/rooms/${room.id}/ws`, { token: adminOnly, headers: { Upgrade: 'websocket' } }),
      403,
      'missing.permissions',
      'chat:read',
    );
    const { token: reader } = await createToken(['chat:read']);
    const viewer = await Viewer.open(room.id, { token: reader });
    await viewer.ready();
    viewer.close();
  });

  it('answers 426 to a request that is not a WebSocket upgrade', async () => {
    const room = await createRoom();
    const res = await send('GET', `/api/v1/rooms/${room.id}/ws`);
    expectError(res, 426, 'upgrade.required');
  });

  it('answers 404 for an unknown or malformed room id', async () => {
    const headers = { Upgrade: 'websocket' };
    expectError(await send('GET', `/api/v1/rooms/${crypto.randomUUID()}/ws`, { headers }), 404, 'not.found');
    expectError(await send('GET', '/api/v1/rooms/nope/ws', { headers }), 404, 'not.found');
  });

  it.each([
    ['after=-1', 'after'],
    ['after=abc', 'after'],
    ['tail=1001', 'tail'],
  ])('answers 400 for %s', async (query, field) => {
    const room = await createRoom();
    expectError(
      await send('GET', `/api/v1/rooms/${room.id}/ws?${query}`, { headers: { Upgrade: 'websocket' } }),
      400,
      'invalid.value',
      field,
    );
  });
});

describe('WebSocket tickets', () => {
  it('are issued to chat:read for an existing room, last 60 s and carry the room', async () => {
    const room = await createRoom(undefined, 'the topic');
    const { token } = await createToken(['chat:read']);
    const before = Date.now();
    const res = await send('POST', `/api/v1/rooms/${room.id}/ws-ticket`, { token });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ roomId: room.id, room: { id: room.id, name: room.name, topic: 'the topic' } });
    expect(res.body.ticket).toMatch(/^swt_[A-Za-z0-9_-]{43}$/);
    const ttl = Date.parse(res.body.expiresAt) - before;
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(61_000);
    const row = await env.DB.prepare('SELECT * FROM ws_tickets WHERE ticket_hash = ?')
      .bind(await sha256Hex(res.body.ticket))
      .first();
    expect(row).toMatchObject({ room_id: room.id });

    expectError(await send('POST', `/api/v1/rooms/${room.id}/ws-ticket`, { token: null }), 401, 'authentication.required');
    const { token: writer } = await createToken(['chat:admin']);
    expectError(await send('POST', `/api/v1/rooms/${room.id}/ws-ticket`, { token: writer }), 403, 'missing.permissions');
    expectError(await send('POST', `/api/v1/rooms/${crypto.randomUUID()}/ws-ticket`, { token }), 404, 'not.found');
  });

  it('open the WebSocket once, without any token', async () => {
    const { roomId, hook } = await roomWithWebhook();
    await postOk(hook, 'hello');
    const ticket = await ticketFor(roomId);
    const viewer = await Viewer.open(roomId, { token: null, query: `?ticket=${ticket}&after=0` });
    await viewer.ready();
    expect(viewer.seqs()).toEqual([1]);
    viewer.close();
    expectError(
      await send('GET', `/api/v1/rooms/${roomId}/ws?ticket=${ticket}`, { token: null, headers: { Upgrade: 'websocket' } }),
      401,
      'bad.credentials',
    );
  });

  it('work for their own room only, and a try on another room does not use them up', async () => {
    const [a, b] = await Promise.all([createRoom(), createRoom()]);
    const ticket = await ticketFor(a.id);
    expectError(
      await send('GET', `/api/v1/rooms/${b.id}/ws?ticket=${ticket}`, { token: null, headers: { Upgrade: 'websocket' } }),
      401,
      'bad.credentials',
    );
    const viewer = await Viewer.open(a.id, { token: null, query: `?ticket=${ticket}` });
    await viewer.ready();
    viewer.close();
  });

  it('are refused once expired', async () => {
    const room = await createRoom();
    const ticket = `swt_expired_${crypto.randomUUID()}`;
    await env.DB.prepare('INSERT INTO ws_tickets (ticket_hash, room_id, token_id, expires_at) VALUES (?, ?, ?, ?)')
      .bind(await sha256Hex(ticket), room.id, 'admin', Date.now() - 1)
      .run();
    expectError(
      await send('GET', `/api/v1/rooms/${room.id}/ws?ticket=${ticket}`, { token: null, headers: { Upgrade: 'websocket' } }),
      401,
      'bad.credentials',
    );
  });
});
