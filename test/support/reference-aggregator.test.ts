import { describe, expect, it } from 'vitest';
import {
  canonicalize,
  observationsFromRecords,
  referenceAggregate,
  type AggregateQuery,
  type AggregateResponse,
  type ConversationRecord,
  type Predicate,
  type RecordMetric,
  type ServiceLevelSettings,
  type SortMetric,
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
    // Issue 23: every division (a list), and interactionType (an acd participant took part).
    const conversation = {
      conversationId: 'ref-main',
      originatingDirection: 'inbound',
      divisionId: ['div-1', 'div-2'],
      interactionType: 'contactCenter',
    };
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
      // Q1 is the queue the call was first offered to (the IVR's own queueId is not an offer); no earlier acd session had it.
      firstQueue: 'true',
      reoffered: 'false',
    });
    const agent = { ...conversation, ...voiceIn, purpose: 'agent', participantName: 'Alice', userId: 'U1', sessionId: 's-agent' };
    // At 01:00:30 the wrap-up segment has not started yet.
    expect(byMetric.get('tAnswered')?.dims).toEqual({ ...agent, queueId: 'Q1', firstQueue: 'true' });
    // At 01:06:00 the wrap-up segment starts exactly then; queueId still comes from the earlier segment.
    expect(byMetric.get('tTalk')?.dims).toEqual({
      ...agent,
      queueId: 'Q1',
      firstQueue: 'true',
      wrapUpCode: 'W-sale',
      disconnectType: 'client',
    });
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
      results: [
        { group: { mediaType: 'voice' }, data: [{ interval: MAIN_INTERVAL, metrics: [{ metric: 'tTalk', stats: timer(330000) }] }] },
      ],
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
          data: [
            { interval: HOUR_INTERVAL, metrics: [{ metric: 'oServiceLevel', stats: { ratio, numerator: 1, denominator, target: 0.8 } }] },
          ],
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

  it('counts only the abandons a metric predicate on tAbandon keeps, other components untouched', () => {
    // tAbandon >= 10000 keeps the 25 s abandon and drops the 3 s one; tAnswered, nOverSla and tShortAbandon are
    // not tAbandon, so the predicate has no opinion on them and they stay. Default: 2 answered + 1 abandon = 3.
    const filter = { type: 'and' as const, predicates: [{ type: 'metric' as const, metric: 'tAbandon', range: { gte: 10000 } }] };
    const answer = referenceAggregate(records, { interval: HOUR_INTERVAL, metrics: ['oServiceLevel', 'tAbandon'], filter });
    expect(answer.results).toEqual([
      {
        group: { mediaType: 'voice' },
        data: [
          {
            interval: HOUR_INTERVAL,
            metrics: [
              { metric: 'oServiceLevel', stats: { ratio: 1 / 3, numerator: 1, denominator: 3, target: 0.8 } },
              { metric: 'tAbandon', stats: timer(25000) },
            ],
          },
        ],
      },
    ]);
    // Short abandons excluded: the tShortAbandon observation is still there (no opinion), so 2 + 1 - 1 = 2.
    const strict = referenceAggregate(
      records,
      { interval: HOUR_INTERVAL, metrics: ['oServiceLevel'], filter },
      { includeShortAbandons: false },
    );
    expect(strict.results[0]?.data[0]?.metrics[0]?.stats).toEqual({ ratio: 0.5, numerator: 1, denominator: 2, target: 0.8 });
  });

  it('changes which answers count under a range on tAnswered, leaving nOverSla alone', () => {
    // tAnswered < 20000 keeps the 15 s answer only; the one nOverSla stays: numerator 1 - 1 = 0, denominator 1 + 2 = 3.
    const answer = referenceAggregate(records, {
      interval: HOUR_INTERVAL,
      metrics: ['oServiceLevel'],
      filter: { type: 'and', predicates: [{ type: 'metric', metric: 'tAnswered', range: { lt: 20000 } }] },
    });
    expect(answer.results[0]?.data[0]?.metrics).toEqual([
      { metric: 'oServiceLevel', stats: { ratio: 0, numerator: 0, denominator: 3, target: 0.8 } },
    ]);
  });

  it('judges a userId branch of an or as false for its components but true for tAnswered itself', () => {
    // or(tAnswered < 20000, userId = U2). For tAnswered: 15 s by the range, 40 s (U2) by userId -> both.
    // For oServiceLevel userId cannot apply: only the 15 s answer passes (range); U2's nOverSla, the abandons
    // and the flow-outs have no opinion from the range and a false userId branch -> dropped. 1/1.
    const answer = referenceAggregate(records, {
      interval: HOUR_INTERVAL,
      metrics: ['oServiceLevel', 'tAnswered'],
      filter: {
        type: 'or',
        predicates: [
          { type: 'metric', metric: 'tAnswered', range: { lt: 20000 } },
          { dimension: 'userId', value: 'U2' },
        ],
      },
    });
    expect(answer.results[0]?.data[0]?.metrics).toEqual([
      { metric: 'oServiceLevel', stats: { ratio: 1, numerator: 1, denominator: 1, target: 0.8 } },
      { metric: 'tAnswered', stats: { max: 40000, min: 15000, count: 2, sum: 55000 } },
    ]);
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
        {
          group: { userId: 'U1', mediaType: 'chat' },
          data: [{ interval: '2031-01-15T02:00:00.000Z/2031-01-15T03:00:00.000Z', metrics: [] }],
        },
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

describe('canonicalize for ranked answers and views', () => {
  const ranked: AggregateResponse = {
    results: [
      {
        group: { mediaType: 'voice', userId: 'U2' },
        data: [{ interval: '2031-01-15T02:00:00.000Z/2031-01-15T03:00:00.000Z', metrics: [] }],
      },
      {
        group: { mediaType: 'voice', userId: 'U1' },
        data: [
          { interval: '2031-01-15T03:00:00.000Z/2031-01-15T04:00:00.000Z', metrics: [], views: [] },
          {
            interval: '2031-01-15T02:00:00.000Z/2031-01-15T03:00:00.000Z',
            metrics: [],
            views: [
              { name: 'zLong', stats: timer(9) },
              { name: 'aShort', stats: timer(1) },
            ],
          },
        ],
      },
    ],
  };

  it('keeps the order of results for topN and bottomN but still sorts data and views', () => {
    const query = { queryType: 'topN', views: [{ name: 'zLong' }, { name: 'aShort' }] };
    const canonical = canonicalize(ranked, undefined, query);
    expect(canonical.results.map((r) => r.group.userId)).toEqual(['U2', 'U1']);
    expect(canonical.results[1]?.data.map((d) => d.interval.slice(11, 13))).toEqual(['02', '03']);
    // Views follow the request's order, and an empty views list is dropped.
    expect(canonical.results[1]?.data[0]?.views?.map((v) => v.name)).toEqual(['zLong', 'aShort']);
    expect(canonical.results[1]?.data[1]).not.toHaveProperty('views');
    expect(canonicalize(ranked, undefined, { queryType: 'bottomN' }).results.map((r) => r.group.userId)).toEqual(['U2', 'U1']);
  });

  it('sorts results by group key for groupBy answers and views by name when no order is given', () => {
    const canonical = canonicalize(ranked);
    expect(canonical.results.map((r) => r.group.userId)).toEqual(['U1', 'U2']);
    expect(canonical.results[0]?.data[0]?.views?.map((v) => v.name)).toEqual(['aShort', 'zLong']);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Metric predicates (issue 6)

const metricIs = (metric: string, range: Record<string, number>) => ({ type: 'metric' as const, metric, range });
const namesOf = (answer: AggregateResponse) => answer.results.map((r) => r.data.map((d) => d.metrics.map((x) => x.metric)));
const ALL_MAIN = ['nOffered', 'tAcd', 'tAnswered', 'tTalk', 'tAcw', 'tIvr', 'nConnected', 'tConnected', 'oServiceLevel'];

describe('metric predicates', () => {
  it('alone, keep the observations of their metric in range and leave every other metric alone', () => {
    const kept = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      filter: { type: 'and', predicates: [metricIs('tTalk', { gte: 60000 })] },
    });
    expect(kept).toEqual(referenceAggregate([main], { interval: MAIN_INTERVAL }));
    expect(namesOf(kept)).toEqual([[ALL_MAIN]]);
    expect(kept.results[0]?.data[0]?.metrics[3]).toEqual({ metric: 'tTalk', stats: timer(330000) });

    const dropped = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      filter: { type: 'and', predicates: [metricIs('tTalk', { lt: 60000 })] },
    });
    expect(namesOf(dropped)).toEqual([[ALL_MAIN.filter((x) => x !== 'tTalk')]]);
  });

  it('apply every bound given, gt and lt exclusive, gte and lte inclusive', () => {
    // tTalk is 330000.
    const cases: [Record<string, number>, boolean][] = [
      [{ gt: 330000 }, false],
      [{ gte: 330000 }, true],
      [{ lt: 330000 }, false],
      [{ lte: 330000 }, true],
      [{ gte: 330000, lte: 330000 }, true],
      [{ gt: 10000, lt: 330000 }, false],
      [{ gt: 10000, lt: 330001 }, true],
      [{ gte: 0, lte: 100 }, false],
    ];
    for (const [range, keptTalk] of cases) {
      const answer = referenceAggregate([main], {
        interval: MAIN_INTERVAL,
        metrics: ['tTalk', 'tAcw'],
        filter: { type: 'and', predicates: [metricIs('tTalk', range)] },
      });
      expect(namesOf(answer), JSON.stringify(range)).toEqual([[keptTalk ? ['tTalk', 'tAcw'] : ['tAcw']]]);
    }
  });

  it('in an or, let the other branches decide for other metrics, and keep their own metric when either holds', () => {
    // or(tTalk >= 60000, queueId = Q1): tTalk true by range; nOffered, tAcd, tAnswered, tAcw, oServiceLevel by Q1;
    // tIvr, nConnected, tConnected: no opinion from the range and queueId cannot apply (false) -> dropped.
    const withQueue = (range: Record<string, number>) =>
      referenceAggregate([main], {
        interval: MAIN_INTERVAL,
        filter: { type: 'or', predicates: [metricIs('tTalk', range), { dimension: 'queueId', value: 'Q1' }] },
      });
    const queueMetrics = ['nOffered', 'tAcd', 'tAnswered', 'tTalk', 'tAcw', 'oServiceLevel'];
    expect(namesOf(withQueue({ gte: 60000 }))).toEqual([[queueMetrics]]);
    // Out of range, tTalk is still kept because its queueId is Q1.
    expect(namesOf(withQueue({ gte: 400000 }))).toEqual([[queueMetrics]]);

    // or(tTalk >= 400000, purpose = ivr): tTalk false on both branches; only tIvr passes.
    const ivr = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      filter: { type: 'or', predicates: [metricIs('tTalk', { gte: 400000 }), { dimension: 'purpose', value: 'ivr' }] },
    });
    expect(ivr.results).toEqual([
      { group: { mediaType: 'voice' }, data: [{ interval: MAIN_INTERVAL, metrics: [{ metric: 'tIvr', stats: timer(20000) }] }] },
    ]);
  });

  it('in an and, drop their own metric out of range while the dimension decides for the rest', () => {
    // and(tTalk >= 400000, purpose = agent): tTalk false; tAnswered, tAcw true; ACD/IVR/customer metrics false.
    // oServiceLevel from the agent's tAnswered (purpose agent): 1/1.
    const answer = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      filter: { type: 'and', predicates: [metricIs('tTalk', { gte: 400000 }), { dimension: 'purpose', value: 'agent' }] },
    });
    expect(answer.results).toEqual([
      {
        group: { mediaType: 'voice' },
        data: [
          {
            interval: MAIN_INTERVAL,
            metrics: [
              { metric: 'tAnswered', stats: timer(10000) },
              { metric: 'tAcw', stats: timer(60000) },
              { metric: 'oServiceLevel', stats: { ratio: 1, numerator: 1, denominator: 1, target: 0.8 } },
            ],
          },
        ],
      },
    ]);
  });

  it('nested in a clause of only metric predicates, have no opinion on other metrics, so the rest of the and decides', () => {
    // and(mediaType = voice, or(tTalk < 60000, tAcw < 60000)): tTalk 330000 and tAcw 60000 fail their ranges;
    // for every other metric the clause has no opinion and is left out, leaving mediaType = voice (true).
    const answer = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      filter: {
        type: 'and',
        predicates: [{ dimension: 'mediaType', value: 'voice' }],
        clauses: [{ type: 'or', predicates: [metricIs('tTalk', { lt: 60000 }), metricIs('tAcw', { lt: 60000 })] }],
      },
    });
    expect(namesOf(answer)).toEqual([[['nOffered', 'tAcd', 'tAnswered', 'tIvr', 'nConnected', 'tConnected', 'oServiceLevel']]]);
  });

  it('keep everything when the whole filter has no opinion, even an or', () => {
    // main has no tHandle, so an or of a tHandle range has no opinion on any observation.
    const answer = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      filter: { type: 'or', predicates: [metricIs('tHandle', { gte: 1 })] },
    });
    expect(namesOf(answer)).toEqual([[ALL_MAIN]]);
    // And a clause that holds only metric predicates leaves an or to its other members.
    const clause = referenceAggregate([main], {
      interval: MAIN_INTERVAL,
      filter: {
        type: 'or',
        predicates: [{ dimension: 'purpose', value: 'customer' }],
        clauses: [{ type: 'and', predicates: [metricIs('tHandle', { gte: 1 })] }],
      },
    });
    expect(namesOf(clause)).toEqual([[['nConnected', 'tConnected']]]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Views (issue 6)

/** One chat agent's talk times: 30 s, 60 s, 90 s, 150 s before 08:30, 300 s and 600 s after; one transfer at 08:10. */
const talks: ConversationRecord = {
  conversationId: 'ref-views',
  conversationStart: at('08:00:00.000'),
  participants: [
    {
      participantId: 'p-v',
      purpose: 'agent',
      userId: 'U7',
      sessions: [
        {
          sessionId: 's-v',
          mediaType: 'chat',
          direction: 'inbound',
          metrics: [
            m('tTalk', 30000, '08:05:00.000'),
            m('tTalk', 60000, '08:10:00.000'),
            m('nTransferred', 1, '08:10:00.000'),
            m('tTalk', 90000, '08:15:00.000'),
            m('tTalk', 150000, '08:20:00.000'),
            m('tTalk', 300000, '08:45:00.000'),
            m('tTalk', 600000, '08:50:00.000'),
          ],
        },
      ],
    },
  ],
};
const VIEW_INTERVAL = '2031-01-15T08:00:00.000Z/2031-01-15T09:00:00.000Z';
const FIRST_HALF = '2031-01-15T08:00:00.000Z/2031-01-15T08:30:00.000Z';
const SECOND_HALF = '2031-01-15T08:30:00.000Z/2031-01-15T09:00:00.000Z';
const shortTalk = { target: 'tTalk', name: 'tShortTalk', function: 'rangeBound' as const, range: { lt: 60000 } };
const midTalk = { target: 'tTalk', name: 'tMidTalk', function: 'rangeBound' as const, range: { gte: 60000, lt: 300000 } };
const longTalk = { target: 'tTalk', name: 'tLongTalk', function: 'rangeBound' as const, range: { gte: 300000 } };

describe('views', () => {
  it('bucket the target’s observations in [gte, lt), with both bounds or one, and leave out empty ones', () => {
    const answer = referenceAggregate([talks], {
      interval: VIEW_INTERVAL,
      granularity: 'PT30M',
      metrics: ['tTalk'],
      views: [shortTalk, midTalk, longTalk],
    });
    expect(answer).toEqual({
      results: [
        {
          group: { mediaType: 'chat' },
          data: [
            {
              interval: FIRST_HALF,
              metrics: [{ metric: 'tTalk', stats: { max: 150000, min: 30000, count: 4, sum: 330000 } }],
              // 60000 is the mid view's gte, so it is not short; long has nothing before 08:30 and is absent.
              views: [
                { name: 'tShortTalk', stats: timer(30000) },
                { name: 'tMidTalk', stats: { max: 150000, min: 60000, count: 3, sum: 300000 } },
              ],
            },
            {
              interval: SECOND_HALF,
              metrics: [{ metric: 'tTalk', stats: { max: 600000, min: 300000, count: 2, sum: 900000 } }],
              // 300000 is the mid view's lt (excluded) and the long view's gte (included).
              views: [{ name: 'tLongTalk', stats: { max: 600000, min: 300000, count: 2, sum: 900000 } }],
            },
          ],
        },
      ],
    });
  });

  it('answer metrics: [] in a bucket that has only views, the target not being requested', () => {
    const answer = referenceAggregate([talks], {
      interval: VIEW_INTERVAL,
      granularity: 'PT30M',
      metrics: ['nTransferred'],
      views: [longTalk],
    });
    expect(answer.results).toEqual([
      {
        group: { mediaType: 'chat' },
        data: [
          { interval: FIRST_HALF, metrics: [{ metric: 'nTransferred', stats: { count: 1 } }] },
          {
            interval: SECOND_HALF,
            metrics: [],
            views: [{ name: 'tLongTalk', stats: { max: 600000, min: 300000, count: 2, sum: 900000 } }],
          },
        ],
      },
    ]);
    expect(answer.results[0]?.data[0]).not.toHaveProperty('views');
  });

  it('are absent when nothing is in range, and add no bucket or group of their own', () => {
    const huge = { target: 'tTalk', name: 'tHugeTalk', function: 'rangeBound' as const, range: { gte: 1_000_000 } };
    const answer = referenceAggregate([talks], { interval: VIEW_INTERVAL, granularity: 'PT30M', metrics: ['tTalk'], views: [huge] });
    expect(answer.results[0]?.data.map((d) => d.interval)).toEqual([FIRST_HALF, SECOND_HALF]);
    for (const entry of answer.results[0]?.data ?? []) expect(entry).not.toHaveProperty('views');
    // Only the empty view and no transfer after 08:30: nothing at all.
    const nothing = referenceAggregate([talks], { interval: SECOND_HALF, metrics: ['nTransferred'], views: [huge] });
    expect(nothing).toEqual({ results: [] });
  });

  it('see only the observations the filter keeps for the target', () => {
    // tTalk < 500000 removes the 600 s talk from both the metric and the view.
    const answer = referenceAggregate([talks], {
      interval: SECOND_HALF,
      metrics: ['tTalk'],
      views: [longTalk],
      filter: { type: 'and', predicates: [metricIs('tTalk', { lt: 500000 })] },
    });
    expect(answer.results[0]?.data).toEqual([
      { interval: SECOND_HALF, metrics: [{ metric: 'tTalk', stats: timer(300000) }], views: [{ name: 'tLongTalk', stats: timer(300000) }] },
    ]);
    // A filter that removes the target removes the view too.
    const none = referenceAggregate([talks], {
      interval: SECOND_HALF,
      metrics: ['nTransferred'],
      views: [longTalk],
      filter: { type: 'and', predicates: [{ dimension: 'userId', value: 'U8' }] },
    });
    expect(none).toEqual({ results: [] });
  });

  it('throw on a count target, a bound-less range, a colliding name or more than ten views', () => {
    const query = (views: unknown[]) => () =>
      referenceAggregate([talks], { interval: VIEW_INTERVAL, metrics: ['tTalk'], views: views as (typeof shortTalk)[] });
    expect(query([{ ...shortTalk, target: 'nTransferred' }])).toThrow(/timer/);
    expect(query([{ ...shortTalk, target: 'oServiceLevel' }])).toThrow(/timer/);
    expect(query([{ ...shortTalk, range: {} }])).toThrow(/bound/);
    expect(query([{ ...shortTalk, range: { gt: 5 } }])).toThrow(/bound/);
    expect(query([{ ...shortTalk, name: 'tTalk' }])).toThrow(/collides/);
    expect(query([shortTalk, { ...midTalk, name: shortTalk.name }])).toThrow(/collides/);
    expect(query(Array.from({ length: 11 }, (_, i) => ({ ...shortTalk, name: `v${i}` })))).toThrow(/views/);
    expect(query(Array.from({ length: 10 }, (_, i) => ({ ...shortTalk, name: `v${i}` })))).not.toThrow();
  });
});

// ---------------------------------------------------------------------------------------------------------------
// topN / bottomN (issue 6)

function agentRecord(userId: string, metrics: RecordMetric[]): ConversationRecord {
  return {
    conversationId: `ref-rank-${userId}`,
    conversationStart: at('10:00:00.000'),
    participants: [
      {
        participantId: `p-${userId}`,
        purpose: 'agent',
        userId,
        sessions: [{ sessionId: `s-${userId}`, mediaType: 'voice', direction: 'inbound', metrics }],
      },
    ],
  };
}

/**
 * tTalk per agent over 10:00-12:00:   sum  count  max  min  average
 *   U-a  100 100 | 100 100            400    4    100  100   100
 *   U-b  350 |                        350    1    350  350   350
 *   U-c  20 | 500                     520    2    500   20   260
 *   U-d  (no tTalk)
 * tAcw: U-b 5, U-c 9, U-d 5. Canonical group order: U-a, U-b, U-c, U-d.
 */
const rankRecords = [
  agentRecord('U-a', [
    m('tTalk', 100, '10:05:00.000'),
    m('tTalk', 100, '10:10:00.000'),
    m('tTalk', 100, '11:05:00.000'),
    m('tTalk', 100, '11:10:00.000'),
  ]),
  agentRecord('U-b', [m('tTalk', 350, '10:20:00.000'), m('tAcw', 5, '10:25:00.000')]),
  agentRecord('U-c', [m('tTalk', 20, '10:30:00.000'), m('tTalk', 500, '11:30:00.000'), m('tAcw', 9, '11:35:00.000')]),
  agentRecord('U-d', [m('tAcw', 5, '10:40:00.000')]),
];
const RANK_INTERVAL = '2031-01-15T10:00:00.000Z/2031-01-15T12:00:00.000Z';
const usersOf = (answer: AggregateResponse) => answer.results.map((r) => r.group.userId);

describe('topN and bottomN', () => {
  const rank = (queryType: 'topN' | 'bottomN', name: string, fn: SortMetric['function'], extra: Partial<AggregateQuery> = {}) =>
    referenceAggregate(rankRecords, {
      interval: RANK_INTERVAL,
      granularity: 'PT1H',
      groupBy: ['userId'],
      metrics: ['tTalk', 'tAcw'],
      queryType,
      sortMetric: { name, function: fn },
      ...extra,
    });

  const orders: [SortMetric['function'], string[], string[]][] = [
    // [function, topN order, bottomN order]; U-d has no tTalk and is last either way.
    ['sum', ['U-c', 'U-a', 'U-b', 'U-d'], ['U-b', 'U-a', 'U-c', 'U-d']],
    ['count', ['U-a', 'U-c', 'U-b', 'U-d'], ['U-b', 'U-c', 'U-a', 'U-d']],
    ['max', ['U-c', 'U-b', 'U-a', 'U-d'], ['U-a', 'U-b', 'U-c', 'U-d']],
    ['min', ['U-b', 'U-a', 'U-c', 'U-d'], ['U-c', 'U-a', 'U-b', 'U-d']],
    ['average', ['U-b', 'U-c', 'U-a', 'U-d'], ['U-a', 'U-c', 'U-b', 'U-d']],
  ];

  it.each(orders)('rank whole groups over all buckets by the %s of the sort metric', (fn, top, bottom) => {
    expect(usersOf(rank('topN', 'tTalk', fn))).toEqual(top);
    expect(usersOf(rank('bottomN', 'tTalk', fn))).toEqual(bottom);
  });

  it('return the ranked groups whole, cut after limit', () => {
    // By the sum over both hours U-c (520) leads; in the first hour alone it would be last (20).
    expect(rank('topN', 'tTalk', 'sum', { limit: 1 })).toEqual({
      results: [
        {
          group: { mediaType: 'voice', userId: 'U-c' },
          data: [
            { interval: '2031-01-15T10:00:00.000Z/2031-01-15T11:00:00.000Z', metrics: [{ metric: 'tTalk', stats: timer(20) }] },
            {
              interval: '2031-01-15T11:00:00.000Z/2031-01-15T12:00:00.000Z',
              metrics: [
                { metric: 'tTalk', stats: timer(500) },
                { metric: 'tAcw', stats: timer(9) },
              ],
            },
          ],
        },
      ],
    });
    expect(usersOf(rank('bottomN', 'tTalk', 'count', { limit: 3 }))).toEqual(['U-b', 'U-c', 'U-a']);
    expect(usersOf(rank('topN', 'tTalk', 'sum', { limit: 4 }))).toEqual(['U-c', 'U-a', 'U-b', 'U-d']);
    expect(usersOf(rank('topN', 'tTalk', 'sum', { limit: 10_000 }))).toEqual(['U-c', 'U-a', 'U-b', 'U-d']);
  });

  it('keep the canonical group order for ties and for the groups lacking the metric', () => {
    // tAcw sums: U-b 5, U-c 9, U-d 5; U-a has none.
    expect(usersOf(rank('topN', 'tAcw', 'sum'))).toEqual(['U-c', 'U-b', 'U-d', 'U-a']);
    expect(usersOf(rank('bottomN', 'tAcw', 'sum'))).toEqual(['U-b', 'U-d', 'U-c', 'U-a']);
  });

  it('read the sort metric for ranking even when it is not requested, and do not return it', () => {
    // Only groups with tAcw data are in the answer: U-b, U-c, U-d; ranked by max tTalk: U-c 500, U-b 350, U-d none.
    const answer = rank('topN', 'tTalk', 'max', { metrics: ['tAcw'] });
    expect(answer.results).toEqual([
      {
        group: { mediaType: 'voice', userId: 'U-c' },
        data: [{ interval: '2031-01-15T11:00:00.000Z/2031-01-15T12:00:00.000Z', metrics: [{ metric: 'tAcw', stats: timer(9) }] }],
      },
      {
        group: { mediaType: 'voice', userId: 'U-b' },
        data: [{ interval: '2031-01-15T10:00:00.000Z/2031-01-15T11:00:00.000Z', metrics: [{ metric: 'tAcw', stats: timer(5) }] }],
      },
      {
        group: { mediaType: 'voice', userId: 'U-d' },
        data: [{ interval: '2031-01-15T10:00:00.000Z/2031-01-15T11:00:00.000Z', metrics: [{ metric: 'tAcw', stats: timer(5) }] }],
      },
    ]);
  });

  it('rank by the sort metric’s observations that the filter keeps', () => {
    // tTalk >= 100 drops U-c's 20: U-c sum 500, min 500. min top: U-c 500, U-b 350, U-a 100.
    const filter = { type: 'and' as const, predicates: [metricIs('tTalk', { gte: 100 })] };
    expect(usersOf(rank('topN', 'tTalk', 'min', { filter }))).toEqual(['U-c', 'U-b', 'U-a', 'U-d']);
  });

  it('throw without a sortMetric, with a calculated one, or with a limit outside 1-10000', () => {
    const base: AggregateQuery = { interval: RANK_INTERVAL, groupBy: ['userId'], metrics: ['tTalk'], queryType: 'topN' };
    expect(() => referenceAggregate(rankRecords, base)).toThrow(/sortMetric/);
    expect(() => referenceAggregate(rankRecords, { ...base, sortMetric: { name: 'oServiceLevel', function: 'sum' } })).toThrow(/sort/);
    expect(() => referenceAggregate(rankRecords, { ...base, sortMetric: { name: 'tTalk', function: 'sum' }, limit: 0 })).toThrow(/limit/);
    expect(() => referenceAggregate(rankRecords, { ...base, sortMetric: { name: 'tTalk', function: 'sum' }, limit: 10_001 })).toThrow(
      /limit/,
    );
    expect(() => referenceAggregate(rankRecords, { ...base, queryType: 'top' })).toThrow(/queryType/);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Time zones (issue 6). Every boundary below is worked out by hand from the zone rules:
// Europe/Berlin CET +01:00, CEST +02:00 from 2024-03-31 01:00Z to 2024-10-27 01:00Z;
// America/New_York EST -05:00, EDT -04:00 from 2024-03-10 07:00Z to 2024-11-03 06:00Z; Asia/Kolkata +05:30 always.

/** tHandle observations at the given instants, with the given values (powers of two, so every sum says which). */
function handledAt(id: string, emits: [string, number][]): ConversationRecord {
  return {
    conversationId: `ref-tz-${id}`,
    conversationStart: emits[0]?.[0] ?? '2024-01-01T00:00:00.000Z',
    participants: [
      {
        participantId: `p-tz-${id}`,
        purpose: 'agent',
        userId: 'U-tz',
        sessions: [
          {
            sessionId: `s-tz-${id}`,
            mediaType: 'voice',
            direction: 'inbound',
            metrics: emits.map(([emitDate, value]) => ({ name: 'tHandle', value, emitDate })),
          },
        ],
      },
    ],
  };
}

/** [bucket interval, sum of tHandle] per bucket with data. */
function bucketSums(records: ConversationRecord[], query: Omit<AggregateQuery, 'metrics'>): [string, number | undefined][] {
  const answer = referenceAggregate(records, { ...query, metrics: ['tHandle'] });
  expect(answer.results.length).toBeLessThanOrEqual(1);
  return (answer.results[0]?.data ?? []).map((d) => [d.interval, (d.metrics[0]?.stats as { sum?: number } | undefined)?.sum]);
}

describe('time zones', () => {
  it('make P1D a 23-hour day in Europe/Berlin on 2024-03-31', () => {
    const records = [
      handledAt('ber-mar', [
        ['2024-03-29T23:00:00.000Z', 1], // Mar 30 00:00 CET
        ['2024-03-30T22:59:59.999Z', 2], // Mar 30 23:59:59.999 CET
        ['2024-03-30T23:00:00.000Z', 4], // Mar 31 00:00 CET
        ['2024-03-31T21:59:59.999Z', 8], // Mar 31 23:59:59.999 CEST
        ['2024-03-31T22:00:00.000Z', 16], // Apr 1 00:00 CEST (24 h of elapsed time would still be Mar 31)
        ['2024-03-31T22:30:00.000Z', 32], // Apr 1 00:30 CEST
      ]),
    ];
    const interval = '2024-03-30T00:00:00+01:00/2024-04-02T00:00:00+02:00';
    expect(bucketSums(records, { interval, granularity: 'P1D', timeZone: 'Europe/Berlin' })).toEqual([
      ['2024-03-29T23:00:00.000Z/2024-03-30T23:00:00.000Z', 1 + 2],
      ['2024-03-30T23:00:00.000Z/2024-03-31T22:00:00.000Z', 4 + 8],
      ['2024-03-31T22:00:00.000Z/2024-04-01T22:00:00.000Z', 16 + 32],
    ]);
  });

  it('make P1D a 25-hour day in Europe/Berlin on 2024-10-27', () => {
    const records = [
      handledAt('ber-oct', [
        ['2024-10-27T22:30:00.000Z', 1], // Oct 27 23:30 CET
        ['2024-10-27T23:00:00.000Z', 2], // Oct 28 00:00 CET
      ]),
    ];
    const interval = '2024-10-26T00:00:00+02:00/2024-10-29T00:00:00+01:00';
    expect(bucketSums(records, { interval, granularity: 'P1D', timeZone: 'Europe/Berlin' })).toEqual([
      ['2024-10-26T22:00:00.000Z/2024-10-27T23:00:00.000Z', 1],
      ['2024-10-27T23:00:00.000Z/2024-10-28T23:00:00.000Z', 2],
    ]);
  });

  it('make P1D a 25-hour day in America/New_York on 2024-11-03', () => {
    const records = [
      handledAt('ny-nov', [
        ['2024-11-03T03:59:59.999Z', 1], // Nov 2 23:59:59.999 EDT
        ['2024-11-04T04:30:00.000Z', 2], // Nov 3 23:30 EST (24 h of elapsed time would make it Nov 4)
        ['2024-11-04T05:00:00.000Z', 4], // Nov 4 00:00 EST
      ]),
    ];
    const interval = '2024-11-02T00:00:00-04:00/2024-11-05T00:00:00-05:00';
    expect(bucketSums(records, { interval, granularity: 'P1D', timeZone: 'America/New_York' })).toEqual([
      ['2024-11-02T04:00:00.000Z/2024-11-03T04:00:00.000Z', 1],
      ['2024-11-03T04:00:00.000Z/2024-11-04T05:00:00.000Z', 2],
      ['2024-11-04T05:00:00.000Z/2024-11-05T05:00:00.000Z', 4],
    ]);
  });

  it('make P1D a 23-hour day in America/New_York on 2024-03-10', () => {
    const records = [
      handledAt('ny-mar', [
        ['2024-03-11T03:59:59.999Z', 1], // Mar 10 23:59:59.999 EDT
        ['2024-03-11T04:30:00.000Z', 2], // Mar 11 00:30 EDT
      ]),
    ];
    const interval = '2024-03-09T00:00:00-05:00/2024-03-12T00:00:00-04:00';
    expect(bucketSums(records, { interval, granularity: 'P1D', timeZone: 'America/New_York' })).toEqual([
      ['2024-03-10T05:00:00.000Z/2024-03-11T04:00:00.000Z', 1],
      ['2024-03-11T04:00:00.000Z/2024-03-12T04:00:00.000Z', 2],
    ]);
  });

  it('make P1M calendar months in America/New_York across the March change', () => {
    const records = [
      handledAt('ny-month', [
        ['2024-03-01T04:59:59.999Z', 1], // Feb 29 23:59:59.999 EST
        ['2024-04-01T03:59:59.999Z', 2], // Mar 31 23:59:59.999 EDT
        ['2024-04-01T04:00:00.000Z', 4], // Apr 1 00:00 EDT
      ]),
    ];
    const interval = '2024-02-01T00:00:00-05:00/2024-05-01T00:00:00-04:00';
    expect(bucketSums(records, { interval, granularity: 'P1M', timeZone: 'America/New_York' })).toEqual([
      ['2024-02-01T05:00:00.000Z/2024-03-01T05:00:00.000Z', 1],
      ['2024-03-01T05:00:00.000Z/2024-04-01T04:00:00.000Z', 2],
      ['2024-04-01T04:00:00.000Z/2024-05-01T04:00:00.000Z', 4],
    ]);
  });

  it('step P1M from the 31st to each month’s last day, counted from the start and not cumulatively', () => {
    // Boundaries Jan 31, Feb 29, Mar 31 (not Mar 29), Apr 30, May 31.
    const records = [
      handledAt('month-end', [
        ['2024-03-30T12:00:00.000Z', 1],
        ['2024-04-29T12:00:00.000Z', 2],
        ['2024-04-30T12:00:00.000Z', 4],
      ]),
    ];
    expect(bucketSums(records, { interval: '2024-01-31T00:00:00Z/2024-05-31T00:00:00Z', granularity: 'P1M' })).toEqual([
      ['2024-02-29T00:00:00.000Z/2024-03-31T00:00:00.000Z', 1],
      ['2024-03-31T00:00:00.000Z/2024-04-30T00:00:00.000Z', 2],
      ['2024-04-30T00:00:00.000Z/2024-05-31T00:00:00.000Z', 4],
    ]);
  });

  it('make P1W run Monday to Monday in local time when the interval starts on a Monday', () => {
    const records = [
      handledAt('week', [
        ['2024-03-31T21:30:00.000Z', 1], // Sunday Mar 31 23:30 CEST
        ['2024-03-31T22:00:00.000Z', 2], // Monday Apr 1 00:00 CEST
      ]),
    ];
    const interval = '2024-03-25T00:00:00+01:00/2024-04-08T00:00:00+02:00';
    expect(bucketSums(records, { interval, granularity: 'P1W', timeZone: 'Europe/Berlin' })).toEqual([
      ['2024-03-24T23:00:00.000Z/2024-03-31T22:00:00.000Z', 1], // a 167-hour week
      ['2024-03-31T22:00:00.000Z/2024-04-07T22:00:00.000Z', 2],
    ]);
  });

  it('run P1D from local midnight to local midnight in the half-hour zone Asia/Kolkata', () => {
    const records = [
      handledAt('kolkata', [
        ['2024-06-01T18:29:59.999Z', 1], // Jun 1 23:59:59.999 IST
        ['2024-06-01T18:30:00.000Z', 2], // Jun 2 00:00 IST
      ]),
    ];
    const interval = '2024-06-01T00:00:00+05:30/2024-06-03T00:00:00+05:30';
    expect(bucketSums(records, { interval, granularity: 'P1D', timeZone: 'Asia/Kolkata' })).toEqual([
      ['2024-05-31T18:30:00.000Z/2024-06-01T18:30:00.000Z', 1],
      ['2024-06-01T18:30:00.000Z/2024-06-02T18:30:00.000Z', 2],
    ]);
  });

  it('move a boundary in the spring-forward gap forward by the gap', () => {
    // From Mar 30 02:30 CET: Mar 31 02:30 does not exist in Berlin -> 03:30 CEST (01:30Z); then Apr 1 02:30 CEST.
    const records = [
      handledAt('gap', [
        ['2024-03-31T01:29:59.999Z', 1],
        ['2024-03-31T01:30:00.000Z', 2],
      ]),
    ];
    const interval = '2024-03-30T02:30:00+01:00/2024-04-01T02:30:00+02:00';
    expect(bucketSums(records, { interval, granularity: 'P1D', timeZone: 'Europe/Berlin' })).toEqual([
      ['2024-03-30T01:30:00.000Z/2024-03-31T01:30:00.000Z', 1],
      ['2024-03-31T01:30:00.000Z/2024-04-01T00:30:00.000Z', 2],
    ]);
  });

  it('put a boundary at a repeated local time on its first occurrence', () => {
    // From Nov 2 01:30 EDT: Nov 3 01:30 happens at 05:30Z (EDT) and 06:30Z (EST) -> 05:30Z; Nov 4 01:30 EST = 06:30Z.
    const records = [
      handledAt('fold', [
        ['2024-11-03T05:29:59.999Z', 1],
        ['2024-11-03T05:30:00.000Z', 2],
      ]),
    ];
    const interval = '2024-11-02T01:30:00-04:00/2024-11-04T01:30:00-05:00';
    expect(bucketSums(records, { interval, granularity: 'P1D', timeZone: 'America/New_York' })).toEqual([
      ['2024-11-02T05:30:00.000Z/2024-11-03T05:30:00.000Z', 1],
      ['2024-11-03T05:30:00.000Z/2024-11-04T06:30:00.000Z', 2],
    ]);
  });

  it('keep hours as elapsed time: a 23-hour local day takes PT1H but not PT12H', () => {
    const records = [
      handledAt('elapsed', [
        ['2024-03-31T00:30:00.000Z', 1],
        ['2024-03-31T01:30:00.000Z', 2],
      ]),
    ];
    const interval = '2024-03-31T00:00:00+01:00/2024-04-01T00:00:00+02:00';
    expect(bucketSums(records, { interval, granularity: 'PT1H', timeZone: 'Europe/Berlin' })).toEqual([
      ['2024-03-31T00:00:00.000Z/2024-03-31T01:00:00.000Z', 1], // 01:00-02:00 CET
      ['2024-03-31T01:00:00.000Z/2024-03-31T02:00:00.000Z', 2], // 03:00-04:00 CEST
    ]);
    expect(() => bucketSums(records, { interval, granularity: 'PT12H', timeZone: 'Europe/Berlin' })).toThrow(/granularity/);
  });

  it('throw when the local days do not land on the interval end, and on an unknown zone', () => {
    // 48 elapsed hours, but Berlin's Mar 30 00:00 + 2 local days is 47 hours later.
    const interval = '2024-03-30T00:00:00+01:00/2024-04-01T00:00:00+01:00';
    expect(() => bucketSums([], { interval, granularity: 'P1D', timeZone: 'Europe/Berlin' })).toThrow(/land/);
    expect(bucketSums([handledAt('utc-48', [['2024-03-31T00:00:00.000Z', 1]])], { interval, granularity: 'P1D' })).toEqual([
      ['2024-03-30T23:00:00.000Z/2024-03-31T23:00:00.000Z', 1],
    ]);
    expect(() => bucketSums([], { interval: '2024-01-31T00:00:00Z/2024-05-30T00:00:00Z', granularity: 'P1M' })).toThrow(/land/);
    expect(() => bucketSums([], { interval, timeZone: 'Mars/Olympus_Mons' })).toThrow(/time zone/);
  });
});

describe('unsupported query features', () => {
  it('throw instead of guessing', () => {
    const q = (extra: Partial<AggregateQuery>) => () => referenceAggregate([main], { interval: MAIN_INTERVAL, ...extra });
    expect(q({ granularity: 'P1DT12H' })).toThrow(/granularity/);
    expect(q({ granularity: 'PT0M' })).toThrow(/granularity/);
    expect(q({ alternateTimeDimension: 'processingTime' })).toThrow(/alternateTimeDimension/);
    expect(q({ filter: { type: 'and', predicates: [{ type: 'segment', dimension: 'x' } as unknown as Predicate] } })).toThrow(
      /predicate type/,
    );
    expect(q({ filter: { type: 'and', predicates: [{ type: 'property', dimension: 'x' } as unknown as Predicate] } })).toThrow(/property/);
    expect(q({ filter: { type: 'and', predicates: [metricIs('oServiceLevel', { gte: 0.5 })] } })).toThrow(/calculated/);
    expect(q({ filter: { type: 'and', predicates: [metricIs('tTalk', {})] } })).toThrow(/bound/);
    expect(q({ filter: { type: 'and', predicates: [{ dimension: 'queueId' }] } })).toThrow(/value/);
    expect(q({ ['queryFilter' as 'filter']: undefined })).toThrow(/queryFilter/);
    // Accepted for compatibility.
    expect(q({ flattenMultivaluedDimensions: true, alternateTimeDimension: 'eventTime' })).not.toThrow();
  });
});
