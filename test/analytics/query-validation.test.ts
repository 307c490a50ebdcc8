import { describe, expect, it } from 'vitest';
import { createToken, expectError, send } from '../helpers';
import { query, QUERY } from './analytics-api';

const DAY = '2005-06-01T00:00:00.000Z/2005-06-02T00:00:00.000Z';

describe('query validation', () => {
  it('answers an unparseable interval with invalid.date', async () => {
    for (const interval of ['yesterday', '2005-06-01/2005-06-02', '2005-13-01T00:00:00Z/2005-06-02T00:00:00Z', '2005-06-01T00:00:00Z']) {
      expectError(await query({ interval }), 400, 'invalid.date', 'interval');
    }
  });

  it('requires an interval and rejects one that ends before it starts', async () => {
    expectError(await query({ metrics: ['nOffered'] }), 400, 'invalid.value', 'interval');
    expectError(await query({ interval: '2005-06-02T00:00:00Z/2005-06-01T00:00:00Z' }), 400, 'invalid.value', 'interval');
  });

  it('rejects a granularity that does not divide the interval, or is finer than PT1M', async () => {
    expectError(await query({ interval: DAY, granularity: 'PT7H' }), 400, 'invalid.value', 'granularity');
    expectError(await query({ interval: DAY, granularity: 'PT30S' }), 400, 'invalid.value', 'granularity');
    expectError(await query({ interval: DAY, granularity: 'twelve hours' }), 400, 'invalid.value', 'granularity');
    expect((await query({ interval: DAY, granularity: 'PT1M' })).status).toBe(200);
  });

  it('rejects unknown metric, groupBy and predicate names, listing the allowed values', async () => {
    const metric = await query({ interval: DAY, metrics: ['nOffered', 'nOfered'] });
    expectError(metric, 400, 'invalid.value', 'metrics[1]');
    expect(metric.body.message).toContain('nOffered, tAcd');
    const group = await query({ interval: DAY, groupBy: ['queue'] });
    expectError(group, 400, 'invalid.value', 'groupBy[0]');
    expect(group.body.message).toContain('queueId');
    expectError(
      await query({ interval: DAY, filter: { type: 'and', predicates: [{ dimension: 'agent', value: 'x' }] } }),
      400,
      'invalid.value',
      'filter.predicates[0].dimension',
    );
    expectError(await query({ interval: DAY, filter: { type: 'xor', predicates: [] } }), 400, 'invalid.value', 'filter.type');
    expectError(
      await query({ interval: DAY, filter: { type: 'and', predicates: [{ dimension: 'queueId' }] } }),
      400,
      'invalid.value',
      'filter.predicates[0].value',
    );
  });

  it('rejects an unknown time zone', async () => {
    expectError(await query({ interval: DAY, timeZone: 'Mars/Olympus' }), 400, 'invalid.value', 'timeZone');
  });

  it('answers malformed JSON with bad.request and other media types with 415', async () => {
    expectError(await send('POST', QUERY, { body: '{"interval":', headers: { 'Content-Type': 'application/json' } }), 400, 'bad.request');
    expectError(
      await send('POST', QUERY, { body: 'interval=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported.media.type',
    );
  });

  it('needs analytics:conversationAggregate:view', async () => {
    expectError(await query({ interval: DAY }, null as unknown as string), 401, 'authentication.required');
    expectError(await query({ interval: DAY }, 'sbt_not-a-real-token'), 401, 'bad.credentials');
    const ingester = await createToken(['analytics:conversation:ingest']);
    expectError(await query({ interval: DAY }, ingester.token), 403, 'missing.permissions', 'analytics:conversationAggregate:view');
  });
});

describe('query limits, at and one past each edge', () => {
  it('accepts a 732-day interval and rejects 732 days and 1 ms', async () => {
    expect((await query({ interval: '2003-01-01T00:00:00.000Z/2005-01-02T00:00:00.000Z', granularity: 'P1D' })).status).toBe(200);
    expectError(await query({ interval: '2003-01-01T00:00:00.000Z/2005-01-02T00:00:00.001Z' }), 400, 'invalid.value', 'interval');
  });

  it('accepts 20,000 buckets and rejects 20,001', async () => {
    // 20,000 minutes from 2005-06-01T00:00Z ends 2005-06-14T21:20Z.
    expect((await query({ interval: '2005-06-01T00:00:00Z/2005-06-14T21:20:00Z', granularity: 'PT1M' })).status).toBe(200);
    expectError(
      await query({ interval: '2005-06-01T00:00:00Z/2005-06-14T21:21:00Z', granularity: 'PT1M' }),
      400,
      'invalid.value',
      'granularity',
    );
  });

  it('accepts 8 groupBy dimensions and rejects 9', async () => {
    const dims = ['queueId', 'userId', 'direction', 'purpose', 'wrapUpCode', 'disconnectType', 'divisionId', 'ani', 'dnis'];
    expect((await query({ interval: DAY, groupBy: dims.slice(0, 8) })).status).toBe(200);
    expectError(await query({ interval: DAY, groupBy: dims }), 400, 'invalid.value', 'groupBy');
  });

  it('rejects the same metric or dimension named twice', async () => {
    expectError(await query({ interval: DAY, metrics: ['nOffered', 'nOffered'] }), 400, 'invalid.value', 'metrics');
    expectError(await query({ interval: DAY, groupBy: ['queueId', 'queueId'] }), 400, 'invalid.value', 'groupBy');
  });

  it('accepts 100 predicates and rejects 101', async () => {
    const predicates = (n: number) => Array.from({ length: n }, (_, i) => ({ dimension: 'queueId', value: `q${i}` }));
    expect((await query({ interval: DAY, filter: { type: 'or', predicates: predicates(100) } })).status).toBe(200);
    expectError(
      await query({ interval: DAY, filter: { type: 'or', predicates: predicates(101) } }),
      400,
      'invalid.value',
      'filter.predicates',
    );
  });

  it('answers 413 for a query body over 256 KiB', async () => {
    const res = await query({ interval: DAY, padding: 'x'.repeat(256 * 1024) });
    expectError(res, 413, 'payload.too.large');
  });
});
