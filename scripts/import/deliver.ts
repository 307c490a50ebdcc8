/**
 * Delivers packed requests, a few at a time. Ingest is all or nothing per request: when the server refuses
 * some records (a 400 naming each in `errors[]`), they are taken out and reported, and the rest of the
 * request is sent again, until it is stored or nothing is left.
 */
import type { Entry } from './pack';
import { bodyOf } from './pack';
import type { Outcome, RecordError } from './send';
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
      tally.storedBatch(pending.length, outcome.answer);
      return;
    }
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
      tally.refuse({ origin: entry.origin, conversationId: entry.conversationId, message, ...(field ? { fieldName: field } : {}) });
    }
    pending = pending.filter((_, i) => !refused.has(i));
  }
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
