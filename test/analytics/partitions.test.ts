import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  analyticsStore,
  type Partition,
  parsePartitions,
  parseRetentionDays,
  readablePartitions,
} from '../../src/analytics/partitions/partitions';
import { Aggregation } from '../../src/analytics/query/aggregate';
import { prepareQuery } from '../../src/analytics/query/prepare';
import { aggregateQuerySchema } from '../../src/analytics/query/query.schema';
import { mapAtMost } from '../../src/analytics/partitions/fan-out';
import { readInto } from '../../src/analytics/query/query.store';
import { answerJson } from '../../src/analytics/query/results-json';
import { DEFAULT_SERVICE_LEVEL } from '../../src/analytics/settings/service-level.settings';
import { simulateConversations } from '../../scripts/simulator';
import { expectError, send } from '../helpers';
import {
  aggregateObservations,
  canonicalize,
  observationsFromRecords,
  type AggregateQuery,
  type AggregateResponse,
  type ConversationRecord,
  type Observation,
} from '../support/reference-aggregator';
import { conversation } from './builders';
import { ingest, ingestOk, queryOk, SERVICE_LEVEL } from './analytics-api';
import { CONVERSATION_ID_SQL } from '../../src/analytics/ingest/conversation-key';

/**
 * The analytics store over several D1 databases (vitest.config.ts, project `partitions`): P1, P2 and
 * P3 hold three days each of the last nine, P0 everything before 400 days ago (past the 365 days of
 * retention), gaps between and after. Nine days of simulated traffic go through the Worker's ingest;
 * every answer must be the one a single database holding everything gives: the reference aggregator's.
 */
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const store = analyticsStore(env);
const byName = (name: string) => store.partitions.find((p) => p.name === name)!;
const [P0, P1, P2, P3] = ['P0', 'P1', 'P2', 'P3'].map(byName) as [Partition, Partition, Partition, Partition];
const START = P1.start;
const END = P2.end + 3 * DAY;
const WHOLE = `${iso(START)}/${iso(END + DAY)}`;

let records: ConversationRecord[] = [];
let observations: Observation[] = [];
let settings: unknown;
let stored = 0;

async function ingestInBatches(all: ConversationRecord[]) {
  const sums = { observations: 0, duplicates: 0 };
  for (let i = 0; i < all.length; i += 1_000) {
    const r = await ingestOk(all.slice(i, i + 1_000));
    sums.observations += r.observations;
    sums.duplicates += r.duplicates;
  }
  return sums;
}

beforeAll(async () => {
  records = [...simulateConversations({ days: 9, conversations: 1_500, seed: 37, end: new Date(END) })] as ConversationRecord[];
  stored = (await ingestInBatches(records)).observations;
  observations = observationsFromRecords(records);
  settings = (await send('GET', SERVICE_LEVEL)).body;
});

const startOf = (r: ConversationRecord) => Date.parse(r.conversationStart);
const holds = (p: Partition, r: ConversationRecord) => p.start <= startOf(r) && startOf(r) < p.end;

async function ids(d1: D1Database): Promise<string[]> {
  const { results } = await d1.prepare(`SELECT ${CONVERSATION_ID_SQL} AS id FROM conversations ORDER BY id`).all<{ id: string }>();
  return results.map((r) => r.id);
}

/** The query through the Worker agrees with the reference aggregator; returns the answer's source header. */
async function agrees(query: AggregateQuery): Promise<string> {
  const real = await queryOk(query);
  const expected = aggregateObservations(observations, query, settings as never);
  const order = query.metrics;
  expect(canonicalize({ results: real.results }, order, query)).toEqual(canonicalize(expected, order, query));
  expect(expected.results.length).toBeGreaterThan(0);
  return real.source;
}

/** The partitions that hold an observation of `metrics` inside [start, end): each must be read. */
function contributing(start: number, end: number, metrics: string[]): string[] {
  const inside = new Set(
    observations.filter((o) => o.time >= start && o.time < end && metrics.includes(o.metric)).map((o) => o.dims.conversationId),
  );
  return [P1, P2, P3].filter((p) => records.some((r) => holds(p, r) && inside.has(r.conversationId))).map((p) => p.name);
}

const partitionsRead = (source: string) => source.split(' partitions=')[1]!.split(',').filter(Boolean);

describe('the configuration', () => {
  it('reads periods by binding, open ends included, in period order', () => {
    expect(parsePartitions('A2026H2:2026-07-01.., A2026H1:2026-01-01..2026-07-01, DB:..2026-01-01')).toEqual([
      { name: 'DB', start: -Infinity, end: Date.UTC(2026, 0, 1) },
      { name: 'A2026H1', start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 6, 1) },
      { name: 'A2026H2', start: Date.UTC(2026, 6, 1), end: Infinity },
    ]);
    expect(parsePartitions(undefined)).toEqual([{ name: 'DB', start: -Infinity, end: Infinity }]);
    expect(parsePartitions('A:2026-01-01T12:00:00+02:00..')).toEqual([{ name: 'A', start: Date.UTC(2026, 0, 1, 10), end: Infinity }]);
  });

  it('refuses what cannot be served, saying what to fix', () => {
    const refused: [string, RegExp][] = [
      ['A:2026-01-01..2026-07-01, B:2026-06-01..', /A \(2026-01-01\.\.2026-07-01\) and B \(2026-06-01\.\.\) overlap/],
      ['A, B:2026-01-01..', /overlap/],
      ['A:2026-13-01..', /"2026-13-01" is not a date/],
      ['A:2026-07-01..2026-01-01', /ends before it starts/],
      ['A:2026-07-01', /the period is START\.\.END/],
      ['A, A:..2020-01-01', /names the binding A twice/],
      ['1A', /expected BINDING or BINDING:START\.\.END/],
    ];
    for (const [text, message] of refused) expect(() => parsePartitions(text), text).toThrow(message);
    expect(() => analyticsStore({ ...env, ANALYTICS_PARTITIONS: 'DB:..2026-01-01, NOPE:2026-01-01..' } as unknown as Env)).toThrow(
      /names NOPE, which is not a D1 binding of this Worker/,
    );
    expect(parseRetentionDays('')).toBeUndefined();
    expect(() => parseRetentionDays('0')).toThrow(/positive whole number of days/);
    expect(() => parseRetentionDays('1.5')).toThrow(/positive whole number of days/);
  });
});

describe('ingest routes each conversation by its start', () => {
  it('the simulated days span all three partitions', () => {
    for (const p of [P1, P2, P3]) expect(records.filter((r) => holds(p, r)).length).toBeGreaterThan(100);
    expect(records.every((r) => holds(P1, r) || holds(P2, r) || holds(P3, r))).toBe(true);
  });

  it('each partition holds exactly the conversations that start in its period, and DB and P0 none', async () => {
    for (const p of [P1, P2, P3]) {
      expect(await ids(p.d1)).toEqual(
        records
          .filter((r) => holds(p, r))
          .map((r) => r.conversationId)
          .sort(),
      );
    }
    expect(await ids(env.DB)).toEqual([]);
    expect(await env.DB.prepare('SELECT count(*) AS n FROM agg_queue').first('n')).toBe(0);
    expect(await ids(P0.d1)).toEqual([]);
  });

  it('is idempotent across partitions: a re-send stores nothing and every observation is a duplicate', async () => {
    expect(await ingestInBatches(records)).toEqual({ observations: 0, duplicates: stored });
    expect(await agrees({ interval: WHOLE, granularity: 'P1D', groupBy: ['queueId'], metrics: ['nOffered', 'tHandle'] })).toMatch(
      /^rollup:agg_queue@1440 /,
    );
  });

  it('refuses, with 400 naming each record, conversations starting in a gap or in a retired partition; stores nothing', async () => {
    const at = (ms: number) => {
      const t = iso(ms);
      return conversation({
        start: t,
        participants: [{ purpose: 'acd', sessions: [{ segments: [{ start: t, queueId: 'q-gap' }], metrics: [['nOffered', 1, t]] }] }],
      });
    };
    const fine = at(P2.start + DAY);
    const afterAll = at(P3.end + DAY);
    const between = at(P0.end + DAY);
    const retired = at(P0.end - 30 * DAY);
    const res = await ingest([fine, afterAll, between, retired]);
    expectError(res, 400, 'invalid.value', 'conversations[1].conversationStart');
    expect(res.body.message).toMatch(
      /^3 of 4 conversations start outside the periods this service keeps; nothing of this request was stored/,
    );
    expect(res.body.errors.map((e: { entityId: string }) => e.entityId)).toEqual([
      afterAll.conversationId,
      between.conversationId,
      retired.conversationId,
    ]);
    expect(res.body.errors[0].message).toMatch(/no analytics partition holds that period/);
    expect(res.body.errors[2].message).toMatch(/partition P0 .* older than the retention of 365 days/);
    expect(await ids(P2.d1)).not.toContain(fine.conversationId);
  });
});

describe('queries crossing all three partitions agree with one database holding everything', () => {
  it('from agg_media, every metric, daily', async () => {
    expect(await agrees({ interval: WHOLE, granularity: 'P1D' })).toBe('rollup:agg_media@1440 partitions=P1,P2,P3');
  });

  it('from agg_queue, by queue and direction, in 12-hour buckets', async () => {
    const source = await agrees({ interval: WHOLE, granularity: 'PT12H', groupBy: ['queueId', 'direction'] });
    expect(source).toBe('rollup:agg_queue@60 partitions=P1,P2,P3');
  });

  it('from agg_user, by user with a pushed-down mediaType', async () => {
    const source = await agrees({
      interval: WHOLE,
      granularity: 'P1D',
      groupBy: ['userId', 'queueId'],
      metrics: ['tHandle', 'tTalk', 'nOutbound', 'tAnswered', 'oServiceLevel'],
      filter: { type: 'and', predicates: [{ dimension: 'mediaType', value: 'voice' }] },
    });
    expect(source).toBe('rollup:agg_user@1440 partitions=P1,P2,P3');
  });

  /** A query of the dimension cube (wrapUpCode alone, by day). */
  const BY_WRAP_UP_CODE = { interval: WHOLE, granularity: 'P1D', groupBy: ['wrapUpCode'], metrics: ['tHandle', 'tAcw', 'nConnected'] };

  it('from the dimension cube, by wrap-up code', async () => {
    const source = await agrees(BY_WRAP_UP_CODE);
    expect(source).toBe('rollup:agg_dim@1440 partitions=P1,P2,P3');
  });

  it('from the dimension cube of two partitions and the raw rows of one whose cube lacks earlier conversations', async () => {
    // Marked as migration 0016 marks a database that held conversations before it (its cube is whole
    // here, so the answer must not change, only where it comes from).
    await P2.d1.prepare(`INSERT INTO meta (key, value) VALUES ('cube:incomplete', 1)`).run();
    try {
      const source = await agrees(BY_WRAP_UP_CODE);
      expect(source).toBe('rollup:agg_dim@1440 + raw (the dimension cube of P2 lacks earlier conversations) partitions=P1,P2,P3');
    } finally {
      await P2.d1.prepare(`DELETE FROM meta WHERE key = 'cube:incomplete'`).run();
    }
  });

  it('from the raw rows, by wrap-up code and agent (no rollup or projection keeps both)', async () => {
    const source = await agrees({
      interval: WHOLE,
      granularity: 'P1D',
      groupBy: ['wrapUpCode', 'userId'],
      metrics: ['tHandle', 'tAcw', 'nConnected'],
    });
    expect(source).toBe('raw partitions=P1,P2,P3');
  });

  it('from the raw rows, at odd minutes, with a view and a metric predicate', async () => {
    const source = await agrees({
      interval: `${iso(START + 7 * 60_000)}/${iso(END + 7 * 60_000)}`,
      granularity: 'P3D',
      groupBy: ['queueId'],
      metrics: ['tHandle', 'tTalk'],
      filter: { type: 'and', predicates: [{ type: 'metric', metric: 'tTalk', range: { gte: 60_000 } }] },
      views: [{ target: 'tHandle', name: 'over five minutes', function: 'rangeBound', range: { gte: 300_000 } }],
    } as AggregateQuery);
    expect(source).toBe('raw partitions=P1,P2,P3');
  });

  it('an interval inside one period reads the partitions whose conversations reach into it, and no other', async () => {
    const metrics = ['tHandle', 'nOffered'];
    // From P2's start: P1's conversations still going then reach into it.
    expect(contributing(P2.start, P2.start + DAY, metrics)).toEqual(['P1', 'P2']);
    for (const [start, end] of [
      [P2.start, P2.start + DAY],
      [P3.start + DAY, END],
    ] as const) {
      const interval = `${iso(start)}/${iso(end)}`;
      const wanted = contributing(start, end, metrics);
      // Rollups: the partitions holding cells there, exactly.
      expect(partitionsRead(await agrees({ interval, granularity: 'PT1H', groupBy: ['queueId'], metrics }))).toEqual(wanted);
      // Raw rows: those whose span classes can reach the interval, a superset; never one starting after it
      // (the simulator emits after conversationStart).
      const views = [{ target: 'tHandle', name: 'long', function: 'rangeBound', range: { gte: 300_000 } }];
      const scanned = partitionsRead(
        await agrees({ interval, granularity: 'PT1H', groupBy: ['queueId'], metrics, views } as AggregateQuery),
      );
      for (const name of wanted) expect(scanned).toContain(name);
      for (const p of [P1, P2, P3]) if (p.start >= end) expect(scanned).not.toContain(p.name);
    }
  });

  it('an interval no partition reaches reads none and answers no groups', async () => {
    const res = await queryOk({ interval: `${iso(P0.end + DAY)}/${iso(P0.end + 2 * DAY)}` });
    expect(res.results).toEqual([]);
    expect(res.source).toBe('rollup:agg_media@1440 partitions=');
  });

  it('bounds raw reads for the whole query, not per partition', async () => {
    const query = aggregateQuerySchema.parse({ interval: WHOLE, granularity: 'P1D', groupBy: ['wrapUpCode', 'userId'] });
    const { spec, read } = prepareQuery(query);
    const largest = Math.max(...(await Promise.all([P1, P2, P3].map(async (p) => (await ids(p.d1)).length))));
    const live = readablePartitions(store, Date.now());
    const within = await readInto(live, { ...read, maxRawConversations: records.length }, new Aggregation(spec));
    expect(within.conversations).toBe(records.length);
    expect(largest).toBeLessThan(records.length - 1);
    await expect(readInto(live, { ...read, maxRawConversations: records.length - 1 }, new Aggregation(spec))).rejects.toThrow(
      /more than 1,499 conversations/,
    );
  });

  it('bounds rollup reads for the whole query: partitions past an equal share are read again with what the others left', async () => {
    // All of P1 and P2, one day of P3: the cells are not spread evenly.
    const query = aggregateQuerySchema.parse({
      interval: `${iso(P1.start)}/${iso(P2.end + DAY)}`,
      granularity: 'PT1H',
      groupBy: ['queueId'],
    });
    const { spec, read } = prepareQuery(query);
    const live = readablePartitions(store, Date.now());
    const text = async (a: Aggregation) => new TextDecoder().decode(await answerJson(a, DEFAULT_SERVICE_LEVEL, (b) => `bucket ${b}`));
    const each = await Promise.all(live.map(async (p) => (await readInto([p], read, new Aggregation(spec))).cellChars));
    const total = each.reduce((n, c) => n + c, 0);
    expect(Math.min(...each)).toBeGreaterThan(0);
    expect(Math.max(...each)).toBeGreaterThan(Math.floor(total / live.length));

    const whole = new Aggregation(spec);
    expect((await readInto(live, read, whole)).cellChars).toBe(total);
    const exact = new Aggregation(spec);
    expect((await readInto(live, { ...read, maxRollupReadBytes: total }, exact)).cellChars).toBe(total);
    expect(await text(exact)).toBe(await text(whole));
    await expect(readInto(live, { ...read, maxRollupReadBytes: total - 1 }, new Aggregation(spec))).rejects.toThrow(
      /of stored cells, more than the/,
    );
    // Past what one read may bring without the isolate's turn: the turn first, then the partitions past their share.
    let turns = 0;
    const alone = new Aggregation(spec);
    await readInto(live, { ...read, rollupReadAloneBytes: total - 1 }, alone, { takeTurn: async () => void turns++ });
    expect(turns).toBe(1);
    expect(await text(alone)).toBe(await text(whole));
    await readInto(live, { ...read, rollupReadAloneBytes: total }, new Aggregation(spec), { takeTurn: async () => void turns++ });
    expect(turns).toBe(1);
  });

  it('a failed partition read starts no further one and is what the query throws', async () => {
    const started: number[] = [];
    const read = (n: number) => {
      started.push(n);
      return n === 2 ? Promise.reject(new Error(`partition ${n} failed`)) : new Promise<number>((r) => setTimeout(() => r(n), 5));
    };
    await expect(mapAtMost([1, 2, 3, 4, 5, 6], 2, read)).rejects.toThrow('partition 2 failed');
    expect(started).toEqual([1, 2]);
    expect(await mapAtMost([3, 1, 2], 2, async (n) => n * 10)).toEqual([30, 10, 20]);
  });

  it('reads the raw rows of at most partitionsAtOnce partitions at once, rollups of all at once, with the same answer', async () => {
    // The statements each partition runs, through a D1 that forwards to its real one: a partition is busy
    // while one of its counted statements (or batches holding one) is unfinished. `counts` picks them.
    let counts: (sql: string) => boolean = () => true;
    let busy = 0;
    let most = 0;
    const open = new Map<string, number>();
    const track = async <T>(name: string, counted: boolean, run: () => Promise<T>): Promise<T> => {
      if (!counted) return run();
      open.set(name, (open.get(name) ?? 0) + 1);
      if (open.get(name) === 1) most = Math.max(most, ++busy);
      try {
        return await run();
      } finally {
        open.set(name, open.get(name)! - 1);
        if (open.get(name) === 0) busy--;
      }
    };
    const sqlOf = new WeakMap<object, string>();
    const statement = (name: string, sql: string, s: D1PreparedStatement): D1PreparedStatement => {
      const proxy: D1PreparedStatement = new Proxy(s, {
        get(target, key) {
          if (key === 'bind') return (...values: unknown[]) => statement(name, sql, target.bind(...values));
          if (key === 'all' || key === 'raw' || key === 'first' || key === 'run')
            return (...args: unknown[]) => track(name, counts(sql), () => (target[key] as (...a: unknown[]) => Promise<unknown>)(...args));
          const value = Reflect.get(target, key);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      sqlOf.set(proxy, sql);
      return proxy;
    };
    const tracked = (p: Partition): Partition => ({
      ...p,
      d1: new Proxy(p.d1, {
        get(target, key) {
          if (key === 'prepare') return (sql: string) => statement(p.name, sql, target.prepare(sql));
          if (key === 'batch')
            return (list: D1PreparedStatement[]) =>
              track(
                p.name,
                list.some((st) => counts(sqlOf.get(st) ?? '')),
                () => target.batch(list),
              );
          const value = Reflect.get(target, key);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
    });
    const live = readablePartitions(store, Date.now());
    expect(live.length).toBe(3);
    const read = async (body: AggregateQuery, atOnce: number) => {
      const { spec, read } = prepareQuery(aggregateQuerySchema.parse(body));
      const aggregation = new Aggregation(spec);
      busy = 0;
      most = 0;
      const result = await readInto(live.map(tracked), { ...read, partitionsAtOnce: atOnce }, aggregation);
      return {
        source: result.source,
        text: new TextDecoder().decode(await answerJson(aggregation, DEFAULT_SERVICE_LEVEL, (b) => `bucket ${b}`)),
      };
    };

    // Raw pages: at most atOnce partitions reading them at once, and the bound is reached.
    counts = (sql) => /ORDER BY first_emit, rowid LIMIT/.test(sql);
    const views = [{ target: 'tHandle', name: 'long', function: 'rangeBound', range: { gte: 300_000 } }];
    const raw = { interval: WHOLE, granularity: 'P1D', groupBy: ['queueId'], metrics: ['tHandle'], views } as AggregateQuery;
    const answers: string[] = [];
    for (const atOnce of [1, 2, 3]) {
      const { source, text } = await read(raw, atOnce);
      expect(source.startsWith('raw'), source).toBe(true);
      expect(most, `raw pages at ${atOnce}`).toBe(atOnce);
      answers.push(text);
    }
    expect(answers[0]!.length).toBeGreaterThan(100);
    expect(answers[1]).toBe(answers[0]);
    expect(answers[2]).toBe(answers[0]);

    // A rollup read asks every partition at once (one round trip), whatever the bound.
    counts = () => true;
    const rollup = { interval: WHOLE, granularity: 'P1D', groupBy: ['queueId'], metrics: ['nOffered', 'tHandle'] } as AggregateQuery;
    const { source, text } = await read(rollup, 1);
    expect(source.startsWith('rollup:'), source).toBe(true);
    expect(most).toBe(3);
    expect(canonicalize(JSON.parse(text) as AggregateResponse, rollup.metrics, rollup).results.length).toBeGreaterThan(0);
  });

  it('an aggregate job fans out as the query does', async () => {
    const query: AggregateQuery = {
      interval: WHOLE,
      granularity: 'P1D',
      groupBy: ['queueId'],
      metrics: ['nOffered', 'tAnswered', 'tHandle', 'oServiceLevel'],
    };
    const jobs = '/api/v2/analytics/conversations/aggregates/jobs';
    const submitted = await send('POST', jobs, { json: query });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    const jobId = submitted.body.jobId as string;
    let state = 'QUEUED';
    for (let i = 0; i < 300 && (state === 'QUEUED' || state === 'PENDING'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      state = (await send('GET', `${jobs}/${jobId}`)).body.state;
    }
    expect(state).toBe('FULFILLED');
    const results: AggregateResponse['results'] = [];
    let cursor: string | undefined;
    do {
      const page = await send('GET', `${jobs}/${jobId}/results${cursor ? `?cursor=${cursor}` : ''}`);
      results.push(...page.body.results);
      cursor = page.body.cursor;
    } while (cursor !== undefined);
    // A group's buckets may come in several pages (units split by time): one entry per group again.
    const byGroup = new Map<string, AggregateResponse['results'][number]>();
    for (const r of results) {
      const key = JSON.stringify(Object.entries(r.group).sort());
      const seen = byGroup.get(key);
      if (seen) seen.data.push(...r.data);
      else byGroup.set(key, { group: r.group, data: [...r.data] });
    }
    const expected = aggregateObservations(observations, query, settings as never);
    expect(canonicalize({ results: [...byGroup.values()] }, query.metrics, query)).toEqual(canonicalize(expected, query.metrics, query));
  });
});
