import { env } from 'cloudflare:test';
import { exports } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../src/analytics/catalog';
import { alignedTo } from '../../src/analytics/query/interval';
import { prepareQuery } from '../../src/analytics/query/prepare';
import { aggregateQuerySchema } from '../../src/analytics/query/query.schema';
import type { ReadSpec } from '../../src/analytics/query/read-spec';
import { rollupQuery } from '../../src/analytics/query/rollup-sql';
import { pickRollup } from '../../src/analytics/rollups';
import { simulateConversations } from '../../scripts/simulator';
import { ADMIN_TOKEN, BASE, send } from '../helpers';
import {
  aggregateObservations,
  canonicalize,
  observationsFromRecords,
  type AggregateQuery,
  type ConversationRecord,
  type Observation,
} from '../support/reference-aggregator';
import { conversation } from './builders';
import { count, ingestOk, QUERY, queryOk, SERVICE_LEVEL, timer } from './analytics-api';

/**
 * The rollup read path (query.store.ts: cells packed as JSON per slot, dimension ids turned into
 * values through a dictionary read by the same statement, pushed-down filters, slot lists) and the
 * answer written as text (aggregate.ts), each checked against the reference aggregator or by hand.
 */
const END = Date.parse('2013-07-09T00:00:00.000Z');
const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

// Values a JSON writer or a dictionary could mangle: quotes, backslashes, control and separator
// characters, non-BMP text, and a value that looks like a number.
const ODD_QUEUE = 'q "quoted" \\ back\u0001\u2028 😀';
const ODD_USER = '12345';
const ODD_DAY = '2013-07-01';

let records: ConversationRecord[] = [];
let observations: Observation[] = [];
let settings: unknown;

async function raw(body: unknown): Promise<{ text: string; source: string }> {
  const res = await exports.default.fetch(
    new Request(BASE + QUERY, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
  expect(res.status).toBe(200);
  expect(res.headers.get('Content-Type')).toBe('application/json');
  return { text: await res.text(), source: res.headers.get('Switchboard-Query-Source') ?? '' };
}

beforeAll(async () => {
  records = [...simulateConversations({ days: 2, conversations: 600, seed: 11, end: new Date(END) })] as ConversationRecord[];
  await ingestOk(records);
  observations = observationsFromRecords(records);
  settings = (await send('GET', SERVICE_LEVEL)).body;
  const t = (hms: string) => `${ODD_DAY}T${hms}Z`;
  await ingestOk([
    conversation({
      start: t('10:00:00.000'),
      participants: [
        {
          purpose: 'acd',
          sessions: [{ segments: [{ start: t('10:00:00.000'), queueId: ODD_QUEUE }], metrics: [['nOffered', 1, t('10:00:00.000')]] }],
        },
        {
          purpose: 'agent',
          userId: ODD_USER,
          sessions: [
            {
              segments: [{ start: t('10:00:10.000'), queueId: ODD_QUEUE }],
              metrics: [
                ['tAnswered', 10000, t('10:00:10.000')],
                ['tHandle', 70000, t('10:20:00.000')],
              ],
            },
          ],
        },
      ],
    }),
    conversation({
      start: t('10:40:00.000'),
      participants: [
        {
          purpose: 'agent',
          userId: ODD_USER,
          sessions: [{ segments: [{ start: t('10:40:00.000'), queueId: ODD_QUEUE }], metrics: [['tHandle', 30000, t('10:50:00.000')]] }],
        },
      ],
    }),
  ]);
});

async function agrees(query: AggregateQuery, source: string): Promise<number> {
  const real = await queryOk(query);
  expect(real.source).toBe(source);
  const expected = aggregateObservations(observations, query, settings as never);
  const order = query.metrics ?? METRIC_NAMES;
  expect(canonicalize({ results: real.results }, order, query)).toEqual(canonicalize(expected, order, query));
  return expected.results.length;
}

const pick = (dim: string) =>
  observations.find((o) => o.dims[dim as keyof typeof o.dims] !== undefined)!.dims[dim as keyof Observation['dims']] as string;

describe('the rollup read path agrees with the reference aggregator', () => {
  const day = `${iso(END - DAY_MS)}/${iso(END)}`;
  const twoDays = `${iso(END - 2 * DAY_MS)}/${iso(END)}`;

  it('mediaType and direction pushed down with a metric list (slots listed, both dimensions fixed)', async () => {
    const n = await agrees(
      {
        interval: day,
        granularity: 'PT12H',
        groupBy: ['queueId', 'userId'],
        metrics: ['nOutbound', 'nOutboundAttempted', 'nOutboundConnected', 'tContacting', 'tDialing', 'tTalk', 'tAcw', 'tHandle'],
        filter: {
          type: 'and',
          predicates: [
            { dimension: 'mediaType', value: 'voice' },
            { dimension: 'direction', value: 'outbound' },
          ],
        },
      },
      'rollup:agg_user@60',
    );
    expect(n).toBeGreaterThan(0);
  });

  it('a userId pushed down (the user index, no slot list), grouped by a dimension it does not fix', async () => {
    const n = await agrees(
      {
        interval: twoDays,
        granularity: 'PT6H',
        groupBy: ['queueId'],
        filter: { type: 'and', predicates: [{ dimension: 'userId', value: pick('userId') }] },
      },
      'rollup:agg_user@60',
    );
    expect(n).toBeGreaterThan(0);
  });

  it("a userId pushed down in one-slot buckets (the Worker adds nothing up; SQL sorts only that user's cells)", async () => {
    const n = await agrees(
      {
        interval: day,
        granularity: 'PT1H',
        metrics: ['tHandle', 'tTalk', 'nOutbound'],
        filter: { type: 'and', predicates: [{ dimension: 'userId', value: pick('userId') }] },
      },
      'rollup:agg_user@60',
    );
    expect(n).toBeGreaterThan(0);
  });

  it('local days added up in SQL (P1D in New York, from hourly cells)', async () => {
    const n = await agrees(
      {
        interval: '2013-07-07T04:00:00.000Z/2013-07-09T04:00:00.000Z',
        granularity: 'P1D',
        timeZone: 'America/New_York',
        groupBy: ['userId'],
        metrics: ['tHandle', 'oServiceLevel'],
      },
      'rollup:agg_user@60',
    );
    expect(n).toBeGreaterThan(0);
  });

  it('a queueId pushed down and grouped by too, every metric', async () => {
    const n = await agrees(
      {
        interval: twoDays,
        granularity: 'P1D',
        groupBy: ['queueId', 'direction'],
        filter: { type: 'and', predicates: [{ dimension: 'queueId', value: pick('queueId') }] },
      },
      'rollup:agg_queue@1440',
    );
    expect(n).toBeGreaterThan(0);
  });

  it('two quarter-hour slots per bucket (PT30M by queue from agg_queue@15), every metric named', async () => {
    const n = await agrees(
      { interval: day, granularity: 'PT30M', groupBy: ['queueId'], metrics: [...METRIC_NAMES] },
      'rollup:agg_queue@15',
    );
    expect(n).toBeGreaterThan(0);
  });

  it('half hours with no other dimension come from agg_media@30, every metric named', async () => {
    const n = await agrees({ interval: day, granularity: 'PT30M', metrics: [...METRIC_NAMES] }, 'rollup:agg_media@30');
    expect(n).toBeGreaterThan(0);
  });

  it('half hours of a zone 45 minutes off UTC (Kathmandu) are not half-hour aligned: agg_media@15', async () => {
    const n = await agrees(
      {
        interval: '2013-07-07T18:15:00.000Z/2013-07-08T18:15:00.000Z',
        granularity: 'PT30M',
        timeZone: 'Asia/Kathmandu',
        metrics: ['tHandle', 'nOffered', 'oServiceLevel'],
      },
      'rollup:agg_media@15',
    );
    expect(n).toBeGreaterThan(0);
  });

  it("an `or` clause of `matches` narrows the cells SQL reads, and the answer stays the reference's (bench query h's shape)", async () => {
    const query: AggregateQuery = {
      interval: twoDays,
      granularity: 'PT1H',
      groupBy: ['queueId'],
      metrics: ['tAnswered', 'tHandle', 'tAcw'],
      filter: {
        type: 'and',
        predicates: [{ dimension: 'usedRouting', value: pick('usedRouting') }],
        clauses: [
          {
            type: 'or',
            predicates: [
              { dimension: 'teamId', value: pick('teamId') },
              { dimension: 'wrapUpCode', value: pick('wrapUpCode') },
            ],
          },
        ],
      },
    };
    expect(await agrees(query, 'rollup:agg_proj@60')).toBeGreaterThan(0);
    // The cells of the same read with and without the clause in SQL, counted in D1.
    const { read } = prepareQuery(aggregateQuerySchema.parse(query));
    expect(read.anyOf).toHaveLength(1);
    const picked = pickRollup(read.dimensions, (m) => alignedTo(read.plan, m * 60_000))!;
    const cellsRead = async (spec: ReadSpec) => {
      const { scanned, params } = rollupQuery(spec, picked.rollup, picked.res);
      let n = 0;
      for (const from of scanned) {
        const named = [...from.matchAll(/\?(\d+)/g)].map((m) => params[Number(m[1]) - 1]);
        n += (await env.DB.prepare(`SELECT count(*) AS n FROM ${from.replace(/\?\d+/g, '?')}`)
          .bind(...named)
          .first<number>('n'))!;
      }
      return n;
    };
    const narrowed = await cellsRead(read);
    const all = await cellsRead({ ...read, anyOf: [] });
    expect(narrowed).toBeGreaterThan(0);
    expect(narrowed).toBeLessThan(all);
  });

  it("many `matches` stay within D1's bound parameters: one pair per distinct (dimension, values), clauses past the budget judged in the Worker", async () => {
    const queues = [...new Set(observations.map((o) => o.dims.queueId).filter((q): q is string => typeof q === 'string'))];
    const q = (value: string) => ({ dimension: 'queueId' as const, value });
    const base = { interval: twoDays, groupBy: ['queueId'] as AggregateQuery['groupBy'], metrics: ['nOffered', 'tHandle'] };
    // 100 times the same value, and two values no single-valued dimension has at once.
    expect(
      await agrees(
        { ...base, filter: { type: 'and', predicates: Array.from({ length: 100 }, () => q(queues[0]!)) } },
        'rollup:agg_queue@1440',
      ),
    ).toBe(1);
    expect(await agrees({ ...base, filter: { type: 'and', predicates: [q(queues[0]!), q(queues[1]!)] } }, 'rollup:agg_queue@1440')).toBe(0);
    // 100 values in one disjunction (one JSON parameter), and 45 clauses of two dimensions each.
    const many = Array.from({ length: 100 }, (_, i) => q(i % 2 === 0 ? queues[i % queues.length]! : `no-such-queue-${i}`));
    expect(await agrees({ ...base, filter: { type: 'or', predicates: many } }, 'rollup:agg_queue@1440')).toBeGreaterThan(1);
    const clauses = Array.from({ length: 45 }, (_, i) => ({
      type: 'or' as const,
      predicates: [q(`no-such-queue-${i}`), { dimension: 'direction' as const, value: 'inbound' }],
    }));
    expect(await agrees({ ...base, filter: { type: 'and', predicates: [], clauses } }, 'rollup:agg_queue@1440')).toBeGreaterThan(1);
  });

  it('a pushed-down value no cell has answers no groups', async () => {
    const res = await queryOk({ interval: day, filter: { type: 'and', predicates: [{ dimension: 'queueId', value: 'no-such-queue' }] } });
    expect(res.results).toEqual([]);
    expect(res.source).toBe('rollup:agg_queue@1440');
  });
});

describe('the answer as text', () => {
  const interval = `${ODD_DAY}T00:00:00.000Z/${ODD_DAY}T12:00:00.000Z`;
  const expected = {
    results: [
      {
        group: { mediaType: 'voice', queueId: ODD_QUEUE, userId: ODD_USER },
        data: [
          {
            interval,
            metrics: [
              { metric: 'tAnswered', stats: timer(10000) },
              { metric: 'tHandle', stats: timer(70000, 30000) },
            ],
          },
        ],
      },
      { group: { mediaType: 'voice', queueId: ODD_QUEUE }, data: [{ interval, metrics: [{ metric: 'nOffered', stats: count(1) }] }] },
    ],
  };

  it('keeps odd dimension values exact and is what JSON.stringify would write, from the rollups', async () => {
    const query = { interval, groupBy: ['queueId', 'userId'], metrics: ['tAnswered', 'tHandle', 'nOffered'] };
    const { text, source } = await raw(query);
    expect(source).toBe('rollup:agg_user@60');
    // Groups without userId sort before those with it.
    expect(JSON.parse(text)).toEqual({ results: [expected.results[1], expected.results[0]] });
    expect(text).toBe(JSON.stringify(JSON.parse(text)));
  });

  it('and from the raw rows', async () => {
    // An interval that starts at an odd minute cannot come from a rollup.
    const odd = `${ODD_DAY}T00:01:00.000Z/${ODD_DAY}T12:01:00.000Z`;
    const { text, source } = await raw({ interval: odd, groupBy: ['queueId', 'userId'], metrics: ['tAnswered', 'tHandle', 'nOffered'] });
    expect(source).toBe('raw');
    const withInterval = (r: (typeof expected.results)[number]) => ({ ...r, data: r.data.map((d) => ({ ...d, interval: odd })) });
    expect(JSON.parse(text)).toEqual({ results: [withInterval(expected.results[1]!), withInterval(expected.results[0]!)] });
    expect(text).toBe(JSON.stringify(JSON.parse(text)));
  });

  it('writes views and service levels in the same form', async () => {
    const { text } = await raw({
      interval: `${ODD_DAY}T00:00:00.000Z/${ODD_DAY}T12:00:00.000Z`,
      groupBy: ['queueId'],
      metrics: ['oServiceLevel', 'tHandle'],
      views: [{ target: 'tHandle', name: 'under a minute', function: 'rangeBound', range: { lt: 60000 } }],
    });
    const body = JSON.parse(text);
    expect(body.results).toEqual([
      {
        group: { mediaType: 'voice', queueId: ODD_QUEUE },
        data: [
          {
            interval,
            metrics: [
              { metric: 'oServiceLevel', stats: { ratio: 1, numerator: 1, denominator: 1, target: 0.8 } },
              { metric: 'tHandle', stats: timer(70000, 30000) },
            ],
            views: [{ name: 'under a minute', stats: timer(30000) }],
          },
        ],
      },
    ]);
    expect(text).toBe(JSON.stringify(body));
  });
});
