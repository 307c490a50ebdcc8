import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { RoomObject } from '../../src/chat/room/room-object';
import { CHAT_LIMITS } from '../../src/chat/limits';
import { encodeAck, PROTOCOL } from '../../src/chat/protocol';
import { expectError, send } from '../helpers';
import { createRoom, range, Viewer, waitUntil } from './helpers';

const BUDGET = CHAT_LIMITS.viewerBudgetBytes;
const bytes = (text: string) => new TextEncoder().encode(text).length;

function roomStub(roomId: string): DurableObjectStub<RoomObject> {
  return env.ROOMS.get(env.ROOMS.idFromName(roomId));
}

/** A draft of about 2 × `chars` characters (markdown and html), appended straight to the room object. */
const draft = (i: number, chars: number) => ({
  id: crypto.randomUUID(),
  webhookId: crypto.randomUUID(),
  markdown: `m${i} ${'x'.repeat(chars)}`,
  html: `<p>m${i} ${'y'.repeat(chars)}</p>`,
  metadata: null,
  dedupe: false,
});

/** A room holding `n` messages of about 2 × `chars` characters. */
async function roomWith(n: number, chars: number): Promise<string> {
  const room = await createRoom();
  const stub = roomStub(room.id);
  for (const i of range(1, n)) await stub.append(room.id, draft(i, chars));
  return room.id;
}

/** Bytes of the text frames a viewer received, pongs excepted, in order. */
function frameBytes(viewer: Viewer): number[] {
  return viewer.raw.filter((f) => f !== PROTOCOL.pong).map(bytes);
}

/** Acks everything `viewer` (opened with ack: false) received so far, as the protocol would; resolves once `done`. */
async function ackUntil(viewer: Viewer, done: () => boolean, what: string): Promise<void> {
  let acked = 0;
  await waitUntil(() => {
    const received = frameBytes(viewer).reduce((a, b) => a + b, 0);
    if (received > acked) {
      viewer.ws.send(encodeAck(received));
      acked = received;
    }
    return done();
  }, what);
}

/** Waits for frames a viewer may still receive (the room sent them before the awaited event). */
const settle = () => new Promise((r) => setTimeout(r, 300));

describe('viewer send budgets', () => {
  it('closes a viewer that never acks with 4008 once it passes its budget, while an acking viewer gets every message in order', async () => {
    const room = await createRoom();
    const stub = roomStub(room.id);
    const acking = await Viewer.open(room.id);
    const silent = await Viewer.open(room.id, { ack: false });
    await Promise.all([acking.ready(), silent.ready()]);

    // 80 messages of about 20 KB: some six budgets in all.
    const n = 80;
    for (const i of range(1, n)) {
      await stub.append(room.id, draft(i, 10_000));
      await acking.untilSeq(i);
    }
    await waitUntil(() => silent.closed !== undefined, 'the silent viewer to be closed');
    expect(silent.closed!.code).toBe(PROTOCOL.close.tooSlow);
    expect(silent.closed!.reason).toMatch(/after=/);

    // It was sent frames while what it had not acked (all it got) was within the budget, and then no more.
    const sizes = frameBytes(silent);
    const total = sizes.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(BUDGET);
    expect(total - sizes[sizes.length - 1]!).toBeLessThanOrEqual(BUDGET);
    expect(silent.seqs()).toEqual(range(1, silent.messages.length));
    expect(silent.messages.length).toBeLessThan(n);

    expect(acking.closed).toBeUndefined();
    expect(acking.seqs()).toEqual(range(1, n));
    acking.close();
  });

  it.each([
    ['local storage', false],
    ['D1 (older than the local window)', true],
  ])(
    'pages a replay from %s: complete and in order for an acking viewer; one that does not ack gets about half a budget and waits, after the 101',
    async (_, fromD1) => {
      // 120 messages of about 16 KB: about 2 MB, many pages (a page is about 64 K characters).
      const n = 120;
      const roomId = await roomWith(n, 8_000);
      if (fromD1) {
        await roomStub(roomId).flush(roomId);
        await runInDurableObject(roomStub(roomId), (_, state) => {
          state.storage.sql.exec('DELETE FROM log WHERE seq <= ?', n - 10);
        });
      }

      const silent = await Viewer.open(roomId, { query: '?after=0', ack: false });
      const acking = await Viewer.open(roomId, { query: `?tail=${n}` });
      await acking.ready();
      expect(acking.seqs()).toEqual(range(1, n));
      expect(acking.readyLastSeq).toBe(n);
      expect(acking.raw.filter((f) => f.startsWith('{"type":"messages"')).length).toBeGreaterThan(10);

      // The 101 came (open resolved) while the silent viewer's replay was far from complete: the room
      // sent pages only while less than half a budget was unacknowledged, and then waited.
      await settle();
      const sizes = frameBytes(silent);
      const total = sizes.reduce((a, b) => a + b, 0);
      expect(silent.readyAt).toBeUndefined();
      expect(silent.closed).toBeUndefined();
      // Pages went out until half a budget was unacknowledged: the last one began below it, and a page
      // is about replayPageChars (ASCII here: a character is a byte) plus the message that crosses it.
      expect(total).toBeGreaterThanOrEqual(BUDGET / 2);
      expect(total).toBeLessThan(BUDGET / 2 + CHAT_LIMITS.replayPageChars + 20_000);
      expect(total).toBeLessThan(BUDGET);
      expect(silent.seqs()).toEqual(range(1, silent.messages.length));
      expect(silent.messages.length).toBeLessThan(n);

      // Acked, the replay goes on where it stopped.
      await ackUntil(silent, () => silent.readyAt !== undefined, 'ready once acked');
      expect(silent.seqs()).toEqual(range(1, n));
      expect(silent.readyLastSeq).toBe(n);

      // Both are live now, and get what follows once.
      await roomStub(roomId).append(roomId, draft(n + 1, 10));
      await Promise.all([acking.untilSeq(n + 1), silent.untilSeq(n + 1)]);
      expect(acking.seqs()).toEqual(range(1, n + 1));
      expect(silent.seqs()).toEqual(range(1, n + 1));
      acking.close();
      silent.close();
    },
  );

  it('keeps the seam exact while messages are committed during a paged replay', async () => {
    const n = 60;
    const roomId = await roomWith(n, 8_000);
    const stub = roomStub(roomId);
    const viewer = await Viewer.open(roomId, { query: '?after=0', ack: false });
    // While the replay waits for acks, more messages are committed: the viewer reads them in its replay.
    for (const i of range(n + 1, n + 20)) await stub.append(roomId, draft(i, 100));
    const appends = range(n + 21, n + 40).map((i) => stub.append(roomId, draft(i, 100)));
    await ackUntil(viewer, () => viewer.readyAt !== undefined, 'ready');
    await Promise.all(appends);
    await viewer.untilSeq(n + 40);
    expect(viewer.seqs()).toEqual(range(1, n + 40));
    viewer.close();
  });
});

describe('viewers per room', () => {
  it(`refuses viewer ${CHAT_LIMITS.viewersPerRoom + 1} with 503 and takes one again once a viewer left`, async () => {
    const room = await createRoom();
    const viewers: Viewer[] = [];
    for (let i = 0; i < CHAT_LIMITS.viewersPerRoom; i += 10) {
      viewers.push(...(await Promise.all(range(1, 10).map(() => Viewer.open(room.id)))));
    }
    expect(viewers.length).toBe(CHAT_LIMITS.viewersPerRoom);
    const refused = await send('GET', `/api/v1/rooms/${room.id}/ws`, { headers: { Upgrade: 'websocket' } });
    expectError(refused, 503, 'service.unavailable');
    expect(refused.body.message).toContain(`maximum of ${CHAT_LIMITS.viewersPerRoom} viewers`);
    expect(refused.headers.get('Retry-After')).toBe('30');

    viewers.pop()!.close();
    let extra: Response | undefined;
    await waitUntil(async () => {
      const res = await Viewer.request(room.id);
      if (res.status === 101) extra = res;
      else await res.text();
      return extra !== undefined;
    }, 'a place once a viewer left');
    extra!.webSocket!.accept();
    extra!.webSocket!.close(1000, 'done');
    for (const v of viewers) v.close();
  });
});
