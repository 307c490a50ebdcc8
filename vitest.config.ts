import path from 'node:path';
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, 'migrations'));
  return {
    test: {
      projects: [
        {
          // Inside workerd (real D1, Durable Objects and WebSockets), through the Worker's own fetch.
          plugins: [
            cloudflareTest({
              // The Worker as deployed: its own entry and config, Durable Objects included.
              wrangler: { configPath: './wrangler.toml' },
              miniflare: {
                // Job units of at most 60 stats entries: the tests' small answers are split as a large export's are.
                bindings: { TEST_MIGRATIONS: migrations, ADMIN_TOKEN: 'test-admin-token', AGGREGATE_JOB_UNIT_CELLS: '60' },
              },
            }),
          ],
          // Replay knobs reach workerd as import.meta.env (FUZZ_SEED, FUZZ_PATH, FUZZ_SCALE, DIFF_SEED).
          envPrefix: ['VITE_', 'FUZZ_', 'DIFF_'],
          test: {
            name: 'workers',
            include: ['test/**/*.test.ts'],
            exclude: [...configDefaults.exclude, 'test/e2e/**'],
            // Builds the room page into dist/page, the static assets the Worker serves it from.
            globalSetup: ['./test/setup/build-page.ts'],
            setupFiles: ['./test/setup/apply-migrations.ts'],
            // Storage (D1, Durable Objects) is isolated per test file, so files run side by side.
            fileParallelism: true,
            maxWorkers: 2,
            testTimeout: 60_000,
            hookTimeout: 60_000,
            // Not 0: vitest would put a one-worker project at groupOrder 0 into a group of its own, run last.
            sequence: { groupOrder: 1 },
          },
        },
        {
          // In Node, against `wrangler dev` over real sockets, with Debian's Chromium (test/e2e/README in the
          // main README). After the workers project, so the two do not share the two cores.
          test: {
            name: 'e2e',
            include: ['test/e2e/**/*.test.ts'],
            environment: 'node',
            pool: 'forks',
            // wrangler dev builds the page itself ([build]); built here too, so a build error fails fast.
            globalSetup: ['./test/setup/build-page.ts'],
            // Each file starts its own wrangler dev and loads the machine; one at a time.
            fileParallelism: false,
            testTimeout: 180_000,
            hookTimeout: 120_000,
            teardownTimeout: 30_000,
            sequence: { groupOrder: 2 },
          },
        },
      ],
    },
  };
});
