/**
 * Packs records into ingest requests within the endpoint's limits (src/analytics/limits.ts): at most
 * 1,000 conversations and 5 MiB of body, measured on the bytes actually sent.
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

const MAX_CONVERSATIONS = ANALYTICS_LIMITS.maxConversationsPerIngest;
export const MAX_BODY_BYTES = ANALYTICS_LIMITS.ingestBodyBytes;

const OPEN = '{"conversations":[';
const CLOSE = ']}';
const ENVELOPE_BYTES = OPEN.length + CLOSE.length;

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

/** Whether a record fits a request on its own; one that does not can never be sent. */
export function fitsAlone(entry: Entry): boolean {
  return ENVELOPE_BYTES + entry.bytes <= MAX_BODY_BYTES;
}

export class Packer {
  private entries: Entry[] = [];
  private bytes = ENVELOPE_BYTES;

  /** Adds a record that fits alone; answers the request it closed, if it did not fit into the open one. */
  add(entry: Entry): Entry[] | undefined {
    if (!fitsAlone(entry)) throw new Error(`a record of ${entry.bytes} bytes never fits a request`);
    const comma = this.entries.length > 0 ? 1 : 0;
    let closed: Entry[] | undefined;
    if (this.entries.length >= MAX_CONVERSATIONS || this.bytes + comma + entry.bytes > MAX_BODY_BYTES) closed = this.flush();
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
