/**
 * Packs records into ingest requests within the endpoint's limits (src/analytics/limits.ts): at most
 * 1,000 conversations and 5 MiB of body, measured on the bytes actually sent; or within lower limits
 * (`--max-records`, `--max-request-bytes`) when something on the way takes less.
 */
import { ANALYTICS_LIMITS } from '../../src/analytics/limits';
import type { Origin } from './origin';

/** One record, serialised once: its text goes into the body as it is. */
export interface Entry {
  text: string;
  bytes: number;
  origin: Origin;
  conversationId: string | undefined;
}

/** What one request may carry: its body's bytes (envelope included) and its conversations. */
export interface PackLimits {
  bytes: number;
  records: number;
}

export const MAX_RECORDS = ANALYTICS_LIMITS.maxConversationsPerIngest;
export const MAX_BODY_BYTES = ANALYTICS_LIMITS.ingestBodyBytes;

const OPEN = '{"conversations":[';
const CLOSE = ']}';
const ENVELOPE_BYTES = OPEN.length + CLOSE.length;

/**
 * The smallest conversation the server stores (a one-character id, an instant to the minute without offset, no
 * participants): a byte limit below its request could carry nothing at all.
 */
const SMALLEST_CONVERSATION = { conversationId: 'c', conversationStart: '2020-01-01T00:00', participants: [] };
export const MIN_BODY_BYTES = ENVELOPE_BYTES + JSON.stringify(SMALLEST_CONVERSATION).length;

export function toEntry(record: unknown, origin: Origin): Entry {
  const text = JSON.stringify(record);
  const id = (record as { conversationId?: unknown } | null)?.conversationId;
  return { text, bytes: Buffer.byteLength(text), origin, conversationId: typeof id === 'string' ? id : undefined };
}

export function bodyOf(entries: readonly Entry[]): string {
  return OPEN + entries.map((e) => e.text).join(',') + CLOSE;
}

/** The size of bodyOf(entries) without building it: the envelope, the records and a comma between each two. */
export function bodyBytes(entries: readonly Entry[]): number {
  return entries.reduce((sum, e) => sum + e.bytes, ENVELOPE_BYTES + Math.max(0, entries.length - 1));
}

/** Whether a record fits a request of `maxBytes` on its own; one that does not can never be sent. */
export function fitsAlone(entry: Entry, maxBytes: number): boolean {
  return ENVELOPE_BYTES + entry.bytes <= maxBytes;
}

export class Packer {
  private entries: Entry[] = [];
  private bytes = ENVELOPE_BYTES;

  constructor(private readonly limits: PackLimits) {}

  /** Adds a record that fits alone; answers the request it closed, if it did not fit into the open one. */
  add(entry: Entry): Entry[] | undefined {
    if (!fitsAlone(entry, this.limits.bytes)) throw new Error(`a record of ${entry.bytes} bytes never fits a request`);
    const comma = this.entries.length > 0 ? 1 : 0;
    let closed: Entry[] | undefined;
    if (this.entries.length >= this.limits.records || this.bytes + comma + entry.bytes > this.limits.bytes) closed = this.flush();
    this.bytes += (this.entries.length > 0 ? 1 : 0) + entry.bytes;
    this.entries.push(entry);
    return closed;
  }

  /** The open request, if it holds anything. */
  flush(): Entry[] | undefined {
    if (this.entries.length === 0) return undefined;
    const full = this.entries;
    this.entries = [];
    this.bytes = ENVELOPE_BYTES;
    return full;
  }
}
