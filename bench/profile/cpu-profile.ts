/**
 * `npx tsx bench/profile/cpu-profile.ts --workload ingest|query|webhook [--seconds N] [--viewers N]`
 *
 * Runs one workload against the benchmark's Worker snapshot (bench/data/build, made by `npm run
 * bench`) under `wrangler dev` on ports 8824/8825 and samples the CPU of the Worker's isolate and of
 * the local D1 isolate through workerd's inspector. Prints self time by src module and by function;
 * writes bench/data/profile-<workload>.json.
 * - ingest: 20,000 conversations (the quick simulation) into a fresh database, batches of 1,000, 4 in flight;
 * - query: queries a–d, 20 runs each after 5 unprofiled, on the quick run's database (--full: the full run's; --query c,d: only those; --runs N per query, default 20; --worker-only: sample only the Worker's isolate);
 * - webhook: one room, 100 viewers (in this process; --deflate: offering permessage-deflate), 16 posters for --seconds (default 10);
 *   --direct: posters and viewers straight to workerd's own port, past wrangler's proxy.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { AckCounter } from '../../src/chat/protocol';
import { api, isUp, postText } from '../lib/http';
import { ingestRecords, prepareIngestBodies } from '../lib/ingest-client';
import { CpuMeter } from '../lib/proc';
import { agents, DATA_DIR, FULL_SIM, QUICK_SIM, records, specKey } from '../lib/sim';
import { findStoreDir, storeDir } from '../lib/store';
import { migrate, snapshotWorker, startDev } from '../lib/wrangler';
import { benchQueries } from '../peers/queries';
import { bundleModules, inspectorTargets, Profiler, summarizeProfile } from './inspector';

const PORT = 8824;
const INSPECTOR = 8825;
const TOKEN = 'sbt_bench_profile';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      workload: { type: 'string' },
      seconds: { type: 'string' },
      viewers: { type: 'string' },
      full: { type: 'boolean' },
      query: { type: 'string' },
      runs: { type: 'string' },
      'worker-only': { type: 'boolean' },
      deflate: { type: 'boolean' },
      direct: { type: 'boolean' },
    },
  });
  const workload = values.workload ?? 'ingest';
  const seconds = Number(values.seconds ?? 10);
  const viewerCount = Number(values.viewers ?? 100);
  const snapshot = snapshotWorker(path.join(DATA_DIR, 'build'), true);
  const bundle = path.join(DATA_DIR, 'build', 'bundle', 'index.js');
  const moduleOfLine = bundleModules(bundle);

  let persistTo: string;
  const querySpec = values.full ? FULL_SIM : QUICK_SIM;
  if (workload === 'query') {
    persistTo = findStoreDir(`d1-${specKey(querySpec)}`);
  } else {
    persistTo = storeDir(`profile-${workload}`);
    rmSync(persistTo, { recursive: true, force: true });
    mkdirSync(persistTo, { recursive: true });
    await migrate(persistTo);
  }
  const dev = await startDev({
    config: snapshot.config,
    port: PORT,
    inspectorPort: INSPECTOR,
    persistTo,
    vars: { ADMIN_TOKEN: TOKEN },
    ready: (base) => isUp(base, TOKEN),
  });
  const sockets: WebSocket[] = [];
  try {
    const targets = await inspectorTargets(dev.workerPid, INSPECTOR);
    const names = ['worker', ...(values['worker-only'] ? [] : [...targets.keys()].filter((k) => k.startsWith('d1:db')))];
    const profiler = await Profiler.attach(targets, names);
    let setup: () => Promise<void> = async () => {};
    let run: () => Promise<string>;
    if (workload === 'ingest') {
      const bodies = prepareIngestBodies(records(QUICK_SIM), { batchSize: 1000, total: QUICK_SIM.conversations, label: 'profile ingest' });
      run = async () => {
        const r = await ingestRecords(`${dev.url}/api/v2/analytics/conversations/details/ingest`, TOKEN, bodies, {
          total: QUICK_SIM.conversations,
          inFlight: 4,
          label: 'profile ingest',
        });
        return `${r.conversations} conversations in ${r.seconds.toFixed(1)} s (${(r.conversations / r.seconds).toFixed(0)}/s)`;
      };
    } else if (workload === 'query') {
      const queries = benchQueries(querySpec.end, agents(querySpec)[0]!.id).filter(
        (q) => !values.query || values.query.split(',').includes(q.id),
      );
      const runs = Number(values.runs ?? 20);
      // Warm: the first requests compile the bundle's functions, which a profile would charge to them.
      setup = async () => {
        for (const q of queries)
          for (let i = 0; i < 5; i++) await api(dev.url, TOKEN, 'POST', '/api/v2/analytics/conversations/aggregates/query', q.body);
      };
      run = async () => {
        const lines = [];
        for (const q of queries) {
          const t0 = performance.now();
          for (let i = 0; i < runs; i++) await api(dev.url, TOKEN, 'POST', '/api/v2/analytics/conversations/aggregates/query', q.body);
          lines.push(`${q.id}: ${((performance.now() - t0) / runs).toFixed(1)} ms/query`);
        }
        return lines.join(', ');
      };
    } else if (workload === 'webhook') {
      let hookUrl = '';
      setup = async () => {
        const room = await api<{ id: string }>(dev.url, TOKEN, 'POST', '/api/v1/rooms', { name: 'profile' });
        const hook = await api<{ id: string; url: string }>(dev.url, TOKEN, 'POST', '/api/v1/webhooks', {
          name: 'profile',
          kind: 'generic',
          roomId: room.id,
        });
        await api(dev.url, TOKEN, 'PATCH', `/api/v1/webhooks/${hook.id}`, { rateLimit: { burst: 100_000, perSecond: 100_000 } });
        const base = values.direct ? dev.directUrl : dev.url;
        if (!base) throw new Error("--direct: workerd's own port was not found");
        hookUrl = `${base}${new URL(hook.url).pathname}`;
        for (let i = 0; i < viewerCount; i++) {
          // As the bench's viewers: no permessage-deflate offered (--deflate: offered, as browsers do).
          const ws = new WebSocket(`${base.replace('http', 'ws')}/api/v1/rooms/${room.id}/ws`, {
            headers: { Authorization: `Bearer ${TOKEN}` },
            perMessageDeflate: values.deflate === true,
          });
          // Flow control (src/chat/protocol.ts): a viewer that does not ack is closed a budget behind.
          const acks = new AckCounter();
          ws.on('message', (data: Buffer) => {
            const ack = acks.frame(data.toString(), data.length);
            if (ack !== undefined) ws.send(ack);
          });
          await new Promise<void>((resolve, reject) => {
            ws.once('message', () => resolve());
            ws.once('error', () => reject(new Error('viewer failed')));
          });
          sockets.push(ws);
        }
      };
      run = async () => {
        let ok = 0;
        let n = 0;
        const until = performance.now() + seconds * 1000;
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            while (performance.now() < until) {
              const res = await postText(hookUrl, JSON.stringify({ message: `**Build #${n++} passed**`, metadata: 'p' }));
              if (res.status === 200) ok++;
            }
          }),
        );
        return `${ok} posts accepted in ${seconds} s (${(ok / seconds).toFixed(0)}/s) with ${viewerCount} viewers`;
      };
    } else {
      throw new Error(`unknown workload ${workload}`);
    }
    await setup();
    const meter = new CpuMeter(() => ({
      'workerd (Worker)': dev.workerPid,
      'workerd (proxy)': dev.proxyPid,
      'wrangler (node)': dev.wranglerPid,
    }));
    await profiler.start();
    const outcome = await run();
    const profiles = await profiler.stop();
    const cpu = meter.stop();
    const requests = profiler.requests();
    profiler.close();
    const out: Record<string, unknown> = { workload, outcome, cpu, requests };
    console.log(`\n${workload}: ${outcome}`);
    console.log(`subrequests seen by the inspector: ${JSON.stringify(requests)}`);
    console.log(
      `CPU (cores over ${cpu.wallSeconds.toFixed(1)} s): ${Object.entries(cpu.perProcess)
        .map(([k, v]) => `${k} ${(v / cpu.wallSeconds).toFixed(2)}`)
        .join(', ')}, machine ${(cpu.machineBusy / cpu.wallSeconds).toFixed(2)}`,
    );
    for (const [name, profile] of profiles) {
      const s = summarizeProfile(profile, (url, line) =>
        url.endsWith('index.js') && name === 'worker' ? moduleOfLine(line) : url.replace(/^.*\//, ''),
      );
      out[name] = s;
      const busy = s.totalMs - s.idleMs;
      console.log(
        `\n--- ${name}: ${busy.toFixed(0)} ms busy of ${s.totalMs.toFixed(0)} ms sampled (${((100 * busy) / s.totalMs).toFixed(0)} %)`,
      );
      console.log('  by module:');
      for (const m of s.modules.slice(0, 15))
        console.log(`    ${((100 * m.ms) / busy).toFixed(1).padStart(5)} %  ${m.ms.toFixed(0).padStart(7)} ms  ${m.name}`);
      console.log('  by function:');
      for (const f of s.functions.slice(0, 25))
        console.log(`    ${((100 * f.ms) / busy).toFixed(1).padStart(5)} %  ${f.ms.toFixed(0).padStart(7)} ms  ${f.name}`);
    }
    writeFileSync(path.join(DATA_DIR, `profile-${workload}.json`), JSON.stringify(out, null, 1));
  } finally {
    for (const ws of sockets) ws.close();
    await dev.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
