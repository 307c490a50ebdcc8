import { describe, expect, it } from 'vitest';
import {
  canonicalize,
  observationsFromRecords,
  referenceAggregate,
  type AggregateResponse,
  type ConversationRecord,
  type RecordMetric,
  type ServiceLevelSettings,
} from './reference-aggregator';

// Every expected answer below is worked out by hand from the fixtures; none is produced by running the reference.

const at = (hms: string): string => `2031-01-15T${hms}Z`;
const m = (name: string, value: number, hms: string): RecordMetric => ({ name, value, emitDate: at(hms) });

/**
 * One answered inbound voice call on queue Q1: customer, IVR, ACD (Q1, "Sales") and agent U1 (Alice).
 * The agent's second segment (wrap-up, from 01:06) carries wrapUpCode and disconnectType but no queueId.
 */
const main: ConversationRecord = {
  conversationId: 'ref-main',
  conversationStart: at('01:00:00.000'),
  originatingDirection: 'inbound',
  divisionIds: ['div-1', 'div-2'],
  participants: [
    {
      participantId: 'p-cust',
      purpose: 'customer',
      sessions: [
        {
          sessionId: 's-cust',
          mediaType: 'voice',
          direction: 'inbound',
          ani: 'tel:+15550001',
          dnis: 'tel:+18000001',
          metrics: [m('nConnected', 1, '01:00:00.000'), m('tConnected', 420000, '01:07:00.000')],
        },
      ],
    },
    {
      participantId: 'p-ivr',
      participantName: 'Main IVR',
      purpose: 'ivr',
      sessions: [
        {
          sessionId: 's-ivr',
          mediaType: 'voice',
          direction: 'inbound',
          segments: [{ segmentStart: at('01:00:00.000'), segmentType: 'ivr', queueId: 'Q-ivr' }],
          metrics: [m('tIvr', 20000, '01:00:20.000')],
        },
      ],
    },
    {
      participantId: 'p-acd',
      participantName: 'Sales',
      purpose: 'acd',
      userId: 'U-acd',
      sessions: [
        {
          sessionId: 's-acd',
          mediaType: 'voice',
          direction: 'inbound',
          segments: [{ segmentStart: at('01:00:20.000'), segmentType: 'interact', queueId: 'Q1' }],
          metrics: [m('nOffered', 1, '01:00:20.000'), m('tAcd', 10000, '01:00:30.000')],
        },
      ],
    },
    {
      participantId: 'p-agent',
      participantName: 'Alice',
      purpose: 'agent',
      userId: 'U1',
      sessions: [
        {
          sessionId: 's-agent',
          mediaType: 'voice',
          direction: 'inbound',
          segments: [
            { segmentStart: at('01:00:30.000'), segmentType: 'interact', queueId: 'Q1' },
            { segmentStart: at('01:06:00.000'), segmentType: 'wrapup', wrapUpCode: 'W-sale', disconnectType: 'client' },
          ],
          metrics: [m('tAnswered', 10000, '01:00:30.000'), m('tTalk', 330000, '01:06:00.000'), m('tAcw', 60000, '01:07:00.000')],
        },
      ],
    },
  ],
};
const MAIN_INTERVAL = '2031-01-15T01:00:00.000Z/2031-01-15T01:30:00.000Z';

const timer = (value: number) => ({ max: value, min: value, count: 1, sum: value });

describe('observations derived from records', () => {
  it('take dimensions from conversation, participant, session and the right segment, minus the inapplicable ones', () => {
    const byMetric = new Map(observationsFromRecords([main]).map((o) => [o.metric, o]));
    const conversation = { conversationId: 'ref-main', originatingDirection: 'inbound', divisionId: 'div-1' };
    const voiceIn = { mediaType: 'voice', direction: 'inbound' };

    expect(byMetric.get('nConnected')).toEqual({
      metric: 'nConnected',
      value: 1,
      time: Date.parse(at('01:00:00.000')),
      dims: { ...conversation, ...voiceIn, purpose: 'customer', ani: 'tel:+15550001', dnis: 'tel:+18000001', sessionId: 's-cust' },
    });
    // The IVR segment's queueId is dropped: queueId never applies to tIvr.
    expect(byMetric.get('tIvr')?.dims).toEqual({
      ...conversation,
      ...voiceIn,
      purpose: 'ivr',
      participantName: 'Main IVR',
      sessionId: 's-ivr',
    });
    // The ACD participant's userId is ignored (purpose acd), and userId does not apply to nOffered anyway.
    expect(byMetric.get('nOffered')?.dims).toEqual({
      ...conversation,
      ...voiceIn,
      purpose: 'acd',
      participantName: 'Sales',
      sessionId: 's-acd',
      queueId: 'Q1',
    });
    const agent = { ...conversation, ...voiceIn, purpose: 'agent', participantName: 'Alice', userId: 'U1', sessionId: 's-agent' };
    // At 01:00:30 the wrap-up segment has not started yet.
    expect(byMetric.get('tAnswered')?.dims).toEqual({ ...agent, queueId: 'Q1' });
    // At 01:06:00 the wrap-up segment starts exactly then; queueId still comes from the earlier segment.
    expect(byMetric.get('tTalk')?.dims).toEqual({ ...agent, queueId: 'Q1', wrapUpCode: 'W-sale', disconnectType: 'client' });
  });

  it('take queueId from the latest segment by segmentStart, not by position in the list', () => {
    const transferred: ConversationRecord = {
      conversationId: 'ref-transfer',
      conversationStart: at('00:00:00.000'),
      participants: [
        {
          participantId: 'p-t',
          purpose: 'agent',
          userId: 'U9',
          sessions: [
            {
              sessionId: 's-t',
              mediaType: 'chat',
              direction: 'inbound',
              // Listed out of time order on purpose (Q1 from 00:00, Q3 from 00:20, Q2 from 00:10), so neither the
              // first nor the last started segment in the list is the right answer at 00:25.
              segments: [
                { segmentStart: at('00:00:00.000'), queueId: 'Q1' },
                { segmentStart: at('00:20:00.000'), queueId: 'Q3' },
                { segmentStart: at('00:10:00.000'), queueId: 'Q2' },
              ],
              metrics: [
                m('tTalk', 1, '00:05:00.000'),
                m('tTalk', 2, '00:10:00.000'),
                m('tTalk', 3, '00:19:59.999'),
                m('tTalk', 4, '00:25:00.000'),
              ],
            },
          ],
        },
      ],
    };
    expect(observationsFromRecords([transferred]).map((o) => [o.value, o.dims.queueId])).toEqual([
      [1, 'Q1'],
      [2, 'Q2'],
      [3, 'Q2'],
      [4, 'Q3'],
    ]);
  });
});

describe('rule 2: a filter on a dimension that applies only to some metrics', () => {
  it('returns only the metrics userId applies to when filtering on userId', () => {
    // userId=U1 holds only for the agent's tAnswered, tTalk, tAcw; ACD, IVR and customer metrics and
    // oServiceLevel cannot carry userId, so the predicate is false for them.
    const answer = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      filter: { type: 'and', predicates: [{ dimension: 'userId', value: 'U1' }] },
    });
    expect(answer).toEqual({
      results: [
        {
          group: { mediaType: 'voice' },
          data: [
            {
              interval: MAIN_INTERVAL,
              metrics: [
                { metric: 'tAnswered', stats: timer(10000) },
                { metric: 'tTalk', stats: timer(330000) },
                { metric: 'tAcw', stats: timer(60000) },
              ],
            },
          ],
        },
      ],
    });
  });

  it('drops requested nOffered and oServiceLevel under a userId filter and keeps the request order', () => {
    const answer = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      metrics: ['nOffered', 'oServiceLevel', 'tTalk'],
      filter: { type: 'and', predicates: [{ dimension: 'userId', value: 'U1' }] },
    });
    expect(answer).toEqual({
      results: [{ group: { mediaType: 'voice' }, data: [{ interval: MAIN_INTERVAL, metrics: [{ metric: 'tTalk', stats: timer(330000) }] }] }],
    });
  });

  it('returns queue metrics and the service level when filtering on queueId', () => {
    // queueId=Q1: nOffered, tAcd (ACD) and tAnswered, tTalk, tAcw (agent, Q1 from the first segment).
    // tIvr, nConnected, tConnected cannot carry queueId. oServiceLevel: 1 answered, 0 over SLA -> 1/1.
    const answer = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      filter: { type: 'and', predicates: [{ dimension: 'queueId', value: 'Q1' }] },
    });
    expect(answer.results).toEqual([
      {
        group: { mediaType: 'voice' },
        data: [
          {
            interval: MAIN_INTERVAL,
            metrics: [
              { metric: 'nOffered', stats: { count: 1 } },
              { metric: 'tAcd', stats: timer(10000) },
              { metric: 'tAnswered', stats: timer(10000) },
              { metric: 'tTalk', stats: timer(330000) },
              { metric: 'tAcw', stats: timer(60000) },
              { metric: 'oServiceLevel', stats: { ratio: 1, numerator: 1, denominator: 1, target: 0.8 } },
            ],
          },
        ],
      },
    ]);
  });
});

describe('filters beyond a single and', () => {
  it('returns nothing for notExists userId, since no metric that lacks userId can carry it', () => {
    const answer = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      filter: { type: 'and', predicates: [{ dimension: 'userId', operator: 'notExists' }] },
    });
    expect(answer).toEqual({ results: [] });
  });

  it('returns a metric from an or when any branch applies and holds', () => {
    // userId=U1 -> the agent's three timers; purpose=ivr -> tIvr. Neither branch holds for oServiceLevel.
    const answer = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      filter: {
        type: 'or',
        predicates: [
          { dimension: 'userId', value: 'U1' },
          { dimension: 'purpose', value: 'ivr' },
        ],
      },
    });
    expect(answer.results[0]?.data[0]?.metrics.map((x) => x.metric)).toEqual(['tAnswered', 'tTalk', 'tAcw', 'tIvr']);
    expect(answer.results).toHaveLength(1);
  });

  it('combines predicates and nested clauses under the filter type', () => {
    // voice AND (queueId exists OR ani = tel:+15550001): queue metrics and the service level via queueId,
    // the customer's metrics via ani; tIvr has neither (queueId cannot apply, its session has no ani).
    const answer = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      filter: {
        type: 'and',
        predicates: [{ dimension: 'mediaType', value: 'voice' }],
        clauses: [
          {
            type: 'or',
            predicates: [
              { dimension: 'queueId', operator: 'exists' },
              { dimension: 'ani', value: 'tel:+15550001' },
            ],
          },
        ],
      },
    });
    expect(answer.results[0]?.data[0]?.metrics.map((x) => x.metric)).toEqual([
      'nOffered',
      'tAcd',
      'tAnswered',
      'tTalk',
      'tAcw',
      'nConnected',
      'tConnected',
      'oServiceLevel',
    ]);
  });
});

describe('rule 3: groupBy on a dimension that applies only to some metrics', () => {
  it('puts metrics without userId in a group that omits it, mediaType always present', () => {
    // Group keys sort as strings: '{"mediaType":"voice","userId":"U1"}' < '{"mediaType":"voice"}' (',' < '}').
    // oServiceLevel is never grouped by userId, so U1's tAnswered counts in the voice group: 1/1.
    const answer = referenceAggregate([main], { interval: MAIN_INTERVAL, groupBy: ['userId'] });
    expect(answer).toEqual({
      results: [
        {
          group: { mediaType: 'voice', userId: 'U1' },
          data: [
            {
              interval: MAIN_INTERVAL,
              metrics: [
                { metric: 'tAnswered', stats: timer(10000) },
                { metric: 'tTalk', stats: timer(330000) },
                { metric: 'tAcw', stats: timer(60000) },
              ],
            },
          ],
        },
        {
          group: { mediaType: 'voice' },
          data: [
            {
              interval: MAIN_INTERVAL,
              metrics: [
                { metric: 'nOffered', stats: { count: 1 } },
                { metric: 'tAcd', stats: timer(10000) },
                { metric: 'tIvr', stats: timer(20000) },
                { metric: 'nConnected', stats: { count: 1 } },
                { metric: 'tConnected', stats: timer(420000) },
                { metric: 'oServiceLevel', stats: { ratio: 1, numerator: 1, denominator: 1, target: 0.8 } },
              ],
            },
          ],
        },
      ],
    });
  });

  it('spreads metrics over queue+user, queue-only and neither groups for groupBy queueId and userId', () => {
    const answer = referenceAggregate([main], { interval: MAIN_INTERVAL, groupBy: ['queueId', 'userId'] });
    expect(answer.results.map((r) => [r.group, r.data[0]?.metrics.map((x) => x.metric)])).toEqual([
      [{ mediaType: 'voice', queueId: 'Q1', userId: 'U1' }, ['tAnswered', 'tTalk', 'tAcw']],
      [{ mediaType: 'voice', queueId: 'Q1' }, ['nOffered', 'tAcd', 'oServiceLevel']],
      [{ mediaType: 'voice' }, ['tIvr', 'nConnected', 'tConnected']],
    ]);
  });
});

/** tHandle values 8, 1, 2, 4, 16 emitted around the interval 02:00-04:00; powers of two make each sum unambiguous. */
const edge: ConversationRecord = {
  conversationId: 'ref-edge',
  conversationStart: at('01:59:00.000'),
  participants: [
    {
      participantId: 'p-edge',
      purpose: 'agent',
      userId: 'U3',
      sessions: [
        {
          sessionId: 's-edge',
          mediaType: 'voice',
          direction: 'outbound',
          metrics: [
            m('tHandle', 8, '01:59:59.999'), // before the interval start: ignored
            m('tHandle', 1, '02:00:00.000'), // exactly the interval start: first bucket
            m('tHandle', 2, '02:59:59.999'), // last ms of the first bucket
            m('tHandle', 4, '03:00:00.000'), // exactly the second bucket's start: second bucket
            m('tHandle', 16, '04:00:00.000'), // exactly the interval end (exclusive): ignored
          ],
        },
      ],
    },
  ],
};

describe('buckets', () => {
  const expected: AggregateResponse = {
    results: [
      {
        group: { mediaType: 'voice' },
        data: [
          {
            interval: '2031-01-15T02:00:00.000Z/2031-01-15T03:00:00.000Z',
            metrics: [{ metric: 'tHandle', stats: { max: 2, min: 1, count: 2, sum: 3 } }],
          },
          {
            interval: '2031-01-15T03:00:00.000Z/2031-01-15T04:00:00.000Z',
            metrics: [{ metric: 'tHandle', stats: { max: 4, min: 4, count: 1, sum: 4 } }],
          },
        ],
      },
    ],
  };

  it('place an emit at a bucket start in that bucket and ignore one at the interval end', () => {
    const answer = referenceAggregate([edge], { interval: '2031-01-15T02:00:00.000Z/2031-01-15T04:00:00.000Z', granularity: 'PT1H' });
    expect(answer).toEqual(expected);
  });

  it('read an interval written with an offset and still answer in UTC', () => {
    const answer = referenceAggregate([edge], {
      interval: '2031-01-15T03:00:00.000+01:00/2031-01-15T05:00:00.000+01:00',
      granularity: 'PT1H',
    });
    expect(answer).toEqual(expected);
  });

  it('leave out buckets without data', () => {
    // PT30M: 02:00 holds 1, 02:30 holds 2, 03:00 holds 4, 03:30 holds nothing and is absent.
    const answer = referenceAggregate([edge], { interval: '2031-01-15T02:00:00.000Z/2031-01-15T04:00:00.000Z', granularity: 'PT30M' });
    expect(answer.results[0]?.data.map((d) => [d.interval.slice(11, 16), d.metrics[0]?.stats])).toEqual([
      ['02:00', { max: 1, min: 1, count: 1, sum: 1 }],
      ['02:30', { max: 2, min: 2, count: 1, sum: 2 }],
      ['03:00', { max: 4, min: 4, count: 1, sum: 4 }],
    ]);
  });

  it('step days and weeks as 24 h and 7 x 24 h of elapsed time', () => {
    const all = { max: 16, min: 1, count: 5, sum: 31 };
    const days = referenceAggregate([edge], { interval: '2031-01-15T00:00:00.000Z/2031-01-17T00:00:00.000Z', granularity: 'P1D' });
    expect(days.results[0]?.data).toEqual([
      { interval: '2031-01-15T00:00:00.000Z/2031-01-16T00:00:00.000Z', metrics: [{ metric: 'tHandle', stats: all }] },
    ]);
    const weeks = referenceAggregate([edge], { interval: '2031-01-13T00:00:00.000Z/2031-01-27T00:00:00.000Z', granularity: 'P1W' });
    expect(weeks.results[0]?.data).toEqual([
      { interval: '2031-01-13T00:00:00.000Z/2031-01-20T00:00:00.000Z', metrics: [{ metric: 'tHandle', stats: all }] },
    ]);
  });
});

describe('duplicates', () => {
  const agentSession = (sessionId: string, metrics: RecordMetric[]) => ({ sessionId, mediaType: 'voice', direction: 'inbound', metrics });
  const first: ConversationRecord = {
    conversationId: 'ref-dup',
    conversationStart: at('05:00:00.000'),
    participants: [
      {
        participantId: 'p-u4',
        purpose: 'agent',
        userId: 'U4',
        sessions: [agentSession('s-dup', [m('tTalk', 1000, '05:00:10.000'), m('nTransferred', 1, '05:00:10.000')])],
      },
    ],
  };
  // A later, more complete version: the same two observations again (one with a different value, which loses),
  // a new tTalk at 05:00:40, and another agent's session whose tTalk shares metric and emitDate but not sessionId.
  const later: ConversationRecord = {
    ...first,
    participants: [
      {
        participantId: 'p-u4',
        purpose: 'agent',
        userId: 'U4',
        sessions: [
          agentSession('s-dup', [m('tTalk', 9999, '05:00:10.000'), m('nTransferred', 1, '05:00:10.000'), m('tTalk', 3000, '05:00:40.000')]),
        ],
      },
      { participantId: 'p-u5', purpose: 'agent', userId: 'U5', sessions: [agentSession('s-dup-2', [m('tTalk', 500, '05:00:10.000')])] },
    ],
  };

  it('count once, with the first value seen', () => {
    const records = [first, first, later];
    // Distinct: tTalk 1000 (s-dup), nTransferred (s-dup), tTalk 3000 (s-dup, 05:00:40), tTalk 500 (s-dup-2).
    expect(observationsFromRecords(records)).toHaveLength(4);
    const answer = referenceAggregate(records, { interval: '2031-01-15T05:00:00.000Z/2031-01-15T05:01:00.000Z' });
    expect(answer.results).toEqual([
      {
        group: { mediaType: 'voice' },
        data: [
          {
            interval: '2031-01-15T05:00:00.000Z/2031-01-15T05:01:00.000Z',
            metrics: [
              { metric: 'tTalk', stats: { max: 3000, min: 500, count: 3, sum: 4500 } },
              { metric: 'nTransferred', stats: { count: 1 } },
            ],
          },
        ],
      },
    ]);
  });
});

describe('oServiceLevel', () => {
  /** A voice conversation on queue Q-sl with ACD metrics and, optionally, one agent's metrics. */
  function queued(id: string, acdMetrics: RecordMetric[], agent?: { userId: string; metrics: RecordMetric[] }): ConversationRecord {
    const session = (sessionId: string, metrics: RecordMetric[]) => ({
      sessionId,
      mediaType: 'voice',
      direction: 'inbound',
      segments: [{ segmentStart: at('06:00:00.000'), queueId: 'Q-sl' }],
      metrics,
    });
    return {
      conversationId: id,
      conversationStart: at('06:00:00.000'),
      participants: [
        { participantId: `${id}-acd`, purpose: 'acd', participantName: 'Support', sessions: [session(`${id}-s-acd`, acdMetrics)] },
        ...(agent
          ? [{ participantId: `${id}-ag`, purpose: 'agent', userId: agent.userId, sessions: [session(`${id}-s-ag`, agent.metrics)] }]
          : []),
      ],
    };
  }

  // tAnswered 2, nOverSla 1, tAbandon 2 (one of them short: tShortAbandon 1), tFlowOut 2. Numerator 2 - 1 = 1.
  const records = [
    queued('sl-ans-1', [m('nOffered', 1, '06:00:10.000')], { userId: 'U1', metrics: [m('tAnswered', 15000, '06:00:25.000')] }),
    queued('sl-ans-2', [m('nOffered', 1, '06:30:00.000')], {
      userId: 'U2',
      metrics: [m('tAnswered', 40000, '06:30:40.000'), m('nOverSla', 1, '06:30:40.000')],
    }),
    queued('sl-short', [m('nOffered', 1, '06:10:00.000'), m('tAbandon', 3000, '06:10:03.000'), m('tShortAbandon', 3000, '06:10:03.000')]),
    queued('sl-long', [m('nOffered', 1, '06:40:00.000'), m('tAbandon', 25000, '06:40:25.000')]),
    queued('sl-flow-1', [m('nOffered', 1, '06:20:00.000'), m('tFlowOut', 30000, '06:20:30.000')]),
    queued('sl-flow-2', [m('nOffered', 1, '06:50:00.000'), m('tFlowOut', 60000, '06:51:00.000')]),
  ];
  const HOUR_INTERVAL = '2031-01-15T06:00:00.000Z/2031-01-15T07:00:00.000Z';

  const configurations: [string, Partial<ServiceLevelSettings>, number, number][] = [
    // [name, settings, denominator, ratio]
    ['flow-outs excluded, short abandons included (default)', {}, 2 + 2, 1 / 4],
    ['flow-outs included, short abandons included', { includeFlowOuts: true }, 2 + 2 + 2, 1 / 6],
    ['flow-outs included, short abandons excluded', { includeFlowOuts: true, includeShortAbandons: false }, 2 + 2 - 1 + 2, 1 / 5],
    ['flow-outs excluded, short abandons excluded', { includeShortAbandons: false }, 2 + 2 - 1, 1 / 3],
  ];

  it.each(configurations)('follows the seed table with %s', (_name, settings, denominator, ratio) => {
    const answer = referenceAggregate(records, { interval: HOUR_INTERVAL, metrics: ['oServiceLevel'], groupBy: ['queueId'] }, settings);
    expect(answer).toEqual({
      results: [
        {
          group: { mediaType: 'voice', queueId: 'Q-sl' },
          data: [{ interval: HOUR_INTERVAL, metrics: [{ metric: 'oServiceLevel', stats: { ratio, numerator: 1, denominator, target: 0.8 } }] }],
        },
      ],
    });
  });

  it('uses the per-queue target only in groups that carry that queueId', () => {
    const settings = { target: 0.7, queues: { 'Q-sl': { target: 0.9 } } };
    const byQueue = referenceAggregate(records, { interval: HOUR_INTERVAL, metrics: ['oServiceLevel'], groupBy: ['queueId'] }, settings);
    expect(byQueue.results[0]?.data[0]?.metrics[0]?.stats).toEqual({ ratio: 0.25, numerator: 1, denominator: 4, target: 0.9 });
    const overall = referenceAggregate(records, { interval: HOUR_INTERVAL, metrics: ['oServiceLevel'] }, settings);
    expect(overall.results[0]?.group).toEqual({ mediaType: 'voice' });
    expect(overall.results[0]?.data[0]?.metrics[0]?.stats).toEqual({ ratio: 0.25, numerator: 1, denominator: 4, target: 0.7 });
  });

  it('is computed in the group without userId from the agents’ components too', () => {
    const answer = referenceAggregate(records, { interval: HOUR_INTERVAL, metrics: ['oServiceLevel', 'tAnswered'], groupBy: ['userId'] });
    expect(answer.results.map((r) => [r.group, r.data[0]?.metrics])).toEqual([
      [{ mediaType: 'voice', userId: 'U1' }, [{ metric: 'tAnswered', stats: timer(15000) }]],
      [{ mediaType: 'voice', userId: 'U2' }, [{ metric: 'tAnswered', stats: timer(40000) }]],
      [{ mediaType: 'voice' }, [{ metric: 'oServiceLevel', stats: { ratio: 0.25, numerator: 1, denominator: 4, target: 0.8 } }]],
    ]);
  });

  it('disappears under a userId filter', () => {
    const answer = referenceAggregate(records, {
      interval: HOUR_INTERVAL,
      metrics: ['oServiceLevel', 'tAnswered'],
      filter: { type: 'and', predicates: [{ dimension: 'userId', value: 'U1' }] },
    });
    expect(answer.results).toEqual([
      { group: { mediaType: 'voice' }, data: [{ interval: HOUR_INTERVAL, metrics: [{ metric: 'tAnswered', stats: timer(15000) }] }] },
    ]);
  });

  it('omits ratio when the denominator is zero but still reports the counts', () => {
    // 06:10-06:20 holds only the short abandon: 0 answered; denominator 0 + 1 - 1 = 0 with short abandons excluded.
    const interval = '2031-01-15T06:10:00.000Z/2031-01-15T06:20:00.000Z';
    const answer = referenceAggregate(records, { interval, metrics: ['oServiceLevel'] }, { includeShortAbandons: false });
    const stats = answer.results[0]?.data[0]?.metrics[0]?.stats;
    expect(stats).toEqual({ numerator: 0, denominator: 0, target: 0.8 });
    expect(stats).not.toHaveProperty('ratio');
  });
});

describe('canonicalize', () => {
  it('sorts results by group key, data by time and metrics by the given order', () => {
    const shuffled: AggregateResponse = {
      results: [
        {
          group: { mediaType: 'voice' },
          data: [
            { interval: '2031-01-15T03:00:00.000Z/2031-01-15T04:00:00.000Z', metrics: [{ metric: 'nOffered', stats: { count: 1 } }] },
            {
              interval: '2031-01-15T02:00:00.000Z/2031-01-15T03:00:00.000Z',
              metrics: [
                { metric: 'tTalk', stats: timer(5) },
                { metric: 'nOffered', stats: { count: 2 } },
              ],
            },
          ],
        },
        { group: { userId: 'U1', mediaType: 'chat' }, data: [{ interval: '2031-01-15T02:00:00.000Z/2031-01-15T03:00:00.000Z', metrics: [] }] },
      ],
    };
    const canonical = canonicalize(shuffled);
    // '{"mediaType":"chat",...' < '{"mediaType":"voice"}'; catalogue order puts nOffered before tTalk.
    expect(canonical.results.map((r) => r.group)).toEqual([{ userId: 'U1', mediaType: 'chat' }, { mediaType: 'voice' }]);
    expect(canonical.results[1]?.data.map((d) => d.interval.slice(11, 13))).toEqual(['02', '03']);
    expect(canonical.results[1]?.data[0]?.metrics.map((x) => x.metric)).toEqual(['nOffered', 'tTalk']);
    expect(canonicalize(shuffled, ['tTalk', 'nOffered']).results[1]?.data[0]?.metrics.map((x) => x.metric)).toEqual(['tTalk', 'nOffered']);
    // The input is left as it was.
    expect(shuffled.results[0]?.group).toEqual({ mediaType: 'voice' });
  });
});

describe('unsupported query features', () => {
  it('throw instead of guessing', () => {
    expect(() => referenceAggregate([main], { interval: MAIN_INTERVAL, timeZone: 'Europe/Berlin' })).toThrow(/UTC/);
    expect(() => referenceAggregate([main], { interval: MAIN_INTERVAL, granularity: 'P1M' })).toThrow(/granularity/);
  });
});
