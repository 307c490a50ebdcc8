/**
 * `npm run import -- --url URL [--token T] [--concurrency N] [--max-request-bytes N] [--max-records N] [--dry-run]
 *   [--refused FILE] <file|dir>…`
 *
 * Imports Genesys Cloud conversation-detail exports (details query answers, async details job pages, single
 * conversations, NDJSON) into a Switchboard through its ingest endpoint: packed into requests within its
 * limits, a few in flight, retried when the server is busy, split when a proxy finds them too large, records
 * it refuses taken out and reported (and written to a file to fix and import again).
 * Exit codes: 0 everything stored or counted, 1 something refused, unreadable or not sent, 2 bad arguments.
 */
import { parseCli, USAGE, UsageError, type ImportOptions } from './import/cli';
import { formatOf } from './import/files';
import { Progress } from './import/progress';
import { runImport } from './import/run';
import { packedLine, summaryLines } from './import/summary';
import { Tally } from './import/tally';

function usageError(err: unknown): 2 {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`import: ${err.message}\n\n${USAGE}`);
  return 2;
}

async function main(argv: readonly string[]): Promise<number> {
  let options: ImportOptions | 'help';
  try {
    options = await parseCli(argv, process.env, (file) => formatOf(file) !== undefined);
  } catch (err) {
    return usageError(err);
  }
  if (options === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }

  const tally = new Tally(options.target === undefined);
  const progress = new Progress(tally);
  try {
    await runImport(options, tally, (entries, bytes) => process.stdout.write(`${packedLine(tally.requests, entries, bytes)}\n`));
  } catch (err) {
    // Only a --refused file that cannot be written, found before anything is read.
    return usageError(err);
  } finally {
    progress.stop();
  }
  process.stdout.write(`${summaryLines(tally, options.limits).join('\n')}\n`);
  if (tally.stopped !== undefined) process.stderr.write(`import: stopped: ${tally.stopped}\n`);
  return tally.clean ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`import: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
