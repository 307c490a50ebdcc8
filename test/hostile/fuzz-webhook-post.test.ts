/**
 * Fuzzing the public webhook post (generic body). Each case makes two rooms and a generic webhook
 * with content mappings (so some posts take the two-room commit), then posts a generated sequence:
 * bodies near `{message, metadata}`, broken JSON, wrong content types, oversize bodies, idempotency
 * keys from a small pool (repeats, conflicts, malformed keys), bursts of concurrent posts and posts
 * to ids that name nothing. Every answer must be the one the README's table gives, and afterwards each
 * room's history must hold exactly the accepted messages, once each, in order, seq 1..n.
 *
 * Lone surrogates are left out here: they are accepted and stored altered (see findings.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Sent } from '../helpers';
import { clip, codePoints, nearSchema, oddText, rawNumber } from './support/arbitraries';
import {
  bodiesAround,
  containsLoneSurrogate,
  describe as describeBody,
  isPlainObject,
  jsonBody,
  NOT_JSON,
  parsed,
  sendBody,
  type Body,
  type Verdict,
} from './support/bodies';
import { call as send } from './support/client';
import { expectWellFormedAnswer, fuzz, fuzzTimeout } from './support/fuzz';

const MAX_BODY = 512 * 1024;
const UUID_LOWER = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Stored {
  markdown: string;
  metadata: string | null;
}

/** What the README's table answers for a body, before the webhook and the gate are consulted. */
function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function bodyVerdict(body: Body, key: { name: string; value: string } | undefined): Verdict | { ok: Stored } {
  const media = (body.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (media !== 'application/json') return { status: 415, codes: ['unsupported.media.type'] };
  if (body.bytes.length > MAX_BODY) return { status: 413, codes: ['payload.too.large'] };
  // The webhook post refuses bytes that are not UTF-8 (they would be stored as U+FFFD).
  if (!isUtf8(body.bytes)) return { status: 400, codes: ['bad.request'] };
  const v = parsed(body);
  if (v === NOT_JSON) return { status: 400, codes: ['bad.request'] };
  if (!isPlainObject(v)) return { status: 400, codes: ['invalid.value'] };
  const { message, metadata } = v;
  // A size limit outranks every other fault (README: refused, never truncated).
  if ((typeof message === 'string' && codePoints(message) > 40_000) || (typeof metadata === 'string' && codePoints(metadata) > 4_000)) {
    return { status: 413, codes: ['payload.too.large'] };
  }
  if (typeof message !== 'string' || message.trim() === '') return { status: 400, codes: ['invalid.value'] };
  if (metadata !== undefined && metadata !== null && typeof metadata !== 'string') return { status: 400, codes: ['invalid.value'] };
  if (key && !/^[\x21-\x7e]{1,255}$/.test(key.value)) return { status: 400, codes: ['invalid.value'] };
  return { ok: { markdown: message, metadata: (metadata as string | null | undefined) ?? null } };
}

/** Routing as the README states it: every room of every matching mapping, once each, in order; else the default. */
function targets(m: Stored, home: string, other: string): string[] {
  const out: string[] = [];
  const add = (ids: string[]) => ids.forEach((id) => out.includes(id) || out.push(id));
  if (m.markdown.includes('#b')) add([other]);
  if (m.metadata === 'both') add([home, other]);
  if (m.metadata?.startsWith('#')) add([other, home]);
  return out.length > 0 ? out : [home];
}

const messageArb = fc
  .oneof(
    { weight: 6, arbitrary: oddText({ minLength: 1, maxLength: 24, wellFormed: true }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '**bold** and `code`',
        '<script>alert(1)</script>',
        '[x](javascript:alert(1))',
        '![i](https://e.x/i.png)',
        'deploy #b done',
        '#b',
        '| a | b |\n|---|---|\n| 1 | 2 |',
        '\u0000\u0000',
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom('x'.repeat(40_000), '😀'.repeat(40_000), ` ${'y'.repeat(39_998)} `) },
  )
  .filter((m) => m.trim() !== '');
const metadataArb = fc.oneof(
  fc.constant(null),
  oddText({ maxLength: 12, wellFormed: true }),
  fc.constantFrom('both', '#tag', '#', 'm'.repeat(4_000), '😀'.repeat(4_000)),
);
const validPost = fc.record({ message: messageArb, metadata: metadataArb }, { requiredKeys: ['message'] });
const postNear = nearSchema(validPost, {
  message: fc.oneof(
    fc.constantFrom('', ' ', '\n\t', '\u3000\u00a0', 'x'.repeat(40_001), '😀'.repeat(40_001), 42, null, true),
    rawNumber,
    fc.constant(['m']),
    fc.constant({ text: 'm' }),
  ),
  metadata: fc.oneof(fc.constantFrom('m'.repeat(4_001), '😀'.repeat(4_001), 7, false, 0), rawNumber, fc.constant(['m']), fc.constant({})),
});

const keyArb = fc.option(
  fc.record({
    name: fc.constantFrom('Idempotency-Key', 'X-GitHub-Delivery'),
    value: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('k1', 'k2', 'k3', 'K1', 'k'.repeat(255), '!~', 'build-4711') },
      { weight: 1, arbitrary: fc.constantFrom('has space', 'k'.repeat(256), '', 'a"b', 'tab\tin') },
    ),
  }),
  { nil: undefined, freq: 2 },
);

type PostOp =
  | { op: 'post'; body: Body; key: { name: string; value: string } | undefined }
  | { op: 'burst'; bodies: Body[] }
  | { op: 'stranger'; id: string; body: Body };
/** Stands for the run's webhook id, known only once the webhook exists. */
const PUBLIC_ID = 'the webhook id';

const opArb: fc.Arbitrary<PostOp> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc
      .tuple(
        bodiesAround(postNear, MAX_BODY).filter((b) => !containsLoneSurrogate(parsed(b))),
        keyArb,
      )
      .map(([body, key]) => ({ op: 'post' as const, body, key })),
  },
  {
    weight: 1,
    arbitrary: fc
      .array(
        fc.tuple(validPost, fc.boolean()).map(([v, ok]) => jsonBody(ok ? v : { ...v, message: '' })),
        { minLength: 2, maxLength: 8 },
      )
      .map((bodies) => ({ op: 'burst' as const, bodies })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.oneof(
          fc.uuid({ version: 4 }),
          fc.constantFrom(
            'not-a-uuid',
            '00000000-0000-4000-8000-00000000000G',
            'ABCDEF00-0000-4000-8000-000000000000',
            'x%2Fy',
            '%00',
            // The webhook's own public id (in every message it posts): it names nothing to post to.
            PUBLIC_ID,
          ),
        ),
        validPost,
      )
      .map(([id, v]) => ({ op: 'stranger' as const, id, body: jsonBody(v) })),
  },
);

/** The effective key: Idempotency-Key, else X-GitHub-Delivery; header values lose surrounding blanks on the wire. */
function headersFor(key: { name: string; value: string } | undefined): Record<string, string> {
  return key ? { [key.name]: key.value } : {};
}
function wireKey(key: { name: string; value: string } | undefined) {
  return key && { name: key.name, value: key.value.replace(/^[ \t]+|[ \t]+$/g, '') };
}

async function history(roomId: string): Promise<(Stored & { seq: number; webhookId: string })[]> {
  const res = await send('GET', `/api/v1/rooms/${roomId}/messages?limit=500`);
  expect(res.status).toBe(200);
  return res.body.entities;
}

describe('fuzzing the webhook post', { timeout: fuzzTimeout(240_000) }, () => {
  it('answers every generated post as the README says and stores exactly the accepted messages, once each, in order', async () => {
    await fuzz(
      'webhook post',
      fc.array(opArb, { minLength: 3, maxLength: 16 }),
      async (ops) => {
        const [home, other] = await Promise.all([
          send('POST', '/api/v1/rooms', { json: { name: 'fuzz home' } }),
          send('POST', '/api/v1/rooms', { json: { name: 'fuzz other' } }),
        ]);
        const rooms = { home: home.body.id as string, other: other.body.id as string };
        const hook = await send('POST', '/api/v1/webhooks', {
          json: {
            name: 'fuzz',
            kind: 'generic',
            roomId: rooms.home,
            rateLimit: { burst: 100_000, perSecond: 100_000 },
            mappings: [
              { field: 'message', match: 'contains', value: '#b', roomIds: [rooms.other] },
              { field: 'metadata', match: 'exact', value: 'both', roomIds: [rooms.home, rooms.other] },
              { field: 'metadata', match: 'prefix', value: '#', roomIds: [rooms.other, rooms.home] },
            ],
          },
        });
        expect(hook.status, JSON.stringify(hook.body)).toBe(201);
        const hookId: string = hook.body.id;
        const path = new URL(hook.body.url).pathname;

        const expected = new Map<string, Stored[]>([
          [rooms.home, []],
          [rooms.other, []],
        ]);
        const keys = new Map<string, { fingerprint: string; answer: unknown }>();
        let notFoundBody: unknown;

        const expectAccepted = (res: Sent, m: Stored, what: string) => {
          expectWellFormedAnswer(res, what);
          expect(res.status, `${what} → ${clip(JSON.stringify(res.body) ?? '', 300)}`).toBe(200);
          const to = targets(m, rooms.home, rooms.other);
          expect(
            res.body.deliveries.map((d: { roomId: string }) => d.roomId),
            what,
          ).toEqual(to);
          for (const d of res.body.deliveries as { messageId: string }[]) expect(d.messageId).toMatch(UUID_LOWER);
        };

        for (const op of ops) {
          if (op.op === 'stranger') {
            const stranger = op.id === PUBLIC_ID ? hookId : op.id;
            const res = await sendBody('POST', `/webhooks/api/v1/webhook/${stranger}`, op.body, { token: null });
            expectWellFormedAnswer(res, `stranger ${op.id}`);
            expect(res.status).toBe(404);
            // One identical body for every id that names nothing (only contextId differs).
            const body = { ...res.body, contextId: undefined };
            notFoundBody ??= body;
            expect(body).toEqual(notFoundBody);
            continue;
          }
          if (op.op === 'burst') {
            const answers = await Promise.all(op.bodies.map((b) => sendBody('POST', path, b, { token: null })));
            const accepted: { m: Stored; seqs: Map<string, number> }[] = [];
            answers.forEach((res, i) => {
              const what = `burst POST ${describeBody(op.bodies[i]!)}`;
              const verdict = bodyVerdict(op.bodies[i]!, undefined);
              if (!('ok' in verdict)) {
                expectWellFormedAnswer(res, what);
                expect(res.status, what).toBe(verdict.status);
                expect(verdict.codes).toContain(res.body.code);
                return;
              }
              expectAccepted(res, verdict.ok, what);
              accepted.push({
                m: verdict.ok,
                seqs: new Map(res.body.deliveries.map((d: { roomId: string; seq: number }) => [d.roomId, d.seq])),
              });
            });
            // Concurrent posts: the room's order is the seq each answer was given.
            for (const [roomId, list] of expected) {
              const mine = accepted.filter((a) => a.seqs.has(roomId)).sort((a, b) => a.seqs.get(roomId)! - b.seqs.get(roomId)!);
              list.push(...mine.map((a) => a.m));
            }
            continue;
          }
          const what = `POST ${describeBody(op.body)} ${op.key ? `${op.key.name}: ${JSON.stringify(op.key.value)}` : ''}`;
          const res = await sendBody('POST', path, op.body, { token: null, headers: headersFor(op.key) });
          const key = wireKey(op.key);
          const verdict = bodyVerdict(op.body, key);
          if (!('ok' in verdict)) {
            expectWellFormedAnswer(res, what);
            expect(res.status, `${what} → ${clip(JSON.stringify(res.body) ?? '', 300)}`).toBe(verdict.status);
            expect(verdict.codes, what).toContain(res.body.code);
            continue;
          }
          const m = verdict.ok;
          const fingerprint = JSON.stringify([m.markdown, m.metadata]);
          const seen = key && keys.get(key.value);
          if (seen && seen.fingerprint !== fingerprint) {
            expectWellFormedAnswer(res, what);
            expect(res.status, what).toBe(409);
            expect(res.body.code).toBe('conflict');
            continue;
          }
          if (seen) {
            // A repeat: the first answer again, byte for byte, and nothing stored.
            expect(res.status, what).toBe(200);
            expect(res.headers.get('Idempotent-Replayed'), what).toBe('true');
            expect(res.body, what).toEqual(seen.answer);
            continue;
          }
          expectAccepted(res, m, what);
          expect(res.headers.get('Idempotent-Replayed')).toBeNull();
          for (const d of res.body.deliveries as { roomId: string; seq: number }[]) {
            const list = expected.get(d.roomId)!;
            list.push(m);
            expect(d.seq, `${what}: seq in ${d.roomId}`).toBe(list.length);
          }
          if (key) keys.set(key.value, { fingerprint, answer: res.body });
        }

        for (const [roomId, list] of expected) {
          const stored = await history(roomId);
          expect(stored.map((s) => s.seq)).toEqual(list.map((_, i) => i + 1));
          expect(stored.map((s) => ({ markdown: s.markdown, metadata: s.metadata }))).toEqual(list);
          for (const s of stored) expect(s.webhookId).toBe(hookId);
        }
      },
      { numRuns: 60, timeLimitMs: 45_000 },
    );
  });
});
