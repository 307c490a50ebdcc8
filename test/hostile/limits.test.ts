/**
 * Every limit in the README, at its edge (accepted) and one past it (refused with the documented
 * status and code), for the limits no other test file covers yet. Where another file already covers
 * one side of a limit, the comment names it and only the missing side is here. "Characters" are code
 * points (an emoji is one); body sizes are bytes of the body as sent.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../src/analytics/catalog';
import { PERMISSIONS } from '../../src/http/permissions';
import type { Sent } from '../helpers';
import { call, callRaw } from './support/client';
import { expectErrorAnswer, expectWellFormedAnswer, fieldNames } from './support/fuzz';

/** An answer's `withoutObservations` when every conversation sent names a catalogue metric. */
const NONE_EMPTY = { count: 0, conversationIds: [] };

const INGEST = '/api/v2/analytics/conversations/details/ingest';
const QUERY = '/api/v2/analytics/conversations/aggregates/query';
const SETTINGS = '/api/v2/analytics/settings/servicelevel';
const KIB = 1024;

/** `{...}` JSON text of `value` grown to exactly `bytes` with blanks before the closing brace (valid JSON, same value). */
function padded(value: object, bytes: number): string {
  const text = JSON.stringify(value);
  const size = new TextEncoder().encode(text).length;
  if (size > bytes) throw new Error(`body already ${size} B, over ${bytes}`);
  return `${text.slice(0, -1)}${' '.repeat(bytes - size)}}`;
}

async function sendText(method: string, path: string, text: string, token?: string | null): Promise<Sent> {
  return call(method, path, { body: text, headers: { 'Content-Type': 'application/json' }, ...(token === undefined ? {} : { token }) });
}

function expectOk(res: Sent, status: number, what: string): void {
  expectWellFormedAnswer(res, what);
  expect(res.status, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(status);
}

function expectRefused(res: Sent, status: number, code: string, field?: string): void {
  expectErrorAnswer(res, status, code);
  if (field !== undefined) expect(fieldNames(res)).toContain(field);
}

const uid = () => crypto.randomUUID().slice(0, 8);

// -------------------------------------------------------------------------------------------------
// Analytics
// -------------------------------------------------------------------------------------------------

/** A one-metric conversation; `patch` changes the record, the participant, the session or the metric. */
function record(opts: { id?: string; emit?: string; record?: object; participant?: object; session?: object; metric?: object } = {}) {
  const emit = opts.emit ?? '2925-06-01T10:00:00.000Z';
  return {
    conversationId: opts.id ?? `lim-${uid()}`,
    conversationStart: emit,
    participants: [
      {
        participantId: 'p1',
        purpose: 'acd',
        sessions: [
          {
            sessionId: 's1',
            mediaType: 'voice',
            direction: 'inbound',
            metrics: [{ name: 'nOffered', value: 1, emitDate: emit, ...opts.metric }],
            ...opts.session,
          },
        ],
        ...opts.participant,
      },
    ],
    ...opts.record,
  };
}

const ingest = (conversations: unknown[]) => call('POST', INGEST, { json: { conversations } });
const F = 'conversations[0]';
const P = `${F}.participants[0]`;
const S = `${P}.sessions[0]`;

describe('ingest record limits (README: 400 naming the field)', () => {
  it.each([
    ['conversationId', (s: string) => record({ record: { conversationId: s } }), `${F}.conversationId`],
    ['participantName', (s: string) => record({ participant: { participantName: s } }), `${P}.participantName`],
    ['sessionId', (s: string) => record({ session: { sessionId: s } }), `${S}.sessionId`],
    [
      'queueId of a segment',
      (s: string) => record({ session: { segments: [{ segmentStart: '2925-06-01T09:00:00Z', queueId: s }] } }),
      `${S}.segments[0].queueId`,
    ],
  ])('takes a %s of 256 characters (emoji count one) and refuses 257 or none', async (_, build, field) => {
    expectOk(await ingest([build(`${uid()}${'😀'.repeat(248)}`)]), 200, '256 characters');
    expectRefused(await ingest([build(`${uid()}${'😀'.repeat(249)}`)]), 400, 'invalid.value', field);
    expectRefused(await ingest([build('')]), 400, 'invalid.value', field);
  });

  it('takes 100 participants and refuses 101', async () => {
    const participants = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ participantId: `p${i}`, purpose: 'customer', sessions: [] }));
    expectOk(await ingest([record({ record: { participants: participants(100) } })]), 200, '100 participants');
    expectRefused(await ingest([record({ record: { participants: participants(101) } })]), 400, 'invalid.value', `${F}.participants`);
  });

  it('takes 100 divisionIds and refuses 101 (a limit the README does not list)', async () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `d${i}`);
    expectOk(await ingest([record({ record: { divisionIds: ids(100) } })]), 200, '100 divisions');
    expectRefused(await ingest([record({ record: { divisionIds: ids(101) } })]), 400, 'invalid.value', `${F}.divisionIds`);
  });

  it('takes 100 sessions per participant and refuses 101', async () => {
    const sessions = (n: number) => Array.from({ length: n }, (_, i) => ({ sessionId: `s${i}`, mediaType: 'chat', direction: 'inbound' }));
    expectOk(await ingest([record({ participant: { sessions: sessions(100) } })]), 200, '100 sessions');
    expectRefused(await ingest([record({ participant: { sessions: sessions(101) } })]), 400, 'invalid.value', `${P}.sessions`);
  });

  it('takes 1,000 segments and 1,000 metrics per session and refuses 1,001 of either', async () => {
    const at = (i: number) => new Date(Date.UTC(2925, 5, 2) + i * 1000).toISOString();
    const segments = (n: number) => Array.from({ length: n }, (_, i) => ({ segmentStart: at(i), queueId: `q${i % 7}` }));
    const metrics = (n: number) => Array.from({ length: n }, (_, i) => ({ name: 'tAcd', value: i, emitDate: at(i) }));
    const ok = await ingest([record({ session: { segments: segments(1000), metrics: metrics(1000) } })]);
    expectOk(ok, 200, '1,000 segments and metrics');
    expect(ok.body).toEqual({ conversations: 1, observations: 1000, duplicates: 0, skippedMetrics: {}, withoutObservations: NONE_EMPTY });
    expectRefused(await ingest([record({ session: { segments: segments(1001) } })]), 400, 'invalid.value', `${S}.segments`);
    expectRefused(await ingest([record({ session: { metrics: metrics(1001) } })]), 400, 'invalid.value', `${S}.metrics`);
  });

  it('takes metric values 0 and 10^12 and refuses -1 and 10^12 + 1', async () => {
    for (const value of [0, 1e12]) expectOk(await ingest([record({ metric: { name: 'tAcd', value } })]), 200, `value ${value}`);
    for (const value of [-1, 1e12 + 1])
      expectRefused(await ingest([record({ metric: { name: 'tAcd', value } })]), 400, 'invalid.value', `${S}.metrics[0].value`);
  });

  it('takes dates from 1971-01-01 to the end of 2999 and refuses a millisecond outside', async () => {
    for (const emit of ['1971-01-01T00:00:00.000Z', '2999-12-31T23:59:59.999Z']) {
      expectOk(await ingest([record({ emit })]), 200, emit);
    }
    for (const emit of ['1970-12-31T23:59:59.999Z', '3000-01-01T00:00:00.000Z']) {
      expectRefused(await ingest([record({ metric: { emitDate: emit } })]), 400, 'invalid.date', `${S}.metrics[0].emitDate`);
      expectRefused(await ingest([record({ record: { conversationStart: emit } })]), 400, 'invalid.date', `${F}.conversationStart`);
    }
  });

  it('takes a body of exactly 5 MB (ingest.test.ts refuses one over it)', async () => {
    const text = padded({ conversations: [record()] }, 5 * KIB * KIB);
    expectOk(await sendText('POST', INGEST, text), 200, '5 MB body');
    expectRefused(await sendText('POST', INGEST, padded({ conversations: [record()] }, 5 * KIB * KIB + 1)), 413, 'payload.too.large');
  });
});

describe('aggregate query limits', () => {
  const DAY = '2925-06-01T00:00:00.000Z/2925-06-02T00:00:00.000Z';

  it('takes every metric once and refuses none, a repeat, or 101 (query-validation.test.ts: repeats)', async () => {
    // Only METRIC_NAMES.length distinct names exist, so "at most 100" cannot be reached without a repeat.
    expect(METRIC_NAMES.length).toBeLessThan(100);
    expectOk(await call('POST', QUERY, { json: { interval: DAY, metrics: [...METRIC_NAMES] } }), 200, 'every metric');
    expectRefused(await call('POST', QUERY, { json: { interval: DAY, metrics: [] } }), 400, 'invalid.value', 'metrics');
    const many = Array.from({ length: 101 }, (_, i) => METRIC_NAMES[i % METRIC_NAMES.length]);
    expectRefused(await call('POST', QUERY, { json: { interval: DAY, metrics: many } }), 400, 'invalid.value', 'metrics');
  });

  it('counts predicates across the filter and its clauses: 100 in all pass, 101 do not', async () => {
    const preds = (n: number, dim: string) => Array.from({ length: n }, (_, i) => ({ dimension: dim, value: `${dim}${i}` }));
    const filter = (top: number, inClause: number) => ({
      type: 'or',
      predicates: preds(top, 'queueId'),
      clauses: [{ type: 'or', predicates: preds(inClause, 'userId') }],
    });
    expectOk(await call('POST', QUERY, { json: { interval: DAY, filter: filter(50, 50) } }), 200, '100 predicates');
    expectRefused(await call('POST', QUERY, { json: { interval: DAY, filter: filter(51, 50) } }), 400, 'invalid.value', 'filter');
  });

  it('takes a topN limit of 1 and refuses 10,001 (query-language.test.ts: 0 and 10,000)', async () => {
    const ranked = { interval: DAY, groupBy: ['queueId'], queryType: 'topN', sortMetric: { name: 'nOffered', function: 'count' } };
    expectOk(await call('POST', QUERY, { json: { ...ranked, limit: 1 } }), 200, 'limit 1');
    expectRefused(await call('POST', QUERY, { json: { ...ranked, limit: 10_001 } }), 400, 'invalid.value', 'limit');
  });

  it('takes a query body of exactly 256 KiB (query-validation.test.ts refuses one over it)', async () => {
    expectOk(await sendText('POST', QUERY, padded({ interval: DAY }, 256 * KIB)), 200, '256 KiB');
    expectRefused(await sendText('POST', QUERY, padded({ interval: DAY }, 256 * KIB + 1)), 413, 'payload.too.large');
  });

  it('refuses an interval text over 200 characters (a limit the README does not list)', async () => {
    expectRefused(
      await call('POST', QUERY, { json: { interval: `${DAY}${' '.repeat(200 - DAY.length + 1)}` } }),
      400,
      'invalid.value',
      'interval',
    );
  });

  it('answers 50,000 groups and refuses 50,001 asking to narrow the query', async () => {
    // 5 conversations × 100 participants × 100 sessions, one observation each: groupBy sessionId gives one group per session.
    const emit = '2926-03-03T03:03:00.000Z';
    const conversation = (c: string, participants: number, sessions: number) => ({
      conversationId: `groups-${c}`,
      conversationStart: emit,
      participants: Array.from({ length: participants }, (_, p) => ({
        participantId: `p${p}`,
        purpose: 'acd',
        sessions: Array.from({ length: sessions }, (_, s) => ({
          sessionId: `${c}.${p}.${s}`,
          mediaType: 'voice',
          direction: 'inbound',
          metrics: [{ name: 'nOffered', value: 1, emitDate: emit }],
        })),
      })),
    });
    const run = uid();
    for (const batch of [
      [0, 1, 2],
      [3, 4],
    ]) {
      const res = await ingest(batch.map((i) => conversation(`${run}-${i}`, 100, 100)));
      expectOk(res, 200, 'ingest 10,000 sessions per conversation');
    }
    const q = { interval: '2926-03-03T00:00:00.000Z/2926-03-04T00:00:00.000Z', groupBy: ['sessionId'], metrics: ['nOffered'] };
    const at = await call('POST', QUERY, { json: q });
    expectOk(at, 200, '50,000 groups');
    expect(at.body.results).toHaveLength(50_000);
    expectOk(await ingest([conversation(`${run}-5`, 1, 1)]), 200, 'one more session');
    const past = await call('POST', QUERY, { json: q });
    expectRefused(past, 400, 'invalid.value');
    expect(past.body.message).toMatch(/narrow|50,?000/i);
  }, 120_000);
});

describe('service-level settings limits', () => {
  let original: unknown;
  beforeAll(async () => {
    original = (await call('GET', SETTINGS)).body;
  });
  afterAll(async () => {
    expect((await call('PUT', SETTINGS, { json: original })).status).toBe(200);
  });
  const base = { includeFlowOuts: false, includeShortAbandons: true, target: 0.8 };

  it('takes targets 0 and 1 and refuses just past either (service-level.test.ts: 1.5 and -1)', async () => {
    for (const target of [0, 1])
      expectOk(await call('PUT', SETTINGS, { json: { ...base, target, queues: { q: { target } } } }), 200, `target ${target}`);
    expectRefused(await call('PUT', SETTINGS, { json: { ...base, target: 1 + Number.EPSILON } }), 400, 'invalid.value', 'target');
    expectRefused(await call('PUT', SETTINGS, { json: { ...base, target: -Number.MIN_VALUE } }), 400, 'invalid.value', 'target');
  });

  it('takes 10,000 queue overrides and refuses 10,001', async () => {
    const queues = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`queue-${i}`, { target: 0.5 }]));
    expectOk(await call('PUT', SETTINGS, { json: { ...base, queues: queues(10_000) } }), 200, '10,000 overrides');
    expect(Object.keys((await call('GET', SETTINGS)).body.queues)).toHaveLength(10_000);
    expectRefused(await call('PUT', SETTINGS, { json: { ...base, queues: queues(10_001) } }), 400, 'invalid.value', 'queues');
  });

  it('takes queue ids of 1 to 256 characters and a body of exactly 1 MiB (limits the README does not list)', async () => {
    expectOk(
      await call('PUT', SETTINGS, { json: { ...base, queues: { ['😀'.repeat(256)]: { target: 1 } } } }),
      200,
      '256-character queue id',
    );
    expectRefused(await call('PUT', SETTINGS, { json: { ...base, queues: { ['😀'.repeat(257)]: { target: 1 } } } }), 400, 'invalid.value');
    expectRefused(await call('PUT', SETTINGS, { json: { ...base, queues: { '': { target: 1 } } } }), 400, 'invalid.value');
    expectOk(await sendText('PUT', SETTINGS, padded({ ...base, queues: {} }, KIB * KIB)), 200, '1 MiB');
    expectRefused(await sendText('PUT', SETTINGS, padded({ ...base, queues: {} }, KIB * KIB + 1)), 413, 'payload.too.large');
  });
});

// -------------------------------------------------------------------------------------------------
// Tokens
// -------------------------------------------------------------------------------------------------

describe('token limits (not in the README)', () => {
  it('takes names of 100 characters and refuses 101', async () => {
    expectOk(await call('POST', '/api/v1/tokens', { json: { name: '😀'.repeat(100), permissions: ['chat:read'] } }), 201, 'name 100');
    expectRefused(
      await call('POST', '/api/v1/tokens', { json: { name: '😀'.repeat(101), permissions: ['chat:read'] } }),
      400,
      'invalid.value',
      'name',
    );
  });

  // Twice the number of permissions there are (PERMISSIONS.length × 2: 14 since chat:write), repeats folded.
  it('takes 1 to twice the permissions there are (repeats folded) and refuses none or one more', async () => {
    const most = PERMISSIONS.length * 2;
    const res = await call('POST', '/api/v1/tokens', { json: { name: 'most', permissions: Array(most).fill('chat:read') } });
    expectOk(res, 201, `${most} permissions`);
    expect(res.body.permissions).toEqual(['chat:read']);
    expectRefused(await call('POST', '/api/v1/tokens', { json: { name: 'none', permissions: [] } }), 400, 'invalid.value', 'permissions');
    expectRefused(
      await call('POST', '/api/v1/tokens', { json: { name: 'one more', permissions: Array(most + 1).fill('chat:read') } }),
      400,
      'invalid.value',
      'permissions',
    );
  });

  it('takes a body of exactly 16 KiB and refuses one byte more with 413 (errors.test.ts: 20,000 bytes)', async () => {
    const body = { name: 'sixteen', permissions: ['chat:read'] };
    expectOk(await sendText('POST', '/api/v1/tokens', padded(body, 16 * KIB)), 201, '16 KiB');
    expectRefused(await sendText('POST', '/api/v1/tokens', padded(body, 16 * KIB + 1)), 413, 'payload.too.large');
  });
});

// -------------------------------------------------------------------------------------------------
// Chat
// -------------------------------------------------------------------------------------------------

async function room(): Promise<string> {
  const res = await call('POST', '/api/v1/rooms', { json: { name: `limits ${uid()}` } });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** A webhook's id (public) and the path of its URL (what posts). */
async function hookFor(roomId: string, extra: object = {}): Promise<{ id: string; path: string }> {
  const res = await call('POST', '/api/v1/webhooks', {
    json: { name: 'limits', kind: 'generic', roomId, rateLimit: { burst: 100_000, perSecond: 100_000 }, ...extra },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id, path: new URL(res.body.url).pathname };
}

const post = (hook: { path: string }, json: unknown, headers: Record<string, string> = {}) =>
  call('POST', hook.path, { token: null, json, headers });

describe('admin body size: 64 KiB', () => {
  it('takes room and webhook bodies of exactly 64 KiB and refuses one byte more with 413', async () => {
    const roomId = await room();
    const hook = await hookFor(roomId);
    const cases: [string, string, object, number][] = [
      ['POST', '/api/v1/rooms', { name: 'padded' }, 201],
      ['PATCH', `/api/v1/rooms/${roomId}`, { topic: 'padded' }, 200],
      ['POST', '/api/v1/webhooks', { name: 'padded', kind: 'generic', roomId }, 201],
      ['PATCH', `/api/v1/webhooks/${hook.id}`, { name: 'padded' }, 200],
    ];
    for (const [method, path, body, status] of cases) {
      expectOk(await sendText(method, path, padded(body, 64 * KIB)), status, `${method} ${path} at 64 KiB`);
      expectRefused(await sendText(method, path, padded(body, 64 * KIB + 1)), 413, 'payload.too.large');
    }
  });
});

describe('names and topics', () => {
  it('take names of 100 characters (rooms, webhooks) and topics of 500; 101 and 501 are refused', async () => {
    const roomRes = await call('POST', '/api/v1/rooms', { json: { name: '😀'.repeat(100), topic: '😀'.repeat(500) } });
    expectOk(roomRes, 201, 'room at the edges');
    expect([...roomRes.body.name]).toHaveLength(100);
    // rooms.test.ts refuses 101-character names and 501-character topics.
    expectOk(
      await call('POST', '/api/v1/webhooks', { json: { name: '😀'.repeat(100), kind: 'generic', roomId: roomRes.body.id } }),
      201,
      'webhook name 100',
    );
    expectRefused(
      await call('POST', '/api/v1/webhooks', { json: { name: '😀'.repeat(101), kind: 'generic', roomId: roomRes.body.id } }),
      400,
      'invalid.value',
      'name',
    );
  });
});

describe('mapping limits', () => {
  it('take 20 mappings of 10 rooms each with values of 1,000 characters, and refuse 21, 11 or 1,001', async () => {
    const rooms = await Promise.all(Array.from({ length: 10 }, () => room()));
    const mapping = (over: object = {}) => ({ field: 'message', match: 'contains', value: 'v'.repeat(1000), roomIds: rooms, ...over });
    const create = (mappings: unknown[]) =>
      call('POST', '/api/v1/webhooks', { json: { name: 'mapped', kind: 'generic', roomId: rooms[0], mappings } });
    expectOk(await create(Array.from({ length: 20 }, () => mapping())), 201, '20 mappings');
    expectOk(await create([mapping({ value: '😀'.repeat(1000) })]), 201, 'a value of 1,000 emoji');
    // The 64 KiB body bounds them too: 20 values of 1,000 four-byte characters are 80 KB on their own.
    expectRefused(await create(Array.from({ length: 20 }, () => mapping({ value: '😀'.repeat(1000) }))), 413, 'payload.too.large');
    expectRefused(await create(Array.from({ length: 21 }, () => mapping())), 400, 'invalid.value', 'mappings');
    expectRefused(await create([mapping({ roomIds: [...rooms, rooms[0]] })]), 400, 'invalid.value', 'mappings[0].roomIds');
    expectRefused(await create([mapping({ value: '😀'.repeat(1001) })]), 400, 'invalid.value', 'mappings[0].value');
    // webhooks.test.ts refuses an empty value and an empty room list.
    expectOk(await create([mapping({ value: 'x', roomIds: [rooms[1]] })]), 201, 'value of 1 character');
  });
});

describe('rate-limit settings', () => {
  it('take burst 1 to 100,000 and perSecond up to 100,000 (any positive amount), and refuse burst 100,001', async () => {
    const roomId = await room();
    for (const rateLimit of [{ burst: 1 }, { burst: 100_000 }, { perSecond: 100_000 }, { perSecond: Number.MIN_VALUE }]) {
      const res = await call('POST', '/api/v1/webhooks', { json: { name: 'rate', kind: 'generic', roomId, rateLimit } });
      expectOk(res, 201, JSON.stringify(rateLimit));
      expect(res.body.rateLimit).toEqual({ burst: 100, perSecond: 10, ...rateLimit });
    }
    // webhooks.test.ts refuses burst 0 and 1.5, perSecond 0 and 100,001.
    expectRefused(
      await call('POST', '/api/v1/webhooks', { json: { name: 'rate', kind: 'generic', roomId, rateLimit: { burst: 100_001 } } }),
      400,
      'invalid.value',
      'rateLimit.burst',
    );
  });

  it('lets a burst of 100 through and answers the 101st post with 429 and Retry-After', async () => {
    const roomId = await room();
    const hook = await hookFor(roomId, { rateLimit: { burst: 100, perSecond: 0.001 } });
    for (let i = 1; i <= 100; i++) expect((await post(hook, { message: `m${i}` })).status, `post ${i}`).toBe(200);
    const limited = await post(hook, { message: 'one too many' });
    expectRefused(limited, 429, 'too.many.requests');
    expect(Number(limited.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
    const stored = await call('GET', `/api/v1/rooms/${roomId}/messages?limit=500`);
    expect(stored.body.entities).toHaveLength(100);
  });
});

describe('the webhook post body', () => {
  it('takes exactly 512 KiB and refuses one byte more (webhook-post.test.ts: 600 KiB)', async () => {
    const hook = await hookFor(await room());
    const send = (bytes: number) =>
      call('POST', hook.path, {
        token: null,
        body: padded({ message: 'edge', padding: '' }, bytes),
        headers: { 'Content-Type': 'application/json' },
      });
    expectOk(await send(512 * KIB), 200, '512 KiB');
    expectRefused(await send(512 * KIB + 1), 413, 'payload.too.large');
  });
});

describe('idempotency keys', () => {
  it('take 1 to 255 printable ASCII characters and refuse none (webhook-post.test.ts: 256 and a blank)', async () => {
    const hook = await hookFor(await room());
    for (const key of ['!', '~', 'k'.repeat(255)])
      expectOk(await post(hook, { message: key }, { 'Idempotency-Key': key }), 200, `key ${key.length}`);
    expectRefused(await post(hook, { message: 'empty key' }, { 'Idempotency-Key': '' }), 400, 'invalid.value', 'Idempotency-Key');
  });

  it('are remembered for 24 hours after the answer and held for at most 15 s while in flight', async () => {
    const hook = await hookFor(await room());
    const before = Date.now();
    expectOk(await post(hook, { message: 'remember me' }, { 'Idempotency-Key': 'ttl' }), 200, 'keyed post');
    const after = Date.now();
    const gate = env.WEBHOOK_GATES.get(env.WEBHOOK_GATES.idFromName(hook.id));
    const done = await runInDurableObject(gate, (_, state) =>
      state.storage.sql.exec<{ state: string; expires_at: number }>("SELECT state, expires_at FROM idempotency WHERE key = 'ttl'").one(),
    );
    expect(done.state).toBe('done');
    expect(done.expires_at).toBeGreaterThanOrEqual(before + 24 * 3_600_000);
    expect(done.expires_at).toBeLessThanOrEqual(after + 24 * 3_600_000);

    // A claim: held (a repeat is "in progress") until 15 s after it was made, then free for a retry.
    const claimAt = Date.now();
    const first = await gate.admit({ rateLimit: { burst: 10, perSecond: 10 }, cost: 1, idempotency: { key: 'flight', fingerprint: 'f' } });
    expect(first.kind).toBe('go');
    expect(
      (await gate.admit({ rateLimit: { burst: 10, perSecond: 10 }, cost: 1, idempotency: { key: 'flight', fingerprint: 'f' } })).kind,
    ).toBe('in-progress');
    const pending = await runInDurableObject(gate, (_, state) =>
      state.storage.sql.exec<{ expires_at: number }>("SELECT expires_at FROM idempotency WHERE key = 'flight'").one(),
    );
    expect(pending.expires_at - claimAt).toBeGreaterThanOrEqual(15_000);
    expect(pending.expires_at - claimAt).toBeLessThanOrEqual(15_000 + (Date.now() - claimAt));
    await runInDurableObject(gate, (_, state) =>
      state.storage.sql.exec("UPDATE idempotency SET expires_at = ? WHERE key = 'flight'", Date.now() - 1),
    );
    expect(
      (await gate.admit({ rateLimit: { burst: 10, perSecond: 10 }, cost: 1, idempotency: { key: 'flight', fingerprint: 'f' } })).kind,
    ).toBe('go');
  });
});

describe('history and replay', () => {
  it('pages 100 messages by default and takes limit 1 and 500 (durability.test.ts: 0 and 501)', async () => {
    const roomId = await room();
    const hook = await hookFor(roomId);
    for (let i = 1; i <= 101; i++) expect((await post(hook, { message: `h${i}` })).status).toBe(200);
    const byDefault = await call('GET', `/api/v1/rooms/${roomId}/messages`);
    expect(byDefault.body.entities).toHaveLength(100);
    expect(byDefault.body.nextAfter).toBe(100);
    const one = await call('GET', `/api/v1/rooms/${roomId}/messages?limit=1`);
    expect([one.body.entities.length, one.body.nextAfter]).toEqual([1, 1]);
    const most = await call('GET', `/api/v1/rooms/${roomId}/messages?limit=500`);
    expect(most.body.entities).toHaveLength(101);
    expect(most.body.nextAfter).toBeUndefined();
  });

  it('takes after= up to 15 digits and refuses 16 (the README says "unbounded")', async () => {
    const roomId = await room();
    expectOk(await call('GET', `/api/v1/rooms/${roomId}/messages?after=${'9'.repeat(15)}`), 200, '15 digits');
    expectRefused(await call('GET', `/api/v1/rooms/${roomId}/messages?after=${'9'.repeat(16)}`), 400, 'invalid.value', 'after');
  });

  it('replays tail=1000 on the WebSocket (live.test.ts refuses 1001), and refuses a ticket over 100 characters with 400', async () => {
    const roomId = await room();
    const res = await callRaw('GET', `/api/v1/rooms/${roomId}/ws?tail=1000`, { headers: { Upgrade: 'websocket' } });
    expect(res.status).toBe(101);
    res.webSocket!.accept();
    res.webSocket!.close(1000, 'done');
    const long = await call('GET', `/api/v1/rooms/${roomId}/ws?ticket=${'t'.repeat(101)}`, {
      token: null,
      headers: { Upgrade: 'websocket' },
    });
    expectRefused(long, 400, 'invalid.value', 'ticket');
  });
});
