/**
 * The ingest body's fast path (src/analytics/ingest/record.fast.ts) against the zod schema it stands
 * in for: on valid bodies, bodies with one fault anywhere, and arbitrary JSON, it must decline
 * what the schema refuses and give exactly the schema's output for the rest. Every value goes
 * through JSON text first, as on the wire (raw literals such as 1e400 and -0 included). The route
 * itself (answers, counts, what is stored) is fuzzed in test/hostile/fuzz-ingest.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastIngestBody } from '../../src/analytics/ingest/record.fast';
import { ingestBodySchema } from '../../src/analytics/ingest/record.schema';
import { ANALYTICS_LIMITS } from '../../src/analytics/limits';
import { simulateConversations } from '../../scripts/simulator/index';
import { anyJson, mutateDeep, toJsonText } from '../hostile/support/arbitraries';
import { FUZZ_SEED } from '../hostile/support/fuzz';
import { materialize, recordArb, wrongFor } from '../hostile/support/records';

const ctx = { dayStart: Date.UTC(2026, 10, 16), prefix: 'fast-' };
const wire = (value: unknown): unknown => JSON.parse(toJsonText(materialize(value, ctx)));

/** Some string in `value` is longer, in UTF-16 units, than a field may be in code points. */
function hasLongString(value: unknown): boolean {
  if (typeof value === 'string') return value.length > ANALYTICS_LIMITS.maxStringLength;
  if (value !== null && typeof value === 'object') return Object.values(value).some(hasLongString);
  return false;
}

/**
 * The fast path agrees with the schema on `body`: it refuses what the schema refuses, gives the
 * schema's output for the rest, and declines a valid body only for its one documented reason (a
 * string that only a count of code points can admit). Returns whether the schema accepted the body.
 */
function agrees(body: unknown): boolean {
  const fast = fastIngestBody(body);
  const zod = ingestBodySchema.safeParse(body);
  if (!zod.success) expect(fast).toBeUndefined();
  else if (fast === undefined) expect(hasLongString(body)).toBe(true);
  else expect(fast).toStrictEqual(zod.data);
  return zod.success;
}

describe('ingest fast path', () => {
  it('gives the schema output for valid bodies (odd Unicode, every date form, unknown fields)', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(recordArb, { minLength: 0, maxLength: 4 }), (conversations) => {
        if (agrees(wire({ conversations }))) accepted++;
      }),
      { seed: FUZZ_SEED, numRuns: 300 },
    );
    // recordArb writes only valid records: every one of them must have gone through.
    expect(accepted).toBe(300);
  });

  it('declines every body with one fault anywhere, as the schema refuses it', () => {
    let refused = 0;
    fc.assert(
      fc.property(
        mutateDeep(
          fc.array(recordArb, { minLength: 1, maxLength: 3 }).map((conversations) => ({ conversations })),
          wrongFor,
        ),
        (body) => {
          if (!agrees(wire(body))) refused++;
        },
      ),
      { seed: FUZZ_SEED, numRuns: 600 },
    );
    // Some faults are harmless (a deleted optional key, an unknown key added); most are not.
    expect(refused).toBeGreaterThan(300);
  });

  it('agrees on arbitrary JSON and on the edges of the body', () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        agrees(wire(value));
        agrees(wire({ conversations: [value] }));
      }),
      { seed: FUZZ_SEED, numRuns: 300 },
    );
    const one = wire({ conversationId: 'c', conversationStart: '2026-11-16T10:00:00.000Z', participants: [] });
    const max = ANALYTICS_LIMITS.maxConversationsPerIngest;
    for (const body of [
      null,
      [],
      {},
      { conversations: [] },
      { conversations: null },
      { conversations: {} },
      { conversations: new Array(max).fill(one) },
    ]) {
      expect(agrees(body)).toBe(body !== null && !Array.isArray(body) && Array.isArray(body.conversations));
    }
    // One over the limit: declined, so the schema answers 413.
    expect(agrees({ conversations: new Array(max + 1).fill(one) })).toBe(false);
  });

  it('agrees on values at and past each limit', () => {
    const L = ANALYTICS_LIMITS;
    const record = (patch: (r: Record<string, any>) => void) => {
      const r: Record<string, any> = {
        conversationId: 'c',
        conversationStart: '2026-11-16T10:00:00.000Z',
        participants: [
          {
            participantId: 'p',
            purpose: 'agent',
            sessions: [
              {
                sessionId: 's',
                mediaType: 'voice',
                direction: 'inbound',
                metrics: [{ name: 'tTalk', value: 5, emitDate: '2026-11-16T10:00:05.000Z' }],
              },
            ],
          },
        ],
      };
      patch(r);
      return JSON.parse(JSON.stringify({ conversations: [r] })) as unknown;
    };
    const metric = (r: Record<string, any>) => r.participants[0].sessions[0].metrics[0];
    const cases: [string, (r: Record<string, any>) => void, boolean][] = [
      ['longest id', (r) => (r.conversationId = 'x'.repeat(L.maxStringLength)), true],
      ['id one too long', (r) => (r.conversationId = 'x'.repeat(L.maxStringLength + 1)), false],
      ['empty id', (r) => (r.conversationId = ''), false],
      ['largest value', (r) => (metric(r).value = L.maxMetricValue), true],
      ['value one too large', (r) => (metric(r).value = L.maxMetricValue + 1), false],
      ['negative value', (r) => (metric(r).value = -1), false],
      ['fractional value', (r) => (metric(r).value = 1.5), false],
      ['first instant', (r) => (metric(r).emitDate = `${L.minYear}-01-01T00:00:00.000Z`), true],
      ['before the first instant', (r) => (metric(r).emitDate = `${L.minYear - 1}-12-31T23:59:59.999Z`), false],
      ['last instant', (r) => (metric(r).emitDate = `${L.maxYear}-12-31T23:59:59.999Z`), true],
      ['past the last instant', (r) => (metric(r).emitDate = `${L.maxYear + 1}-01-01T00:00:00.000Z`), false],
      ['offset date', (r) => (metric(r).emitDate = '2026-11-16T12:00:05+02:00'), true],
      ['no milliseconds', (r) => (metric(r).emitDate = '2026-11-16T10:00:05Z'), true],
      ['30 February', (r) => (metric(r).emitDate = '2026-02-30T10:00:05.000Z'), false],
      ['null optional', (r) => (r.conversationEnd = null), true],
      ['null required', (r) => (r.conversationId = null), false],
      ['no direction', (r) => delete r.participants[0].sessions[0].direction, true],
      ['unknown media type', (r) => (r.participants[0].sessions[0].mediaType = 'internalmessage'), true],
      ['media type of the wrong type', (r) => (r.participants[0].sessions[0].mediaType = 3), false],
      ['most participants', (r) => (r.participants = new Array(L.maxParticipants).fill(r.participants[0])), true],
      ['one participant too many', (r) => (r.participants = new Array(L.maxParticipants + 1).fill(r.participants[0])), false],
      ['most metrics', (r) => (r.participants[0].sessions[0].metrics = new Array(L.maxMetricsPerSession).fill(metric(r))), true],
      [
        'one metric too many',
        (r) => (r.participants[0].sessions[0].metrics = new Array(L.maxMetricsPerSession + 1).fill(metric(r))),
        false,
      ],
      ['a name outside the catalogue', (r) => (metric(r).name = 'toString'), true],
      ['a name of the wrong type', (r) => (metric(r).name = ['nOffered']), false],
    ];
    for (const [name, patch, valid] of cases) expect(agrees(record(patch)), name).toBe(valid);
  });

  it('takes the fast path for the simulator traffic the benchmark ingests', () => {
    const conversations = [...simulateConversations({ days: 1, conversations: 300, seed: 7, end: new Date('2026-11-16T00:00:00.000Z') })];
    const body = JSON.parse(JSON.stringify({ conversations })) as unknown;
    expect(fastIngestBody(body)).toBeDefined();
    expect(agrees(body)).toBe(true);
  });
});
