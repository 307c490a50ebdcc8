import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../src/analytics/catalog';
import { Aggregation, type AggregateSpec } from '../../src/analytics/query/aggregate';
import { compileFilter } from '../../src/analytics/query/filter';
import { planBuckets } from '../../src/analytics/query/interval';
import { readInto } from '../../src/analytics/query/query.store';
import { QueryTooLarge } from '../../src/analytics/query/too-large';
import type { ReadSpec } from '../../src/analytics/query/read-spec';
import { simulateConversations } from '../../scripts/simulator';
import {
  aggregateObservations,
  canonicalize,
  observationsFromRecords,
  type AggregateQuery,
  type ConversationRecord,
  type Observation,
} from '../support/reference-aggregator';
import { conversation } from './builders';
import { ingestOk, queryOk, timer } from './analytics-api';
import { CONVERSATION_ID_SQL } from '../../src/analytics/ingest/conversation-key';

/**
 * Issue 22 item 8: one conversation emitting in 1971 and 2999 made the single longest span (meta
 * max_span_ms) cover the whole table, so every raw read scanned from 1971. Reads now scan per span
 * class (migration 0006): the outlier widens only its own class.
 */
const END = Date.parse('2014-03-12T00:00:00.000Z');
const HOUR = 3_600_000;
const ORDINARY = 3_000;
const OUTLIER_ID = 'outlier-1971-2999';

let records: ConversationRecord[] = [];
let observations: Observation[] = [];

/** Bit length of a span, written independently of src/analytics/span-class.ts. */
const bitLength = (span: number) => (span === 0 ? 0 : span.toString(2).length);

beforeAll(async () => {
  records = [...simulateConversations({ days: 8, conversations: ORDINARY, seed: 22, end: new Date(END) })] as ConversationRecord[];
  const outlier = conversation({
    id: OUTLIER_ID,
    start: '1971-01-01T00:00:00.000Z',
    participants: [
      {
        purpose: 'agent',
        userId: 'u-far',
        sessions: [
          {
            segments: [{ start: '1971-01-01T00:00:00.000Z', queueId: 'q-far', wrapUpCode: 'far' }],
            metrics: [
              ['tTalk', 1000, '1971-01-01T00:00:01.000Z'],
              ['tHandle', 2000, '2999-12-31T23:00:00.000Z'],
            ],
          },
        ],
      },
    ],
  }) as ConversationRecord;
  records.push(outlier);
  for (let i = 0; i < records.length; i += 1_000) await ingestOk(records.slice(i, i + 1_000));
  observations = observationsFromRecords(records);
});

/** Each conversation's first and last emit, from the records (independently of the store). */
function conversationSpans(): Map<string, { first: number; last: number }> {
  const spans = new Map<string, { first: number; last: number }>();
  for (const o of observations) {
    const id = o.dims.conversationId as string;
    const s = spans.get(id);
    if (!s) spans.set(id, { first: o.time, last: o.time });
    else {
      s.first = Math.min(s.first, o.time);
      s.last = Math.max(s.last, o.time);
    }
  }
  return spans;
}

/** Reads a raw query (views force the raw path) straight through the store, with D1's row counts. */
async function rawRead(start: number, end: number) {
  const plan = planBuckets({ interval: `${new Date(start).toISOString()}/${new Date(end).toISOString()}` });
  const spec = { metrics: undefined, groupBy: [], filter: compileFilter(undefined), maxGroups: 50_000, maxCells: 1_000_000 };
  const aggregation = new Aggregation(spec);
  return readInto(env.DB, { plan, dimensions: new Set(['mediaType', 'wrapUpCode']), needsValues: true }, aggregation);
}

describe('span classes bound the raw scan', () => {
  it('a one-hour raw query near the end of the data reads only the rows that can reach it, despite the outlier', async () => {
    const end = END - 2 * HOUR;
    const start = end - HOUR;
    const read = await rawRead(start, end);
    expect(read.source).toBe('raw');

    // Independently of the store: the conversations, their first and last emits, from the records.
    const spans = conversationSpans();
    const ordinary = [...spans].filter(([id]) => id !== OUTLIER_ID).map(([, s]) => s);
    const longest = Math.max(...ordinary.map((s) => s.last - s.first));
    const touching = ordinary.filter((s) => s.first < end && s.last >= start).length;
    // A class's window reaches back at most twice the longest span: no read may look at more than the
    // conversations starting in [start − 2 × longest, end), the outlier, and the span-class rows of meta.
    const inReach = ordinary.filter((s) => s.first >= start - 2 * longest && s.first < end).length;
    // Decoded: at least every conversation with an observation in the hour, and only ones in reach.
    expect(read.conversations).toBeGreaterThanOrEqual(touching);
    expect(read.conversations).toBeLessThanOrEqual(inReach);
    // rows_read counts about one per candidate row (allowing 2: index entry and table row), plus meta's class rows.
    expect(read.rowsRead).toBeLessThanOrEqual(2 * (inReach + 1) + 64);
    // Before span classes, every row with first_emit < end was read (all but the last two hours here).
    const before = ordinary.filter((s) => s.first < end).length;
    expect(2 * (inReach + 1) + 64).toBeLessThan(before);
  });

  it('a raw read finds and counts its classes in one statement and reads the first pages of small classes in one batch, as the plain read does', async () => {
    const end = END - 2 * HOUR;
    const start = end - 24 * HOUR;
    // Every statement the read sends, through a D1 that forwards to the real one.
    const sent: string[] = [];
    const batches: number[] = [];
    const counting = new Proxy(env.DB, {
      get(target, key) {
        if (key === 'prepare')
          return (sql: string) => {
            sent.push(sql);
            return target.prepare(sql);
          };
        // How many statements of each batch read a page of rows.
        if (key === 'batch')
          return (statements: D1PreparedStatement[]) => {
            batches.push(sent.slice(-statements.length).filter((sql) => /ORDER BY first_emit, rowid LIMIT/.test(sql)).length);
            return target.batch(statements);
          };
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const plan = planBuckets({ interval: `${new Date(start).toISOString()}/${new Date(end).toISOString()}` });
    const spec = { metrics: undefined, groupBy: [], filter: compileFilter(undefined), maxGroups: 50_000, maxCells: 1_000_000 };
    const viaProxy = new Aggregation(spec);
    const read = await readInto(counting, { plan, dimensions: new Set(['mediaType', 'wrapUpCode']), needsValues: true }, viaProxy);
    expect(read.source).toBe('raw');
    // The classes the data holds, from the records (bit lengths of their spans), independently of the store.
    const spans = conversationSpans();
    const classes = new Set([...spans.values()].map((s) => bitLength(s.last - s.first)));
    expect(classes.size).toBeGreaterThanOrEqual(5);
    // One counting statement (it reads length(data) of the rows in reach), however many classes, and
    // nothing else before the first page: it reads the classes the database records itself.
    expect(sent.filter((sql) => /count\(\*\) AS n/.test(sql))).toHaveLength(1);
    expect(sent.findIndex((sql) => /ORDER BY first_emit, rowid LIMIT/.test(sql))).toBe(1);
    // Classes with few rows in reach have their first pages read together: one batch of several.
    expect(Math.max(0, ...batches)).toBeGreaterThanOrEqual(2);
    // The same conversations as read straight through the binding.
    const direct = await readInto(
      env.DB,
      { plan, dimensions: new Set(['mediaType', 'wrapUpCode']), needsValues: true },
      new Aggregation(spec),
    );
    expect(read.conversations).toBe(direct.conversations);
    expect(read.conversations).toBeGreaterThan(100);
  });

  /**
   * Reads 48 hours by `by`, then again under a bound far below the answer (stopped early) and one entry
   * below it (stopped late): each refusal says how far the read had got, the early one less far.
   */
  async function stoppedEarlyAndLate(
    by: 'wrapUpCode' | 'queueId',
    needsValues: boolean,
  ): Promise<{ source: string; p1: number; p2: number }> {
    const end = END - 2 * HOUR;
    const plan = planBuckets({
      interval: `${new Date(end - 48 * HOUR).toISOString()}/${new Date(end).toISOString()}`,
      granularity: 'PT1H',
    });
    const read = { plan, dimensions: new Set(['mediaType', by] as const), needsValues };
    const spec = (maxCells: number): AggregateSpec => ({
      metrics: undefined,
      groupBy: [by],
      filter: compileFilter(undefined),
      maxGroups: 50_000,
      maxCells,
    });
    const whole = new Aggregation(spec(1_000_000));
    const { source } = await readInto(env.DB, read, whole);
    // Every entry the answer holds: the bound counts these as they are created.
    const entries = whole.groupsInOrder().reduce((n, g) => n + g.cells.size + g.serviceLevel.size + g.views.size, 0);
    expect(entries).toBeGreaterThan(500);
    await readInto(env.DB, read, new Aggregation(spec(entries)));
    const early = await readInto(env.DB, read, new Aggregation(spec(50))).catch((err: unknown) => err);
    const late = await readInto(env.DB, read, new Aggregation(spec(entries - 1))).catch((err: unknown) => err);
    expect(early).toBeInstanceOf(QueryTooLarge);
    expect(late).toBeInstanceOf(QueryTooLarge);
    return { source, p1: (early as QueryTooLarge).progress!, p2: (late as QueryTooLarge).progress! };
  }

  for (const [path, by, needsValues] of [
    ['raw', 'wrapUpCode', true],
    ['rollup', 'queueId', false],
  ] as const) {
    it(`a ${path} read stopped by the answer bound says how far it had read, for a job to split by`, async () => {
      const { source, p1, p2 } = await stoppedEarlyAndLate(by, needsValues);
      expect(source.startsWith(path)).toBe(true);
      expect(p1).toBeGreaterThan(0);
      expect(p1).toBeLessThan(0.5);
      expect(p2).toBeGreaterThan(p1);
      expect(p2).toBeLessThanOrEqual(1);
    });
  }

  it('rows ingested between the estimate and the read are read too, small classes read together included', async () => {
    const end = END - 2 * HOUR;
    const start = end - 24 * HOUR;
    const plan = planBuckets({ interval: `${new Date(start).toISOString()}/${new Date(end).toISOString()}` });
    const spec = { metrics: undefined, groupBy: [], filter: compileFilter(undefined), maxGroups: 50_000, maxCells: 1_000_000 };
    // Pages of about two rows (a stored conversation holds ~600 bytes), so a class the estimate found
    // holding one row is read with others, and its page comes back full once its rows are tripled.
    const read: ReadSpec = { plan, dimensions: new Set(['mediaType', 'wrapUpCode']), needsValues: true, rawPageBytes: 1_500 };
    let grouped = 0;
    const staleAfterEstimate = new Proxy(env.DB, {
      get(target, key) {
        if (key === 'prepare')
          return (sql: string) => {
            const statement = target.prepare(sql);
            if (!/count\(\*\) AS n/.test(sql)) return statement;
            // The estimate answers as it was; then two copies of every conversation arrive.
            return {
              bind: (...params: unknown[]) => ({
                all: async () => {
                  const counted = await statement.bind(...params).all();
                  await target
                    .prepare(
                      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2)
                       INSERT INTO conversations (id, first_emit, last_emit, span_class, version, data)
                       SELECT c.cid || '-stale-' || n.i, c.first_emit, c.last_emit, c.span_class, 1, c.data
                       FROM (SELECT ${CONVERSATION_ID_SQL} AS cid, * FROM conversations) c CROSS JOIN n`,
                    )
                    .run();
                  return counted;
                },
              }),
            };
          };
        if (key === 'batch')
          return (statements: D1PreparedStatement[]) => {
            if (statements.length > 1) grouped++;
            return target.batch(statements);
          };
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    try {
      const before = await readInto(env.DB, read, new Aggregation(spec));
      const during = await readInto(staleAfterEstimate as D1Database, read, new Aggregation(spec));
      const after = await readInto(env.DB, read, new Aggregation(spec));
      expect(after.conversations).toBe(3 * before.conversations);
      // Every row there when the pages were read, the copies included: none lost to a full first page.
      expect(during.conversations).toBe(after.conversations);
      expect(grouped).toBeGreaterThan(0);
    } finally {
      await env.DB.prepare(`DELETE FROM conversations WHERE ${CONVERSATION_ID_SQL} LIKE '%-stale-%'`).run();
    }
  });

  it('the outlier is still found by queries that overlap either end of it', async () => {
    const early = await queryOk({
      interval: '1970-12-31T00:00:00.000Z/1971-01-02T00:00:00.000Z',
      groupBy: ['wrapUpCode', 'userId'],
      metrics: ['tTalk', 'tHandle'],
    });
    expect(early.source).toBe('raw');
    expect(early.results).toEqual([
      {
        group: { mediaType: 'voice', userId: 'u-far', wrapUpCode: 'far' },
        data: [{ interval: '1970-12-31T00:00:00.000Z/1971-01-02T00:00:00.000Z', metrics: [{ metric: 'tTalk', stats: timer(1000) }] }],
      },
    ]);
    const late = await queryOk({
      interval: '2999-12-31T00:00:00.000Z/3000-01-01T00:00:00.000Z',
      groupBy: ['wrapUpCode', 'userId'],
      metrics: ['tHandle'],
    });
    expect(late.source).toBe('raw');
    expect(late.results).toEqual([
      {
        group: { mediaType: 'voice', userId: 'u-far', wrapUpCode: 'far' },
        data: [{ interval: '2999-12-31T00:00:00.000Z/3000-01-01T00:00:00.000Z', metrics: [{ metric: 'tHandle', stats: timer(2000) }] }],
      },
    ]);
  });

  it('answers a raw query over the ordinary data as the reference aggregator does', async () => {
    const query: AggregateQuery = {
      interval: `${new Date(END - 7 * HOUR).toISOString()}/${new Date(END - HOUR).toISOString()}`,
      granularity: 'PT1H',
      groupBy: ['wrapUpCode', 'userId'],
    };
    const real = await queryOk(query);
    expect(real.source).toBe('raw');
    const expected = aggregateObservations(observations, query);
    expect(expected.results.length).toBeGreaterThan(0);
    expect(canonicalize({ results: real.results }, METRIC_NAMES, query)).toEqual(canonicalize(expected, METRIC_NAMES, query));
  });

  it('records each class present with its longest span, and stores each conversation in its class', async () => {
    const rows = await env.DB.prepare(
      `SELECT ${CONVERSATION_ID_SQL} AS id, last_emit - first_emit AS span, span_class FROM conversations`,
    ).all<{
      id: string;
      span: number;
      span_class: number;
    }>();
    const longest = new Map<number, number>();
    for (const row of rows.results) {
      expect(row.span_class, row.id).toBe(bitLength(row.span));
      longest.set(row.span_class, Math.max(longest.get(row.span_class) ?? 0, row.span));
    }
    const meta = await env.DB.prepare(`SELECT key, value FROM meta WHERE key LIKE 'span_class:%'`).all<{ key: string; value: number }>();
    expect(new Map(meta.results.map((r) => [Number(r.key.slice('span_class:'.length)), r.value]))).toEqual(longest);
    const outlier = rows.results.find((r) => r.id === OUTLIER_ID)!;
    expect(outlier.span).toBe(Date.parse('2999-12-31T23:00:00.000Z') - Date.parse('1971-01-01T00:00:01.000Z'));
  });
});

describe('migration 0006', () => {
  it('fills span_class from last_emit − first_emit and records the classes present', async () => {
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith('0006_'))!;
    // Its data statements, replayed over rows as they stood before it (class 0, no class rows in meta).
    const data = migration.queries.filter((q) => /^\s*(UPDATE|INSERT)/i.test(q.replace(/^(--.*\n)+/, '')));
    expect(data).toHaveLength(2);
    const spans = [
      0,
      1,
      2,
      3,
      4,
      1023,
      1024,
      59_999,
      60_000,
      2 ** 40,
      Date.parse('2999-12-31T23:59:59.999Z') - Date.parse('1971-01-01T00:00:00.000Z'),
    ];
    await env.DB.batch([
      env.DB.prepare(`DELETE FROM conversations`),
      env.DB.prepare(`DELETE FROM meta`),
      ...spans.map((span, i) =>
        env.DB.prepare(`INSERT INTO conversations (id, first_emit, last_emit, version, data) VALUES (?1, ?2, ?3, 1, x'01')`).bind(
          `m-${i}`,
          1_000_000 + i,
          1_000_000 + i + span,
        ),
      ),
    ]);
    for (const sql of data) await env.DB.prepare(sql).run();
    const rows = await env.DB.prepare(`SELECT id, span_class FROM conversations ORDER BY first_emit`).all<{ span_class: number }>();
    expect(rows.results.map((r) => r.span_class)).toEqual(spans.map(bitLength));
    const meta = await env.DB.prepare(`SELECT key, value FROM meta ORDER BY key`).all<{ key: string; value: number }>();
    const expected = new Map<string, number>();
    for (const span of spans)
      expected.set(`span_class:${bitLength(span)}`, Math.max(expected.get(`span_class:${bitLength(span)}`) ?? 0, span));
    expect(new Map(meta.results.map((r) => [r.key, r.value]))).toEqual(expected);
  });
});
