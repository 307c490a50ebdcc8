/**
 * Fuzzing the aggregate query. A small generated data set (odd Unicode dimension values, three days of
 * 2940, seeded by the run's seed) is ingested once; then each case sends a generated sequence of
 * queries: valid ones (every feature: intervals in every written form, granularities, time zones,
 * groupBy, metrics, and/or filters with dimension and metric predicates, views, topN/bottomN), which
 * must equal the test-only reference aggregator; queries with one known fault, which must answer the
 * documented 400 (or 413) with the documented code; queries with a random fault anywhere and the
 * hostile bodies every route gets, which must at least be well-formed answers. Querying must change
 * nothing: the data set's rows and a fixed answer are the same afterwards.
 */
import { env } from 'cloudflare:test';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { FILTER_DIMENSIONS, GROUP_BY_DIMENSIONS, METRIC_NAMES, OBSERVED_METRIC_NAMES } from '../../src/analytics/catalog';
import {
  aggregateObservations,
  canonicalize,
  observationsFromRecords,
  type AggregateQuery,
  type ConversationRecord,
  type Observation,
} from '../support/reference-aggregator';
import { clip, mutateDeep, numberishString, oddText, rawNumber } from './support/arbitraries';
import {
  bodiesAround,
  containsLoneSurrogate,
  describe as describeBody,
  jsonBody,
  sendBody,
  transportVerdict,
  type Body,
} from './support/bodies';
import { call } from './support/client';
import { expectWellFormedAnswer, fieldNames, fuzz, FUZZ_SEED, fuzzTimeout } from './support/fuzz';
import { DAY, Instant, writeInstant } from './support/instants';
import { Check, checkRecord, materialize, recordArb } from './support/records';

const QUERY = '/api/v2/analytics/conversations/aggregates/query';
const INGEST = '/api/v2/analytics/conversations/details/ingest';
const WINDOW = Date.UTC(2940, 2, 1);
const MINUTE = 60_000;
const TIMERS = METRIC_NAMES.filter((m) => m.startsWith('t'));
const OBSERVED = [...OBSERVED_METRIC_NAMES];

let observations: Observation[] = [];
let settings: Record<string, unknown> = {};
const pools = new Map<string, string[]>();
let fixedAnswer: unknown;
let rowCount = 0;

async function datasetState(): Promise<{ answer: unknown; rows: number }> {
  const res = await call('POST', QUERY, {
    json: { interval: `${iso(WINDOW)}/${iso(WINDOW + 3 * DAY)}`, granularity: 'PT6H', groupBy: ['queueId', 'userId'] },
  });
  const rows = await env.DB.prepare("SELECT count(*) AS n FROM conversations WHERE substr(id, 1, 3) = 'fq-'").first<{ n: number }>();
  return { answer: res.body, rows: rows!.n };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

beforeAll(async () => {
  // The data set: generated records, spread over three days, all valid by construction (checked).
  const templates = fc.sample(recordArb, { seed: FUZZ_SEED, numRuns: 90 });
  const records = templates
    .map((t, i) => materialize(t, { dayStart: WINDOW + (i % 3) * DAY, prefix: 'fq-' }))
    .filter((r) => !containsLoneSurrogate(r));
  const check = new Check();
  const normalised: ConversationRecord[] = records.map((r) => checkRecord(check, r));
  expect([...check.issues]).toEqual([]);
  for (let i = 0; i < records.length; i += 30) {
    const res = await call('POST', INGEST, { json: { conversations: records.slice(i, i + 30) } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  observations = observationsFromRecords(normalised);
  for (const o of observations) {
    for (const [dim, value] of Object.entries(o.dims)) {
      const pool = pools.get(dim) ?? [];
      for (const one of typeof value === 'string' ? [value] : value!) if (pool.length < 30 && !pool.includes(one)) pool.push(one);
      pools.set(dim, pool);
    }
  }
  settings = (await call('GET', '/api/v2/analytics/settings/servicelevel')).body;
  ({ answer: fixedAnswer, rows: rowCount } = await datasetState());
  expect(rowCount).toBeGreaterThan(0);
});

// -----------------------------------------------------------------------------------------------
// Valid queries (the reference can answer them)
// -----------------------------------------------------------------------------------------------

/** A query as sent, and the same query for the reference (interval as plain ISO `<start>/<end>`). */
interface Generated {
  sent: Record<string, unknown>;
  reference: AggregateQuery;
}

const GRANULARITY: [string | undefined, number][] = [
  [undefined, 15 * MINUTE],
  ['PT1M', MINUTE],
  ['PT15M', 15 * MINUTE],
  ['PT30M', 30 * MINUTE],
  ['PT1H', 60 * MINUTE],
  ['PT6H', 360 * MINUTE],
  ['PT12H', 720 * MINUTE],
  ['P1D', DAY],
];

const dimensionArb = fc.constantFrom(...FILTER_DIMENSIONS);
const groupByArb = fc.constantFrom(...GROUP_BY_DIMENSIONS);
const valueFor = (dimension: string) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...(pools.get(dimension) ?? ['none'])) },
    { weight: 1, arbitrary: oddText({ minLength: 1, maxLength: 6, wellFormed: true }) },
  );
const rangeArb = fc
  .record(
    {
      gt: fc.integer({ min: 0, max: 500_000 }),
      gte: fc.integer({ min: 0, max: 500_000 }),
      lt: fc.integer({ min: 1, max: 1_000_000 }),
      lte: fc.integer({ min: 0, max: 1_000_000 }),
    },
    { requiredKeys: [] },
  )
  .filter((r) => Object.keys(r).length > 0);
const dimensionPredicateArb = dimensionArb.chain((dimension) =>
  fc.oneof(
    { weight: 4, arbitrary: valueFor(dimension).map((value) => ({ dimension, value })) },
    { weight: 1, arbitrary: valueFor(dimension).map((value) => ({ type: 'dimension', dimension, operator: 'matches', value })) },
    { weight: 2, arbitrary: fc.constantFrom('exists', 'notExists').map((operator) => ({ dimension, operator })) },
  ),
);
const metricPredicateArb = fc.record({ type: fc.constant('metric'), metric: fc.constantFrom(...OBSERVED), range: rangeArb });
const predicateArb = fc.oneof({ weight: 4, arbitrary: dimensionPredicateArb }, { weight: 1, arbitrary: metricPredicateArb });
const filterArb = fc
  .record(
    {
      type: fc.constantFrom('and', 'or'),
      predicates: fc.array(predicateArb, { maxLength: 3 }),
      clauses: fc.array(
        fc.record({ type: fc.constantFrom('and', 'or'), predicates: fc.array(predicateArb, { minLength: 1, maxLength: 2 }) }),
        { maxLength: 2 },
      ),
    },
    { requiredKeys: ['type'] },
  )
  .filter((f) => (f.predicates?.length ?? 0) + (f.clauses?.length ?? 0) > 0); // an empty `or`: see the report (reference and README disagree)
const viewsArb = fc.uniqueArray(
  fc.record({
    target: fc.constantFrom(...TIMERS),
    name: fc.constantFrom('v1', 'v2', 'short', 'Ünïcødé view', '😀'),
    function: fc.constant('rangeBound'),
    range: fc.oneof(
      fc.record({ gte: fc.integer({ min: 0, max: 100_000 }) }),
      fc.record({ lt: fc.integer({ min: 1, max: 100_000 }) }),
      fc.integer({ min: 0, max: 100_000 }).map((gte) => ({ gte, lt: gte + 1 + (gte % 77_777) })),
    ),
  }),
  { maxLength: 3, selector: (v) => v.name },
);

const validQueryArb: fc.Arbitrary<Generated> = fc
  .record({
    g: fc.constantFrom(...GRANULARITY),
    startUnits: fc.nat(3 * 96),
    units: fc.integer({ min: 1, max: 12 }),
    form: fc.constantFrom('start/end', 'start/duration', 'duration/end', 'offsets'),
    zone: fc.constantFrom(undefined, undefined, 'UTC', 'Asia/Kolkata', 'America/New_York'),
    groupBy: fc.oneof(
      { weight: 4, arbitrary: fc.uniqueArray(groupByArb, { maxLength: 3 }) },
      { weight: 1, arbitrary: fc.uniqueArray(groupByArb, { minLength: 8, maxLength: 8 }) },
    ),
    metrics: fc.option(fc.uniqueArray(fc.constantFrom(...METRIC_NAMES), { minLength: 1, maxLength: 6 }), { nil: undefined }),
    filter: fc.option(filterArb, { nil: undefined }),
    views: fc.option(viewsArb, { nil: undefined, freq: 4 }),
    ranked: fc.option(
      fc.record({
        queryType: fc.constantFrom('topN', 'bottomN'),
        name: fc.constantFrom(...OBSERVED),
        fn: fc.constantFrom('sum', 'count', 'max', 'min', 'average'),
        limit: fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined }),
      }),
      { nil: undefined, freq: 5 },
    ),
    compat: fc.option(
      fc.record({ flattenMultivaluedDimensions: fc.boolean(), alternateTimeDimension: fc.constant('eventTime') }, { requiredKeys: [] }),
      { nil: undefined, freq: 5 },
    ),
    zoneWritten: fc.integer({ min: -40, max: 40 }),
  })
  .map((p) => {
    const [granularity, unit] = p.g;
    // Calendar days step in the zone's wall clock; keep them in UTC so a day is 24 h.
    const zone = granularity === 'P1D' ? (p.zone === undefined ? undefined : 'UTC') : p.zone;
    const step = Math.max(unit, 15 * MINUTE);
    const start = WINDOW - DAY + Math.floor((p.startUnits * 15 * MINUTE) / step) * step;
    const units = granularity === 'PT1M' ? p.units * 30 : p.units;
    const end = start + units * unit;
    const minutes = (end - start) / MINUTE;
    const written = (ms: number) => writeInstant(ms, new Instant(0, 1, p.zoneWritten * 15, ''));
    const interval = {
      'start/end': `${iso(start)}/${iso(end)}`,
      'start/duration': `${iso(start)}/PT${minutes}M`,
      'duration/end': `PT${minutes}M/${iso(end)}`,
      offsets: `${written(start)}/${written(end)}`,
    }[p.form];
    const q: Record<string, unknown> = { interval };
    if (granularity) q.granularity = granularity;
    if (zone) q.timeZone = zone;
    if (p.groupBy.length > 0) q.groupBy = p.groupBy;
    if (p.metrics) q.metrics = p.metrics;
    if (p.filter) q.filter = p.filter;
    if (p.views && p.views.length > 0) q.views = p.views;
    if (p.ranked) {
      q.queryType = p.ranked.queryType;
      q.sortMetric = { name: p.ranked.name, function: p.ranked.fn };
      if (p.ranked.limit !== undefined) q.limit = p.ranked.limit;
    }
    if (p.compat) Object.assign(q, p.compat);
    return { sent: q, reference: { ...(q as unknown as AggregateQuery), interval: `${iso(start)}/${iso(end)}` } };
  });

// -----------------------------------------------------------------------------------------------
// Known faults, each with the answer the README gives
// -----------------------------------------------------------------------------------------------

type Fault = {
  name: string;
  apply: (q: Record<string, unknown>) => Record<string, unknown>;
  status: number;
  codes: string[];
  field?: string;
};
const DAY1 = `${iso(WINDOW)}/${iso(WINDOW + DAY)}`;
const invalid = (name: string, apply: Fault['apply'], field?: string, codes = ['invalid.value']): Fault => ({
  name,
  apply,
  status: 400,
  codes,
  field,
});
const with_ = (patch: Record<string, unknown>) => (q: Record<string, unknown>) => ({ ...q, ...patch });
const nine = ['queueId', 'userId', 'direction', 'purpose', 'wrapUpCode', 'disconnectType', 'divisionId', 'ani', 'dnis'];

const FAULTS: Fault[] = [
  invalid('interval missing', (q) => Object.fromEntries(Object.entries(q).filter(([k]) => k !== 'interval')), 'interval'),
  invalid('interval not ISO', with_({ interval: 'yesterday/today', granularity: undefined }), 'interval', ['invalid.date']),
  invalid('interval with Feb 30', with_({ interval: '2940-02-30T00:00:00Z/P1D', granularity: undefined }), 'interval', ['invalid.date']),
  invalid('interval with hour 24', with_({ interval: '2940-03-01T24:00:00Z/2940-03-02T00:00:00Z', granularity: undefined }), 'interval', [
    'invalid.date',
  ]),
  invalid(
    'interval ending before it starts',
    with_({ interval: `${iso(WINDOW + DAY)}/${iso(WINDOW)}`, granularity: undefined }),
    'interval',
  ),
  invalid('empty interval', with_({ interval: `${iso(WINDOW)}/${iso(WINDOW)}`, granularity: undefined }), 'interval'),
  invalid('interval of 733 days', with_({ interval: `${iso(WINDOW)}/P733D`, granularity: undefined, timeZone: undefined }), 'interval'),
  invalid('zero duration', with_({ interval: `${iso(WINDOW)}/PT0M`, granularity: undefined }), 'interval'),
  invalid('interval a number', with_({ interval: 20_940_301 }), 'interval'),
  invalid('granularity not dividing the interval', with_({ interval: DAY1, granularity: 'PT7H', timeZone: undefined }), 'granularity'),
  invalid('granularity under a minute', with_({ interval: DAY1, granularity: 'PT30S', timeZone: undefined }), 'granularity'),
  invalid('granularity of zero', with_({ interval: DAY1, granularity: 'P0D', timeZone: undefined }), 'granularity'),
  invalid('granularity in words', with_({ interval: DAY1, granularity: 'one hour' }), 'granularity'),
  invalid('20,001 buckets', with_({ interval: `${iso(WINDOW)}/PT20001M`, granularity: 'PT1M', timeZone: undefined }), 'granularity'),
  invalid('unknown time zone', with_({ timeZone: 'Mars/Olympus' }), 'timeZone'),
  invalid('unknown groupBy dimension', with_({ groupBy: ['queue'] }), 'groupBy[0]'),
  invalid('nine groupBy dimensions', with_({ groupBy: nine }), 'groupBy'),
  invalid('a groupBy dimension twice', with_({ groupBy: ['queueId', 'queueId'] }), 'groupBy'),
  invalid('groupBy not a list', with_({ groupBy: 'queueId' }), 'groupBy'),
  invalid('no metrics', with_({ metrics: [] }), 'metrics'),
  invalid('unknown metric', with_({ metrics: ['nOffered', 'nOfered'] }), 'metrics[1]'),
  invalid('a metric twice', with_({ metrics: ['tTalk', 'tTalk'] }), 'metrics'),
  invalid('101 metrics', with_({ metrics: Array.from({ length: 101 }, (_, i) => METRIC_NAMES[i % METRIC_NAMES.length]) }), 'metrics'),
  invalid('filter type xor', with_({ filter: { type: 'xor', predicates: [] } }), 'filter.type'),
  invalid(
    'predicate on an unknown dimension',
    with_({ filter: { type: 'and', predicates: [{ dimension: 'agent', value: 'x' }] } }),
    'filter.predicates[0].dimension',
  ),
  invalid(
    'matches without a value',
    with_({ filter: { type: 'and', predicates: [{ dimension: 'queueId' }] } }),
    'filter.predicates[0].value',
  ),
  invalid(
    'exists with a value',
    with_({ filter: { type: 'and', predicates: [{ dimension: 'queueId', operator: 'exists', value: 'q1' }] } }),
    'filter.predicates[0].value',
  ),
  invalid(
    'unknown operator',
    with_({ filter: { type: 'and', predicates: [{ dimension: 'queueId', operator: 'contains', value: 'q' }] } }),
    'filter.predicates[0].operator',
  ),
  invalid(
    'predicate value over 256 characters',
    with_({ filter: { type: 'and', predicates: [{ dimension: 'queueId', value: 'q'.repeat(257) }] } }),
    'filter.predicates[0].value',
  ),
  invalid(
    '101 predicates in all',
    with_({
      filter: {
        type: 'or',
        predicates: Array.from({ length: 51 }, (_, i) => ({ dimension: 'queueId', value: `q${i}` })),
        clauses: [{ type: 'or', predicates: Array.from({ length: 50 }, (_, i) => ({ dimension: 'userId', value: `u${i}` })) }],
      },
    }),
  ),
  invalid(
    'a clause without predicates',
    with_({ filter: { type: 'and', clauses: [{ type: 'or', predicates: [] }] } }),
    'filter.clauses[0].predicates',
  ),
  invalid('metric predicate without a range', with_({ filter: { type: 'and', predicates: [{ type: 'metric', metric: 'tTalk' }] } })),
  invalid(
    'metric predicate with an empty range',
    with_({ filter: { type: 'and', predicates: [{ type: 'metric', metric: 'tTalk', range: {} }] } }),
  ),
  invalid(
    'metric predicate on oServiceLevel',
    with_({ filter: { type: 'and', predicates: [{ type: 'metric', metric: 'oServiceLevel', range: { gt: 0 } }] } }),
  ),
  invalid(
    'metric predicate bound not a number',
    with_({ filter: { type: 'and', predicates: [{ type: 'metric', metric: 'tTalk', range: { gt: '5' } }] } }),
  ),
  invalid(
    'eleven views',
    with_({
      views: Array.from({ length: 11 }, (_, i) => ({ target: 'tTalk', name: `v${i}`, function: 'rangeBound', range: { lt: 1000 } })),
    }),
    'views',
  ),
  invalid(
    'view on a count',
    with_({ views: [{ target: 'nOffered', name: 'v', function: 'rangeBound', range: { lt: 1000 } }] }),
    'views[0].target',
  ),
  invalid(
    'view named like a metric',
    with_({ views: [{ target: 'tTalk', name: 'tHandle', function: 'rangeBound', range: { lt: 1000 } }] }),
    'views[0].name',
  ),
  invalid(
    'two views with one name',
    with_({
      views: [
        { target: 'tTalk', name: 'v', function: 'rangeBound', range: { lt: 1 } },
        { target: 'tAcd', name: 'v', function: 'rangeBound', range: { lt: 2 } },
      ],
    }),
    'views[1].name',
  ),
  invalid('view function sum', with_({ views: [{ target: 'tTalk', name: 'v', function: 'sum', range: { lt: 1 } }] }), 'views[0].function'),
  invalid('view range upside down', with_({ views: [{ target: 'tTalk', name: 'v', function: 'rangeBound', range: { gte: 10, lt: 10 } }] })),
  invalid('unknown queryType', with_({ queryType: 'top', sortMetric: undefined, limit: undefined }), 'queryType'),
  invalid('topN without sortMetric', with_({ queryType: 'topN', sortMetric: undefined, limit: undefined }), 'sortMetric'),
  invalid(
    'sortMetric on a groupBy query',
    with_({ queryType: 'groupBy', sortMetric: { name: 'tTalk', function: 'sum' }, limit: undefined }),
    'sortMetric',
  ),
  invalid('limit 0', with_({ queryType: 'topN', sortMetric: { name: 'tTalk', function: 'sum' }, limit: 0 }), 'limit'),
  invalid('limit 10,001', with_({ queryType: 'topN', sortMetric: { name: 'tTalk', function: 'sum' }, limit: 10_001 }), 'limit'),
  invalid('limit 1.5', with_({ queryType: 'bottomN', sortMetric: { name: 'tTalk', function: 'max' }, limit: 1.5 }), 'limit'),
  invalid('limit on a groupBy query', with_({ queryType: undefined, sortMetric: undefined, limit: 5 }), 'limit'),
  invalid(
    'sort function median',
    with_({ queryType: 'topN', sortMetric: { name: 'tTalk', function: 'median' }, limit: undefined }),
    'sortMetric.function',
  ),
  invalid('alternateTimeDimension conversationStart', with_({ alternateTimeDimension: 'conversationStart' }), 'alternateTimeDimension'),
  { name: 'a body over 256 KiB', apply: with_({ padding: 'p'.repeat(256 * 1024) }), status: 413, codes: ['payload.too.large'] },
];

/** Wrong values for the query's own fields (anything else gets the generic wrong values). */
function wrongForQuery(key: string | number): fc.Arbitrary<unknown> | undefined {
  if (key === 'interval')
    return fc.oneof(
      fc.constantFrom(
        '',
        '/',
        'P1D/P1D',
        '2940-03-01T00:00:00Z/',
        '2940-03-01T00:00:00Z/PT',
        '2940-03-01T00:00:00Z/P1.5D',
        '2940-03-01T00:00:00Z/-P1D',
        '2940-03-01T00:00:00Z/P999999999Y',
        '+275760-09-13T00:00:00Z/P1D',
        '2940-03-01T00:00:00Z/2940-03-01T00:00:00.001Z',
        '2940-03-01T00:00:00Z/2940-03-02T00:00:00Z/P1D',
      ),
      oddText({ maxLength: 8 }),
    );
  if (key === 'granularity')
    return fc.constantFrom(
      'P',
      'PT',
      'P1DT',
      'PT1.5H',
      'PT0.5S',
      'P1W1D',
      'P1Y',
      'P1M',
      'PT61S',
      'pt1h',
      'PT999999999H',
      '-PT1H',
      'PT1M30S',
    );
  if (key === 'timeZone')
    return fc.constantFrom('utc', 'Europe/Berlin', 'Etc/GMT+14', 'EST5EDT', 'Z', '+02:00', 'Europe/Kyiv', 'Europe/Kiev', '');
  if (key === 'limit') return fc.oneof(fc.constantFrom(0, 1, 10_000, 10_001, -1, 2 ** 53 + 2), rawNumber, numberishString);
  if (key === 'gt' || key === 'gte' || key === 'lt' || key === 'lte')
    return fc.oneof(fc.constantFrom(-1, 1e308, -1e308, 0.5, 5e-324), rawNumber, numberishString);
  if (key === 'dimension') return fc.constantFrom('QueueId', 'queueid', 'constructor', '__proto__', 'toString', '');
  if (key === 'metric' || key === 'target' || key === 'name') return fc.constantFrom('oServiceLevel', 'tTalk ', 'hasOwnProperty', '');
  return undefined;
}

/**
 * Deep arrays in fields whose error message prints the value stack-overflow the query's validation
 * (a 500; see findings.test.ts), so the random faults here nest at most 1,000 deep.
 */
function shallow(body: Body): boolean {
  return !new TextDecoder().decode(body.bytes).includes('['.repeat(1001));
}

type QueryOp = { kind: 'valid'; q: Generated } | { kind: 'fault'; q: Generated; fault: Fault } | { kind: 'random'; body: Body };

const opArb: fc.Arbitrary<QueryOp> = fc.oneof(
  { weight: 5, arbitrary: validQueryArb.map((q) => ({ kind: 'valid' as const, q })) },
  { weight: 3, arbitrary: fc.tuple(validQueryArb, fc.constantFrom(...FAULTS)).map(([q, fault]) => ({ kind: 'fault' as const, q, fault })) },
  {
    weight: 3,
    arbitrary: mutateDeep(
      validQueryArb.map((g) => g.sent),
      wrongForQuery,
    )
      .map((v) => ({ kind: 'random' as const, body: jsonBody(v, 'application/json', 'random fault') }))
      .filter((o) => shallow(o.body)),
  },
  {
    weight: 2,
    arbitrary: bodiesAround(
      validQueryArb.map((g) => g.sent),
      256 * 1024,
    )
      .filter(shallow)
      .map((body) => ({ kind: 'random' as const, body })),
  },
);

function stripUndefined(q: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined));
}

describe('fuzzing the aggregate query', { timeout: fuzzTimeout(300_000) }, () => {
  it('answers valid queries as the reference does, known faults with the documented error, and anything else with a well-formed answer', async () => {
    await fuzz(
      'aggregate query',
      fc.array(opArb, { minLength: 4, maxLength: 12 }),
      async (ops) => {
        for (const op of ops) {
          if (op.kind === 'valid') {
            const res = await call('POST', QUERY, { json: op.q.sent });
            const what = `query ${clip(JSON.stringify(op.q.sent), 600)}`;
            expectWellFormedAnswer(res, what);
            expect(res.status, `${what} → ${clip(JSON.stringify(res.body), 400)}`).toBe(200);
            const expected = aggregateObservations(observations, op.q.reference, settings);
            const order = op.q.reference.metrics ?? METRIC_NAMES;
            expect(canonicalize(res.body, order, op.q.reference), what).toEqual(canonicalize(expected, order, op.q.reference));
          } else if (op.kind === 'fault') {
            const sent = stripUndefined(op.fault.apply(op.q.sent));
            const res = await call('POST', QUERY, { json: sent });
            const what = `${op.fault.name}: ${clip(JSON.stringify(sent), 600)} → ${res.status} ${clip(JSON.stringify(res.body), 400)}`;
            expectWellFormedAnswer(res, what);
            expect(res.status, what).toBe(op.fault.status);
            expect(op.fault.codes, what).toContain(res.body.code);
            if (op.fault.field) expect(fieldNames(res), what).toContain(op.fault.field);
          } else {
            const res = await sendBody('POST', QUERY, op.body);
            const what = `query ${describeBody(op.body)}`;
            expectWellFormedAnswer(res, what);
            const t = transportVerdict(op.body, 256 * 1024);
            if (t) {
              expect(res.status, `${what} → ${clip(JSON.stringify(res.body), 300)}`).toBe(t.status);
              expect(t.codes, what).toContain(res.body.code);
            }
          }
        }
      },
      { numRuns: 100, timeLimitMs: 45_000 },
    );
    // Querying stored nothing and changed nothing.
    expect(await datasetState()).toEqual({ answer: fixedAnswer, rows: rowCount });
  });
});
