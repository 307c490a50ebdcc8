/**
 * `--refused FILE`: every refused record written out as an NDJSON line, so that a user can fix the records
 * and import that file again. A line holds where the record was read, why it was refused and the record
 * as read (or, for a line that was no conversation, its text), and read-records reads such a line back
 * as its `record`.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { Origin } from './origin';

/** A record not stored: refused by the server, or here (a bad NDJSON line, a record over the size limit). */
export interface Refusal {
  origin: Origin;
  conversationId: string | undefined;
  message: string;
  fieldName?: string;
}

/** What a refused record held: a record's JSON as read and sent, or the raw text of a line that was no record. */
export type Held = { record: string } | { text: string };

/** A line that is no record may be as long as its file: a cut keeps the refused file readable. */
const MAX_TEXT_BYTES = 64 * 1024;

/** The first MAX_TEXT_BYTES of `text` in UTF-8, never ending inside a character. */
function cutText(text: string): string {
  if (Buffer.byteLength(text, 'utf8') <= MAX_TEXT_BYTES) return text;
  const bytes = Buffer.from(text, 'utf8');
  let end = MAX_TEXT_BYTES;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

function refusedLine({ origin, conversationId, fieldName, message }: Refusal, held: Held): string {
  const head = JSON.stringify({ file: origin.file, line: origin.line, index: origin.index, conversationId, field: fieldName, message });
  // The record's JSON goes in as it was sent: not parsed and written again (it may be megabytes).
  const tail = 'record' in held ? `"record":${held.record}` : `"text":${JSON.stringify(cutText(held.text))}`;
  return `${head.slice(0, -1)},${tail}}\n`;
}

/** Written as refusals come, synchronously: each line whole and in order whatever requests are in flight. */
export class RefusedFile {
  written = 0;

  private constructor(
    readonly path: string,
    private readonly fd: number,
  ) {}

  /** Created (or emptied) before anything is read: a file left from an earlier run must not pass for this one's. */
  static create(path: string): RefusedFile {
    return new RefusedFile(path, openSync(path, 'w'));
  }

  write(refusal: Refusal, held: Held): void {
    writeSync(this.fd, refusedLine(refusal, held));
    this.written++;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * A line of a refused file, read back: its `record` when it holds an object (fixed or not, the server
 * judges it again; no conversation has a `record` of its own); otherwise, when it is a refused line, what
 * it still holds as text. Anything else is not such a line.
 */
export function readRefusedLine(value: unknown): { record: Record<string, unknown> } | { text: string } | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { record, text, file, message } = value as Record<string, unknown>;
  if (typeof record === 'object' && record !== null && !Array.isArray(record)) return { record: record as Record<string, unknown> };
  // A refused line carries a conversationId too: it must not pass for a conversation.
  if (typeof file !== 'string' || typeof message !== 'string' || (record === undefined && text === undefined)) return undefined;
  return { text: typeof text === 'string' ? text : JSON.stringify(record) };
}
