import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createToken, expectError, send } from '../helpers';
import { ingestOk, queryOk, SERVICE_LEVEL } from './analytics-api';
import { conversation } from './builders';
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

/**
 * Issue 23 item 3: targets per queue and media type, oServiceTarget, and oCallbackServiceLevel from the
 * callback metrics. Expectations worked out by hand.
 */
describe('service level per queue and media type', () => {
  const CB_DAY = '2002-04-01T00:00:00.000Z/2002-04-02T00:00:00.000Z';
  const at = (hms: string) => `2002-04-01T${hms}.000Z`;
  const callback = (metrics: [string, number, string][], purpose = 'agent') =>
    conversation({
      start: at('09:00:00'),
      participants: [
        {
          purpose,
          ...(purpose === 'agent' ? { userId: 'u-cb' } : {}),
          sessions: [{ mediaType: 'callback', segments: [{ start: at('09:00:00'), queueId: 'q-cb' }], metrics }],
        },
      ],
    });

  beforeAll(async () => {
    await ingestOk([
      // Connected within the callback service level; connected over it; abandoned in queue; not reached.
      callback([['tCallbackConnect', 5000, at('09:01:00')]]),
      callback([
        ['tCallbackConnect', 9000, at('09:02:00')],
        ['nCallbackOverSla', 1, at('09:02:00')],
      ]),
      callback([['tCallbackAbandon', 30000, at('09:03:00')]], 'acd'),
      callback([['tCallbackNotReached', 20000, at('09:04:00')]]),
    ]);
  });

  it('takes the most specific target set: queue and media type, queue, media type, org', async () => {
    await putSettings({
      ...DEFAULTS,
      mediaTypes: { voice: { target: 0.6 }, callback: { target: 0.65 } },
      queues: { [QA]: { mediaTypes: { voice: { target: 0.9 } } }, [QB]: { target: 0.7 } },
    });
    const byQueue = await queryOk({
      interval: DAY,
      groupBy: ['queueId'],
      metrics: ['oServiceLevel', 'oServiceTarget'],
      filter: { type: 'and', predicates: [{ dimension: 'mediaType', value: 'voice' }] },
    });
    expect(byQueue.results.map((r: any) => [r.group.queueId, r.data[0].metrics])).toEqual([
      [
        QA,
        [
          { metric: 'oServiceLevel', stats: { ratio: 1 / 3, numerator: 1, denominator: 3, target: 0.9 } },
          { metric: 'oServiceTarget', stats: { target: 0.9 } },
        ],
      ],
      [QB, [expect.objectContaining({ metric: 'oServiceLevel' }), { metric: 'oServiceTarget', stats: { target: 0.7 } }]],
    ]);
    // Not grouped by queue: the org's voice target.
    const overall = await queryOk({
      interval: DAY,
      metrics: ['oServiceTarget'],
      filter: { type: 'and', predicates: [{ dimension: 'mediaType', value: 'voice' }] },
    });
    expect(overall.results).toEqual([
      { group: { mediaType: 'voice' }, data: [{ interval: DAY, metrics: [{ metric: 'oServiceTarget', stats: { target: 0.6 } }] }] },
    ]);
    // The settings read back as written.
    expect((await send('GET', SERVICE_LEVEL)).body.queues[QA]).toEqual({ mediaTypes: { voice: { target: 0.9 } } });
  });

  it('answers oCallbackServiceLevel: (connected − over) / (connected + abandoned + not reached), against the callback target', async () => {
    await putSettings({ ...DEFAULTS, mediaTypes: { callback: { target: 0.65 } } });
    const res = await queryOk({
      interval: CB_DAY,
      groupBy: ['queueId'],
      metrics: ['oCallbackServiceLevel', 'oServiceLevel', 'oServiceTarget'],
    });
    // Connected 2, over 1, abandoned 1, not reached 1: (2 − 1) / (2 + 1 + 1). No oServiceLevel components: no oServiceLevel.
    expect(res.results).toEqual([
      {
        group: { mediaType: 'callback', queueId: 'q-cb' },
        data: [
          {
            interval: CB_DAY,
            metrics: [
              { metric: 'oCallbackServiceLevel', stats: { ratio: 0.25, numerator: 1, denominator: 4, target: 0.65 } },
              { metric: 'oServiceTarget', stats: { target: 0.65 } },
            ],
          },
        ],
      },
    ]);
  });

  it('refuses a media-type target outside 0..1, an unknown key and "__proto__", naming the field', async () => {
    expectError(
      await send('PUT', SERVICE_LEVEL, { json: { ...DEFAULTS, mediaTypes: { voice: { target: 2 } } } }),
      400,
      'invalid.value',
      'mediaTypes.voice.target',
    );
    expectError(
      await send('PUT', SERVICE_LEVEL, { json: { ...DEFAULTS, queues: { [QA]: { targt: 0.5 } } } }),
      400,
      'invalid.value',
      `queues.${QA}.targt`,
    );
    expectError(
      await send('PUT', SERVICE_LEVEL, {
        json: JSON.parse(`{"includeFlowOuts":false,"includeShortAbandons":true,"target":0.8,"mediaTypes":{"__proto__":{"target":0.5}}}`),
      }),
      400,
      'invalid.value',
      'mediaTypes.__proto__',
    );
  });
});
