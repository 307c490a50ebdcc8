import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { DIMENSION_INDEX as D, DIMENSIONS, METRIC_INDEX } from '../../src/analytics/catalog';
import { forgetDictionary } from '../../src/analytics/dictionary';
import { decodeObservations, encodeObservations, DATA_SQL, missingNames } from '../../src/analytics/ingest/observation-codec';
import { ingestRecords } from '../../src/analytics/ingest/observations.store';
import { ingestBodySchema } from '../../src/analytics/ingest/record.schema';
import { toObservations, type DimValues, type Observation } from '../../src/analytics/ingest/to-observations';
import { parseDateTime } from '../../src/analytics/iso8601';
import { ingestOk, queryOk, timer } from './analytics-api';
import { conversation } from './builders';
import { CONVERSATION_ID_SQL } from '../../src/analytics/ingest/conversation-key';

/** An answer's `withoutObservations` when every conversation sent names a catalogue metric. */
const NONE_EMPTY = { count: 0, conversationIds: [] };

const t = (day: number, hms: string) => `2005-03-${String(day).padStart(2, '0')}T${hms}Z`;
const ms = (day: number, hms: string) => Date.parse(t(day, hms));

function dims(values: Partial<Record<(typeof DIMENSIONS)[number], string>>): DimValues {
  const out: DimValues = new Array(DIMENSIONS.length).fill(undefined);
  for (const [dim, value] of Object.entries(values)) out[D[dim as keyof typeof D]] = value;
  return out;
}

/** An agent's answered voice call: tAnswered at 10:00:04 and tHandle at 10:01:34 on `day`. */
function agentCall(day: number, id: string, userId: string, queueId: string) {
  return conversation({
    id,
    start: t(day, '10:00:00.000'),
    participants: [
      {
        purpose: 'agent',
        userId,
        sessions: [
          {
            id: `${id}-agent`,
            segments: [{ start: t(day, '10:00:00.000'), queueId }],
            metrics: [
              ['tAnswered', 4000, t(day, '10:00:04.000')],
              ['tHandle', 90000, t(day, '10:01:34.000')],
            ],
          },
        ],
      },
    ],
  });
}

const userFilter = (userId: string) => ({ type: 'and', predicates: [{ dimension: 'userId', value: userId }] });

describe('observation codec', () => {
  const id = 'conv-7';
  const observations: Observation[] = [
    // Out of emit order on purpose (negative deltas), a UUID, an upper-case UUID (kept as text),
    // catalogue words, a non-ASCII name, the row's own id, absent dimensions, a big value.
    {
      metric: 3,
      emit: 1_110_000_000_500,
      value: 0,
      dims: dims({ conversationId: id, userId: '0a1b2c3d-4e5f-6789-abcd-ef0123456789', mediaType: 'voice', direction: 'inbound' }),
    },
    {
      metric: 7,
      emit: 1_110_000_000_000,
      value: 2 ** 40,
      dims: dims({ conversationId: id, participantName: 'Zoë Ñúñez 山田', queueId: 'ABCDEF01-2345-6789-ABCD-EF0123456789' }),
    },
    {
      metric: 0,
      emit: 1_110_000_999_999,
      value: 127,
      dims: dims({ wrapUpCode: 'x', disconnectType: 'peer', purpose: 'customer', sessionId: 'a'.repeat(300) }),
    },
    // A leading byte-order mark, a lone surrogate, NUL: values are kept exactly.
    {
      metric: 1,
      emit: 1_110_000_000_001,
      value: 5,
      dims: dims({ ani: '\uFEFF ', dnis: 'x\uD800y', wrapUpCode: '\u0000', participantName: '\uFEFF' }),
    },
    {
      metric: 3,
      emit: 1_110_000_000_500,
      value: 128,
      dims: dims({ conversationId: id, userId: '0a1b2c3d-4e5f-6789-abcd-ef0123456789', mediaType: 'voice', direction: 'inbound' }),
    },
  ];
  const base = 1_110_000_000_000;

  it('decodes exactly what it encoded, in order', () => {
    const hex = encodeObservations(observations, base, id);
    expect(hex).toMatch(/^[0-9a-f]+$/);
    expect(decodeObservations(hex, base, id)).toEqual(observations);
    // Hex from SQLite's hex() is upper case.
    expect(decodeObservations(hex.toUpperCase(), base, id)).toEqual(observations);
  });

  it("stores a conversation with UUID ids in a quarter of its observations' JSON", () => {
    const uuid = crypto.randomUUID();
    const record = ingestBodySchema.parse({ conversations: [agentCall(1, uuid, crypto.randomUUID(), crypto.randomUUID())] })
      .conversations[0]!;
    const typical = toObservations(record);
    const binary = encodeObservations(typical, typical[0]!.emit, uuid).length / 2;
    expect(binary).toBeLessThan(JSON.stringify(typical).length * 0.25);
    expect(decodeObservations(encodeObservations(typical, typical[0]!.emit, uuid), typical[0]!.emit, uuid)).toEqual(typical);
  });

  it('handles conversations with many distinct dimension tuples', () => {
    const many: Observation[] = Array.from({ length: 200 }, (_, i) => ({
      metric: i % 40,
      emit: base + i * 1000,
      value: i,
      dims: dims({ conversationId: id, sessionId: `s${i % 70}`, queueId: `q${i % 3}` }),
    }));
    expect(decodeObservations(encodeObservations(many, base, id), base, id)).toEqual(many);
  });
});

describe('storage layout', () => {
  it('stores a conversation as a BLOB and reads it back through a raw query', async () => {
    const id = crypto.randomUUID();
    const user = `u-${crypto.randomUUID()}`;
    await ingestOk([agentCall(3, id, user, 'q-storage')]);
    const row = await env.DB.prepare(
      `SELECT typeof(data) AS type, length(data) AS bytes, ${DATA_SQL} AS data, first_emit FROM conversations WHERE ${CONVERSATION_ID_SQL} = ?1`,
    )
      .bind(id)
      .first<{ type: string; bytes: number; data: string; first_emit: number }>();
    expect(row?.type).toBe('blob');
    // The agent and the queue are named by their dictionary ids (observation-codec.ts, version 4).
    const named = new Set<number>();
    missingNames(row!.data, new Map(), named);
    const { results: entries } = await env.DB.prepare(
      `SELECT id, dim, value FROM dim_values WHERE (dim = 'userId' AND value = ?1) OR (dim = 'queueId' AND value = ?2)`,
    )
      .bind(user, 'q-storage')
      .all<{ id: number; dim: string; value: string }>();
    expect(entries).toHaveLength(2);
    for (const e of entries) expect(named.has(e.id), e.dim).toBe(true);
    const names = new Map<number, string>();
    for (const ref of named) {
      names.set(ref, (await env.DB.prepare('SELECT value FROM dim_values WHERE id = ?1').bind(ref).first<string>('value'))!);
    }
    expect(() => decodeObservations(row!.data, row!.first_emit, id)).toThrow(/dictionary id/);
    expect(
      decodeObservations(row!.data, row!.first_emit, id, names).map((o) => [
        o.metric,
        o.emit,
        o.value,
        o.dims[D.userId],
        o.dims[D.queueId],
      ]),
    ).toEqual([
      [METRIC_INDEX.get('tAnswered'), ms(3, '10:00:04.000'), 4000, user, 'q-storage'],
      [METRIC_INDEX.get('tHandle'), ms(3, '10:01:34.000'), 90000, user, 'q-storage'],
    ]);
    // Ten-minute buckets align to no rollup resolution: answered from the raw rows.
    const res = await queryOk({
      interval: `${t(3, '10:00:00.000')}/${t(3, '10:30:00.000')}`,
      granularity: 'PT10M',
      filter: userFilter(user),
      metrics: ['tAnswered', 'tHandle'],
    });
    expect(res.source).toBe('raw');
    expect(res.results[0].data).toEqual([
      {
        interval: `${t(3, '10:00:00.000')}/${t(3, '10:10:00.000')}`,
        metrics: [
          { metric: 'tAnswered', stats: timer(4000) },
          { metric: 'tHandle', stats: timer(90000) },
        ],
      },
    ]);
  });

  it('keys a UUID conversation by its 16 bytes, another id by its text, and finds a row of before under its text', async () => {
    const uuid = crypto.randomUUID();
    // Any other id is kept as its text, a NUL in it included.
    const other = `C-\u0000-${crypto.randomUUID()}`;
    const old = crypto.randomUUID();
    const user = `u-${crypto.randomUUID()}`;
    await ingestOk([agentCall(5, uuid, user, 'q-keys'), agentCall(5, other, user, 'q-keys'), agentCall(5, old, user, 'q-keys')]);
    // `old` as a row written before 2026-11-27 holds it: its id as text (the rest as ingest wrote it).
    await env.DB.prepare(`UPDATE conversations SET id = ?1 WHERE id = unhex(replace(?1, '-', ''))`).bind(old).run();
    const forms = await env.DB.prepare(
      `SELECT ${CONVERSATION_ID_SQL} AS id, typeof(id) AS type, length(CAST(id AS BLOB)) AS bytes FROM conversations WHERE ${CONVERSATION_ID_SQL} IN (?1, ?2, ?3)
       ORDER BY 1`,
    )
      .bind(uuid, other, old)
      .all<{ id: string; type: string; bytes: number }>();
    expect(forms.results).toEqual(
      [
        { id: uuid, type: 'blob', bytes: 16 },
        { id: other, type: 'text', bytes: other.length },
        { id: old, type: 'text', bytes: 36 },
      ].sort((x, y) => (x.id < y.id ? -1 : 1)),
    );
    // Sent again: every observation is a duplicate, whatever the form of its row (no second row for `old`).
    const again = await ingestRecords(
      env.DB,
      ingestBodySchema.parse({
        conversations: [agentCall(5, uuid, user, 'q-keys'), agentCall(5, other, user, 'q-keys'), agentCall(5, old, user, 'q-keys')],
      }).conversations,
    );
    expect(again).toMatchObject({ observations: 0, duplicates: 6 });
    // A later session of `old` updates its text row in place, and the raw rows answer for all three.
    const later = agentCall(5, old, user, 'q-keys');
    later.participants[0]!.sessions[0]!.sessionId = `${old}-later`;
    later.participants[0]!.sessions[0]!.metrics = [{ name: 'tHandle', value: 5000, emitDate: t(5, '10:02:00.000') }];
    expect(await ingestRecords(env.DB, ingestBodySchema.parse({ conversations: [later] }).conversations)).toMatchObject({
      observations: 1,
    });
    const rows = await env.DB.prepare(`SELECT count(*) AS n FROM conversations WHERE ${CONVERSATION_ID_SQL} = ?1`)
      .bind(old)
      .first<number>('n');
    expect(rows).toBe(1);
    const res = await queryOk({
      interval: `${t(5, '10:00:00.000')}/${t(5, '10:30:00.000')}`,
      granularity: 'PT10M',
      groupBy: ['conversationId'],
      filter: userFilter(user),
      metrics: ['tHandle'],
    });
    expect(res.source).toBe('raw');
    const byConversation = new Map(
      res.results.map((r: { group: { conversationId: string }; data: { metrics: { stats: { count: number } }[] }[] }) => [
        r.group.conversationId,
        r.data[0]!.metrics[0]!.stats.count,
      ]),
    );
    expect(byConversation).toEqual(
      new Map([
        [uuid, 1],
        [other, 1],
        [old, 2],
      ]),
    );
  });

  it('keeps agg_user at 15 (with the cube), 60 and 1440 minutes, and reads quarter hours and hours per user from it', async () => {
    const user = `u-${crypto.randomUUID()}`;
    await ingestOk([agentCall(4, crypto.randomUUID(), user, 'q-storage'), agentCall(4, crypto.randomUUID(), user, 'q-storage')]);
    const { results } = await env.DB.prepare(
      `SELECT DISTINCT a.res FROM agg_user a JOIN dim_values d ON d.id = a.user WHERE d.dim = 'userId' AND d.value = ?1 ORDER BY a.res`,
    )
      .bind(user)
      .all<{ res: number }>();
    expect(results.map((r) => r.res)).toEqual([15, 60, 1440]);
    const quarters = await queryOk({
      interval: `${t(4, '10:00:00.000')}/${t(4, '11:00:00.000')}`,
      granularity: 'PT15M',
      filter: userFilter(user),
      metrics: ['tHandle'],
    });
    expect(quarters.source).toBe('rollup:agg_user@15');
    expect(quarters.results[0].data).toEqual([
      { interval: `${t(4, '10:00:00.000')}/${t(4, '10:15:00.000')}`, metrics: [{ metric: 'tHandle', stats: timer(90000, 90000) }] },
    ]);
    const res = await queryOk({
      interval: `${t(4, '10:00:00.000')}/${t(4, '12:00:00.000')}`,
      granularity: 'PT1H',
      filter: userFilter(user),
      metrics: ['tHandle'],
    });
    expect(res.source).toBe('rollup:agg_user@60');
    expect(res.results[0].data).toEqual([
      { interval: `${t(4, '10:00:00.000')}/${t(4, '11:00:00.000')}`, metrics: [{ metric: 'tHandle', stats: timer(90000, 90000) }] },
    ]);
  });
});

describe('dimension dictionary cache', () => {
  it('notices ids the database does not hold (a replaced database) and plans again', async () => {
    const user = `u-${crypto.randomUUID()}`;
    const queue = `q-${crypto.randomUUID()}`;
    const records = ingestBodySchema.parse({ conversations: [agentCall(6, crypto.randomUUID(), user, queue)] }).conversations;
    await ingestRecords(env.DB, records);
    // The dictionary rows vanish under the isolate's cache, as after a restore to an earlier time.
    await env.DB.prepare(`DELETE FROM dim_values WHERE value IN (?1, ?2)`).bind(user, queue).run();
    const again = ingestBodySchema.parse({ conversations: [agentCall(7, crypto.randomUUID(), user, queue)] }).conversations;
    expect(await ingestRecords(env.DB, again)).toEqual({
      conversations: 1,
      observations: 2,
      duplicates: 0,
      skippedMetrics: {},
      withoutObservations: NONE_EMPTY,
    });
    const res = await queryOk({
      interval: `${t(7, '00:00:00.000')}/${t(8, '00:00:00.000')}`,
      granularity: 'P1D',
      filter: userFilter(user),
      metrics: ['tHandle'],
    });
    expect(res.source).toBe('rollup:agg_user@1440');
    expect(res.results[0].data[0].metrics).toEqual([{ metric: 'tHandle', stats: timer(90000) }]);
    forgetDictionary();
  });
});

describe('instants in records', () => {
  it('reads the common yyyy-MM-ddTHH:mm:ss.SSSZ form exactly as the general ISO parser does', () => {
    const texts = [
      '2026-11-14T09:30:00.000Z',
      '2024-02-29T23:59:59.999Z',
      '2023-02-29T10:00:00.000Z',
      '2026-04-31T10:00:00.000Z',
      '2026-13-01T10:00:00.000Z',
      '2026-00-10T10:00:00.000Z',
      '2026-01-00T10:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-01-01T23:60:00.000Z',
      '2026-01-01T23:59:60.000Z',
      '2999-12-31T23:59:59.999Z',
      '1971-01-01T00:00:00.000Z',
      '2026-1a-01T10:00:00.000Z',
      '2026-01-01t10:00:00.000Z',
    ];
    for (const text of texts) {
      const expected = parseDateTime(text);
      const parsed = ingestBodySchema.safeParse({ conversations: [{ conversationId: 'c', conversationStart: text, participants: [] }] });
      if (typeof expected === 'string') expect(parsed.success, text).toBe(false);
      else expect(parsed.success && parsed.data.conversations[0]!.conversationStart, text).toBe(expected);
    }
    // Every day of 1971-2999 in steps of 997 hours and some minutes, against Date's own calendar.
    for (let ms = Date.UTC(1971, 0, 1); ms < Date.UTC(3000, 0, 1); ms += 997 * 3_600_000 + 61_001) {
      const text = new Date(ms).toISOString();
      const parsed = ingestBodySchema.parse({ conversations: [{ conversationId: 'c', conversationStart: text, participants: [] }] });
      if (parsed.conversations[0]!.conversationStart !== ms) expect(parsed.conversations[0]!.conversationStart, text).toBe(ms);
    }
  });
});
