/**
 * Load with faults against a real `wrangler dev`: 8 rooms × 4 viewers, 1,000 posts from concurrent
 * posters, while viewers drop and reconnect with `after=`, the dev server is restarted mid-run (every
 * room and gate object starts again from storage), and one webhook is over its rate limit.
 *
 * Every post carries an Idempotency-Key. An answer is *definite* when it says what happened: 200
 * (stored, with its seq), 429 and a 503 saying "nothing was stored" (absent). A post whose request
 * failed in flight (connection error, timeout, a 503 saying the room did not confirm, wrangler dev's
 * proxy's own 503, 409 while its key is still held) may or may not be stored, so it is retried with
 * the same key until a definite answer; once a post was uncertain only 200 counts as definite (a 429 then says nothing about the
 * earlier attempt). Assertions are on definite answers only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/chat/protocol';
import { Api, type Room, type Webhook } from './support/api';
import { startDevServer, type DevServer } from './support/dev-server';
import { RoomViewer } from './support/viewer';

const ROOMS = 8;
const VIEWERS_PER_ROOM = 4;
const POSTS = 1_000;
const POSTERS = 16;
/** Restart the dev server once this many posts have a definite answer. */
const RESTART_AFTER = 400;
/** Room 0's webhook: a small bucket, so a share of its posts are refused with 429. */
const SMALL_RATE_LIMIT = { burst: 20, perSecond: 2 };
const RUN_BUDGET_MS = 200_000;
const REQUEST_TIMEOUT_MS = 20_000;
const MAX_ATTEMPTS = 400;
/**
 * What wrangler 4.86's ProxyWorker (templates/startDevWorker/ProxyWorker.ts) answers a non-GET request
 * when its fetch to the Worker fails: text, not the Worker's ErrorBody. Only this exact answer is
 * taken as the proxy's; any other 503 must be the Worker's JSON.
 */
const WRANGLER_PROXY_503 = 'Your worker restarted mid-request. Please try sending the request again.';

type Outcome = { kind: 'stored'; seq: number; messageId: string } | { kind: 'limited' } | { kind: 'unavailable' };

interface Post {
  index: number;
  room: number;
  key: string;
  message: string;
  outcome?: Outcome;
  attempts: number;
  /** An attempt whose fate is unknown happened (connection error, timeout, unconfirmed 503, 409). */
  uncertain: boolean;
  answers: string[];
}

let server: DevServer;
let api: Api;
/** Stops whatever a failed run left going (viewers, loops) before the server goes. */
const cleanup: (() => void)[] = [];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  server = await startDevServer();
  api = new Api(server);
});

afterAll(async () => {
  for (const step of cleanup) step();
  await server?.dispose();
});

describe('load with faults', () => {
  it('stores every acknowledged post exactly once, in contiguous seq order, and delivers it to every viewer exactly once through drops, a restart and rate limiting', async () => {
    const deadline = Date.now() + RUN_BUDGET_MS;
    const rooms: Room[] = [];
    const hooks: Webhook[] = [];
    for (let r = 0; r < ROOMS; r++) {
      const room = await api.createRoom(`load ${r}`);
      rooms.push(room);
      hooks.push(await api.createWebhook(room.id, r === 0 ? SMALL_RATE_LIMIT : undefined));
    }
    expect(hooks[0]!.rateLimit).toEqual(SMALL_RATE_LIMIT);
    const viewerToken = await api.createToken(['chat:read']);
    const viewers = rooms.map((room) =>
      Array.from({ length: VIEWERS_PER_ROOM }, () => new RoomViewer(server.baseUrl, room.id, viewerToken, deadline)),
    );
    cleanup.push(() => viewers.flat().forEach((v) => v.stop()));
    await Promise.all(viewers.flat().map((v) => v.start()));

    const posts: Post[] = Array.from({ length: POSTS }, (_, index) => ({
      index,
      room: index % ROOMS,
      key: `load-${index}-${Math.random().toString(36).slice(2, 10)}`,
      message: `load post ${index} for room ${index % ROOMS}`,
      attempts: 0,
      uncertain: false,
      answers: [],
    }));

    let definite = 0;
    let restarted = false;
    let restarting: Promise<void> | null = null;
    const settledBeforeRestart: number[] = [];
    const statusCounts = new Map<string, number>();
    const count = (what: string) => statusCounts.set(what, (statusCounts.get(what) ?? 0) + 1);

    async function attempt(post: Post): Promise<Outcome | 'retry'> {
      post.attempts++;
      let res: Response;
      let text: string;
      try {
        res = await fetch(hooks[post.room]!.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Idempotency-Key': post.key },
          body: JSON.stringify({ message: post.message }),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        text = await res.text();
      } catch (err) {
        count('connection error');
        post.answers.push(`error ${(err as Error).name}`);
        post.uncertain = true;
        await sleep(200);
        return 'retry';
      }
      count(String(res.status));
      post.answers.push(String(res.status));
      if (res.status === 200) {
        const body = JSON.parse(text) as { deliveries: { roomId: string; messageId: string; seq: number | null }[] };
        expect(body.deliveries).toHaveLength(1);
        const [delivery] = body.deliveries;
        expect(delivery!.roomId).toBe(rooms[post.room]!.id);
        expect(delivery!.seq).not.toBeNull();
        return { kind: 'stored', seq: delivery!.seq!, messageId: delivery!.messageId };
      }
      if (res.status === 429) {
        expect(Number(res.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
        if (!post.uncertain) return { kind: 'limited' };
        await sleep(1_000);
        return 'retry';
      }
      if (res.status === 503 && text.startsWith(WRANGLER_PROXY_503)) {
        // wrangler dev's front proxy, not the Worker: its connection to the Worker's workerd failed
        // with this request on it (cloudflare/workers-sdk#14641), so the Worker may have stored it.
        count('503 from wrangler dev proxy');
        post.uncertain = true;
        await sleep(200);
        return 'retry';
      }
      if (res.status === 503) {
        const body = JSON.parse(text) as { code: string; message: string };
        expect(body.code).toBe('service.unavailable');
        if (!post.uncertain && /nothing was stored/.test(body.message)) return { kind: 'unavailable' };
        post.uncertain = true;
        await sleep(500);
        return 'retry';
      }
      if (res.status === 409) {
        // The key is held by an attempt cut off by the restart (held up to 15 s, CHAT_LIMITS.idempotencyClaimMs), then retried as uncertain.
        post.uncertain = true;
        await sleep(1_000);
        return 'retry';
      }
      throw new Error(`post ${post.index} got an unexpected ${res.status}: ${text}\n${server.logTail(30)}`);
    }

    let abandoned = false;
    cleanup.push(() => (abandoned = true));
    async function settle(post: Post): Promise<void> {
      while (post.attempts < MAX_ATTEMPTS && Date.now() < deadline && !abandoned) {
        if (restarting) await restarting;
        const outcome = await attempt(post);
        if (outcome === 'retry') continue;
        post.outcome = outcome;
        definite++;
        return;
      }
      throw new Error(`post ${post.index} got no definite answer: ${post.answers.join(', ')}`);
    }

    // Chaos (a): every 150 ms one viewer drops its connection and reconnects with after=.
    let chaos = true;
    cleanup.push(() => (chaos = false));
    const dropper = (async () => {
      for (let i = 0; chaos && Date.now() < deadline; i++) {
        await sleep(150);
        viewers[i % ROOMS]![(i * 7) % VIEWERS_PER_ROOM]!.drop();
      }
    })();

    let next = 0;
    const poster = async () => {
      while (next < POSTS && !abandoned) {
        const post = posts[next++]!;
        await settle(post);
        // Fault (b): once RESTART_AFTER posts are settled, restart the server while the others are in flight.
        if (!restarted && definite >= RESTART_AFTER) {
          restarted = true;
          settledBeforeRestart.push(definite);
          // Posters do not wait: requests in flight meet the stop.
          restarting = server.restart().finally(() => (restarting = null));
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: POSTERS }, poster));
      if (restarting) await restarting;
    } catch (err) {
      abandoned = true;
      throw err;
    } finally {
      chaos = false;
      await dropper;
    }

    expect(restarted).toBe(true);
    expect(posts.every((p) => p.outcome !== undefined)).toBe(true);
    const stored = posts.filter((p) => p.outcome?.kind === 'stored');
    const limited = posts.filter((p) => p.outcome?.kind === 'limited');
    const unavailable = posts.filter((p) => p.outcome?.kind === 'unavailable');
    const uncertain = posts.filter((p) => p.uncertain);
    console.info(
      `load: ${stored.length} stored, ${limited.length} refused 429, ${unavailable.length} refused 503, ` +
        `${uncertain.length} retried after an uncertain attempt; answers ${JSON.stringify(Object.fromEntries(statusCounts))}; ` +
        `restart after ${settledBeforeRestart[0]} definite answers; viewer connections ${viewers.flat().reduce((n, v) => n + v.connections, 0)}, ` +
        `drops ${viewers.flat().reduce((n, v) => n + v.drops, 0)}`,
    );
    // (c) happened, and only where the small limit is.
    expect(limited.length).toBeGreaterThan(0);
    expect(limited.every((p) => p.room === 0)).toBe(true);

    // D1, per room, through the history API (which flushes the room first): exactly the stored posts.
    const historyByRoom: ChatMessage[][] = [];
    for (let r = 0; r < ROOMS; r++) {
      const history = await api.history(rooms[r]!.id);
      historyByRoom.push(history);
      const mine = stored.filter((p) => p.room === r).sort((a, b) => seqOf(a) - seqOf(b));
      // seq contiguous from 1, no duplicates
      expect(history.map((m) => m.seq)).toEqual(Array.from({ length: history.length }, (_, i) => i + 1));
      // exactly the 2xx posts, each once, at the seq and with the id its answer named
      expect(history.map((m) => [m.seq, m.id, m.markdown])).toEqual(
        mine.map((p) => [seqOf(p), (p.outcome as { messageId: string }).messageId, p.message]),
      );
    }
    // Refused posts are nowhere.
    const everyText = new Set(historyByRoom.flat().map((m) => m.markdown));
    for (const post of [...limited, ...unavailable])
      expect(everyText.has(post.message), `post ${post.index} was refused but stored`).toBe(false);

    // Every viewer ends with the whole room, each message once, in seq order, whatever its drops.
    for (let r = 0; r < ROOMS; r++) {
      const last = historyByRoom[r]!.length;
      for (const viewer of viewers[r]!) {
        while (viewer.lastSeq < last && Date.now() < deadline + 30_000) await sleep(100);
        expect(viewer.outOfOrder).toEqual([]);
        expect(viewer.received.map((m) => m.seq)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
        expect(viewer.received.map((m) => m.id)).toEqual(historyByRoom[r]!.map((m) => m.id));
        // The restart closed every connection; later ones asked for what they had missed.
        expect(viewer.connections).toBeGreaterThanOrEqual(2);
        expect(viewer.afters[0]).toBe(0);
        expect(viewer.afters.slice(1).some((after) => after > 0)).toBe(true);
      }
    }
    for (const viewer of viewers.flat()) viewer.stop();

    // And once more straight from D1's file, with the server stopped: counts and seq ranges per room.
    await server.stop();
    const rows = server.d1(
      'SELECT room_id AS roomId, COUNT(*) AS n, COUNT(DISTINCT seq) AS seqs, MIN(seq) AS first, MAX(seq) AS last, ' +
        'COUNT(DISTINCT markdown) AS texts FROM messages GROUP BY room_id',
    ) as { roomId: string; n: number; seqs: number; first: number; last: number; texts: number }[];
    const expected = rooms
      .map((room, r) => {
        const n = stored.filter((p) => p.room === r).length;
        return { roomId: room.id, n, seqs: n, first: 1, last: n, texts: n };
      })
      .sort((a, b) => a.roomId.localeCompare(b.roomId));
    expect([...rows].sort((a, b) => a.roomId.localeCompare(b.roomId))).toEqual(expected);
  });
});

function seqOf(post: Post): number {
  if (post.outcome?.kind !== 'stored') throw new Error(`post ${post.index} was not stored`);
  return post.outcome.seq;
}
