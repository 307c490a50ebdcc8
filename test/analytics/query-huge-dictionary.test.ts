import { env } from 'cloudflare:test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../src/analytics/catalog';
import { simulateConversations } from '../../scripts/simulator';
import { send } from '../helpers';
import {
  aggregateObservations,
  canonicalize,
  observationsFromRecords,
  type AggregateQuery,
  type ConversationRecord,
  type Observation,
} from '../support/reference-aggregator';
import { ingestOk, queryOk, SERVICE_LEVEL } from './analytics-api';
import { Aggregation } from '../../src/analytics/query/aggregate';
import { prepareQuery } from '../../src/analytics/query/prepare';
import { aggregateQuerySchema } from '../../src/analytics/query/query.schema';
import { readInto } from '../../src/analytics/query/query.store';
import { QueryTooLarge } from '../../src/analytics/query/too-large';

/**
 * A tenant with so many queues that one packed value of the rollup reader (the dictionary of the
 * returned dimensions, or a bucket's cells) is longer than SQLite allows (D1: 2 MB; SQLITE_TOOBIG):
 * the reader falls back to one row per cell with names joined from dim_values, and the answer is
 * still the reference aggregator's, not an error.
 */
const END = Date.parse('2012-03-20T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
/** 200,000 queue names of ~50 characters: ~12 MB as a JSON object, past local D1's limit too. */
const EXTRA_QUEUES = 200_000;
const PREFIX = 'huge-dictionary-queue-';

let observations: Observation[] = [];
let settings: unknown;

beforeAll(async () => {
  const records = [...simulateConversations({ days: 1, conversations: 300, seed: 77, end: new Date(END) })] as ConversationRecord[];
  await ingestOk(records);
  observations = observationsFromRecords(records);
  settings = (await send('GET', SERVICE_LEVEL)).body;
  // Queues known to the dictionary with no cells in this interval: only the dictionary grows.
  await env.DB.prepare(
    `INSERT INTO dim_values (dim, value)
     WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${EXTRA_QUEUES})
     SELECT 'queueId', printf('${PREFIX}%08d-0000-4000-8000-000000000000', i) FROM s`,
  ).run();
  // The same for a dimension of the dimension cube, multi-valued: its dictionary values are lists.
  await env.DB.prepare(
    `INSERT INTO dim_values (dim, value)
     WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${EXTRA_QUEUES})
     SELECT 'divisionId', printf('["${PREFIX}%08d-0000-4000-8000-000000000000"]', i) FROM s`,
  ).run();
});

afterAll(async () => {
  await env.DB.prepare(`DELETE FROM dim_values WHERE dim IN ('queueId', 'divisionId') AND value LIKE '%${PREFIX}%'`).run();
});

describe('a dictionary too large for one SQLite value', () => {
  it('is too large: the packed statement would fail', async () => {
    const size = await env.DB.prepare(`SELECT sum(length(value) + 12) AS n FROM dim_values WHERE dim = 'queueId'`).first<number>('n');
    expect(size).toBeGreaterThan(5_000_000);
  });

  for (const [name, query, source] of [
    [
      'grouped by queue, hourly',
      { interval: `${iso(END - 86_400_000)}/${iso(END)}`, granularity: 'PT1H', groupBy: ['queueId'] },
      'rollup:agg_queue@60',
    ],
    [
      'grouped by queue and user in PT12H buckets (cells added up in SQL)',
      {
        interval: `${iso(END - 86_400_000)}/${iso(END)}`,
        granularity: 'PT12H',
        groupBy: ['queueId', 'userId'],
        metrics: ['tHandle', 'nOffered', 'oServiceLevel'],
      },
      'rollup:agg_user@60',
    ],
    [
      'grouped by queue and user, hourly (packed agg_user rows unpivoted in SQL)',
      {
        interval: `${iso(END - 86_400_000)}/${iso(END)}`,
        granularity: 'PT1H',
        groupBy: ['queueId', 'userId'],
        metrics: ['tTalk', 'nOffered', 'tHandle'],
      },
      'rollup:agg_user@60',
    ],
    [
      'grouped by division, daily (the dimension cube; lists read back from the dictionary)',
      { interval: `${iso(END - 86_400_000)}/${iso(END)}`, granularity: 'P1D', groupBy: ['divisionId'], metrics: ['tHandle', 'nOffered'] },
      'rollup:agg_dim@1440',
    ],
    [
      'grouped by division flattened, hourly, with its absent cells (the dimension cube)',
      {
        interval: `${iso(END - 86_400_000)}/${iso(END)}`,
        granularity: 'PT1H',
        groupBy: ['divisionId'],
        flattenMultivaluedDimensions: true,
        metrics: ['tTalk', 'nConnected', 'tIvr'],
      },
      'rollup:agg_dim@60',
    ],
  ] as [string, AggregateQuery, string][]) {
    it(`still answers exactly: ${name}`, async () => {
      const real = await queryOk(query);
      expect(real.source).toBe(source);
      const expected = aggregateObservations(observations, query, settings as never);
      expect(expected.results.length).toBeGreaterThan(0);
      const order = query.metrics ?? METRIC_NAMES;
      expect(canonicalize({ results: real.results }, order, query)).toEqual(canonicalize(expected, order, query));
    });
  }

  it('the fallback is bounded as the packed read is: a row past maxRollupReadBytes / 40 refuses it, having added nothing', async () => {
    const body = { interval: `${iso(END - 86_400_000)}/${iso(END)}`, granularity: 'PT1H', groupBy: ['queueId'] };
    const { spec, read } = prepareQuery(aggregateQuerySchema.parse(body));
    const whole = new Aggregation(spec);
    // One row a cell, counted as 40 characters of the bound.
    const chars = (await readInto(env.DB, read, whole)).cellChars;
    expect(chars % 40).toBe(0);
    expect(chars / 40).toBeGreaterThan(100);
    const exact = new Aggregation(spec);
    await readInto(env.DB, { ...read, maxRollupReadBytes: chars }, exact);
    expect(exact.entries).toBe(whole.entries);
    const short = new Aggregation(spec);
    const err = await readInto(env.DB, { ...read, maxRollupReadBytes: chars - 1 }, short).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueryTooLarge);
    expect(short.entries).toBe(0);
  });
});
