import { CHAT_LIMITS } from '../limits';
import { decodeClientFrame, encodeFrame, encodeMessageFrames, PROTOCOL, utf8Length, type ChatMessage } from '../protocol';
import { replayPageSql, type LogRow, type RoomLog } from './room-log';

/**
 * A frame of at least this many messages means posts arrive faster than the room sends: the next
 * frame then waits BUSY_SEND_DELAY_MS to gather more, as one send per viewer per frame is the
 * largest cost of a post at 100 viewers. Below that rate every frame goes out at once.
 */
const BUSY_BATCH = 4;
const BUSY_SEND_DELAY_MS = 10;
/**
 * The next replay page goes out only while less than this is unacknowledged: half the budget, so a
 * replay never brings a viewer near it, and more than PROTOCOL.ackEveryBytes, so the bytes a reading
 * client has not acked yet (it acks every 32 KiB) never hold the replay up.
 */
const REPLAY_RESUME_BYTES = CHAT_LIMITS.viewerBudgetBytes / 2;
/** Rows the first replay query reads; later ones adapt to the sizes met (see sendPage). */
const FIRST_PAGE_ROWS = 50;
const D1_PAGE = replayPageSql('messages WHERE room_id = ? AND seq <= ? AND seq > ?');

/** What a viewer's socket keeps across hibernation (serializeAttachment). */
interface Attachment {
  /** The token that opened the socket ('admin': ADMIN_TOKEN); revoking it closes the socket. */
  tokenId: string;
  /** Date.now() at the upgrade; the socket is closed CHAT_LIMITS.socketLifetimeMs later. */
  openedAt: number;
  /** Live viewers get every new message; false while the replay is still being sent. */
  live: boolean;
  /** The replay's last seq sent. */
  cursor: number;
  /** UTF-8 bytes sent and acknowledged, as of the last write (live sends count in memory only). */
  sent: number;
  acked: number;
}

interface Viewer extends Attachment {
  readonly ws: WebSocket;
  closed: boolean;
  /** A replay loop runs for it (none after hibernation, until the viewer's next ack resumes it). */
  replaying: boolean;
  /** Resolves the replay loop's wait for acks. */
  wake: (() => void) | undefined;
  /** Rows the next replay query reads at most. */
  pageRows: number;
}

/**
 * The room's viewers and the broadcast to them.
 *
 * - Viewers: hibernatable WebSockets, each with an Attachment (token, opening time, replay cursor,
 *   byte counts) that survives hibernation. The upgrade answers at once; the replay follows in pages.
 * - Flow control: the runtime shows no send queue, so each viewer acks the bytes it received
 *   (protocol.ts); `sent - acked` is what may still sit in the runtime's queue for it. Replay pages
 *   go out only while that is under REPLAY_RESUME_BYTES; a live viewer over its budget when a
 *   frame is due is closed with 4008 (it reconnects with `after=`). So a viewer holds at most its
 *   budget plus one frame, and CHAT_LIMITS.viewersPerRoom bounds the room.
 * - Seam: the replay reads pages from D1 (older than the local window) and from storage; the page
 *   that reaches the newest message, `ready` and going live form one synchronous step. Messages
 *   committed before that step are in storage, so that page has them; those committed after it
 *   reach the viewer live. No gap, no duplicate.
 * - Broadcast: committed messages wait in `pending` for a 0 ms timer, so the messages of one burst
 *   of calls go out as one frame per viewer instead of one frame per message per viewer (the cost
 *   that dominated at 100 viewers); after a frame of BUSY_BATCH or more messages (the room is
 *   saturated) the timer waits BUSY_SEND_DELAY_MS instead, so frames carry more. The timer's sends
 *   are output like any other, so the output gate still holds them until the writes before them
 *   are durable. The step that takes a viewer live first flushes `pending` to the viewers already
 *   live (its own last page, read from storage, holds those messages).
 */
export class Viewers {
  /** Every open viewer, replaying or live. */
  private readonly viewers = new Map<WebSocket, Viewer>();
  /** The live ones: the broadcast loop walks only these. */
  private readonly live = new Map<WebSocket, Viewer>();
  /** Committed, not yet sent to the live viewers (in seq order). */
  private pending: ChatMessage[] = [];
  /** Changed (edited, deleted), not yet sent to the live viewers: after `pending`, which may hold their first version. */
  private pendingUpdates: ChatMessage[] = [];
  private sendScheduled = false;
  /** Messages in the last frame sent: many means the room is saturated (see BUSY_BATCH). */
  private lastBatch = 0;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly db: D1Database,
    private readonly log: RoomLog,
  ) {
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PROTOCOL.ping, PROTOCOL.pong));
    const now = Date.now();
    for (const ws of ctx.getWebSockets()) {
      const a = (ws.deserializeAttachment() ?? {}) as Partial<Attachment>;
      // A socket from before attachments carried all this: a fresh session; a replay restarts at 0.
      this.track(ws, {
        tokenId: a.tokenId ?? '',
        openedAt: a.openedAt ?? now,
        live: a.live ?? false,
        cursor: a.cursor ?? 0,
        sent: a.sent ?? 0,
        acked: a.acked ?? 0,
      });
    }
  }

  queue(message: ChatMessage): void {
    // Nobody live: a viewer that connects later reads it from storage in its replay.
    if (this.live.size === 0) return;
    this.pending.push(message);
    this.scheduleSend();
  }

  /**
   * A stored message changed. A viewer still replaying gets the `update` frame now if its replay
   * has passed the message (its later pages read the rest from storage, changed); live viewers get
   * it with the next batch, after any `messages` frame that holds the message's first version.
   */
  queueUpdate(message: ChatMessage): void {
    for (const viewer of this.viewers.values()) {
      if (viewer.live || viewer.cursor < message.seq) continue;
      try {
        for (const frame of encodeMessageFrames([message], 'update')) {
          viewer.ws.send(frame);
          viewer.sent += utf8Length(frame);
        }
      } catch {
        this.forget(viewer);
      }
    }
    if (this.live.size === 0) return;
    this.pendingUpdates.push(message);
    this.scheduleSend();
  }

  private scheduleSend(): void {
    if (this.sendScheduled) return;
    this.sendScheduled = true;
    setTimeout(() => this.sendPending(), this.lastBatch >= BUSY_BATCH ? BUSY_SEND_DELAY_MS : 0);
  }

  /**
   * Sends every pending message to every live viewer, as few frames as fit. The hot path at 100
   * viewers: per viewer and frame one comparison, one send and one addition.
   */
  private sendPending(): void {
    this.sendScheduled = false;
    if (this.pending.length === 0 && this.pendingUpdates.length === 0) return;
    const batch = this.pending;
    const updates = this.pendingUpdates;
    this.pending = [];
    this.pendingUpdates = [];
    this.lastBatch = batch.length;
    const budget = CHAT_LIMITS.viewerBudgetBytes;
    const frames = encodeMessageFrames(batch);
    if (updates.length > 0) frames.push(...encodeMessageFrames(updates, 'update'));
    for (const frame of frames) {
      const bytes = utf8Length(frame);
      for (const viewer of this.live.values()) {
        if (viewer.sent - viewer.acked > budget) {
          this.close(viewer, PROTOCOL.close.tooSlow, 'too slow: reconnect with after=<last seq you have>');
          continue;
        }
        try {
          viewer.ws.send(frame);
          viewer.sent += bytes;
        } catch {
          this.forget(viewer);
        }
      }
    }
  }

  /**
   * Accepts a viewer and returns the client's end at once (null: the room has its maximum of
   * viewers). The replay — every message after `after`, or the latest `tail`, or none — follows in
   * pages, then `ready`, then live messages.
   */
  connect(after: string | null, tail: string | null, tokenId: string): WebSocket | null {
    // Every socket the runtime still holds counts, closing ones too: their queues are memory as well.
    if (this.ctx.getWebSockets().length >= CHAT_LIMITS.viewersPerRoom) return null;
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    const lastSeq = this.log.lastSeq;
    const cursor = after !== null ? Number(after) : tail !== null ? Math.max(0, lastSeq - Number(tail)) : lastSeq;
    const viewer = this.track(server, { tokenId, openedAt: Date.now(), live: false, cursor, sent: 0, acked: 0 });
    this.save(viewer);
    void this.replay(viewer);
    return client;
  }

  /** A frame from a viewer: an ack (anything else is ignored; pings never get here). */
  message(ws: WebSocket, data: string | ArrayBuffer): void {
    const ack = decodeClientFrame(data);
    const viewer = this.viewers.get(ws);
    if (ack === undefined || viewer === undefined || ack.bytes <= viewer.acked) return;
    // After hibernation `sent` may lag what was sent (live sends are counted in memory only).
    if (ack.bytes > viewer.sent) viewer.sent = ack.bytes;
    viewer.acked = ack.bytes;
    this.save(viewer);
    if (viewer.live) return;
    if (viewer.wake !== undefined) {
      if (viewer.sent - viewer.acked < REPLAY_RESUME_BYTES) viewer.wake();
    } else if (!viewer.replaying) {
      // The room hibernated while this replay waited for acks: it goes on from its cursor.
      void this.replay(viewer);
    }
  }

  closed(ws: WebSocket, code: number): void {
    const viewer = this.viewers.get(ws);
    if (viewer) this.forget(viewer);
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, 'closing');
    } catch {
      // Already closed.
    }
  }

  failed(ws: WebSocket): void {
    const viewer = this.viewers.get(ws);
    if (viewer) this.forget(viewer);
  }

  /** The room was deleted: every viewer is disconnected, and nothing more is sent. */
  closeAll(): void {
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.close(PROTOCOL.close.roomDeleted, 'room deleted');
      } catch {
        // Already closed.
      }
    }
    for (const viewer of this.viewers.values()) this.forget(viewer);
    this.pending = [];
    this.pendingUpdates = [];
  }

  /** The token was revoked: closes the sockets it opened. Returns how many. */
  closeToken(tokenId: string): number {
    let n = 0;
    for (const viewer of this.viewers.values()) {
      if (viewer.tokenId !== tokenId) continue;
      this.close(viewer, PROTOCOL.close.revoked, 'token revoked');
      n++;
    }
    return n;
  }

  /**
   * Closes the sockets older than CHAT_LIMITS.socketLifetimeMs (by their attachment, the record that
   * survives hibernation); returns when the next one is due (null: no sockets).
   */
  closeExpired(now: number): number | null {
    let next: number | null = null;
    for (const ws of this.ctx.getWebSockets()) {
      const openedAt = (ws.deserializeAttachment() as Partial<Attachment> | null)?.openedAt ?? now;
      const due = openedAt + CHAT_LIMITS.socketLifetimeMs;
      if (due > now) {
        next = next === null ? due : Math.min(next, due);
        continue;
      }
      const viewer = this.viewers.get(ws);
      const reason = 'session expired: reconnect with a fresh ticket and after=<last seq you have>';
      if (viewer) this.close(viewer, PROTOCOL.close.expired, reason);
      else {
        try {
          ws.close(PROTOCOL.close.expired, reason);
        } catch {
          // Already closed.
        }
      }
    }
    return next;
  }

  private track(ws: WebSocket, attachment: Attachment): Viewer {
    const viewer: Viewer = { ...attachment, ws, closed: false, replaying: false, wake: undefined, pageRows: FIRST_PAGE_ROWS };
    this.viewers.set(ws, viewer);
    if (viewer.live) this.live.set(ws, viewer);
    return viewer;
  }

  private save(viewer: Viewer): void {
    const { tokenId, openedAt, live, cursor, sent, acked } = viewer;
    try {
      viewer.ws.serializeAttachment({ tokenId, openedAt, live, cursor, sent, acked } satisfies Attachment);
    } catch {
      // Closed meanwhile.
    }
  }

  private close(viewer: Viewer, code: number, reason: string): void {
    try {
      viewer.ws.close(code, reason);
    } catch {
      // Already closed.
    }
    this.forget(viewer);
  }

  /** Nothing more goes to this viewer; a replay waiting for its acks ends. */
  private forget(viewer: Viewer): void {
    viewer.closed = true;
    this.viewers.delete(viewer.ws);
    this.live.delete(viewer.ws);
    viewer.wake?.();
  }

  /**
   * Sends the viewer's replay page by page from its cursor, each page once less than
   * REPLAY_RESUME_BYTES is unacknowledged, then `ready`, and takes it live.
   */
  private async replay(viewer: Viewer): Promise<void> {
    viewer.replaying = true;
    try {
      while (!viewer.closed) {
        if (viewer.sent - viewer.acked >= REPLAY_RESUME_BYTES) {
          // The room holds nothing for this viewer meanwhile but its state (and may hibernate).
          await new Promise<void>((resolve) => {
            viewer.wake = resolve;
          });
          viewer.wake = undefined;
          continue;
        }
        const oldestLocal = this.log.oldestLocalSeq();
        if (viewer.cursor < oldestLocal - 1) {
          // Older than the local window: from D1 (flushed there before being dropped here).
          const rows = await this.readFromD1(viewer.cursor, oldestLocal - 1, viewer.pageRows);
          if (viewer.closed) return;
          if (rows.length === 0) throw new Error(`room ${this.log.roomId}: messages after ${viewer.cursor} are missing from D1`);
          this.sendPage(viewer, rows);
          continue;
        }
        // No await from this read on: when the page reaches the newest message, the page,
        // `ready` and going live are one synchronous step, so no message commits in between.
        const rows = this.log.pageAfter(viewer.cursor, viewer.pageRows, CHAT_LIMITS.replayPageChars);
        if ((rows.at(-1)?.seq ?? viewer.cursor) < this.log.lastSeq) {
          this.sendPage(viewer, rows);
          continue;
        }
        // Pending messages go to the viewers already live first; this one has them in `rows`.
        this.sendPending();
        if (rows.length > 0) this.sendPage(viewer, rows);
        const ready = encodeFrame({ type: 'ready', lastSeq: this.log.lastSeq });
        viewer.ws.send(ready);
        viewer.sent += utf8Length(ready);
        viewer.live = true;
        this.save(viewer);
        this.live.set(viewer.ws, viewer);
        return;
      }
    } catch (err) {
      if (viewer.closed) return;
      console.error('replay failed', err);
      this.close(viewer, PROTOCOL.close.replayFailed, 'replay failed');
    } finally {
      viewer.replaying = false;
    }
  }

  private sendPage(viewer: Viewer, rows: ChatMessage[]): void {
    for (const frame of encodeMessageFrames(rows)) {
      viewer.ws.send(frame);
      viewer.sent += utf8Length(frame);
    }
    viewer.cursor = rows[rows.length - 1]!.seq;
    this.save(viewer);
    // A page cut short by its size means large messages: read about twice as many rows as fitted
    // next time, so a query never reads far more rows than it sends.
    viewer.pageRows =
      rows.length < viewer.pageRows ? Math.max(4, rows.length * 2) : Math.min(CHAT_LIMITS.replayPageMessages, viewer.pageRows * 2);
  }

  private async readFromD1(after: number, upTo: number, rows: number): Promise<ChatMessage[]> {
    const { results } = await this.db.prepare(D1_PAGE).bind(this.log.roomId, upTo, after, rows, CHAT_LIMITS.replayPageChars).all<LogRow>();
    // Changes of these messages not yet written to D1 are shown as they are now.
    const changed = this.log.pendingChanges(after, upTo);
    return results.map((row) => this.log.toMessage(changed.get(row.id) ?? row));
  }
}
