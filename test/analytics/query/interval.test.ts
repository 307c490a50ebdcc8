import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors';
import { fromDomainError, type ApiError } from '../../../src/http/api-error';
import {
  alignedTo,
  bucketIndex,
  formatInterval,
  parseDuration,
  parseInterval,
  planBuckets,
  uniformRuns,
  type PlanBucketsInput,
} from '../../../src/analytics/query/interval';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const iso = (ms: number): string => new Date(ms).toISOString();
const ms = (text: string): number => Date.parse(text);

/** The plan's boundaries as ISO strings, to compare with hand-written expectations. */
function boundaries(input: PlanBucketsInput): string[] {
  return planBuckets(input).boundaries.map(iso);
}

function widthsInHours(input: PlanBucketsInput): number[] {
  const b = planBuckets(input).boundaries;
  return b.slice(1).map((t, i) => (t - (b[i] ?? 0)) / HOUR);
}

/** The error `fn` throws, as the answer it becomes. */
function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return fromDomainError(error);
    throw error;
  }
  throw new Error('expected a DomainError, nothing was thrown');
}

function expectApiError(fn: () => unknown, code: string, fieldName: string, messagePart?: string | RegExp): void {
  const error = errorOf(fn);
  expect(error.status).toBe(400);
  expect(error.code).toBe(code);
  expect(error.details).toEqual([{ errorCode: code, fieldName }]);
  if (messagePart !== undefined) expect(error.message).toMatch(messagePart);
}

describe('interval parsing', () => {
  it('splits the seed shape, one UTC day with PT12H, into two buckets', () => {
    expect(boundaries({ interval: '2024-01-01T00:00:00.000Z/2024-01-02T00:00:00.000Z', granularity: 'PT12H' })).toEqual([
      '2024-01-01T00:00:00.000Z',
      '2024-01-01T12:00:00.000Z',
      '2024-01-02T00:00:00.000Z',
    ]);
  });

  it('reads date-times without an offset as UTC, as Genesys clients send them', () => {
    expect(parseInterval('2024-01-01T00:00:00/2024-01-02T00:00:00')).toEqual({
      start: ms('2024-01-01T00:00:00.000Z'),
      end: ms('2024-01-02T00:00:00.000Z'),
    });
  });

  it('honours every offset form: +hh:mm, +hhmm, +hh and negative half hours', () => {
    expect(parseInterval('2024-01-01T00:00:00+02:00/2024-01-01T12:00:00+0200')).toEqual({
      start: ms('2023-12-31T22:00:00.000Z'),
      end: ms('2024-01-01T10:00:00.000Z'),
    });
    expect(parseInterval('2024-01-01T05:00:00+05/2024-01-01T00:00:00-03:30')).toEqual({
      start: ms('2024-01-01T00:00:00.000Z'),
      end: ms('2024-01-01T03:30:00.000Z'),
    });
  });

  it('uses the interval offset even when a time zone is given', () => {
    expect(parseInterval('2024-01-01T00:00:00Z/2024-01-02T00:00:00Z', 'America/New_York')).toEqual({
      start: ms('2024-01-01T00:00:00.000Z'),
      end: ms('2024-01-02T00:00:00.000Z'),
    });
  });

  it('accepts fractional seconds, truncating below a millisecond, and minutes without seconds', () => {
    expect(parseInterval('2024-01-01T00:00:00.5Z/2024-01-01T00:00:01.123456Z')).toEqual({
      start: ms('2024-01-01T00:00:00.500Z'),
      end: ms('2024-01-01T00:00:01.123Z'),
    });
    expect(parseInterval('2024-01-01T08:30Z/2024-01-01T09:45+01:00')).toEqual({
      start: ms('2024-01-01T08:30:00.000Z'),
      end: ms('2024-01-01T08:45:00.000Z'),
    });
  });

  it('accepts <start>/<duration> and <duration>/<end>', () => {
    expect(parseInterval('2024-01-01T00:00:00Z/P1DT12H')).toEqual({
      start: ms('2024-01-01T00:00:00.000Z'),
      end: ms('2024-01-02T12:00:00.000Z'),
    });
    expect(parseInterval('P1M/2024-03-31T00:00:00Z')).toEqual({
      start: ms('2024-02-29T00:00:00.000Z'),
      end: ms('2024-03-31T00:00:00.000Z'),
    });
    expect(parseInterval('PT36H/2024-01-03T00:00:00Z')).toEqual({
      start: ms('2024-01-01T12:00:00.000Z'),
      end: ms('2024-01-03T00:00:00.000Z'),
    });
  });

  it('steps an interval duration on the wall clock of the time zone, so P1D over a spring-forward day is 23 hours', () => {
    expect(parseInterval('2024-03-31T00:00:00+01:00/P1D', 'Europe/Berlin')).toEqual({
      start: ms('2024-03-30T23:00:00.000Z'),
      end: ms('2024-03-31T22:00:00.000Z'),
    });
  });

  it.each([
    ['February 30', '2024-02-30T00:00:00Z/2024-03-01T00:00:00Z'],
    ['February 29 of a common year', '2023-02-01T00:00:00Z/2023-02-29T00:00:00Z'],
    ['April 31', '2024-04-31T00:00:00Z/2024-05-01T00:00:00Z'],
    ['month 13', '2024-13-01T00:00:00Z/2024-12-01T00:00:00Z'],
    ['month 00', '2024-00-10T00:00:00Z/2024-01-11T00:00:00Z'],
    ['day 00', '2024-01-00T00:00:00Z/2024-01-02T00:00:00Z'],
    ['hour 24', '2024-01-01T24:00:00Z/2024-01-03T00:00:00Z'],
    ['minute 60', '2024-01-01T23:60:00Z/2024-01-03T00:00:00Z'],
    ['second 60', '2024-01-01T23:59:60Z/2024-01-03T00:00:00Z'],
    ['offset hour 25', '2024-01-01T00:00:00+25:00/2024-01-03T00:00:00Z'],
    ['offset minute 60', '2024-01-01T00:00:00+01:60/2024-01-03T00:00:00Z'],
    ['a double Z', '2024-01-01T00:00:00ZZ/2024-01-03T00:00:00Z'],
    ['a one-digit month', '2024-1-01T00:00:00Z/2024-01-03T00:00:00Z'],
    ['a space instead of T', '2024-01-01 00:00:00Z/2024-01-03T00:00:00Z'],
    ['dates without times', '2024-01-01/2024-01-02'],
    ['a decimal point without digits', '2024-01-01T00:00:00.Z/2024-01-03T00:00:00Z'],
    ['a lone start', '2024-01-01T00:00:00Z'],
    ['three parts', '2024-01-01T00:00:00Z/2024-01-02T00:00:00Z/2024-01-03T00:00:00Z'],
    ['an empty string', ''],
    ['words', 'yesterday/today'],
    ['a Unix timestamp', '1704067200000/1704153600000'],
    ['two durations', 'P1D/P2D'],
    ['an empty duration', '2024-01-01T00:00:00Z/P'],
    ['a duration with an empty time part', '2024-01-01T00:00:00Z/P1DT'],
    ['a negative duration', '2024-01-01T00:00:00Z/-P1D'],
  ])('answers an interval with %s with invalid.date', (_shape, interval) => {
    expectApiError(() => planBuckets({ interval }), 'invalid.date', 'interval', /ISO-8601/);
  });

  it('answers an end before the start, or equal to it, with invalid.value', () => {
    expectApiError(
      () => parseInterval('2024-01-02T00:00:00Z/2024-01-01T00:00:00Z'),
      'invalid.value',
      'interval',
      /end must be after the start/,
    );
    expectApiError(() => parseInterval('2024-01-01T00:00:00Z/2024-01-01T00:00:00Z'), 'invalid.value', 'interval');
    expectApiError(() => parseInterval('2024-01-01T00:00:00Z/PT0S'), 'invalid.value', 'interval');
  });

  it('accepts 732 days and rejects one millisecond more, naming the limit', () => {
    expect(parseInterval('2024-01-01T00:00:00Z/2026-01-02T00:00:00Z').end).toBe(ms('2026-01-02T00:00:00.000Z'));
    expectApiError(() => parseInterval('2024-01-01T00:00:00Z/2026-01-02T00:00:00.001Z'), 'invalid.value', 'interval', /732 days/);
  });

  it('answers absurdly long durations with invalid.value, not a crash', () => {
    expectApiError(() => parseInterval('2024-01-01T00:00:00Z/P999999999Y', 'Europe/Berlin'), 'invalid.value', 'interval');
    expectApiError(() => parseInterval('P999999999D/2024-01-01T00:00:00Z', 'Europe/Berlin'), 'invalid.value', 'interval');
    expectApiError(() => parseInterval('2024-01-01T00:00:00Z/PT999999999H'), 'invalid.value', 'interval');
  });
});

describe('duration parsing', () => {
  it('splits a full duration into calendar months, calendar days and elapsed milliseconds', () => {
    expect(parseDuration('P1Y2M3W4DT5H6M7.5S', 'granularity')).toEqual({
      months: 14,
      days: 25,
      ms: 5 * HOUR + 6 * 60_000 + 7_500,
    });
    expect(parseDuration('PT0.25S', 'granularity')).toEqual({ months: 0, days: 0, ms: 250 });
    expect(parseDuration('P2W', 'granularity')).toEqual({ months: 0, days: 14, ms: 0 });
  });

  it.each(['P', 'PT', 'P1DT', '-P1D', 'P-1D', 'PT0S', 'P0D', 'P0Y0M', 'P1.5D', 'PT1.2345S', '1D', 'P1S', 'PT1D', 'P1H', 'P1D1Y', ''])(
    'rejects %j with invalid.value naming the caller’s field',
    (text) => {
      expectApiError(() => parseDuration(text, 'granularity'), 'invalid.value', 'granularity');
      expectApiError(() => parseDuration(text, 'views[0].interval'), 'invalid.value', 'views[0].interval');
    },
  );
});

describe('bucket planning in UTC', () => {
  it('makes one bucket for the whole interval when there is no granularity', () => {
    expect(planBuckets({ interval: '2024-01-01T06:00:00+02:00/2024-01-03T00:00:00Z' })).toEqual({
      start: ms('2024-01-01T04:00:00.000Z'),
      end: ms('2024-01-03T00:00:00.000Z'),
      boundaries: [ms('2024-01-01T04:00:00.000Z'), ms('2024-01-03T00:00:00.000Z')],
    });
  });

  it('steps P1W as seven calendar days from the start', () => {
    expect(boundaries({ interval: '2024-01-01T00:00:00Z/2024-01-22T00:00:00Z', granularity: 'P1W' })).toEqual([
      '2024-01-01T00:00:00.000Z',
      '2024-01-08T00:00:00.000Z',
      '2024-01-15T00:00:00.000Z',
      '2024-01-22T00:00:00.000Z',
    ]);
  });

  it('steps P1M from January 31 to the last day of shorter months, counted from the start', () => {
    expect(boundaries({ interval: '2024-01-31T00:00:00Z/2024-05-31T00:00:00Z', granularity: 'P1M' })).toEqual([
      '2024-01-31T00:00:00.000Z',
      '2024-02-29T00:00:00.000Z',
      '2024-03-31T00:00:00.000Z',
      '2024-04-30T00:00:00.000Z',
      '2024-05-31T00:00:00.000Z',
    ]);
    expect(boundaries({ interval: '2023-01-31T00:00:00Z/2023-03-31T00:00:00Z', granularity: 'P1M' })).toEqual([
      '2023-01-31T00:00:00.000Z',
      '2023-02-28T00:00:00.000Z',
      '2023-03-31T00:00:00.000Z',
    ]);
  });

  it('steps P1Y as twelve months, clamping a leap day each year from the start', () => {
    expect(boundaries({ interval: '2023-01-01T00:00:00Z/2025-01-01T00:00:00Z', granularity: 'P1Y' })).toEqual([
      '2023-01-01T00:00:00.000Z',
      '2024-01-01T00:00:00.000Z',
      '2025-01-01T00:00:00.000Z',
    ]);
    expect(boundaries({ interval: '2024-02-29T00:00:00Z/2026-02-28T00:00:00Z', granularity: 'P1Y' })).toEqual([
      '2024-02-29T00:00:00.000Z',
      '2025-02-28T00:00:00.000Z',
      '2026-02-28T00:00:00.000Z',
    ]);
  });

  it('adds the elapsed part of a mixed granularity after its calendar part', () => {
    expect(boundaries({ interval: '2024-01-01T00:00:00Z/2024-01-04T00:00:00Z', granularity: 'P1DT12H' })).toEqual([
      '2024-01-01T00:00:00.000Z',
      '2024-01-02T12:00:00.000Z',
      '2024-01-04T00:00:00.000Z',
    ]);
  });

  it('rejects a granularity that does not land exactly on the interval end', () => {
    const msg = /divide the interval evenly/;
    expectApiError(
      () => planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-02T00:00:00Z', granularity: 'PT7H' }),
      'invalid.value',
      'granularity',
      msg,
    );
    expectApiError(
      () => planBuckets({ interval: '2024-01-01T00:00:00Z/2024-02-15T00:00:00Z', granularity: 'P1M' }),
      'invalid.value',
      'granularity',
      msg,
    );
    expectApiError(
      () => planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-02T00:00:00Z', granularity: 'P2D' }),
      'invalid.value',
      'granularity',
      msg,
    );
  });

  it('rejects a granularity finer than PT1M and accepts PT1M', () => {
    expectApiError(
      () => planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-01T01:00:00Z', granularity: 'PT30S' }),
      'invalid.value',
      'granularity',
      /PT1M/,
    );
    expect(planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-01T01:00:00Z', granularity: 'PT1M' }).boundaries).toHaveLength(61);
  });

  it('rejects a malformed granularity with invalid.value naming granularity', () => {
    expectApiError(
      () => planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-02T00:00:00Z', granularity: 'daily' }),
      'invalid.value',
      'granularity',
    );
  });

  it('plans exactly 20,000 buckets and rejects more', () => {
    // 20,000 minutes = 13 days 21 h 20 min.
    const plan = planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-14T21:20:00Z', granularity: 'PT1M', timeZone: 'Europe/Berlin' });
    expect(plan.boundaries).toHaveLength(20_001);
    expect(iso(plan.boundaries[20_000] ?? 0)).toBe('2024-01-14T21:20:00.000Z');
    expectApiError(
      () => planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-14T21:21:00Z', granularity: 'PT1M' }),
      'invalid.value',
      'granularity',
      /20000/,
    );
  });

  it('answers an unknown time zone with invalid.value naming timeZone', () => {
    for (const timeZone of ['Mars/Olympus_Mons', 'Europe/Berln', '', 'x'.repeat(200)]) {
      expectApiError(
        () => planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-02T00:00:00Z', granularity: 'P1D', timeZone }),
        'invalid.value',
        'timeZone',
      );
    }
  });
});

describe('bucket planning across daylight-saving time', () => {
  it('makes the Berlin spring-forward day (2024-03-31) a 23-hour P1D bucket, midnight to midnight', () => {
    const input = { interval: '2024-03-30T00:00:00+01:00/2024-04-01T00:00:00+02:00', granularity: 'P1D', timeZone: 'Europe/Berlin' };
    expect(boundaries(input)).toEqual(['2024-03-29T23:00:00.000Z', '2024-03-30T23:00:00.000Z', '2024-03-31T22:00:00.000Z']);
    expect(widthsInHours(input)).toEqual([24, 23]);
  });

  it('makes the Berlin fall-back day (2024-10-27) a 25-hour P1D bucket', () => {
    const input = { interval: '2024-10-26T00:00:00+02:00/2024-10-28T00:00:00+01:00', granularity: 'P1D', timeZone: 'Europe/Berlin' };
    expect(boundaries(input)).toEqual(['2024-10-25T22:00:00.000Z', '2024-10-26T22:00:00.000Z', '2024-10-27T23:00:00.000Z']);
    expect(widthsInHours(input)).toEqual([24, 25]);
  });

  it('makes the New York spring-forward day (2024-03-10) 23 hours and the fall-back day (2024-11-03) 25 hours', () => {
    const spring = { interval: '2024-03-09T00:00:00-05:00/2024-03-11T00:00:00-04:00', granularity: 'P1D', timeZone: 'America/New_York' };
    expect(boundaries(spring)).toEqual(['2024-03-09T05:00:00.000Z', '2024-03-10T05:00:00.000Z', '2024-03-11T04:00:00.000Z']);
    expect(widthsInHours(spring)).toEqual([24, 23]);
    const fall = { interval: '2024-11-02T00:00:00-04:00/2024-11-04T00:00:00-05:00', granularity: 'P1D', timeZone: 'America/New_York' };
    expect(boundaries(fall)).toEqual(['2024-11-02T04:00:00.000Z', '2024-11-03T04:00:00.000Z', '2024-11-04T05:00:00.000Z']);
    expect(widthsInHours(fall)).toEqual([24, 25]);
  });

  it('rejects a UTC-day interval split by P1D in a zone whose days do not line up with it', () => {
    expectApiError(
      () => planBuckets({ interval: '2024-03-30T00:00:00Z/2024-04-01T00:00:00Z', granularity: 'P1D', timeZone: 'Europe/Berlin' }),
      'invalid.value',
      'granularity',
    );
  });

  it('keeps PT1H at one elapsed hour across the Berlin spring-forward transition', () => {
    const input = { interval: '2024-03-31T00:00:00+01:00/2024-03-31T04:00:00+02:00', granularity: 'PT1H', timeZone: 'Europe/Berlin' };
    expect(boundaries(input)).toEqual([
      '2024-03-30T23:00:00.000Z',
      '2024-03-31T00:00:00.000Z',
      '2024-03-31T01:00:00.000Z',
      '2024-03-31T02:00:00.000Z',
    ]);
  });

  it('keeps PT1H at one elapsed hour across the New York fall-back transition (the repeated hour is its own bucket)', () => {
    const input = { interval: '2024-11-03T00:00:00-04:00/2024-11-03T03:00:00-05:00', granularity: 'PT1H', timeZone: 'America/New_York' };
    expect(widthsInHours(input)).toEqual([1, 1, 1, 1]);
  });

  it('runs P1M in New York from local midnight on the 1st, so March is an hour short and November an hour long', () => {
    expect(
      boundaries({ interval: '2024-02-01T00:00:00-05:00/2024-04-01T00:00:00-04:00', granularity: 'P1M', timeZone: 'America/New_York' }),
    ).toEqual(['2024-02-01T05:00:00.000Z', '2024-03-01T05:00:00.000Z', '2024-04-01T04:00:00.000Z']);
    const fall = { interval: '2024-10-01T00:00:00-04:00/2024-12-01T00:00:00-05:00', granularity: 'P1M', timeZone: 'America/New_York' };
    expect(boundaries(fall)).toEqual(['2024-10-01T04:00:00.000Z', '2024-11-01T04:00:00.000Z', '2024-12-01T05:00:00.000Z']);
    expect(widthsInHours(fall)).toEqual([31 * 24, 30 * 24 + 1]);
  });

  it('runs P1D in Asia/Kolkata from local midnight, which is 18:30 UTC', () => {
    expect(
      boundaries({ interval: '2024-01-01T00:00:00+05:30/2024-01-04T00:00:00+05:30', granularity: 'P1D', timeZone: 'Asia/Kolkata' }),
    ).toEqual(['2023-12-31T18:30:00.000Z', '2024-01-01T18:30:00.000Z', '2024-01-02T18:30:00.000Z', '2024-01-03T18:30:00.000Z']);
  });

  it('moves a wall time that falls in the spring-forward gap forward by the gap length', () => {
    // Berlin 2024-03-31 02:30 does not exist: it becomes 03:30 CEST (01:30Z).
    expect(
      boundaries({ interval: '2024-03-30T02:30:00+01:00/2024-04-01T02:30:00+02:00', granularity: 'P1D', timeZone: 'Europe/Berlin' }),
    ).toEqual(['2024-03-30T01:30:00.000Z', '2024-03-31T01:30:00.000Z', '2024-04-01T00:30:00.000Z']);
    // New York 2024-03-10 02:30 does not exist: it becomes 03:30 EDT (07:30Z).
    expect(
      boundaries({ interval: '2024-03-09T02:30:00-05:00/2024-03-11T02:30:00-04:00', granularity: 'P1D', timeZone: 'America/New_York' }),
    ).toEqual(['2024-03-09T07:30:00.000Z', '2024-03-10T07:30:00.000Z', '2024-03-11T06:30:00.000Z']);
  });

  it('reads a wall time that occurs twice at fall-back as the earlier instant', () => {
    // Berlin 2024-10-27 02:30 happens at 00:30Z (CEST) and 01:30Z (CET); the earlier one is used.
    expect(
      boundaries({ interval: '2024-10-26T02:30:00+02:00/2024-10-28T02:30:00+01:00', granularity: 'P1D', timeZone: 'Europe/Berlin' }),
    ).toEqual(['2024-10-26T00:30:00.000Z', '2024-10-27T00:30:00.000Z', '2024-10-28T01:30:00.000Z']);
  });

  it('adds the elapsed part of P1DT1H after stepping the calendar day on the wall clock', () => {
    // k=1: Mar 31 00:00 CET (23:00Z) + 1 h; k=2: Apr 1 00:00 CEST (22:00Z) + 2 h.
    expect(
      boundaries({ interval: '2024-03-30T00:00:00+01:00/2024-04-01T02:00:00+02:00', granularity: 'P1DT1H', timeZone: 'Europe/Berlin' }),
    ).toEqual(['2024-03-29T23:00:00.000Z', '2024-03-31T00:00:00.000Z', '2024-04-01T00:00:00.000Z']);
  });
});

describe('bucketIndex', () => {
  const plan = planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-02T00:00:00Z', granularity: 'PT6H' });

  it('puts the interval start in bucket 0', () => {
    expect(bucketIndex(plan, ms('2024-01-01T00:00:00.000Z'))).toBe(0);
  });

  it('puts an instant exactly on a boundary in the later bucket', () => {
    expect(bucketIndex(plan, ms('2024-01-01T06:00:00.000Z'))).toBe(1);
    expect(bucketIndex(plan, ms('2024-01-01T05:59:59.999Z'))).toBe(0);
    expect(bucketIndex(plan, ms('2024-01-01T18:00:00.000Z'))).toBe(3);
  });

  it('puts the last millisecond before the end in the last bucket', () => {
    expect(bucketIndex(plan, ms('2024-01-01T23:59:59.999Z'))).toBe(3);
  });

  it('answers -1 at the end and before the start', () => {
    expect(bucketIndex(plan, ms('2024-01-02T00:00:00.000Z'))).toBe(-1);
    expect(bucketIndex(plan, ms('2023-12-31T23:59:59.999Z'))).toBe(-1);
  });

  it('finds buckets of unequal width', () => {
    const dst = planBuckets({
      interval: '2024-10-26T00:00:00+02:00/2024-10-28T00:00:00+01:00',
      granularity: 'P1D',
      timeZone: 'Europe/Berlin',
    });
    expect(bucketIndex(dst, ms('2024-10-27T22:59:59.999Z'))).toBe(1);
    expect(bucketIndex(dst, ms('2024-10-27T23:00:00.000Z'))).toBe(-1);
    expect(bucketIndex(dst, ms('2024-10-26T22:00:00.000Z'))).toBe(1);
  });
});

describe('uniformRuns', () => {
  it('splits a Berlin DST week of P1D into three runs around the 23-hour day', () => {
    const plan = planBuckets({
      interval: '2024-03-28T00:00:00+01:00/2024-04-04T00:00:00+02:00',
      granularity: 'P1D',
      timeZone: 'Europe/Berlin',
    });
    expect(uniformRuns(plan)).toEqual([
      { start: ms('2024-03-27T23:00:00.000Z'), width: 24 * HOUR, count: 3, firstIndex: 0 },
      { start: ms('2024-03-30T23:00:00.000Z'), width: 23 * HOUR, count: 1, firstIndex: 3 },
      { start: ms('2024-03-31T22:00:00.000Z'), width: 24 * HOUR, count: 3, firstIndex: 4 },
    ]);
  });

  it('gives one run for equal buckets and for a single bucket', () => {
    const plan = planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-02T00:00:00Z', granularity: 'PT15M' });
    expect(uniformRuns(plan)).toEqual([{ start: ms('2024-01-01T00:00:00.000Z'), width: 15 * 60_000, count: 96, firstIndex: 0 }]);
    const single = planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-03T00:00:00Z' });
    expect(uniformRuns(single)).toEqual([{ start: ms('2024-01-01T00:00:00.000Z'), width: 2 * DAY, count: 1, firstIndex: 0 }]);
  });
});

describe('alignedTo', () => {
  it('says a UTC PT12H plan is aligned to hours and quarter hours but not days', () => {
    const plan = planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-02T00:00:00Z', granularity: 'PT12H' });
    expect(alignedTo(plan, HOUR)).toBe(true);
    expect(alignedTo(plan, 15 * 60_000)).toBe(true);
    expect(alignedTo(plan, DAY)).toBe(false);
  });

  it('says Kolkata days are aligned to quarter hours but not to hours', () => {
    const plan = planBuckets({
      interval: '2024-01-01T00:00:00+05:30/2024-01-03T00:00:00+05:30',
      granularity: 'P1D',
      timeZone: 'Asia/Kolkata',
    });
    expect(alignedTo(plan, 15 * 60_000)).toBe(true);
    expect(alignedTo(plan, HOUR)).toBe(false);
  });

  it('says a plan with an unaligned end is not aligned', () => {
    const plan = planBuckets({ interval: '2024-01-01T00:00:00Z/2024-01-01T10:30:00Z' });
    expect(alignedTo(plan, HOUR)).toBe(false);
  });
});

describe('formatInterval', () => {
  it('writes both ends in UTC with milliseconds', () => {
    expect(formatInterval(ms('2024-01-01T00:00:00Z'), ms('2024-01-01T12:00:00Z'))).toBe(
      '2024-01-01T00:00:00.000Z/2024-01-01T12:00:00.000Z',
    );
    expect(formatInterval(1_704_067_200_123, 1_704_067_260_000)).toBe('2024-01-01T00:00:00.123Z/2024-01-01T00:01:00.000Z');
  });
});
