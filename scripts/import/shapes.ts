/**
 * The shapes a Genesys Cloud export comes in, recognised as the ingest endpoint recognises a body
 * (src/analytics/ingest/record.schema.ts, asBatch): records in `conversations` (a details query's answer,
 * or an async details job's page with its `cursor` and `dataAvailabilityDate`), or one conversation as
 * `GET /api/v2/analytics/conversations/{id}/details` answers it. The records themselves are the server's to judge.
 */
export type Shape =
  | { kind: 'page'; records: unknown[] }
  | { kind: 'one'; record: Record<string, unknown> }
  | { kind: 'neither'; held: string };

export const EXPECTED_SHAPES = 'expected {"conversations": […]} or one conversation with its conversationId at the top level';

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? '' : 's'}`;
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return 'an empty object';
    const shown = keys.slice(0, 5).map((k) => JSON.stringify(k));
    return `an object with ${shown.join(', ')}${keys.length > 5 ? ` and ${keys.length - 5} more keys` : ''}`;
  }
  if (typeof value === 'string') return `a string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})`;
  return `${typeof value === 'number' ? 'a number' : 'a boolean'} (${String(value)})`;
}

export function recognise(value: unknown): Shape {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'neither', held: describe(value) };
  const body = value as Record<string, unknown>;
  if ('conversations' in body) {
    const list = body.conversations;
    return Array.isArray(list) ? { kind: 'page', records: list } : { kind: 'neither', held: `"conversations" as ${describe(list)}` };
  }
  if ('conversationId' in body) return { kind: 'one', record: body };
  return { kind: 'neither', held: describe(value) };
}
