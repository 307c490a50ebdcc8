import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createToken, expectError, send } from '../helpers';
import { ingest, ingestOk, INGEST, queryOk, timer } from './analytics-api';
import { conversation } from './builders';
import { ingestRecords } from '../../src/analytics/ingest/observations.store';
import { ingestBodySchema } from '../../src/analytics/ingest/record.schema';
import { CONVERSATION_ID_SQL } from '../../src/analytics/ingest/conversation-key';

/** An answer's `withoutObservations` when every conversation sent names a catalogue metric. */
const NONE_EMPTY = { count: 0, conversationIds: [] };

const t = (day: number, hms: string) => `2004-01-${String(day).padStart(2, '0')}T${hms}Z`;
const dayInterval = (day: number) => `${t(day, '00:00:00.000')}/${t(day + 1, '00:00:00.000')}`;

/**
 * `d1`, but running `interleave` just before each ingest write batch (the one that sets ingest_guard),
 * after the ingest has read and planned: where a concurrent writer can land.
 */
function beforeEachWrite(d1: D1Database, interleave: (write: number) => Promise<void>): D1Database {
  let writes = 0;
  let guarded = false;
  return new Proxy(d1, {
    get(target, key) {
      if (key === 'prepare') {
        return (sql: string) => {
          if (sql.includes('ingest_guard')) guarded = true;
          return target.prepare(sql);
        };
      }
      if (key === 'batch') {
        return async (statements: D1PreparedStatement[]) => {
          if (guarded) {
            guarded = false;
            await interleave(++writes);
          }
          return target.batch(statements);
        };
      }
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** An answered voice call on `day`: ACD offered + tAcd, agent tAnswered (+ more when `complete`). */
function call(day: number, id?: string, complete = false) {
  return conversation({
    id,
    start: t(day, '10:00:00.000'),
    participants: [
      {
        purpose: 'acd',
        sessions: [
          {
            id: `${id}-acd`,
            segments: [{ start: t(day, '10:00:00.000'), queueId: 'q-ingest' }],
            metrics: [
              ['nOffered', 1, t(day, '10:00:00.000')],
              ['tAcd', 4000, t(day, '10:00:04.000')],
            ],
          },
        ],
      },
      {
        purpose: 'agent',
        userId: 'u-ingest',
        sessions: [
          {
            id: `${id}-agent`,
            segments: [{ start: t(day, '10:00:04.000'), queueId: 'q-ingest' }],
            metrics: [
              ['tAnswered', 4000, t(day, '10:00:04.000')],
              ...(complete ? ([['tHandle', 90000, t(day, '10:01:34.000')]] as [string, number, string][]) : []),
            ],
          },
        ],
      },
    ],
  });
}

async function countsOn(day: number) {
  const res = await queryOk({ interval: dayInterval(day), metrics: ['nOffered', 'tAcd', 'tAnswered', 'tHandle'] });
  return res.results;
}

describe('ingest', () => {
  it('answers how many conversations, new observations and duplicates it saw', async () => {
    const a = call(1, crypto.randomUUID());
    const b = call(1, crypto.randomUUID());
    expect(await ingestOk([a, b])).toEqual({
      conversations: 2,
      observations: 6,
      duplicates: 0,
      skippedMetrics: {},
      withoutObservations: NONE_EMPTY,
    });
  });

  it('counts an observation once however often its conversation is re-sent', async () => {
    const id = crypto.randomUUID();
    expect(await ingestOk([call(2, id)])).toEqual({
      conversations: 1,
      observations: 3,
      duplicates: 0,
      skippedMetrics: {},
      withoutObservations: NONE_EMPTY,
    });
    expect(await ingestOk([call(2, id)])).toEqual({
      conversations: 1,
      observations: 0,
      duplicates: 3,
      skippedMetrics: {},
      withoutObservations: NONE_EMPTY,
    });
    // The same record twice in one request: the second copy is all duplicates.
    expect(await ingestOk([call(2, id), call(2, id)])).toEqual({
      conversations: 1,
      observations: 0,
      duplicates: 6,
      skippedMetrics: {},
      withoutObservations: NONE_EMPTY,
    });
    expect(await countsOn(2)).toEqual([
      {
        group: { mediaType: 'voice' },
        data: [
          {
            interval: dayInterval(2),
            metrics: [
              { metric: 'nOffered', stats: { count: 1 } },
              { metric: 'tAcd', stats: timer(4000) },
              { metric: 'tAnswered', stats: timer(4000) },
            ],
          },
        ],
      },
    ]);
  });

  it('adds only what is new when a later, more complete version of a conversation arrives', async () => {
    const id = crypto.randomUUID();
    await ingestOk([call(3, id)]);
    expect(await ingestOk([call(3, id, true)])).toEqual({
      conversations: 1,
      observations: 1,
      duplicates: 3,
      skippedMetrics: {},
      withoutObservations: NONE_EMPTY,
    });
    const [voice] = await countsOn(3);
    expect(voice.data[0].metrics).toEqual([
      { metric: 'nOffered', stats: { count: 1 } },
      { metric: 'tAcd', stats: timer(4000) },
      { metric: 'tAnswered', stats: timer(4000) },
      { metric: 'tHandle', stats: timer(90000) },
    ]);
  });

  it('keeps the first value when a re-sent observation carries a different one (max and min stay exact)', async () => {
    const id = crypto.randomUUID();
    await ingestOk([call(4, id)]);
    const changed = call(4, id);
    changed.participants[0]!.sessions[0]!.metrics[1]!.value = 999_999;
    expect(await ingestOk([changed])).toEqual({
      conversations: 1,
      observations: 0,
      duplicates: 3,
      skippedMetrics: {},
      withoutObservations: NONE_EMPTY,
    });
    const [voice] = await countsOn(4);
    expect(voice.data[0].metrics[1]).toEqual({ metric: 'tAcd', stats: timer(4000) });
  });

  it('re-plans, and never double-counts, when another writer changes a conversation between read and write', async () => {
    const id = crypto.randomUUID();
    const [partial, complete] = ingestBodySchema.parse({ conversations: [call(10, id), call(10, id, true)] }).conversations;
    const attempts: number[] = [];
    const d1 = beforeEachWrite(env.DB, async (attempt) => {
      attempts.push(attempt);
      // The concurrent writer lands the first three observations after our read.
      if (attempt === 1)
        expect(await ingestRecords(env.DB, [partial!])).toEqual({
          conversations: 1,
          observations: 3,
          duplicates: 0,
          skippedMetrics: {},
          withoutObservations: NONE_EMPTY,
        });
    });
    const result = await ingestRecords(d1, [complete!]);
    expect(attempts).toEqual([1, 2]);
    expect(result).toEqual({ conversations: 1, observations: 1, duplicates: 3, skippedMetrics: {}, withoutObservations: NONE_EMPTY });
    const [voice] = await countsOn(10);
    expect(voice.data[0].metrics.map((m: { stats: { count: number } }) => m.stats.count)).toEqual([1, 1, 1, 1]);
  });

  it('never double-counts when the same conversation arrives in concurrent requests', async () => {
    const id = crypto.randomUUID();
    const answers = await Promise.all(Array.from({ length: 8 }, () => ingest([call(5, id, true)])));
    for (const a of answers) expect(a.status).toBe(200);
    expect(answers.reduce((n, a) => n + a.body.observations, 0)).toBe(4);
    const [voice] = await countsOn(5);
    expect(voice.data[0].metrics.map((m: { stats: { count: number } }) => m.stats.count)).toEqual([1, 1, 1, 1]);
  });
});

describe('ingest validation', () => {
  it('names the exact field path of a malformed record and stores nothing of the request', async () => {
    const good = call(6, crypto.randomUUID());
    const bad = call(6, crypto.randomUUID());
    bad.participants[1]!.sessions[0]!.metrics[0]!.emitDate = '2004-02-30T10:00:00Z';
    const res = await ingest([good, good, good, bad]);
    expectError(res, 400, 'invalid.date', 'conversations[3].participants[1].sessions[0].metrics[0].emitDate');
    expect(await countsOn(6)).toEqual([]);
    const stored = await env.DB.prepare(`SELECT count(*) AS n FROM conversations WHERE ${CONVERSATION_ID_SQL} IN (?, ?)`)
      .bind(good.conversationId, bad.conversationId)
      .first<number>('n');
    expect(stored).toBe(0);
  });

  it('stores nothing of a metric outside the catalogue and counts it by name in the answer', async () => {
    const id = crypto.randomUUID();
    const r = call(7, id);
    // A flow metric (the flow aggregate query's), a misspelling and a calculated metric: all well formed.
    r.participants[0]!.sessions[0]!.metrics.push(
      { name: 'nFlow', value: 1, emitDate: t(7, '10:00:01.000') },
      { name: 'nOfferd', value: 1, emitDate: t(7, '10:00:02.000') },
      { name: 'nFlow', value: 1, emitDate: t(7, '10:00:03.000') },
      { name: 'oServiceLevel', value: 1, emitDate: t(7, '10:00:03.000') },
    );
    expect(await ingestOk([r])).toEqual({
      conversations: 1,
      observations: 3,
      duplicates: 0,
      skippedMetrics: { nFlow: 2, nOfferd: 1, oServiceLevel: 1 },
      withoutObservations: NONE_EMPTY,
    });
    const [voice] = await countsOn(7);
    expect(voice.data[0].metrics.map((m: { metric: string }) => m.metric).sort()).toEqual(['nOffered', 'tAcd', 'tAnswered']);
  });

  it('names the conversations of which nothing is stored: no metric of the catalogue in any of their records', async () => {
    const stored = crypto.randomUUID();
    const noMetrics = call(8, crypto.randomUUID());
    for (const p of noMetrics.participants) for (const s of p.sessions) s.metrics = [];
    const flowOnly = call(8, crypto.randomUUID());
    for (const p of flowOnly.participants)
      for (const s of p.sessions) s.metrics = [{ name: 'nFlow', value: 1, emitDate: t(8, '10:00:00.000') }];
    // A conversation is judged by all its records: a second record with metrics makes it stored.
    const laterComplete = crypto.randomUUID();
    const firstPart = call(8, laterComplete);
    for (const p of firstPart.participants) for (const s of p.sessions) s.metrics = [];
    expect(await ingestOk([noMetrics, call(8, stored), flowOnly, firstPart, call(8, laterComplete)])).toEqual({
      conversations: 4,
      observations: 6,
      duplicates: 0,
      skippedMetrics: { nFlow: 2 },
      withoutObservations: { count: 2, conversationIds: [noMetrics.conversationId, flowOnly.conversationId] },
    });

    // Listed up to 100; counted all.
    const many = Array.from({ length: 101 }, () => {
      const r = call(9, crypto.randomUUID());
      for (const p of r.participants) for (const s of p.sessions) s.metrics = [];
      return r;
    });
    const answer = await ingestOk(many);
    expect(answer.withoutObservations).toEqual({ count: 101, conversationIds: many.slice(0, 100).map((r) => r.conversationId) });
    expect(answer.observations).toBe(0);
  });

  it('keeps media types, purposes and directions it does not know, and sessions without a direction', async () => {
    const id = crypto.randomUUID();
    const r = call(11, id);
    r.participants[0]!.sessions[0]!.mediaType = 'internalmessage';
    r.participants[1]!.purpose = 'voicesurveyflow';
    delete (r.participants[1]!.sessions[0] as { direction?: string }).direction;
    expect(await ingestOk([r])).toMatchObject({ conversations: 1, observations: 3 });
    const body = await queryOk({
      interval: dayInterval(11),
      groupBy: ['mediaType', 'direction'],
      metrics: ['nOffered', 'tAnswered'],
      filter: { type: 'or', predicates: [{ dimension: 'conversationId', value: id }] },
    });
    const groups = body.results.map((g: { group: Record<string, string> }) => g.group);
    expect(groups).toContainEqual({ mediaType: 'internalmessage', direction: 'inbound' });
    // The agent session had no direction: its group names none.
    expect(groups).toContainEqual({ mediaType: 'voice' });
  });

  it('reads null as absent for an optional field, as SDK serialisers write unset fields', async () => {
    const r = call(12, crypto.randomUUID()) as unknown as Record<string, unknown>;
    r.conversationEnd = null;
    r.divisionIds = null;
    expect(await ingestOk([r as never])).toMatchObject({ conversations: 1, observations: 3 });
  });

  it('refuses wrong types, a negative or fractional value and a missing conversationId, naming the field', async () => {
    const cases: [(r: ReturnType<typeof call>) => void, string][] = [
      [
        (r) => ((r.participants[0]!.sessions[0]!.metrics[0]! as { name: unknown }).name = 7),
        'conversations[0].participants[0].sessions[0].metrics[0].name',
      ],
      [(r) => (r.participants[0]!.sessions[0]!.metrics[1]!.value = -5), 'conversations[0].participants[0].sessions[0].metrics[1].value'],
      [(r) => (r.participants[0]!.sessions[0]!.metrics[1]!.value = 1.5), 'conversations[0].participants[0].sessions[0].metrics[1].value'],
      [
        (r) => ((r.participants[1]!.sessions[0]! as { mediaType: unknown }).mediaType = ['voice']),
        'conversations[0].participants[1].sessions[0].mediaType',
      ],
      [(r) => delete (r as Partial<typeof r>).conversationId, 'conversations[0].conversationId'],
      [(r) => ((r as { participants: unknown }).participants = 'none'), 'conversations[0].participants'],
    ];
    for (const [mutate, field] of cases) {
      const r = call(7, crypto.randomUUID());
      mutate(r);
      expectError(await ingest([r]), 400, 'invalid.value', field);
    }
  });

  it('names every refused record of a batch, by index and conversationId, and stores none of the batch', async () => {
    const records = Array.from({ length: 5 }, () => call(13, crypto.randomUUID()));
    records[1]!.participants[0]!.sessions[0]!.metrics[0]!.emitDate = '2004-01-1T10:00:00Z';
    (records[3]! as { participants: unknown }).participants = {};
    const res = await ingest(records);
    expectError(res, 400, 'invalid.date', 'conversations[1].participants[0].sessions[0].metrics[0].emitDate');
    expect(res.body.message).toContain('2 of 5 conversations');
    expect(res.body.errors.map((e: { entityId: string; status: number }) => [e.entityId, e.status])).toEqual([
      [records[1]!.conversationId, 400],
      [records[3]!.conversationId, 400],
    ]);
    expect(res.body.errors[1].code).toBe('invalid.value');
    expect(res.body.errors[1].message).toContain(`conversations[3] (${records[3]!.conversationId})`);
    expect(res.body.errors[1].details).toEqual([{ errorCode: 'invalid.value', fieldName: 'conversations[3].participants' }]);
    expect(await countsOn(13)).toEqual([]);
  });

  it('accepts 1,000 conversations and answers 413 for 1,001', async () => {
    const many = Array.from({ length: 1000 }, () => call(8, crypto.randomUUID()));
    expect(await ingestOk(many)).toMatchObject({ conversations: 1000, observations: 3000 });
    const tooMany = Array.from({ length: 1001 }, () => call(9, crypto.randomUUID()));
    expectError(await ingest(tooMany), 413, 'payload.too.large', 'conversations');
    expect(await countsOn(9)).toEqual([]);
  });

  it('answers 413 for a body over 5 MB', async () => {
    const body = JSON.stringify({ conversations: [], padding: 'x'.repeat(5 * 1024 * 1024) });
    expectError(await send('POST', INGEST, { body, headers: { 'Content-Type': 'application/json' } }), 413, 'payload.too.large');
  });

  it('answers 415 for a body that is not JSON and 400 for broken JSON', async () => {
    expectError(await send('POST', INGEST, { body: 'a,b', headers: { 'Content-Type': 'text/csv' } }), 415, 'unsupported.media.type');
    expectError(
      await send('POST', INGEST, { body: '{"conversations": [', headers: { 'Content-Type': 'application/json; charset=utf-8' } }),
      400,
      'bad.request',
    );
    expectError(await send('POST', INGEST, { json: { conversations: {} } }), 400, 'invalid.value', 'conversations');
  });

  it('needs analytics:conversation:ingest', async () => {
    expectError(await ingest([], null as unknown as string), 401, 'authentication.required');
    const viewer = await createToken(['analytics:conversationAggregate:view']);
    expectError(await ingest([], viewer.token), 403, 'missing.permissions', 'analytics:conversation:ingest');
    const writer = await createToken(['analytics:conversation:ingest']);
    expect((await ingest([], writer.token)).body).toEqual({
      conversations: 0,
      observations: 0,
      duplicates: 0,
      skippedMetrics: {},
      withoutObservations: NONE_EMPTY,
    });
  });
});
