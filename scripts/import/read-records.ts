/**
 * Reads the records of an export, file by file. A .json file is parsed whole (a details query's answer or
 * a job's page is one JSON document; Genesys pages are bounded); an NDJSON file is streamed line by line,
 * so memory stays bounded however big the export. Whatever cannot be read is reported and the rest goes on.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { formatOf } from './files';
import type { Origin } from './origin';
import { readRefusedLine } from './refused-file';
import { EXPECTED_SHAPES, recognise } from './shapes';

export type ReadEvent =
  | { kind: 'record'; record: unknown; origin: Origin }
  /** An NDJSON line that is not JSON or not a conversation; `text` is the line as read. */
  | { kind: 'bad-line'; origin: Origin; conversationId: string | undefined; message: string; text: string }
  /** A file that holds neither shape or could not be read (an NDJSON file: past the records read before). */
  | { kind: 'bad-file'; file: string; message: string }
  | { kind: 'file-done'; file: string };

const BOM = '\uFEFF';
/** A line cut short mostly still holds its id, near its start: worth naming in the report. */
const CONVERSATION_ID = /"conversationId"\s*:\s*"([^"\\]{1,256})"/;
const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Whether the first line alone is a JSON object: then the whole file is most likely NDJSON named .json. */
function looksLikeNdjson(text: string): boolean {
  const end = text.indexOf('\n');
  if (end === -1 || text.slice(end + 1).trim() === '') return false;
  try {
    const first = JSON.parse(text.slice(0, end)) as unknown;
    return typeof first === 'object' && first !== null && !Array.isArray(first);
  } catch {
    return false;
  }
}

async function* readJsonFile(file: string): AsyncGenerator<ReadEvent> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    yield { kind: 'bad-file', file, message: `cannot be read: ${errorText(err)}` };
    return;
  }
  if (text.startsWith(BOM)) text = text.slice(1);
  if (text.trim() === '') {
    yield { kind: 'bad-file', file, message: 'is empty' };
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const hint = looksLikeNdjson(text) ? ' (it looks like NDJSON, one conversation per line: name it .ndjson or .jsonl)' : '';
    yield { kind: 'bad-file', file, message: `is not JSON: ${errorText(err)}${hint}` };
    return;
  }
  const shape = recognise(value);
  if (shape.kind === 'neither') yield { kind: 'bad-file', file, message: `holds ${shape.held}; ${EXPECTED_SHAPES}` };
  else if (shape.kind === 'one') yield { kind: 'record', record: shape.record, origin: { file } };
  else for (const [index, record] of shape.records.entries()) yield { kind: 'record', record, origin: { file, index } };
}

async function* readNdjsonFile(file: string): AsyncGenerator<ReadEvent> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let line = 0;
  try {
    for await (let text of lines) {
      line++;
      if (line === 1 && text.startsWith(BOM)) text = text.slice(1);
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        const id = CONVERSATION_ID.exec(text)?.[1];
        yield { kind: 'bad-line', origin: { file, line }, conversationId: id, message: `is not JSON: ${errorText(err)}`, text };
        continue;
      }
      // A line of a file `--refused` wrote: its record, fixed or not, is imported again.
      const refused = readRefusedLine(value);
      if (refused && 'record' in refused) {
        yield { kind: 'record', record: refused.record, origin: { file, line } };
        continue;
      }
      if (refused) {
        const id = (value as { conversationId?: unknown }).conversationId;
        const message = 'is a refused line with no "record": put the conversation, fixed, in its "record"';
        yield {
          kind: 'bad-line',
          origin: { file, line },
          conversationId: typeof id === 'string' ? id : undefined,
          message,
          text: refused.text,
        };
        continue;
      }
      const shape = recognise(value);
      // A line holding a whole page (each API answer dumped as a line) is read as that page.
      if (shape.kind === 'neither') {
        const message = `holds ${shape.held}; ${EXPECTED_SHAPES}`;
        yield { kind: 'bad-line', origin: { file, line }, conversationId: undefined, message, text };
      } else if (shape.kind === 'one') yield { kind: 'record', record: shape.record, origin: { file, line } };
      else for (const [index, record] of shape.records.entries()) yield { kind: 'record', record, origin: { file, line, index } };
    }
  } catch (err) {
    const where = line === 0 ? 'cannot be read' : `cannot be read past line ${line}`;
    yield { kind: 'bad-file', file, message: `${where}: ${errorText(err)}` };
  } finally {
    lines.close();
  }
}

export async function* readRecords(files: readonly string[]): AsyncGenerator<ReadEvent> {
  for (const file of files) {
    yield* formatOf(file) === 'ndjson' ? readNdjsonFile(file) : readJsonFile(file);
    yield { kind: 'file-done', file };
  }
}
