/**
 * Scenario 3 of issue 4: webhook throughput and fan-out under `wrangler dev`.
 * - One room, 100 WebSocket viewers, 16 concurrent posters for N seconds (rate limit raised by
 *   PATCH): accepted posts/s; every viewer must get every accepted message once, in seq order.
 *   Run through wrangler's front port, and again straight to workerd's own port (a second room
 *   whose viewers connect there too).
 * - Ceiling peer in the same run: a Worker answering a constant (bench/ceiling-worker), under its
 *   own `wrangler dev`, through the front port and straight to its workerd, timed in slices that
 *   alternate with Switchboard's (the machine's speed drifts between minutes).
 * - Steady 200 posts/s: time from POST start to receipt at each of the 100 viewers.
 * - 1, 5, 10, 25, 50 rooms × 2 viewers: throughput as rooms grow, with the CPU split; 16 posters in
 *   all, then 4 posters per room.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { nowMs, type ViewerCommand, type ViewerEvent, type ViewerReport, type ViewerSpec } from '../chat/protocol';
import { renderMarkdown } from '../../src/chat/markdown';
import { encodeMessageFrames } from '../../src/chat/protocol';
import { api, isUp, postText } from '../lib/http';
import { CpuMeter } from '../lib/proc';
import { progress, type Results } from '../lib/results';
import { storeDir, storeKind } from '../lib/store';
import { percentile, sleep } from '../lib/stats';
import { errorLines, migrate, ROOT, startDev, type DevServer } from '../lib/wrangler';

export interface ChatOptions {
  results: Results;
  token: string;
  workerConfig: string[];
  quick: boolean;
  throughputSeconds: number;
  detail: Record<string, unknown>;
}

const CHAT_PORT = 8821;
const CHAT_INSPECTOR = 8828;
const CEILING_PORT = 8822;
const CEILING_INSPECTOR = 8827;
/** Switchboard again, with its local storage on disk (the comparison at the end). */
const DISK_PORT = 8823;
const DISK_INSPECTOR = 8826;
const POSTERS = 16;
const VIEWERS = 100;
/** The throughput phases alternate this many slices of the ceiling Worker and of Switchboard. */
const THROUGHPUT_SLICES = 4;
const STEADY_RATE = 200;
/** The fan-out floor's rooms (bench/ceiling-worker), front port and straight to workerd. */
const FLOOR_FRONT = 'floor-front';
const FLOOR_DIRECT = 'floor-direct';
const ROOM_STEPS = [1, 5, 10, 25, 50];
const POSTERS_PER_ROOM = 4;

export interface Room {
  id: string;
  /** Public: what messages carry. */
  webhookId: string;
  /** The path of the webhook's URL (its admin view's `url`): what posts. */
  hookPath: string;
}

export interface PostOutcome {
  t0: number;
  t1: number;
  status: number;
  seq?: number;
  room?: string;
  /** Anything but a 200: the answer's body (its start), or the client's error. */
  error?: string;
}

// ---------------------------------------------------------------------------------------------
// Viewers child process

export class Viewers {
  private readonly child: ChildProcess;
  private waiters: ((e: ViewerEvent) => void)[] = [];

  constructor() {
    this.child = fork(path.join(ROOT, 'bench', 'chat', 'viewers.ts'), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (m) => {
      const e = m as ViewerEvent;
      const w = this.waiters.shift();
      if (w) w(e);
    });
  }

  private next(): Promise<ViewerEvent> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async started(): Promise<void> {
    const e = await this.next();
    if (e.type !== 'started') throw new Error(`viewers: ${JSON.stringify(e)}`);
  }

  async command<T extends ViewerEvent['type']>(cmd: ViewerCommand, expect: T): Promise<Extract<ViewerEvent, { type: T }>> {
    const answer = this.next();
    this.child.send(cmd);
    const e = await answer;
    if (e.type !== expect) throw new Error(`viewers answered ${JSON.stringify(e).slice(0, 500)} to ${cmd.type}`);
    return e as Extract<ViewerEvent, { type: T }>;
  }

  get pid(): number {
    return this.child.pid!;
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill();
  }
}

// ---------------------------------------------------------------------------------------------
// Posting

function messageBody(n: number): string {
  return JSON.stringify({ message: `**Build #${n} passed** on \`main\` — [details](https://ci.example/builds/${n})`, metadata: 'bench' });
}

async function postOnce(url: string, n: number, room?: string): Promise<PostOutcome> {
  const t0 = nowMs();
  try {
    const { status, text } = await postText(url, messageBody(n));
    const t1 = nowMs();
    if (status !== 200) return { t0, t1, status, room, error: text.slice(0, 300) };
    const seq = (JSON.parse(text) as { deliveries?: { seq: number; roomId: string }[] }).deliveries?.[0]?.seq;
    return { t0, t1, status, seq, room };
  } catch (err) {
    return { t0, t1: nowMs(), status: 0, room, error: String(err) };
  }
}

/** `posters` closed loops for `seconds`, cycling over `urls`. */
async function closedLoop(
  urls: { url: string; room?: string }[],
  seconds: number,
  posters = POSTERS,
): Promise<{ outcomes: PostOutcome[]; seconds: number }> {
  const outcomes: PostOutcome[] = [];
  const started = nowMs();
  const until = started + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: posters }, async () => {
      while (nowMs() < until) {
        const target = urls[n % urls.length]!;
        outcomes.push(await postOnce(target.url, n++, target.room));
      }
    }),
  );
  return { outcomes, seconds: (nowMs() - started) / 1000 };
}

/** Open loop: one POST every 1000/rate ms, whatever the answers take. */
export async function openLoop(url: string, rate: number, seconds: number, room: string): Promise<PostOutcome[]> {
  const interval = 1000 / rate;
  const total = Math.round(rate * seconds);
  const start = nowMs() + 20;
  const pending: Promise<PostOutcome>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - nowMs();
    if (wait > 1) await sleep(wait);
    pending.push(postOnce(url, 1_000_000 + i, room));
  }
  return Promise.all(pending);
}

// ---------------------------------------------------------------------------------------------
// Checking deliveries

interface DeliveryCheck {
  viewers: number;
  accepted: number;
  /** Viewers that got exactly the accepted seqs, each once, ascending. */
  perfect: number;
  missing: number;
  duplicates: number;
  outOfOrder: number;
  unexpected: number;
}

function checkDeliveries(reports: ViewerReport[], acceptedByRoom: Map<string, number[]>): DeliveryCheck {
  const check: DeliveryCheck = {
    viewers: reports.length,
    accepted: 0,
    perfect: 0,
    missing: 0,
    duplicates: 0,
    outOfOrder: 0,
    unexpected: 0,
  };
  for (const seqs of acceptedByRoom.values()) check.accepted += seqs.length;
  for (const r of reports) {
    const accepted = new Set(acceptedByRoom.get(r.room) ?? []);
    const seen = new Set<number>();
    let ok = true;
    for (let i = 0; i < r.seqs.length; i++) {
      const s = r.seqs[i]!;
      if (i > 0 && s <= r.seqs[i - 1]!) {
        check.outOfOrder++;
        ok = false;
      }
      if (seen.has(s)) {
        check.duplicates++;
        ok = false;
      }
      seen.add(s);
      if (!accepted.has(s)) {
        check.unexpected++;
        ok = false;
      }
    }
    for (const s of accepted) {
      if (!seen.has(s)) {
        check.missing++;
        ok = false;
      }
    }
    if (ok) check.perfect++;
  }
  return check;
}

function acceptedSeqs(outcomes: PostOutcome[]): Map<string, number[]> {
  const byRoom = new Map<string, number[]>();
  for (const o of outcomes) {
    if (o.status !== 200 || o.seq === undefined || o.room === undefined) continue;
    const list = byRoom.get(o.room) ?? [];
    list.push(o.seq);
    byRoom.set(o.room, list);
  }
  for (const list of byRoom.values()) list.sort((a, b) => a - b);
  return byRoom;
}

function statusCounts(outcomes: PostOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o.status] = (counts[o.status] ?? 0) + 1;
  return counts;
}

/**
 * The statuses, and for anything but a 200 the first few answers (status and body) with when they
 * came in the phase: a rare 503 is only understood from its body and the time it came at.
 */
export function statusLine(outcomes: PostOutcome[]): string {
  const failed = outcomes.filter((o) => o.status !== 200);
  const line = `statuses ${JSON.stringify(statusCounts(outcomes))}`;
  if (failed.length === 0) return line;
  const start = Math.min(...outcomes.map((o) => o.t0));
  const shown = failed
    .slice(0, 3)
    .map((o) => `${o.status} at +${((o.t0 - start) / 1000).toFixed(2)} s after ${(o.t1 - o.t0).toFixed(0)} ms: ${o.error ?? ''}`);
  return `${line}; first failures: ${shown.join(' | ')}`;
}

// ---------------------------------------------------------------------------------------------

export async function setUpRooms(base: string, token: string, count: number, label: string): Promise<Room[]> {
  const rooms: Room[] = [];
  for (let i = 0; i < count; i++) {
    const room = await api<{ id: string }>(base, token, 'POST', '/api/v1/rooms', { name: `bench ${label} ${i + 1}` });
    const hook = await api<{ id: string; url: string }>(base, token, 'POST', '/api/v1/webhooks', {
      name: `bench ${label} ${i + 1}`,
      kind: 'generic',
      roomId: room.id,
    });
    // Raise the rate limit the documented way, by PATCH.
    await api(base, token, 'PATCH', `/api/v1/webhooks/${hook.id}`, { rateLimit: { burst: 100_000, perSecond: 100_000 } });
    rooms.push({ id: room.id, webhookId: hook.id, hookPath: new URL(hook.url).pathname });
  }
  return rooms;
}

export const hookUrl = (base: string, room: Room) => `${base}${room.hookPath}`;
export const wsUrl = (base: string, room: Room) => `${base.replace(/^http/, 'ws')}/api/v1/rooms/${room.id}/ws`;
/**
 * Characters the fan-out floor adds to each frame so that it is as long as the frame Switchboard
 * sends for the same post (three ids, the markdown and its rendered HTML), computed with
 * Switchboard's own renderer and encoder: the proxy relays, and the viewers parse, frames of one
 * size on both sides. (Side by side, 9 rounds each, the padded floor's p99 was the unpadded one's
 * within the noise: 25.3 against 24.9 ms.)
 */
const FLOOR_PAD = (() => {
  const body = messageBody(1_000_000);
  const { message, metadata } = JSON.parse(body) as { message: string; metadata: string };
  const uuid = '00000000-0000-4000-8000-000000000000';
  const createdAt = new Date().toISOString();
  const [switchboard] = encodeMessageFrames([
    {
      id: uuid,
      roomId: uuid,
      seq: 1_000_000,
      webhookId: uuid,
      markdown: message,
      html: renderMarkdown(message),
      metadata,
      createdAt,
      // What the bench's generic webhook's messages carry (its name, its kind's icon).
      sender: { name: 'bench', iconUrl: '/assets/chat/icons/generic.svg' },
      level: 'info',
    },
  ]);
  const floor = JSON.stringify({
    type: 'messages',
    messages: [{ id: '1000000', roomId: FLOOR_FRONT, seq: 1_000_000, body, pad: '', createdAt }],
  });
  return Math.max(0, switchboard!.length - floor.length);
})();

/** The fan-out floor peer's room `name` (bench/ceiling-worker): POST to it (frames padded to Switchboard's length), viewers at …/ws. */
export const floorUrl = (base: string, name: string) => `${base}/floor/${name}?pad=${FLOOR_PAD}`;
export const floorWsUrl = (base: string, name: string) => `${base.replace(/^http/, 'ws')}/floor/${name}/ws`;

/** The ceiling Worker answers its constant (readiness check of its `wrangler dev`). */
export async function isCeilingUp(base: string): Promise<boolean> {
  const res = await fetch(base, { method: 'POST', body: '{}', signal: AbortSignal.timeout(3000) });
  return (await res.text()).includes('ceiling');
}

export async function chatScenario(o: ChatOptions): Promise<void> {
  const r = o.results;
  const S = '3 webhooks';
  const persistTo = storeDir('chat');
  rmSync(persistTo, { recursive: true, force: true });
  mkdirSync(persistTo, { recursive: true });
  await migrate(persistTo);
  let dev: DevServer | undefined;
  let ceiling: DevServer | undefined;
  let diskDev: DevServer | undefined;
  const viewers = new Viewers();
  const detail: Record<string, unknown> = {};
  o.detail.chat = detail;
  try {
    await viewers.started();
    dev = await startDev({
      config: o.workerConfig,
      port: CHAT_PORT,
      inspectorPort: CHAT_INSPECTOR,
      persistTo,
      vars: { ADMIN_TOKEN: o.token },
      ready: (base) => isUp(base, o.token),
    });
    const persistCeiling = storeDir('ceiling');
    rmSync(persistCeiling, { recursive: true, force: true });
    ceiling = await startDev({
      config: path.join(ROOT, 'bench', 'ceiling-worker', 'wrangler.toml'),
      port: CEILING_PORT,
      inspectorPort: CEILING_INSPECTOR,
      persistTo: persistCeiling,
      ready: isCeilingUp,
    });
    progress(
      `chat: Switchboard on ${dev.url} (workerd's own port ${dev.directUrl ?? 'not reachable'}), ceiling on ${ceiling.url} (${ceiling.directUrl ?? 'not reachable'})`,
    );
    const d = dev;
    const meter = () =>
      new CpuMeter(() => ({
        'workerd (Worker)': d.workerPid,
        'workerd (proxy)': d.proxyPid,
        'wrangler (node)': d.wranglerPid,
        viewers: viewers.pid,
      }));
    const c = ceiling;
    const ceilingMeter = () =>
      new CpuMeter(() => ({ 'workerd (Worker)': c.workerPid, 'workerd (proxy)': c.proxyPid, viewers: viewers.pid }));

    // ---- rooms: proxy phase, direct phase, deflate phase, then the 50-room phase ------------------
    const main = (await setUpRooms(d.url, o.token, 1, 'one room'))[0]!;
    const directRoom = d.directUrl ? (await setUpRooms(d.url, o.token, 1, 'direct'))[0] : undefined;
    const deflateRoom = (await setUpRooms(d.url, o.token, 1, 'deflate'))[0]!;
    const many = await setUpRooms(d.url, o.token, 50, 'many');
    const specs: ViewerSpec[] = [];
    let id = 0;
    for (let i = 0; i < VIEWERS; i++) specs.push({ id: id++, room: main.id, url: wsUrl(d.url, main), token: o.token });
    if (directRoom && d.directUrl)
      for (let i = 0; i < VIEWERS; i++) specs.push({ id: id++, room: directRoom.id, url: wsUrl(d.directUrl, directRoom), token: o.token });
    for (let i = 0; i < VIEWERS; i++)
      specs.push({ id: id++, room: deflateRoom.id, url: wsUrl(d.url, deflateRoom), token: o.token, deflate: true });
    for (const room of many) for (let i = 0; i < 2; i++) specs.push({ id: id++, room: room.id, url: wsUrl(d.url, room), token: o.token });
    // The fan-out floor's rooms in the ceiling Worker: one reached through its front port, one straight to its workerd.
    for (let i = 0; i < VIEWERS; i++) specs.push({ id: id++, room: FLOOR_FRONT, url: floorWsUrl(c.url, FLOOR_FRONT), token: '' });
    if (c.directUrl)
      for (let i = 0; i < VIEWERS; i++) specs.push({ id: id++, room: FLOOR_DIRECT, url: floorWsUrl(c.directUrl, FLOOR_DIRECT), token: '' });
    progress(`chat: opening ${specs.length} WebSocket viewers`);
    await viewers.command({ type: 'open', viewers: specs }, 'opened');

    // ---- steady rates: POST start → receipt at each of the 100 viewers ----------------------------
    // 200 posts/s is the target's rate; 25 posts/s shows the latency floor when the room keeps up.
    // Run twice: first on a fresh runtime, before any throughput phase (the target's row), and again
    // after them. workerd under `wrangler dev` grows by a few KB of native memory per request, for the
    // ceiling Worker too, and its tail latency grows with the requests it has served (README,
    // "Steady rate"); the second pass shows how much on this run's own processes.
    const steadySeconds = o.quick ? 2 : 10;
    /** The target's phases (200 posts/s, fresh runtime) in slices alternating with the peers' (steadyPhase). */
    const targetSlices = o.quick ? 1 : 3;
    const warmupSeconds = o.quick ? 0.5 : 2;
    // The same 200 posts/s straight to workerd as well (posters and viewers), when reachable:
    // wrangler's proxy relays every frame to every viewer on its one thread, and the POSTs queue
    // behind them there.
    // Each 200 posts/s phase is followed by the peers at the same rate, reached the same way: the
    // ceiling Worker (its POST answer times are what this machine, wrangler's proxy and the client
    // give a request) and the fan-out floor with its own 100 viewers (the least a room can do: its
    // p99 to the last viewer is what the runtime gives the target's measure here, in this minute).
    /**
     * An open loop at `rate` to `postUrl` after `warmupSeconds` of it untimed, and the receipts of
     * `roomId`'s viewers. Warm-up: a fresh isolate compiles the post path in its first ~100 ms, and
     * those 15-20 messages at 35-75 ms would be most of a 10 s phase's p99 (bench/profile/
     * steady-trace.ts, 2026-11-25). Its messages are received before the reset; the reset before it
     * makes that wait count them alone (not an earlier phase's messages).
     */
    const timeSteady = async (postUrl: string, roomId: string, rate: number, meterOf: () => CpuMeter) => {
      await viewers.command({ type: 'reset' }, 'reset');
      const warm = acceptedSeqs(await openLoop(postUrl, rate, warmupSeconds, roomId));
      await viewers.command({ type: 'collect', expect: { [roomId]: warm.get(roomId)?.length ?? 0 }, timeoutMs: 60_000 }, 'collected');
      await viewers.command({ type: 'reset' }, 'reset');
      const m = meterOf();
      const steady = await openLoop(postUrl, rate, steadySeconds, roomId);
      const cpu = m.stop();
      const accepted = acceptedSeqs(steady);
      const collected = await viewers.command(
        { type: 'collect', expect: { [roomId]: accepted.get(roomId)?.length ?? 0 }, timeoutMs: 60_000 },
        'collected',
      );
      const t0BySeq = new Map<number, number>();
      for (const x of steady) if (x.seq !== undefined) t0BySeq.set(x.seq, x.t0);
      const all: number[] = [];
      const lastViewer = new Map<number, number>();
      for (const rep of collected.reports) {
        rep.seqs.forEach((seq, i) => {
          const t0 = t0BySeq.get(seq);
          if (t0 === undefined) return;
          const latency = rep.times[i]! - t0;
          all.push(latency);
          lastViewer.set(seq, Math.max(lastViewer.get(seq) ?? 0, latency));
        });
      }
      return {
        steady,
        cpu,
        all,
        perMessage: [...lastViewer.values()],
        check: checkDeliveries(collected.reports, accepted),
        achieved: steady.filter((x) => x.status === 200).length / steadySeconds,
      };
    };
    type SteadyRun = Awaited<ReturnType<typeof timeSteady>>;
    /** Slices of one phase as one run: every message of every slice counts once in the percentiles. */
    const pool = (runs: SteadyRun[]): SteadyRun => {
      const cpu = { wallSeconds: 0, machineBusy: 0, perProcess: {} as Record<string, number> };
      for (const x of runs) {
        cpu.wallSeconds += x.cpu.wallSeconds;
        cpu.machineBusy += x.cpu.machineBusy;
        for (const [name, seconds] of Object.entries(x.cpu.perProcess)) cpu.perProcess[name] = (cpu.perProcess[name] ?? 0) + seconds;
      }
      // Perfect viewers: the fewest of any slice (exact when every slice has all of them; an upper bound otherwise).
      const check = { ...runs[0]!.check };
      for (const x of runs.slice(1)) {
        check.accepted += x.check.accepted;
        check.perfect = Math.min(check.perfect, x.check.perfect);
        check.missing += x.check.missing;
        check.duplicates += x.check.duplicates;
        check.outOfOrder += x.check.outOfOrder;
        check.unexpected += x.check.unexpected;
      }
      return {
        steady: runs.flatMap((x) => x.steady),
        cpu,
        all: runs.flatMap((x) => x.all),
        perMessage: runs.flatMap((x) => x.perMessage),
        check,
        achieved: runs.reduce((sum, x) => sum + x.achieved, 0) / runs.length,
      };
    };
    /**
     * `slices` > 1: the phase is cut into that many slices of `steadySeconds`, each followed by the
     * peers' slices at the same rate, and each side's slices are pooled. The machine's speed drifts
     * 2-3x between minutes (one 10 s phase met 58 ms in a slow minute and 25 ms in a fast one, the
     * floor 24 and 14 with it): alternating makes both sides see the same minutes, and three times
     * the messages make the p99 rest on 60 messages instead of 20.
     */
    type SteadyPhase = {
      rate: number;
      room: Room;
      base: string;
      where: string;
      peers?: { ceiling: string; floorRoom?: string };
      after: boolean;
      target: boolean;
      slices?: number;
    };
    const steadyPhase = async ({ rate, room, base, where, peers, after, target, slices = 1 }: SteadyPhase, meterOf: () => CpuMeter) => {
      const label = `steady ${rate} posts/s${where}`;
      const runs: SteadyRun[] = [];
      const floors: SteadyRun[] = [];
      const ceilingPosts: PostOutcome[] = [];
      for (let slice = 1; slice <= slices; slice++) {
        const part = slices > 1 ? ` (slice ${slice} of ${slices})` : '';
        const run = await timeSteady(hookUrl(base, room), room.id, rate, meterOf);
        runs.push(run);
        progress(
          `chat ${label}${part}: p99 to the last viewer ${percentile(run.perMessage, 99).toFixed(1)} ms, ${run.achieved.toFixed(0)} posts/s accepted, ${statusLine(run.steady)}, deliveries ${JSON.stringify(run.check)}`,
        );
        if (!peers) continue;
        await openLoop(`${peers.ceiling}/`, rate, warmupSeconds, 'ceiling');
        ceilingPosts.push(...(await openLoop(`${peers.ceiling}/`, rate, steadySeconds, 'ceiling')));
        if (peers.floorRoom) {
          const floor = await timeSteady(floorUrl(peers.ceiling, peers.floorRoom), peers.floorRoom, rate, ceilingMeter);
          floors.push(floor);
          progress(
            `chat ${label}, fan-out floor${part}: p99 to the last viewer ${percentile(floor.perMessage, 99).toFixed(1)} ms, ${floor.achieved.toFixed(0)} posts/s accepted, deliveries ${JSON.stringify(floor.check)}`,
          );
        }
      }
      const run = pool(runs);
      const floor = floors.length > 0 ? pool(floors) : undefined;
      const p99 = percentile(run.perMessage, 99);
      const metric = `${label}${rate === STEADY_RATE || after ? '' : ' (below capacity)'}: p99 POST start → receipt at the last of ${VIEWERS} viewers`;
      r.add({
        scenario: S,
        metric,
        value: p99,
        unit: 'ms',
        ...(floor
          ? { peer: 'fan-out floor (a Durable Object that only numbers and sends), p99', peerValue: percentile(floor.perMessage, 99) }
          : {}),
        ...(target ? { target: '<= 25 ms', met: p99 <= 25 } : {}),
      });
      r.add({
        scenario: S,
        metric: `  ${label}: p50 of the same`,
        value: percentile(run.perMessage, 50),
        unit: 'ms',
        ...(floor ? { peer: 'fan-out floor, p50', peerValue: percentile(floor.perMessage, 50) } : {}),
      });
      r.add({ scenario: S, metric: `  ${label}: p99 over every (message, viewer) receipt`, value: percentile(run.all, 99), unit: 'ms' });
      r.add({
        scenario: S,
        metric: `  ${label}: p99 POST answer time`,
        value: percentile(
          run.steady.map((x) => x.t1 - x.t0),
          99,
        ),
        unit: 'ms',
        ...(ceilingPosts.length > 0
          ? {
              peer: `ceiling Worker at ${rate}/s, p99`,
              peerValue: percentile(
                ceilingPosts.map((x) => x.t1 - x.t0),
                99,
              ),
            }
          : {}),
      });
      r.add({ scenario: S, metric: `  ${label}: accepted posts/s`, value: run.achieved, unit: 'posts/s' });
      const cores = (name: string) => ((run.cpu.perProcess[name] ?? 0) / run.cpu.wallSeconds).toFixed(2);
      r.add({
        scenario: S,
        metric: `  ${label}: machine CPU (workerd ${cores('workerd (Worker)')}, proxy ${cores('workerd (proxy)')}, viewers ${cores('viewers')}, bench client ${cores('bench client')})`,
        value: run.cpu.machineBusy / run.cpu.wallSeconds,
        unit: 'of 2 cores',
      });
      r.add({
        scenario: S,
        metric: `  ${label}: viewers with every message once, in order`,
        value: run.check.perfect,
        unit: `of ${run.check.viewers}`,
        ...(floor ? { peer: 'fan-out floor', peerValue: floor.check.perfect } : {}),
      });
      detail[label] = {
        rate,
        seconds: steadySeconds * slices,
        slices,
        achieved: run.achieved,
        check: run.check,
        lastViewer: summary(run.perMessage),
        everyReceipt: summary(run.all),
        ...(floor
          ? {
              floor: {
                achieved: floor.achieved,
                check: floor.check,
                lastViewer: summary(floor.perMessage),
                everyReceipt: summary(floor.all),
              },
            }
          : {}),
      };
    };
    const steadyPhases = async (after: boolean) => {
      const when = after ? ', after the throughput phases' : '';
      const phases: SteadyPhase[] = [
        {
          rate: STEADY_RATE,
          room: main,
          base: d.url,
          where: when,
          peers: { ceiling: c.url, floorRoom: FLOOR_FRONT },
          after,
          target: !after,
          slices: after ? 1 : targetSlices,
        },
        ...(directRoom && d.directUrl && c.directUrl
          ? [
              {
                rate: STEADY_RATE,
                room: directRoom,
                base: d.directUrl,
                where: `, straight to workerd${when}`,
                peers: { ceiling: c.directUrl, floorRoom: FLOOR_DIRECT },
                after,
                target: !after,
                slices: after ? 1 : targetSlices,
              },
            ]
          : []),
        ...(after ? [] : [{ rate: 25, room: main, base: d.url, where: '', after, target: false }]),
      ];
      for (const phase of phases) await steadyPhase(phase, meter);
    };

    await steadyPhases(false);

    // ---- the ceiling is measured in slices interleaved with Switchboard's (below) ------------------
    // This shared 2-core machine's speed drifts by a factor of 2-3 between minutes; alternating short
    // slices of the two makes the drift hit both sides of the ratio alike.
    const ceilingTotals = { proxy: { ok: 0, seconds: 0 }, direct: { ok: 0, seconds: 0 } };

    // ---- one room, 100 viewers, 16 posters -----------------------------------------------------
    const throughput = async (
      base: string,
      room: Room,
      label: string,
      ceilingBase: string,
      totals: { ok: number; seconds: number },
      meterOf: () => CpuMeter = meter,
    ) => {
      await viewers.command({ type: 'reset' }, 'reset');
      const run = { outcomes: [] as PostOutcome[], seconds: 0 };
      const cpu = { wallSeconds: 0, machineBusy: 0, perProcess: {} as Record<string, number> };
      for (let slice = 0; slice < THROUGHPUT_SLICES; slice++) {
        const c = await closedLoop([{ url: `${ceilingBase}/` }], o.throughputSeconds / THROUGHPUT_SLICES);
        totals.ok += c.outcomes.filter((x) => x.status === 200).length;
        totals.seconds += c.seconds;
        const m = meterOf();
        const part = await closedLoop([{ url: hookUrl(base, room), room: room.id }], o.throughputSeconds / THROUGHPUT_SLICES);
        const used = m.stop();
        run.outcomes.push(...part.outcomes);
        run.seconds += part.seconds;
        cpu.wallSeconds += used.wallSeconds;
        cpu.machineBusy += used.machineBusy;
        for (const [name, seconds] of Object.entries(used.perProcess)) cpu.perProcess[name] = (cpu.perProcess[name] ?? 0) + seconds;
      }
      const accepted = acceptedSeqs(run.outcomes);
      const expect = { [room.id]: accepted.get(room.id)?.length ?? 0 };
      const collected = await viewers.command({ type: 'collect', expect, timeoutMs: 60_000 }, 'collected');
      const check = checkDeliveries(collected.reports, accepted);
      const ok = run.outcomes.filter((x) => x.status === 200);
      const rate = ok.length / run.seconds;
      const latencies = ok.map((x) => x.t1 - x.t0);
      progress(`chat ${label}: ${rate.toFixed(0)} accepted posts/s, ${statusLine(run.outcomes)}, deliveries ${JSON.stringify(check)}`);
      const frames = collected.reports.reduce((n, v) => n + v.frames, 0);
      const perFrame = frames > 0 ? collected.reports.reduce((n, v) => n + v.seqs.length, 0) / frames : 0;
      detail[label] = {
        rate,
        statuses: statusCounts(run.outcomes),
        check,
        cpu,
        postP50: percentile(latencies, 50),
        postP99: percentile(latencies, 99),
        messagesPerFrame: perFrame,
      };
      return { rate, check, cpu, latencies, perFrame };
    };
    const viaProxy = await throughput(d.url, main, 'one room via proxy', ceiling.url, ceilingTotals.proxy);
    const ceilingProxy = ceilingTotals.proxy.ok / ceilingTotals.proxy.seconds;
    progress(`chat: ceiling ${ceilingProxy.toFixed(0)} posts/s through the proxy (interleaved with the room's slices)`);
    r.add({
      scenario: S,
      metric: `one room, ${VIEWERS} viewers (no deflate offered), ${POSTERS} posters, ${o.throughputSeconds} s: accepted posts/s (front port)`,
      value: viaProxy.rate,
      unit: 'posts/s',
      peer: 'ceiling Worker (front port)',
      peerValue: ceilingProxy,
      target: '>= 0.5 × ceiling',
      met: viaProxy.rate >= 0.5 * ceilingProxy,
    });
    r.add({
      scenario: S,
      metric: 'viewers that got every accepted message once, in seq order',
      value: viaProxy.check.perfect,
      unit: `of ${viaProxy.check.viewers}`,
      target: `= ${viaProxy.check.viewers}`,
      met: viaProxy.check.perfect === viaProxy.check.viewers,
    });
    r.add({ scenario: S, metric: 'POST time at full load, p50', value: percentile(viaProxy.latencies, 50), unit: 'ms' });
    r.add({ scenario: S, metric: 'messages per WebSocket frame at full load (mean)', value: viaProxy.perFrame, unit: 'messages' });
    for (const [name, seconds] of Object.entries(viaProxy.cpu.perProcess)) {
      r.add({ scenario: S, metric: `CPU at full load: ${name}`, value: seconds / viaProxy.cpu.wallSeconds, unit: 'cores' });
    }
    const ours = Object.values(viaProxy.cpu.perProcess).reduce((a, b) => a + b, 0);
    r.add({
      scenario: S,
      metric: 'CPU at full load: other processes on the machine',
      value: Math.max(0, viaProxy.cpu.machineBusy - ours) / viaProxy.cpu.wallSeconds,
      unit: 'cores',
    });
    if (directRoom && d.directUrl && ceiling.directUrl) {
      const direct = await throughput(d.directUrl, directRoom, 'one room direct', ceiling.directUrl, ceilingTotals.direct);
      const ceilingDirect = ceilingTotals.direct.ok / ceilingTotals.direct.seconds;
      r.add({
        scenario: S,
        metric: 'the same, straight to workerd (posters and viewers)',
        value: direct.rate,
        unit: 'posts/s',
        peer: 'ceiling Worker (straight to workerd)',
        peerValue: ceilingDirect,
        target: '>= 0.5 × ceiling',
        met: direct.rate >= 0.5 * ceilingDirect,
      });
      r.add({
        scenario: S,
        metric: '  viewers with every message once, in order (direct)',
        value: direct.check.perfect,
        unit: `of ${direct.check.viewers}`,
      });
    }
    // Browsers offer permessage-deflate; wrangler dev's entry worker accepts it although the Worker
    // refuses it, and workerd then deflates every frame once per viewer. What that costs here:
    const deflateTotals = { ok: 0, seconds: 0 };
    const deflated = await throughput(d.url, deflateRoom, 'one room, viewers offering deflate', ceiling.url, deflateTotals);
    r.add({
      scenario: S,
      metric: '  the same (front port), viewers offering permessage-deflate (wrangler dev accepts it)',
      value: deflated.rate,
      unit: 'posts/s',
      peer: 'ceiling Worker (front port)',
      peerValue: deflateTotals.ok / deflateTotals.seconds,
    });
    r.add({
      scenario: S,
      metric: '  viewers with every message once, in order (deflate)',
      value: deflated.check.perfect,
      unit: `of ${deflated.check.viewers}`,
    });

    // Full runs only (--quick stays under two minutes on a slow phase of this VM).
    if (!o.quick) await steadyPhases(true);

    // ---- rooms × 2 viewers ---------------------------------------------------------------------
    // Two series: the same 16 posters spread over the rooms (the offered load is fixed by their
    // round trips), and 4 posters per room (each room has its own senders, so the offered load
    // grows with the rooms until the machine saturates). Under wrangler dev one workerd thread
    // runs every Durable Object, so rooms add no parallelism here; workerd's share of its one
    // thread is reported with each step.
    const seconds = o.quick ? 1.5 : 8;
    const steps: Record<string, unknown> = {};
    const series: { label: string; posters: (rooms: number) => number }[] = [
      { label: `${POSTERS} posters`, posters: () => POSTERS },
      { label: `${POSTERS_PER_ROOM} posters per room`, posters: (rooms) => POSTERS_PER_ROOM * rooms },
    ];
    for (const { label, posters } of series) {
      for (const n of ROOM_STEPS) {
        await viewers.command({ type: 'reset' }, 'reset');
        const rooms = many.slice(0, n);
        const m = meter();
        const run = await closedLoop(
          rooms.map((room) => ({ url: hookUrl(d.url, room), room: room.id })),
          seconds,
          posters(n),
        );
        const cpu = m.stop();
        const acc = acceptedSeqs(run.outcomes);
        const expect: Record<string, number> = {};
        for (const room of rooms) expect[room.id] = acc.get(room.id)?.length ?? 0;
        const col = await viewers.command({ type: 'collect', expect, timeoutMs: 60_000 }, 'collected');
        const check = checkDeliveries(col.reports, acc);
        const rate = run.outcomes.filter((x) => x.status === 200).length / run.seconds;
        const workerCores = (cpu.perProcess['workerd (Worker)'] ?? NaN) / cpu.wallSeconds;
        const machine = cpu.machineBusy / cpu.wallSeconds;
        const name = `${n} room${n > 1 ? 's' : ''} × 2 viewers, ${label}`;
        progress(
          `chat ${name}: ${rate.toFixed(0)} posts/s, workerd ${workerCores.toFixed(2)} cores, machine ${machine.toFixed(2)} of 2, deliveries ${JSON.stringify(check)}`,
        );
        r.add({
          scenario: S,
          metric: `${name}: accepted posts/s (workerd ${workerCores.toFixed(2)} cores, machine ${machine.toFixed(2)}/2)`,
          value: rate,
          unit: 'posts/s',
        });
        if (check.perfect !== check.viewers)
          r.add({
            scenario: S,
            metric: `  ${name}: viewers with every message once, in order`,
            value: check.perfect,
            unit: `of ${check.viewers}`,
          });
        steps[name] = { rate, check, cpu, posters: posters(n), statuses: statusCounts(run.outcomes) };
      }
    }
    detail.rooms = steps;

    // ---- the same with local storage on disk ------------------------------------------------------
    // wrangler dev syncs every Durable Object commit to disk on the thread that runs the Worker and
    // every object (bench/lib/store.ts); the timed rows keep storage in memory. What the disk costs
    // here, on a fresh runtime like the first steady phases (full runs only: --quick stays under two minutes):
    if (storeKind() === 'memory' && !o.quick && d.directUrl && c.directUrl) {
      const persistDisk = storeDir('chat', 'disk');
      rmSync(persistDisk, { recursive: true, force: true });
      mkdirSync(persistDisk, { recursive: true });
      await migrate(persistDisk);
      diskDev = await startDev({
        config: o.workerConfig,
        port: DISK_PORT,
        inspectorPort: DISK_INSPECTOR,
        persistTo: persistDisk,
        vars: { ADMIN_TOKEN: o.token },
        ready: (base) => isUp(base, o.token),
      });
      const dd = diskDev;
      if (!dd.directUrl) throw new Error("storage on disk: workerd's own port not found");
      const diskMeter = () =>
        new CpuMeter(() => ({
          'workerd (Worker)': dd.workerPid,
          'workerd (proxy)': dd.proxyPid,
          'wrangler (node)': dd.wranglerPid,
          viewers: viewers.pid,
        }));
      const [diskFront, diskDirect] = await setUpRooms(dd.url, o.token, 2, 'disk');
      const diskSpecs: ViewerSpec[] = [];
      for (let i = 0; i < VIEWERS; i++) diskSpecs.push({ id: id++, room: diskFront!.id, url: wsUrl(dd.url, diskFront!), token: o.token });
      for (let i = 0; i < VIEWERS; i++)
        diskSpecs.push({ id: id++, room: diskDirect!.id, url: wsUrl(dd.directUrl, diskDirect!), token: o.token });
      progress(`chat: storage on disk (${persistDisk}): opening ${diskSpecs.length} more viewers`);
      await viewers.command({ type: 'open', viewers: diskSpecs }, 'opened');
      const onDisk = ', local storage on disk';
      await steadyPhase(
        { rate: STEADY_RATE, room: diskFront!, base: dd.url, where: onDisk, peers: { ceiling: c.url }, after: false, target: false },
        diskMeter,
      );
      if (c.directUrl) {
        await steadyPhase(
          {
            rate: STEADY_RATE,
            room: diskDirect!,
            base: dd.directUrl,
            where: `, straight to workerd${onDisk}`,
            peers: { ceiling: c.directUrl },
            after: false,
            target: false,
          },
          diskMeter,
        );
      }
      const diskTotals = { ok: 0, seconds: 0 };
      const diskRun = await throughput(dd.directUrl, diskDirect!, 'one room direct, storage on disk', c.directUrl, diskTotals, diskMeter);
      r.add({
        scenario: S,
        metric: `one room, 100 viewers, straight to workerd${onDisk}: accepted posts/s`,
        value: diskRun.rate,
        unit: 'posts/s',
        peer: 'ceiling Worker (straight to workerd)',
        peerValue: diskTotals.ok / diskTotals.seconds,
      });
      r.add({
        scenario: S,
        metric: `  viewers with every message once, in order (direct${onDisk})`,
        value: diskRun.check.perfect,
        unit: `of ${diskRun.check.viewers}`,
      });
    }
    await viewers.command({ type: 'close' }, 'closed');
    // What the Worker logged about a failed post (e.g. 'append failed' and the RPC's error), if any.
    for (const [name, server] of [
      ['Switchboard', dev],
      ['Switchboard on disk', diskDev],
    ] as const) {
      const failures = server ? errorLines(server.log()) : [];
      if (failures.length > 0)
        progress(`chat: ${name}'s Worker logged ${failures.length} error lines; the first:\n${failures.slice(0, 10).join('\n')}`);
    }
  } catch (err) {
    if (dev) progress(`chat failed; wrangler's output:\n${dev.log().slice(-3000)}`);
    throw err;
  } finally {
    viewers.kill();
    await dev?.stop();
    await diskDev?.stop();
    await ceiling?.stop();
  }
}

function summary(values: number[]) {
  // A loop, not Math.max(...values): hundreds of thousands of receipts overflow the call stack.
  let max = -Infinity;
  for (const v of values) if (v > max) max = v;
  return { n: values.length, p50: percentile(values, 50), p90: percentile(values, 90), p99: percentile(values, 99), max };
}
