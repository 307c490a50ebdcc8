import { beforeAll, describe, expect, it } from 'vitest';
import { count, ingestOk, queryOk, timer } from './analytics-api';
import { c2, HAND_DAY, QA, QB, UA, UB } from './fixtures/hand-day';

const DAY = '2002-03-04T00:00:00.000Z/2002-03-05T00:00:00.000Z';
const MORNING = '2002-03-04T00:00:00.000Z/2002-03-04T12:00:00.000Z';
const AFTERNOON = '2002-03-04T12:00:00.000Z/2002-03-05T00:00:00.000Z';
const voice = { dimension: 'mediaType', value: 'voice' };

beforeAll(async () => {
  await ingestOk(HAND_DAY);
});

describe('the seed query shape', () => {
  it('answers one day in PT12H buckets grouped by queue and user, filtered to outbound voice', async () => {
    const res = await queryOk({
      interval: DAY,
      granularity: 'PT12H',
      groupBy: ['queueId', 'userId'],
      filter: { type: 'and', predicates: [voice, { dimension: 'direction', value: 'outbound' }] },
    });
    // Outbound voice is c4 (UB on QB, morning, connected) and c8 (UB on QB, afternoon, abandoned),
    // plus c4's customer leg, to which neither queueId nor userId applies.
    expect(res.results).toEqual([
      { group: { mediaType: 'voice' }, data: [{ interval: MORNING, metrics: [{ metric: 'nConnected', stats: count(1) }] }] },
      {
        group: { mediaType: 'voice', queueId: QB, userId: UB },
        data: [
          {
            interval: MORNING,
            metrics: [
              { metric: 'tTalk', stats: timer(100000) },
              { metric: 'tHandle', stats: timer(130000) },
              { metric: 'nOutbound', stats: count(1) },
              { metric: 'nOutboundAttempted', stats: count(1) },
              { metric: 'nOutboundConnected', stats: count(1) },
            ],
          },
          {
            interval: AFTERNOON,
            metrics: [
              { metric: 'nOutbound', stats: count(1) },
              { metric: 'nOutboundAttempted', stats: count(1) },
              { metric: 'nOutboundAbandoned', stats: count(1) },
            ],
          },
        ],
      },
    ]);
    expect(res.source).toBe('rollup:agg_user@60');
  });
});

describe('seed rule 2: a filter on a dimension that applies only to some metrics', () => {
  it('returns only the metrics a userId filter applies to (no nOffered, no oServiceLevel)', async () => {
    const res = await queryOk({
      interval: DAY,
      metrics: ['nOffered', 'tAnswered', 'tHandle', 'oServiceLevel'],
      filter: { type: 'and', predicates: [{ dimension: 'userId', value: UA }] },
    });
    expect(res.results).toEqual([
      {
        group: { mediaType: 'chat' },
        data: [
          {
            interval: DAY,
            metrics: [
              { metric: 'tAnswered', stats: timer(90000) },
              { metric: 'tHandle', stats: timer(300000) },
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
              { metric: 'tAnswered', stats: timer(30000) },
              { metric: 'tHandle', stats: timer(510000) },
            ],
          },
        ],
      },
    ]);
  });

  it('drops a metric a queueId filter cannot apply to (the customer leg) while keeping queue metrics', async () => {
    const res = await queryOk({
      interval: DAY,
      metrics: ['nConnected', 'nOffered'],
      filter: { type: 'and', predicates: [voice, { dimension: 'queueId', value: QA }] },
    });
    expect(res.results).toEqual([
      { group: { mediaType: 'voice' }, data: [{ interval: DAY, metrics: [{ metric: 'nOffered', stats: count(3) }] }] },
    ]);
  });
});

describe('seed rule 3: groupBy on a dimension that applies only to some metrics', () => {
  it('returns every metric, the ones without userId in a group that omits it', async () => {
    const res = await queryOk({
      interval: DAY,
      groupBy: ['userId'],
      metrics: ['nOffered', 'tAnswered'],
      filter: { type: 'and', predicates: [voice] },
    });
    // nOffered: c1 08:00, c3 11:59, c5 15:00, c2 13:00 and c6 at exactly 00:00 = 5.
    expect(res.results).toEqual([
      { group: { mediaType: 'voice' }, data: [{ interval: DAY, metrics: [{ metric: 'nOffered', stats: count(5) }] }] },
      { group: { mediaType: 'voice', userId: UA }, data: [{ interval: DAY, metrics: [{ metric: 'tAnswered', stats: timer(30000) }] }] },
      { group: { mediaType: 'voice', userId: UB }, data: [{ interval: DAY, metrics: [{ metric: 'tAnswered', stats: timer(10000) }] }] },
    ]);
  });

  it('always groups by mediaType, even with no groupBy', async () => {
    const res = await queryOk({ interval: DAY, metrics: ['tHandle'] });
    expect(res.results).toEqual([
      { group: { mediaType: 'chat' }, data: [{ interval: DAY, metrics: [{ metric: 'tHandle', stats: timer(300000) }] }] },
      { group: { mediaType: 'voice' }, data: [{ interval: DAY, metrics: [{ metric: 'tHandle', stats: timer(510000, 130000, 200000) }] }] },
    ]);
  });
});

describe('seed rule 4 and bucket edges', () => {
  const edgesQuery = (extra: object[] = []) => ({
    interval: DAY,
    granularity: 'PT12H',
    groupBy: ['queueId'],
    metrics: ['nOffered', 'tAcd', 'tFlowOut', 'tAbandon'],
    filter: { type: 'and', predicates: [voice, ...extra] },
  });
  // By hand: QA morning c1; QA afternoon c2 (abandon) and c5; QB morning c6 (00:00 exactly) and
  // c3 (11:59); c3's tAcd and tFlowOut at exactly 12:00 open the afternoon; c6's abandon at the
  // interval end is outside, so QB has no tAbandon at all (absent, not zero).
  const expected = [
    {
      group: { mediaType: 'voice', queueId: QA },
      data: [
        {
          interval: MORNING,
          metrics: [
            { metric: 'nOffered', stats: count(1) },
            { metric: 'tAcd', stats: timer(30000) },
          ],
        },
        {
          interval: AFTERNOON,
          metrics: [
            { metric: 'nOffered', stats: count(2) },
            { metric: 'tAcd', stats: timer(10000) },
            { metric: 'tAbandon', stats: timer(5000) },
          ],
        },
      ],
    },
    {
      group: { mediaType: 'voice', queueId: QB },
      data: [
        { interval: MORNING, metrics: [{ metric: 'nOffered', stats: count(2) }] },
        {
          interval: AFTERNOON,
          metrics: [
            { metric: 'tAcd', stats: timer(60000) },
            { metric: 'tFlowOut', stats: timer(60000) },
          ],
        },
      ],
    },
  ];

  it('places an emit at a bucket start in that bucket, excludes one at the interval end, and omits absent metrics', async () => {
    const res = await queryOk(edgesQuery());
    expect(res.results).toEqual(expected);
    expect(res.source).toBe('rollup:agg_queue@60');
  });

  it('gives the same answer from the raw observations as from the rollups', async () => {
    // conversationId exists on every observation, but no rollup keeps it: this reads raw rows.
    const res = await queryOk(edgesQuery([{ dimension: 'conversationId', operator: 'exists' }]));
    expect(res.source).toBe('raw');
    expect(res.results).toEqual(expected);
  });

  it('reads hourly cells as stored, a cell of one observation with its value as min and max, as the raw rows do', async () => {
    // PT1H over agg_queue@60: one bucket a slot, so the cells are not added up in SQL; most hold one observation,
    // which keeps no min and max of its own (rollups.ts extremeOf).
    const hourly = (extra: object[] = []) => ({ ...edgesQuery(extra), granularity: 'PT1H' });
    const rolled = await queryOk(hourly());
    expect(rolled.source).toBe('rollup:agg_queue@60');
    const raw = await queryOk(hourly([{ dimension: 'conversationId', operator: 'exists' }]));
    expect(raw.source).toBe('raw');
    expect(rolled.results).toEqual(raw.results);
    const timers = rolled.results.flatMap((r: { data: { metrics: { metric: string; stats: { min?: number } }[] }[] }) =>
      r.data.flatMap((d) => d.metrics.filter((m) => m.metric !== 'nOffered')),
    );
    expect(timers.length).toBeGreaterThan(0);
    for (const t of timers) expect(t.stats.min).toBeGreaterThan(0);
  });

  it('returns an empty result for an interval without data', async () => {
    const res = await queryOk({ interval: '2002-03-06T00:00:00Z/2002-03-07T00:00:00Z' });
    expect(res.results).toEqual([]);
  });
});

describe('metrics', () => {
  it('returns every metric with data, in catalogue order, when metrics is absent', async () => {
    const res = await queryOk({
      interval: DAY,
      filter: { type: 'and', predicates: [{ dimension: 'conversationId', value: c2.conversationId }] },
    });
    // c2 is a short abandon: answered 0, abandoned 1 -> service level 0/1 under the default settings.
    expect(res.results).toEqual([
      {
        group: { mediaType: 'voice' },
        data: [
          {
            interval: DAY,
            metrics: [
              { metric: 'nOffered', stats: count(1) },
              { metric: 'tAbandon', stats: timer(5000) },
              { metric: 'tShortAbandon', stats: timer(5000) },
              { metric: 'oServiceLevel', stats: { ratio: 0, numerator: 0, denominator: 1, target: 0.8 } },
            ],
          },
        ],
      },
    ]);
  });

  it('answers in the order the metrics were asked for', async () => {
    const res = await queryOk({
      interval: DAY,
      metrics: ['tAcd', 'nOffered'],
      filter: { type: 'and', predicates: [voice, { dimension: 'queueId', value: QB }] },
    });
    expect(res.results[0].data[0].metrics.map((m: { metric: string }) => m.metric)).toEqual(['tAcd', 'nOffered']);
  });

  it('keeps dimensions from the segment that was current at emit time', async () => {
    // c1's agent segment switches to wrap-up (wrapUpCode resolved) at 08:08; tAnswered (08:00:30)
    // precedes it, tTalk (08:08) and tHandle (08:09) follow it.
    const res = await queryOk({
      interval: DAY,
      groupBy: ['wrapUpCode'],
      metrics: ['tAnswered', 'tTalk'],
      filter: { type: 'and', predicates: [{ dimension: 'userId', value: UA }, voice] },
    });
    expect(res.results).toEqual([
      { group: { mediaType: 'voice' }, data: [{ interval: DAY, metrics: [{ metric: 'tAnswered', stats: timer(30000) }] }] },
      {
        group: { mediaType: 'voice', wrapUpCode: 'resolved' },
        data: [{ interval: DAY, metrics: [{ metric: 'tTalk', stats: timer(450000) }] }],
      },
    ]);
  });
});
