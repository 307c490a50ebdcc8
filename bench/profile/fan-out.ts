/**
 * What a query pays per analytics partition it fans out to (docs/analytics-storage.md, "Partitions").
 * The same simulated month is ingested twice through `wrangler dev`: into one D1 database (DB), and
 * into three (P1, P2, P3: ten days each by conversationStart); then bench queries a (30 days, P1D,
 * by queue: every partition contributes) and b (one day: one contributes, the others' rollup statements
 * find nothing) are timed over HTTP on each, both servers up and the runs interleaved, and b's day from
 * the raw rows (b-raw: each partition answers a reach statement, one is scanned). (p50 three − p50 one)
 * / 2 is the cost of one more partition.
 *
 *   npx tsx bench/profile/fan-out.ts [--conversations 30000] [--runs 100] [--reuse]
 *
 * `--reuse` queries the databases the previous run left under bench/data/fan-out instead of ingesting again.
 *
 * Not part of `npm run bench`; a few minutes on this machine. Ports 8850–8853.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isUp } from '../lib/http';
import { records, type SimSpec } from '../lib/sim';
import { summarize } from '../lib/stats';
import { type DevServer, ROOT, snapshotWorker, startDev } from '../lib/wrangler';
import { type BenchQuery, benchQueries } from '../peers/queries';

const { values } = parseArgs({
  options: {
    conversations: { type: 'string', default: '30000' },
    runs: { type: 'string', default: '100' },
    reuse: { type: 'boolean', default: false },
  },
});
const SPEC: SimSpec = { conversations: Number(values.conversations), days: 30, seed: 42, end: '2026-11-16T00:00:00.000Z' };
const RUNS = Number(values.runs);
const TOKEN = 'fan-out-bench-token';
const DIR = path.join(ROOT, 'bench', 'data', 'fan-out');
const DAY = 86_400_000;
const day = (offset: number) => new Date(Date.parse(SPEC.end) + offset * DAY).toISOString().slice(0, 10);
const LAYOUTS = {
  one: 'DB',
  three: `P1:..${day(-20)}, P2:${day(-20)}..${day(-10)}, P3:${day(-10)}..`,
};

/** The snapshot's config with three more D1 bindings, each migrated as DB is. */
function configWithPartitions(): string {
  const { config } = snapshotWorker(path.join(DIR, 'build'));
  const base = readFileSync(config[0]!, 'utf8');
  const migrations = JSON.stringify(path.join(ROOT, 'migrations'));
  const blocks = ['P1', 'P2', 'P3'].map(
    (b) => `\n[[d1_databases]]\nbinding = "${b}"\ndatabase_name = "fan-out-${b}"\nmigrations_dir = ${migrations}\n`,
  );
  const file = path.join(DIR, 'build', 'wrangler.fan-out.toml');
  writeFileSync(file, base + blocks.join(''));
  return file;
}

function migrate(config: string, persistTo: string, binding: string): void {
  const wrangler = path.join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');
  const r = spawnSync(
    process.execPath,
    [wrangler, 'd1', 'migrations', 'apply', binding, '--local', '--persist-to', persistTo, '--config', config],
    {
      cwd: path.dirname(config),
      encoding: 'utf8',
      env: { ...process.env, CI: '1', WRANGLER_SEND_METRICS: 'false' },
    },
  );
  if (r.status !== 0) throw new Error(`migrating ${binding}: ${r.stderr}`);
}

/** The month, in bodies of 1,000 conversations, one request at a time (the figure here is the queries'). */
async function ingest(base: string): Promise<void> {
  let batch: unknown[] = [];
  const post = async () => {
    const res = await fetch(`${base}/api/v2/analytics/conversations/details/ingest`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ conversations: batch }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`ingest: ${res.status} ${text.slice(0, 300)}`);
    batch = [];
  };
  for (const r of records(SPEC)) {
    batch.push(r);
    if (batch.length === 1_000) await post();
  }
  if (batch.length > 0) await post();
}

/** A dev server on `layout`'s databases, ingested unless reused. */
async function serve(config: string, layout: keyof typeof LAYOUTS, port: number): Promise<DevServer> {
  const persistTo = path.join(DIR, layout);
  const fresh = !values.reuse || !existsSync(persistTo);
  if (fresh) {
    rmSync(persistTo, { recursive: true, force: true });
    mkdirSync(persistTo, { recursive: true });
    for (const b of ['DB', 'P1', 'P2', 'P3']) migrate(config, persistTo, b);
  }
  const dev = await startDev({
    config,
    port,
    inspectorPort: port + 1,
    persistTo,
    vars: { ADMIN_TOKEN: TOKEN, ANALYTICS_PARTITIONS: LAYOUTS[layout] },
    ready: (base) => isUp(base, TOKEN),
  });
  if (fresh) await ingest(dev.url);
  return dev;
}

async function query(base: string, body: unknown): Promise<{ ms: number; source: string }> {
  const t0 = performance.now();
  const res = await fetch(`${base}/api/v2/analytics/conversations/aggregates/query`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`query: ${res.status}`);
  return { ms: performance.now() - t0, source: res.headers.get('Switchboard-Query-Source') ?? '' };
}

const config = configWithPartitions();
const servers: DevServer[] = [];
try {
  servers.push(await serve(config, 'one', 8850));
  servers.push(await serve(config, 'three', 8852));
  const [one, three] = servers as [DevServer, DevServer];
  const [a, b] = benchQueries(SPEC.end, 'u-1').filter((x) => x.id === 'a' || x.id === 'b') as [BenchQuery, BenchQuery];
  // b's day from the raw rows (wrapUpCode is in no rollup): the reach statements at work.
  const raw = { id: 'b-raw', body: { ...b.body, groupBy: ['wrapUpCode'], filter: undefined, metrics: ['tHandle', 'tAcw', 'tTalk'] } };
  for (const q of [a, b, raw]) {
    // Interleaved, one then three, so both see the same load on a shared machine.
    const times: { one: number[]; three: number[] } = { one: [], three: [] };
    let source = '';
    for (let i = 0; i < RUNS + 5; i++) {
      const a = await query(one.url, q.body);
      const b = await query(three.url, q.body);
      source = b.source;
      if (i < 5) continue;
      times.one.push(a.ms);
      times.three.push(b.ms);
    }
    const [a, b] = [summarize(times.one), summarize(times.three)];
    console.log(
      `query ${q.id}: one database p50 ${a.p50.toFixed(2)} ms (p95 ${a.p95.toFixed(2)}), three p50 ${b.p50.toFixed(2)} ms ` +
        `(p95 ${b.p95.toFixed(2)}) [${source}]: ${((b.p50 - a.p50) / 2).toFixed(2)} ms per added partition`,
    );
  }
} finally {
  for (const dev of servers) await dev.stop();
}
