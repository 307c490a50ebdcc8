/**
 * Fuzzing the admin routes (tokens, rooms, webhooks) with sequences of generated requests. Each case
 * runs a sequence against the live Worker and a small model written from the README; every answer
 * must have the common shape (support/fuzz.ts), its status must be the one the model predicts, and
 * afterwards the stored list must be exactly the accepted creates, patches, rotations and deletes.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Sent } from '../helpers';
import { call as send } from './support/client';
import { createRoom } from '../chat/helpers';
import { clip, codePoints, hasLoneSurrogate, nearSchema, numberishString, oddText, rawNumber } from './support/arbitraries';
import {
  bodiesAround,
  RawJson,
  describe as describeBody,
  isPlainObject,
  parsed,
  sendBody,
  transportVerdict,
  type Body,
  type Verdict,
} from './support/bodies';
import { expectWellFormedAnswer, fuzz, fuzzTimeout } from './support/fuzz';

const KIB = 1024;
const PERMISSIONS = [
  'analytics:conversationAggregate:view',
  'analytics:conversation:ingest',
  'analytics:settings:edit',
  'tokens:manage',
  'chat:admin',
  'chat:read',
  'chat:write',
];
/** A token names 1 to twice as many permissions as there are (repeats folded). */
const MOST_PERMISSIONS = PERMISSIONS.length * 2;
const KINDS = ['generic', 'jenkins', 'jira', 'github', 'bitbucket', 'salesforce', 'slack', 'discord'];
const SIGNED_KINDS = ['github', 'bitbucket', 'jira'];
const UUID_LOWER = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const INVALID: Verdict = { status: 400, codes: ['invalid.value'] };

type Outcome<T> = Verdict | { ok: T };
const isOk = <T>(o: Outcome<T>): o is { ok: T } => 'ok' in o;

/** Checks an answer against the model's verdict (and the common property). */
function expectVerdict(res: Sent, expected: Verdict | number, what: string): void {
  expectWellFormedAnswer(res, what);
  const status = typeof expected === 'number' ? expected : expected.status;
  expect(res.status, `${what} → ${res.status} ${clip(JSON.stringify(res.body) ?? '', 400)}`).toBe(status);
  if (typeof expected !== 'number')
    expect(expected.codes, `${what} → ${clip(JSON.stringify(res.body) ?? '', 400)}`).toContain(res.body.code);
}

/** A trimmed text field: `min`..`max` characters (code points: an emoji is one) after trim. */
function trimmedText(v: unknown, min: number, max: number): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return codePoints(t) >= min && codePoints(t) <= max ? t : undefined;
}

function onlyKeys(v: Record<string, unknown>, allowed: readonly string[]): boolean {
  return Object.keys(v).every((k) => allowed.includes(k));
}

/** Names and topics around their limits, in odd Unicode (an emoji is one character, two UTF-16 units). */
const nameArb = fc
  .oneof(
    { weight: 4, arbitrary: oddText({ minLength: 1, maxLength: 16, wellFormed: true }) },
    { weight: 1, arbitrary: fc.constantFrom('x'.repeat(100), 'é'.repeat(100), '😀'.repeat(100), ' padded ', '\u00a0x\u00a0', '\u0000') },
  )
  .filter((n) => codePoints(n.trim()) >= 1);
const wrongNameArb = fc.oneof(
  fc.constantFrom('x'.repeat(101), '😀'.repeat(101), '', ' \t\n', '\u3000'),
  oddText({ minLength: 1, maxLength: 4 }).filter(hasLoneSurrogate),
);
const topicArb = fc.oneof(
  fc.constant(null),
  oddText({ maxLength: 16, wellFormed: true }),
  fc.constantFrom('', 't'.repeat(500), '😀'.repeat(500), ` ${'t'.repeat(500)} `),
);
const wrongTopicArb = fc.oneof(
  fc.constantFrom('t'.repeat(501), '😀'.repeat(501)),
  oddText({ minLength: 1, maxLength: 4 }).filter(hasLoneSurrogate),
);

function pathId(id: string): string {
  return encodeURIComponent(id);
}

/** Ids that name nothing: unknown UUIDs, wrong case, near misses, path tricks. */
const strangeIdArb = fc.oneof(
  fc.uuid({ version: 4 }),
  fc.constantFrom(
    'not-a-uuid',
    '00000000-0000-0000-0000-000000000000',
    'FFFFFFFF-FFFF-4FFF-8FFF-FFFFFFFFFFFF',
    '..',
    '%00',
    ' ',
    '😀',
    'a'.repeat(300),
    '1 OR 1=1',
    "'; DROP TABLE rooms; --",
  ),
  oddText({ minLength: 1, maxLength: 8, wellFormed: true }),
);

// -----------------------------------------------------------------------------------------------
// Tokens
// -----------------------------------------------------------------------------------------------

interface TokenModel {
  name: string;
  permissions: string[];
  revoked: boolean;
}

const permissionsArb = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.constantFrom(...PERMISSIONS), { minLength: 1, maxLength: 4 }) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...PERMISSIONS), { minLength: MOST_PERMISSIONS, maxLength: MOST_PERMISSIONS }) },
);
const wrongPermissionsArb = fc.oneof(
  fc.constant([]),
  fc.array(fc.constantFrom(...PERMISSIONS), { minLength: MOST_PERMISSIONS + 1, maxLength: MOST_PERMISSIONS + 1 }),
  fc.array(fc.oneof(fc.constantFrom(...PERMISSIONS), fc.constantFrom('chat:*', 'CHAT:ADMIN', 'admin', ' chat:read', '')), {
    minLength: 1,
    maxLength: 3,
  }),
);
const tokenNear = nearSchema(fc.record({ name: nameArb, permissions: permissionsArb }), {
  name: wrongNameArb,
  permissions: wrongPermissionsArb,
});

function tokenVerdict(body: Body): Outcome<{ name: string; permissions: string[] }> {
  const t = transportVerdict(body, 16 * KIB);
  if (t) return t;
  const v = parsed(body);
  if (!isPlainObject(v)) return INVALID;
  const name = trimmedText(v.name, 1, 100);
  const p = v.permissions;
  if (name === undefined || !Array.isArray(p) || p.length < 1 || p.length > MOST_PERMISSIONS) return INVALID;
  if (!p.every((x) => typeof x === 'string' && PERMISSIONS.includes(x))) return INVALID;
  return { ok: { name, permissions: [...new Set(p as string[])] } };
}

type TokenOp = { op: 'create'; body: Body } | { op: 'revoke'; target: number } | { op: 'revoke-strange'; id: string };

describe('fuzzing tokens', { timeout: fuzzTimeout(240_000) }, () => {
  it('answers every generated token request as the README says and lists exactly the accepted tokens', async () => {
    const opArb: fc.Arbitrary<TokenOp> = fc.oneof(
      { weight: 8, arbitrary: bodiesAround(tokenNear, 16 * KIB).map((body) => ({ op: 'create' as const, body })) },
      { weight: 1, arbitrary: fc.nat(20).map((target) => ({ op: 'revoke' as const, target })) },
      { weight: 1, arbitrary: strangeIdArb.map((id) => ({ op: 'revoke-strange' as const, id })) },
    );
    await fuzz(
      'tokens',
      fc.array(opArb, { minLength: 4, maxLength: 14 }),
      async (ops) => {
        const model = new Map<string, TokenModel>();
        const order: string[] = [];
        for (const op of ops) {
          if (op.op === 'create') {
            const what = `POST /api/v1/tokens ${describeBody(op.body)}`;
            const res = await sendBody('POST', '/api/v1/tokens', op.body);
            const expected = tokenVerdict(op.body);
            if (!isOk(expected)) {
              expectVerdict(res, expected, what);
              continue;
            }
            expectVerdict(res, 201, what);
            expect(res.body, what).toMatchObject({ name: expected.ok.name, permissions: expected.ok.permissions });
            expect(res.body.token).toMatch(/^sbt_[A-Za-z0-9_-]{43}$/);
            model.set(res.body.id, { ...expected.ok, revoked: false });
            order.push(res.body.id);
          } else if (op.op === 'revoke') {
            const id = order[op.target % Math.max(1, order.length)];
            if (id === undefined) continue;
            expectVerdict(await send('DELETE', `/api/v1/tokens/${id}`), 204, `DELETE token ${id}`);
            model.get(id)!.revoked = true;
          } else {
            const res = await send('DELETE', `/api/v1/tokens/${pathId(op.id)}`);
            expectVerdict(res, { status: 404, codes: ['not.found'] }, `DELETE /api/v1/tokens/${op.id}`);
          }
        }
        const listed = (await send('GET', '/api/v1/tokens')).body.entities as (TokenModel & {
          id: string;
          revokedAt?: string;
          token?: string;
        })[];
        const mine = listed.filter((t) => model.has(t.id));
        expect(mine.map((t) => t.id).sort()).toEqual([...model.keys()].sort());
        for (const t of mine) {
          const m = model.get(t.id)!;
          expect({ name: t.name, permissions: t.permissions, revoked: t.revokedAt !== undefined, secret: t.token }).toEqual({
            ...m,
            secret: undefined,
          });
        }
      },
      { numRuns: 100, timeLimitMs: 45_000 },
    );
  });
});

// -----------------------------------------------------------------------------------------------
// Rooms
// -----------------------------------------------------------------------------------------------

interface RoomModel {
  name: string;
  topic: string | null;
}

const roomNear = nearSchema(fc.record({ name: nameArb, topic: topicArb }, { requiredKeys: ['name'] }), {
  name: wrongNameArb,
  topic: wrongTopicArb,
});
const roomPatchNear = nearSchema(fc.record({ name: nameArb, topic: topicArb }, { requiredKeys: [] }), {
  name: wrongNameArb,
  topic: wrongTopicArb,
});

function roomCreateVerdict(body: Body): Outcome<RoomModel> {
  const t = transportVerdict(body, 64 * KIB);
  if (t) return t;
  const v = parsed(body);
  if (!isPlainObject(v) || !onlyKeys(v, ['name', 'topic'])) return INVALID;
  const name = trimmedText(v.name, 1, 100);
  if (name === undefined) return INVALID;
  if (v.topic === undefined || v.topic === null) return { ok: { name, topic: null } };
  const topic = trimmedText(v.topic, 0, 500);
  return topic === undefined ? INVALID : { ok: { name, topic } };
}

function roomPatchVerdict(body: Body): Outcome<Partial<RoomModel>> {
  const t = transportVerdict(body, 64 * KIB);
  if (t) return t;
  const v = parsed(body);
  if (!isPlainObject(v) || !onlyKeys(v, ['name', 'topic'])) return INVALID;
  if (v.name === undefined && v.topic === undefined) return INVALID;
  const patch: Partial<RoomModel> = {};
  if (v.name !== undefined) {
    const name = trimmedText(v.name, 1, 100);
    if (name === undefined) return INVALID;
    patch.name = name;
  }
  if (v.topic !== undefined) {
    const topic = v.topic === null ? null : trimmedText(v.topic, 0, 500);
    if (topic === undefined) return INVALID;
    patch.topic = topic;
  }
  return { ok: patch };
}

type Target = { known: number } | { strange: string };
const targetArb: fc.Arbitrary<Target> = fc.oneof(
  { weight: 3, arbitrary: fc.nat(30).map((known) => ({ known })) },
  { weight: 1, arbitrary: strangeIdArb.map((strange) => ({ strange })) },
);

type RoomOp = { op: 'create'; body: Body } | { op: 'patch'; target: Target; body: Body } | { op: 'delete' | 'get'; target: Target };

describe('fuzzing rooms', { timeout: fuzzTimeout(240_000) }, () => {
  it('answers every generated room request as the README says and lists exactly the rooms it accepted', async () => {
    const opArb: fc.Arbitrary<RoomOp> = fc.oneof(
      { weight: 6, arbitrary: bodiesAround(roomNear, 64 * KIB).map((body) => ({ op: 'create' as const, body })) },
      {
        weight: 4,
        arbitrary: fc
          .tuple(targetArb, bodiesAround(roomPatchNear, 64 * KIB))
          .map(([target, body]) => ({ op: 'patch' as const, target, body })),
      },
      { weight: 1, arbitrary: targetArb.map((target) => ({ op: 'delete' as const, target })) },
      { weight: 1, arbitrary: targetArb.map((target) => ({ op: 'get' as const, target })) },
    );
    await fuzz(
      'rooms',
      fc.array(opArb, { minLength: 4, maxLength: 14 }),
      async (ops) => {
        const model = new Map<string, RoomModel>();
        const ever: string[] = [];
        const resolve = (target: Target): { id: string; exists: boolean; wellFormed: boolean } => {
          if ('known' in target && ever.length > 0) {
            const id = ever[target.known % ever.length]!;
            return { id, exists: model.has(id), wellFormed: true };
          }
          const id = 'strange' in target ? target.strange : crypto.randomUUID();
          return { id, exists: false, wellFormed: UUID_LOWER.test(id) };
        };
        for (const op of ops) {
          if (op.op === 'create') {
            const what = `POST /api/v1/rooms ${describeBody(op.body)}`;
            const res = await sendBody('POST', '/api/v1/rooms', op.body);
            const expected = roomCreateVerdict(op.body);
            if (!isOk(expected)) {
              expectVerdict(res, expected, what);
              continue;
            }
            expectVerdict(res, 201, what);
            expect(res.body, what).toEqual({ id: expect.stringMatching(UUID_LOWER), ...expected.ok, createdAt: expect.any(String) });
            model.set(res.body.id, expected.ok);
            ever.push(res.body.id);
            continue;
          }
          const { id, exists, wellFormed } = resolve(op.target);
          const path = `/api/v1/rooms/${pathId(id)}`;
          const notFound: Verdict = { status: 404, codes: ['not.found'] };
          if (op.op === 'patch') {
            const what = `PATCH ${path} ${describeBody(op.body)}`;
            const res = await sendBody('PATCH', path, op.body);
            const expected = roomPatchVerdict(op.body);
            // Order (README): a malformed id names nothing; then the body; then whether the room exists.
            if (!wellFormed) expectVerdict(res, notFound, what);
            else if (!isOk(expected)) expectVerdict(res, expected, what);
            else if (!exists) expectVerdict(res, notFound, what);
            else {
              expectVerdict(res, 200, what);
              const next = { ...model.get(id)!, ...expected.ok };
              expect(res.body, what).toEqual({ id, ...next, createdAt: expect.any(String) });
              model.set(id, next);
            }
          } else if (op.op === 'delete') {
            const res = await send('DELETE', path);
            expectVerdict(res, exists ? 204 : notFound, `DELETE ${path}`);
            model.delete(id);
          } else {
            const res = await send('GET', path);
            if (!exists) expectVerdict(res, notFound, `GET ${path}`);
            else expect(res.body).toEqual({ id, ...model.get(id)!, createdAt: expect.any(String) });
          }
        }
        const listed = (await send('GET', '/api/v1/rooms')).body.entities as (RoomModel & { id: string; createdAt: string })[];
        const mine = listed.filter((r) => ever.includes(r.id));
        expect(Object.fromEntries(mine.map((r) => [r.id, { name: r.name, topic: r.topic }]))).toEqual(Object.fromEntries(model));
        // Oldest first (README): by createdAt, then id.
        const sorted = [...listed].sort((a, b) =>
          a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
        );
        expect(listed.map((r) => r.id)).toEqual(sorted.map((r) => r.id));
      },
      { numRuns: 100, timeLimitMs: 45_000 },
    );
  });
});

// -----------------------------------------------------------------------------------------------
// Webhooks
// -----------------------------------------------------------------------------------------------

interface Mapping {
  field: string;
  match: string;
  value: string;
  roomIds: string[];
}

interface HookModel {
  name: string;
  kind: string;
  roomId: string;
  active: boolean;
  mappings: Mapping[];
  rateLimit: { burst: number; perSecond: number };
  secret: string | null;
}

const HOOK_FIELDS = ['name', 'kind', 'roomId', 'active', 'mappings', 'rateLimit', 'secret'];

function validMapping(v: unknown, rooms: ReadonlySet<string>): { mapping: Mapping; missing: boolean } | undefined {
  if (!isPlainObject(v) || !onlyKeys(v, ['field', 'match', 'value', 'roomIds'])) return undefined;
  const { field, match, value, roomIds } = v;
  if (field !== 'message' && field !== 'metadata') return undefined;
  if (match !== 'exact' && match !== 'contains' && match !== 'prefix') return undefined;
  if (typeof value !== 'string' || codePoints(value) < 1 || codePoints(value) > 1000) return undefined;
  if (!Array.isArray(roomIds) || roomIds.length < 1 || roomIds.length > 10) return undefined;
  if (!roomIds.every((id) => typeof id === 'string' && UUID_LOWER.test(id))) return undefined;
  return { mapping: { field, match, value, roomIds: roomIds as string[] }, missing: !roomIds.every((id) => rooms.has(id as string)) };
}

/** Validates the fields present in `v` (zod's strict object, from the README); undefined = invalid. */
type HookFields = Partial<Omit<HookModel, 'rateLimit'>> & { rateLimit?: Partial<HookModel['rateLimit']> };

function validHookFields(v: Record<string, unknown>, rooms: ReadonlySet<string>): { fields: HookFields; missingRoom: boolean } | undefined {
  if (!onlyKeys(v, HOOK_FIELDS)) return undefined;
  const fields: HookFields = {};
  let missingRoom = false;
  if (v.name !== undefined) {
    const name = trimmedText(v.name, 1, 100);
    if (name === undefined) return undefined;
    fields.name = name;
  }
  if (v.kind !== undefined) {
    if (typeof v.kind !== 'string' || !KINDS.includes(v.kind)) return undefined;
    fields.kind = v.kind;
  }
  if (v.roomId !== undefined) {
    if (typeof v.roomId !== 'string' || !UUID_LOWER.test(v.roomId)) return undefined;
    fields.roomId = v.roomId;
    missingRoom ||= !rooms.has(v.roomId);
  }
  if (v.active !== undefined) {
    if (typeof v.active !== 'boolean') return undefined;
    fields.active = v.active;
  }
  if (v.mappings !== undefined) {
    if (!Array.isArray(v.mappings) || v.mappings.length > 20) return undefined;
    const checked = v.mappings.map((m) => validMapping(m, rooms));
    if (checked.some((c) => c === undefined)) return undefined;
    fields.mappings = checked.map((c) => c!.mapping);
    missingRoom ||= checked.some((c) => c!.missing);
  }
  if (v.rateLimit !== undefined) {
    const r = v.rateLimit;
    if (!isPlainObject(r) || !onlyKeys(r, ['burst', 'perSecond'])) return undefined;
    const rate: Partial<HookModel['rateLimit']> = {};
    if (r.burst !== undefined) {
      if (typeof r.burst !== 'number' || !Number.isInteger(r.burst) || r.burst < 1 || r.burst > 100_000) return undefined;
      rate.burst = r.burst;
    }
    if (r.perSecond !== undefined) {
      if (typeof r.perSecond !== 'number' || !Number.isFinite(r.perSecond) || !(r.perSecond > 0) || r.perSecond > 100_000) return undefined;
      rate.perSecond = r.perSecond;
    }
    fields.rateLimit = rate;
  }
  if (v.secret !== undefined) {
    const s = v.secret;
    if (s !== null && (typeof s !== 'string' || codePoints(s) < 1 || codePoints(s) > 256 || /[\u0000-\u001f\u007f]/.test(s)))
      return undefined;
    fields.secret = s as string | null;
  }
  return { fields, missingRoom };
}

function hookCreateVerdict(body: Body, rooms: ReadonlySet<string>): Outcome<HookModel> {
  const t = transportVerdict(body, 64 * KIB);
  if (t) return t;
  const v = parsed(body);
  if (!isPlainObject(v)) return INVALID;
  const checked = validHookFields(v, rooms);
  if (!checked || v.name === undefined || v.roomId === undefined) return INVALID;
  const f = checked.fields;
  // No kind: a generic webhook (the README's default).
  const kind = f.kind ?? 'generic';
  if (f.secret != null && !SIGNED_KINDS.includes(kind)) return INVALID;
  if (checked.missingRoom) return INVALID;
  return {
    ok: {
      name: f.name!,
      kind,
      roomId: f.roomId!,
      active: f.active ?? true,
      mappings: f.mappings ?? [],
      rateLimit: { burst: f.rateLimit?.burst ?? 100, perSecond: f.rateLimit?.perSecond ?? 10 },
      secret: f.secret ?? null,
    },
  };
}

/** PATCH: the body first (400), then whether the webhook exists (404), then secret/kind and rooms (400). */
function hookPatchVerdict(body: Body, rooms: ReadonlySet<string>, current: HookModel | undefined): Outcome<HookModel> {
  const t = transportVerdict(body, 64 * KIB);
  if (t) return t;
  const v = parsed(body);
  if (!isPlainObject(v)) return INVALID;
  const checked = validHookFields(v, rooms);
  if (!checked || Object.keys(v).length === 0) return INVALID;
  if (!current) return { status: 404, codes: ['not.found'] };
  const f = checked.fields;
  const kind = f.kind ?? current.kind;
  const secret = f.secret !== undefined ? f.secret : current.secret;
  if (secret !== null && !SIGNED_KINDS.includes(kind)) return INVALID;
  if (checked.missingRoom) return INVALID;
  return {
    ok: {
      ...current,
      ...f,
      secret,
      rateLimit: { ...current.rateLimit, ...f.rateLimit },
    } as HookModel,
  };
}

/** A webhook URL: its last segment is the posting secret, a UUIDv4 that is not the webhook's id. */
const HOOK_URL =
  /^http:\/\/switchboard\.test\/webhooks\/api\/v1\/webhook\/([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})$/;

function view(id: string, m: HookModel, url: string | undefined) {
  const { secret, ...shown } = m;
  // The secret itself is never shown; whether there is one is.
  return {
    id,
    url,
    // Sender fields (issue 25) the model does not vary: their defaults.
    avatarUrl: null,
    allowOverrides: false,
    // The model never posts: no delivery yet.
    lastDeliveryAt: null,
    ...shown,
    ...(SIGNED_KINDS.includes(m.kind) ? { hasSecret: secret !== null } : {}),
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
  };
}

type HookOp =
  | { op: 'create'; body: Body }
  | { op: 'patch'; target: Target; body: Body }
  | { op: 'delete' | 'get' | 'rotate'; target: Target };

describe('fuzzing webhooks', { timeout: fuzzTimeout(240_000) }, () => {
  const rooms = new Set<string>();
  let roomIds: string[] = [];
  beforeAll(async () => {
    roomIds = [(await createRoom()).id, (await createRoom()).id];
    roomIds.forEach((id) => rooms.add(id));
  });

  it('answers every generated webhook request as the README says and lists exactly the webhooks it accepted', async () => {
    const ghost = crypto.randomUUID();
    const roomIdArb = fc.constantFrom(...roomIds);
    const wrongRoomIdArb = fc.constantFrom(ghost, roomIds[0]!.toUpperCase(), `${roomIds[0]} `, 'room-1', '');
    const mappingArb = fc.record({
      field: fc.constantFrom('message', 'metadata'),
      match: fc.constantFrom('exact', 'contains', 'prefix'),
      value: fc.oneof(oddText({ minLength: 1, maxLength: 10, wellFormed: true }), fc.constantFrom('v'.repeat(1000), '😀'.repeat(1000))),
      roomIds: fc.oneof(fc.array(roomIdArb, { minLength: 1, maxLength: 3 }), fc.array(roomIdArb, { minLength: 10, maxLength: 10 })),
    });
    const wrongMappingArb = nearSchema(mappingArb, {
      field: fc.constantFrom('Message', 'body', ''),
      match: fc.constantFrom('regex', 'suffix', 'EXACT'),
      value: fc.constantFrom('', 'v'.repeat(1001), '😀'.repeat(1001)),
      roomIds: fc.oneof(
        fc.constant([]),
        fc.array(roomIdArb, { minLength: 11, maxLength: 11 }),
        fc.tuple(roomIdArb, wrongRoomIdArb).map((ids) => ids),
      ),
    });
    const rateArb = fc.record(
      {
        burst: fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.constantFrom(1, 100_000), fc.constant(new RawJson('1.0'))),
        perSecond: fc.oneof(
          fc.double({ min: 0.001, max: 100_000, noNaN: true }),
          fc.constantFrom(5e-324, 100_000, 0.01),
          fc.constant(new RawJson('1E+2')),
        ),
      },
      { requiredKeys: [] },
    );
    const wrongRateArb = nearSchema(rateArb, {
      burst: fc.oneof(fc.constantFrom(0, -0, -1, 100_001, 1.5, 2 ** 53 + 2, 1e308), rawNumber, numberishString),
      perSecond: fc.oneof(fc.constantFrom(0, -0, -1, 100_000.0001, 1e308), rawNumber, numberishString),
    });
    const signed = fc.constantFrom(...SIGNED_KINDS);
    const unsigned = fc.constantFrom(...KINDS.filter((k) => !SIGNED_KINDS.includes(k)));
    const secretArb = fc.oneof(
      oddText({ minLength: 1, maxLength: 12, wellFormed: true }).filter((t) => !/[\u0000-\u001f\u007f]/.test(t)),
      fc.constantFrom('s'.repeat(256), '😀'.repeat(256)),
    );
    const optional = {
      active: fc.boolean(),
      mappings: fc.oneof(
        { weight: 4, arbitrary: fc.array(mappingArb, { maxLength: 3 }) },
        { weight: 1, arbitrary: fc.array(mappingArb, { minLength: 20, maxLength: 20 }) },
      ),
      rateLimit: rateArb,
    };
    const validCreate = fc.oneof(
      fc.record(
        { name: nameArb, kind: unsigned, roomId: roomIdArb, ...optional, secret: fc.constant(null) },
        { requiredKeys: ['name', 'roomId'] },
      ),
      fc.record(
        { name: nameArb, kind: signed, roomId: roomIdArb, ...optional, secret: fc.oneof(fc.constant(null), secretArb) },
        { requiredKeys: ['name', 'kind', 'roomId'] },
      ),
    );
    const wrongFields = {
      name: wrongNameArb,
      kind: fc.constantFrom('teams', 'GitHub', '', 'generic '),
      roomId: wrongRoomIdArb,
      active: fc.constantFrom('true', 1, 0, null),
      mappings: fc.oneof(fc.array(wrongMappingArb, { minLength: 1, maxLength: 2 }), fc.array(mappingArb, { minLength: 21, maxLength: 21 })),
      rateLimit: wrongRateArb,
      secret: fc.oneof(secretArb, fc.constantFrom('', 's'.repeat(257), 'line\nbreak', 'nul\u0000')),
    };
    const createNear = nearSchema(validCreate, wrongFields);
    const patchNear = nearSchema(
      fc.oneof(
        fc.record({ name: nameArb, kind: unsigned, roomId: roomIdArb, ...optional, secret: fc.constant(null) }, { requiredKeys: [] }),
        fc.record(
          { name: nameArb, kind: signed, roomId: roomIdArb, ...optional, secret: fc.oneof(fc.constant(null), secretArb) },
          { requiredKeys: [] },
        ),
      ),
      wrongFields,
    );

    const opArb: fc.Arbitrary<HookOp> = fc.oneof(
      { weight: 6, arbitrary: bodiesAround(createNear, 64 * KIB).map((body) => ({ op: 'create' as const, body })) },
      {
        weight: 4,
        arbitrary: fc.tuple(targetArb, bodiesAround(patchNear, 64 * KIB)).map(([target, body]) => ({ op: 'patch' as const, target, body })),
      },
      { weight: 1, arbitrary: targetArb.map((target) => ({ op: 'delete' as const, target })) },
      { weight: 1, arbitrary: targetArb.map((target) => ({ op: 'rotate' as const, target })) },
      { weight: 1, arbitrary: targetArb.map((target) => ({ op: 'get' as const, target })) },
    );

    await fuzz(
      'webhooks',
      fc.array(opArb, { minLength: 4, maxLength: 14 }),
      async (ops) => {
        const model = new Map<string, HookModel>();
        /** Each webhook's URL as create or the last rotate answered it. */
        const urls = new Map<string, string>();
        const newUrl = (id: string, url: unknown, what: string) => {
          const secret = HOOK_URL.exec(String(url))?.[1];
          expect(secret, `${what}: url ${String(url)}`).toBeDefined();
          expect(secret, what).not.toBe(id);
          expect(url, what).not.toBe(urls.get(id));
          urls.set(id, String(url));
        };
        const ever: string[] = [];
        const notFound: Verdict = { status: 404, codes: ['not.found'] };
        for (const op of ops) {
          if (op.op === 'create') {
            const what = `POST /api/v1/webhooks ${describeBody(op.body)}`;
            const res = await sendBody('POST', '/api/v1/webhooks', op.body);
            const expected = hookCreateVerdict(op.body, rooms);
            if (!isOk(expected)) {
              expectVerdict(res, expected, what);
              continue;
            }
            expectVerdict(res, 201, what);
            newUrl(res.body.id, res.body.url, what);
            expect(res.body, what).toEqual(view(res.body.id, expected.ok, urls.get(res.body.id)));
            model.set(res.body.id, expected.ok);
            ever.push(res.body.id);
            continue;
          }
          let id: string;
          if ('known' in op.target && ever.length > 0) id = ever[op.target.known % ever.length]!;
          else id = 'strange' in op.target ? op.target.strange : crypto.randomUUID();
          const wellFormed = UUID_LOWER.test(id);
          const current = model.get(id);
          const path = `/api/v1/webhooks/${pathId(id)}`;
          if (op.op === 'patch') {
            const what = `PATCH ${path} ${describeBody(op.body)}`;
            const res = await sendBody('PATCH', path, op.body);
            const expected = wellFormed ? hookPatchVerdict(op.body, rooms, current) : notFound;
            if (!isOk(expected)) expectVerdict(res, expected, what);
            else {
              expectVerdict(res, 200, what);
              expect(res.body, what).toEqual(view(id, expected.ok, urls.get(id)));
              model.set(id, expected.ok);
            }
          } else if (op.op === 'delete') {
            expectVerdict(await send('DELETE', path), current ? 204 : notFound, `DELETE ${path}`);
            model.delete(id);
          } else if (op.op === 'get') {
            const res = await send('GET', path);
            if (!current) expectVerdict(res, notFound, `GET ${path}`);
            else expect(res.body).toEqual(view(id, current, urls.get(id)));
          } else {
            const res = await send('POST', `${path}/rotate`);
            if (!current) {
              expectVerdict(res, notFound, `POST ${path}/rotate`);
              continue;
            }
            expectVerdict(res, 200, `POST ${path}/rotate`);
            // Same id, new URL; the rest as it was.
            expect(res.body.id).toBe(id);
            newUrl(id, res.body.url, `POST ${path}/rotate`);
            expect(res.body).toEqual(view(id, current, urls.get(id)));
          }
        }
        const listed = (await send('GET', '/api/v1/webhooks')).body.entities as { id: string }[];
        const mine = listed.filter((h) => ever.includes(h.id));
        expect(Object.fromEntries(mine.map((h) => [h.id, h]))).toEqual(
          Object.fromEntries([...model].map(([id, m]) => [id, view(id, m, urls.get(id))])),
        );
      },
      { numRuns: 100, timeLimitMs: 45_000 },
    );
  });
});
