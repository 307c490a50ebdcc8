/**
 * Issue 22, "load with attacks": ordinary traffic runs while an attacker holds every lever at once —
 * viewers that never acknowledge, replay storms (`tail=1000`, `after=0`) of a room of large messages,
 * maximal queries and a fan-out webhook at its rate limit. Real Worker, D1, Durable Objects and
 * WebSockets in workerd.
 *
 * Asserted: every ordinary post and query is answered 200; nothing acknowledged is lost (history,
 * and the acknowledging viewer gets every message once, in order); the attacker is answered as the
 * limits say (slow viewers closed with 4008, replays held to the viewer budget, fan-out posts past
 * the bucket 429, maximal queries 200 within the answer bound or 413, never 5xx). Latency is not
 * asserted here (timed assertions fail on busy machines): `npm run bench -- --only attacks` measures
 * it as ratios to a quiet run of the same traffic (bench/README.md).
 */
import { describe, expect, it } from 'vitest';
import { ANALYTICS_LIMITS } from '../../src/analytics/limits';
import { CHAT_LIMITS } from '../../src/chat/limits';
import { PROTOCOL } from '../../src/chat/protocol';
import { conversation } from '../analytics/builders';
import { ingestOk, query } from '../analytics/analytics-api';
import { createRoom, createWebhook, history, post, range, Viewer, waitUntil } from '../chat/helpers';

const DAY = 86_400_000;
const END = Date.parse('2931-03-15T00:00:00.000Z');
const QUEUES = ['q-a', 'q-b', 'q-c'];

/** 600 conversations over 13 days, every one with its own ani (the attacker's groupBy explodes on it). */
function records() {
  return range(0, 599).map((i) => {
    const at = new Date(END - 13 * DAY + i * 31 * 60_000 + (i % 7) * 1_000).toISOString();
    return conversation({
      start: at,
      participants: [
        {
          purpose: 'acd',
          sessions: [
            {
              ani: `tel:+1555${String(i).padStart(7, '0')}`,
              segments: [{ start: at, queueId: QUEUES[i % 3] }],
              metrics: [['nOffered', 1, at]],
            },
          ],
        },
        {
          purpose: 'agent',
          userId: `agent-${i % 5}`,
          sessions: [
            { segments: [{ start: at, queueId: QUEUES[i % 3], wrapUpCode: `w-${i % 4}` }], metrics: [['tHandle', 1_000 + i, at]] },
          ],
        },
      ],
    });
  });
}

const smallQuery = {
  interval: `${new Date(END - 2 * DAY).toISOString()}/${new Date(END - DAY).toISOString()}`,
  granularity: 'PT1H',
  groupBy: ['queueId'],
  metrics: ['nOffered', 'tHandle'],
};

/** Issue 22's attacker: within every documented limit, as large as they allow. */
const maximalQuery = {
  interval: `${new Date(END - 13 * DAY).toISOString()}/${new Date(END).toISOString()}`,
  granularity: 'PT1M',
  groupBy: ['queueId', 'userId', 'mediaType', 'direction', 'wrapUpCode', 'ani', 'dnis', 'disconnectType'],
  filter: {
    type: 'or',
    predicates: range(0, 99).map((i) => (i === 0 ? { dimension: 'mediaType', value: 'voice' } : { dimension: 'queueId', value: `q-${i}` })),
  },
  views: range(0, 9).map((i) => ({ target: 'tHandle', name: `v${i}`, function: 'rangeBound', range: { lt: (i + 1) * 200 } })),
  metrics: ['nOffered', 'tHandle', 'tTalk', 'tAcw', 'tWait', 'tAbandon'],
};

/** Characters of each ordinary message: 12 of them pass a viewer's budget, so slow viewers must be closed. */
const ORDINARY_CHARS = Math.ceil(CHAT_LIMITS.viewerBudgetBytes / 10);
const ORDINARY_POSTS = 24;
const FAN_ROOMS = 100;

describe('load with attacks', () => {
  it('keeps ordinary posts and queries answered and every acknowledged message, while an attacker holds every lever', async () => {
    await ingestOk(records());

    // The ordinary room, its webhook and an acknowledging viewer.
    const room = await createRoom();
    const hook = await createWebhook({ roomId: room.id, rateLimit: { burst: 10_000, perSecond: 10_000 } });
    const viewer = await Viewer.open(room.id);
    await viewer.ready();

    // A room of large messages for the replay storms: several budgets of history.
    const big = await createRoom();
    const filler = await createWebhook({ roomId: big.id, rateLimit: { burst: 10_000, perSecond: 10_000 } });
    const bigText = 'x'.repeat(20_000);
    const bigCount = Math.ceil((4 * CHAT_LIMITS.viewerBudgetBytes) / bigText.length);
    for (const batch of chunk(range(1, bigCount), 8)) {
      const answers = await Promise.all(batch.map(() => post(filler, { message: bigText })));
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    }

    // A fan-out webhook at the default rate limit: ten mappings of ten rooms match every post it sends.
    const fanRooms: string[] = [];
    for (const batch of chunk(range(1, FAN_ROOMS), 10))
      fanRooms.push(...(await Promise.all(batch.map(() => createRoom()))).map((r) => r.id));
    const mappings = chunk(fanRooms, 10).map((roomIds) => ({ field: 'message', match: 'contains', value: 'fan', roomIds }));
    const fan = await createWebhook({ roomId: fanRooms[0], mappings });

    // ---- the attack ----
    const slow = await Promise.all(range(1, 10).map(() => Viewer.open(room.id, { ack: false })));
    const storms = await Promise.all([
      ...range(1, 10).map(() => Viewer.open(big.id, { query: '?tail=1000', ack: false })),
      ...range(1, 5).map(() => Viewer.open(big.id, { query: '?after=0', ack: false })),
    ]);
    let attacking = true;
    const maximal: { status: number; bytes: number }[] = [];
    const queryLoops = range(1, 2).map(async () => {
      while (attacking) {
        const res = await query(maximalQuery);
        maximal.push({ status: res.status, bytes: JSON.stringify(res.body).length });
      }
    });
    const fanStatuses: number[] = [];
    const fanAcked: number[] = [];
    const fanLoop = (async () => {
      for (let i = 0; attacking; i++) {
        const res = await post(fan, { message: `fan ${i}` });
        fanStatuses.push(res.status);
        if (res.status === 200) fanAcked.push(i);
        // A real attacker would not wait; this one leaves the test's share of the isolate to the rest.
        else await new Promise((r) => setTimeout(r, 20));
      }
    })();

    // ---- ordinary traffic, two posts and one query at a time ----
    const ordinaryText = 'o'.repeat(ORDINARY_CHARS);
    const acked: number[] = [];
    const postStatuses: number[] = [];
    const queryStatuses: number[] = [];
    const posting = (async () => {
      for (const pair of chunk(range(1, ORDINARY_POSTS), 2)) {
        const answers = await Promise.all(pair.map((n) => post(hook, { message: `${n} ${ordinaryText}` })));
        for (const a of answers) {
          postStatuses.push(a.status);
          if (a.status === 200) acked.push(a.body.deliveries[0].seq);
        }
      }
    })();
    const querying = (async () => {
      for (let i = 0; i < 8; i++) queryStatuses.push((await query(smallQuery)).status);
    })();
    await Promise.all([posting, querying]);
    attacking = false;
    await Promise.all([...queryLoops, fanLoop]);

    // Ordinary traffic was answered.
    expect(postStatuses).toEqual(range(1, ORDINARY_POSTS).map(() => 200));
    expect(queryStatuses).toEqual(range(1, 8).map(() => 200));

    // Nothing acknowledged is lost: the history holds every ordinary post, and the acknowledging viewer
    // got each once, in order, with no gap.
    await viewer.untilSeq(Math.max(...acked));
    expect(viewer.closed).toBeUndefined();
    expect(viewer.seqs()).toEqual(range(1, Math.max(...acked)));
    const stored = await history(room.id, `?limit=${CHAT_LIMITS.historyMax}`);
    expect(stored.body.entities.map((m: { seq: number }) => m.seq)).toEqual(range(1, ORDINARY_POSTS));
    expect([...acked].sort((a, b) => a - b)).toEqual(range(1, ORDINARY_POSTS));

    // Slow viewers were closed as too slow once the room had sent them more than their budget.
    await waitUntil(() => slow.every((v) => v.closed !== undefined), 'slow viewers closed');
    for (const v of slow) expect(v.closed?.code).toBe(PROTOCOL.close.tooSlow);

    // Replay storms were held to the budget: no storm viewer was sent much more than a budget plus a page.
    const bound = CHAT_LIMITS.viewerBudgetBytes + 2 * bigText.length + 4 * CHAT_LIMITS.replayPageChars;
    for (const v of storms) {
      const received = v.raw.reduce((n, frame) => n + frame.length, 0);
      expect(received).toBeLessThanOrEqual(bound);
      expect(v.readyAt).toBeUndefined();
    }

    // Maximal queries: a bounded 200, a 413 asking to narrow the query, or a 429 while raw-path queries
    // fill this isolate's turns; never a 5xx.
    expect(maximal.length).toBeGreaterThan(0);
    for (const m of maximal) {
      expect([200, 413, 429]).toContain(m.status);
      expect(m.bytes).toBeLessThanOrEqual(ANALYTICS_LIMITS.maxAnswerBytes);
    }

    // The fan-out webhook: its bucket counts room deliveries (100 per post, the whole default burst), so
    // after the first post the rest wait (429); every acknowledged fan-out post is in all of its rooms.
    expect(fanStatuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(fanStatuses).toContain(429);
    for (const roomId of fanRooms) {
      const page = await history(roomId, `?limit=${CHAT_LIMITS.historyMax}`);
      expect(page.body.entities.map((m: { markdown: string }) => m.markdown)).toEqual(fanAcked.map((i) => `fan ${i}`));
    }

    for (const v of [viewer, ...slow, ...storms]) v.close();
  });
});

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
