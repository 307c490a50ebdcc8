/**
 * `npm run dev` on a port that something else already listens on (another checkout's dev server, say):
 * wrangler dev would start, build, and then die with the runtime's stack trace. The script says what is
 * wrong and how to go on, and stops before it touches anything.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/dev-server';

describe('npm run dev', () => {
  it('refuses a port in use with a line naming it and another to use, before migrating or starting wrangler', async () => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as { port: number }).port;
    try {
      const run = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'scripts/dev.ts'], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, PORT: String(port) },
        timeout: 60_000,
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`[dev] port ${port} on 127.0.0.1 is in use`);
      expect(run.stderr).toContain(`PORT=${port + 1} npm run dev`);
      // Nothing else happened: no migration step, no wrangler, no stack trace.
      expect(`${run.stdout}${run.stderr}`).not.toMatch(/applied \d+ migrations|wrangler \d+\.\d+|Ready on|\n\s+at /);
    } finally {
      taken.close();
    }
  }, 90_000);
});
