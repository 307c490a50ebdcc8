/**
 * `npm run bench [-- options]`: issue 4's benchmarks against the real Worker under `wrangler dev`
 * (local D1 and Durable Objects), side by side with peers; prints one table and writes
 * bench/results.json. See README.bench / `npm run bench -- --help`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ingestScenario, queryScenario, type AnalyticsContext } from './scenarios/analytics';
import { attackScenario, parseLevers } from './scenarios/attacks';
import { chatScenario, type ChatOptions } from './scenarios/chat';
import { partitionsScenario } from './scenarios/partitions';
import { roomPageScenario } from './scenarios/room-page';
import { progress, Results } from './lib/results';
import { DATA_DIR, FULL_SIM, QUICK_SIM, type SimSpec } from './lib/sim';
import { useStore } from './lib/store';
import { ROOT, snapshotWorker } from './lib/wrangler';

const USAGE = `Usage: npm run bench -- [options]

  --quick                 small run, about two minutes: 20,000 conversations over 3 days, short chat phases
  --only LIST             scenarios to run, comma-separated: query, ingest, chat, attacks, page, partitions (default: all).
                          "query" needs ingested data: it ingests first unless --reuse finds it
  --reuse                 reuse an earlier ingest of the same simulation (bench/data/d1-*) instead of ingesting again
  --conversations N       simulated conversations (default 1,000,000; quick 20,000)
  --days N                days they span (default 30; quick 3)
  --in-flight N           ingest requests in flight (default 4)
  --runs N                timed runs per query after warm-up (default 20)
  --raw-peer N            conversations the plain-insert peer stores (default 200,000; quick 5,000)
  --small N               the queries again over N conversations of the same days, side by side with the peers at
                          that size (default 200,000 in a full run; 0: not at all; quick: not at all). A fixed
                          cost per answer shows there: the peers get faster with less data
  --levers LIST           attacks scenario: the attacker's levers, comma-separated, of slow, noisy, tails, afters,
                          queries, fanout (default: all at once; one at a time tells which one costs what)
  --chat-seconds N        seconds of the 16-poster throughput phase (default 20; quick 2)
  --page-messages N       page scenario: messages in the room the page opens (default 10,000; quick 2,000)
  --page-assets DIR       page scenario: serve room.js and room.css from DIR (or DIR/assets/chat, another checkout's
                          buildPage(DIR) output) instead of the snapshot's: another page client, the same Worker
  --store memory|disk     where local D1 and Durable Object files live (default memory: a tmpfs directory,
                          /dev/shm/switchboard-bench; disk: bench/data). wrangler dev syncs each commit
                          to disk on the thread that runs the Worker (README, "Benchmarks")
  --out FILE              results file (default bench/results.json for a full run of every scenario, else bench/data/results-quick.json or results-partial.json)
  --keep-snapshot         measure the Worker bundle of the previous run (bench/data/build) instead of bundling src/ now
  -h, --help              this text
`;

function parseOptions() {
  return parseArgs({
    args: process.argv.slice(2),
    strict: true,
    allowPositionals: false,
    options: {
      quick: { type: 'boolean' },
      only: { type: 'string' },
      reuse: { type: 'boolean' },
      conversations: { type: 'string' },
      days: { type: 'string' },
      'in-flight': { type: 'string' },
      runs: { type: 'string' },
      'raw-peer': { type: 'string' },
      small: { type: 'string' },
      'chat-seconds': { type: 'string' },
      'page-messages': { type: 'string' },
      'page-assets': { type: 'string' },
      levers: { type: 'string' },
      out: { type: 'string' },
      store: { type: 'string' },
      'keep-snapshot': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  }).values;
}

async function main(): Promise<number> {
  let values: ReturnType<typeof parseOptions>;
  try {
    values = parseOptions();
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const num = (name: string, raw: string | undefined, fallback: number, min: number): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw.replaceAll('_', ''));
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min} (got "${raw}")`);
    return n;
  };
  const quick = values.quick === true;
  if (values.store !== undefined && values.store !== 'memory' && values.store !== 'disk')
    throw new Error(`--store must be memory or disk (got "${values.store}")`);
  const store = useStore(values.store === 'disk' ? 'disk' : 'memory');
  const only = new Set((values.only ?? 'ingest,query,chat,attacks,page,partitions').split(',').map((s) => s.trim()));
  for (const s of only)
    if (!['ingest', 'query', 'chat', 'attacks', 'page', 'partitions'].includes(s))
      throw new Error(`unknown scenario "${s}" (query, ingest, chat, attacks, page, partitions)`);
  const base = quick ? QUICK_SIM : FULL_SIM;
  const spec: SimSpec = {
    ...base,
    conversations: Math.round(num('conversations', values.conversations, base.conversations, 1)),
    days: num('days', values.days, base.days, 1),
  };

  const results = new Results();
  const detail: Record<string, unknown> = {};
  const started = Date.now();
  const machine = {
    date: new Date().toISOString(),
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: +(os.totalmem() / 1024 ** 3).toFixed(1),
    node: process.version,
    loadAverageAtStart: os.loadavg(),
  };
  detail.machine = machine;
  detail.options = { quick, only: [...only], spec, store };
  progress(
    `bench: ${quick ? 'quick' : 'full'} run of ${[...only].join(', ')}; ${spec.conversations.toLocaleString('en-US')} conversations over ${spec.days} days (seed ${spec.seed}); local storage in ${store === 'memory' ? 'memory (tmpfs)' : 'bench/data (disk)'}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );

  mkdirSync(DATA_DIR, { recursive: true });
  progress('bench: bundling a snapshot of the Worker (wrangler deploy --dry-run)');
  const snapshot = snapshotWorker(path.join(DATA_DIR, 'build'), values['keep-snapshot'] === true);
  if (!snapshot.fresh)
    progress(`bench: WARNING measuring the earlier snapshot of ${snapshot.builtAt} (src/ does not build now, or --keep-snapshot)`);
  detail.snapshot = snapshot;
  const workerConfig = snapshot.config;
  const token = `sbt_bench_${randomBytes(12).toString('hex')}`;

  // A failing scenario is reported and the others still run; the results so far are always written.
  const failures: string[] = [];
  const attempt = async (name: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
      failures.push(`${name}: ${text}`);
      progress(`bench: scenario ${name} FAILED: ${text}`);
      results.add({ scenario: name, metric: 'scenario failed (see bench/data/results-detail-*.json)', value: NaN, unit: '' });
    }
  };
  // Chat first: its latencies are timed in this process, before the query peers fill its heap.
  if (only.has('chat')) {
    const chat: ChatOptions = {
      results,
      token,
      workerConfig,
      quick,
      throughputSeconds: num('chat-seconds', values['chat-seconds'], quick ? 2 : 20, 1),
      detail,
    };
    await attempt('3 webhooks', () => chatScenario(chat));
  }
  if (only.has('page')) {
    // Chromium and its own server; its timings come from the browser's performance timeline.
    const messages = Math.round(num('page-messages', values['page-messages'], quick ? 2_000 : 10_000, 200));
    await attempt('5 room page', () =>
      roomPageScenario({ results, token, workerConfig, quick, messages, detail, assets: values['page-assets'] }),
    );
  }
  if (only.has('attacks')) {
    // Its own server and a small data set: 20,000 conversations over the last 14 days of the window.
    const attackSpec: SimSpec = { ...spec, conversations: quick ? 5_000 : 20_000, days: 14 };
    const levers = parseLevers(values.levers);
    await attempt('4 attacks', () => attackScenario({ results, token, workerConfig, quick, detail, levers }, attackSpec));
  }
  if (only.has('partitions')) {
    // Its own month (30,000 conversations; quick 5,000) in one database and in three partitions.
    await attempt('6 partitions', () => partitionsScenario({ results, workerConfig, quick, detail, reuse: values.reuse === true }));
  }
  if (only.has('ingest') || only.has('query')) {
    const ctx: AnalyticsContext = {
      results,
      quick,
      spec,
      token,
      workerConfig,
      reuse: values.reuse === true || !only.has('ingest'),
      inFlight: Math.round(num('in-flight', values['in-flight'], 4, 1)),
      runs: Math.round(num('runs', values.runs, 20, 1)),
      rawPeerConversations: Math.round(num('raw-peer', values['raw-peer'], quick ? 5_000 : 200_000, 1)),
      detail,
    };
    let haveData = false;
    await attempt(only.has('ingest') ? '2 ingest' : 'data', async () => {
      await ingestScenario(ctx, only.has('ingest'));
      haveData = true;
    });
    if (only.has('query') && haveData) await attempt('1 query', () => queryScenario(ctx));
    const small = Math.round(num('small', values.small, quick ? 0 : 200_000, 0));
    if (only.has('query') && small > 0 && small < spec.conversations) {
      // Its own ingest (not reported: the full size's is) and its own peers' data, then the same queries.
      const name = `1 query (${small.toLocaleString('en-US')})`;
      const smallCtx: AnalyticsContext = { ...ctx, spec: { ...spec, conversations: small }, reuse: true, queryScenarioName: name };
      let ready = false;
      await attempt(`${name} data`, async () => {
        await ingestScenario(smallCtx, false);
        ready = true;
      });
      if (ready) await attempt(name, () => queryScenario(smallCtx));
    }
  }

  detail.loadAverageAtEnd = os.loadavg();
  detail.failures = failures;
  detail.seconds = (Date.now() - started) / 1000;
  // bench/results.json holds the latest full run of every scenario (the README's table): a quick or partial
  // run writes its rows beside its details instead, so it cannot replace that file's rows with fewer.
  const whole = !quick && values.only === undefined;
  const out =
    values.out ?? (whole ? path.join(ROOT, 'bench', 'results.json') : path.join(DATA_DIR, `results-${quick ? 'quick' : 'partial'}.json`));
  const rows = results.rows.map(({ scenario, metric, value, unit, peer, peerValue, ratio }) => ({
    scenario,
    metric,
    value: round(value),
    unit,
    ...(peer !== undefined ? { peer } : {}),
    ...(peerValue !== undefined ? { peerValue: round(peerValue) } : {}),
    ...(ratio !== undefined ? { ratio: round(ratio) } : {}),
  }));
  writeFileSync(out, `${JSON.stringify(rows, null, 1)}\n`);
  const detailFile = path.join(DATA_DIR, `results-detail-${quick ? 'quick' : 'full'}.json`);
  writeFileSync(detailFile, JSON.stringify({ ...detail, rows: results.rows }, null, 1));
  writeFileSync(path.join(DATA_DIR, `results-${quick ? 'quick' : 'full'}.md`), `${results.markdown()}\n`);
  process.stdout.write(`\n${results.table()}\n\n`);
  progress(`bench: done in ${((Date.now() - started) / 1000).toFixed(0)} s; ${out} (rows), ${detailFile} (details)`);
  return failures.length > 0 ? 1 : 0;
}

function round(n: number): number | null {
  if (!Number.isFinite(n)) return null;
  return Math.abs(n) >= 100 ? Math.round(n * 10) / 10 : Math.round(n * 1000) / 1000;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const cause =
      err instanceof Error && err.cause !== undefined
        ? `\ncaused by: ${err.cause instanceof Error ? (err.cause.stack ?? err.cause.message) : String(err.cause)}`
        : '';
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}${cause}\n`);
    process.exitCode = 1;
  },
);
