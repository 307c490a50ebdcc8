/**
 * `npx tsx bench/profile/steady-trace.ts [--rate 200] [--seconds 10] [--viewers 100] [--direct] [--rounds N] [--fresh] [--snapshot DIR] [--profile] [--alloc] [--floor] [--heap] [--heap-snapshot]`
 *
 * Where the tail of the steady-rate target comes from (issue 4, scenario 3): one room with its
 * viewers (the bench's viewer child process), an open loop of posts at `--rate` for `--seconds`,
 * then, for each message: POST start, POST answer, and receipt at the first and the last viewer.
 * Prints the percentiles of each leg and the slowest messages on the phase's timeline, so a stall
 * shared by every viewer (the server) is told apart from one viewer late (the client), and a
 * periodic stall (a timer, a flush, GC) from a steady queue. Runs the benchmark's Worker snapshot
 * (bench/data/build; `--fresh` bundles src/ now) under `wrangler dev` on ports 8824/8825, storage
 * in a fresh tmpfs directory. `--floor` runs the fan-out floor peer instead (bench/ceiling-worker:
 * a Durable Object that only numbers each post and sends it to every viewer), to tell the runtime's
 * own tail from Switchboard's. Writes bench/data/steady-trace.json.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isUp } from '../lib/http';
import { CpuMeter, memory } from '../lib/proc';
import { DATA_DIR } from '../lib/sim';
import { percentile } from '../lib/stats';
import { storeDir } from '../lib/store';
import { errorLines, migrate, ROOT, snapshotWorker, startDev } from '../lib/wrangler';
import { floorUrl, floorWsUrl, hookUrl, isCeilingUp, openLoop, setUpRooms, statusLine, Viewers, wsUrl } from '../scenarios/chat';
import {
  AllocationSampler,
  bundleModules,
  HeapSampler,
  heapSnapshotSummary,
  heapUsage,
  inspectorTargets,
  Profiler,
  type CdpProfile,
} from './inspector';

const PORT = 8824;
const INSPECTOR = 8825;
const TOKEN = 'sbt_bench_steady_trace';

interface Trace {
  seq: number;
  /** ms since the phase's first POST. */
  at: number;
  post: number;
  firstViewer: number;
  lastViewer: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rate: { type: 'string' },
      seconds: { type: 'string' },
      viewers: { type: 'string' },
      rounds: { type: 'string' },
      direct: { type: 'boolean' },
      fresh: { type: 'boolean' },
      profile: { type: 'boolean' },
      alloc: { type: 'boolean' },
      snapshot: { type: 'string' },
      floor: { type: 'boolean' },
      heap: { type: 'boolean' },
      'heap-snapshot': { type: 'boolean' },
    },
  });
  const rate = Number(values.rate ?? 200);
  const seconds = Number(values.seconds ?? 10);
  const viewerCount = Number(values.viewers ?? 100);
  const rounds = Number(values.rounds ?? 1);
  // --snapshot DIR: a Worker bundle kept from another snapshot (side-by-side runs of two versions).
  const buildDir = values.snapshot ? path.resolve(values.snapshot) : path.join(DATA_DIR, 'build');
  const floor = values.floor === true;
  const config = floor
    ? path.join(ROOT, 'bench', 'ceiling-worker', 'wrangler.toml')
    : snapshotWorker(buildDir, values.fresh !== true).config;
  const persistTo = storeDir('steady-trace');
  rmSync(persistTo, { recursive: true, force: true });
  mkdirSync(persistTo, { recursive: true });
  if (!floor) await migrate(persistTo);
  const viewers = new Viewers();
  await viewers.started();
  const dev = await startDev({
    config,
    port: PORT,
    inspectorPort: INSPECTOR,
    persistTo,
    vars: floor ? {} : { ADMIN_TOKEN: TOKEN },
    ready: floor ? isCeilingUp : (base) => isUp(base, TOKEN),
  });
  const out: { round: number; traces: Trace[] }[] = [];
  try {
    const base = values.direct ? dev.directUrl : dev.url;
    if (!base) throw new Error("--direct: workerd's own port was not found");
    const room = floor ? { id: 'trace', webhookId: '', hookPath: '' } : (await setUpRooms(dev.url, TOKEN, 1, 'trace'))[0]!;
    const postUrl = floor ? floorUrl(base, room.id) : hookUrl(base, room);
    const viewerUrl = floor ? floorWsUrl(base, room.id) : wsUrl(base, room);
    await viewers.command(
      { type: 'open', viewers: Array.from({ length: viewerCount }, (_, id) => ({ id, room: room.id, url: viewerUrl, token: TOKEN })) },
      'opened',
    );
    let profiler: Profiler | undefined;
    if (values.profile) {
      const targets = await inspectorTargets(dev.workerPid, INSPECTOR);
      profiler = await Profiler.attach(targets, ['worker', ...[...targets.keys()].filter((k) => k.startsWith('d1:db'))]);
    }
    // --alloc: V8's sampling heap profiler on the Worker's isolate during each round.
    const sampler = values.alloc ? await AllocationSampler.attach(await inspectorTargets(dev.workerPid, INSPECTOR), 'worker') : undefined;
    for (let round = 1; round <= rounds; round++) {
      await viewers.command({ type: 'reset' }, 'reset');
      await profiler?.start();
      await sampler?.start();
      const meter = new CpuMeter(() => ({ 'workerd (Worker)': dev.workerPid, 'workerd (proxy)': dev.proxyPid, viewers: viewers.pid }));
      const posts = await openLoop(postUrl, rate, seconds, room.id);
      const cpu = meter.stop();
      const profiles = await profiler?.stop();
      const bundled = bundleModules(path.join(buildDir, 'bundle', 'index.js'));
      const allocations = await sampler?.stop((url, line) => (url.includes('index.js') ? bundled(line) : url));
      const accepted = posts.filter((p) => p.status === 200 && p.seq !== undefined);
      const collected = await viewers.command({ type: 'collect', expect: { [room.id]: accepted.length }, timeoutMs: 60_000 }, 'collected');
      const start = Math.min(...posts.map((p) => p.t0));
      const receipts = new Map<number, { first: number; last: number }>();
      for (const report of collected.reports) {
        report.seqs.forEach((seq, i) => {
          const t = report.times[i]!;
          const r = receipts.get(seq);
          if (!r) receipts.set(seq, { first: t, last: t });
          else {
            if (t < r.first) r.first = t;
            if (t > r.last) r.last = t;
          }
        });
      }
      const traces: Trace[] = accepted.map((p) => {
        const r = receipts.get(p.seq!);
        return {
          seq: p.seq!,
          at: p.t0 - start,
          post: p.t1 - p.t0,
          firstViewer: r ? r.first - p.t0 : NaN,
          lastViewer: r ? r.last - p.t0 : NaN,
        };
      });
      out.push({ round, traces });
      const leg = (name: string, xs: number[]) =>
        `${name.padEnd(34)} p50 ${percentile(xs, 50).toFixed(1).padStart(6)}  p90 ${percentile(xs, 90).toFixed(1).padStart(6)}  p99 ${percentile(xs, 99).toFixed(1).padStart(6)}  max ${Math.max(
          ...xs,
        )
          .toFixed(1)
          .padStart(6)} ms`;
      const cores = Object.entries(cpu.perProcess)
        .map(([k, v]) => `${k} ${(v / cpu.wallSeconds).toFixed(2)}`)
        .join(', ');
      console.log(
        `\nround ${round}: ${accepted.length} of ${posts.length} posts accepted at ${rate}/s ${values.direct ? 'straight to workerd' : 'through the front port'}; CPU: ${cores}; ${statusLine(posts)}`,
      );
      const rss = (pid: number | undefined) => ((pid === undefined ? 0 : (memory(pid)?.rss ?? 0)) / 2 ** 20).toFixed(0);
      console.log(
        `RSS after the round: workerd (Worker) ${rss(dev.workerPid)} MiB, workerd (proxy) ${rss(dev.proxyPid)} MiB, wrangler ${rss(dev.wranglerPid)} MiB, viewers ${rss(viewers.pid)} MiB`,
      );
      if (values['heap-snapshot'] && round === 1) {
        // What the Worker's isolate keeps alive (what a major GC marks), by kind and name.
        const targets = await inspectorTargets(dev.workerPid, INSPECTOR);
        const { total, rows, strings } = await heapSnapshotSummary(targets.get('worker')!, () => isUp(dev.url, TOKEN));
        console.log(
          `heap snapshot of the Worker's isolate: ${(total / 2 ** 20).toFixed(2)} MiB in ${rows.reduce((n, r) => n + r.count, 0)} objects; the largest by kind and name:`,
        );
        for (const r of rows.slice(0, 40))
          console.log(`  ${(r.bytes / 1024).toFixed(0).padStart(7)} KiB ${String(r.count).padStart(7)}  ${r.kind} ${r.name}`);
        console.log('the largest strings:');
        for (const r of strings) console.log(`  ${(r.bytes / 1024).toFixed(0).padStart(7)} KiB  ${r.name}`);
      }
      if (values.heap) {
        const targets = await inspectorTargets(dev.workerPid, INSPECTOR);
        // The Worker's isolate first (wrangler's relay serves one session at a time); in later rounds the
        // relay has been seen not to answer: then the figure is left out.
        const sampler = await HeapSampler.open(targets.get('worker')!);
        const live = await sampler.baseline(100, () => isUp(dev.url, TOKEN)).catch(() => Number.NaN);
        sampler.close();
        targets.delete('worker');
        const heaps = await heapUsage(targets);
        console.log(`V8 heap in use after the round: ${[...heaps].map(([k, v]) => `${k} ${(v / 2 ** 20).toFixed(1)} MiB`).join(', ')}`);
        // What a major GC has to mark: the heap left after a collection (the rooms run in the Worker's isolate).
        console.log(`V8 heap live after a collection: worker ${(live / 2 ** 20).toFixed(2)} MiB`);
      }
      console.log(
        `(the phase's first POST at CLOCK_MONOTONIC ${(start / 1000).toFixed(6)} s, workerd pid ${dev.workerPid}, viewers pid ${viewers.pid})`,
      );
      console.log(
        leg(
          'POST start -> answer',
          traces.map((t) => t.post),
        ),
      );
      console.log(
        leg(
          'POST start -> first viewer',
          traces.map((t) => t.firstViewer),
        ),
      );
      console.log(
        leg(
          'POST start -> last viewer',
          traces.map((t) => t.lastViewer),
        ),
      );
      console.log(
        leg(
          'first viewer -> last viewer',
          traces.map((t) => t.lastViewer - t.firstViewer),
        ),
      );
      const frames = collected.reports.reduce((n, r) => n + r.frames, 0);
      const received = collected.reports.reduce((n, r) => n + r.seqs.length, 0);
      console.log(`messages per frame (mean over the viewers): ${(received / Math.max(1, frames)).toFixed(2)}`);
      const p99 = percentile(
        traces.map((t) => t.lastViewer),
        99,
      );
      const slow = traces.filter((t) => t.lastViewer >= p99).sort((a, b) => a.at - b.at);
      console.log(
        `messages at or over the p99 (${p99.toFixed(1)} ms), on the timeline (ms since the first POST: answer / first / last viewer):`,
      );
      for (const t of slow)
        console.log(
          `  ${t.at.toFixed(0).padStart(6)}  seq ${String(t.seq).padStart(5)}  ${t.post.toFixed(1)} / ${t.firstViewer.toFixed(1)} / ${t.lastViewer.toFixed(1)}`,
        );
      // Per 500 ms of the phase: the worst last-viewer time, to see a stall that recurs.
      const slots = new Map<number, number>();
      for (const t of traces) slots.set(Math.floor(t.at / 500), Math.max(slots.get(Math.floor(t.at / 500)) ?? 0, t.lastViewer));
      console.log(
        `worst last-viewer time per 500 ms: ${[...slots.entries()]
          .sort((a, b) => a[0] - b[0])
          .map(([, v]) => v.toFixed(0))
          .join(' ')}`,
      );
      if (profiles) {
        for (const [name, profile] of profiles)
          printStretches(name, profile, start, (url, line) => (url.includes('index.js') ? bundled(line) : url));
      }
      if (allocations) {
        const total = allocations.reduce((n, [, b]) => n + b, 0);
        console.log(
          `worker: ${(total / 2 ** 20).toFixed(1)} MiB sampled as allocated in the round (${(total / accepted.length / 1024).toFixed(1)} KiB a post); the largest:`,
        );
        for (const [where, b] of allocations.slice(0, 25)) console.log(`  ${(b / 2 ** 20).toFixed(2).padStart(7)} MiB  ${where}`);
      }
    }
  } finally {
    const errors = errorLines(dev.log());
    if (errors.length > 0) console.log(`\nthe Worker logged ${errors.length} error lines; the first:\n${errors.slice(0, 20).join('\n')}`);
    viewers.kill();
    await dev.stop();
    rmSync(persistTo, { recursive: true, force: true });
  }
  writeFileSync(path.join(DATA_DIR, 'steady-trace.json'), JSON.stringify(out));
}

/**
 * Busy stretches of an isolate longer than 5 ms (JS or GC samples with no gap over 1 ms), on the phase's
 * timeline (V8's profile clock is CLOCK_MONOTONIC in µs, the clock of nowMs()), with what filled them.
 */
function printStretches(name: string, profile: CdpProfile, phaseStart: number, moduleOf: (url: string, line: number) => string): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  let t = profile.startTime;
  type Stretch = { from: number; to: number; self: Map<string, number> };
  const stretches: Stretch[] = [];
  let current: Stretch | undefined;
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    const f = byId.get(profile.samples[i]!)!.callFrame;
    // workerd's isolate is sampled while the thread runs other isolates or native work too, as
    // "(program)": neither counts as this isolate being busy.
    if (f.functionName === '(idle)' || f.functionName === '(program)') {
      if (current && t - current.to > 1000) {
        if (current.to - current.from > 5000) stretches.push(current);
        current = undefined;
      }
      continue;
    }
    const dt = profile.timeDeltas[i + 1] ?? 0;
    busy += dt;
    const label = f.url ? `${f.functionName || '(anonymous)'} @ ${moduleOf(f.url, f.lineNumber)}` : f.functionName;
    if (!current) current = { from: t, to: t, self: new Map() };
    current.to = t + dt;
    current.self.set(label, (current.self.get(label) ?? 0) + dt);
  }
  if (current && current.to - current.from > 5000) stretches.push(current);
  console.log(`${name}: busy ${(busy / 1000).toFixed(0)} ms of ${((t - profile.startTime) / 1000).toFixed(0)} ms; stretches over 5 ms:`);
  for (const s of stretches) {
    const top = [...s.self]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)}`)
      .join('; ');
    console.log(`  ${(s.from / 1000 - phaseStart).toFixed(0).padStart(6)} +${((s.to - s.from) / 1000).toFixed(1)} ms: ${top}`);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
