/** The command line of `npm run import`: its flags, checked before anything is read or sent. */
import { stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { formatOf } from './files';
import { MAX_BODY_BYTES, MAX_RECORDS, MIN_BODY_BYTES, type PackLimits } from './pack';
import type { Target } from './send';
import { fmt, formatSize, parseSize } from './sizes';

export const INGEST_PATH = '/api/v2/analytics/conversations/details/ingest';
export const TOKEN_ENV = 'SWITCHBOARD_TOKEN';
const MAX_CONCURRENCY = 16;

export const USAGE = `Usage: npm run import -- --url URL [--token T] [options] <file|dir>…

Sends Genesys Cloud conversation-detail exports to Switchboard's ingest endpoint.

  --url URL            Switchboard's base URL (https://switchboard.example.com) or the full ingest URL
                       (…${INGEST_PATH})
  --token T            bearer token with analytics:conversation:ingest (default: $${TOKEN_ENV}, which keeps
                       it out of the shell's history)
  --concurrency N      requests in flight, 1 to ${MAX_CONCURRENCY} (default 4)
  --dry-run            read, check and pack the files, say what would be sent, send nothing
                       (needs neither --url nor a token)
  --max-request-bytes N
                       largest request body, in bytes or with K, KiB, M or MiB (1024-based), from ${fmt(MIN_BODY_BYTES)} bytes
                       to ${formatSize(MAX_BODY_BYTES)} (the default): set it below a proxy's body limit, whose 413s otherwise have
                       requests split and sent again. A conversation larger on its own is refused here
  --max-records N      most conversations in a request, 1 to ${fmt(MAX_RECORDS)} (the default)
  --refused FILE       write each refused record to FILE (.ndjson or .jsonl, emptied first), one line each:
                       {"file", "line" or "index", "conversationId", "field", "message", "record"} ("text",
                       the line cut to 64 KiB, instead of "record" for a line that was no conversation).
                       Fix the records and import FILE again: a line with a "record" is read as that record
  -h, --help           this text

Reads .json files (a details query's answer {"conversations": […]}, a page of an async details job, or one
conversation as GET /api/v2/analytics/conversations/{id}/details answers it) and .ndjson / .jsonl files (one
conversation per line, as \`npm run simulate -- --out FILE\` writes them); directories are searched recursively,
files read in name order. Requests carry at most ${fmt(MAX_RECORDS)} conversations and ${formatSize(MAX_BODY_BYTES)} (or what --max-records and
--max-request-bytes say); records the server refuses are taken out, the rest sent again, and each is listed with
its file (and line). A request answered 413 (a proxy's limit below ${formatSize(MAX_BODY_BYTES)}) is sent again in two halves, split
again while it must, and the summary suggests a --max-request-bytes that avoids it; a conversation too large
alone is refused. Running the same import again is safe: what is stored already counts as duplicates.

Exit codes: 0 everything stored or counted, 1 something refused, unreadable or not sent, 2 bad arguments.
`;

export class UsageError extends Error {}

export interface ImportOptions {
  /** Where to send; none in a dry run. */
  target: Target | undefined;
  concurrency: number;
  /** Files and directories, as given. */
  paths: string[];
  /** Where to write the refused records (`--refused`), if anywhere. */
  refused: string | undefined;
  /** What each request may carry (`--max-request-bytes`, `--max-records`). */
  limits: PackLimits;
}

function parseFlags(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        concurrency: { type: 'string' },
        'dry-run': { type: 'boolean' },
        refused: { type: 'string' },
        'max-request-bytes': { type: 'string' },
        'max-records': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** A base URL gets the ingest path appended (after any path prefix a proxy puts it under); the full URL is taken as it is. */
export function ingestUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url must be an http(s) URL (got "${raw}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--url must be an http(s) URL (got "${raw}")`);
  if (!url.pathname.endsWith(INGEST_PATH)) url.pathname = url.pathname.replace(/\/+$/, '') + INGEST_PATH;
  return url.href;
}

function concurrency(raw: string | undefined): number {
  if (raw === undefined) return 4;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= MAX_CONCURRENCY))
    throw new UsageError(`--concurrency must be a whole number from 1 to ${MAX_CONCURRENCY} (got "${raw}")`);
  return n;
}

function maxRequestBytes(raw: string | undefined): number {
  if (raw === undefined) return MAX_BODY_BYTES;
  const n = parseSize(raw);
  if (n === undefined || n < MIN_BODY_BYTES || n > MAX_BODY_BYTES) {
    throw new UsageError(
      `--max-request-bytes must be from ${fmt(MIN_BODY_BYTES)} bytes to ${formatSize(MAX_BODY_BYTES)}, in bytes or with K, KiB, M or MiB (got "${raw}")`,
    );
  }
  return n;
}

function maxRecords(raw: string | undefined): number {
  if (raw === undefined) return MAX_RECORDS;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= MAX_RECORDS))
    throw new UsageError(`--max-records must be a whole number from 1 to ${fmt(MAX_RECORDS)} (got "${raw}")`);
  return n;
}

/** Every path must exist; a file named on its own must have an extension the reader knows. */
async function checkPaths(paths: string[], readable: (file: string) => boolean): Promise<void> {
  if (paths.length === 0) throw new UsageError('name at least one file or directory to import');
  for (const p of paths) {
    const info = await stat(p).catch(() => undefined);
    if (!info) throw new UsageError(`${p}: no such file or directory`);
    if (info.isFile() && !readable(p)) throw new UsageError(`${p}: not a .json, .ndjson or .jsonl file`);
    if (!info.isFile() && !info.isDirectory()) throw new UsageError(`${p}: neither a file nor a directory`);
  }
}

export async function parseCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  readable: (file: string) => boolean,
): Promise<ImportOptions | 'help'> {
  const { values, positionals } = parseFlags(argv);
  if (values.help) return 'help';
  // A URL is checked even in a dry run: the same command line is then run without --dry-run.
  const url = values.url === undefined ? undefined : ingestUrl(values.url);
  const token = values.token ?? (env[TOKEN_ENV] || undefined);
  let target: Target | undefined;
  if (values['dry-run'] !== true) {
    if (url === undefined) throw new UsageError('--url is needed (the Switchboard to send to)');
    if (token === undefined) {
      throw new UsageError(`a token is needed: --token T or $${TOKEN_ENV} (a bearer token with analytics:conversation:ingest)`);
    }
    target = { url, token };
  }
  // Written as NDJSON, and named so: the same file is imported again once fixed.
  if (values.refused !== undefined && formatOf(values.refused) !== 'ndjson') {
    throw new UsageError(`--refused must name a .ndjson or .jsonl file, to be imported again (got "${values.refused}")`);
  }
  const options = {
    target,
    concurrency: concurrency(values.concurrency),
    paths: positionals,
    refused: values.refused,
    limits: { bytes: maxRequestBytes(values['max-request-bytes']), records: maxRecords(values['max-records']) },
  };
  await checkPaths(options.paths, readable);
  return options;
}
