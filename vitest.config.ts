import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import { configDefaults, defineConfig } from 'vitest/config';

/** Analytics spread over several D1 databases (test/analytics/partitions*.test.ts): periods around today. */
const PARTITION_TESTS = 'test/analytics/partitions*.test.ts';

/**
 * Three partitions for the last nine days (P1, P2, P3: three days each, P3 to tomorrow), a gap before
 * and after them, and P0 for everything before 400 days ago: past the 365 days of retention.
 */
function partitionsAroundToday(): string {
  const DAY = 86_400_000;
  const today = Math.floor(Date.now() / DAY) * DAY;
  const day = (offset: number) => new Date(today + offset * DAY).toISOString().slice(0, 10);
  return `P0:..${day(-400)}, P1:${day(-9)}..${day(-6)}, P2:${day(-6)}..${day(-3)}, P3:${day(-3)}..${day(1)}`;
}

/**
 * Every package the Worker imports (bare specifiers under src/, `cloudflare:` modules aside), read from the
 * source so the list cannot fall behind it.
 */
function workerDependencies(): string[] {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (/\.[jt]s$/.test(file))
        for (const [, spec = ''] of readFileSync(file, 'utf8').matchAll(/^import [^;]*? from '([^'.][^']*)';/gms))
          if (!spec.startsWith('cloudflare:')) found.add(spec);
    }
  };
  walk(path.join(import.meta.dirname, 'src'));
  return [...found].sort();
}

/**
 * Each test file in workerd imports the whole Worker (`cloudflare:test` loads `main`). Pre-bundling its
 * dependencies once with Vite's SSR optimizer, instead of transforming them module by module in every
 * file, halves a file's setup (37.6 → 18.5 s over four files, measured side by side) and keeps module
 * identity: one copy of each library, so `instanceof` and module state behave as in the deployed bundle.
 */
const PREBUNDLED = { ssr: { enabled: true, include: workerDependencies() } };

/**
 * The workerd files that keep a runtime each: they change the schema (drop tables, apply migrations to an
 * older layout), which a later file in a shared runtime would inherit. Every other workerd file runs in
 * one runtime per vitest worker, one file after another (`isolate: false`), each starting from emptied
 * tables (test/setup/apply-migrations.ts): a runtime per file cost ~2.5 s of setup (workerd started,
 * the Worker loaded), more than most files' tests take. So a file must leave no isolate-wide state that
 * a later one would trip over (rate-limit leases, the query gate, the webhook cache, the schema); check
 * a change with the files in random order: `npx vitest run --project workers --sequence.shuffle.files`.
 *
 * That sharing needs scripts/patch-deps.mjs (npm's postinstall): without it, vitest-pool-workers stacks
 * one Proxy per Durable Object instance or request on the class's prototype, and files late in a shared
 * runtime ran up to 55× slower (the whole workerd part took ~10 min instead of ~1.5).
 */
const RUNTIME_PER_FILE_TESTS = ['test/chat/migration-0010.test.ts', 'test/chat/migration-0013.test.ts', 'test/http/unmigrated.test.ts'];

/** Refuses to run the shared runtime without the fix it needs (see RUNTIME_PER_FILE_TESTS). */
function assertPoolPatched(): void {
  const file = path.join(import.meta.dirname, 'node_modules/@cloudflare/vitest-pool-workers/dist/worker/lib/cloudflare/test-internal.mjs');
  if (!readFileSync(file, 'utf8').includes('switchboard scripts/patch-deps.mjs'))
    throw new Error('vitest-pool-workers is not patched: run `node scripts/patch-deps.mjs` (npm install runs it as postinstall)');
}

/** Replay knobs reach workerd as import.meta.env (FUZZ_SEED, FUZZ_PATH, FUZZ_SCALE, DIFF_SEED). */
const REPLAY_KNOBS = ['VITE_', 'FUZZ_', 'DIFF_'];

/** What every workerd project shares. */
const WORKERD_TEST = {
  deps: { optimizer: PREBUNDLED },
  // Builds the room page into dist/page, the static assets the Worker serves it from.
  globalSetup: ['./test/setup/build-page.ts'],
  setupFiles: ['./test/setup/apply-migrations.ts'],
  maxWorkers: 2,
  // Generous: a limit on a test's wall time is a timed assertion in disguise. The random differential
  // query test takes 11–47 s of a full npm test here, and timed out at 60 s in a run with other tests
  // beside it (the workerd part runs at a lower CPU priority than the e2e part).
  testTimeout: 180_000,
  hookTimeout: 120_000,
  // Not 0: vitest would put a one-worker project at groupOrder 0 into a group of its own, run last.
  sequence: { groupOrder: 1 },
};

export default defineConfig(async () => {
  assertPoolPatched();
  const migrations = await readD1Migrations(path.join(import.meta.dirname, 'migrations'));
  // IMAGE_PROXY_KEY empty whatever .dev.vars holds: images render as links here; test/chat/image-proxy.test.ts passes a key.
  const bindings = { TEST_MIGRATIONS: migrations, ADMIN_TOKEN: 'test-admin-token', AGGREGATE_JOB_UNIT_CELLS: '60', IMAGE_PROXY_KEY: '' };
  const workerd = () =>
    cloudflareTest({
      // The Worker as deployed: its own entry and config, Durable Objects included.
      wrangler: { configPath: './wrangler.toml' },
      miniflare: {
        // Job units of at most 60 stats entries: the tests' small answers are split as a large export's are.
        bindings,
        // Every fetch the Worker makes to the internet goes to test/support/image-upstream.js (the
        // image proxy's hosts, test/chat/image-proxy.test.ts): nothing leaves the machine.
        outboundService: 'image-upstream',
        workers: [
          {
            name: 'image-upstream',
            modules: true,
            scriptPath: path.join(import.meta.dirname, 'test/support/image-upstream.js'),
            compatibilityDate: '2026-04-01',
          },
        ],
      },
    });
  return {
    test: {
      // Names the tests that passed only on a retry (the e2e project's), so a retry hides nothing.
      reporters: ['default', './test/support/retried-reporter.ts'],
      projects: [
        {
          // Inside workerd (real D1, Durable Objects and WebSockets), through the Worker's own fetch: one
          // runtime per vitest worker runs its files one after another, each from emptied tables.
          plugins: [workerd()],
          envPrefix: REPLAY_KNOBS,
          test: {
            name: 'workers',
            ...WORKERD_TEST,
            include: ['test/**/*.test.ts'],
            exclude: [...configDefaults.exclude, 'test/e2e/**', PARTITION_TESTS, ...RUNTIME_PER_FILE_TESTS],
            isolate: false,
            fileParallelism: true,
          },
        },
        {
          // RUNTIME_PER_FILE_TESTS: the same Worker and bindings, a runtime (and storage) of its own per file.
          plugins: [workerd()],
          envPrefix: REPLAY_KNOBS,
          test: {
            name: 'schema',
            ...WORKERD_TEST,
            include: RUNTIME_PER_FILE_TESTS,
            fileParallelism: true,
          },
        },
        {
          // The same Worker with its analytics in four more D1 databases (ANALYTICS_PARTITIONS), each
          // migrated by the setup file; DB keeps the rest (tokens, jobs, settings).
          plugins: [
            cloudflareTest({
              wrangler: { configPath: './wrangler.toml' },
              miniflare: {
                d1Databases: ['P0', 'P1', 'P2', 'P3'],
                bindings: { ...bindings, ANALYTICS_PARTITIONS: partitionsAroundToday(), ANALYTICS_RETENTION_DAYS: '365' },
              },
            }),
          ],
          test: {
            name: 'partitions',
            ...WORKERD_TEST,
            include: [PARTITION_TESTS],
            // Storage is per file here too.
            fileParallelism: true,
            hookTimeout: 120_000,
          },
        },
        {
          // In Node, against `wrangler dev` over real sockets, with a headless Chromium (test/README.md). After
          // the workerd projects in a plain `vitest run`; `npm test` (scripts/test.ts) runs it beside them.
          test: {
            name: 'e2e',
            include: ['test/e2e/**/*.test.ts'],
            environment: 'node',
            pool: 'forks',
            // wrangler dev builds the page itself ([build]); built here too, so a build error fails fast.
            // The local state every dev server starts from is migrated once (e2e-state.ts).
            globalSetup: ['./test/setup/build-page.ts', './test/setup/e2e-state.ts'],
            // Each file starts its own wrangler dev (on its own port, with a dev registry of its own) and
            // Chromium; two files side by side. Before each server had its own registry (they all shared
            // ~/.wrangler/registry and watched one another), a start-up hung now and then with two side by
            // side; dev-server.ts still tries a second start when the first does not answer in 45 s.
            fileParallelism: true,
            maxWorkers: 2,
            testTimeout: 180_000,
            // A failed test runs once more: a real wrangler dev and Chromium on a loaded two-core machine
            // now and then miss a start-up or a timer (one CI run in several failed so, while the same
            // tests passed four full runs here). A test that passes on its retry is named with its first
            // error at the end of the run (test/support/retried-reporter.ts), and again after npm test's
            // summary, so a real intermittent bug stays in sight.
            retry: 1,
            // Two starts of wrangler dev at most (dev-server.ts), then Chromium.
            hookTimeout: 240_000,
            teardownTimeout: 30_000,
            sequence: { groupOrder: 2 },
          },
        },
      ],
    },
  };
});
