/**
 * `property` predicates (Genesys' AnalyticsQueryPredicate of type "property") on segment properties
 * (`properties[]` of the segment current at a metric's emit): exists, notExists, a value compared as
 * its propertyType says, a range on numbers. Expectations by hand from the three calls below.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers';
import { ingestOk, query, queryOk, timer } from './analytics-api';

const HOUR = '2002-06-01T10:00:00.000Z/2002-06-01T11:00:00.000Z';
const at = (m: string) => `2002-06-01T10:${m}:00.000Z`;
const call = (id: string, handle: number, properties?: { property: string; propertyType: string; value: string }[]) => ({
  conversationId: id,
  conversationStart: at('00'),
  participants: [
    {
      participantId: `${id}-p`,
      purpose: 'agent',
      userId: 'u-props',
      sessions: [
        {
          sessionId: `${id}-s`,
          mediaType: 'voice',
          direction: 'inbound',
          segments: [{ segmentStart: at('00'), segmentType: 'interact', queueId: 'q-props', ...(properties ? { properties } : {}) }],
          metrics: [{ name: 'tHandle', value: handle, emitDate: at('05') }],
        },
      ],
    },
  ],
});

beforeAll(async () => {
  await ingestOk([
    // A: recorded (recordingId r-1), score 7. B: score 3, not recorded. C: no properties.
    call('props-a', 1000, [
      { property: 'recordingId', propertyType: 'uuid', value: 'r-1' },
      { property: 'score', propertyType: 'integer', value: '7' },
    ]),
    call('props-b', 2000, [{ property: 'score', propertyType: 'integer', value: '3' }]),
    call('props-c', 4000),
  ]);
});

async function handles(predicate: Record<string, unknown>) {
  const res = await queryOk({ interval: HOUR, metrics: ['tHandle'], filter: { type: 'and', predicates: [predicate] } });
  return res.results.map((r: any) => r.data[0].metrics[0].stats);
}

describe('property predicates', () => {
  it('exists and notExists on a property name', async () => {
    expect(await handles({ type: 'property', property: 'recordingId', propertyType: 'uuid', operator: 'exists' })).toEqual([timer(1000)]);
    expect(await handles({ type: 'property', property: 'recordingId', propertyType: 'uuid', operator: 'notExists' })).toEqual([
      timer(2000, 4000),
    ]);
  });

  it('a value compared as its type: text for uuid, a number for integer', async () => {
    expect(await handles({ type: 'property', property: 'recordingId', propertyType: 'uuid', value: 'r-1' })).toEqual([timer(1000)]);
    expect(await handles({ type: 'property', property: 'score', propertyType: 'integer', value: '3' })).toEqual([timer(2000)]);
    expect(await handles({ type: 'property', property: 'score', propertyType: 'real', value: '3.0' })).toEqual([timer(2000)]);
    expect(await handles({ type: 'property', property: 'score', propertyType: 'string', value: '3.0' })).toEqual([]);
  });

  it('a range on a numeric property, and the type inferred from the keys', async () => {
    expect(await handles({ type: 'property', property: 'score', propertyType: 'integer', range: { gte: 5 } })).toEqual([timer(1000)]);
    expect(await handles({ property: 'score', propertyType: 'integer', range: { lt: 10 } })).toEqual([timer(1000, 2000)]);
  });

  it('refuses a range on a text property, an unknown propertyType and a missing value, naming the field', async () => {
    const bad = async (predicate: Record<string, unknown>, field: string) =>
      expectError(
        await query({ interval: HOUR, metrics: ['tHandle'], filter: { type: 'and', predicates: [predicate] } }),
        400,
        'invalid.value',
        field,
      );
    await bad({ type: 'property', property: 'score', propertyType: 'string', range: { gte: 1 } }, 'filter.predicates[0].range');
    await bad({ type: 'property', property: 'score', propertyType: 'number', value: '1' }, 'filter.predicates[0].propertyType');
    await bad({ type: 'property', property: 'score', propertyType: 'integer' }, 'filter.predicates[0].value');
    await bad(
      { type: 'property', property: 'score', propertyType: 'integer', value: '1', dimension: 'queueId' },
      'filter.predicates[0].dimension',
    );
  });
});
