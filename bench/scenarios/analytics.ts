/**
 * Scenarios 1 and 2 of issue 4, over one simulated dataset ingested through the real endpoint of
 * `wrangler dev` (local D1):
 * 2. ingest rate with 1,000-conversation batches and the D1 bytes per conversation (the ingest
 *    runs first: scenario 1 needs the data), against a plain insert of raw rows on the same path;
 * 1. queries a–d end to end over HTTP against DuckDB and plain SQLite over the same observations,
 *    each peer's answer checked equal to the Worker's before anything is timed.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AggregateResponse } from '../../test/support/reference-aggregator';
import { api, isUp } from '../lib/http';
import { ingestRecords, prepareBodies, prepareIngestBodies, type IngestRun, type PreparedBodies } from '../lib/ingest-client';
import { CpuMeter, threadCpuSeconds } from '../lib/proc';
import { progress, type Results } from '../lib/results';
import { agents, DATA_DIR, records, specKey, type SimSpec } from '../lib/sim';
import { storeDir, storeKind } from '../lib/store';
import { d1File, measureFootprint, type Footprint } from '../lib/sqlite-file';
import { percentile, timeRuns, type Timing } from '../lib/stats';
import { migrate, peakRss, queryLocal, ROOT, startDev, type DevServer } from '../lib/wrangler';
import { CUBE_INCOMPLETE_KEY } from '../../src/analytics/rollups';
import { openDuckDb, openSqlite, type PeerEngine } from '../peers/engines';
import { HeapSampler, inspectorTargets } from '../profile/inspector';
import { measureHeap, worstShapes, type HeapCase } from '../profile/query-heap';
import { preparePeerData, rowsOf } from '../peers/observations';
import {
  assemble,
  benchQueries,
  canonicalJson,
  firstDifference,
  peerPlan,
  type BenchQuery,
  type ServiceLevelSettings,
} from '../peers/queries';

export const ANALYTICS_PORT = 8820;
const ANALYTICS_INSPECTOR = 8829;
const RAW_PORT = 8823;
const RAW_INSPECTOR = 8826;

const INGEST_PATH = '/api/v2/analytics/conversations/details/ingest';
const QUERY_PATH = '/api/v2/analytics/conversations/aggregates/query';
const D1_CAPACITY_BYTES = 10 * 1000 ** 3;
/** The simulator's default staffing: 500 agents handle 1,000,000 conversations in 30 days. */
const CENTER_CONVERSATIONS_PER_DAY = 1_000_000 / 30;
const DAYS_PER_MONTH = 365.25 / 12;

export interface AnalyticsContext {
  results: Results;
  quick: boolean;
  spec: SimSpec;
  token: string;
  workerConfig: string[];
  reuse: boolean;
  inFlight: number;
  runs: number;
  rawPeerConversations: number;
  detail: Record<string, unknown>;
  /** The results' scenario name for the queries (default "1 query"; the smaller size's run has its own). */
  queryScenarioName?: string;
}

interface IngestMarker {
  spec: SimSpec;
  date: string;
  run: Omit<IngestRun, 'latencies'> & { p50: number; p95: number };
  cpu: ReturnType<CpuMeter['stop']>;
  workerdPeakRss: number;
  /** The Worker's workerd, busiest threads since it started (is it one thread?). */
  threads?: { tid: number; name: string; seconds: number }[];
  footprint: Footprint;
}

const mb = (bytes: number) => bytes / 1024 ** 2;

function persistDir(spec: SimSpec): string {
  return storeDir(`d1-${specKey(spec)}`);
}

function devFor(ctx: AnalyticsContext, persistTo: string): Promise<DevServer> {
  return startDev({
    config: ctx.workerConfig,
    port: ANALYTICS_PORT,
    inspectorPort: ANALYTICS_INSPECTOR,
    persistTo,
    vars: { ADMIN_TOKEN: ctx.token },
    ready: (base) => isUp(base, ctx.token),
  });
}

// ---------------------------------------------------------------------------------------------
// Scenario 2: ingest and footprint

/**
 * Ingests the simulation (or reuses an earlier ingest of the same simulation); with `report`,
 * reports scenario 2 and runs its plain-insert peer.
 */
export async function ingestScenario(ctx: AnalyticsContext, report: boolean): Promise<void> {
  const persistTo = persistDir(ctx.spec);
  const markerPath = path.join(persistTo, 'bench-ingested.json');
  let marker: IngestMarker | undefined;
  if (ctx.reuse && existsSync(markerPath)) {
    const found = JSON.parse(readFileSync(markerPath, 'utf8')) as IngestMarker;
    if (JSON.stringify(found.spec) === JSON.stringify(ctx.spec)) {
      marker = found;
      progress(`ingest: reusing the ingest of ${found.date} in ${persistTo} (its figures are reported)`);
    }
  }
  if (!marker) marker = await ingestFresh(ctx, persistTo, markerPath);
  if (!report) return;
  reportIngest(ctx, marker);
  await rawInsertPeer(ctx, marker);
  // Full runs only: --quick stays under two minutes.
  if (storeKind() === 'memory' && !ctx.quick) await ingestOnDisk(ctx, marker);
}

/**
 * The first conversations of the same simulation into a fresh D1 on disk: what wrangler dev's
 * fsync of every commit, on the thread that runs the Worker, costs here (bench/lib/store.ts).
 * Compared with the memory run's own rate over its first as many conversations (its progress marks).
 */
async function ingestOnDisk(ctx: AnalyticsContext, m: IngestMarker): Promise<void> {
  const n = Math.min(ctx.rawPeerConversations, ctx.spec.conversations);
  const mark = m.run.marks?.find(([conversations]) => conversations >= n);
  const persistTo = storeDir(`d1-disk-${n}`, 'disk');
  rmSync(persistTo, { recursive: true, force: true });
  mkdirSync(persistTo, { recursive: true });
  await migrate(persistTo);
  const bodies = prepareIngestBodies(firstOf(records(ctx.spec), n), { batchSize: 1000, total: n, label: 'ingest on disk' });
  const dev = await devFor(ctx, persistTo);
  let run: IngestRun;
  let cpu: ReturnType<CpuMeter['stop']>;
  try {
    progress(`ingest, storage on disk: the first ${n.toLocaleString('en-US')} conversations into ${persistTo}`);
    const meter = new CpuMeter(() => ({ 'workerd (Worker)': dev.workerPid }));
    run = await ingestRecords(dev.url + INGEST_PATH, ctx.token, bodies, { total: n, inFlight: ctx.inFlight, label: 'ingest on disk' });
    cpu = meter.stop();
  } finally {
    await dev.stop();
    rmSync(persistTo, { recursive: true, force: true });
  }
  const rate = run.conversations / run.seconds;
  const workerd = (cpu.perProcess['workerd (Worker)'] ?? NaN) / cpu.wallSeconds;
  ctx.results.add({
    scenario: '2 ingest',
    metric: `conversations/s, the first ${n.toLocaleString('en-US')}, local storage on disk (workerd busy ${workerd.toFixed(2)} cores)`,
    value: rate,
    unit: 'conv/s',
    ...(mark ? { peer: `the same in memory, this run (first ${mark[0].toLocaleString('en-US')})`, peerValue: mark[0] / mark[1] } : {}),
  });
  ctx.detail.ingestOnDisk = { conversations: n, seconds: run.seconds, cpu, memoryMark: mark };
}

async function ingestFresh(ctx: AnalyticsContext, persistTo: string, markerPath: string): Promise<IngestMarker> {
  rmSync(persistTo, { recursive: true, force: true });
  mkdirSync(persistTo, { recursive: true });
  progress(`ingest: migrating a fresh local D1 in ${persistTo}`);
  await migrate(persistTo);
  const bodies = prepareIngestBodies(records(ctx.spec), { batchSize: 1000, total: ctx.spec.conversations, label: 'ingest' });
  const dev = await devFor(ctx, persistTo);
  try {
    progress(`ingest: wrangler dev on ${dev.url} (workerd pid ${dev.workerPid}, its own port ${dev.directUrl ?? 'not reachable'})`);
    const meter = new CpuMeter(() => ({
      'workerd (Worker)': dev.workerPid,
      'workerd (proxy)': dev.proxyPid,
      'wrangler (node)': dev.wranglerPid,
    }));
    const run = await ingestRecords(dev.url + INGEST_PATH, ctx.token, bodies, {
      total: ctx.spec.conversations,
      inFlight: ctx.inFlight,
      label: 'ingest',
    });
    const cpu = meter.stop();
    const workerdPeakRss = peakRss(dev.workerPid);
    const threads = threadCpuSeconds(dev.workerPid).filter((t) => t.seconds > 0);
    if (dev.restarts() > 0) progress(`ingest: WARNING wrangler restarted workerd ${dev.restarts()} time(s) during the run`);
    await dev.stop();
    progress('ingest: measuring the D1 file (WAL checkpointed)');
    const footprint = measureFootprint(d1File(persistTo), [
      'conversations',
      'agg_media',
      'agg_queue',
      'agg_user',
      'agg_user_more',
      'dim_values',
    ]);
    const { latencies, ...rest } = run;
    const marker: IngestMarker = {
      spec: ctx.spec,
      date: new Date().toISOString(),
      run: { ...rest, p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
      cpu,
      workerdPeakRss,
      threads,
      footprint,
    };
    writeFileSync(markerPath, JSON.stringify(marker, null, 2));
    return marker;
  } catch (err) {
    progress(`ingest failed; wrangler's output:\n${dev.log().slice(-4000)}`);
    throw err;
  } finally {
    await dev.stop();
  }
}

function reportIngest(ctx: AnalyticsContext, m: IngestMarker): void {
  const r = ctx.results;
  const s = '2 ingest';
  const rate = m.run.conversations / m.run.seconds;
  ctx.detail.ingest = m;
  r.add({
    scenario: s,
    metric: `conversations/s (${m.run.conversations.toLocaleString('en-US')} in batches of 1,000, ${ctx.inFlight} in flight)`,
    value: rate,
    unit: 'conv/s',
    target: '>= 10,000',
    met: rate >= 10_000,
  });
  r.add({ scenario: s, metric: 'observations/s', value: m.run.observations / m.run.seconds, unit: 'obs/s' });
  r.add({ scenario: s, metric: 'request time per 1,000 conversations, p50', value: m.run.p50, unit: 'ms' });
  r.add({ scenario: s, metric: 'request time per 1,000 conversations, p95', value: m.run.p95, unit: 'ms' });
  for (const [name, seconds] of Object.entries(m.cpu.perProcess)) {
    r.add({ scenario: s, metric: `CPU during ingest: ${name}`, value: seconds / m.cpu.wallSeconds, unit: 'cores' });
  }
  const ours = Object.values(m.cpu.perProcess).reduce((a, b) => a + b, 0);
  r.add({
    scenario: s,
    metric: 'CPU during ingest: other processes on the machine',
    value: Math.max(0, m.cpu.machineBusy - ours) / m.cpu.wallSeconds,
    unit: 'cores',
  });
  if (m.run.retries > 0) r.add({ scenario: s, metric: 'batches sent again after a 503', value: m.run.retries, unit: 'batches' });
  r.add({ scenario: s, metric: 'workerd peak RSS during ingest', value: mb(m.workerdPeakRss), unit: 'MiB' });
  const workerdCpu = m.cpu.perProcess['workerd (Worker)'];
  if (workerdCpu)
    r.add({
      scenario: s,
      metric: "conversations per CPU-second of the Worker's workerd (independent of other load)",
      value: m.run.conversations / workerdCpu,
      unit: 'conv/CPU-s',
    });
  if (m.threads && m.threads.length > 0) {
    const total = m.threads.reduce((a, t) => a + t.seconds, 0);
    r.add({
      scenario: s,
      metric: `share of workerd's CPU on its busiest thread (${m.threads[0]!.name})`,
      value: m.threads[0]!.seconds / total,
      unit: 'fraction',
    });
  }

  const n = m.run.conversations;
  const perConv = m.footprint.bytes / n;
  r.add({
    scenario: s,
    metric: 'D1 bytes per conversation (file after checkpoint)',
    value: perConv,
    unit: 'B/conv',
    target: '<= 1,000',
    met: perConv <= 1000,
  });
  const byTable = new Map<string, number>();
  for (const o of m.footprint.objects) byTable.set(`${o.table}${o.kind === 'index' ? ` (index ${o.name})` : ''}`, o.bytes);
  for (const [name, bytes] of [...byTable].sort((a, b) => b[1] - a[1]).slice(0, 8)) {
    r.add({ scenario: s, metric: `  of which ${name}`, value: bytes / n, unit: 'B/conv' });
  }
  const perMonth = CENTER_CONVERSATIONS_PER_DAY * DAYS_PER_MONTH;
  const months = D1_CAPACITY_BYTES / (perConv * perMonth);
  r.add({ scenario: s, metric: 'months of a 500-agent center (~1.0 M conversations/month) in 10 GB D1', value: months, unit: 'months' });
  ctx.detail.capacity = { bytesPerConversation: perConv, conversationsPerMonth: perMonth, months, d1Bytes: D1_CAPACITY_BYTES };
}

/** The plain-insert peer: raw rows with text dimensions through the same wrangler dev front. */
async function rawInsertPeer(ctx: AnalyticsContext, m: IngestMarker): Promise<void> {
  const n = Math.min(ctx.rawPeerConversations, ctx.spec.conversations);
  const persistTo = storeDir(`raw-insert-${n}`);
  rmSync(persistTo, { recursive: true, force: true });
  mkdirSync(persistTo, { recursive: true });
  const bodies = prepareBodies(firstOf(records(ctx.spec), n), {
    batchSize: 1000,
    total: n,
    label: 'raw-insert peer',
    toBody: (batch) => JSON.stringify({ rows: batch.flatMap((record) => rowsOf(record)) }),
  });
  const dev = await startDev({
    config: path.join(ROOT, 'bench', 'raw-insert-worker', 'wrangler.toml'),
    port: RAW_PORT,
    inspectorPort: RAW_INSPECTOR,
    persistTo,
    ready: async (base) => {
      const res = await fetch(base, { signal: AbortSignal.timeout(3000) });
      await res.arrayBuffer();
      return res.status === 405;
    },
  });
  let run: IngestRun;
  try {
    progress(`raw-insert peer: ${n.toLocaleString('en-US')} conversations as raw rows`);
    run = await postRawRows(dev.url, bodies, n, ctx.inFlight);
  } finally {
    await dev.stop();
  }
  const fp = measureFootprint(d1File(persistTo), ['obs']);
  const rate = run.conversations / run.seconds;
  const ingestRate = m.run.conversations / m.run.seconds;
  const r = ctx.results;
  r.add({
    scenario: '2 ingest',
    metric: 'conversations/s vs plain insert of raw rows (same front, D1)',
    value: ingestRate,
    unit: 'conv/s',
    peer: `raw rows (${n.toLocaleString('en-US')} conv)`,
    peerValue: rate,
  });
  r.add({
    scenario: '2 ingest',
    metric: 'D1 bytes per conversation vs raw rows with text dimensions',
    value: m.footprint.bytes / m.run.conversations,
    unit: 'B/conv',
    peer: 'raw rows + emit index',
    peerValue: fp.bytes / run.conversations,
  });
  ctx.detail.rawInsertPeer = { conversations: n, rows: run.observations, seconds: run.seconds, footprint: fp };
}

/** The first `n` of `items`. */
function* firstOf<T>(items: Iterable<T>, n: number): Generator<T> {
  let i = 0;
  for (const item of items) {
    if (i++ >= n) return;
    yield item;
  }
}

async function postRawRows(base: string, prepared: PreparedBodies, total: number, inFlight: number): Promise<IngestRun> {
  const run: IngestRun = {
    conversations: 0,
    observations: 0,
    duplicates: 0,
    requests: 0,
    retries: 0,
    seconds: 0,
    bodyBytes: 0,
    latencies: [],
    marks: [],
  };
  const started = performance.now();
  const pending = new Set<Promise<void>>();
  let failure: unknown;
  const send = async (body: Buffer, conversations: number) => {
    run.bodyBytes += body.length;
    const t0 = performance.now();
    const task = fetch(base, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body })
      .then(async (res) => {
        const text = await res.text();
        if (!res.ok) throw new Error(`raw insert answered ${res.status}: ${text.slice(0, 500)}`);
        run.latencies.push(performance.now() - t0);
        run.conversations += conversations;
        run.observations += (JSON.parse(text) as { rows: number }).rows;
        run.requests++;
      })
      .catch((err: unknown) => {
        failure ??= err;
      })
      .finally(() => pending.delete(task));
    pending.add(task);
    if (pending.size >= inFlight) await Promise.race(pending);
    if (failure) throw failure;
    if (run.requests % 50 === 0 && run.requests > 0)
      progress(`raw-insert peer: ${run.conversations.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`);
  };
  for (let i = 0; i < prepared.bodies.length; i++) await send(prepared.bodies[i]!, prepared.counts[i]!);
  await Promise.all(pending);
  if (failure) throw failure;
  run.seconds = (performance.now() - started) / 1000;
  return run;
}

// ---------------------------------------------------------------------------------------------
// Scenario 1: aggregate queries

export async function queryScenario(ctx: AnalyticsContext): Promise<void> {
  const persistTo = persistDir(ctx.spec);
  if (!existsSync(path.join(persistTo, 'bench-ingested.json'))) throw new Error('no ingested data: run the ingest scenario first');
  // Data ingested by an earlier schema (--reuse) is upgraded the way a deployment's would be.
  progress('query: applying pending D1 migrations, if any');
  await migrate(persistTo);
  // A migration that adds to the dimension cube marks the database incomplete (0016, 0018, 0019): a deployment
  // then answers from raw rows until the hourly cron's backfill is done. The queries are timed on a whole cube.
  if (queryLocal(persistTo, `SELECT 1 FROM meta WHERE key = '${CUBE_INCOMPLETE_KEY}'`).length > 0) {
    progress('query: a migration since that ingest marked the dimension cube incomplete; ingesting afresh');
    await ingestFresh(ctx, persistTo, path.join(persistTo, 'bench-ingested.json'));
  }
  const peerData = await preparePeerData(ctx.spec);
  progress('query: loading DuckDB');
  const duck = await openDuckDb(peerData, 2);
  const sqlite = openSqlite(peerData);
  const peers: PeerEngine[] = [duck, sqlite];
  const r = ctx.results;
  const scenario = ctx.queryScenarioName ?? '1 query';
  r.add({
    scenario,
    metric: `DuckDB load of ${peerData.observations.toLocaleString('en-US')} observations (CSV)`,
    value: duck.loadSeconds,
    unit: 's',
  });

  let dev = await devFor(ctx, persistTo);
  try {
    progress(`query: wrangler dev on ${dev.url}, workerd's own port ${dev.directUrl ?? 'not reachable'}`);
    const settings = await api<ServiceLevelSettings>(dev.url, ctx.token, 'GET', '/api/v2/analytics/settings/servicelevel');
    const agentId = agents(ctx.spec)[0]!.id;
    const queries = benchQueries(ctx.spec.end, agentId);
    const post = (base: string, q: BenchQuery, encoding?: Encoding) => postQuery(base, ctx.token, q, encoding);
    const details: Record<string, unknown> = {};
    details.heap = await heapPass(ctx, dev, scenario, [
      ...queries.map((q) => ({ id: q.id, title: q.title, body: q.body })),
      ...worstShapes(ctx.spec).filter((c) => !c.job),
    ]);

    for (const q of queries) {
      // A query the dev server dies under (wrangler dev's front workerd, on raw-path queries; see
      // FINDINGS) is recorded as such, the server is started again and the next query runs.
      try {
        await (async () => {
          // 1. The answers must agree before anything is timed. A refusal (413: the query passes a bound
          // of one request) is a result too: recorded, and the next query runs.
          let worker: Awaited<ReturnType<typeof post>>;
          try {
            worker = await post(dev.url, q);
          } catch (err) {
            const refused = /answered (\d{3}): (.*)$/s.exec(err instanceof Error ? err.message : String(err));
            if (!refused) throw err;
            progress(`query ${q.id}: refused ${refused[1]}: ${refused[2]!.slice(0, 300)}`);
            r.add({
              scenario,
              metric: `${q.id}) ${q.title} — refused (HTTP status)`,
              value: Number(refused[1]),
              unit: 'status',
              target: '<= 50 ms, ratio <= 1.0',
              met: false,
            });
            details[q.id] = { title: q.title, body: q.body, refused: { status: Number(refused[1]), body: refused[2] } };
            return;
          }
          const workerJson = canonicalJson(worker.body, q.body.metrics);
          const equal: Record<string, boolean> = {};
          for (const peer of peers) {
            const plan = peerPlan(q, peer.dialect);
            const cells = await peer.rows(plan.cells);
            const sl = plan.serviceLevel ? await peer.rows(plan.serviceLevel) : [];
            const answer = assemble(q, plan, cells, sl, settings);
            equal[peer.name] = canonicalJson(answer, q.body.metrics) === workerJson;
            if (!equal[peer.name]) {
              const file = path.join(DATA_DIR, `mismatch-${q.id}-${peer.name}.json`);
              writeFileSync(file, JSON.stringify({ query: q.body, worker: worker.body, peer: answer, plan }, null, 1));
              progress(
                `query ${q.id}: ${peer.name}'s answer DIFFERS from the Worker's (${firstDifference(worker.body, answer)}); both in ${file}`,
              );
            }
          }
          const groups = worker.body.results.length;
          const cellsCount = worker.body.results.reduce((a, g) => a + g.data.length, 0);
          progress(
            `query ${q.id}: ${groups} groups, ${cellsCount} group-buckets, ${(worker.bytes / 1024).toFixed(0)} KiB, source ${worker.source}; answers equal: ${JSON.stringify(equal)}`,
          );
          r.add({
            scenario,
            metric: `${q.id}) answers equal to DuckDB and SQLite (1 = yes)`,
            value: Object.values(equal).every(Boolean) ? 1 : 0,
            unit: 'bool',
          });
          if (!Object.values(equal).every(Boolean)) return;

          // 2. Timing: the Worker through wrangler's front port and straight to workerd, then the peers.
          // Timed to the answer's last byte, as the peers are timed to their last row: parsing 1.9 MB of JSON
          // (query c) is the client's work, and each timed answer is checked to be that same answer, byte for byte.
          const opts = { warmup: 3, minRuns: ctx.runs, maxRuns: ctx.runs, budgetMs: 0 };
          const timed = (base: string, encoding?: Encoding) => () => postQueryText(base, ctx.token, q, worker.text, encoding);
          const viaProxy = await timeRuns(timed(dev.url), opts);
          const direct = dev.directUrl ? await timeRuns(timed(dev.directUrl), opts) : undefined;
          const gzip = await timeRuns(timed(dev.url, 'client default'), opts);
          const peerTimes: Record<string, Timing> = {};
          for (const peer of peers) {
            const plan = peerPlan(q, peer.dialect);
            const once = async () => {
              await peer.rows(plan.cells);
              if (plan.serviceLevel) await peer.rows(plan.serviceLevel);
            };
            // A slow peer gets at least 5 runs and as many more (up to the Worker's count) as 90 s allow
            // (3 s in a quick run: SQLite's query c alone took 11 s of a 121 s quick run in a slow phase).
            peerTimes[peer.name] = await timeRuns(once, {
              warmup: 1,
              minRuns: Math.min(5, ctx.runs),
              maxRuns: ctx.runs,
              budgetMs: ctx.quick ? 3_000 : 90_000,
            });
          }
          const d = peerTimes.DuckDB!;
          const s = peerTimes.SQLite!;
          const label = `${q.id}) ${q.title}`;
          r.add({
            scenario,
            metric: `${label} — p50 (uncompressed answer)`,
            value: viaProxy.p50,
            unit: 'ms',
            peer: 'DuckDB p50',
            peerValue: d.p50,
            target: '<= 50 ms, ratio <= 1.0',
            met: viaProxy.p50 <= 50 && viaProxy.p50 <= d.p50,
          });
          r.add({ scenario, metric: `${q.id}) p95`, value: viaProxy.p95, unit: 'ms', peer: 'DuckDB p95', peerValue: d.p95 });
          r.add({
            scenario,
            metric: `${q.id}) p50 vs plain SQLite GROUP BY`,
            value: viaProxy.p50,
            unit: 'ms',
            peer: `SQLite p50 (${s.runs} runs)`,
            peerValue: s.p50,
          });
          if (direct)
            r.add({
              scenario,
              metric: `${q.id}) p50 straight to workerd's port`,
              value: direct.p50,
              unit: 'ms',
              peer: 'DuckDB p50',
              peerValue: d.p50,
            });
          r.add({
            scenario,
            metric: `${q.id}) p50 asking for gzip (wrangler dev compresses in workerd, as the edge would outside it)`,
            value: gzip.p50,
            unit: 'ms',
            peer: 'DuckDB p50',
            peerValue: d.p50,
          });
          details[q.id] = {
            title: q.title,
            body: q.body,
            source: worker.source,
            groups,
            cells: cellsCount,
            responseBytes: worker.bytes,
            viaProxy,
            direct,
            gzip,
            peers: peerTimes,
            plans: { duckdb: peerPlan(q, duck.dialect), sqlite: peerPlan(q, sqlite.dialect) },
          };
        })();
      } catch (err) {
        if (!(err instanceof TypeError && /fetch failed/.test(err.message))) throw err;
        progress(`query ${q.id}: the dev server stopped answering (${err.message}); starting it again for the next query`);
        r.add({ scenario, metric: `${q.id}) ${q.title} — the dev server died (1 = yes)`, value: 1, unit: 'bool', met: false });
        details[q.id] = { title: q.title, body: q.body, devServerDied: true };
        await dev.stop();
        dev = await devFor(ctx, persistTo);
      }
    }
    r.add({
      scenario,
      metric: 'workerd peak RSS (fresh start, queries only)',
      value: mb(peakRss(dev.workerPid)),
      unit: 'MiB',
      peer: 'DuckDB table memory',
      peerValue: mb(duck.bytes),
    });
    ctx.detail[scenario === '1 query' ? 'queries' : `queries (${ctx.spec.conversations})`] = details;
    if (networkRetries.length > 0) ctx.detail.queryNetworkRetries = networkRetries;
  } finally {
    await dev.stop();
    for (const p of peers) await p.close();
  }
}

/**
 * The Worker isolate's memory per query, one run each before anything is timed (an attached
 * inspector slows the isolate, so its session is closed before the timing): V8's heap in use plus
 * ArrayBuffer backing stores, sampled every 25 ms while the request runs, over the heap after a
 * collection before it (bench/profile/query-heap.ts). A deployed isolate has 128 MB.
 */
async function heapPass(ctx: AnalyticsContext, dev: DevServer, scenario: string, cases: HeapCase[]): Promise<unknown> {
  const url = (await inspectorTargets(dev.workerPid, ANALYTICS_INSPECTOR)).get('worker');
  if (!url) {
    progress('query heap: no inspector target for the Worker; not measured');
    return undefined;
  }
  const heap = await HeapSampler.open(url, true);
  let runs: Awaited<ReturnType<typeof measureHeap>>;
  try {
    runs = await measureHeap(dev.url, ctx.token, dev.workerPid, heap, cases, 1, 25, (line) => progress(`query heap: ${line}`));
  } finally {
    heap.close();
  }
  for (const c of cases) {
    const run = runs[c.id]?.[0];
    if (!run) continue;
    ctx.results.add({
      scenario,
      metric: `${c.id}) Worker isolate heap peak (JS heap + ArrayBuffers; ${run.status}${c.id.startsWith('w') ? `, worst shape: ${c.title}` : ''})`,
      value: run.peakMiB,
      unit: 'MiB',
      peer: 'heap before (after a collection)',
      peerValue: run.beforeMiB,
      target: '< 128 MiB, answered or refused (200/413)',
      met: run.peakMiB < 128 && (run.status === 200 || run.status === 413),
    });
  }
  return runs;
}

/** Network errors seen (and retried) while timing: a keep-alive socket closed under the client, usually. */
export const networkRetries: string[] = [];

/**
 * `identity`: ask for the answer uncompressed. Asked for gzip (undici's default), wrangler dev's
 * entry worker compresses the answer inside workerd, emulating what Cloudflare's edge does outside
 * the Worker in production: ~25 ms of workerd CPU for query c's 1.9 MB. The timed rows ask for
 * identity, to time the Worker; a row per query shows the gzip time too.
 */
type Encoding = 'identity' | 'client default';

async function postQuery(
  base: string,
  token: string,
  q: BenchQuery,
  encoding: Encoding = 'identity',
): Promise<{ body: AggregateResponse; text: string; source: string; bytes: number }> {
  const { text, source } = await postQueryRaw(base, token, q, encoding);
  return { body: JSON.parse(text) as AggregateResponse, text, source, bytes: text.length };
}

/** A timed run: the whole answer received, and the same text as `expected` (not parsed again). */
async function postQueryText(base: string, token: string, q: BenchQuery, expected: string, encoding?: Encoding): Promise<void> {
  const { text } = await postQueryRaw(base, token, q, encoding);
  if (text !== expected)
    throw new Error(`query ${q.id}: a timed answer differs from the checked one (${text.length} vs ${expected.length} chars)`);
}

async function postQueryRaw(
  base: string,
  token: string,
  q: BenchQuery,
  encoding: Encoding = 'identity',
): Promise<{ text: string; source: string }> {
  let res: Response;
  for (let attempt = 1; ; attempt++) {
    try {
      res = await fetch(base + QUERY_PATH, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          ...(encoding === 'identity' ? { 'Accept-Encoding': 'identity' } : {}),
        },
        body: JSON.stringify(q.body),
      });
      break;
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
      networkRetries.push(`query ${q.id}: ${cause}`);
      progress(`query ${q.id}: network error (${cause}); trying again`);
      if (attempt === 3) throw err;
    }
  }
  const text = await res.text();
  if (!res.ok) throw new Error(`query ${q.id} answered ${res.status}: ${text.slice(0, 1000)}`);
  return { text, source: res.headers.get('Switchboard-Query-Source') ?? '?' };
}
