/**
 * One ingest request, sent until it has a definite answer. Ingest is idempotent per observation
 * (conversationId, sessionId, metric, emitDate): a request sent again after a 429, a 503, a lost connection
 * or a timeout stores nothing twice (what the first attempt stored counts as duplicates), so retrying is safe
 * even when we cannot know whether the first attempt got through.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';

const ingestAnswerSchema = z.object({
  conversations: z.number(),
  observations: z.number(),
  duplicates: z.number(),
  skippedMetrics: z.record(z.string(), z.number()),
  withoutObservations: z.object({ count: z.number(), conversationIds: z.array(z.string()) }),
});
export type IngestAnswer = z.infer<typeof ingestAnswerSchema>;

/** The fields of Genesys' ErrorBody read here; `errors[]` names each refused record of an ingest batch. */
const errorBodySchema = z.object({
  message: z.string(),
  errors: z
    .array(
      z.object({
        message: z.string(),
        entityId: z.string().optional(),
        details: z.array(z.object({ fieldName: z.string().optional() })).optional(),
      }),
    )
    .optional(),
});

export interface RecordError {
  message: string;
  entityId: string | undefined;
  /** As the server names it: `conversations[<index in the request>].…`. */
  fieldName: string | undefined;
}

export type Outcome =
  | { kind: 'stored'; answer: IngestAnswer }
  /** A 400 (or 413) naming records (nothing of the request was stored). */
  | { kind: 'refused'; message: string; records: RecordError[] }
  /** A 413 naming no record: the body is larger than something on the way takes (a proxy's limit below ours). */
  | { kind: 'too-large'; message: string }
  /** Not stored, for good: a 400 about the request itself, another error, or retries spent. */
  | { kind: 'failed'; message: string };

/** An answer every request would get alike (credentials, permission, a wrong URL): the import stops. */
export class FatalAnswer extends Error {}

export interface Target {
  url: string;
  token: string;
}

export interface RetryPolicy {
  attempts: number;
  /** First backoff; doubled each attempt up to capMs, with jitter so parallel requests do not retry in step. */
  baseMs: number;
  capMs: number;
  /** The longest Retry-After honoured; a longer one is waited this long. */
  maxRetryAfterMs: number;
  /** A request without an answer this long is abandoned and sent again. */
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseMs: 500, capMs: 30_000, maxRetryAfterMs: 300_000, timeoutMs: 120_000 };

const RETRIED_STATUSES = new Set([429, 502, 503, 504]);

function backoffMs(policy: RetryPolicy, attempt: number): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** (attempt - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Retry-After in seconds or as an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message} (${err.cause.message})` : err.message;
}

/** The server's message from an error answer, or the start of whatever it sent. */
function messageOf(status: number, text: string): { message: string; records: RecordError[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { message: `${status}: ${text.slice(0, 300).trim() || '(no body)'}`, records: [] };
  }
  const body = errorBodySchema.safeParse(json);
  if (!body.success) return { message: `${status}: ${text.slice(0, 300)}`, records: [] };
  const records = (body.data.errors ?? []).map((e) => ({
    message: e.message,
    entityId: e.entityId,
    fieldName: e.details?.find((d) => d.fieldName !== undefined)?.fieldName,
  }));
  return { message: `${status}: ${body.data.message}`, records };
}

type Attempt = { done: Outcome } | { retry: string; waitMs?: number };

async function attempt(target: Target, body: string, policy: RetryPolicy, signal: AbortSignal): Promise<Attempt> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(target.url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${target.token}`, 'Content-Type': 'application/json' },
      body,
      signal: AbortSignal.any([signal, AbortSignal.timeout(policy.timeoutMs)]),
    });
    text = await res.text();
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    const timedOut = err instanceof Error && err.name === 'TimeoutError';
    return { retry: timedOut ? `no answer within ${policy.timeoutMs / 1000} s` : errorText(err) };
  }
  if (res.ok) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const answer = ingestAnswerSchema.safeParse(json);
    if (answer.success) return { done: { kind: 'stored', answer: answer.data } };
    return { done: { kind: 'failed', message: `${res.status} with an answer that is not ingest's: ${text.slice(0, 200)}` } };
  }
  const { message, records } = messageOf(res.status, text);
  if (res.status === 401 || res.status === 403) throw new FatalAnswer(message);
  if (res.status === 404 || res.status === 405) throw new FatalAnswer(`${message} (is ${target.url} Switchboard's ingest URL?)`);
  if (RETRIED_STATUSES.has(res.status)) return { retry: message, waitMs: retryAfterMs(res.headers.get('Retry-After')) };
  if ((res.status === 400 || res.status === 413) && records.length > 0) return { done: { kind: 'refused', message, records } };
  if (res.status === 413) return { done: { kind: 'too-large', message } };
  return { done: { kind: 'failed', message } };
}

/**
 * Posts a body until a definite answer: stored, refused, too large, failed for good, or (thrown) FatalAnswer.
 * `signal` ends the waiting and the request when the import stops.
 */
export async function postIngest(
  target: Target,
  body: string,
  options: { signal: AbortSignal; policy?: RetryPolicy; onRetry?: (reason: string) => void },
): Promise<Outcome> {
  const policy = options.policy ?? DEFAULT_RETRY;
  for (let n = 1; ; n++) {
    const result = await attempt(target, body, policy, options.signal);
    if ('done' in result) return result.done;
    if (n >= policy.attempts) return { kind: 'failed', message: `${result.retry}, still after ${n} attempts` };
    options.onRetry?.(result.retry);
    const wait = result.waitMs === undefined ? backoffMs(policy, n) : Math.min(result.waitMs, policy.maxRetryAfterMs);
    await sleep(wait, undefined, { signal: options.signal });
  }
}
