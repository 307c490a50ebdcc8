/**
 * Conversation-detail records for the ingest and query fuzzers: a generator of valid records (odd
 * Unicode ids and dimension values, every allowed date form, boundary metric values, ids from small
 * pools so records are re-sent), faults to put anywhere in them, and a validator of the record
 * contract written from the README (normalising dates for the reference aggregator).
 */
import fc from 'fast-check';
import { DIRECTIONS, MEDIA_TYPES, OBSERVED_METRIC_NAMES, PURPOSES } from '../../../src/analytics/catalog';
import type { ConversationRecord } from '../../support/reference-aggregator';
import { anyJson, codePoints, numberishString, oddText, RawJson, rawNumber } from './arbitraries';
import { isPlainObject } from './bodies';
import { Instant, instantArb, invalidDateText, parseInstant, writeInstant } from './instants';

/** A conversation id, written at run time behind the case's prefix. */
export class ConvId {
  constructor(readonly suffix: string) {}
  toString(): string {
    return `ConvId(${JSON.stringify(this.suffix)})`;
  }
}

export interface CaseContext {
  dayStart: number;
  prefix: string;
}

/**
 * Replaces placeholders by their text for this case (own keys such as `__proto__` kept).
 */
export function materialize(value: unknown, ctx: CaseContext): unknown {
  if (value instanceof Instant) return writeInstant(ctx.dayStart + value.offsetInDay, value);
  if (value instanceof ConvId) return ctx.prefix + value.suffix;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((v) => materialize(v, ctx));
  if (value !== null && typeof value === 'object' && !(value instanceof RawJson)) {
    const out = {};
    for (const [k, v] of Object.entries(value))
      Object.defineProperty(out, k, { value: materialize(v, ctx), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}

// -----------------------------------------------------------------------------------------------
// Generators
// -----------------------------------------------------------------------------------------------

const oddId = oddText({ minLength: 1, maxLength: 10, wellFormed: true });
const text = (pool: string[]) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...pool) },
    { weight: 2, arbitrary: oddId },
    { weight: 1, arbitrary: fc.constantFrom('s'.repeat(256), '😀'.repeat(256)) },
  );
export const QUEUES = ['q1', 'q2', 'Q1', 'q1 ', 'q\u0000', 'q😀', '\u202eq1', `q"'<>&`, 'q\u0301'];

const metricArb = fc.record({
  // Mostly the catalogue's; sometimes a flow metric, a name from the future or a calculated one (stored nowhere, counted).
  name: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...OBSERVED_METRIC_NAMES) },
    { weight: 1, arbitrary: fc.constantFrom('nFlow', 'tFlowOutcome', 'nNotYetInvented', 'oServiceLevel', '__proto__') },
  ),
  value: fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom(0, 1, 1e12)),
  emitDate: instantArb,
});
const segmentArb = fc.record(
  {
    segmentStart: instantArb,
    segmentEnd: instantArb,
    segmentType: text(['interact', 'hold', 'wrapup', 'alert']),
    queueId: text(QUEUES),
    wrapUpCode: text(['w1', 'W1', 'w😀']),
    disconnectType: text(['client', 'peer', 'system']),
  },
  { requiredKeys: ['segmentStart'] },
);
const sessionArb = fc.record(
  {
    sessionId: text(['s1', 's2', 'S1', 's\u0000']),
    mediaType: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...MEDIA_TYPES) },
      { weight: 1, arbitrary: fc.constantFrom('internalmessage', 'Voice') },
    ),
    direction: fc.constantFrom(...DIRECTIONS),
    ani: text(['tel:+15551230001', 'sip:a@b']),
    dnis: text(['tel:+15550000000']),
    segments: fc.array(segmentArb, { maxLength: 3 }),
    metrics: fc.array(metricArb, { maxLength: 4 }),
  },
  // Sessions of records written before 2017 have no direction.
  { requiredKeys: ['sessionId', 'mediaType'] },
);
const participantArb = fc.record(
  {
    participantId: text(['p1', 'p2']),
    participantName: text(['Support', 'Sales', 'Ünïcødé']),
    purpose: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('acd', 'agent', 'customer', 'ivr', 'user') },
      { weight: 1, arbitrary: fc.constantFrom(...PURPOSES) },
    ),
    userId: text(['u1', 'u2', 'U1', 'ü']),
    sessions: fc.array(sessionArb, { minLength: 1, maxLength: 2 }),
  },
  { requiredKeys: ['participantId', 'purpose', 'sessions'] },
);
export const recordArb = fc.record(
  {
    conversationId: fc
      .oneof({ weight: 3, arbitrary: fc.constantFrom('c1', 'c2', 'c3') }, { weight: 1, arbitrary: oddId })
      .map((s) => new ConvId(s)),
    conversationStart: instantArb,
    conversationEnd: instantArb,
    originatingDirection: fc.constantFrom(...DIRECTIONS),
    divisionIds: fc.array(text(['d1', 'd2']), { maxLength: 2 }),
    participants: fc.array(participantArb, { minLength: 1, maxLength: 3 }),
    unknownField: anyJson,
  },
  { requiredKeys: ['conversationId', 'conversationStart', 'participants'] },
);

const DATE_KEYS = new Set(['emitDate', 'segmentStart', 'segmentEnd', 'conversationStart', 'conversationEnd']);
const STRING_KEYS = new Set([
  'conversationId',
  'participantId',
  'participantName',
  'userId',
  'sessionId',
  'ani',
  'dnis',
  'segmentType',
  'queueId',
  'wrapUpCode',
  'disconnectType',
]);
export function wrongFor(key: string | number): fc.Arbitrary<unknown> | undefined {
  if (typeof key === 'number') return undefined;
  if (DATE_KEYS.has(key))
    return fc.oneof(
      { weight: 4, arbitrary: invalidDateText },
      { weight: 1, arbitrary: fc.constantFrom(1_700_000_000_000, null, ['2950-01-01T00:00:00Z']) },
    );
  if (STRING_KEYS.has(key)) return fc.constantFrom('', 's'.repeat(257), '😀'.repeat(257), null, 5, ['x']);
  if (key === 'value') return fc.oneof(fc.constantFrom(-1, 0.5, 1e12 + 1, 2 ** 53 + 2, 1e308, '5', null, true), rawNumber, numberishString);
  // Any non-empty string is a well-formed name or enumeration value (forward compatible): only '' and other types are wrong.
  if (key === 'name')
    return fc.constantFrom('nOfered', 'oServiceLevel', 'NOFFERED', '', 'tAcd ', 'constructor', '__proto__', 'toString', 5, null);
  if (key === 'mediaType') return fc.constantFrom('Voice', 'sms', '', 'voice ', 0, null);
  if (key === 'purpose') return fc.constantFrom('Agent', 'bot', '', 'hasOwnProperty', false);
  if (key === 'direction' || key === 'originatingDirection') return fc.constantFrom('in', 'INBOUND', '', null, 1);
  if (['participants', 'sessions', 'segments', 'metrics', 'divisionIds', 'conversations'].includes(key))
    return fc.constantFrom(null, {}, 'x', 0);
  return undefined;
}

// -----------------------------------------------------------------------------------------------
// The validator: the README's record contract and limits, by hand
// -----------------------------------------------------------------------------------------------

type Issue = 'invalid.value' | 'invalid.date';

export class Check {
  readonly issues = new Set<Issue>();
  fail(code: Issue = 'invalid.value'): undefined {
    this.issues.add(code);
    return undefined;
  }
  /** Strings are 1–256 characters (code points). */
  str(v: unknown, optional = false): string | undefined {
    if ((v === undefined || v === null) && optional) return undefined;
    if (typeof v !== 'string' || codePoints(v) < 1 || codePoints(v) > 256) return this.fail();
    return v;
  }
  /** An ISO 8601 instant in 1971–2999, normalised to toISOString for the reference. */
  date(v: unknown, optional = false): string | undefined {
    if ((v === undefined || v === null) && optional) return undefined;
    if (typeof v !== 'string') return this.fail();
    const ms = parseInstant(v);
    return ms === undefined ? this.fail('invalid.date') : new Date(ms).toISOString();
  }
  list<T>(v: unknown, max: number, each: (item: unknown) => T, optional = false): T[] | undefined {
    if ((v === undefined || v === null) && optional) return undefined;
    if (!Array.isArray(v) || v.length > max) return this.fail();
    return v.map(each);
  }
  obj(v: unknown): Record<string, unknown> {
    if (isPlainObject(v)) return v;
    this.fail();
    return {};
  }
}

export function checkRecord(c: Check, raw: unknown): ConversationRecord {
  const r = c.obj(raw);
  return {
    conversationId: c.str(r.conversationId)!,
    conversationStart: c.date(r.conversationStart)!,
    conversationEnd: c.date(r.conversationEnd, true),
    originatingDirection: c.str(r.originatingDirection, true),
    divisionIds: c.list(r.divisionIds, 100, (d) => c.str(d)!, true),
    participants: c.list(r.participants, 100, (pRaw) => {
      const p = c.obj(pRaw);
      return {
        participantId: c.str(p.participantId)!,
        participantName: c.str(p.participantName, true),
        purpose: c.str(p.purpose)!,
        userId: c.str(p.userId, true),
        sessions: c.list(p.sessions, 100, (sRaw) => {
          const s = c.obj(sRaw);
          return {
            sessionId: c.str(s.sessionId)!,
            mediaType: c.str(s.mediaType)!,
            direction: c.str(s.direction, true),
            ani: c.str(s.ani, true),
            dnis: c.str(s.dnis, true),
            segments: c.list(
              s.segments,
              1000,
              (gRaw) => {
                const g = c.obj(gRaw);
                return {
                  segmentStart: c.date(g.segmentStart)!,
                  segmentEnd: c.date(g.segmentEnd, true),
                  segmentType: c.str(g.segmentType, true),
                  queueId: c.str(g.queueId, true),
                  wrapUpCode: c.str(g.wrapUpCode, true),
                  disconnectType: c.str(g.disconnectType, true),
                };
              },
              true,
            ),
            metrics: c.list(
              s.metrics,
              1000,
              (mRaw) => {
                const m = c.obj(mRaw);
                const value = m.value;
                // Whole numbers 0–10^12 (a JSON 1.0 or -0 is a whole number).
                if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 1e12) c.fail();
                // + 0: a JSON -0 is the number 0 (the answer's JSON cannot say -0 either). Only on a number:
                // `+` on a refused value converts it, and a deeply nested array overflows the stack doing so.
                return {
                  name: c.str(m.name)!,
                  value: typeof value === 'number' ? value + 0 : Number.NaN,
                  emitDate: c.date(m.emitDate)!,
                };
              },
              true,
            ),
          };
        })!,
      };
    })!,
  };
}
