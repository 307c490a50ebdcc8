/**
 * `npx tsx bench/profile/post-cpu.ts DIR_A DIR_B [...] [--rounds N] [--seconds S] [--rate R]`
 *
 * Side by side: the CPU a webhook post costs in each of several Worker snapshots (each DIR holds a
 * `wrangler.toml` made by `snapshotWorker`, e.g. with and without a post-path optimisation). Each round
 * starts each snapshot's `wrangler dev` in turn (fresh state, one room, one generic webhook, no viewers),
 * posts R posts a second for S seconds (a fixed rate, so batching in the room is alike on every side;
 * at most 64 in flight), and divides the CPU time of the workerd that runs the
 * Worker (the Worker, both Durable Objects and local D1 run there) by the posts answered 200. Rounds
 * alternate the snapshots, so the machine's drift hits each alike; the median per snapshot is printed.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { api, isUp, postText } from '../lib/http';
import { cpuSeconds } from '../lib/proc';
import { DATA_DIR } from '../lib/sim';
import { migrate, startDev } from '../lib/wrangler';

const PORT = 8834;
const INSPECTOR = 8835;
const TOKEN = 'sbt_bench_post_cpu';

async function round(config: string, seconds: number, rate: number): Promise<{ posts: number; cpuMsPerPost: number }> {
  const persistTo = path.join(DATA_DIR, 'post-cpu-state');
  rmSync(persistTo, { recursive: true, force: true });
  mkdirSync(persistTo, { recursive: true });
  await migrate(persistTo);
  const dev = await startDev({
    config,
    port: PORT,
    inspectorPort: INSPECTOR,
    persistTo,
    vars: { ADMIN_TOKEN: TOKEN },
    ready: (base) => isUp(base, TOKEN),
  });
  try {
    const room = await api<{ id: string }>(dev.url, TOKEN, 'POST', '/api/v1/rooms', { name: 'post-cpu' });
    const hook = await api<{ id: string; url: string }>(dev.url, TOKEN, 'POST', '/api/v1/webhooks', {
      name: 'post-cpu',
      kind: 'generic',
      roomId: room.id,
    });
    await api(dev.url, TOKEN, 'PATCH', `/api/v1/webhooks/${hook.id}`, { rateLimit: { burst: 100_000, perSecond: 100_000 } });
    const url = `${dev.url}${new URL(hook.url).pathname}`;
    const body = JSON.stringify({ message: '**Build #1 passed** on `main`', metadata: 'ci' });
    // Warm-up: compilation, the isolate's caches and the objects' first loads are not a post's cost.
    for (let i = 0; i < 200; i++) await postText(url, body);
    const before = cpuSeconds(dev.workerPid);
    let ok = 0;
    const total = seconds * rate;
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = next++; i < total; i = next++) {
          const wait = started + (i * 1000) / rate - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          if ((await postText(url, body)).status === 200) ok++;
        }
      }),
    );
    const cpu = cpuSeconds(dev.workerPid) - before;
    return { posts: ok, cpuMsPerPost: (1000 * cpu) / Math.max(ok, 1) };
  } finally {
    await dev.stop();
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { rounds: { type: 'string' }, seconds: { type: 'string' }, rate: { type: 'string' } },
  });
  const rounds = Number(values.rounds ?? 3);
  const seconds = Number(values.seconds ?? 10);
  const rate = Number(values.rate ?? 200);
  if (positionals.length < 2) throw new Error('give two or more snapshot directories');
  const results = new Map<string, number[]>(positionals.map((d) => [d, []]));
  for (let r = 1; r <= rounds; r++) {
    for (const dir of positionals) {
      const { posts, cpuMsPerPost } = await round(path.resolve(dir, 'wrangler.toml'), seconds, rate);
      results.get(dir)!.push(cpuMsPerPost);
      console.log(`round ${r} ${dir}: ${posts} posts, ${cpuMsPerPost.toFixed(3)} ms CPU per post`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(results.get(positionals[0]!)!);
  for (const [dir, xs] of results) {
    const m = median(xs);
    console.log(`${dir}: median ${m.toFixed(3)} ms CPU per post (${((100 * (m - base)) / base).toFixed(1)} % against ${positionals[0]})`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
