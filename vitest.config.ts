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
              main: './test/support/worker-entry.ts',
              wrangler: { configPath: './wrangler.toml' },
              miniflare: {
                bindings: { TEST_MIGRATIONS: migrations, ADMIN_TOKEN: 'test-admin-token' },
                // Rooms in this Worker (test/support/worker-entry.ts), not in the rooms Worker of script_name.
                durableObjects: {
                  ROOMS: { className: 'RoomObject', useSQLite: true },
                  WEBHOOK_GATES: { className: 'WebhookGate', useSQLite: true },
                },
              },
            }),
          ],
          // Replay knobs reach workerd as import.meta.env (FUZZ_SEED, FUZZ_PATH, FUZZ_SCALE, DIFF_SEED).
          envPrefix: ['VITE_', 'FUZZ_', 'DIFF_'],
          test: {
            name: 'workers',
            include: ['test/**/*.test.ts'],
            exclude: [...configDefaults.exclude, 'test/e2e/**'],
            setupFiles: ['./test/setup/apply-migrations.ts'],
            // Org settings (service level) are shared state; files run one at a time so a test that
            // changes them cannot race a query in another file.
            fileParallelism: false,
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
