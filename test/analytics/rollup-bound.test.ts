import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { Aggregation } from '../../src/analytics/query/aggregate';
import { prepareQuery } from '../../src/analytics/query/prepare';
import { aggregateQuerySchema } from '../../src/analytics/query/query.schema';
import { readInto } from '../../src/analytics/query/query.store';
import { answerJson } from '../../src/analytics/query/results-json';
import { QueryTooLarge } from '../../src/analytics/query/too-large';
import { DEFAULT_SERVICE_LEVEL } from '../../src/analytics/settings/service-level.settings';
import { simulateConversations } from '../../scripts/simulator';
import type { AggregateQuery, ConversationRecord } from '../support/reference-aggregator';
import { ingestOk } from './analytics-api';

/**
 * A rollup read hands the Worker at most maxRollupReadBytes characters of cells (limits.ts): D1 measures
 * the read before sending it, and one past the bound comes back as its size alone. Without it a long
 * interval by agent brought its whole result into the isolate before the answer's entries bound could
 * refuse it (bench w6: 41–46 MiB at 1,000,000 conversations, and more with more agents).
 */
const END = Date.parse('2013-05-10T00:00:00.000Z');
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  const records = [...simulateConversations({ days: 2, conversations: 1_200, seed: 91, end: new Date(END) })] as ConversationRecord[];
  for (let i = 0; i < records.length; i += 1_000) await ingestOk(records.slice(i, i + 1_000));
});

/** Reads the query with the bound given (none: the default) into a fresh Aggregation; its answer's text and what the read reports. */
async function read(body: AggregateQuery, maxRollupReadBytes?: number) {
  const { spec, read } = prepareQuery(aggregateQuerySchema.parse(body));
  const aggregation = new Aggregation(spec);
  try {
    const result = await readInto(env.DB, maxRollupReadBytes === undefined ? read : { ...read, maxRollupReadBytes }, aggregation);
    const text = new TextDecoder().decode(await answerJson(aggregation, DEFAULT_SERVICE_LEVEL, (b) => `bucket ${b}`));
    return { result, text, aggregation };
  } catch (err) {
    return { err, aggregation };
  }
}

describe('a rollup read is bounded in characters of cells before it reaches the Worker', () => {
  for (const [name, body, source] of [
    [
      'cells of agg_queue, hourly',
      { interval: `${iso(END - 2 * DAY)}/${iso(END)}`, granularity: 'PT1H', groupBy: ['queueId'] },
      'rollup:agg_queue@60',
    ],
    [
      "agg_user's packed rows, by agent in quarter hours",
      { interval: `${iso(END - DAY)}/${iso(END)}`, granularity: 'PT15M', groupBy: ['userId'], metrics: ['tHandle', 'nOffered', 'tTalk'] },
      'rollup:agg_user@15',
    ],
    [
      'the dimension cube and its absent cells, by division',
      { interval: `${iso(END - 2 * DAY)}/${iso(END)}`, granularity: 'PT1H', groupBy: ['divisionId'], flattenMultivaluedDimensions: true },
      'rollup:agg_dim@60',
    ],
  ] as [string, AggregateQuery, string][]) {
    it(`answers within the bound and refuses one character past it, having added nothing: ${name}`, async () => {
      const whole = await read(body);
      expect(whole.result?.source).toBe(source);
      const chars = whole.result!.cellChars;
      // Each stats entry of the answer comes from at least one stored cell, itself at least "1,1" or "0,".
      expect(chars).toBeGreaterThan(2 * whole.aggregation.entries);
      expect(whole.aggregation.entries).toBeGreaterThan(100);

      const exact = await read(body, chars);
      expect(exact.err).toBeUndefined();
      expect(exact.result!.cellChars).toBe(chars);
      expect(exact.text).toBe(whole.text);

      const short = await read(body, chars - 1);
      expect(short.err).toBeInstanceOf(QueryTooLarge);
      const err = short.err as QueryTooLarge;
      expect(err.message).toMatch(/would read about [\d.]+ MiB of stored cells, more than the [\d.]+ MiB one query may read/);
      // Fewer buckets at once read fewer cells; more groups would not.
      expect(err.splits).toBe('time');
      expect(err.progress).toBeCloseTo((chars - 1) / chars, 9);
      expect(short.aggregation.entries).toBe(0);
    });
  }

  it("a read past rollupReadAloneBytes is made again in the isolate's turn, and answers the same; one within it takes none", async () => {
    const body: AggregateQuery = { interval: `${iso(END - 2 * DAY)}/${iso(END)}`, granularity: 'PT1H', groupBy: ['queueId'] };
    const whole = await read(body);
    const chars = whole.result!.cellChars;
    const { spec, read: readSpec } = prepareQuery(aggregateQuerySchema.parse(body));
    const turnsAt = async (alone: number) => {
      const events: string[] = [];
      const aggregation = new Aggregation(spec);
      const counting = new Proxy(env.DB, {
        get(target, key) {
          if (key === 'prepare') return (sql: string) => (events.push('statement'), target.prepare(sql));
          const value = Reflect.get(target, key);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      await readInto(counting, { ...readSpec, rollupReadAloneBytes: alone }, aggregation, {
        takeTurn: async () => {
          events.push('turn');
        },
      });
      const text = new TextDecoder().decode(await answerJson(aggregation, DEFAULT_SERVICE_LEVEL, (b) => `bucket ${b}`));
      return { events, text };
    };
    expect(await turnsAt(chars)).toEqual({ events: ['statement'], text: whole.text });
    // Measured past it, nothing added; the turn; read again within the query's bound.
    expect(await turnsAt(chars - 1)).toEqual({ events: ['statement', 'turn', 'statement'], text: whole.text });
  });

  it('an interval without cells reads nothing and is never refused', async () => {
    const empty = await read({ interval: `${iso(END - 400 * DAY)}/${iso(END - 399 * DAY)}`, granularity: 'PT1H', groupBy: ['queueId'] }, 1);
    expect(empty.err).toBeUndefined();
    expect(empty.result!.cellChars).toBe(0);
    expect(empty.aggregation.entries).toBe(0);
  });
});
