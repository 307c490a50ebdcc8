import { ANALYTICS_LIMITS as L } from '../limits';
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
const divisionIds = (value: unknown) => list(value, L.maxParticipants).map(str);
const segments = (value: unknown) => list(value, L.maxSegments).map(segment);
const metrics = (value: unknown) => list(value, L.maxMetricsPerSession).map(metric);

function conversation(value: unknown): ConversationRecord | undefined {
  try {
    if (!isObject(value)) throw DECLINE;
    const out: Json = { conversationId: str(value.conversationId), conversationStart: instant(value.conversationStart) };
    optional(out, 'conversationEnd', value.conversationEnd, instant);
    optional(out, 'originatingDirection', value.originatingDirection, str);
    optional(out, 'divisionIds', value.divisionIds, divisionIds);
    out.participants = list(value.participants, L.maxParticipants).map(participant);
    return out as unknown as ConversationRecord;
  } catch (err) {
    if (err === DECLINE) return undefined;
    throw err;
  }
}

function participant(value: unknown): Json {
  if (!isObject(value)) throw DECLINE;
  const out: Json = { participantId: str(value.participantId) };
  optional(out, 'participantName', value.participantName, str);
  out.purpose = str(value.purpose);
  optional(out, 'userId', value.userId, str);
  out.sessions = list(value.sessions, L.maxSessions).map(session);
  return out;
}

function session(value: unknown): Json {
  if (!isObject(value)) throw DECLINE;
  const out: Json = { sessionId: str(value.sessionId), mediaType: str(value.mediaType) };
  optional(out, 'direction', value.direction, str);
  optional(out, 'ani', value.ani, str);
  optional(out, 'dnis', value.dnis, str);
  optional(out, 'segments', value.segments, segments);
  optional(out, 'metrics', value.metrics, metrics);
  return out;
}

function segment(value: unknown): Json {
  if (!isObject(value)) throw DECLINE;
  const out: Json = { segmentStart: instant(value.segmentStart) };
  optional(out, 'segmentEnd', value.segmentEnd, instant);
  optional(out, 'segmentType', value.segmentType, str);
  optional(out, 'queueId', value.queueId, str);
  optional(out, 'wrapUpCode', value.wrapUpCode, str);
  optional(out, 'disconnectType', value.disconnectType, str);
  return out;
}

function metric(value: unknown): Json {
  if (!isObject(value)) throw DECLINE;
  const v = value.value;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0 || v > L.maxMetricValue) throw DECLINE;
  return { name: str(value.name), value: v, emitDate: instant(value.emitDate) };
}
