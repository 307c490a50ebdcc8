import { DurableObject } from 'cloudflare:workers';
import { CHAT_LIMITS, defaultIconUrl } from '../limits';
import { PROTOCOL } from '../protocol';
import { AlarmSchedule } from './alarm';
import { Outbox } from './outbox';
import { authorOf, LOG_COLUMNS, RoomLog, type LogRow } from './room-log';
import { PreparedDrafts } from './two-phase';
import { RoomGoneError, type ChangeResult, type Delivery, type MessageChange, type MessageDraft } from './types';
import { Viewers } from './viewers';

/**
 * One chat room: orders, persists and broadcasts its messages.
 *
 * - Order and storage: room-log.ts.
 * - Durability: a message is written to this object's SQLite storage in one transaction before the
 *   call returns; the runtime's output gate holds the reply (and the broadcast frames) until that
 *   write is durable, so a 2xx never precedes durability and no viewer sees a message that is lost.
 * - System of record: D1, fed by outbox.ts.
 * - Viewers and broadcast: viewers.ts.
 * - Multi-room posts: `prepare` / `commit` / `abort` (two-phase.ts; chat/deliver.ts for the whole protocol).
 * - Changes (`change`, and a keyed `append`): a message keeps its id and seq; its new version is
 *   stored in one transaction (log and `edits`, which the outbox writes to D1) before the call
 *   returns, and goes to viewers as an `update` frame. A message older than the log's window is
 *   read from D1 first; such changes run one at a time, so they apply in the order they came.
 */
export class RoomObject extends DurableObject<Env> {
  private readonly log: RoomLog;
  private readonly alarms: AlarmSchedule;
  private readonly viewers: Viewers;
  private readonly outbox: Outbox;
  private readonly prepared: PreparedDrafts;
  /** Changes of messages older than the log's window, one at a time (each reads D1 first). */
  private olderChanges: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.log = new RoomLog(ctx.storage);
    this.alarms = new AlarmSchedule(ctx.storage);
    // Before any event: the alarm already set, so `ensure` never moves it later (see alarm.ts), and
    // a sender for every row stored before messages had one.
    void ctx.blockConcurrencyWhile(async () => {
      await this.alarms.load();
      await this.backfillSenders();
    });
    this.viewers = new Viewers(ctx, env.DB, this.log);
    this.outbox = new Outbox(env.DB, this.log, this.alarms);
    this.prepared = new PreparedDrafts(ctx.storage.sql, env.WEBHOOK_GATES, this.alarms);
  }

  // ---- posting ------------------------------------------------------------------------------

  /**
   * Single-room post: order, persist and broadcast in one step. A keyed draft replaces the message
   * its author last posted with that key here (same id and seq, an `update` frame), if there is one
   * still standing; otherwise it is a new message that the key names from now on.
   */
  async append(roomId: string, draft: MessageDraft): Promise<Delivery> {
    this.log.bind(roomId);
    if (draft.key === undefined) return this.commitMessage(draft, null);
    const storedSeq = this.log.repeatOf(draft, null);
    if (storedSeq !== undefined) return { roomId, messageId: draft.id, seq: storedSeq };
    const key = { author: authorOf({ webhookId: draft.webhookId, personId: draft.personId }), key: draft.key };
    for (let tries = 0; tries < 3; tries++) {
      const previous = this.log.keyed(key.author, key.key);
      if (previous === undefined) break;
      const edit = {
        markdown: draft.markdown,
        html: draft.html,
        metadata: draft.metadata,
        level: draft.level ?? 'info',
        sender: draft.sender ?? { name: 'Webhook', iconUrl: null },
      };
      const result = await this.changeMessage(
        { messageId: previous, webhookId: draft.webhookId, personId: draft.personId ?? null, edit },
        key,
      );
      if (result.kind === 'changed') return { roomId, messageId: result.message.id, seq: result.message.seq, replaced: true };
      // Deleted (or gone) meanwhile: a new message, unless another post took the key while this one read D1.
      if (this.log.keyed(key.author, key.key) === previous) break;
    }
    return this.commitMessage(draft, null);
  }

  /** An edit or delete of a stored message by its author (anyone else, or an unknown id: not found). */
  change(roomId: string, change: MessageChange): Promise<ChangeResult> {
    this.log.bind(roomId);
    return this.changeMessage(change);
  }

  /** Phase 1 of a multi-room post: keep the draft durably, invisible and without a seq. */
  prepare(roomId: string, txId: string, coordinator: string, draft: MessageDraft): void {
    this.log.bind(roomId);
    this.prepared.prepare(txId, coordinator, draft);
  }

  /** Phase 2: give the prepared draft its seq. Repeating a commit answers the same delivery. */
  commit(roomId: string, txId: string): Delivery {
    this.log.bind(roomId);
    const done = this.log.committed(txId);
    if (done) return { roomId, messageId: done.id, seq: done.seq };
    return this.commitMessage(this.prepared.draft(roomId, txId), txId);
  }

  abort(roomId: string, txId: string): void {
    this.log.bind(roomId);
    this.prepared.drop(txId);
  }

  /**
   * Gives the draft the next seq, stores it and broadcasts it, all in one synchronous step. A draft
   * whose id is already stored (a retried idempotent post) gets the stored delivery back instead.
   */
  private commitMessage(draft: MessageDraft, txId: string | null): Delivery {
    const storedSeq = this.log.repeatOf(draft, txId);
    if (storedSeq !== undefined) {
      if (txId !== null) this.prepared.drop(txId);
      return { roomId: this.log.roomId!, messageId: draft.id, seq: storedSeq };
    }
    const message = this.log.append(draft, txId);
    this.viewers.queue(message);
    this.outbox.appended();
    return { roomId: message.roomId, messageId: message.id, seq: message.seq };
  }

  private async changeMessage(change: MessageChange, key?: { author: string; key: string }): Promise<ChangeResult> {
    const local = this.log.local(change.messageId);
    if (local) return this.applyChange(local, change, key);
    const run = this.olderChanges.then(async () => {
      const current = this.log.pendingChange(change.messageId) ?? (await this.readFromD1(change.messageId));
      // Anything that changed it while D1 answered is in `edits` now.
      const latest = this.log.pendingChange(change.messageId) ?? current;
      return latest ? this.applyChange(latest, change, key) : ({ kind: 'not-found' } as const);
    });
    this.olderChanges = run.catch(() => undefined);
    return run;
  }

  /** Synchronous from the check to the broadcast: no other change of the message comes in between. */
  private applyChange(current: LogRow, change: MessageChange, key?: { author: string; key: string }): ChangeResult {
    if (current.webhook_id !== change.webhookId || (current.person_id ?? null) !== change.personId) return { kind: 'not-found' };
    const now = new Date().toISOString();
    const version = (current.version ?? 0) + 1;
    let next: LogRow;
    if (change.edit === null) {
      if (current.deleted_at !== null) return { kind: 'changed', message: this.log.toMessage(current), changed: false };
      next = { ...current, markdown: '', html: '', metadata: null, deleted_at: now, version };
    } else {
      if (current.deleted_at !== null) return { kind: 'not-found' };
      const e = change.edit;
      if (
        e.markdown === current.markdown &&
        e.metadata === current.metadata &&
        e.level === current.level &&
        e.sender.name === current.sender_name &&
        e.sender.iconUrl === current.sender_icon_url
      ) {
        return { kind: 'changed', message: this.log.toMessage(current), changed: false };
      }
      next = {
        ...current,
        markdown: e.markdown,
        html: e.html,
        metadata: e.metadata,
        level: e.level,
        sender_name: e.sender.name,
        sender_icon_url: e.sender.iconUrl,
        edited_at: now,
        version,
      };
    }
    const message = this.log.change(next, key);
    this.viewers.queueUpdate(message);
    this.outbox.appended();
    return { kind: 'changed', message, changed: true };
  }

  private async readFromD1(id: string): Promise<LogRow | undefined> {
    return (
      (await this.env.DB.prepare(`SELECT ${LOG_COLUMNS} FROM messages WHERE id = ? AND room_id = ?`)
        .bind(id, this.log.roomId)
        .first<LogRow>()) ?? undefined
    );
  }

  /**
   * Rows this room stored before messages had a sender get their webhook's name and icon, as
   * migration 0010 gave D1's rows (one D1 read, once per room). On failure they show UNKNOWN_SENDER
   * and the next start of the object tries again.
   */
  private async backfillSenders(): Promise<void> {
    for (let round = 0; round < 10; round++) {
      const ids = this.log.webhooksWithoutSender();
      if (ids.length === 0) return;
      try {
        const { results } = await this.env.DB.prepare(
          'SELECT id, name, kind, avatar_url FROM webhooks WHERE id IN (SELECT value FROM json_each(?))',
        )
          .bind(JSON.stringify(ids))
          .all<{ id: string; name: string; kind: string; avatar_url: string | null }>();
        const senders = new Map(results.map((w) => [w.id, { name: w.name, iconUrl: w.avatar_url ?? defaultIconUrl(w.kind) }]));
        this.log.backfillSenders(ids, senders);
      } catch (err) {
        console.error(`room ${this.log.roomId}: could not name the senders of earlier messages`, err);
        return;
      }
    }
  }

  // ---- viewers ------------------------------------------------------------------------------

  /**
   * WebSocket upgrade, forwarded by the Worker after it checked the viewer's permission. Query:
   * `room` (the room id), `token` (the id of the token that opened it, for revocation), and `after`
   * (replay every message after that seq) or `tail` (replay the latest n); neither: live messages
   * only. Answers 101 at once (the replay follows in pages), or 429 when the room has its maximum
   * of viewers (the Worker answers 503).
   */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get('Upgrade')?.toLowerCase() !== 'websocket') {
      return new Response('Expected a WebSocket upgrade.', { status: 426 });
    }
    const url = new URL(request.url);
    try {
      this.log.bind(url.searchParams.get('room') ?? '');
    } catch (err) {
      if (err instanceof RoomGoneError) return new Response('The room was deleted.', { status: 410 });
      throw err;
    }
    const client = this.viewers.connect(
      url.searchParams.get(PROTOCOL.query.after),
      url.searchParams.get(PROTOCOL.query.tail),
      url.searchParams.get('token') ?? '',
    );
    if (client === null) return new Response('The room has its maximum of viewers.', { status: 429 });
    // The socket's maximum lifetime: the alarm closes it (and every other one then due).
    this.alarms.ensure(Date.now() + CHAT_LIMITS.socketLifetimeMs);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Acks (flow control); heartbeats never get here: the runtime answers them without waking this object. */
  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    this.viewers.message(ws, message);
  }

  override webSocketClose(ws: WebSocket, code: number): void {
    this.viewers.closed(ws, code);
  }

  override webSocketError(ws: WebSocket): void {
    this.viewers.failed(ws);
  }

  /** The token was revoked: its sockets here are closed (4401). Returns how many. */
  closeToken(tokenId: string): number {
    if (this.log.deleted) return 0;
    return this.viewers.closeToken(tokenId);
  }

  // ---- flushing to D1 -----------------------------------------------------------------------

  /** Resolves once every message stored so far is in D1 (history reads D1 after this). */
  async flush(roomId: string): Promise<void> {
    this.log.bind(roomId);
    await this.outbox.flush();
  }

  // ---- alarm: flush retries, settling of stale prepared messages, socket lifetimes -----------

  override async alarm(): Promise<void> {
    this.alarms.forget();
    if (this.log.deleted) return;
    const nextExpiry = this.viewers.closeExpired(Date.now());
    if (nextExpiry !== null) this.alarms.ensure(nextExpiry);
    await this.prepared.settleStale(this.log.roomId, (draft, txId) => this.commitMessage(draft, txId));
    await this.outbox.attempt();
    this.prepared.scheduleSettling();
  }

  // ---- deletion -----------------------------------------------------------------------------

  /** The room is being deleted: disconnect viewers and drop all state, leaving a tombstone. */
  async purge(roomId: string): Promise<void> {
    if (this.log.deleted) return;
    this.log.bind(roomId);
    this.viewers.closeAll();
    await this.outbox.stop();
    await this.ctx.storage.deleteAlarm();
    await this.log.purge(roomId);
    this.alarms.forget();
  }
}
