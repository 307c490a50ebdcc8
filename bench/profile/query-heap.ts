/**
 * `npx tsx bench/profile/query-heap.ts [--size quick|200k|1m] [--runs N] [--only a,b,w1] [--fresh] [--every MS] [--persist DIR] [--burst N] [--direct]`
 *
 * The Worker isolate's V8 heap per aggregate query (issue 24: every query, the worst shape the
 * limits allow included, within a deployed Worker's 128 MB). Serves the bench's ingested data (the
 * analytics scenario's local D1 of that size: run `npm run bench` once, or `--persist DIR`) from the
 * benchmark's Worker snapshot under `wrangler dev`, opens one inspector session on the Worker's
 * isolate, and for each query and run: collects garbage (`HeapProfiler.collectGarbage`) and reads
 * the heap in use (before), samples `Runtime.getHeapUsage` every `--every` ms (25) while the
 * request runs (peak; garbage not yet collected counts, so an upper bound), reads it again as the
 * answer's last byte arrives (after) and after a collection (retained). Also the Worker workerd's
 * RSS. Queries: a–i of the bench, then the worst shapes the limits allow (`w…`, ANALYTICS_LIMITS):
 * the raw bound with every metric, the most groups, the finest granularity over the widest interval
 * it allows, multi-valued groupBy expansion, a rollup read over the widest interval, and an aggregate
 * job of the worst unit. Writes bench/data/query-heap-<size>.json and prints a table. `--burst N`
 * instead runs each case N times back to back as the bench's timing does (no collection forced in
 * between), printing after each the heap in use and the RSS of the Worker's workerd and of
 * wrangler's proxy workerd: memory that grows outside the isolate shows there. `--direct` sends the
 * queries to the Worker's workerd port instead of wrangler's front port.
 *
 * The sampler answers between the isolate's turns (a query pauses every ~1,000 units of work,
 * query/pace.ts), so a peak inside one long synchronous step can be missed; the retained figure and
 * the RSS catch what stays.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ANALYTICS_LIMITS } from '../../src/analytics/limits';
import { isUp } from '../lib/http';
import { memory } from '../lib/proc';
import { agents, DATA_DIR, FULL_SIM, QUICK_SIM, specKey, type SimSpec } from '../lib/sim';
import { findStoreDir } from '../lib/store';
import { migrate, snapshotWorker, startDev } from '../lib/wrangler';
import { benchQueries, type BenchQuery } from '../peers/queries';
import { HeapSampler, inspectorTargets } from './inspector';

const PORT = 8846;
const INSPECTOR = 8847;
const TOKEN = 'sbt_bench_query_heap';
const QUERY_PATH = '/api/v2/analytics/conversations/aggregates/query';
const JOBS_PATH = '/api/v2/analytics/conversations/aggregates/jobs';
const DAY = 86_400_000;
const MiB = 1024 ** 2;

const SIZES: Record<string, SimSpec> = {
  quick: QUICK_SIM,
  '200k': { ...FULL_SIM, conversations: 200_000 },
  '1m': FULL_SIM,
};

export interface HeapCase {
  id: string;
  title: string;
  body: Record<string, unknown>;
  /** Submitted as an aggregate job (the unit's heap is measured while it runs), not as a query. */
  job?: boolean;
}

/**
 * The worst shapes the limits allow, on data of `spec` (its intervals end where the data ends). Each
 * one presses one bound: it answers at the bound or is refused by it.
 */
/**
 * A view judges single observations, which only the raw rows keep: it holds a query to the raw path. (Grouping
 * by wrapUpCode no longer did once the dimension cube and its projections answered any dimension.)
 */
const RAW_VIEW = [{ target: 'tHandle', name: 'over5min', function: 'rangeBound', range: { gte: 300_000 } }];

export function worstShapes(spec: SimSpec): HeapCase[] {
  const end = Date.parse(spec.end);
  const iso = (ms: number) => new Date(ms).toISOString();
  const perDay = spec.conversations / spec.days;
  // Days whose conversations stay just under the raw bound (and within the data).
  const rawDays = Math.max(1, Math.min(spec.days, Math.floor((0.9 * ANALYTICS_LIMITS.maxRawConversations) / perDay)));
  // Days holding about as many conversations as an answer may have groups.
  const groupDays = Math.max(1, Math.min(spec.days, Math.floor((0.9 * ANALYTICS_LIMITS.maxGroups) / perDay)));
  const finestDays = Math.floor((ANALYTICS_LIMITS.maxBuckets * ANALYTICS_LIMITS.minGranularityMs) / DAY);
  const widest = ANALYTICS_LIMITS.maxIntervalDays;
  return [
    {
      id: 'w1',
      title: `raw bound: ${rawDays} days, P1D, groupBy queueId wrapUpCode, every metric and a view (only the raw rows answer a view)`,
      body: {
        interval: `${iso(end - rawDays * DAY)}/${iso(end)}`,
        granularity: 'P1D',
        groupBy: ['queueId', 'wrapUpCode'],
        views: RAW_VIEW,
      },
    },
    {
      id: 'w2',
      title: `raw bound and answer cells: ${rawDays} days, PT1H, groupBy userId wrapUpCode, every metric and a view`,
      body: {
        interval: `${iso(end - rawDays * DAY)}/${iso(end)}`,
        granularity: 'PT1H',
        groupBy: ['userId', 'wrapUpCode'],
        views: RAW_VIEW,
      },
    },
    {
      id: 'w3',
      title: `most groups: ${groupDays} days, P1D, groupBy conversationId, nConnected`,
      body: {
        interval: `${iso(end - groupDays * DAY)}/${iso(end)}`,
        granularity: 'P1D',
        groupBy: ['conversationId'],
        metrics: ['nConnected'],
      },
    },
    {
      id: 'w4',
      title: `finest granularity, widest interval: ${finestDays} days, PT1M, every metric`,
      body: { interval: `${iso(end - finestDays * DAY)}/${iso(end)}`, granularity: 'PT1M' },
    },
    {
      id: 'w5',
      title: `multi-valued expansion: ${rawDays} days, P1D, groupBy divisionId requestedRoutingSkillId (per value), every metric`,
      body: {
        interval: `${iso(end - rawDays * DAY)}/${iso(end)}`,
        granularity: 'P1D',
        groupBy: ['divisionId', 'requestedRoutingSkillId'],
      },
    },
    {
      id: 'w6',
      title: `rollup, widest interval: ${widest} days, P1D, groupBy queueId userId, every metric`,
      body: { interval: `${iso(end - widest * DAY)}/${iso(end)}`, granularity: 'P1D', groupBy: ['queueId', 'userId'] },
    },
    {
      id: 'w7',
      title: `rollup, finest aligned granularity: ${Math.floor((ANALYTICS_LIMITS.maxBuckets * 15 * 60_000) / DAY)} days, PT15M, groupBy queueId, every metric`,
      body: {
        interval: `${iso(end - Math.floor((ANALYTICS_LIMITS.maxBuckets * 15 * 60_000) / DAY) * DAY)}/${iso(end)}`,
        granularity: 'PT15M',
        groupBy: ['queueId'],
      },
    },
    {
      id: 'w8',
      title: `aggregate job of the raw bound's shape: ${rawDays} days, PT1H, groupBy userId wrapUpCode, every metric and a view`,
      body: {
        interval: `${iso(end - rawDays * DAY)}/${iso(end)}`,
        granularity: 'PT1H',
        groupBy: ['userId', 'wrapUpCode'],
        views: RAW_VIEW,
      },
      job: true,
    },
    {
      id: 'w10',
      title: `aggregate job of the widest rollup read: w6 (${widest} days, P1D, groupBy queueId userId, every metric) as a job`,
      body: { interval: `${iso(end - widest * DAY)}/${iso(end)}`, granularity: 'P1D', groupBy: ['queueId', 'userId'] },
      job: true,
    },
    {
      id: 'w9',
      title: `dimension cube, widest read: ${widest} days, PT1H, groupBy requestedRoutingSkillId (its whole lists), every metric`,
      body: { interval: `${iso(end - widest * DAY)}/${iso(end)}`, granularity: 'PT1H', groupBy: ['requestedRoutingSkillId'] },
    },
  ];
}

export interface HeapRun {
  status: number;
  ms: number;
  bytes: number;
  source: string;
  beforeMiB: number;
  peakMiB: number;
  /** In use as the answer arrived, before any collection. */
  afterMiB: number;
  /** In use after a collection: what the query left behind. */
  retainedMiB: number;
  rssMiB: number;
  message?: string;
}

/** A request sent again once when a kept-alive socket was closed under the client before any answer (ECONNRESET). */
async function retried(send: () => Promise<Response>): Promise<Response> {
  try {
    return await send();
  } catch (err) {
    if (!(err instanceof Error && err.cause instanceof Error && /ECONNRESET|socket|other side closed/i.test(err.cause.message))) throw err;
    return send();
  }
}

async function runQuery(
  base: string,
  token: string,
  c: HeapCase,
): Promise<Omit<HeapRun, 'beforeMiB' | 'peakMiB' | 'afterMiB' | 'retainedMiB' | 'rssMiB'>> {
  const t0 = performance.now();
  const res = await retried(() =>
    fetch(base + QUERY_PATH, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Accept-Encoding': 'identity' },
      body: JSON.stringify(c.body),
    }),
  );
  const text = await res.text();
  const ms = performance.now() - t0;
  const source = res.headers.get('Switchboard-Query-Source') ?? '-';
  const message = res.ok ? undefined : ((JSON.parse(text) as { message?: string }).message ?? text).slice(0, 160);
  return { status: res.status, ms, bytes: Buffer.byteLength(text), source, ...(message ? { message } : {}) };
}

/** Submits a job and waits for it to finish (or fail); the status is the job's final state's HTTP-like summary. */
async function runJob(
  base: string,
  token: string,
  c: HeapCase,
): Promise<Omit<HeapRun, 'beforeMiB' | 'peakMiB' | 'afterMiB' | 'retainedMiB' | 'rssMiB'>> {
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const t0 = performance.now();
  const submit = await retried(() => fetch(base + JOBS_PATH, { method: 'POST', headers, body: JSON.stringify(c.body) }));
  const submitted = (await submit.json()) as { jobId?: string; message?: string };
  if (!submitted.jobId) return { status: submit.status, ms: performance.now() - t0, bytes: 0, source: 'job', message: submitted.message };
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    // Polls too can find their kept-alive socket closed while the job's alarm holds the isolate: sent again once.
    const res = await retried(() => fetch(`${base}${JOBS_PATH}/${submitted.jobId}`, { headers }));
    const state = (await res.json()) as { state: string; errorMessage?: string };
    if (state.state === 'FULFILLED' || state.state === 'FAILED' || state.state === 'EXPIRED' || performance.now() - t0 > 600_000) {
      return {
        status: state.state === 'FULFILLED' ? 200 : 500,
        ms: performance.now() - t0,
        bytes: 0,
        source: `job ${state.state}`,
        ...(state.errorMessage ? { message: state.errorMessage.slice(0, 160) } : {}),
      };
    }
  }
}

/** Measures each case `runs` times on a running dev server through one heap sampler. */
export async function measureHeap(
  base: string,
  token: string,
  workerPid: number,
  heap: HeapSampler,
  cases: HeapCase[],
  runs: number,
  everyMs: number,
  log: (line: string) => void,
): Promise<Record<string, HeapRun[]>> {
  const out: Record<string, HeapRun[]> = {};
  const poke = () => isUp(base, token);
  for (const c of cases) {
    out[c.id] = [];
    for (let run = 0; run < runs; run++) {
      const before = await heap.baseline(everyMs, poke);
      const r = await (c.job ? runJob(base, token, c) : runQuery(base, token, c)).catch((err: unknown) => ({
        status: 0,
        ms: Number.NaN,
        bytes: 0,
        source: '-',
        message: `no answer: ${err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err)}`,
      }));
      const peak = heap.stop();
      const after = await heap.now();
      const retained = await heap.baseline(everyMs, poke);
      heap.stop();
      const row: HeapRun = {
        ...r,
        beforeMiB: before / MiB,
        peakMiB: Math.max(peak, after) / MiB,
        afterMiB: after / MiB,
        retainedMiB: retained / MiB,
        rssMiB: (memory(workerPid)?.rss ?? Number.NaN) / MiB,
      };
      out[c.id]!.push(row);
      log(
        `${c.id} run ${run + 1}: ${row.status} ${row.ms.toFixed(0)} ms ${(row.bytes / 1024).toFixed(0)} KiB ${row.source}; heap before ${row.beforeMiB.toFixed(1)} peak ${row.peakMiB.toFixed(1)} after ${row.afterMiB.toFixed(1)} retained ${row.retainedMiB.toFixed(1)} MiB; RSS ${row.rssMiB.toFixed(0)} MiB${row.message ? ` — ${row.message}` : ''}`,
      );
    }
  }
  return out;
}

/** Each case `n` times back to back, the sampler running throughout (one collection before each case). */
async function burst(base: string, workerPid: number, proxyPid: number, heap: HeapSampler, cases: HeapCase[], n: number, everyMs: number) {
  const rss = (pid: number) => ((memory(pid)?.rss ?? Number.NaN) / MiB).toFixed(0);
  for (const c of cases) {
    await heap.baseline(everyMs, () => isUp(base, TOKEN));
    for (let i = 1; i <= n; i++) {
      const r = await runQuery(base, TOKEN, c).catch((err: unknown) => ({
        status: 0,
        ms: Number.NaN,
        bytes: 0,
        source: '-',
        message: `no answer: ${err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err)}`,
      }));
      console.log(
        `${c.id} #${i}: ${r.status} ${r.ms.toFixed(0)} ms; heap now ${((await heap.now()) / MiB).toFixed(1)} MiB, peak so far ${(heap.peak() / MiB).toFixed(1)}; RSS Worker workerd ${rss(workerPid)} MiB, proxy workerd ${rss(proxyPid)} MiB${r.message ? ` — ${r.message}` : ''}`,
      );
      if (r.status === 0) return;
    }
    heap.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      size: { type: 'string' },
      runs: { type: 'string' },
      only: { type: 'string' },
      fresh: { type: 'boolean' },
      every: { type: 'string' },
      persist: { type: 'string' },
      snapshot: { type: 'string' },
      burst: { type: 'string' },
      direct: { type: 'boolean' },
    },
  });
  const size = values.size ?? 'quick';
  const spec = SIZES[size];
  if (!spec) throw new Error(`--size: one of ${Object.keys(SIZES).join(', ')}`);
  const runs = Number(values.runs ?? 2);
  const everyMs = Number(values.every ?? 25);
  const persistTo = values.persist ? path.resolve(values.persist) : findStoreDir(`d1-${specKey(spec)}`);
  if (!existsSync(path.join(persistTo, 'bench-ingested.json')))
    throw new Error(`no ingested data in ${persistTo}: run npm run bench first`);
  await migrate(persistTo);
  const buildDir = values.snapshot ? path.resolve(values.snapshot) : path.join(DATA_DIR, 'build');
  const { config, builtAt } = snapshotWorker(buildDir, values.fresh !== true);
  const agentId = agents(spec)[0]!.id;
  const only = values.only?.split(',');
  const cases: HeapCase[] = [
    ...benchQueries(spec.end, agentId).map((q: BenchQuery) => ({ id: q.id, title: q.title, body: q.body })),
    ...worstShapes(spec),
  ].filter((c) => !only || only.includes(c.id));

  const dev = await startDev({
    config,
    port: PORT,
    inspectorPort: INSPECTOR,
    persistTo,
    vars: { ADMIN_TOKEN: TOKEN },
    ready: (base) => isUp(base, TOKEN),
  });
  let results: Record<string, HeapRun[]> = {};
  try {
    console.log(`query-heap: ${size} (${persistTo}), Worker snapshot built ${builtAt}, workerd ${dev.workerPid}`);
    const heap = await HeapSampler.open((await inspectorTargets(dev.workerPid, INSPECTOR)).get('worker')!, true);
    try {
      const base = values.direct ? dev.directUrl : dev.url;
      if (!base) throw new Error("--direct: workerd's own port was not found");
      if (values.burst) await burst(base, dev.workerPid, dev.proxyPid, heap, cases, Number(values.burst), everyMs);
      else results = await measureHeap(dev.url, TOKEN, dev.workerPid, heap, cases, runs, everyMs, (line) => console.log(line));
    } finally {
      heap.close();
    }
    if (dev.restarts() > 0) console.log('WARNING: wrangler restarted workerd during the run');
  } finally {
    await dev.stop();
  }
  if (values.burst) return;
  const file = path.join(DATA_DIR, `query-heap-${size}.json`);
  writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), size, spec, builtAt, everyMs, cases, results }, null, 1));
  console.log(`\n| query | status | ms | answer KiB | heap before | peak | retained (MiB) | RSS MiB |`);
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const c of cases) {
    const rs = results[c.id] ?? [];
    if (rs.length === 0) continue;
    const worst = rs.reduce((a, b) => (b.peakMiB > a.peakMiB ? b : a));
    console.log(
      `| ${c.id}) ${c.title} | ${worst.status} | ${worst.ms.toFixed(0)} | ${(worst.bytes / 1024).toFixed(0)} | ${worst.beforeMiB.toFixed(1)} | ${worst.peakMiB.toFixed(1)} | ${Math.max(...rs.map((r) => r.retainedMiB)).toFixed(1)} | ${Math.max(...rs.map((r) => r.rssMiB)).toFixed(0)} |`,
    );
  }
  console.log(`\nwritten to ${file}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
