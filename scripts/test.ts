/**
 * `npm test`: every check and every test, in three parts that run at the same time.
 *
 * - checks: the type checks and the linter (`npm run typecheck`, `npm run lint`);
 * - workerd: vitest's projects inside workerd (workers, units, partitions), printed as it runs;
 * - e2e: vitest's e2e project (wrangler dev, Chromium), two files at a time.
 *
 * Run one after another they took ~7.5 min on the 2-core machine, while the e2e files mostly wait
 * (servers starting, a browser's timers, a heartbeat running out) and leave a core idle. The workerd part
 * runs at a lower CPU priority: it only needs throughput, while the e2e tests wait on real timers that a
 * starved process would miss.
 *
 * The checks' and e2e output is printed when each part ends; a part that fails has its failed tests named
 * again after the summary (failureRecap), and so has every test that passed only on a retry. `npm test -- <vitest args>` runs just `vitest run <args>` (e.g.
 * one file), as before.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { setPriority } from 'node:os';

interface Part {
  name: string;
  command: string;
  args: string[];
  /** Streamed as it comes (one part at most); the others are printed when they end. */
  live?: boolean;
  /** Added to the part's niceness (0 to 19): lower CPU priority. */
  nice?: number;
}

const extra = process.argv.slice(2);
const parts: Part[] =
  extra.length > 0
    ? [{ name: 'vitest', command: 'npx', args: ['vitest', 'run', ...extra], live: true }]
    : [
        { name: 'checks', command: 'sh', args: ['-c', 'npm run --silent typecheck && npm run --silent lint'] },
        {
          name: 'workerd',
          command: 'npx',
          args: ['vitest', 'run', '--project', 'workers', '--project', 'schema', '--project', 'partitions'],
          live: true,
          nice: 10,
        },
        { name: 'e2e', command: 'npx', args: ['vitest', 'run', '--project', 'e2e'] },
      ];

const children = new Set<ChildProcess>();
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(130);
  });

/** How many of a failed part's failures are named again at the very end. */
const RECAP_FAILURES = 6;

function run(part: Part): Promise<{ part: Part; code: number; seconds: number; output: string }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(part.command, part.args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: process.stdout.isTTY ? '1' : '0' },
    });
    children.add(child);
    // Set before the child has started anything of its own: workerd and its forks inherit it.
    if (part.nice && child.pid) setPriority(child.pid, part.nice);
    const output: Buffer[] = [];
    const take = (stream: NodeJS.WriteStream) => (chunk: Buffer) => {
      output.push(chunk);
      if (part.live) stream.write(chunk);
    };
    child.stdout?.on('data', take(process.stdout));
    child.stderr?.on('data', take(process.stderr));
    child.on('close', (code, signal) => {
      children.delete(child);
      const seconds = (Date.now() - started) / 1000;
      if (!part.live) {
        process.stdout.write(`\n──── ${part.name} (${seconds.toFixed(0)} s) ────\n`);
        process.stdout.write(Buffer.concat(output));
      }
      resolve({ part, code: code ?? (signal ? 1 : 0), seconds, output: Buffer.concat(output).toString() });
    });
  });
}

const results = await Promise.all(parts.map(run));
process.stdout.write('\n');
for (const { part, code, seconds } of results)
  process.stdout.write(`${code === 0 ? 'passed' : `FAILED (exit ${code})`}  ${part.name}  ${seconds.toFixed(0)} s\n`);
for (const { part, code, output } of results) if (code !== 0 && parts.length > 1) process.stdout.write(failureRecap(part.name, output));
// Tests that passed only on a retry (test/support/retried-reporter.ts), in sight whatever the outcome.
const retried = results.flatMap(({ output }) =>
  stripColour(output)
    .split('\n')
    .filter((line) => line.startsWith('[retried] ')),
);
if (retried.length > 0 && parts.length > 1)
  process.stdout.write(`${retried.length} test(s) passed only on a retry:\n${retried.join('\n')}\n`);
process.exit(results.some(({ code }) => code !== 0) ? 1 : 0);

/**
 * The failed tests of a part, each with its error's first line, in a few lines at the very end: CI keeps
 * only the last lines of a run's output, and a part that ended early (e2e) was buried under the others'.
 */
function failureRecap(name: string, output: string): string {
  const lines = stripColour(output).split('\n');
  const failures: string[] = [];
  lines.forEach((line, at) => {
    // vitest's list of failures: " FAIL  e2e  test/e2e/x.test.ts > describe > test", then the error.
    if (!/^ FAIL /.test(line)) return;
    const error = lines.slice(at + 1).find((next) => next.trim() !== '') ?? '';
    failures.push(`  ${line.replace(/^ FAIL\s+/, '')}\n    ${error.trim().slice(0, 200)}`);
  });
  const shown = failures.slice(0, RECAP_FAILURES);
  const more = failures.length > shown.length ? `  …and ${failures.length - shown.length} more\n` : '';
  return shown.length === 0
    ? `${name}: no test failed; the end of its output:\n${lines.slice(-8).join('\n')}\n`
    : `${name}: ${failures.length} failed\n${shown.join('\n')}\n${more}`;
}

function stripColour(text: string): string {
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}
