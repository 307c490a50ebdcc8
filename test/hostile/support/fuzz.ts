/**
 * The fuzz runner and the property every answer must have.
 *
 * Seeds: one per test run, from `FUZZ_SEED` (vitest.config.ts passes `FUZZ_*` into workerd), else a fixed
 * default; `FUZZ_SEED=random` draws a fresh one. It is
 * printed before every property; fast-check prints it again (with the counterexample's `path`) on a
 * failure. Replay: `FUZZ_SEED=<seed> npx vitest run test/hostile -t '<test name>'`, and add
 * `FUZZ_PATH=<path>` to jump straight to the shrunk counterexample. `FUZZ_SCALE=10` runs ten times as
 * many cases (a longer local soak).
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { Sent } from '../../helpers';
import { clip } from './arbitraries';

const ENV: Record<string, string | undefined> = (import.meta as unknown as { env?: Record<string, string | undefined> }).env ?? {};
const setting = (name: string): string | undefined => ENV[name] ?? ENV[`VITE_${name}`];

/**
 * CI runs a fixed seed, so a run that passed passes again; `FUZZ_SEED=random` draws a fresh one (printed)
 * for exploring locally.
 */
const DEFAULT_SEED = 20261121;
export const FUZZ_SEED: number =
  setting('FUZZ_SEED') === 'random'
    ? Math.floor(Math.random() * 0x7fffffff)
    : setting('FUZZ_SEED')
      ? Number(setting('FUZZ_SEED'))
      : DEFAULT_SEED;
const FUZZ_PATH = setting('FUZZ_PATH');
const FUZZ_SCALE = Number(setting('FUZZ_SCALE') ?? 1) || 1;

/** Status of every error code (src/http/api-error.ts and the README's table). */
export const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  'bad.request': 400,
  'invalid.value': 400,
  'invalid.date': 400,
  'authentication.required': 401,
  'bad.credentials': 401,
  'bad.signature': 401,
  'missing.permissions': 403,
  'webhook.inactive': 403,
  'not.found': 404,
  'method.not.allowed': 405,
  conflict: 409,
  'payload.too.large': 413,
  'unsupported.media.type': 415,
  'upgrade.required': 426,
  'too.many.requests': 429,
  'internal.server.error': 500,
  'service.unavailable': 503,
};

/** Answers seen by the current property, by status and code: printed so a run shows what it covered. */
const tally = new Map<string, number>();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The property of every answer: never a 5xx; a fresh correlation id in `ININ-Correlation-Id`; and
 * every non-2xx is exactly Genesys' ErrorBody with a specific code, `status` matching both the code
 * and the HTTP status, and `contextId` equal to the header. `errors` holds one such body per entity
 * that failed (an ingest batch's refused records), each naming its entity in `entityId`.
 */
export function expectWellFormedAnswer(res: Sent, what = ''): void {
  const code = res.status >= 400 ? ` ${(res.body as { code?: string } | undefined)?.code}` : '';
  tally.set(`${res.status}${code}`, (tally.get(`${res.status}${code}`) ?? 0) + 1);
  const say = `${what} → ${res.status} ${clip(JSON.stringify(res.body) ?? '', 500)}`;
  expect(res.status, say).toBeLessThan(500);
  const correlation = res.headers.get('ININ-Correlation-Id');
  expect(correlation, say).toMatch(UUID);
  if (res.status >= 200 && res.status < 300) return;
  expect(res.headers.get('Content-Type') ?? '', say).toContain('application/json');
  const body = res.body as Record<string, unknown>;
  expect(Object.keys(body).sort(), say).toEqual(['code', 'contextId', 'details', 'errors', 'message', 'status']);
  expect(typeof body.code === 'string' && body.code in STATUS_OF_CODE, say).toBe(true);
  expect(body.code, say).not.toBe('internal.server.error');
  expect(STATUS_OF_CODE[body.code as string], say).toBe(res.status);
  expect(body.status, say).toBe(res.status);
  expect(body.contextId, say).toBe(correlation);
  expect(typeof body.message === 'string' && body.message.length > 0, say).toBe(true);
  expect(Array.isArray(body.errors), say).toBe(true);
  for (const inner of body.errors as Record<string, unknown>[]) {
    expect(
      Object.keys(inner)
        .filter((k) => k !== 'entityId')
        .sort(),
      say,
    ).toEqual(['code', 'contextId', 'details', 'errors', 'message', 'status']);
    expect(STATUS_OF_CODE[inner.code as string], say).toBe(inner.status);
    expect(inner.status, say).toBeLessThan(500);
    expect(inner.contextId, say).toBe(correlation);
    expect(inner.errors, say).toEqual([]);
    if (inner.entityId !== undefined) expect(typeof inner.entityId, say).toBe('string');
  }
  expect(Array.isArray(body.details), say).toBe(true);
  for (const detail of body.details as unknown[]) {
    expect(detail, say).toEqual(expect.objectContaining({ errorCode: expect.any(String) }));
    const fieldName = (detail as { fieldName?: unknown }).fieldName;
    if (fieldName !== undefined) expect(typeof fieldName, say).toBe('string');
  }
}

/** Asserts a specific error answer (after the common property). */
export function expectErrorAnswer(res: Sent, status: number, codes: string | readonly string[], what = ''): void {
  expectWellFormedAnswer(res, what);
  const allowed = typeof codes === 'string' ? [codes] : codes;
  const say = `${what} → ${res.status} ${clip(JSON.stringify(res.body) ?? '', 500)}`;
  expect(res.status, say).toBe(status);
  expect(allowed, say).toContain((res.body as { code: string }).code);
}

export function fieldNames(res: Sent): string[] {
  return ((res.body as { details?: { fieldName?: string }[] }).details ?? []).map((d) => d.fieldName ?? '');
}

/**
 * A fuzz test's own timeout: its fixed part and its generation time limit both grow with FUZZ_SCALE
 * (a soak run at 10 generates for up to ten times as long, and a fixed timeout cut it short).
 */
export function fuzzTimeout(ms: number): number {
  return ms * FUZZ_SCALE;
}

/**
 * Runs an async property `numRuns` times (scaled by FUZZ_SCALE) with the run's seed, printing the
 * seed first. `timeLimitMs` stops generating new cases (not a failure) so a slow CI machine cannot
 * time the test out; a failure found before it is still shrunk and reported.
 */
export async function fuzz<T>(
  name: string,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  options: { numRuns: number; timeLimitMs?: number },
): Promise<void> {
  const numRuns = Math.max(1, Math.round(options.numRuns * FUZZ_SCALE));
  console.log(
    `[fuzz] ${name}: seed ${FUZZ_SEED}, ${numRuns} runs. Replay: FUZZ_SEED=${FUZZ_SEED} npx vitest run test/hostile -t '${name}'`,
  );
  const started = Date.now();
  let runs = 0;
  tally.clear();
  await fc.assert(
    fc.asyncProperty(arbitrary, async (value) => {
      runs++;
      await predicate(value);
    }),
    {
      seed: FUZZ_SEED,
      ...(FUZZ_PATH ? { path: FUZZ_PATH } : {}),
      numRuns,
      verbose: 1,
      plugins: [fc.interruptAfterTimeLimit((options.timeLimitMs ?? 120_000) * FUZZ_SCALE)],
    },
  );
  const answers = [...tally].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ×${n}`);
  const total = [...tally.values()].reduce((a, b) => a + b, 0);
  console.log(`[fuzz] ${name}: ${runs} cases, ${total} answers in ${((Date.now() - started) / 1000).toFixed(1)} s: ${answers.join(', ')}`);
}
