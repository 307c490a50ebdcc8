import type { FieldKind } from '../catalog';
import { ANALYTICS_LIMITS as L } from '../limits';
import { OBJECT_LISTS, RECORD_FIELDS, type RecordLevel } from './record-fields';
import { instantMs } from '../iso8601';
import type { ConversationRecord } from './record.schema';

/**
 * The ingest body's fast path: the same checks and the same output as `ingestBodySchema`
 * (record.schema.ts) for a body that is entirely valid, in one plain pass. zod spent about a fifth
 * of an ingest request's CPU (and much of its garbage) copying a 3 MB body through its generic
 * machinery; this pass is several times cheaper.
 *
 * It never judges: at the first thing it does not accept it returns `undefined`, and the route
 * validates with the zod schema instead, which finds the error and words the answer. So the schema
 * stays the one definition of what is valid and of every error body; this function only has to
 * accept nothing the schema refuses and give what the schema gives (test/analytics/record-fast.test.ts
 * checks both, on valid and broken records).
 */
export function fastIngestBody(body: unknown): { conversations: ConversationRecord[] } | undefined {
  if (!isObject(body)) return undefined;
  const list = body.conversations;
  if (!Array.isArray(list) || list.length > L.maxConversationsPerIngest) return undefined;
  const conversations: ConversationRecord[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const record = conversation(list[i]);
    if (record === undefined) return undefined;
    conversations[i] = record;
  }
  return { conversations };
}

type Json = Record<string, unknown>;
/** Thrown by the checks below and caught once per body: a declined body costs no error objects. */
const DECLINE = Symbol('decline');

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const MIN_INSTANT = Date.UTC(L.minYear, 0, 1);
const MAX_INSTANT = Date.UTC(L.maxYear + 1, 0, 1);

/** zod counts code points past the limit in UTF-16 units; such rare strings are left to it. */
function str(value: unknown): string {
  if (typeof value !== 'string' || value.length < 1 || value.length > L.maxStringLength) throw DECLINE;
  return value;
}

function instant(value: unknown): number {
  if (typeof value !== 'string') throw DECLINE;
  const ms = instantMs(value);
  if (typeof ms === 'string' || ms < MIN_INSTANT || ms >= MAX_INSTANT) throw DECLINE;
  return ms;
}

function list(value: unknown, max: number): unknown[] {
  if (!Array.isArray(value) || value.length > max) throw DECLINE;
  return value;
}

/** Copies an optional field as zod does: absent stays absent, null becomes `undefined` (JSON has neither). */
function optional<T>(out: Json, key: string, value: unknown, check: (value: unknown) => T): void {
  if (value === null) out[key] = undefined;
  else if (value !== undefined) out[key] = check(value);
}

// The optional lists, as checks of their own (no closure per record on this hot path).
const segments = (value: unknown) => list(value, L.maxSegments).map(segment);
const metrics = (value: unknown) => list(value, L.maxMetricsPerSession).map(metric);

function boolean(value: unknown): boolean {
  if (typeof value !== 'boolean') throw DECLINE;
  return value;
}

function integer(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw DECLINE;
  return value;
}

const CHECK: Record<FieldKind, (value: unknown) => unknown> = {
  string: str,
  boolean,
  integer,
  strings: (value) => list(value, L.maxListLength).map(str),
  integers: (value) => list(value, L.maxListLength).map(integer),
  properties: (value) =>
    list(value, L.maxListLength).map((item) => {
      if (!isObject(item)) throw DECLINE;
      const out: Json = { property: str(item.property) };
      optional(out, 'propertyType', item.propertyType, str);
      optional(out, 'value', item.value, text);
      return out;
    }),
};

/** A string that may be empty (a property's value). */
function text(value: unknown): string {
  if (typeof value !== 'string' || value.length > L.maxStringLength) throw DECLINE;
  return value;
}

/** The fields a level's dimensions are read from (record-fields.ts), as the schema's readFields checks them. */
function readFields(out: Json, value: Json, level: RecordLevel): void {
  for (const { field, kind } of RECORD_FIELDS[level]) optional(out, field, value[field], CHECK[kind]);
  for (const objects of OBJECT_LISTS[level]) {
    optional(out, objects.field, value[objects.field], (items) =>
      list(items, L.maxListLength).map((item) => {
        if (!isObject(item)) throw DECLINE;
        const copy: Json = {};
        for (const { field, kind } of objects.items) optional(copy, field, item[field], CHECK[kind]);
        return copy;
      }),
    );
  }
}

function conversation(value: unknown): ConversationRecord | undefined {
  try {
    if (!isObject(value)) throw DECLINE;
    const out: Json = { conversationId: str(value.conversationId), conversationStart: instant(value.conversationStart) };
    optional(out, 'conversationEnd', value.conversationEnd, instant);
    out.participants = list(value.participants, L.maxParticipants).map(participant);
    readFields(out, value, 'conversation');
    return out as unknown as ConversationRecord;
  } catch (err) {
    if (err === DECLINE) return undefined;
    throw err;
  }
}

function participant(value: unknown): Json {
  if (!isObject(value)) throw DECLINE;
  const out: Json = { participantId: str(value.participantId), purpose: str(value.purpose) };
  out.sessions = list(value.sessions, L.maxSessions).map(session);
  readFields(out, value, 'participant');
  return out;
}

function session(value: unknown): Json {
  if (!isObject(value)) throw DECLINE;
  const out: Json = { sessionId: str(value.sessionId), mediaType: str(value.mediaType) };
  optional(out, 'segments', value.segments, segments);
  optional(out, 'metrics', value.metrics, metrics);
  readFields(out, value, 'session');
  return out;
}

function segment(value: unknown): Json {
  if (!isObject(value)) throw DECLINE;
  const out: Json = { segmentStart: instant(value.segmentStart) };
  optional(out, 'segmentEnd', value.segmentEnd, instant);
  optional(out, 'segmentType', value.segmentType, str);
  readFields(out, value, 'segment');
  return out;
}

function metric(value: unknown): Json {
  if (!isObject(value)) throw DECLINE;
  const v = value.value;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0 || v > L.maxMetricValue) throw DECLINE;
  return { name: str(value.name), value: v, emitDate: instant(value.emitDate) };
}
