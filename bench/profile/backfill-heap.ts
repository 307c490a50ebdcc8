/**
 * `npx tsx bench/profile/backfill-heap.ts [--size quick|200k|1m] [--every MS] [--runs N]`
 *
 * What the dimension cube's backfill (src/analytics/ingest/cube-backfill.ts, run by the scheduled
 * handler) holds in memory, on the bench's ingested data: copies the store of that size (run `npm run
 * bench` first) to a scratch directory, sets every conversation back to the cube's previous generation
 * and marks the database as a migration raising the generation does (0019's two statements), then
 * serves the copy from src (wrangler.toml) under `wrangler dev --test-scheduled` and calls
 * `/__scheduled` (one cron run each, at most `--runs`) until the mark is gone. Meanwhile it samples the
 * Worker isolate's V8 heap with its ArrayBuffers (what a deployed isolate's 128 MB counts) through the
 * inspector, and the RSS of wrangler's two workerd processes. Local D1 runs inside the Worker's workerd
 * process; a deployed D1 is a service of its own, so that process's RSS is not the isolate's.
 * Progress is read from the copy's SQLite file (WAL: a reader beside workerd's writer).
 */
import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CUBE_BACKFILL_KEY, CUBE_GENERATION, CUBE_INCOMPLETE_KEY } from '../../src/analytics/rollups';
import { isUp } from '../lib/http';
import { memory } from '../lib/proc';
import { FULL_SIM, QUICK_SIM, specKey, type SimSpec } from '../lib/sim';
import { openSqliteFile } from '../lib/sqlite';
import { d1File } from '../lib/sqlite-file';
import { findStoreDir, storeDir } from '../lib/store';
import { ROOT, startDev } from '../lib/wrangler';
import { HeapSampler, inspectorTargets } from './inspector';

const PORT = 8848;
const INSPECTOR = 8849;
const TOKEN = 'sbt_bench_backfill_heap';
const MiB = 1024 ** 2;

const SIZES: Record<string, SimSpec> = {
  quick: QUICK_SIM,
  '200k': { ...FULL_SIM, conversations: 200_000 },
  '1m': FULL_SIM,
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { size: { type: 'string' }, every: { type: 'string' }, runs: { type: 'string' } } });
  const spec = SIZES[values.size ?? '1m'];
  if (!spec) throw new Error(`--size: one of ${Object.keys(SIZES).join(', ')}`);
  const everyMs = Number(values.every ?? 50);
  const maxRuns = Number(values.runs ?? 10);
  const source = findStoreDir(`d1-${specKey(spec)}`);
  const persistTo = storeDir('backfill-heap');
  rmSync(persistTo, { recursive: true, force: true });
  console.log(`copying ${source} to ${persistTo}`);
  cpSync(source, persistTo, { recursive: true });

  const file = d1File(persistTo);
  {
    const db = openSqliteFile(file);
    const n = (db.prepare('UPDATE conversations SET in_cube = ?').run(CUBE_GENERATION - 1) as { changes: number }).changes;
    db.prepare('DELETE FROM meta WHERE key = ?').run(CUBE_BACKFILL_KEY);
    db.prepare('INSERT INTO meta (key, value) SELECT ?, 1 WHERE EXISTS (SELECT 1 FROM conversations) ON CONFLICT (key) DO NOTHING').run(
      CUBE_INCOMPLETE_KEY,
    );
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    console.log(`${n} conversations set back to generation ${CUBE_GENERATION - 1}; marked ${CUBE_INCOMPLETE_KEY}`);
  }
  const progress = openSqliteFile(file, { readonly: true });
  const state = () => {
    const marked = progress.prepare('SELECT 1 FROM meta WHERE key = ?').get(CUBE_INCOMPLETE_KEY) !== undefined;
    const done = (progress.prepare('SELECT count(*) AS n FROM conversations WHERE in_cube = ?').get(CUBE_GENERATION) as { n: number }).n;
    return { marked, done };
  };

  // The source config, not the bench's snapshot: wrangler adds the /__scheduled route only to a Worker it bundles.
  const dev = await startDev({
    config: path.join(ROOT, 'wrangler.toml'),
    port: PORT,
    inspectorPort: INSPECTOR,
    persistTo,
    vars: { ADMIN_TOKEN: TOKEN },
    ready: (base) => isUp(base, TOKEN),
    extraArgs: ['--test-scheduled'],
  });
  const peaks = { worker: 0, proxy: 0 };
  const rss = setInterval(() => {
    peaks.worker = Math.max(peaks.worker, memory(dev.workerPid)?.rss ?? 0);
    peaks.proxy = Math.max(peaks.proxy, memory(dev.proxyPid)?.rss ?? 0);
  }, 250);
  try {
    const heap = await HeapSampler.open((await inspectorTargets(dev.workerPid, INSPECTOR)).get('worker')!, true);
    const before = await heap.baseline(everyMs, () => isUp(dev.url, TOKEN));
    const started = performance.now();
    for (let run = 1; run <= maxRuns; run++) {
      const t0 = performance.now();
      const res = await fetch(`${dev.url}/__scheduled?cron=${encodeURIComponent('0 * * * *')}`);
      const text = await res.text();
      const s = state();
      console.log(
        `run ${run}: ${res.status} ${text.trim().slice(0, 60)} in ${((performance.now() - t0) / 1000).toFixed(1)} s; ` +
          `${s.done} conversations in the cube; marked: ${s.marked}; isolate heap peak so far ${(heap.peak() / MiB).toFixed(1)} MiB; ` +
          `RSS now: Worker's workerd ${((memory(dev.workerPid)?.rss ?? 0) / MiB).toFixed(0)} MiB, proxy ${((memory(dev.proxyPid)?.rss ?? 0) / MiB).toFixed(0)} MiB`,
      );
      if (!s.marked) break;
    }
    const seconds = (performance.now() - started) / 1000;
    const peak = heap.stop();
    const after = await heap.baseline(everyMs, () => isUp(dev.url, TOKEN));
    heap.close();
    const s = state();
    console.log(
      `\n${s.done} conversations added in ${seconds.toFixed(0)} s (${(s.done / seconds).toFixed(0)}/s); cube ${s.marked ? 'still marked' : 'whole'}`,
    );
    console.log(
      `Worker isolate heap (with ArrayBuffers): ${(before / MiB).toFixed(1)} MiB before, peak ${(peak / MiB).toFixed(1)} MiB, ${(after / MiB).toFixed(1)} MiB after a collection (limit of a deployed isolate: 128 MB)`,
    );
    console.log(
      `RSS peaks: the Worker's workerd (local D1 inside) ${(peaks.worker / MiB).toFixed(0)} MiB, wrangler's proxy workerd ${(peaks.proxy / MiB).toFixed(0)} MiB`,
    );
  } finally {
    clearInterval(rss);
    progress.close();
    await dev.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
