/** What an import read, stored, counted and left out: the figures of its progress and of its summary. */
import type { Origin } from './origin';
import type { Entry } from './pack';
import type { Held, RefusedFile, Refusal } from './refused-file';
import type { IngestAnswer } from './send';

/** A request not stored for good (a 400 about the request itself, retries spent). */
export interface Failure {
  message: string;
  records: number;
  first: Origin;
  last: Origin;
}

/** Refusals and failures kept to list (the rest are counted): an export of malformed records must not fill the memory. */
const MAX_KEPT = 50;

export class Tally {
  /** A dry run packs requests and sends none: nothing read is "not sent" then. */
  constructor(readonly dryRun: boolean) {}

  readonly started = Date.now();
  filesTotal = 0;
  filesRead = 0;
  readonly badFiles: { file: string; message: string }[] = [];
  /** Records read, bad NDJSON lines included (each is a conversation that could not be read). */
  records = 0;
  /** Records of requests answered 200: stored, or counted as duplicates or as without observations. */
  stored = 0;
  refusedCount = 0;
  readonly refusals: Refusal[] = [];
  readonly failures: Failure[] = [];
  failedRequests = 0;
  observations = 0;
  duplicates = 0;
  withoutObservations = 0;
  readonly skippedMetrics = new Map<string, number>();
  /** Requests sent (one resent after refusals counts again) or, in a dry run, packed; and their bytes. */
  requests = 0;
  bytes = 0;
  retries = 0;
  /** Requests answered 413 without naming a record, then sent again as two halves. */
  splits = 0;
  largestRequest = 0;
  /** The largest request answered 200: a size all on the way takes, what `--max-request-bytes` is suggested from after 413s. */
  largestStored = 0;
  /** Why the import stopped before the end, if it did. */
  stopped: string | undefined;
  /** Where every refused record is written with what it held (`--refused`); the list above keeps no records. */
  refusedFile: RefusedFile | undefined;

  refuse(refusal: Refusal, held: Held): void {
    this.refusedCount++;
    if (this.refusals.length < MAX_KEPT) this.refusals.push(refusal);
    this.refusedFile?.write(refusal, held);
  }

  request(bytes: number): void {
    this.requests++;
    this.bytes += bytes;
    this.largestRequest = Math.max(this.largestRequest, bytes);
  }

  storedBatch(records: number, bytes: number, answer: IngestAnswer): void {
    this.stored += records;
    this.largestStored = Math.max(this.largestStored, bytes);
    this.observations += answer.observations;
    this.duplicates += answer.duplicates;
    this.withoutObservations += answer.withoutObservations.count;
    for (const [name, n] of Object.entries(answer.skippedMetrics)) this.skippedMetrics.set(name, (this.skippedMetrics.get(name) ?? 0) + n);
  }

  failedBatch(entries: readonly Entry[], message: string): void {
    this.failedRequests++;
    if (this.failures.length < MAX_KEPT) {
      this.failures.push({ message, records: entries.length, first: entries[0]!.origin, last: entries.at(-1)!.origin });
    }
  }

  /** Records read and neither stored nor refused: in requests that failed, or not sent when the import stopped. */
  get notSent(): number {
    return this.dryRun ? 0 : this.records - this.stored - this.refusedCount;
  }

  get seconds(): number {
    return (Date.now() - this.started) / 1000;
  }

  /** Whether everything read was stored or counted. */
  get clean(): boolean {
    return this.badFiles.length === 0 && this.refusedCount === 0 && this.notSent === 0 && this.stopped === undefined;
  }
}
