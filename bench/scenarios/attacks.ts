/**
 * Scenario 4 (issue 22): ordinary traffic while an attacker holds every lever at once, against a
 * quiet run of the same traffic on the same server.
 *
 * Ordinary traffic, the same in both phases: one webhook posting 5 messages/s to a room watched by
 * one acknowledging viewer (post latency, and post start → receipt at the viewer), and one small
 * query at a time (1 day, PT1H, by queue).
 *
 * The attack (second phase only):
 * - slow viewers (`slow`): 40 sockets on the ordinary room that never read (their TCP socket is
 *   paused) and never acknowledge;
 * - a noisy webhook (`noisy`): messages of 39,990 characters into the ordinary room at its default
 *   rate limit (10/s), which is what fills the slow viewers' queues;
 * - replay storms (`tails`, `afters`): 50 sockets asking `tail=1000` of a room of large messages and 10 asking `after=0`,
 *   reconnecting as soon as they are closed, never acknowledging;
 * - maximum queries (`queries`): 3 loops of the query the attacker used (13 days at PT1M, 8 groupBy dimensions,
 *   100 `or` predicates, 10 views);
 * - a fan-out webhook (`fanout`) routed to 100 rooms at the default rate limit: a burst of 100 posts, then 10/s.
 *
 * Reported: ordinary p50/p99 in each phase and their ratio (attack / quiet), the Worker's workerd
 * resident memory growth (peak during the phase − before it), how the attacker was answered, and
 * whether every acknowledged ordinary post is in the history and reached the viewer in order.
 */
import { rmSync } from 'node:fs';
import WebSocket from 'ws';
import { AckCounter, decodeServerFrame } from '../../src/chat/protocol';
import { api, isUp, postText } from '../lib/http';
import { HeapSampler, inspectorTargets } from '../profile/inspector';
import { ingestRecords, prepareIngestBodies } from '../lib/ingest-client';
import { memory } from '../lib/proc';
import { progress, type Results } from '../lib/results';
import { records, type SimSpec } from '../lib/sim';
import { percentile, sleep } from '../lib/stats';
import { storeDir } from '../lib/store';
import { errorLines, migrate, startDev, type DevServer } from '../lib/wrangler';

export const LEVERS = ['slow', 'noisy', 'tails', 'afters', 'queries', 'fanout'] as const;
export type Lever = (typeof LEVERS)[number];

/** `--levers a,b`: the levers named; none given: all of them. */
export function parseLevers(list: string | undefined): Set<Lever> {
  if (list === undefined) return new Set(LEVERS);
  const out = new Set<Lever>();
  for (const name of list.split(',').map((s) => s.trim())) {
    if (!(LEVERS as readonly string[]).includes(name)) throw new Error(`--levers: unknown lever "${name}" (${LEVERS.join(', ')})`);
    out.add(name as Lever);
  }
  return out;
}

export interface AttackOptions {
  results: Results;
  token: string;
  workerConfig: string[];
  quick: boolean;
  detail: Record<string, unknown>;
  levers: Set<Lever>;
}

const PORT = 8832;
const INSPECTOR = 8833;
const SCENARIO = '4 attacks';
const QUERY_PATH = '/api/v2/analytics/conversations/aggregates/query';
const ORDINARY_RATE = 5;
const FANOUT_ROOMS = 100;

interface Hook {
  id: string;
  url: string;
}

interface Sample {
  ms: number;
  status: number;
}

interface PhaseReport {
  posts: Sample[];
  /** Post start → receipt at the acknowledging viewer, ms. */
  deliveries: number[];
  queries: Sample[];
  /** Seqs of the acknowledged ordinary posts. */
  acked: number[];
  rssBeforeMiB: number;
  rssPeakMiB: number;
  /** The Worker isolate's V8 heap in use: after a collection before the phase, and its peak during it. */
  heapBeforeMiB: number;
  heapPeakMiB: number;
  attacker: Record<string, unknown>;
}

const mib = (bytes: number) => bytes / 1024 ** 2;

// ---------------------------------------------------------------------------------------------
// Viewers

/** A viewer that reads and acknowledges as the protocol asks; resolves `seen` with every seq it got. */
class GoodViewer {
  readonly received = new Map<number, number>();
  readonly order: number[] = [];
  closed?: number;
  private ws: WebSocket;

  constructor(url: string, headers: Record<string, string>) {
    this.ws = new WebSocket(url, { perMessageDeflate: false, headers });
    const acks = new AckCounter();
    this.ws.on('message', (data: Buffer) => {
      const text = data.toString();
      const ack = acks.frame(text, data.length);
      if (ack !== undefined) this.ws.send(ack);
      const frame = decodeServerFrame(text);
      if (!frame) return;
      if (frame.type === 'messages') {
        const at = performance.now();
        for (const m of frame.messages) {
          this.received.set(m.seq, at);
          this.order.push(m.seq);
        }
      }
    });
    this.ws.on('close', (code) => {
      this.closed = code;
    });
  }

  opened(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** Attacker sockets: never acknowledge; `paused` ones never even read their TCP socket. */
class BadViewers {
  private readonly sockets = new Set<WebSocket>();
  private stopped = false;
  private readonly rawSockets: import('node:net').Socket[] = [];
  readonly closeCodes = new Map<number, number>();
  opened = 0;
  refused = 0;

  constructor(
    private readonly url: () => string,
    private readonly headers: Record<string, string>,
    private readonly count: number,
    private readonly paused: boolean,
    private readonly reconnect: boolean,
  ) {}

  start(): void {
    for (let i = 0; i < this.count; i++) this.open();
  }

  private open(): void {
    if (this.stopped) return;
    const ws = new WebSocket(this.url(), { perMessageDeflate: false, headers: this.headers });
    this.sockets.add(ws);
    ws.on('upgrade', (res) => {
      this.opened++;
      if (this.paused) {
        res.socket.pause();
        this.rawSockets.push(res.socket);
        res.socket.on('error', () => {});
      }
    });
    ws.on('unexpected-response', () => {
      this.refused++;
    });
    ws.on('error', () => {});
    ws.on('close', (code) => {
      this.sockets.delete(ws);
      this.closeCodes.set(code, (this.closeCodes.get(code) ?? 0) + 1);
      if (this.reconnect) setTimeout(() => this.open(), 200);
    });
  }

  /**
   * Reads what the server sent (paused sockets are resumed, so a close frame the room sent them
   * arrives), then cuts every socket still open. `closeCodes` then holds how the server closed them.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.paused ? this.rawSockets : []) s.resume();
    await sleep(2_000);
    for (const ws of this.sockets) {
      // `ws` reports a close only when the TCP connection ends; a close frame received is already in
      // its state (readyState CLOSING, the code kept in `_closeCode`).
      const code = (ws as unknown as { _closeCode?: number })._closeCode;
      if (ws.readyState === WebSocket.CLOSING && code !== undefined) this.closeCodes.set(code, (this.closeCodes.get(code) ?? 0) + 1);
      ws.terminate();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Queries

function smallQuery(spec: SimSpec): unknown {
  const end = Date.parse(spec.end);
  const day = 86_400_000;
  return {
    interval: `${new Date(end - 2 * day).toISOString()}/${new Date(end - day).toISOString()}`,
    granularity: 'PT1H',
    groupBy: ['queueId'],
    metrics: ['nOffered', 'tHandle'],
  };
}

/** The attacker's query from issue 22: within every documented limit, as large as they allow. */
function maximalQuery(spec: SimSpec): unknown {
  const end = Date.parse(spec.end);
  const day = 86_400_000;
  return {
    interval: `${new Date(end - 13 * day).toISOString()}/${new Date(end).toISOString()}`,
    granularity: 'PT1M',
    groupBy: ['queueId', 'userId', 'mediaType', 'direction', 'wrapUpCode', 'ani', 'dnis', 'disconnectType'],
    filter: {
      type: 'or',
      predicates: Array.from({ length: 100 }, (_, i) =>
        i === 0 ? { dimension: 'mediaType', value: 'voice' } : { dimension: 'queueId', value: `q-${i}` },
      ),
    },
    views: Array.from({ length: 10 }, (_, i) => ({
      target: 'tHandle',
      name: `v${i}`,
      function: 'rangeBound',
      range: { lt: (i + 1) * 60_000 },
    })),
    metrics: ['nOffered', 'tHandle', 'tTalk', 'tAcw', 'tWait', 'tAbandon'],
  };
}

/** The attacker's post: its status, or 0 when the connection failed (counted, never thrown: the loops run on). */
function attackerPost(url: string, body: string): Promise<number> {
  return postText(url, body).then(
    (r) => r.status,
    () => 0,
  );
}

async function timedQuery(base: string, token: string, body: string): Promise<Sample & { bytes: number; text: string }> {
  const t0 = performance.now();
  const res = await fetch(base + QUERY_PATH, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body,
  });
  const text = await res.text();
  return { ms: performance.now() - t0, status: res.status, bytes: Buffer.byteLength(text), text: text.slice(0, 300) };
}

// ---------------------------------------------------------------------------------------------
// Set-up

async function makeHook(base: string, token: string, body: Record<string, unknown>): Promise<Hook> {
  const hook = await api<{ id: string; url: string }>(base, token, 'POST', '/api/v1/webhooks', body);
  return { id: hook.id, url: base + new URL(hook.url).pathname };
}

async function setUp(base: string, token: string, quick: boolean) {
  const ordinaryRoom = await api<{ id: string }>(base, token, 'POST', '/api/v1/rooms', { name: 'ordinary' });
  const ordinary = await makeHook(base, token, {
    name: 'ordinary',
    kind: 'generic',
    roomId: ordinaryRoom.id,
    rateLimit: { burst: 1_000, perSecond: 1_000 },
  });
  // The attacker's noisy webhook into the same room, at the default rate limit.
  const noisy = await makeHook(base, token, { name: 'noisy', kind: 'generic', roomId: ordinaryRoom.id });
  // A room of large messages for the replay storms.
  const bigRoom = await api<{ id: string }>(base, token, 'POST', '/api/v1/rooms', { name: 'big' });
  const filler = await makeHook(base, token, {
    name: 'filler',
    kind: 'generic',
    roomId: bigRoom.id,
    rateLimit: { burst: 100_000, perSecond: 100_000 },
  });
  const bigMessages = quick ? 300 : 1_200;
  const text = `${'lorem ipsum dolor sit amet '.repeat(1_480)}`.slice(0, 39_990);
  const body = JSON.stringify({ message: text });
  for (let i = 0; i < bigMessages; i += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, bigMessages - i) }, async () => {
        const r = await postText(filler.url, body);
        if (r.status !== 200) throw new Error(`filling the big room: ${r.status} ${r.text.slice(0, 200)}`);
      }),
    );
  }
  // The fan-out webhook: its own room plus 99 more through mappings (10 per mapping), default rate limit.
  const fanRooms: string[] = [];
  for (let i = 0; i < FANOUT_ROOMS; i++)
    fanRooms.push((await api<{ id: string }>(base, token, 'POST', '/api/v1/rooms', { name: `fan ${i}` })).id);
  const mappings = [];
  for (let i = 1; i < FANOUT_ROOMS; i += 10) {
    mappings.push({ field: 'message', match: 'contains', value: 'fan', roomIds: fanRooms.slice(i, i + 10) });
  }
  const fanout = await makeHook(base, token, { name: 'fan-out', kind: 'generic', roomId: fanRooms[0], mappings });
  return { ordinaryRoom: ordinaryRoom.id, ordinary, noisy, bigRoom: bigRoom.id, bigMessages, fanout };
}

// ---------------------------------------------------------------------------------------------
// One phase of ordinary traffic (with or without the attack)

async function phase(
  dev: DevServer,
  token: string,
  spec: SimSpec,
  ctx: Awaited<ReturnType<typeof setUp>>,
  seconds: number,
  attack: boolean,
  label: string,
  levers: Set<Lever>,
  /** Samples the isolate's heap during the phase: its latencies then count for nothing (the inspector slows it). */
  heap?: HeapSampler,
): Promise<PhaseReport> {
  const base = dev.url;
  const wsBase = base.replace(/^http/, 'ws');
  const auth = { Authorization: `Bearer ${token}` };
  const viewer = new GoodViewer(`${wsBase}/api/v1/rooms/${ctx.ordinaryRoom}/ws`, auth);
  await viewer.opened();
  await sleep(500);
  const heapBefore = heap ? await heap.baseline() : NaN;
  const rssBefore = memory(dev.workerPid)?.rss ?? NaN;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, memory(dev.workerPid)?.rss ?? NaN);
  }, 100);

  // The attacker's levers.
  const attacker: Record<string, unknown> = {};
  const stops: (() => void | Promise<void>)[] = [];
  const loops: Promise<void>[] = [];
  let running = true;
  const count = (xs: number[]) => Object.fromEntries([...new Set(xs)].map((s) => [s, xs.filter((x) => x === s).length]));
  const viewers = (lever: Lever, name: string, v: BadViewers) => {
    if (!levers.has(lever)) return;
    v.start();
    stops.push(async () => {
      await v.stop();
      attacker[name] = { opened: v.opened, refused: v.refused, closedByServer: Object.fromEntries(v.closeCodes) };
    });
  };
  /** A loop of the attacker's, run until the phase ends; `report` describes it afterwards. */
  const loop = (lever: Lever, name: string, body: () => Promise<void>, report: () => unknown) => {
    if (!levers.has(lever)) return;
    loops.push(body());
    stops.push(() => {
      attacker[name] = report();
    });
  };
  if (attack) {
    viewers('slow', 'slowViewers', new BadViewers(() => `${wsBase}/api/v1/rooms/${ctx.ordinaryRoom}/ws`, auth, 40, true, false));
    viewers('tails', 'tailStorm', new BadViewers(() => `${wsBase}/api/v1/rooms/${ctx.bigRoom}/ws?tail=1000`, auth, 50, false, true));
    viewers('afters', 'afterStorm', new BadViewers(() => `${wsBase}/api/v1/rooms/${ctx.bigRoom}/ws?after=0`, auth, 10, false, true));
    const maxQueries: (Sample & { bytes: number })[] = [];
    const maxBody = JSON.stringify(maximalQuery(spec));
    let maxAnswer = '';
    for (let i = 0; i < 3; i++) {
      loop(
        'queries',
        'maximalQueries',
        async () => {
          while (running) {
            const r = await timedQuery(base, token, maxBody).catch((err: Error) => ({ ms: NaN, status: 0, bytes: 0, text: err.message }));
            maxQueries.push(r);
            maxAnswer = `${r.status} ${r.bytes} bytes: ${r.text.slice(0, 200)}`;
          }
        },
        () => ({
          runs: maxQueries.length,
          statuses: count(maxQueries.map((q) => q.status)),
          p50ms: percentile(
            maxQueries.map((q) => q.ms),
            50,
          ),
          largestAnswerBytes: Math.max(0, ...maxQueries.map((q) => q.bytes)),
          lastAnswer: maxAnswer,
        }),
      );
    }
    const noisy: number[] = [];
    loop(
      'noisy',
      'noisyPosts',
      async () => {
        const body = JSON.stringify({ message: 'n'.repeat(39_990) });
        while (running) {
          const t = performance.now();
          noisy.push(await attackerPost(ctx.noisy.url, body));
          await sleep(Math.max(0, 100 - (performance.now() - t)));
        }
      },
      () => count(noisy),
    );
    const fan: number[] = [];
    loop(
      'fanout',
      'fanOutPosts',
      async () => {
        const body = JSON.stringify({ message: 'fan out to every room' });
        fan.push(...(await Promise.all(Array.from({ length: 100 }, () => attackerPost(ctx.fanout.url, body)))));
        while (running) {
          const t = performance.now();
          fan.push(await attackerPost(ctx.fanout.url, body));
          await sleep(Math.max(0, 100 - (performance.now() - t)));
        }
      },
      () => count(fan),
    );
    await sleep(1_000);
  }

  // Ordinary traffic.
  const posts: (Sample & { t0: number; seq?: number })[] = [];
  const queries: Sample[] = [];
  const started = performance.now();
  const queryLoop = (async () => {
    const body = JSON.stringify(smallQuery(spec));
    while (performance.now() - started < seconds * 1000) {
      const r = await timedQuery(base, token, body).catch((err: Error) => ({ ms: NaN, status: 0, bytes: 0, text: err.message }));
      queries.push({ ms: r.ms, status: r.status });
      await sleep(250);
    }
  })();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; performance.now() - started < seconds * 1000; i++) {
    const due = started + (i * 1000) / ORDINARY_RATE;
    await sleep(Math.max(0, due - performance.now()));
    inFlight.push(
      (async () => {
        const t0 = performance.now();
        const r = await postText(ctx.ordinary.url, JSON.stringify({ message: `ordinary ${label} ${i}` })).catch((err: Error) => ({
          status: 0,
          text: err.message,
        }));
        const sample: Sample & { t0: number; seq?: number } = { ms: performance.now() - t0, status: r.status, t0 };
        if (r.status === 200) sample.seq = (JSON.parse(r.text) as { seq?: number; deliveries?: { seq: number }[] }).deliveries?.[0]?.seq;
        posts.push(sample);
      })(),
    );
  }
  await Promise.all(inFlight);
  await queryLoop;
  running = false;
  await Promise.all(stops.map((stop) => stop()));
  await Promise.all(loops);
  // Every acknowledged post reaches the acknowledging viewer, in order, once.
  await sleep(2_000);
  clearInterval(sampler);
  const heapPeak = heap ? heap.stop() : NaN;
  viewer.close();
  const deliveries: number[] = [];
  let missing = 0;
  for (const p of posts) {
    if (p.seq === undefined) continue;
    const at = viewer.received.get(p.seq);
    if (at === undefined) missing++;
    else deliveries.push(at - p.t0);
  }
  const ordered = viewer.order.every((s, i) => i === 0 || s === viewer.order[i - 1]! + 1);
  attacker.ordinaryViewer = { missing, ordered, closed: viewer.closed ?? null };
  progress(
    `${SCENARIO}: ${label}: ${posts.length} posts (${posts.filter((p) => p.status !== 200).length} not 200), ${queries.length} queries, viewer missing ${missing}, in order ${ordered}`,
  );
  return {
    posts: posts.map(({ ms, status }) => ({ ms, status })),
    deliveries,
    queries,
    acked: posts.flatMap((p) => (p.seq === undefined ? [] : [p.seq])),
    heapBeforeMiB: mib(heapBefore),
    heapPeakMiB: mib(heapPeak),
    rssBeforeMiB: mib(rssBefore),
    rssPeakMiB: mib(rssPeak),
    attacker,
  };
}

export async function attackScenario(o: AttackOptions, spec: SimSpec): Promise<void> {
  const persistTo = storeDir('attacks');
  rmSync(persistTo, { recursive: true, force: true });
  await migrate(persistTo);
  let dev: DevServer | undefined;
  try {
    dev = await startDev({
      config: o.workerConfig,
      port: PORT,
      inspectorPort: INSPECTOR,
      persistTo,
      vars: { ADMIN_TOKEN: o.token },
      ready: (b) => isUp(b, o.token),
    });
    const base = dev.url;
    progress(`${SCENARIO}: ingesting ${spec.conversations.toLocaleString('en-US')} conversations`);
    const prepared = prepareIngestBodies(records(spec), { batchSize: 1_000, total: spec.conversations, label: SCENARIO });
    await ingestRecords(`${base}/api/v2/analytics/conversations/details/ingest`, o.token, prepared, {
      total: spec.conversations,
      inFlight: 2,
      label: SCENARIO,
    });
    progress(`${SCENARIO}: rooms, webhooks and a room of large messages`);
    const ctx = await setUp(base, o.token, o.quick);
    const seconds = o.quick ? 10 : 30;
    // The heap first, sampled through the inspector (opened at once: a later session did not open once),
    // then the session is closed and the latencies are taken: with an inspector attached the isolate ran
    // several times slower.
    const heap = await HeapSampler.open((await inspectorTargets(dev.workerPid, INSPECTOR)).get('worker')!);
    const quietHeap = await phase(dev, o.token, spec, ctx, seconds / 2, false, 'quiet, heap sampled', o.levers, heap);
    const attackedHeap = await phase(dev, o.token, spec, ctx, seconds / 2, true, 'attack, heap sampled', o.levers, heap);
    heap.close();
    const quiet = await phase(dev, o.token, spec, ctx, seconds, false, 'quiet', o.levers);
    progress(`${SCENARIO}: the attack: ${[...o.levers].join(', ')}`);
    const attacked = await phase(dev, o.token, spec, ctx, seconds, true, 'attack', o.levers);
    quiet.heapBeforeMiB = quietHeap.heapBeforeMiB;
    quiet.heapPeakMiB = quietHeap.heapPeakMiB;
    attacked.heapBeforeMiB = attackedHeap.heapBeforeMiB;
    attacked.heapPeakMiB = attackedHeap.heapPeakMiB;
    const lost = await missingFromHistory(base, o.token, ctx.ordinaryRoom, [
      ...quiet.acked,
      ...attacked.acked,
      ...quietHeap.acked,
      ...attackedHeap.acked,
    ]);
    report(o, quiet, attacked, lost);
    const errors = errorLines(dev.log());
    o.detail.attacks = { quiet, attacked, errorLines: errors.slice(0, 50) };
  } finally {
    await dev?.stop();
  }
}

/** Acknowledged seqs that the room's history lacks (it must be none). */
async function missingFromHistory(base: string, token: string, roomId: string, acked: number[]): Promise<number> {
  const stored = new Set<number>();
  for (let after = 0; ; ) {
    const page = await api<{ entities: { seq: number }[]; nextAfter?: number }>(
      base,
      token,
      'GET',
      `/api/v1/rooms/${roomId}/messages?after=${after}&limit=500`,
    );
    for (const m of page.entities) stored.add(m.seq);
    if (page.nextAfter === undefined) break;
    after = page.nextAfter;
  }
  return acked.filter((seq) => !stored.has(seq)).length;
}

function report(o: AttackOptions, quiet: PhaseReport, attacked: PhaseReport, lost: number): void {
  const ms = (s: Sample[]) => s.filter((x) => x.status === 200).map((x) => x.ms);
  const rows: [string, number[], number[]][] = [
    ['ordinary post', ms(quiet.posts), ms(attacked.posts)],
    ['ordinary post → viewer', quiet.deliveries, attacked.deliveries],
    ['ordinary query', ms(quiet.queries), ms(attacked.queries)],
  ];
  for (const [what, q, a] of rows) {
    for (const p of [50, 99]) {
      o.results.add({
        scenario: SCENARIO,
        metric: `${what} p${p} under attack (peer: the same, quiet)`,
        value: percentile(a, p),
        unit: 'ms',
        peer: 'quiet',
        peerValue: percentile(q, p),
      });
    }
  }
  o.results.add({
    scenario: SCENARIO,
    metric: 'Worker isolate V8 heap peak over its post-GC start, under attack (peer: quiet phase)',
    value: attacked.heapPeakMiB - attacked.heapBeforeMiB,
    unit: 'MiB',
    peer: 'quiet',
    peerValue: quiet.heapPeakMiB - quiet.heapBeforeMiB,
  });
  o.results.add({
    scenario: SCENARIO,
    metric: 'workerd memory growth under attack (peer: quiet phase)',
    value: attacked.rssPeakMiB - attacked.rssBeforeMiB,
    unit: 'MiB',
    peer: 'quiet',
    peerValue: quiet.rssPeakMiB - quiet.rssBeforeMiB,
  });
  const failed = (s: Sample[]) => s.filter((x) => x.status !== 200).length;
  o.results.add({
    scenario: SCENARIO,
    metric: 'ordinary posts and queries not answered 200 under attack',
    value: failed(attacked.posts) + failed(attacked.queries),
    unit: '',
  });
  o.results.add({ scenario: SCENARIO, metric: 'acknowledged ordinary posts missing from history', value: lost, unit: '' });
  progress(`${SCENARIO}: attacker answered ${JSON.stringify(attacked.attacker)}`);
}
