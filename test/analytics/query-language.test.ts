import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers';
import { count, ingestOk, query, queryOk, timer } from './analytics-api';
import { conversation } from './builders';
import { HAND_DAY, QA, QB, UA, UB } from './fixtures/hand-day';

const DAY = '2002-03-04T00:00:00.000Z/2002-03-05T00:00:00.000Z';
const MORNING = '2002-03-04T00:00:00.000Z/2002-03-04T12:00:00.000Z';
const AFTERNOON = '2002-03-04T12:00:00.000Z/2002-03-05T00:00:00.000Z';
const voice = { dimension: 'mediaType', value: 'voice' };

beforeAll(async () => {
  await ingestOk(HAND_DAY); // counted once, whichever file ingests it first
});

describe('metric predicates', () => {
  it('keep only observations of their metric in range and leave other metrics alone', async () => {
    // Voice tHandle on the hand-built day: c1 510000, c4 130000, c5 200000.
    const res = await queryOk({
      interval: DAY,
      metrics: ['tHandle', 'nOffered'],
      filter: { type: 'and', predicates: [voice, { type: 'metric', metric: 'tHandle', range: { gte: 200000 } }] },
    });
    expect(res.source).toBe('raw');
    expect(res.results).toEqual([
      {
        group: { mediaType: 'voice' },
        data: [
          {
            interval: DAY,
            metrics: [
              { metric: 'tHandle', stats: timer(510000, 200000) },
              { metric: 'nOffered', stats: count(5) },
            ],
          },
        ],
      },
    ]);
  });

  it('have no opinion inside an or on other metrics, so the other branch decides for them', async () => {
    // tHandle: c4 (130000) passes the range; c1, c5 (voice) and c7 (chat) are in QA, so all four pass.
    // nOffered: the range says nothing, so only QA's offers stay: c1, c2, c5 (voice) and c7 (chat).
    const res = await queryOk({
      interval: DAY,
      metrics: ['tHandle', 'nOffered'],
      filter: {
        type: 'or',
        predicates: [
          { type: 'metric', metric: 'tHandle', range: { lt: 150000 } },
          { dimension: 'queueId', value: QA },
        ],
      },
    });
    expect(res.results).toEqual([
      {
        group: { mediaType: 'chat' },
        data: [
          {
            interval: DAY,
            metrics: [
              { metric: 'tHandle', stats: timer(300000) },
              { metric: 'nOffered', stats: count(1) },
            ],
          },
        ],
      },
      {
        group: { mediaType: 'voice' },
        data: [
          {
            interval: DAY,
            metrics: [
              { metric: 'tHandle', stats: timer(510000, 130000, 200000) },
              { metric: 'nOffered', stats: count(3) },
            ],
          },
        ],
      },
    ]);
  });

  it('work inside a clause and may be inferred from the metric field', async () => {
    const res = await queryOk({
      interval: DAY,
      metrics: ['tAcd'],
      filter: {
        type: 'and',
        predicates: [voice],
        clauses: [
          {
            type: 'or',
            predicates: [
              { metric: 'tAcd', range: { gt: 50000 } },
              { metric: 'tAcd', range: { lte: 10000 } },
            ],
          },
        ],
      },
    });
    // Voice tAcd: c1 30000, c3 60000, c5 10000 -> 60000 and 10000 pass.
    expect(res.results).toEqual([
      { group: { mediaType: 'voice' }, data: [{ interval: DAY, metrics: [{ metric: 'tAcd', stats: timer(60000, 10000) }] }] },
    ]);
  });

  it('change which components count for oServiceLevel', async () => {
    // Only answers under 20 s count: c5 (10000) stays, c1 (30000, over SLA) goes; its nOverSla stays.
    // QA: answered 1, over SLA 1, abandoned 1 (short, included by default) -> 0 / 2. QB: only a flow-out -> 0 / 0.
    const res = await queryOk({
      interval: DAY,
      groupBy: ['queueId'],
      metrics: ['oServiceLevel'],
      filter: { type: 'and', predicates: [voice, { type: 'metric', metric: 'tAnswered', range: { lt: 20000 } }] },
    });
    expect(res.results).toEqual([
      {
        group: { mediaType: 'voice', queueId: QA },
        data: [{ interval: DAY, metrics: [{ metric: 'oServiceLevel', stats: { ratio: 0, numerator: 0, denominator: 2, target: 0.8 } }] }],
      },
      {
        group: { mediaType: 'voice', queueId: QB },
        data: [{ interval: DAY, metrics: [{ metric: 'oServiceLevel', stats: { numerator: 0, denominator: 0, target: 0.8 } }] }],
      },
    ]);
  });
});

describe('views', () => {
  it('return the target’s observations in [gte, lt) per bucket, absent where none fall in range', async () => {
    const res = await queryOk({
      interval: DAY,
      granularity: 'PT12H',
      metrics: ['tHandle'],
      filter: { type: 'and', predicates: [voice] },
      views: [
        { target: 'tHandle', name: 'longHandle', function: 'rangeBound', range: { gte: 200000 } },
        { target: 'tHandle', name: 'shortHandle', function: 'rangeBound', range: { lt: 200000 } },
      ],
    });
    expect(res.results).toEqual([
      {
        group: { mediaType: 'voice' },
        data: [
          {
            interval: MORNING,
            metrics: [{ metric: 'tHandle', stats: timer(510000, 130000) }],
            views: [
              { name: 'longHandle', stats: timer(510000) },
              { name: 'shortHandle', stats: timer(130000) },
            ],
          },
          {
            interval: AFTERNOON,
            metrics: [{ metric: 'tHandle', stats: timer(200000) }],
            views: [{ name: 'longHandle', stats: timer(200000) }],
          },
        ],
      },
    ]);
  });

  it('are computed when their target is not among the metrics, and a bucket may hold only views', async () => {
    const res = await queryOk({
      interval: DAY,
      granularity: 'PT1H',
      groupBy: ['queueId'],
      metrics: ['nOffered'],
      filter: { type: 'and', predicates: [voice, { dimension: 'queueId', value: QB }] },
      views: [{ target: 'tFlowOut', name: 'flowOutsUnder2m', function: 'rangeBound', range: { gte: 0, lt: 120000 } }],
    });
    expect(res.results).toEqual([
      {
        group: { mediaType: 'voice', queueId: QB },
        data: [
          { interval: '2002-03-04T00:00:00.000Z/2002-03-04T01:00:00.000Z', metrics: [{ metric: 'nOffered', stats: count(1) }] },
          { interval: '2002-03-04T11:00:00.000Z/2002-03-04T12:00:00.000Z', metrics: [{ metric: 'nOffered', stats: count(1) }] },
          {
            interval: '2002-03-04T12:00:00.000Z/2002-03-04T13:00:00.000Z',
            metrics: [],
            views: [{ name: 'flowOutsUnder2m', stats: timer(60000) }],
          },
        ],
      },
    ]);
  });
});

describe('topN and bottomN', () => {
  // tHandle per group of groupBy [userId]: voice/UA 510000 (1); chat/UA 300000 (1); voice/UB 130000 + 200000 (2).
  const ranked = (queryType: string, fn: string, extra: object = {}) =>
    queryOk({
      interval: DAY,
      groupBy: ['userId'],
      metrics: ['tHandle'],
      queryType,
      sortMetric: { name: 'tHandle', function: fn },
      ...extra,
    });
  const groups = (res: { results: { group: Record<string, string> }[] }) =>
    res.results.map((r) => `${r.group.mediaType}/${r.group.userId ?? '-'}`);

  it('ranks whole groups by the sum over all buckets, highest first, cut at limit', async () => {
    expect(groups(await ranked('topN', 'sum', { limit: 2 }))).toEqual([`voice/${UA}`, `voice/${UB}`]);
  });

  it('ranks by count ascending for bottomN, ties in the usual group order', async () => {
    expect(groups(await ranked('bottomN', 'count'))).toEqual([`chat/${UA}`, `voice/${UA}`, `voice/${UB}`]);
  });

  it('ranks by max, min and average', async () => {
    expect(groups(await ranked('topN', 'max'))).toEqual([`voice/${UA}`, `chat/${UA}`, `voice/${UB}`]);
    expect(groups(await ranked('bottomN', 'min'))).toEqual([`voice/${UB}`, `chat/${UA}`, `voice/${UA}`]);
    // averages: voice/UA 510000, chat/UA 300000, voice/UB 165000
    expect(groups(await ranked('topN', 'average'))).toEqual([`voice/${UA}`, `chat/${UA}`, `voice/${UB}`]);
  });

  it('puts groups without the sort metric last and ranks by a metric it does not return', async () => {
    const withOffers = await queryOk({
      interval: DAY,
      groupBy: ['userId'],
      metrics: ['tHandle', 'nOffered'],
      queryType: 'topN',
      sortMetric: { name: 'tHandle', function: 'sum' },
    });
    expect(groups(withOffers)).toEqual([`voice/${UA}`, `voice/${UB}`, `chat/${UA}`, 'chat/-', 'voice/-']);
    const answeredOnly = await queryOk({
      interval: DAY,
      groupBy: ['userId'],
      metrics: ['tAnswered'],
      queryType: 'topN',
      sortMetric: { name: 'tHandle', function: 'sum' },
    });
    expect(answeredOnly.results).toEqual([
      { group: { mediaType: 'voice', userId: UA }, data: [{ interval: DAY, metrics: [{ metric: 'tAnswered', stats: timer(30000) }] }] },
      { group: { mediaType: 'voice', userId: UB }, data: [{ interval: DAY, metrics: [{ metric: 'tAnswered', stats: timer(10000) }] }] },
      { group: { mediaType: 'chat', userId: UA }, data: [{ interval: DAY, metrics: [{ metric: 'tAnswered', stats: timer(90000) }] }] },
    ]);
  });
});

describe('time zones (buckets step in local wall-clock time; intervals are written in UTC)', () => {
  const queue = `q-tz-${crypto.randomUUID()}`;
  const offered = (at: string) =>
    conversation({
      start: at,
      participants: [{ purpose: 'acd', sessions: [{ segments: [{ start: at, queueId: queue }], metrics: [['nOffered', 1, at]] }] }],
    });
  const inQueue = { type: 'and', predicates: [{ dimension: 'queueId', value: queue }] };

  beforeAll(async () => {
    await ingestOk([
      // Berlin, spring forward on 2024-03-31 (a 23-hour day).
      offered('2024-03-30T22:30:00.000Z'), // 23:30 CET on the 30th
      offered('2024-03-30T23:00:00.000Z'), // local midnight of the 31st: the second bucket's first instant
      offered('2024-03-31T21:59:59.000Z'), // 23:59:59 CEST on the 31st
      offered('2024-03-31T22:00:00.000Z'), // the interval end: outside
      // New York, fall back on 2024-11-03 (a 25-hour day).
      offered('2024-11-04T04:30:00.000Z'), // 23:30 EST on the 3rd
      // Kolkata (+05:30).
      offered('2024-06-01T18:29:59.000Z'),
      offered('2024-06-01T18:30:00.000Z'),
    ]);
  });

  it('gives a 23-hour day across the March transition in Europe/Berlin', async () => {
    const res = await queryOk({
      interval: '2024-03-30T00:00:00+01:00/2024-04-01T00:00:00+02:00',
      granularity: 'P1D',
      timeZone: 'Europe/Berlin',
      metrics: ['nOffered'],
      filter: inQueue,
    });
    expect(res.results[0].data).toEqual([
      { interval: '2024-03-29T23:00:00.000Z/2024-03-30T23:00:00.000Z', metrics: [{ metric: 'nOffered', stats: count(1) }] },
      { interval: '2024-03-30T23:00:00.000Z/2024-03-31T22:00:00.000Z', metrics: [{ metric: 'nOffered', stats: count(2) }] },
    ]);
    expect(res.source).toBe('rollup:agg_queue@60');
  });

  it('gives a 25-hour day across the November transition in America/New_York', async () => {
    const res = await queryOk({
      interval: '2024-11-03T00:00:00-04:00/2024-11-05T00:00:00-05:00',
      granularity: 'P1D',
      timeZone: 'America/New_York',
      metrics: ['nOffered'],
      filter: inQueue,
    });
    expect(res.results[0].data).toEqual([
      { interval: '2024-11-03T04:00:00.000Z/2024-11-04T05:00:00.000Z', metrics: [{ metric: 'nOffered', stats: count(1) }] },
    ]);
  });

  it('starts Asia/Kolkata days at 18:30 UTC, read from the 15-minute rollup', async () => {
    const res = await queryOk({
      interval: '2024-06-01T00:00:00+05:30/2024-06-03T00:00:00+05:30',
      granularity: 'P1D',
      timeZone: 'Asia/Kolkata',
      metrics: ['nOffered'],
      filter: inQueue,
    });
    expect(res.results[0].data).toEqual([
      { interval: '2024-05-31T18:30:00.000Z/2024-06-01T18:30:00.000Z', metrics: [{ metric: 'nOffered', stats: count(1) }] },
      { interval: '2024-06-01T18:30:00.000Z/2024-06-02T18:30:00.000Z', metrics: [{ metric: 'nOffered', stats: count(1) }] },
    ]);
    expect(res.source).toBe('rollup:agg_queue@15');
  });

  it('answers the same from raw observations', async () => {
    const filter = {
      type: 'and',
      predicates: [
        { dimension: 'queueId', value: queue },
        { dimension: 'conversationId', operator: 'exists' },
      ],
    };
    const res = await queryOk({
      interval: '2024-03-30T00:00:00+01:00/2024-04-01T00:00:00+02:00',
      granularity: 'P1D',
      timeZone: 'Europe/Berlin',
      metrics: ['nOffered'],
      filter,
    });
    expect(res.source).toBe('raw');
    expect(res.results[0].data.map((d: { metrics: { stats: { count: number } }[] }) => d.metrics[0]!.stats.count)).toEqual([1, 2]);
  });

  it('rejects buckets that do not land on the interval end', async () => {
    expectError(
      await query({ interval: '2024-03-30T00:00:00Z/2024-04-01T00:00:00Z', granularity: 'P1D', timeZone: 'Europe/Berlin' }),
      400,
      'invalid.value',
      'granularity',
    );
  });
});

describe('validation of the rest of the language', () => {
  const base = { interval: DAY };
  const view = (extra: object) => ({ target: 'tHandle', name: 'v', function: 'rangeBound', range: { lt: 1000 }, ...extra });
  const cases: [string, object, string][] = [
    ['a view named like a metric', { views: [view({ name: 'tTalk' })] }, 'views[0].name'],
    ['two views with one name', { views: [view({}), view({})] }, 'views[1].name'],
    ['a view of a count metric', { views: [view({ target: 'nOffered' })] }, 'views[0].target'],
    ['a view without bounds', { views: [view({ range: {} })] }, 'views[0].range'],
    ['a view with gte ≥ lt', { views: [view({ range: { gte: 5, lt: 5 } })] }, 'views[0].range'],
    ['a view function other than rangeBound', { views: [view({ function: 'percentile' })] }, 'views[0].function'],
    ['eleven views', { views: Array.from({ length: 11 }, (_, i) => view({ name: `v${i}` })) }, 'views'],
    [
      'a metric predicate without range',
      { filter: { type: 'and', predicates: [{ type: 'metric', metric: 'tTalk' }] } },
      'filter.predicates[0].range',
    ],
    [
      'a metric predicate with an empty range',
      { filter: { type: 'and', predicates: [{ type: 'metric', metric: 'tTalk', range: {} }] } },
      'filter.predicates[0].range',
    ],
    [
      'a metric predicate on a calculated metric',
      { filter: { type: 'and', predicates: [{ type: 'metric', metric: 'oServiceLevel', range: { gt: 0 } }] } },
      'filter.predicates[0].metric',
    ],
    [
      'a property predicate without its property',
      { filter: { type: 'and', predicates: [{ type: 'property', value: 'x' }] } },
      'filter.predicates[0].property',
    ],
    [
      'a predicate of no known type',
      { filter: { type: 'and', predicates: [{ type: 'segment', value: 'x' }] } },
      'filter.predicates[0].type',
    ],
    ['topN without sortMetric', { queryType: 'topN' }, 'sortMetric'],
    ['sortMetric with groupBy', { sortMetric: { name: 'tTalk', function: 'sum' } }, 'sortMetric'],
    ['limit with groupBy', { limit: 5 }, 'limit'],
    ['an unknown sort function', { queryType: 'topN', sortMetric: { name: 'tTalk', function: 'median' } }, 'sortMetric.function'],
    ['sorting by oServiceLevel', { queryType: 'topN', sortMetric: { name: 'oServiceLevel', function: 'sum' } }, 'sortMetric.name'],
    ['limit 0', { queryType: 'topN', sortMetric: { name: 'tTalk', function: 'sum' }, limit: 0 }, 'limit'],
    ['an unknown queryType', { queryType: 'pivot' }, 'queryType'],
    ['alternateTimeDimension other than eventTime', { alternateTimeDimension: 'conversationStart' }, 'alternateTimeDimension'],
  ];
  for (const [what, body, field] of cases) {
    it(`rejects ${what} naming ${field}`, async () => {
      expectError(await query({ ...base, ...body }), 400, 'invalid.value', field);
    });
  }

  it('accepts flattenMultivaluedDimensions, alternateTimeDimension eventTime, 10 views and limit 10,000', async () => {
    const res = await query({
      ...base,
      flattenMultivaluedDimensions: true,
      alternateTimeDimension: 'eventTime',
      views: Array.from({ length: 10 }, (_, i) => view({ name: `v${i}` })),
      queryType: 'bottomN',
      sortMetric: { name: 'tTalk', function: 'average' },
      limit: 10_000,
    });
    expect(res.status).toBe(200);
  });
});
