import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createToken, expectError, send } from '../helpers';
import { ingestOk, queryOk, SERVICE_LEVEL } from './analytics-api';
import { HAND_DAY, QA, QB, UA } from './fixtures/hand-day';

const DAY = '2002-03-04T00:00:00.000Z/2002-03-05T00:00:00.000Z';
const DEFAULTS = { includeFlowOuts: false, includeShortAbandons: true, target: 0.8, queues: {} };

async function putSettings(body: unknown) {
  const res = await send('PUT', SERVICE_LEVEL, { json: body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function serviceLevelByQueue(groupBy: string[] = ['queueId']) {
  const res = await queryOk({
    interval: DAY,
    groupBy,
    metrics: ['oServiceLevel'],
    filter: { type: 'and', predicates: [{ dimension: 'mediaType', value: 'voice' }] },
  });
  return res.results;
}

beforeAll(async () => {
  // The same hand-built day as query-rules.test.ts; re-ingesting it there or here counts once.
  await ingestOk(HAND_DAY);
});

afterEach(async () => {
  await putSettings(DEFAULTS);
});

describe('service level settings', () => {
  it('starts from the documented defaults', async () => {
    const res = await send('GET', SERVICE_LEVEL);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(DEFAULTS);
  });

  it('replaces the whole object on PUT and persists it', async () => {
    await putSettings({ includeFlowOuts: true, includeShortAbandons: false, target: 0.9, queues: { [QA]: { target: 0.75 } } });
    const res = await send('GET', SERVICE_LEVEL);
    expect(res.body).toEqual({ includeFlowOuts: true, includeShortAbandons: false, target: 0.9, queues: { [QA]: { target: 0.75 } } });
    await putSettings({ includeFlowOuts: false, includeShortAbandons: true, target: 0.5 });
    expect((await send('GET', SERVICE_LEVEL)).body).toEqual({
      includeFlowOuts: false,
      includeShortAbandons: true,
      target: 0.5,
      queues: {},
    });
  });

  it('rejects a target outside 0..1 and a missing switch, naming the field', async () => {
    expectError(await send('PUT', SERVICE_LEVEL, { json: { ...DEFAULTS, target: 1.5 } }), 400, 'invalid.value', 'target');
    expectError(
      await send('PUT', SERVICE_LEVEL, { json: { includeFlowOuts: true, target: 0.8 } }),
      400,
      'invalid.value',
      'includeShortAbandons',
    );
    expectError(
      await send('PUT', SERVICE_LEVEL, { json: { ...DEFAULTS, queues: { [QA]: { target: -1 } } } }),
      400,
      'invalid.value',
      `queues.${QA}.target`,
    );
  });

  it('refuses a queue override keyed "__proto__" instead of dropping it, and keeps "constructor" as an ordinary queue id', async () => {
    // Raw JSON: an object literal in the test would set the prototype itself.
    const body = (queues: string) => `{"includeFlowOuts": false, "includeShortAbandons": true, "target": 0.8, "queues": ${queues}}`;
    const refused = await send('PUT', SERVICE_LEVEL, {
      body: body('{"__proto__": {"target": 0.5}}'),
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(refused, 400, 'invalid.value', 'queues.__proto__');
    const kept = await send('PUT', SERVICE_LEVEL, {
      body: body('{"constructor": {"target": 0.5}}'),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    expect(kept.body.queues).toEqual({ constructor: { target: 0.5 } });
    expect((await send('GET', SERVICE_LEVEL)).body.queues).toEqual({ constructor: { target: 0.5 } });
    await send('PUT', SERVICE_LEVEL, { json: DEFAULTS });
  });

  it('needs analytics:settings:edit to change and analytics:conversationAggregate:view to read', async () => {
    const viewer = await createToken(['analytics:conversationAggregate:view']);
    expect((await send('GET', SERVICE_LEVEL, { token: viewer.token })).status).toBe(200);
    expectError(
      await send('PUT', SERVICE_LEVEL, { token: viewer.token, json: DEFAULTS }),
      403,
      'missing.permissions',
      'analytics:settings:edit',
    );
    const editor = await createToken(['analytics:settings:edit']);
    expectError(
      await send('GET', SERVICE_LEVEL, { token: editor.token }),
      403,
      'missing.permissions',
      'analytics:conversationAggregate:view',
    );
    expectError(await send('GET', SERVICE_LEVEL, { token: null }), 401, 'authentication.required');
  });
});

describe('oServiceLevel under each configuration (applied retroactively)', () => {
  // Voice components on the hand-built day, worked out by hand:
  //   QA: answered 2 (c1, c5), over SLA 1 (c1), abandoned 1 (c2, which is also a short abandon), flow-outs 0.
  //   QB: answered 0, abandoned 0 (c6's abandon is at the interval end), flow-outs 1 (c3).
  const cases = [
    { includeFlowOuts: true, includeShortAbandons: true, qa: { numerator: 1, denominator: 3 }, qb: { numerator: 0, denominator: 1 } },
    { includeFlowOuts: false, includeShortAbandons: true, qa: { numerator: 1, denominator: 3 }, qb: { numerator: 0, denominator: 0 } },
    { includeFlowOuts: true, includeShortAbandons: false, qa: { numerator: 1, denominator: 2 }, qb: { numerator: 0, denominator: 1 } },
    { includeFlowOuts: false, includeShortAbandons: false, qa: { numerator: 1, denominator: 2 }, qb: { numerator: 0, denominator: 0 } },
  ];
  const stats = (n: { numerator: number; denominator: number }, target: number) =>
    n.denominator > 0 ? { ratio: n.numerator / n.denominator, ...n, target } : { ...n, target };

  for (const c of cases) {
    it(`flow-outs ${c.includeFlowOuts ? 'included' : 'excluded'}, short abandons ${c.includeShortAbandons ? 'included' : 'excluded'}`, async () => {
      await putSettings({ includeFlowOuts: c.includeFlowOuts, includeShortAbandons: c.includeShortAbandons, target: 0.8 });
      expect(await serviceLevelByQueue()).toEqual([
        {
          group: { mediaType: 'voice', queueId: QA },
          data: [{ interval: DAY, metrics: [{ metric: 'oServiceLevel', stats: stats(c.qa, 0.8) }] }],
        },
        {
          group: { mediaType: 'voice', queueId: QB },
          data: [{ interval: DAY, metrics: [{ metric: 'oServiceLevel', stats: stats(c.qb, 0.8) }] }],
        },
      ]);
    });
  }

  it('uses a queue override target in groups of that queue and the org target elsewhere', async () => {
    await putSettings({ includeFlowOuts: true, includeShortAbandons: true, target: 0.7, queues: { [QA]: { target: 0.95 } } });
    const results = await serviceLevelByQueue();
    expect(results.map((r: any) => [r.group.queueId, r.data[0].metrics[0].stats.target])).toEqual([
      [QA, 0.95],
      [QB, 0.7],
    ]);
    const overall = await queryOk({
      interval: DAY,
      metrics: ['oServiceLevel'],
      filter: { type: 'and', predicates: [{ dimension: 'mediaType', value: 'voice' }] },
    });
    // No queueId in the group: the org target, and all voice components together (answered 2,
    // over 1, abandoned 1, flow-out 1 included) = 1 / 4.
    expect(overall.results).toEqual([
      {
        group: { mediaType: 'voice' },
        data: [
          { interval: DAY, metrics: [{ metric: 'oServiceLevel', stats: { ratio: 0.25, numerator: 1, denominator: 4, target: 0.7 } }] },
        ],
      },
    ]);
  });

  it('is computed in groups without userId from all components, agents’ answers included', async () => {
    const results = await serviceLevelByQueue(['queueId', 'userId']);
    // Only queue groups carry it; the user groups (UA, UB) do not, though their tAnswered feed it.
    expect(results.map((r: any) => r.group)).toEqual([
      { mediaType: 'voice', queueId: QA },
      { mediaType: 'voice', queueId: QB },
    ]);
    expect(results[0].data[0].metrics[0].stats).toEqual({ ratio: 1 / 3, numerator: 1, denominator: 3, target: 0.8 });
  });

  it('is not returned when the filter names a userId', async () => {
    const res = await queryOk({
      interval: DAY,
      metrics: ['oServiceLevel', 'tAnswered'],
      filter: { type: 'and', predicates: [{ dimension: 'userId', value: UA }] },
    });
    for (const r of res.results) for (const d of r.data) expect(d.metrics.map((m: { metric: string }) => m.metric)).toEqual(['tAnswered']);
  });
});
