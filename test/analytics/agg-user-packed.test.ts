import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { METRIC_INDEX } from '../../src/analytics/catalog';
import { packedUpsertSql } from '../../src/analytics/ingest/observations-sql';
import { ROLLUPS, USER_METRICS } from '../../src/analytics/rollups';
import { send } from '../helpers';
import {
  aggregateObservations,
  canonicalize,
  observationsFromRecords,
  type AggregateQuery,
  type ConversationRecord,
} from '../support/reference-aggregator';
import { ingestOk, queryOk, SERVICE_LEVEL } from './analytics-api';
import { conversation } from './builders';

/**
 * agg_user is packed (migration 0005): one row per (res, slot, media, direction, queue, user) with
 * cnt/sum/mn/mx columns per agent metric of the first catalogue. Its upsert merges rows exactly; the
 * agent metrics added since are kept one row per metric in agg_user_more (migration 0011); the metrics
 * nobody's userId applies to are answered from agg_queue, as they were before from agg_user's user-0
 * cells; an agent metric observed without a userId still lands under user 0.
 */
const USER = ROLLUPS.find((r) => r.table === 'agg_user')!;

describe('the packed upsert, through D1', () => {
  it('fits D1: at most 100 columns per table (6 key columns, 4 per agent metric)', async () => {
    const { results } = await env.DB.prepare(`SELECT name FROM pragma_table_info('agg_user')`).all<{ name: string }>();
    expect(results.length).toBe(6 + 4 * USER_METRICS.length);
    expect(results.length).toBeLessThanOrEqual(100);
  });

  it('keeps the other agent metrics in agg_user_more, clustered on its key (WITHOUT ROWID) like every rollup', async () => {
    const { results } = await env.DB.prepare(
      `SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name GLOB 'agg_*' ORDER BY name`,
    ).all<{
      name: string;
      sql: string;
    }>();
    expect(results.map((r) => r.name)).toEqual(['agg_dim', 'agg_mask', 'agg_media', 'agg_proj', 'agg_queue', 'agg_user', 'agg_user_more']);
    for (const r of results) expect(r.sql).toMatch(/WITHOUT ROWID\s*$/);
  });

  // An hour of 1975 no other test writes, dimension ids no dictionary hands out there.
  const units = 50_000;
  const slot = units * 3_600_000;
  const upsert = (rows: string[]) =>
    env.DB.prepare(packedUpsertSql(USER))
      .bind(`[${rows.join(',')}]`)
      .run();
  const read = async (user: number) =>
    env.DB.prepare(
      `SELECT tAnswered_cnt, tAnswered_sum, tAnswered_mn, tAnswered_mx, nOverSla_cnt, nOverSla_sum, nOverSla_mn, nOverSla_mx,
              tAlert_cnt, tAlert_sum, tAlert_mn, tAlert_mx
       FROM agg_user WHERE res = 60 AND slot = ?1 AND media = 1 AND direction = 2 AND queue = 3 AND user = ?2`,
    )
      .bind(slot, user)
      .first();

  it('adds counts and sums, keeps min and max of the values present, NULL where a metric never was or was seen once', async () => {
    const [tAnswered, nOverSla, tAlert] = ['tAnswered', 'nOverSla', 'tAlert'].map((n) => METRIC_INDEX.get(n)!);
    // A new row with one observation (the bare value), and another row with one metric.
    await upsert([`{"k":[60,${units},1,2,3,901],"${tAnswered}":500}`, `{"k":[60,${units},1,2,3,902],"${tAlert}":[3,30,5,20]}`]);
    // One observation keeps no min or max: both are its sum (rollups.ts extremeOf).
    expect(await read(901)).toEqual({
      tAnswered_cnt: 1,
      tAnswered_sum: 500,
      tAnswered_mn: null,
      tAnswered_mx: null,
      nOverSla_cnt: 0,
      nOverSla_sum: 0,
      nOverSla_mn: null,
      nOverSla_mx: null,
      tAlert_cnt: 0,
      tAlert_sum: 0,
      tAlert_mn: null,
      tAlert_mx: null,
    });
    // Into the stored row: more of a metric it holds (min below, max above), a metric it lacks (NULL
    // until now), and nothing of a third one.
    await upsert([`{"k":[60,${units},1,2,3,901],"${tAnswered}":[2,700,100,600],"${nOverSla}":1}`]);
    expect(await read(901)).toEqual({
      tAnswered_cnt: 3,
      tAnswered_sum: 1200,
      tAnswered_mn: 100,
      tAnswered_mx: 600,
      nOverSla_cnt: 1,
      nOverSla_sum: 1,
      nOverSla_mn: null,
      nOverSla_mx: null,
      tAlert_cnt: 0,
      tAlert_sum: 0,
      tAlert_mn: null,
      tAlert_mx: null,
    });
    // A row lacking a metric the stored row holds leaves it as it was (min(x, NULL) would be NULL).
    await upsert([`{"k":[60,${units},1,2,3,901],"${nOverSla}":0}`, `{"k":[60,${units},1,2,3,902],"${tAlert}":40}`]);
    expect(await read(901)).toEqual({
      tAnswered_cnt: 3,
      tAnswered_sum: 1200,
      tAnswered_mn: 100,
      tAnswered_mx: 600,
      nOverSla_cnt: 2,
      nOverSla_sum: 1,
      nOverSla_mn: 0,
      nOverSla_mx: 1,
      tAlert_cnt: 0,
      tAlert_sum: 0,
      tAlert_mn: null,
      tAlert_mx: null,
    });
    expect(await read(902)).toMatchObject({
      tAnswered_cnt: 0,
      tAnswered_mn: null,
      tAlert_cnt: 4,
      tAlert_sum: 70,
      tAlert_mn: 5,
      tAlert_mx: 40,
    });
    await env.DB.prepare('DELETE FROM agg_user WHERE res = 60 AND slot = ?1').bind(slot).run();
  });
});

describe('metrics of every participant, per agent', () => {
  const t = (hms: string) => `2004-02-10T${hms}Z`;
  const DAY = `${t('00:00:00.000')}/2004-02-11T00:00:00.000Z`;
  const agent = `u-${crypto.randomUUID()}`;
  const queue = `q-${crypto.randomUUID()}`;
  let records: ConversationRecord[] = [];
  let settings: unknown;

  beforeAll(async () => {
    const call = (hour: string, withUser: boolean) =>
      conversation({
        start: t(`${hour}:00:00.000`),
        participants: [
          {
            purpose: 'customer',
            sessions: [
              {
                metrics: [
                  ['nConnected', 1, t(`${hour}:00:00.000`)],
                  ['tConnected', 95_000, t(`${hour}:01:35.000`)],
                ],
              },
            ],
          },
          { purpose: 'ivr', sessions: [{ metrics: [['tIvr', 12_000, t(`${hour}:00:12.000`)]] }] },
          {
            purpose: 'acd',
            sessions: [
              {
                segments: [{ start: t(`${hour}:00:12.000`), queueId: queue }],
                metrics: [
                  ['nOffered', 1, t(`${hour}:00:12.000`)],
                  ['tAcd', 3_000, t(`${hour}:00:15.000`)],
                  ['tAnswered', 3_000, t(`${hour}:00:15.000`)],
                ],
              },
            ],
          },
          {
            purpose: 'agent',
            ...(withUser ? { userId: agent } : {}),
            sessions: [
              {
                segments: [{ start: t(`${hour}:00:15.000`), queueId: queue }],
                metrics: [
                  ['tTalk', 60_000 + Number(hour), t(`${hour}:01:15.000`)],
                  ['tHandle', 80_000 + Number(hour), t(`${hour}:01:35.000`)],
                  ['nTransferred', 1, t(`${hour}:01:35.000`)],
                  // Agent metrics agg_user has no columns for: kept in agg_user_more.
                  ['tPark', 7_000 + Number(hour), t(`${hour}:00:55.000`)],
                  ['tMonitoring', 9_000, t(`${hour}:01:35.000`)],
                ],
              },
            ],
          },
        ],
      }) as unknown as ConversationRecord;
    records = [call('09', true), call('09', false), call('10', true), call('13', false), call('13', true)];
    await ingestOk(records);
    settings = (await send('GET', SERVICE_LEVEL)).body;
  });

  it('keeps agent metrics observed without a userId under user 0, and no other metric in agg_user', async () => {
    const rows = await env.DB.prepare(
      `SELECT a.res, a.user, a.tHandle_cnt AS handled, a.tAnswered_cnt AS answered FROM agg_user a
       JOIN dim_values q ON q.id = a.queue WHERE q.dim = 'queueId' AND q.value = ?1 ORDER BY a.res, a.user, a.slot`,
    )
      .bind(queue)
      .all<{ res: number; user: number; handled: number; answered: number }>();
    // Per resolution: user 0 (the agent without a userId; tAnswered of the acd participant) and the agent.
    // Every call emits within two minutes of its hour: its quarter hour holds what its hour does. The day has no
    // row yet: it is compacted from the hours once the data has moved past it (compaction.test.ts).
    expect(rows.results.map((r) => [r.res, r.user === 0, r.handled, r.answered])).toEqual([
      [15, true, 1, 2],
      [15, true, 0, 1],
      [15, true, 1, 2],
      [15, false, 1, 0],
      [15, false, 1, 0],
      [15, false, 1, 0],
      [60, true, 1, 2],
      [60, true, 0, 1],
      [60, true, 1, 2],
      [60, false, 1, 0],
      [60, false, 1, 0],
      [60, false, 1, 0],
    ]);
  });

  for (const [name, query] of [
    [
      'grouped by user, hourly',
      {
        interval: DAY,
        granularity: 'PT1H',
        groupBy: ['userId'],
        filter: { type: 'and', predicates: [{ dimension: 'queueId', value: queue }] },
      },
    ],
    [
      'grouped by user and queue in PT12H buckets, every participant',
      {
        interval: DAY,
        granularity: 'PT12H',
        groupBy: ['userId', 'queueId'],
        metrics: ['nConnected', 'tIvr', 'nOffered', 'tAcd', 'tAnswered', 'tTalk', 'tHandle', 'nTransferred', 'oServiceLevel'],
      },
    ],
    [
      'one agent, hourly',
      {
        interval: DAY,
        granularity: 'PT1H',
        filter: { type: 'and', predicates: [{ dimension: 'userId', value: agent }] },
      },
    ],
    [
      'one agent in one queue, daily, other metrics only',
      {
        interval: DAY,
        granularity: 'P1D',
        metrics: ['nOffered', 'tAcd', 'tIvr'],
        filter: {
          type: 'and',
          predicates: [
            { dimension: 'userId', value: agent },
            { dimension: 'queueId', value: queue },
          ],
        },
      },
    ],
    [
      'agents or no agent, daily (a filter SQL does not apply)',
      {
        interval: DAY,
        granularity: 'P1D',
        groupBy: ['queueId'],
        metrics: ['nOffered', 'tHandle', 'tAnswered'],
        filter: {
          type: 'or',
          predicates: [
            { dimension: 'userId', value: agent },
            { dimension: 'queueId', value: queue },
          ],
        },
      },
    ],
    [
      'agent metrics without columns in agg_user (agg_user_more) next to packed ones, by user and queue, hourly',
      { interval: DAY, granularity: 'PT1H', groupBy: ['userId', 'queueId'], metrics: ['tPark', 'tMonitoring', 'tHandle', 'nOffered'] },
    ],
    [
      'agent quarter hours (migration 0018): packed, agg_user_more and agg_queue metrics by user',
      { interval: DAY, granularity: 'PT15M', groupBy: ['userId'], metrics: ['tPark', 'tMonitoring', 'tHandle', 'tTalk', 'nOffered'] },
    ],
    [
      'one agent, every metric (none named), by half hour from its quarter hours',
      { interval: DAY, granularity: 'PT30M', filter: { type: 'and', predicates: [{ dimension: 'userId', value: agent }] } },
    ],
    [
      'one agent, every metric (none named), daily',
      { interval: DAY, granularity: 'P1D', filter: { type: 'and', predicates: [{ dimension: 'userId', value: agent }] } },
    ],
  ] as [string, AggregateQuery][]) {
    it(`answers as the reference does: ${name}`, async () => {
      const real = await queryOk(query);
      // The coarsest resolution the buckets align to: days, hours, or the quarter hours kept with the cube.
      const res = query.granularity === 'P1D' ? 1440 : ['PT15M', 'PT30M'].includes(query.granularity!) ? 15 : 60;
      expect(real.source).toBe(`rollup:agg_user@${res}`);
      const expected = aggregateObservations(observationsFromRecords(records), query, settings as never);
      const order = query.metrics ?? [...METRIC_INDEX.keys()];
      expect(canonicalize({ results: real.results }, order, query)).toEqual(canonicalize(expected, order, query));
    });
  }
});
