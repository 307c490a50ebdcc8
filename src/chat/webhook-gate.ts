import { DurableObject } from 'cloudflare:workers';
import { createDb } from '../db/client';
import { CHAT_LIMITS, type RateLimit } from './limits';
import { takeToken, type Bucket } from './rate-limit';
import { deleteWebhook, getWebhook, rotateWebhook, updateWebhook, type WebhookPatch, type WebhookRow } from './webhooks.store';

export type Admission =
  /** `attempt` (keyed posts only) seeds the message ids: the same for a retry of an uncertain attempt. */
  | { kind: 'go'; attempt?: string /** Keyed posts: when this post's claim of the key ends; it names the claim. */; claim?: number }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'in-progress' }
  | { kind: 'key-reused' }
  | { kind: 'limited'; retryAfterSeconds: number }
  /** The caller's copy of the webhook is not the current one: here is the current one (null: gone). */
  | { kind: 'stale'; hook: WebhookRow | null };

export interface AdmitRequest {
  /**
   * The webhook as the caller knows it (`version` is its `updatedAt`): checked against the gate's
   * own copy before anything else, so a post never runs on a stale copy.
   */
  webhook?: { id: string; version: string };
  rateLimit: RateLimit;
  /** What the post takes from the rate limit: the number of rooms it is routed to (at least 1). */
  cost: number;
  /** `fingerprint` identifies the content, so a key reused for another message is told apart. */
  idempotency?: { key: string; fingerprint: string };
}

type KeyState = 'pending' | 'uncertain' | 'done';

export type Outcome = 'commit' | 'abort';

/** Decisions are kept long after any prepared message could still be waiting on them. */
const DECISION_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * One per webhook (named by the webhook's public id, which rotation keeps), so everything here is
 * serialised per webhook and shared by every isolate:
 * - the rate limit, a token bucket in memory counting room deliveries (an evicted gate forgets it and
 *   starts full again);
 * - Idempotency-Key / X-GitHub-Delivery: a key is claimed before the post runs (a concurrent repeat
 *   is told "in progress"), then holds the first successful answer for 24 hours. A post that failed
 *   having stored nothing frees the key. A post that failed not knowing whether the room stored it
 *   (the room's reply was lost) leaves the key "uncertain": the retry runs with the same attempt id,
 *   hence the same message ids, and the room answers the stored delivery instead of storing twice;
 * - the coordinator of multi-room posts: the durable commit/abort decision (see chat/deliver.ts);
 * - the webhook's row, so posts need no D1 query: loaded once, and replaced by every change, since
 *   every change (PATCH, rotate, delete) is made here. Changes and loads run under
 *   blockConcurrencyWhile, so no admission sees a half-made change and no slow load overwrites a
 *   newer copy; a change whose outcome is unknown drops the copy (the next admission reloads it).
 *   Each change gives the row a strictly later `updatedAt`, which callers use as its version.
 */
export class WebhookGate extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private bucket: Bucket | undefined;
  private alarmAt: number | null = null;
  /** undefined: not loaded; null: no such webhook (deleted; an id never comes back). */
  private hook: WebhookRow | null | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS idempotency (
        key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, attempt TEXT NOT NULL, state TEXT NOT NULL,
        status INTEGER, body TEXT, expires_at INTEGER NOT NULL
      );
      CREATE TABLE IF NOT EXISTS decisions (tx_id TEXT PRIMARY KEY, outcome TEXT NOT NULL, expires_at INTEGER NOT NULL);
    `);
  }

  async admit(request: AdmitRequest): Promise<Admission> {
    if (request.webhook) {
      const hook = await this.currentHook(request.webhook.id);
      if (hook === null || hook.updatedAt !== request.webhook.version) return { kind: 'stale', hook };
    }
    const now = Date.now();
    const idem = request.idempotency;
    let attempt: string | undefined;
    if (idem) {
      const found = this.sql
        .exec<{ fingerprint: string; attempt: string; state: KeyState; status: number | null; body: string | null; expires_at: number }>(
          'SELECT fingerprint, attempt, state, status, body, expires_at FROM idempotency WHERE key = ?',
          idem.key,
        )
        .toArray()[0];
      // A claim never finished (its Worker died) may have stored the message: it counts as uncertain.
      const row = found && (found.expires_at > now || found.state === 'pending') ? found : undefined;
      if (row && row.fingerprint !== idem.fingerprint) return { kind: 'key-reused' };
      if (row?.state === 'done' && row.status !== null && row.body !== null) return { kind: 'replay', status: row.status, body: row.body };
      if (row?.state === 'pending' && row.expires_at > now) return { kind: 'in-progress' };
      attempt = row?.attempt ?? crypto.randomUUID();
    }
    const take = takeToken(this.bucket, request.rateLimit, now, request.cost);
    this.bucket = take.bucket;
    if (!take.ok) return { kind: 'limited', retryAfterSeconds: take.retryAfterSeconds };
    let claim: number | undefined;
    if (idem && attempt !== undefined) {
      const expiresAt = now + CHAT_LIMITS.idempotencyClaimMs;
      claim = expiresAt;
      this.sql.exec(
        `INSERT OR REPLACE INTO idempotency (key, fingerprint, attempt, state, status, body, expires_at)
         VALUES (?, ?, ?, 'pending', NULL, NULL, ?)`,
        idem.key,
        idem.fingerprint,
        attempt,
        expiresAt,
      );
      this.ensureAlarm(expiresAt);
    }
    return claim === undefined ? { kind: 'go', attempt } : { kind: 'go', attempt, claim };
  }

  /** Records the first successful answer for the key; repeats within 24 hours get it back. */
  complete(key: string, status: number, body: string): void {
    const expiresAt = Date.now() + CHAT_LIMITS.idempotencyTtlMs;
    this.sql.exec(
      "UPDATE idempotency SET state = 'done', status = ?, body = ?, expires_at = ? WHERE key = ?",
      status,
      body,
      expiresAt,
      key,
    );
    this.ensureAlarm(expiresAt);
  }

  /**
   * The post failed. Stored nothing: the key is free again, unless a repeat has claimed it since (its
   * `claim` ended and a retry took it over with the same attempt id: that retry's claim stays). Maybe
   * stored: the key stays, uncertain, for 24 hours, so a retry reuses the attempt id (and the room
   * recognises the message).
   */
  release(key: string, maybeStored: boolean, claim?: number): void {
    if (!maybeStored) {
      this.sql.exec("DELETE FROM idempotency WHERE key = ? AND state = 'pending' AND expires_at = ?", key, claim ?? null);
      return;
    }
    const expiresAt = Date.now() + CHAT_LIMITS.idempotencyTtlMs;
    this.sql.exec("UPDATE idempotency SET state = 'uncertain', expires_at = ? WHERE key = ? AND state = 'pending'", expiresAt, key);
    this.ensureAlarm(expiresAt);
  }

  /** Records the outcome of a multi-room post unless one is recorded already; returns the one that holds. */
  decide(txId: string, outcome: Outcome): Outcome {
    const expiresAt = Date.now() + DECISION_TTL_MS;
    this.sql.exec('INSERT OR IGNORE INTO decisions (tx_id, outcome, expires_at) VALUES (?, ?, ?)', txId, outcome, expiresAt);
    this.ensureAlarm(expiresAt);
    return this.sql.exec<{ outcome: Outcome }>('SELECT outcome FROM decisions WHERE tx_id = ?', txId).one().outcome;
  }

  /** Asked by a room holding a stale prepared message: undecided means aborted, from now on. */
  settle(txId: string): Outcome {
    return this.decide(txId, 'abort');
  }

  // ---- the webhook's row ---------------------------------------------------------------------

  private async currentHook(id: string): Promise<WebhookRow | null> {
    if (this.hook !== undefined) return this.hook;
    // A callback that throws would reset the whole object: failures come out as values.
    const loaded = await this.ctx.blockConcurrencyWhile(async () => {
      try {
        // Another call may have loaded it (or changed it) while this one waited.
        if (this.hook === undefined) this.hook = (await getWebhook(createDb(this.env.DB), id)) ?? null;
        return { ok: true as const, hook: this.hook };
      } catch (err) {
        return { ok: false as const, err };
      }
    });
    if (!loaded.ok) throw loaded.err;
    return loaded.hook;
  }

  /** Runs one change of the row in D1, nothing else running meanwhile; an unknown outcome drops the copy. */
  private async change<T>(apply: () => Promise<T>): Promise<T> {
    const done = await this.ctx.blockConcurrencyWhile(async () => {
      try {
        return { ok: true as const, value: await apply() };
      } catch (err) {
        this.hook = undefined;
        return { ok: false as const, err };
      }
    });
    if (!done.ok) throw done.err;
    return done.value;
  }

  /** PATCH: returns the new row, or undefined if there is no such webhook. */
  update(id: string, patch: WebhookPatch): Promise<WebhookRow | undefined> {
    return this.change(async () => {
      const db = createDb(this.env.DB);
      const before = await getWebhook(db, id);
      if (!before) {
        this.hook = null;
        return undefined;
      }
      const row = await updateWebhook(db, before, patch, nextVersion(before));
      this.hook = row ?? null;
      return row;
    });
  }

  /**
   * New posting secret, same id (and gate): a new version, so a copy made before it, which knew the
   * old secret, is stale from now on (the post path checks a copy's secret against the URL's).
   */
  rotate(id: string): Promise<WebhookRow | undefined> {
    return this.change(async () => {
      const db = createDb(this.env.DB);
      const before = await getWebhook(db, id);
      const row = before && (await rotateWebhook(db, id, nextVersion(before)));
      this.hook = row ?? null;
      return row;
    });
  }

  remove(id: string): Promise<boolean> {
    return this.change(async () => {
      const deleted = await deleteWebhook(createDb(this.env.DB), id);
      this.hook = null;
      return deleted;
    });
  }

  // ---- expiry --------------------------------------------------------------------------------

  private ensureAlarm(at: number): void {
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }

  override alarm(): void {
    this.alarmAt = null;
    const now = Date.now();
    this.sql.exec("DELETE FROM idempotency WHERE expires_at <= ? AND state != 'pending'", now);
    this.sql.exec(
      "UPDATE idempotency SET state = 'uncertain', expires_at = ? WHERE state = 'pending' AND expires_at <= ?",
      now + CHAT_LIMITS.idempotencyTtlMs,
      now,
    );
    this.sql.exec('DELETE FROM decisions WHERE expires_at <= ?', now);
    const next = this.sql
      .exec<{ at: number | null }>(
        'SELECT MIN(at) AS at FROM (SELECT MIN(expires_at) AS at FROM idempotency UNION ALL SELECT MIN(expires_at) FROM decisions)',
      )
      .one().at;
    if (next !== null) this.ensureAlarm(next);
  }
}

/** Strictly later than the version it replaces, even within one millisecond. */
function nextVersion(before: WebhookRow): string {
  return new Date(Math.max(Date.now(), Date.parse(before.updatedAt) + 1)).toISOString();
}
