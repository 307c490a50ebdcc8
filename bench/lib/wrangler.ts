/**
 * Starts `wrangler dev` the way a developer does (local D1 and Durable Objects, offline) and finds
 * what it started: wrangler's own Node process, the workerd that serves the front port (wrangler's
 * proxy) and the workerd that runs the Worker, with the Worker's own entry port when it answers
 * HTTP directly.
 *
 * The Switchboard Worker is run from a snapshot bundle (`wrangler deploy --dry-run --outdir`), not
 * from src/: wrangler dev rebuilds and restarts workerd whenever a source file changes, and other
 * people edit src/ while a long benchmark runs. The snapshot fixes the code measured for the run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { prepareLocalD1 } from '../../scripts/dev/local-d1';
import { descendants, listeningPorts, memory, processInfo, type ProcInfo } from './proc';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
const WRANGLER_BIN = path.join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

function runWrangler(args: string[], cwd = ROOT): string {
  const r = spawnSync(process.execPath, [WRANGLER_BIN, ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { CLOUDFLARE_CF_FETCH_ENABLED: 'false', ...process.env, CI: '1', WRANGLER_SEND_METRICS: 'false' },
  });
  if (r.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/**
 * Bundles the Worker as it is now into `dir/bundle/index.js`, copies the built room page (static assets)
 * into `dir/page`, and writes `dir/wrangler.toml` pointing at both (same bindings as the project's
 * wrangler.toml, no build step). Returns the config path (as a list, for `startDev`) and whether the
 * snapshot is fresh. When src/ does not build (someone is mid-edit) and an earlier snapshot exists, that
 * one is used (`fresh: false`); `reuse` asks for the earlier one outright.
 */
export function snapshotWorker(dir: string, reuse = false): { config: string[]; fresh: boolean; builtAt: string } {
  mkdirSync(dir, { recursive: true });
  const source = path.join(ROOT, 'wrangler.toml');
  const configPath = path.join(dir, 'wrangler.toml');
  const stampPath = path.join(dir, 'built-at.txt');
  const earlier = existsSync(path.join(dir, 'bundle', 'index.js')) && existsSync(configPath);
  if (reuse && earlier) return { config: [configPath], fresh: false, builtAt: readFileSync(stampPath, 'utf8') };
  rmSync(path.join(dir, 'bundle-next'), { recursive: true, force: true });
  try {
    // Runs wrangler.toml's [build] (the room page into dist/page) before bundling.
    runWrangler(['deploy', '--dry-run', '--config', source, '--outdir', path.join(dir, 'bundle-next')]);
  } catch (err) {
    if (!earlier) throw err;
    return { config: [configPath], fresh: false, builtAt: readFileSync(stampPath, 'utf8') };
  }
  for (const part of ['bundle', 'page']) rmSync(path.join(dir, part), { recursive: true, force: true });
  renameSync(path.join(dir, 'bundle-next'), path.join(dir, 'bundle'));
  cpSync(path.join(ROOT, 'dist', 'page'), path.join(dir, 'page'), { recursive: true });
  const config = readFileSync(source, 'utf8')
    .replace(/^main\s*=.*$/m, 'main = "bundle/index.js"\nno_bundle = true')
    .replace(/^migrations_dir\s*=.*$/m, `migrations_dir = ${JSON.stringify(path.join(ROOT, 'migrations'))}`)
    .replace(/^directory\s*=.*$/m, 'directory = "page"')
    .replace(/^\[build\]\ncommand\s*=.*$/m, '');
  if (/^\[build\]/m.test(config)) throw new Error('snapshotWorker: could not drop the [build] section of wrangler.toml');
  writeFileSync(configPath, config);
  const builtAt = new Date().toISOString();
  writeFileSync(stampPath, builtAt);
  return { config: [configPath], fresh: true, builtAt };
}

/** The rows of one SQL statement on the local database under `persistTo` (wrangler d1 execute). */
export function queryLocal<T>(persistTo: string, sql: string): T[] {
  const out = runWrangler(['d1', 'execute', 'DB', '--local', '--persist-to', persistTo, '--json', '--command', sql]);
  return (JSON.parse(out) as { results: T[] }[])[0]!.results;
}

/**
 * Applies the project's D1 migrations to the local database under `persistTo`: binding DB of the project's
 * wrangler.toml, or `binding` of another config (a snapshot's with more D1 bindings). As `npm run dev` does
 * (scripts/dev/local-d1.ts): what wrangler's `d1 migrations apply --local` leaves, in one local runtime
 * instead of one per migration file (~1 s instead of ~14).
 */
export async function migrate(persistTo: string, { binding = 'DB', config }: { binding?: string; config?: string } = {}): Promise<void> {
  await prepareLocalD1({ persistTo, binding, config: config ?? path.join(ROOT, 'wrangler.toml') });
}

/** SQL against the local D1 database under `persistTo`, through wrangler (no server needed). */
export function d1Execute<T>(persistTo: string, sql: string): T[] {
  const out = runWrangler(['d1', 'execute', 'DB', '--local', '--persist-to', persistTo, '--json', '--command', sql]);
  const parsed = JSON.parse(out) as { results: T[] }[];
  return parsed[0]?.results ?? [];
}

export interface DevServer {
  url: string;
  port: number;
  child: ChildProcess;
  /** wrangler's Node process (the one that started workerd). */
  wranglerPid: number;
  /** The workerd listening on the front port: wrangler's proxy. */
  proxyPid: number;
  /** The workerd running the Worker. */
  workerPid: number;
  /** The Worker's own entry port in workerd, when it answers HTTP directly (else undefined). */
  directUrl?: string;
  stop(): Promise<void>;
  log(): string;
  /** 1 when the Worker's workerd is no longer the one found at start (wrangler restarted it), else 0. */
  restarts(): number;
}

export interface StartOptions {
  /** The wrangler config to run (the directory holding it is the working directory). */
  /** One config, or several Workers in one `wrangler dev` (the first serves the port). */
  config: string | string[];
  port: number;
  inspectorPort: number;
  persistTo?: string;
  vars?: Record<string, string>;
  /** Answers 2xx once the Worker is up, given the base URL. */
  ready: (base: string) => Promise<boolean>;
  /** Where wrangler's output goes (default bench/data/wrangler-<port>.log). */
  logFile?: string;
  /** Decides whether a candidate port is the Worker's entry (same check as `ready`, usually). */
  isWorker?: (base: string) => Promise<boolean>;
  /** More arguments for `wrangler dev` (e.g. `--test-scheduled`). */
  extraArgs?: string[];
}

/**
 * The lines of a dev server's output that report an error (the Worker's console.error, wrangler's
 * own), without the offline machine's Request.cf warnings, which every start prints.
 */
export function errorLines(log: string): string[] {
  return log.split('\n').filter((line) => /failed|error/i.test(line) && !/Request\.cf|getaddrinfo|GetAddrInfo/.test(line));
}

export async function startDev(opts: StartOptions): Promise<DevServer> {
  const configs = typeof opts.config === 'string' ? [opts.config] : opts.config;
  const args = [
    WRANGLER_BIN,
    'dev',
    ...configs.flatMap((c) => ['--config', c]),
    '--port',
    String(opts.port),
    '--ip',
    '127.0.0.1',
    '--inspector-port',
    String(opts.inspectorPort),
    '--log-level',
    'warn',
    '--show-interactive-dev-session=false',
  ];
  if (opts.persistTo) args.push('--persist-to', opts.persistTo);
  args.push(...(opts.extraArgs ?? []));
  for (const [k, v] of Object.entries(opts.vars ?? {})) args.push('--var', `${k}:${v}`);
  const child = spawn(process.execPath, args, {
    cwd: path.dirname(configs[0]!),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { CLOUDFLARE_CF_FETCH_ENABLED: 'false', ...process.env, CI: '1', WRANGLER_SEND_METRICS: 'false' },
  });
  let output = '';
  // Everything wrangler and workerd print also goes to a file, for after-the-fact reading.
  const logFile = opts.logFile ?? path.join(ROOT, 'bench', 'data', `wrangler-${opts.port}.log`);
  writeFileSync(logFile, `${new Date().toISOString()} wrangler ${args.slice(1).join(' ')}\n`);
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
    appendFileSync(logFile, chunk);
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);

  const url = `http://127.0.0.1:${opts.port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev on port ${opts.port} exited:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`wrangler dev on port ${opts.port} did not become ready:\n${output}`);
    }
    try {
      if (await opts.ready(url)) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }

  const procs = descendants(child.pid!);
  const workerds = procs.filter((p) => p.cmdline.includes('workerd') && p.cmdline.includes(' serve '));
  const proxy = workerds.find((p) => p.cmdline.includes(`entry=127.0.0.1:${opts.port}`));
  const worker = workerds.find((p) => p !== proxy);
  if (!proxy || !worker) throw new Error(`could not find wrangler's workerd processes: ${procs.map((p) => p.cmdline).join('\n')}`);

  const directUrl = await findDirectUrl(worker, opts.inspectorPort, opts.isWorker ?? opts.ready);
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    // wrangler stops its workerd children on exit; make sure of it (only the ones this run started).
    for (const p of [proxy, worker]) {
      try {
        process.kill(p.pid, 0);
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  const restarts = () => (processInfo(worker.pid)?.ppid === worker.ppid ? 0 : 1);
  // `node wrangler.js` re-spawns itself (cli.js with extra Node flags): the real one is workerd's parent.
  return {
    url,
    port: opts.port,
    child,
    wranglerPid: proxy.ppid,
    proxyPid: proxy.pid,
    workerPid: worker.pid,
    directUrl,
    stop,
    log: () => output,
    restarts,
  };
}

/** Tries each port the Worker's workerd listens on (except the inspectors) with the readiness check. */
async function findDirectUrl(
  worker: ProcInfo,
  inspectorPort: number,
  check: (base: string) => Promise<boolean>,
): Promise<string | undefined> {
  for (const port of listeningPorts(worker.pid)) {
    if (port === inspectorPort) continue;
    const base = `http://127.0.0.1:${port}`;
    try {
      const inspector = await fetch(`${base}/json/version`, { signal: AbortSignal.timeout(2000) });
      if (inspector.ok && (await inspector.text()).includes('Browser')) continue;
    } catch {
      // not HTTP, or not an inspector
    }
    try {
      if (await check(base)) return base;
    } catch {
      // not the entry
    }
  }
  return undefined;
}

export function peakRss(pid: number): number {
  return memory(pid)?.peakRss ?? NaN;
}
