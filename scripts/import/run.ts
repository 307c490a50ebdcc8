/** An import from end to end: files listed, records read and packed, requests delivered, all of it tallied. */
import { realpath } from 'node:fs/promises';
import { type ImportOptions, UsageError } from './cli';
import { Pool, deliver } from './deliver';
import { listFiles } from './files';
import { type Entry, MAX_BODY_BYTES, Packer, bodyBytes, fitsAlone, toEntry } from './pack';
import { readRecords } from './read-records';
import { RefusedFile } from './refused-file';
import { FatalAnswer, postIngest, type Target } from './send';
import { fmt } from './sizes';
import type { Tally } from './tally';

/**
 * The refused file, emptied or created before anything is read. It must not be one of the files read: it
 * would be emptied before being read (the usual mistake: written into the export's folder, then the folder imported again).
 */
async function createRefusedFile(file: string, reading: readonly string[]): Promise<RefusedFile> {
  const real = await realpath(file).catch(() => undefined);
  for (const read of reading) {
    if (real !== undefined && (await realpath(read)) === real) {
      throw new UsageError(`--refused ${file} is also a file to import: name another file, or move it out of the folders imported`);
    }
  }
  try {
    return RefusedFile.create(file);
  } catch (err) {
    throw new UsageError(`--refused ${file} cannot be written: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * A dry run (no target) packs and sends nothing: `onPacked` sees each request it would send. Throws UsageError
 * when `--refused` names a file it must not or cannot write.
 */
export async function runImport(options: ImportOptions, tally: Tally, onPacked?: (entries: Entry[], bytes: number) => void): Promise<void> {
  const files = await listFiles(options.paths);
  if (options.refused !== undefined) tally.refusedFile = await createRefusedFile(options.refused, files);
  try {
    await importFiles(files, options, tally, onPacked);
  } finally {
    tally.refusedFile?.close();
  }
}

async function importFiles(
  files: string[],
  options: ImportOptions,
  tally: Tally,
  onPacked: ((entries: Entry[], bytes: number) => void) | undefined,
): Promise<void> {
  tally.filesTotal = files.length;
  const stop = new AbortController();
  const pool = new Pool(options.concurrency);
  const packer = new Packer(options.limits);

  const post = (target: Target) => (body: string) => {
    tally.request(Buffer.byteLength(body));
    return postIngest(target, body, { signal: stop.signal, onRetry: () => tally.retries++ });
  };
  const dispatch = async (entries: Entry[] | undefined): Promise<void> => {
    if (entries === undefined) return;
    const { target } = options;
    // Waits for a free slot: reading stays at most one request ahead of the sending.
    if (target) return pool.run(() => deliver(entries, post(target), tally));
    const bytes = bodyBytes(entries);
    tally.request(bytes);
    onPacked?.(entries, bytes);
  };

  try {
    for await (const event of readRecords(files)) {
      if (event.kind === 'file-done') tally.filesRead++;
      else if (event.kind === 'bad-file') tally.badFiles.push({ file: event.file, message: event.message });
      else if (event.kind === 'bad-line') {
        tally.records++;
        tally.refuse(
          { origin: event.origin, conversationId: event.conversationId, message: `line ${event.message}` },
          { text: event.text },
        );
      } else {
        tally.records++;
        const entry = toEntry(event.record, event.origin);
        if (fitsAlone(entry, options.limits.bytes)) await dispatch(packer.add(entry));
        else {
          const limit = `${fmt(options.limits.bytes)} bytes with its envelope${options.limits.bytes < MAX_BODY_BYTES ? ', --max-request-bytes' : ''}`;
          const message = `is ${fmt(entry.bytes)} bytes, more than one request may carry (${limit}): not sent`;
          tally.refuse({ origin: entry.origin, conversationId: entry.conversationId, message }, { record: entry.text });
        }
      }
    }
    await dispatch(packer.flush());
    await pool.drain();
  } catch (err) {
    if (!(err instanceof FatalAnswer)) throw err;
    tally.stopped = `the server answered ${err.message}`;
    // Ends the requests still in flight and their waits; what they carried counts as not sent.
    stop.abort(err);
    await pool.drain().catch(() => undefined);
  }
}
