import { DurableObject } from 'cloudflare:workers';
import { CHAT_LIMITS, defaultIconUrl } from '../limits';
import { PROTOCOL } from '../protocol';
import { AlarmSchedule } from './alarm';
import { Outbox } from './outbox';
import { RoomLog } from './room-log';
import { PreparedDrafts } from './two-phase';
import { RoomGoneError, type Delivery, type MessageDraft } from './types';
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
 */
export class RoomObject extends DurableObject<Env> {
  private readonly log: RoomLog;
  private readonly alarms: AlarmSchedule;
  private readonly viewers: Viewers;
  private readonly outbox: Outbox;
  private readonly prepared: PreparedDrafts;

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

  /** Single-room post: order, persist and broadcast in one step. */
  append(roomId: string, draft: MessageDraft): Delivery {
    this.log.bind(roomId);
    return this.commitMessage(draft, null);
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
