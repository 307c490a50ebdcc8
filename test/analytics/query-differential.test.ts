import { beforeAll, describe, expect, it } from 'vitest';
import {
  DIMENSION_INDEX,
  FILTER_DIMENSIONS,
  GROUP_BY_DIMENSIONS,
  METRIC_NAMES,
  MULTI_VALUED,
  NUMERIC,
  type Dimension,
} from '../../src/analytics/catalog';
import { CUBE_DIMENSIONS, PROJECTIONS } from '../../src/analytics/rollups';
import { simulateConversations } from '../../scripts/simulator';
import { send } from '../helpers';
import {
  aggregateObservations,
  canonicalize,
  observationsFromRecords,
  type AggregateQuery,
  type ConversationRecord,
  type Filter,
  type Observation,
  type Predicate,
} from '../support/reference-aggregator';
import { ingestOk, queryOk, SERVICE_LEVEL } from './analytics-api';

/**
 * Differential test: many random queries over simulated traffic, each answered by the real
 * endpoint and by the naive test-only reference aggregator (test/support), which shares no code
 * with src/analytics/ingest or src/analytics/query. The seed is printed so a failure can be replayed.
 */
const SEED = Number((import.meta as unknown as { env: Record<string, string | undefined> }).env.DIFF_SEED ?? 20261121);
const QUERIES = 240;
const CUBE_QUERIES = 160;
const PROJECTION_QUERIES = 80;
const END = Date.parse('2011-05-04T00:00:00.000Z');
const DAYS = 3;
const HOUR = 3_600_000;

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let records: ConversationRecord[] = [];
let observations: Observation[] = [];
const valuePool = new Map<string, string[]>();

beforeAll(async () => {
  records = [...simulateConversations({ days: DAYS, conversations: 2_000, seed: 7, end: new Date(END) })] as ConversationRecord[];
  for (let i = 0; i < records.length; i += 500) await ingestOk(records.slice(i, i + 500));
  // Re-send a slice, as a client retrying would: nothing may be counted twice.
  const again = await ingestOk(records.slice(100, 400));
  expect(again.observations).toBe(0);
  observations = observationsFromRecords(records);
  for (const o of observations) {
    for (const [dim, value] of Object.entries(o.dims)) {
      const pool = valuePool.get(dim) ?? [];
      for (const one of typeof value === 'string' ? [value] : value!) if (pool.length < 40 && !pool.includes(one)) pool.push(one);
      valuePool.set(dim, pool);
    }
  }
});

function randomQuery(rand: () => number): AggregateQuery {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const subset = <T>(items: readonly T[], max: number): T[] => {
    const copy = [...items].sort(() => rand() - 0.5);
    return copy.slice(0, 1 + Math.floor(rand() * max));
  };
  // Mostly aligned to quarter hours (rollups can answer), sometimes at an odd minute (raw rows).
  const granularity = pick([undefined, 'PT15M', 'PT30M', 'PT1H', 'PT6H', 'PT12H', 'P1D']);
  const unit =
    granularity === undefined
      ? HOUR
      : { PT15M: HOUR / 4, PT30M: HOUR / 2, PT1H: HOUR, PT6H: 6 * HOUR, PT12H: 12 * HOUR, P1D: 24 * HOUR }[granularity]!;
  const units = 1 + Math.floor(rand() * Math.min(48, (DAYS * 24 * HOUR) / unit));
  const offsetMinutes = rand() < 0.8 ? 15 * Math.floor(rand() * 4 * 24 * DAYS) : Math.floor(rand() * 60 * 24 * DAYS);
  const start = END - DAYS * 24 * HOUR + offsetMinutes * 60_000 - (rand() < 0.2 ? 6 * HOUR : 0);
  const end = start + units * unit;
  const query: AggregateQuery = { interval: `${new Date(start).toISOString()}/${new Date(end).toISOString()}` };
  if (granularity) query.granularity = granularity;

  const rollupDims = ['queueId', 'userId', 'direction', 'mediaType'];
  if (rand() < 0.7)
    query.groupBy = subset(rand() < 0.7 ? rollupDims : GROUP_BY_DIMENSIONS.filter((d) => d !== 'conversationId' && d !== 'sessionId'), 3);
  // Issue 23: multi-valued dimensions as a group per value or, flattened, one joined value.
  if (query.groupBy && rand() < 0.3) query.flattenMultivaluedDimensions = rand() < 0.5;
  if (rand() < 0.8) query.metrics = subset(METRIC_NAMES, 6);
  if (rand() < 0.6) {
    const predicate = (): Predicate => {
      const dimension = pick(rand() < 0.7 ? rollupDims : FILTER_DIMENSIONS);
      const op = rand();
      if (op < 0.15) return { dimension, operator: 'exists' };
      if (op < 0.3) return { dimension, operator: 'notExists' };
      // Issue 23: a range on a numeric dimension (agentRank, mediaCount…).
      if (op < 0.4 && NUMERIC[DIMENSION_INDEX[dimension as Dimension]])
        return {
          dimension,
          range: rand() < 0.5 ? { gte: Math.floor(rand() * 8) } : { gt: Math.floor(rand() * 4), lte: 4 + Math.floor(rand() * 8) },
        };
      const pool = valuePool.get(dimension) ?? ['none'];
      return { dimension, value: rand() < 0.9 ? pick(pool) : 'no-such-value' };
    };
    const filter: Filter = { type: rand() < 0.7 ? 'and' : 'or', predicates: Array.from({ length: 1 + Math.floor(rand() * 3) }, predicate) };
    if (rand() < 0.25) filter.clauses = [{ type: rand() < 0.5 ? 'and' : 'or', predicates: [predicate(), predicate()] }];
    // Issue 6: metric predicates (no opinion on other metrics), in the filter or in a clause.
    if (rand() < 0.3) filter.predicates!.push({ type: 'metric', metric: pick(TIMERS), range: randomRange(rand) });
    if (rand() < 0.1)
      (filter.clauses ??= []).push({
        type: 'or',
        predicates: [{ type: 'metric', metric: pick(TIMERS), range: randomRange(rand) }, predicate()],
      });
    query.filter = filter;
  }
  if (rand() < 0.2) {
    query.views = Array.from({ length: 1 + Math.floor(rand() * 3) }, (_, i) => {
      const { gte, lt } = randomRange(rand);
      return {
        target: pick(TIMERS),
        name: `view${i}`,
        function: 'rangeBound' as const,
        range: gte === undefined && lt === undefined ? { lt: 60_000 } : { gte, lt },
      };
    });
  }
  if (rand() < 0.2) {
    query.queryType = rand() < 0.5 ? 'topN' : 'bottomN';
    query.sortMetric = { name: pick(OBSERVED), function: pick(['sum', 'count', 'max', 'min', 'average'] as const) };
    if (rand() < 0.7) query.limit = 1 + Math.floor(rand() * 5);
  }
  return query;
}

/** Whole-minute windows in local time: P1D/P1W/P1M stepped in a zone with DST or a half-hour offset. */
function randomZonedQuery(rand: () => number): AggregateQuery {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const [zone, midnightUtc] = pick([
    ['Europe/Berlin', '2011-05-01T22:00:00.000Z'], // local midnight of May 2 (CEST)
    ['America/New_York', '2011-05-02T04:00:00.000Z'], // local midnight of May 2 (EDT)
    ['Asia/Kolkata', '2011-05-01T18:30:00.000Z'], // local midnight of May 2 (IST)
  ] as const);
  const start = Date.parse(midnightUtc) - (rand() < 0.5 ? 24 * HOUR : 0);
  const days = 1 + Math.floor(rand() * 2);
  const query: AggregateQuery = {
    interval: `${new Date(start).toISOString()}/${new Date(start + days * 24 * HOUR).toISOString()}`,
    granularity: 'P1D',
    timeZone: zone,
    metrics: [pick(['nOffered', 'tHandle', 'tAnswered', 'oServiceLevel']), pick(['tTalk', 'nConnected', 'tAbandon'])].filter(
      (m, i, a) => a.indexOf(m) === i,
    ),
  };
  if (rand() < 0.6) query.groupBy = [pick(['queueId', 'userId', 'direction'])];
  return query;
}

/**
 * A query that names one dimension of the dimension cube (issue 24), in groupBy or filter or both,
 * with or without mediaType, over whole hours: every one must be answered from agg_dim.
 */
/** A query's interval and granularity in whole hours or days of the simulated traffic (what the cube and projections keep). */
function randomWholeHours(rand: () => number): AggregateQuery {
  const granularity = [undefined, 'PT1H', 'PT6H', 'P1D'][Math.floor(rand() * 4)];
  const unit = { PT1H: HOUR, PT6H: 6 * HOUR, P1D: 24 * HOUR }[granularity ?? 'PT1H']!;
  const hours = DAYS * 24;
  const startHour = granularity === 'P1D' ? 24 * Math.floor(rand() * DAYS) : Math.floor(rand() * hours);
  const units = 1 + Math.floor(rand() * Math.max(1, Math.floor(((hours - startHour) * HOUR) / unit)));
  const start = END - hours * HOUR + startHour * HOUR;
  const query: AggregateQuery = { interval: `${new Date(start).toISOString()}/${new Date(start + units * unit).toISOString()}` };
  if (granularity) query.granularity = granularity;
  return query;
}

function randomCubeQuery(rand: () => number): { query: AggregateQuery; dimension: Dimension } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  // Mostly dimensions the simulated traffic carries; now and then one it never does (all absent).
  const carried = CUBE_DIMENSIONS.map((d) => d.dim).filter((d) => valuePool.has(d));
  const dimension = rand() < 0.9 ? pick(carried) : pick(CUBE_DIMENSIONS.map((d) => d.dim).filter((d) => !valuePool.has(d)));
  const query = randomWholeHours(rand);
  const groupable = GROUP_BY_DIMENSIONS.includes(dimension);
  const shape = rand();
  const grouped = groupable && shape < 0.75;
  const filtered = !grouped || shape > 0.45;
  if (grouped) query.groupBy = rand() < 0.3 ? ['mediaType', dimension] : [dimension];
  if (grouped && MULTI_VALUED[DIMENSION_INDEX[dimension]] && rand() < 0.5) query.flattenMultivaluedDimensions = rand() < 0.5;
  if (rand() < 0.85) query.metrics = [...METRIC_NAMES].sort(() => rand() - 0.5).slice(0, 1 + Math.floor(rand() * 6));
  if (filtered) {
    const pool = valuePool.get(dimension) ?? ['none'];
    const predicate = (): Predicate => {
      const op = rand();
      if (op < 0.15) return { dimension, operator: 'exists' };
      if (op < 0.25) return { dimension, operator: 'notExists' };
      if (op < 0.35 && NUMERIC[DIMENSION_INDEX[dimension]]) return { dimension, range: { gte: Math.floor(rand() * 4) } };
      if (op < 0.45) return { dimension: 'mediaType', value: pick(['voice', 'chat', 'email', 'message', 'callback']) };
      return { dimension, value: rand() < 0.9 ? pick(pool) : 'no-such-value' };
    };
    query.filter = { type: rand() < 0.5 ? 'and' : 'or', predicates: Array.from({ length: 1 + Math.floor(rand() * 3) }, predicate) };
    if (!query.filter.predicates!.some((p) => 'dimension' in p && p.dimension === dimension))
      query.filter.predicates!.push({ dimension, value: pick(pool) });
    if (rand() < 0.2) query.filter.clauses = [{ type: 'or', predicates: [predicate(), predicate()] }];
  }
  return { query, dimension };
}

/**
 * A query over two or more dimensions of one declared projection (rollups.ts PROJECTIONS), each grouped or
 * filtered (matches, exists, notExists, in `and`, `or` and clauses), so no smaller rollup answers it.
 */
function randomProjectionQuery(rand: () => number): { query: AggregateQuery; projection: number } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const projection = Math.floor(rand() * PROJECTIONS.length);
  const own = [...PROJECTIONS[projection]!].sort(() => rand() - 0.5);
  const dims = own.slice(0, 2 + Math.floor(rand() * (own.length - 1)));
  const query = randomWholeHours(rand);
  const grouped = dims.filter((d) => GROUP_BY_DIMENSIONS.includes(d) && rand() < 0.6);
  if (grouped.length > 0) query.groupBy = rand() < 0.2 ? ['mediaType', ...grouped] : grouped;
  if (grouped.some((d) => MULTI_VALUED[DIMENSION_INDEX[d]]) && rand() < 0.5) query.flattenMultivaluedDimensions = rand() < 0.5;
  if (rand() < 0.85) query.metrics = [...METRIC_NAMES].sort(() => rand() - 0.5).slice(0, 1 + Math.floor(rand() * 6));
  const predicate = (dimension: Dimension): Predicate => {
    const op = rand();
    if (op < 0.15) return { dimension, operator: 'exists' };
    if (op < 0.25) return { dimension, operator: 'notExists' };
    return { dimension, value: rand() < 0.9 ? pick(valuePool.get(dimension) ?? ['none']) : 'no-such-value' };
  };
  const filtered = dims.filter((d) => !grouped.includes(d) || rand() < 0.3);
  if (filtered.length > 0) {
    query.filter = { type: rand() < 0.6 ? 'and' : 'or', predicates: filtered.map(predicate) };
    if (filtered.length > 1 && rand() < 0.4) {
      // h's shape: one dimension required, an `or` over the others.
      const [first, ...rest] = filtered;
      query.filter = { type: 'and', predicates: [predicate(first!)], clauses: [{ type: 'or', predicates: rest.map(predicate) }] };
    }
  }
  return { query, projection };
}

const TIMERS = METRIC_NAMES.filter((m) => m.startsWith('t'));
const OBSERVED = METRIC_NAMES.filter((m) => m !== 'oServiceLevel');

function randomRange(rand: () => number): { gte?: number; lt?: number } {
  const a = Math.floor(rand() * 120_000);
  const r = rand();
  if (r < 0.33) return { gte: a };
  if (r < 0.66) return { lt: a + 1 };
  return { gte: a, lt: a + 1 + Math.floor(rand() * 300_000) };
}

describe('the aggregate query against the reference aggregator', () => {
  it(`agrees on ${QUERIES} random queries over simulated traffic (seed ${SEED})`, async () => {
    const settings = (await send('GET', SERVICE_LEVEL)).body;
    const rand = mulberry32(SEED);
    const sources = new Map<string, number>();
    let nonEmpty = 0;
    for (let i = 0; i < QUERIES; i++) {
      const query = i % 8 === 7 ? randomZonedQuery(rand) : randomQuery(rand);
      const real = await queryOk(query);
      sources.set(real.source.split('@')[0]!, (sources.get(real.source.split('@')[0]!) ?? 0) + 1);
      const expected = aggregateObservations(observations, query, settings);
      if (expected.results.length > 0) nonEmpty++;
      const order = query.metrics ?? METRIC_NAMES;
      expect(canonicalize({ results: real.results }, order, query), `query #${i} (seed ${SEED}): ${JSON.stringify(query)}`).toEqual(
        canonicalize(expected, order, query),
      );
    }
    // The comparison must have exercised both read paths and real data.
    expect(sources.get('raw') ?? 0).toBeGreaterThan(10);
    expect([...sources.keys()].filter((s) => s.startsWith('rollup')).length).toBeGreaterThanOrEqual(3);
    expect(nonEmpty).toBeGreaterThan(QUERIES / 2);
  });

  it(`agrees on ${CUBE_QUERIES} random queries of one dimension of the dimension cube, every one read from it (seed ${SEED})`, async () => {
    const settings = (await send('GET', SERVICE_LEVEL)).body;
    const rand = mulberry32(SEED + 1);
    const dimensions = new Set<string>();
    const resolutions = new Set<string>();
    let nonEmpty = 0;
    for (let i = 0; i < CUBE_QUERIES; i++) {
      const { query, dimension } = randomCubeQuery(rand);
      const real = await queryOk(query);
      const label = `cube query #${i} (seed ${SEED}): ${JSON.stringify(query)}`;
      expect(real.source, label).toMatch(/^rollup:agg_dim@(1440|60)$/);
      resolutions.add(real.source);
      const expected = aggregateObservations(observations, query, settings);
      if (expected.results.length > 0) nonEmpty++;
      dimensions.add(dimension);
      const order = query.metrics ?? METRIC_NAMES;
      expect(canonicalize({ results: real.results }, order, query), label).toEqual(canonicalize(expected, order, query));
    }
    expect(dimensions.size).toBeGreaterThan(15);
    // Days and hours of the cube both answered.
    expect(resolutions.size).toBe(2);
    expect(nonEmpty).toBeGreaterThan(CUBE_QUERIES / 2);
  });

  it(`agrees on ${PROJECTION_QUERIES} random queries of the declared projections, every one read from them (seed ${SEED})`, async () => {
    const settings = (await send('GET', SERVICE_LEVEL)).body;
    const rand = mulberry32(SEED + 2);
    const seen = new Set<string>();
    let nonEmpty = 0;
    for (let i = 0; i < PROJECTION_QUERIES; i++) {
      const { query, projection } = randomProjectionQuery(rand);
      const real = await queryOk(query);
      const label = `projection query #${i} (seed ${SEED}): ${JSON.stringify(query)}`;
      expect(real.source, label).toMatch(/^rollup:agg_proj@(1440|60)$/);
      seen.add(`${projection} ${real.source}`);
      const expected = aggregateObservations(observations, query, settings);
      if (expected.results.length > 0) nonEmpty++;
      const order = query.metrics ?? METRIC_NAMES;
      expect(canonicalize({ results: real.results }, order, query), label).toEqual(canonicalize(expected, order, query));
    }
    // Every projection, by days and by hours.
    expect(seen.size).toBe(2 * PROJECTIONS.length);
    expect(nonEmpty).toBeGreaterThan(PROJECTION_QUERIES / 3);
  });
});
