/**
 * Delivers packed requests, a few at a time. Ingest is all or nothing per request: when the server refuses
 * some records (a 400 naming each in `errors[]`), they are taken out and reported, and the rest of the
 * request is sent again, until it is stored or nothing is left. A request answered 413 (something on the
 * way takes less than the requests we pack) is sent again in two halves, each split again while it must.
 */
import type { Entry } from './pack';
import { bodyBytes, bodyOf } from './pack';
import type { Outcome, RecordError } from './send';
import { fmt } from './sizes';
import type { Tally } from './tally';

/** `conversations[7].participants[0]…`: the index is the record's place in the request sent. */
const REQUEST_FIELD = /^conversations\[(\d+)\]\.?/;
/** The server's message opens with the record's place in the request, which means nothing in the file. */
const REQUEST_PLACE = /^conversations\[\d+\](?: \(.*?\))? is refused: /;

/**
 * The records of the request each error is about: by the index of its field, which tells apart two records
 * of one conversation; by its entityId (the conversationId) when no field names an index.
 */
export function refusedRecords(entries: readonly Entry[], errors: readonly RecordError[]): Map<number, RecordError> {
  const found = new Map<number, RecordError>();
  for (const error of errors) {
    const index = Number(REQUEST_FIELD.exec(error.fieldName ?? '')?.[1] ?? NaN);
    if (Number.isInteger(index) && index < entries.length) found.set(index, error);
    else if (error.entityId !== undefined) entries.forEach((e, i) => e.conversationId === error.entityId && found.set(i, error));
  }
  return found;
}

export async function deliver(entries: Entry[], post: (body: string) => Promise<Outcome>, tally: Tally): Promise<void> {
  let pending = entries;
  while (pending.length > 0) {
    const outcome = await post(bodyOf(pending));
    if (outcome.kind === 'stored') {
      tally.storedBatch(pending.length, bodyBytes(pending), outcome.answer);
      return;
    }
    if (outcome.kind === 'too-large') return split(pending, outcome.message, post, tally);
    const refused = outcome.kind === 'refused' ? refusedRecords(pending, outcome.records) : new Map<number, RecordError>();
    if (refused.size === 0) {
      tally.failedBatch(pending, outcome.message);
      return;
    }
    for (const [i, error] of refused) {
      const entry = pending[i]!;
      let message = error.message.replace(REQUEST_PLACE, '');
      // The field opens the message too; it is listed on its own, relative to the record.
      if (error.fieldName !== undefined && message.startsWith(`${error.fieldName}: `)) message = message.slice(error.fieldName.length + 2);
      const field = error.fieldName?.replace(REQUEST_FIELD, '');
      const refusal = { origin: entry.origin, conversationId: entry.conversationId, message, ...(field ? { fieldName: field } : {}) };
      tally.refuse(refusal, { record: entry.text });
    }
    pending = pending.filter((_, i) => !refused.has(i));
  }
}

/** Where to cut a request in two of about the same bytes, each with one record at least. */
function halfway(entries: readonly Entry[]): number {
  const total = entries.reduce((sum, e) => sum + e.bytes, 0);
  let i = 0;
  for (let bytes = 0; i < entries.length - 1 && (bytes + entries[i]!.bytes) * 2 <= total; i++) bytes += entries[i]!.bytes;
  return Math.max(1, i);
}

/** The halves go one after the other, in the slot of the request they came from: the concurrency stays as asked. */
async function split(entries: Entry[], message: string, post: (body: string) => Promise<Outcome>, tally: Tally): Promise<void> {
  if (entries.length === 1) {
    const entry = entries[0]!;
    const alone = `is ${fmt(entry.bytes)} bytes, more than the server takes in a request (it answered ${message}): not stored`;
    tally.refuse({ origin: entry.origin, conversationId: entry.conversationId, message: alone }, { record: entry.text });
    return;
  }
  tally.splits++;
  const cut = halfway(entries);
  await deliver(entries.slice(0, cut), post, tally);
  await deliver(entries.slice(cut), post, tally);
}

/** Runs at most `limit` tasks at once. The first task that throws stops it: run() and drain() throw its error. */
export class Pool {
  private readonly running = new Set<Promise<void>>();
  private failure: { error: unknown } | undefined;

  constructor(private readonly limit: number) {}

  async run(task: () => Promise<void>): Promise<void> {
    while (this.running.size >= this.limit && !this.failure) await Promise.race(this.running);
    this.check();
    const done: Promise<void> = task()
      .catch((error: unknown) => {
        this.failure ??= { error };
      })
      .finally(() => this.running.delete(done));
    this.running.add(done);
  }

  async drain(): Promise<void> {
    await Promise.all(this.running);
    this.check();
  }

  private check(): void {
    if (this.failure) throw this.failure.error;
  }
}
