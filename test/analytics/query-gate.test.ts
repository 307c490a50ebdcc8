/**
 * Issue 22 item 3: queries that read the raw observations compute one at a time per isolate
 * (src/analytics/query/query-gate.ts), a few wait, one more is refused with 429; rollup queries are
 * not held by them. Real Worker and D1 (the test and the Worker share one isolate here, as requests
 * share one in production).
 */
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { ANALYTICS_LIMITS } from '../../src/analytics/limits';
import { QueryGate } from '../../src/analytics/query/query-gate';
import { simulateConversations } from '../../scripts/simulator';
import { expectError } from '../helpers';
import { ingestOk, query } from './analytics-api';

const END = Date.parse('2017-05-20T00:00:00.000Z');
const interval = `${new Date(END - 8 * 86_400_000).toISOString()}/${new Date(END).toISOString()}`;
/** No rollup or projection keeps wrapUpCode with userId: the raw path, reading every conversation of the 8 days. */
const rawQuery = { interval, groupBy: ['wrapUpCode', 'userId'], metrics: ['tHandle', 'nOffered'] };
/** queueId at whole days: a rollup answers it. */
const rollupQuery = { interval, granularity: 'P1D', groupBy: ['queueId'], metrics: ['nOffered'] };

beforeAll(async () => {
  const records = [...simulateConversations({ days: 8, conversations: 3_000, seed: 7, end: new Date(END) })];
  for (let i = 0; i < records.length; i += 1_000) await ingestOk(records.slice(i, i + 1_000));
});

describe('raw-path queries take turns', () => {
  it('computes one at a time, lets the documented number wait, refuses one more with 429 and Retry-After', async () => {
    const n = ANALYTICS_LIMITS.rawQueriesAtOnce + ANALYTICS_LIMITS.rawQueriesWaiting + 2;
    const answers = await Promise.all(Array.from({ length: n }, () => query(rawQuery)));
    const statuses = answers.map((a) => a.status).sort();
    const admitted = ANALYTICS_LIMITS.rawQueriesAtOnce + ANALYTICS_LIMITS.rawQueriesWaiting;
    expect(statuses).toEqual([...Array(admitted).fill(200), 429, 429]);
    const refused = answers.find((a) => a.status === 429)!;
    expectError(refused, 429, 'too.many.requests');
    expect(refused.body.message).toMatch(/retry shortly|narrow the query/);
    expect(refused.headers.get('Retry-After')).toBe('2');
    // Every admitted one answered in full, as one alone does.
    const alone = await query(rawQuery);
    expect(alone.status).toBe(200);
    expect(alone.headers.get('Switchboard-Query-Source')).toBe('raw');
    for (const a of answers.filter((x) => x.status === 200)) expect(a.body).toEqual(alone.body);
  });

  it('answers a rollup query while raw ones fill every turn', async () => {
    const n = ANALYTICS_LIMITS.rawQueriesAtOnce + ANALYTICS_LIMITS.rawQueriesWaiting;
    const done: string[] = [];
    const raw = Array.from({ length: n }, () =>
      query(rawQuery).then((a) => {
        done.push('raw');
        return a;
      }),
    );
    const rollup = await query(rollupQuery);
    done.push('rollup');
    expect(rollup.status).toBe(200);
    expect(rollup.headers.get('Switchboard-Query-Source')).toMatch(/^rollup:/);
    for (const a of await Promise.all(raw)) expect(a.status).toBe(200);
    // Had it waited for a turn it would have come after every raw one; it came before most of them.
    expect(done.indexOf('rollup')).toBeLessThan(2);
  });
});

describe('a cube query that reads raw rows after all', () => {
  it('takes a raw-path turn: with the cube marked incomplete, the same queue and the same 429', async () => {
    /** wrapUpCode alone by day: the dimension cube answers it while it is whole. */
    const cubeQuery = { interval, granularity: 'P1D', groupBy: ['wrapUpCode'], metrics: ['tHandle', 'nOffered'] };
    const whole = await query(cubeQuery);
    expect(whole.headers.get('Switchboard-Query-Source')).toBe('rollup:agg_dim@1440');
    // The store as migration 0016 marks one that held conversations before the cube (cube-incomplete.test.ts).
    await env.DB.batch([
      env.DB.prepare('DELETE FROM agg_dim'),
      env.DB.prepare('DELETE FROM agg_mask'),
      env.DB.prepare(`INSERT INTO meta (key, value) VALUES ('cube:incomplete', 1)`),
    ]);
    try {
      const n = ANALYTICS_LIMITS.rawQueriesAtOnce + ANALYTICS_LIMITS.rawQueriesWaiting + 2;
      const answers = await Promise.all(Array.from({ length: n }, () => query(cubeQuery)));
      const admitted = ANALYTICS_LIMITS.rawQueriesAtOnce + ANALYTICS_LIMITS.rawQueriesWaiting;
      expect(answers.map((a) => a.status).sort()).toEqual([...Array(admitted).fill(200), 429, 429]);
      expectError(answers.find((a) => a.status === 429)!, 429, 'too.many.requests');
      for (const a of answers.filter((x) => x.status === 200)) {
        expect(a.headers.get('Switchboard-Query-Source')).toBe('raw (the dimension cube lacks earlier conversations)');
        expect(a.body).toEqual(whole.body);
      }
    } finally {
      await env.DB.prepare(`DELETE FROM meta WHERE key = 'cube:incomplete'`).run();
    }
  });
});

describe('QueryGate', () => {
  it('hands each turn to the longest waiter, refuses past the queue, and a second leave frees nothing', async () => {
    const gate = new QueryGate(1, 2);
    const order: string[] = [];
    const first = (await gate.enter())!;
    const second = gate.enter().then((leave) => {
      order.push('second');
      return leave!;
    });
    const third = gate.enter().then((leave) => {
      order.push('third');
      return leave!;
    });
    expect(await gate.enter()).toBeUndefined();
    first();
    const leaveSecond = await second;
    first(); // a second leave of the same turn must not free another
    await new Promise((r) => setTimeout(r, 100));
    expect(order).toEqual(['second']);
    leaveSecond();
    (await third)();
    expect(order).toEqual(['second', 'third']);
    // Everyone left: the next one goes straight in.
    expect(await gate.enter()).toBeTypeOf('function');
  });
});
