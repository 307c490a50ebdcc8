import { encodeFrame, encodeMessageFrames, PROTOCOL, type ChatMessage } from '../protocol';
import type { LogRow, RoomLog } from './room-log';

const REPLAY_PAGE = 500;
/**
 * A frame of at least this many messages means posts arrive faster than the room sends: the next
 * frame then waits BUSY_SEND_DELAY_MS to gather more, as one send per viewer per frame is the
 * largest cost of a post at 100 viewers. Below that rate every frame goes out at once.
 */
const BUSY_BATCH = 4;
const BUSY_SEND_DELAY_MS = 10;

interface ViewerState {
  /** Live viewers get every new message; false while the replay is still being sent. */
  live: boolean;
}

/**
 * The room's viewers and the broadcast to them.
 *
 * - Viewers: hibernatable WebSockets; a new viewer is sent the replay, then `ready`, then becomes
 *   live in one synchronous step, so there is no gap or duplicate at the seam.
 * - Broadcast: committed messages wait in `pending` for a 0 ms timer, so the messages of one burst
 *   of calls go out as one frame per viewer instead of one frame per message per viewer (the cost
 *   that dominated at 100 viewers); after a frame of BUSY_BATCH or more messages (the room is
 *   saturated) the timer waits BUSY_SEND_DELAY_MS instead, so frames carry more. The timer's sends
 *   are output like any other, so the output gate still holds them until the writes before them
 *   are durable. A new viewer first flushes `pending` to the viewers already live, then reads its
 *   replay from storage (which holds those messages), so it gets each message once: by replay if
 *   committed before it went live, live otherwise.
 */
export class Viewers {
  private readonly live = new Set<WebSocket>();
  /** Committed, not yet sent to the live viewers (in seq order). */
  private pending: ChatMessage[] = [];
  private sendScheduled = false;
  /** Messages in the last frame sent: many means the room is saturated (see BUSY_BATCH). */
  private lastBatch = 0;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly db: D1Database,
    private readonly log: RoomLog,
  ) {
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PROTOCOL.ping, PROTOCOL.pong));
    for (const ws of ctx.getWebSockets()) {
      if ((ws.deserializeAttachment() as ViewerState | null)?.live) this.live.add(ws);
    }
  }

  queue(message: ChatMessage): void {
    // Nobody live: a viewer that connects later reads it from storage in its replay.
    if (this.live.size === 0) return;
    this.pending.push(message);
    if (this.sendScheduled) return;
    this.sendScheduled = true;
    setTimeout(() => this.sendPending(), this.lastBatch >= BUSY_BATCH ? BUSY_SEND_DELAY_MS : 0);
  }

  /** Sends every pending message to every live viewer, as few frames as fit. */
  private sendPending(): void {
    this.sendScheduled = false;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.lastBatch = batch.length;
    for (const frame of encodeMessageFrames(batch)) {
      for (const ws of this.live) {
        try {
          ws.send(frame);
        } catch {
          this.live.delete(ws);
        }
      }
    }
  }

  /**
   * Accepts a viewer and returns the client's end: it replays every message after `after`, or the
   * latest `tail`, or none, then goes live.
   */
  async connect(after: string | null, tail: string | null): Promise<WebSocket> {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    server.serializeAttachment({ live: false } satisfies ViewerState);

    const lastSeq = this.log.lastSeq;
    let cursor = after !== null ? Number(after) : tail !== null ? Math.max(0, lastSeq - Number(tail)) : lastSeq;
    try {
      // Messages older than the local window come from D1 (they were flushed before being dropped here).
      for (;;) {
        const oldestLocal = this.log.oldestLocalSeq();
        if (cursor >= oldestLocal - 1) break;
        const rows = await this.readFromD1(cursor, oldestLocal - 1);
        if (rows.length === 0) throw new Error(`room ${this.log.roomId}: messages after ${cursor} are missing from D1`);
        for (const frame of encodeMessageFrames(rows)) server.send(frame);
        cursor = rows[rows.length - 1]!.seq;
      }
      // From the last check on, no await: the local rest, `ready` and going live form one step.
      // Pending messages go to the viewers already live first; this one reads them from storage.
      this.sendPending();
      for (const frame of encodeMessageFrames(this.log.messagesAfter(cursor))) server.send(frame);
      server.send(encodeFrame({ type: 'ready', lastSeq: this.log.lastSeq }));
      server.serializeAttachment({ live: true } satisfies ViewerState);
      this.live.add(server);
    } catch (err) {
      console.error('replay failed', err);
      try {
        server.close(PROTOCOL.close.replayFailed, 'replay failed');
      } catch {
        // The viewer already left.
      }
    }
    return client;
  }

  closed(ws: WebSocket, code: number): void {
    this.live.delete(ws);
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, 'closing');
    } catch {
      // Already closed.
    }
  }

  failed(ws: WebSocket): void {
    this.live.delete(ws);
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
    this.live.clear();
    this.pending = [];
  }

  private async readFromD1(after: number, upTo: number): Promise<ChatMessage[]> {
    const { results } = await this.db
      .prepare(
        `SELECT id, room_id, seq, webhook_id, markdown, html, metadata, created_at FROM messages
       WHERE room_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`,
      )
      .bind(this.log.roomId, after, upTo, REPLAY_PAGE)
      .all<LogRow & { room_id: string }>();
    return results.map((row) => this.log.toMessage(row));
  }
}
