/**
 * `wrangler dev` for the e2e suite (Node side): a fresh persisted state in a temp dir, migrations
 * applied, a free port on 127.0.0.1, a random ADMIN_TOKEN; stop and start again on the
 * same state (restart tests); the whole process tree is killed on teardown, also when a test fails
 * or the test process exits early.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { prepareLocalD1 } from '../../../scripts/dev/local-d1';
import { portFree } from '../../../scripts/dev/port';
import { watchdog } from './watchdog';

export const ROOT = path.resolve(import.meta.dirname, '../../..');
const WRANGLER = path.join(ROOT, 'node_modules/wrangler/bin/wrangler.js');
const START_TIMEOUT_MS = 45_000;
const STOP_TIMEOUT_MS = 10_000;
const LOG_LINES = 400;

/** Process groups still running, killed when the test process exits whatever the reason. */
const running = new Set<number>();
process.once('exit', () => {
  for (const pgid of running) killGroup(pgid, 'SIGKILL');
});
// A test process ended by a signal (vitest tearing down a fork after a hook timed out) emits no 'exit'.
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.once(signal, () => {
    for (const pgid of running) killGroup(pgid, 'SIGKILL');
    process.kill(process.pid, signal);
  });
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is gone already.
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A port the system has just handed out as free. e2e files run two at a time (vitest.config.ts): a fixed
 * range let two files starting together both see its first port free before either listened on it.
 */
function pickPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** wrangler without a terminal: no prompts, no interactive session. */
// The Worker never reads Request.cf: no fetch of Cloudflare's cf.json (this machine is offline).
/**
 * `registry`: wrangler's dev registry, where every running `wrangler dev` lists its Workers and watches
 * for the others' (~/.wrangler/registry by default). A directory of each server's own keeps the test
 * servers, and a developer's own `npm run dev`, from seeing or binding one another.
 */
const wranglerEnv = (registry?: string): NodeJS.ProcessEnv => ({
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  ...process.env,
  CI: '1',
  WRANGLER_SEND_METRICS: 'false',
  NO_COLOR: '1',
  ...(registry === undefined ? {} : { WRANGLER_REGISTRY_PATH: registry }),
});

export function wranglerSync(args: string[]): string {
  const result = spawnSync(process.execPath, [WRANGLER, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: wranglerEnv(),
    timeout: 120_000,
  });
  if (result.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

export interface DevServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  readonly adminToken: string;
  readonly persistDir: string;
  /** Starts wrangler dev on the persisted state and resolves once the API answers. */
  start(): Promise<void>;
  /** Stops the whole process tree (SIGTERM, then SIGKILL) and waits until the port is free. */
  stop(): Promise<void>;
  /** stop(), then start() on the same state and port. */
  restart(): Promise<void>;
  /** Stops and removes the persisted state (set KEEP_E2E_STATE=1 to keep it). */
  dispose(): Promise<void>;
  /** The last lines wrangler printed, for failure messages. */
  logTail(lines?: number): string;
  /** SQL against the local D1 (the server should be stopped, or at least flushed). */
  d1(sql: string): unknown[];
}

export interface DevServerOptions {
  /** Extra `[vars]` for the Worker, passed as `--var NAME:value` (e.g. CORS_ORIGINS). */
  vars?: Record<string, string>;
}

function migratedTemplate(): string | undefined {
  try {
    return inject('e2eMigratedState');
  } catch {
    return undefined; // not inside a vitest worker of the e2e project
  }
}

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const persistDir = mkdtempSync(path.join(tmpdir(), 'switchboard-e2e-'));
  const port = await pickPort();
  // wrangler's devtools inspector defaults to 9229: two servers side by side would both ask for it.
  const inspectorPort = await pickPort();
  const adminToken = `e2e_${randomBytes(18).toString('base64url')}`;
  const baseUrl = `http://127.0.0.1:${port}`;
  const log: string[] = [];
  let child: ChildProcess | undefined;

  // A copy of the state the e2e project's global setup migrated once (test/setup/e2e-state.ts); outside
  // vitest's e2e project, migrated here.
  const template = migratedTemplate();
  if (template) cpSync(template, persistDir, { recursive: true });
  else await prepareLocalD1({ persistTo: persistDir, config: path.join(ROOT, 'wrangler.toml') });

  const record = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) log.push(line);
    if (log.length > LOG_LINES) log.splice(0, log.length - LOG_LINES);
  };

  /** Starts wrangler dev once; undefined when its API answers, else what went wrong. `note` hears each new probe outcome. */
  const launch = async (note: (label: string) => void): Promise<string | undefined> => {
    if (child) throw new Error('wrangler dev is already running');
    if (!(await portFree(port))) throw new Error(`port ${port} is taken; wrangler dev cannot start on it`);
    const proc = spawn(
      process.execPath,
      [
        WRANGLER,
        'dev',
        '--config',
        'wrangler.toml',
        '--port',
        String(port),
        '--ip',
        '127.0.0.1',
        '--inspector-port',
        String(inspectorPort),
        '--persist-to',
        persistDir,
        '--var',
        `ADMIN_TOKEN:${adminToken}`,
        // No image proxy unless a test asks for one, whatever .dev.vars holds (room-page-images.test.ts).
        ...Object.entries({ IMAGE_PROXY_KEY: '', ...options.vars }).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
        '--show-interactive-dev-session=false',
        '--log-level',
        'warn',
      ],
      // Its own process group, so stop() reaches workerd and esbuild too.
      { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: wranglerEnv(path.join(persistDir, 'registry')) },
    );
    child = proc;
    running.add(proc.pid!);
    proc.stdout!.on('data', record);
    proc.stderr!.on('data', record);
    const printedBefore = log.length;
    const deadline = Date.now() + START_TIMEOUT_MS;
    let outcome = '';
    const heard = (now: string) => {
      if (now !== outcome) note(`probe: ${(outcome = now)}`);
    };
    while (Date.now() < deadline) {
      // A build error (e.g. a half-edited source file) leaves wrangler waiting for a fix: give up at once.
      if (proc.exitCode !== null || log.slice(printedBefore).some((line) => line.includes('Build failed'))) break;
      try {
        const res = await fetch(`${baseUrl}/api/v1/rooms`, {
          headers: { Authorization: `Bearer ${adminToken}` },
          signal: AbortSignal.timeout(2_000),
        });
        heard(`answered ${res.status}`);
        await res.arrayBuffer();
        if (res.status === 200) return undefined;
      } catch (err) {
        // Not listening yet.
        heard(`no answer (${err instanceof Error ? err.name : 'error'})`);
      }
      await sleep(150);
    }
    const tail = server.logTail();
    await server.stop();
    return `wrangler dev did not answer on ${baseUrl} within ${START_TIMEOUT_MS / 1000} s:\n${tail}`;
  };

  const server: DevServer = {
    port,
    baseUrl,
    adminToken,
    persistDir,

    async start() {
      // Once in a while (a few runs in ten with two files side by side on a busy machine) a wrangler dev
      // never answers; what it printed is kept in the error, and one more start is tried. Each launch has
      // its deadline; the watchdog is for a wait that has none (twice a file's set-up, and once a script
      // starting a server here, waited with nothing saying where).
      const steps = watchdog(`wrangler dev on ${baseUrl}`, 2 * (START_TIMEOUT_MS + STOP_TIMEOUT_MS) + 20_000, () => server);
      try {
        for (let attempt = 1; ; attempt++) {
          steps.step(`launch ${attempt}`);
          const failure = await launch(steps.step);
          if (failure === undefined) return;
          if (attempt === 2) throw new Error(failure);
          process.stderr.write(`[e2e] ${failure}\n[e2e] starting wrangler dev again\n`);
        }
      } finally {
        steps.done();
      }
    },

    async stop() {
      const proc = child;
      if (!proc) return;
      child = undefined;
      const pgid = proc.pid!;
      killGroup(pgid, 'SIGTERM');
      const deadline = Date.now() + STOP_TIMEOUT_MS;
      while (groupAlive(pgid) && Date.now() < deadline) await sleep(50);
      killGroup(pgid, 'SIGKILL');
      while (groupAlive(pgid) && Date.now() < deadline + 5_000) await sleep(50);
      running.delete(pgid);
      for (let i = 0; i < 100 && !(await portFree(port)); i++) await sleep(50);
    },

    async restart() {
      await server.stop();
      await server.start();
    },

    async dispose() {
      await server.stop();
      if (process.env.KEEP_E2E_STATE) process.stderr.write(`[e2e] kept state in ${persistDir}\n`);
      else rmSync(persistDir, { recursive: true, force: true });
    },

    logTail(lines = 60) {
      return log.slice(-lines).join('\n');
    },

    d1(sql: string) {
      const out = wranglerSync(['d1', 'execute', 'DB', '--local', '--persist-to', persistDir, '--json', '--command', sql]);
      const parsed = JSON.parse(out) as { results: unknown[] }[];
      return parsed[0]?.results ?? [];
    },
  };

  try {
    await server.start();
  } catch (err) {
    rmSync(persistDir, { recursive: true, force: true });
    throw err;
  }
  return server;
}
