/**
 * Text that UTF-8 storage cannot keep. A lone surrogate is valid in JSON ("\ud800") and in a JS string,
 * but D1 and Durable Object storage are UTF-8 and turn it into U+FFFD: before src/http/json-body.ts
 * refused it, a room named "a\ud800" was answered 201 and read back as "a\ufffd\ufffd\ufffdb", and two
 * queue ids differing only in a lone surrogate were one group in the rollups and two in the raw rows.
 * Every route behind jsonBody() now refuses such text with 400 naming the field; well-formed text,
 * NUL included, is kept exactly.
 */
import { describe, expect, it } from 'vitest';
import { call } from './support/client';
import { expectErrorAnswer, fieldNames } from './support/fuzz';

const json = (text: string) => ({ body: text, headers: { 'Content-Type': 'application/json' } });

describe('lone surrogates', () => {
  it.each([
    ['a room name', 'POST', '/api/v1/rooms', '{"name":"a\\ud800b"}', 'name'],
    ['a low surrogate alone', 'POST', '/api/v1/rooms', '{"name":"\\udc00"}', 'name'],
    ['a reversed pair', 'POST', '/api/v1/rooms', '{"name":"x","topic":"\\ude00\\ud83d"}', 'topic'],
    ['a token name', 'POST', '/api/v1/tokens', '{"name":"\\udbff","permissions":["chat:read"]}', 'name'],
    ['an object key', 'POST', '/api/v1/rooms', '{"name":"x","\\ud800":1}', '\ud800'],
    [
      'a filter value',
      'POST',
      '/api/v2/analytics/conversations/aggregates/query',
      '{"interval":"2931-01-01T00:00:00Z/P1D","filter":{"type":"and","predicates":[{"dimension":"queueId","value":"q\\ud800"}]}}',
      'filter.predicates[0].value',
    ],
    [
      'an ignored field',
      'POST',
      '/api/v2/analytics/conversations/details/ingest',
      '{"conversations":[],"note":["ok","\\ud800"]}',
      'note[1]',
    ],
    // The escape's hex digits in any case, after other escapes and an escaped backslash.
    ['an upper-case escape', 'POST', '/api/v1/rooms', '{"name":"\\\\u\\u00e9\\uD9FF"}', 'name'],
    ['a mixed-case escape', 'POST', '/api/v1/rooms', '{"name":"x","topic":"\\uDbFf"}', 'topic'],
    ['an escape at the very end of a value', 'POST', '/api/v1/rooms', '{"name":"x","topic":"ok\\uDC0A"}', 'topic'],
  ])('refuses %s with 400 invalid.value naming the field', async (_, method, path, body, field) => {
    const res = await call(method, path, json(body));
    expectErrorAnswer(res, 400, 'invalid.value');
    expect(fieldNames(res)).toEqual([field]);
  });

  it('refuses queue ids that storage would merge, so rollups and raw rows cannot disagree', async () => {
    const record = (id: string, queueId: string) => ({
      conversationId: id,
      conversationStart: '2932-01-01T00:00:00Z',
      participants: [
        {
          participantId: 'p',
          purpose: 'acd',
          sessions: [
            {
              sessionId: 's',
              mediaType: 'voice',
              direction: 'inbound',
              segments: [{ segmentStart: '2932-01-01T00:00:00Z', queueId }],
              metrics: [{ name: 'nOffered', value: 1, emitDate: '2932-01-01T00:00:00Z' }],
            },
          ],
        },
      ],
    });
    const res = await call('POST', '/api/v2/analytics/conversations/details/ingest', {
      json: { conversations: [record('lone-1', 'q\ud800'), record('lone-2', 'q\ud801')] },
    });
    expectErrorAnswer(res, 400, 'invalid.value');
    expect(fieldNames(res)).toEqual(['conversations[0].participants[0].sessions[0].segments[0].queueId']);
  });

  it('names a deep field by its first 32 steps', async () => {
    const res = await call('POST', '/api/v1/rooms', json(`{"name":${'['.repeat(40)}"\\ud800"${']'.repeat(40)}}`));
    expectErrorAnswer(res, 400, 'invalid.value');
    expect(fieldNames(res)).toEqual([`name${'[0]'.repeat(31)}…`]);
  });
});

describe('well-formed text', () => {
  it('keeps escaped surrogate pairs, NUL, RTL marks and combining characters exactly', async () => {
    const name = '😀\u0000\u202e\u0301x';
    const res = await call('POST', '/api/v1/rooms', json('{"name":"\\ud83d\\ude00\\u0000\\u202e\\u0301x"}'));
    expect(res.status).toBe(201);
    expect(res.body.name).toBe(name);
    expect((await call('GET', `/api/v1/rooms/${res.body.id}`)).body.name).toBe(name);
  });

  it('keeps queue ids that differ only after a NUL apart, in the rollups and the raw rows alike', async () => {
    const record = (id: string, queueId: string) => ({
      conversationId: id,
      conversationStart: '2933-01-01T00:00:00Z',
      participants: [
        {
          participantId: 'p',
          purpose: 'acd',
          sessions: [
            {
              sessionId: 's',
              mediaType: 'voice',
              direction: 'inbound',
              segments: [{ segmentStart: '2933-01-01T00:00:00Z', queueId }],
              metrics: [{ name: 'nOffered', value: 1, emitDate: '2933-01-01T00:00:00Z' }],
            },
          ],
        },
      ],
    });
    expect(
      (
        await call('POST', '/api/v2/analytics/conversations/details/ingest', {
          json: { conversations: [record('nul-1', 'q\u0000a'), record('nul-2', 'q\u0000b')] },
        })
      ).status,
    ).toBe(200);
    const interval = '2933-01-01T00:00:00.000Z/2933-01-02T00:00:00.000Z';
    const expected = [
      { group: { mediaType: 'voice', queueId: 'q\u0000a' }, data: [{ interval, metrics: [{ metric: 'nOffered', stats: { count: 1 } }] }] },
      { group: { mediaType: 'voice', queueId: 'q\u0000b' }, data: [{ interval, metrics: [{ metric: 'nOffered', stats: { count: 1 } }] }] },
    ];
    const rollup = await call('POST', '/api/v2/analytics/conversations/aggregates/query', {
      json: { interval, groupBy: ['queueId'], metrics: ['nOffered'] },
    });
    expect(rollup.headers.get('Switchboard-Query-Source')).toMatch(/^rollup/);
    expect(rollup.body.results).toEqual(expected);
    const raw = await call('POST', '/api/v2/analytics/conversations/aggregates/query', {
      json: { interval, groupBy: ['queueId', 'sessionId'], metrics: ['nOffered'] },
    });
    expect(raw.headers.get('Switchboard-Query-Source')).toBe('raw');
    expect(raw.body.results.map((r: { group: { queueId: string } }) => r.group.queueId)).toEqual(['q\u0000a', 'q\u0000b']);
  });
});
