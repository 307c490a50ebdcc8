/**
 * Scenario 6: what a query pays per analytics partition it fans out to (issue 24, "Past one database";
 * docs/analytics-storage.md, "Partitions"). The same simulated month is ingested twice through
 * `wrangler dev`: into one D1 database (DB), and into three (P1, P2, P3: ten days each by
 * conversationStart). Then bench queries a (30 days, P1D, by queue: every partition holds cells) and b
 * (one day: one holds cells, the others' rollup statements find none) are timed on both servers,
 * interleaved (one, then three, so both see the same machine), and b's day from the raw rows (b-raw, with
 * a view: each partition answers a reach statement, one is scanned). (p50 three − p50 one) / 2 is the cost of
 * one more partition. Both layouts must give the same answer before anything is timed.
 *
 * Its own small month (30,000 conversations; quick 5,000) and ports 8850–8853; the data lives in the
 * run's store (`fan-out/one`, `fan-out/three`), ingested afresh unless `reuse` finds it.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isUp } from '../lib/http';
import { ingestRecords, prepareIngestBodies } from '../lib/ingest-client';
import { progress, type Results } from '../lib/results';
import { FULL_SIM, records, type SimSpec } from '../lib/sim';
import { summarize } from '../lib/stats';
import { storeDir } from '../lib/store';
import { type DevServer, migrate, ROOT, startDev } from '../lib/wrangler';
import { benchQueries, canonicalJson } from '../peers/queries';
import type { AggregateResponse } from '../../test/support/reference-aggregator';

const SCENARIO = '6 partitions';
const DAY = 86_400_000;
const PORTS = { one: 8850, three: 8852 } as const;

export interface PartitionsOptions {
  results: Results;
  /** The run's snapshot config (bench/data/build/wrangler.toml); the partitioned one is written beside it. */
  workerConfig: string[];
  quick: boolean;
  detail: Record<string, unknown>;
  /** Conversations of the month (default 30,000; quick 5,000). */
  conversations?: number;
  /** Timed runs per query and layout, after 5 untimed (default 100; quick 20). */
  runs?: number;
  /** Query the databases an earlier run left in the store instead of ingesting again. */
  reuse?: boolean;
}

type Layout = 'one' | 'three';

export async function partitionsScenario(opts: PartitionsOptions): Promise<void> {
  const spec: SimSpec = { ...FULL_SIM, conversations: opts.conversations ?? (opts.quick ? 5_000 : 30_000) };
  const runs = opts.runs ?? (opts.quick ? 20 : 100);
  const token = 'sbt_bench_partitions';
  const day = (offset: number) => new Date(Date.parse(spec.end) + offset * DAY).toISOString().slice(0, 10);
  const layouts: Record<Layout, string> = {
    one: 'DB',
    three: `P1:..${day(-20)}, P2:${day(-20)}..${day(-10)}, P3:${day(-10)}..`,
  };
  const config = configWithPartitions(opts.workerConfig[0]!);

  const serve = async (layout: Layout): Promise<DevServer> => {
    const persistTo = storeDir(`fan-out-${spec.conversations}c/${layout}`);
    const fresh = opts.reuse !== true || !existsSync(persistTo);
    if (fresh) {
      rmSync(persistTo, { recursive: true, force: true });
      mkdirSync(persistTo, { recursive: true });
      for (const binding of ['DB', 'P1', 'P2', 'P3']) await migrate(persistTo, { binding, config });
    }
    const dev = await startDev({
      config,
      port: PORTS[layout],
      inspectorPort: PORTS[layout] + 1,
      persistTo,
      vars: { ADMIN_TOKEN: token, ANALYTICS_PARTITIONS: layouts[layout] },
      ready: (base) => isUp(base, token),
    });
    if (fresh) {
      progress(`${SCENARIO}: ingesting ${spec.conversations.toLocaleString('en-US')} conversations into ${layout} (${layouts[layout]})`);
      // One request at a time: the figures here are the queries'.
      const label = `${SCENARIO} ingest (${layout})`;
      const bodies = prepareIngestBodies(records(spec), { batchSize: 1_000, total: spec.conversations, label });
      await ingestRecords(`${dev.url}/api/v2/analytics/conversations/details/ingest`, token, bodies, {
        total: spec.conversations,
        inFlight: 1,
        label,
      });
    }
    return dev;
  };

  const servers: DevServer[] = [];
  try {
    servers.push(await serve('one'));
    servers.push(await serve('three'));
    const [one, three] = servers as [DevServer, DevServer];
    const queries = benchQueries(spec.end, 'u-1');
    const a = queries.find((q) => q.id === 'a')!;
    const b = queries.find((q) => q.id === 'b')!;
    // b's day from the raw rows (a view judges single values, which only the raw rows keep): each partition
    // answers a reach statement, the one holding the day is scanned.
    const raw = {
      ...b,
      id: 'b-raw',
      body: {
        ...b.body,
        metrics: ['tHandle', 'tTalk'],
        views: [{ target: 'tHandle', name: 'over5min', function: 'rangeBound', range: { gte: 300_000 } }],
      },
    };
    const figures: Record<string, unknown> = {};
    for (const q of [a, b, raw]) {
      const first = [await query(one.url, token, q.body), await query(three.url, token, q.body)];
      const same = (text: string) => canonicalJson(JSON.parse(text) as AggregateResponse);
      if (same(first[0]!.text) !== same(first[1]!.text))
        throw new Error(`${SCENARIO}: query ${q.id} answers differently from one database and from three partitions`);
      const times: Record<Layout, number[]> = { one: [], three: [] };
      let source = '';
      for (let i = 0; i < runs + 5; i++) {
        const fromOne = await query(one.url, token, q.body);
        const fromThree = await query(three.url, token, q.body);
        source = fromThree.source;
        if (i < 5) continue;
        times.one.push(fromOne.ms);
        times.three.push(fromThree.ms);
      }
      const [t1, t3] = [summarize(times.one), summarize(times.three)];
      figures[q.id] = { one: t1, three: t3, source, bytes: first[0]!.text.length };
      opts.results.add({
        scenario: SCENARIO,
        metric: `${q.id}) p50, three partitions of ten days (${source})`,
        value: t3.p50,
        unit: 'ms',
        peer: 'one database holding the month, p50',
        peerValue: t1.p50,
      });
      opts.results.add({
        scenario: SCENARIO,
        metric: `  ${q.id}) each added partition: (three − one) / 2`,
        value: (t3.p50 - t1.p50) / 2,
        unit: 'ms',
      });
    }
    opts.detail.partitions = { conversations: spec.conversations, runs, layouts, figures };
  } finally {
    for (const dev of servers) await dev.stop();
  }
}

/** The snapshot's config with three more D1 bindings (P1–P3), each migrated as DB is; written beside it. */
function configWithPartitions(snapshotConfig: string): string {
  const migrations = JSON.stringify(path.join(ROOT, 'migrations'));
  const blocks = ['P1', 'P2', 'P3'].map(
    (b) => `\n[[d1_databases]]\nbinding = "${b}"\ndatabase_name = "fan-out-${b}"\nmigrations_dir = ${migrations}\n`,
  );
  const file = path.join(path.dirname(snapshotConfig), 'wrangler.partitions.toml');
  writeFileSync(file, readFileSync(snapshotConfig, 'utf8') + blocks.join(''));
  return file;
}

async function query(base: string, token: string, body: unknown): Promise<{ ms: number; source: string; text: string }> {
  const t0 = performance.now();
  const res = await fetch(`${base}/api/v2/analytics/conversations/aggregates/query`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Accept-Encoding': 'identity' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`${SCENARIO}: query answered ${res.status} ${text.slice(0, 300)}`);
  // The partitioned server names the partitions that answered after the source (`… partitions=P1,P2`).
  return { ms, source: res.headers.get('Switchboard-Query-Source') ?? '', text };
}
