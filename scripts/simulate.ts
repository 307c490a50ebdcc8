/**
 * `npm run simulate -- --days 7 --conversations 50000 --seed 42 [--end ISO] [--out file.ndjson | --ingest URL --token T]`
 *
 * Deterministic contact-center traffic (see scripts/simulator/index.ts for what it looks like). Writes NDJSON,
 * posts it to the ingest endpoint in batches, or prints a summary. Exit codes: 0 done, 1 failed, 2 bad arguments.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  FLOW_METRIC_NAMES,
  MAX_CONVERSATIONS,
  MAX_DAYS,
  SummaryCollector,
  optionProblems,
  simulateConversations,
  type ConversationRecord,
  type SimulationOptions,
  type SimulationSummary,
} from './simulator/index';
import { ingestOverHttp } from './dev/http-ingest';

const FLOW_METRICS: ReadonlySet<string> = new Set(FLOW_METRIC_NAMES);

const USAGE = `Usage: npm run simulate -- [options]

  --days N             length of the window in days, up to ${MAX_DAYS} (default 7)
  --conversations N    conversations starting in the window, 1 to ${MAX_CONVERSATIONS.toLocaleString('en-US')} (default 50000)
  --seed N             seed, a whole number >= 0 (default 42); same options, same records
  --end ISO            end of the window (exclusive), e.g. 2026-11-16T00:00:00Z (default: now, to the minute)
  --out FILE           write NDJSON, one conversation per line ("-" for stdout)
  --ingest URL         POST batches of 1,000 to URL (…/api/v2/analytics/conversations/details/ingest)
  --token T            bearer token for --ingest (needs analytics:conversation:ingest)
  --concurrency N      requests in flight with --ingest, 1 to 16 (default 4)

Without --out or --ingest, prints a summary of the traffic.
`;

class UsageError extends Error {}

interface Cli {
  options: SimulationOptions;
  out: string | undefined;
  ingest: { url: string; token: string; concurrency: number } | undefined;
}

function wholeNumber(name: string, raw: string | undefined, fallback: number, lo: number, hi: number): number {
  if (raw === undefined) return fallback;
  const text = raw.replaceAll('_', '');
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < lo || n > hi) {
    throw new UsageError(`--${name} must be a whole number from ${lo} to ${hi.toLocaleString('en-US')} (got "${raw}")`);
  }
  return n;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

function parseFlags(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        days: { type: 'string' },
        conversations: { type: 'string' },
        seed: { type: 'string' },
        end: { type: 'string' },
        out: { type: 'string' },
        ingest: { type: 'string' },
        token: { type: 'string' },
        concurrency: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

export function parseCli(argv: readonly string[]): Cli | 'help' {
  const values = parseFlags(argv);
  if (values.help) return 'help';

  let days = 7;
  if (values.days !== undefined) {
    days = /^\d+(\.\d+)?$/.test(values.days) ? Number(values.days) : NaN;
    if (!(days * 1440 >= 1) || days > MAX_DAYS) {
      throw new UsageError(`--days must be a number of days from 1/1440 (one minute) to ${MAX_DAYS} (got "${values.days}")`);
    }
  }
  const conversations = wholeNumber('conversations', values.conversations, 50_000, 1, MAX_CONVERSATIONS);
  const seed = wholeNumber('seed', values.seed, 42, 0, Number.MAX_SAFE_INTEGER);

  let end: Date;
  if (values.end === undefined) {
    end = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  } else {
    end = new Date(values.end);
    if (!ISO_INSTANT.test(values.end) || Number.isNaN(end.getTime())) {
      throw new UsageError(`--end must be an ISO 8601 date, e.g. 2026-11-16T00:00:00Z (got "${values.end}")`);
    }
  }

  if (values.out !== undefined && values.ingest !== undefined) throw new UsageError('use either --out or --ingest, not both');
  if (values.out === '') throw new UsageError('--out needs a file name (or "-" for stdout)');
  let ingest: Cli['ingest'];
  if (values.ingest !== undefined) {
    let url: URL;
    try {
      url = new URL(values.ingest);
    } catch {
      throw new UsageError(`--ingest must be an http(s) URL (got "${values.ingest}")`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new UsageError(`--ingest must be an http(s) URL (got "${values.ingest}")`);
    }
    if (!values.token) throw new UsageError('--ingest needs --token (a bearer token with analytics:conversation:ingest)');
    ingest = {
      url: url.href,
      token: values.token,
      concurrency: wholeNumber('concurrency', values.concurrency, 4, 1, 16),
    };
  } else {
    if (values.token !== undefined) throw new UsageError('--token is only used with --ingest');
    if (values.concurrency !== undefined) throw new UsageError('--concurrency is only used with --ingest');
  }

  const options: SimulationOptions = { days, conversations, seed, end };
  const problems = optionProblems(options);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return { options, out: values.out, ingest };
}

// ---- progress on stderr: a bar on a terminal, a line per 10 % otherwise ----

class Progress {
  /** Shorter runs take a second or two: no progress for them. */
  static readonly LONG_RUN = 20_000;
  private done = 0;
  private lastDraw = 0;
  private lastDecile = 0;
  private readonly started = Date.now();
  private readonly tty = process.stderr.isTTY === true;

  constructor(
    private readonly total: number,
    private readonly verb: string,
  ) {}

  advance(n: number): void {
    this.done += n;
    if (this.total < Progress.LONG_RUN) return;
    if (this.tty) {
      const now = Date.now();
      if (now - this.lastDraw >= 100 || this.done >= this.total) {
        this.lastDraw = now;
        this.draw();
      }
      return;
    }
    const decile = Math.floor((this.done * 10) / this.total);
    if (decile > this.lastDecile) {
      this.lastDecile = decile;
      process.stderr.write(`${this.verb} ${fmt(this.done)}/${fmt(this.total)} (${decile * 10}%)\n`);
    }
  }

  finish(): void {
    if (this.tty && this.total >= Progress.LONG_RUN) process.stderr.write('\n');
  }

  private draw(): void {
    const width = 30;
    const ratio = Math.min(1, this.done / this.total);
    const filled = Math.round(ratio * width);
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? this.done / seconds : 0;
    const eta = rate > 0 ? Math.ceil((this.total - this.done) / rate) : 0;
    process.stderr.write(
      `\r${this.verb} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ` +
        `${fmt(this.done)}/${fmt(this.total)} ${fmt(Math.round(rate))}/s ETA ${eta}s   `,
    );
  }
}

const fmt = (n: number): string => n.toLocaleString('en-US');

// ---- outputs ----

class OutputError extends Error {}

async function writeNdjson(records: Iterable<ConversationRecord>, out: string, progress: Progress): Promise<void> {
  const stream = out === '-' ? process.stdout : createWriteStream(out);
  let error: Error | undefined;
  const failed = new Promise<never>((_, reject) =>
    stream.once('error', (err: Error) => {
      error = err;
      reject(new OutputError(`cannot write ${out}: ${err.message}`));
    }),
  );
  failed.catch(() => undefined);
  let lines: string[] = [];
  const flush = async (): Promise<void> => {
    if (error !== undefined) await failed;
    if (lines.length === 0) return;
    const ok = stream.write(`${lines.join('\n')}\n`);
    progress.advance(lines.length);
    lines = [];
    if (!ok) await Promise.race([once(stream, 'drain').catch(() => failed), failed]);
  };
  for (const record of records) {
    lines.push(JSON.stringify(record));
    if (lines.length === 500) await flush();
  }
  await flush();
  if (stream !== process.stdout) await Promise.race([new Promise<void>((resolve) => stream.end(resolve)), failed]);
}

function printSummary(s: SimulationSummary, cli: Cli, seconds: number): void {
  const { options } = cli;
  const start = new Date(options.end.getTime() - Math.round(options.days * 86_400_000));
  const table = (title: string, counts: Record<string, number>): string[] => [
    title,
    ...Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `  ${k.padEnd(22)}${fmt(n).padStart(12)}  ${((100 * n) / s.conversations).toFixed(1).padStart(5)} %`),
  ];
  const lines = [
    `${fmt(s.conversations)} conversations from ${start.toISOString()} to ${options.end.toISOString()} (seed ${options.seed})`,
    `${fmt(s.observations)} observations (and ${fmt(s.flowMetrics)} flow metrics, which ingest skips); ${fmt(s.inProgress)} conversations still in progress at the end`,
    ...table('by media type', s.byMediaType),
    ...table('by outcome (first queue, or dialling for outbound)', s.byOutcome),
    `generated in ${seconds.toFixed(1)} s (${fmt(Math.round(s.conversations / Math.max(seconds, 0.001)))} conversations/s)`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main(argv: readonly string[]): Promise<number> {
  let cli: Cli | 'help';
  try {
    cli = parseCli(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`simulate: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (cli === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }

  const started = Date.now();
  const total = cli.options.conversations;
  const summary = new SummaryCollector();
  let observations = 0;
  const records = (function* (): Generator<ConversationRecord> {
    for (const r of simulateConversations(cli.options)) {
      // What ingest stores: flow metrics (nFlow, tFlow... of IVR sessions) are skipped there.
      for (const p of r.participants) {
        for (const s of p.sessions) for (const m of s.metrics ?? []) if (!FLOW_METRICS.has(m.name)) observations++;
      }
      yield r;
    }
  })();
  const seconds = (): number => (Date.now() - started) / 1000;

  if (cli.out !== undefined) {
    const progress = new Progress(total, 'writing');
    try {
      await writeNdjson(records, cli.out, progress);
    } catch (err) {
      progress.finish();
      if (!(err instanceof OutputError)) throw err;
      process.stderr.write(`simulate: ${err.message}\n`);
      return 1;
    }
    progress.finish();
    const where = cli.out === '-' ? 'stdout' : cli.out;
    process.stderr.write(
      `wrote ${fmt(total)} conversations (${fmt(observations)} observations) to ${where} ` +
        `in ${seconds().toFixed(1)} s (${fmt(Math.round(total / Math.max(seconds(), 0.001)))} conversations/s)\n`,
    );
    return 0;
  }

  if (cli.ingest !== undefined) {
    const progress = new Progress(total, 'ingesting');
    let acknowledged = 0;
    try {
      const totals = await ingestOverHttp(cli.ingest.url, cli.ingest.token, records, {
        batchSize: 1000,
        inFlight: cli.ingest.concurrency,
        onBatch: (sum) => {
          progress.advance(sum.conversations - acknowledged);
          acknowledged = sum.conversations;
        },
      });
      progress.finish();
      process.stdout.write(`${JSON.stringify(totals)}\n`);
      process.stderr.write(
        `ingested ${fmt(totals.conversations)} conversations in ${seconds().toFixed(1)} s ` +
          `(${fmt(Math.round(totals.conversations / Math.max(seconds(), 0.001)))} conversations/s)\n`,
      );
      return 0;
    } catch (err) {
      progress.finish();
      const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
      process.stderr.write(`simulate: ingest to ${cli.ingest.url} failed: ${err instanceof Error ? err.message : String(err)}${cause}\n`);
      return 1;
    }
  }

  const progress = new Progress(total, 'simulating');
  let n = 0;
  for (const record of records) {
    summary.add(record);
    if (++n % 1000 === 0) progress.advance(1000);
  }
  progress.advance(n % 1000);
  progress.finish();
  printSummary(summary.result(), cli, seconds());
  return 0;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`simulate: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
