import { DurableObject } from 'cloudflare:workers';
import { encodeFrame, encodeMessageFrames, PROTOCOL, type ChatMessage } from './protocol';

/** A message as the Worker hands it to a room: rendered and identified, not yet ordered. */
export interface MessageDraft {
  id: string;
  webhookId: string;
  markdown: string;
  html: string;
  metadata: string | null;
  /** The id derives from an idempotency attempt: remember it (24 h) and answer a repeat with the stored delivery. */
  dedupe: boolean;
}

export interface Delivery {
  roomId: string;
  messageId: string;
  seq: number;
}

export class RoomGoneError extends Error {
  constructor() {
    super('The room was deleted.');
  }
}

/** Messages kept in the object's own storage once they are in D1 (replays beyond them read D1). */
export const LOCAL_WINDOW = 1_000;
const FLUSH_MAX_ROWS = 500;
/**
 * Rows go to D1 as one JSON parameter per statement (a bound parameter costs D1 far more than a
 * byte of JSON); a parameter stays well under D1's 2 MB value limit even at 3 UTF-8 bytes a char.
 */
const STATEMENT_MAX_CHARS = 500_000;
const INSERT_MESSAGES = `INSERT INTO messages (id, room_id, seq, webhook_id, markdown, html, metadata, created_at)
  SELECT json_extract(value, '$[0]'), ?1, json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
         json_extract(value, '$[4]'), json_extract(value, '$[5]'), json_extract(value, '$[6]')
  FROM json_each(?2) WHERE true
  ON CONFLICT DO NOTHING`;
const FLUSH_MAX_CHARS = 2_000_000;
/**
 * New messages wait this long before a flush to D1 starts, so one D1 batch carries many of them:
 * a D1 query costs far more than a row (locally, several ms of CPU in two more isolates), and under
 * load one flush per few messages was the largest CPU cost of a post. Nothing waits on it: the
 * message is durable in this object already, and history flushes first.
 */
const FLUSH_DELAY_MS = 1_000;
const REPLAY_PAGE = 500;
/**
 * A frame of at least this many messages means posts arrive faster than the room sends: the next
 * frame then waits BUSY_SEND_DELAY_MS to gather more, as one send per viewer per frame is the
 * largest cost of a post at 100 viewers. Below that rate every frame goes out at once.
 */
const BUSY_BATCH = 4;
const BUSY_SEND_DELAY_MS = 10;
/** Even if every flush attempt in memory is lost (eviction), an alarm brings the object back. */
const SAFETY_ALARM_MS = 30_000;
/** A prepared multi-room message not committed by then is settled with its coordinator. */
export const PREPARE_TIMEOUT_MS = 30_000;
const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 60_000;
/** Outlives the gate's memory of an uncertain idempotency key (24 h). */
const DEDUPE_TTL_MS = 25 * 60 * 60 * 1000;

interface ViewerState {
  /** Live viewers get every new message; false while the replay is still being sent. */
  live: boolean;
}

type LogRow = {
  seq: number;
  id: string;
  webhook_id: string;
  markdown: string;
  html: string;
  metadata: string | null;
  created_at: string;
};

type PreparedRow = { tx_id: string; coordinator: string; draft: string; prepared_at: number };

const LOG_COLUMNS = 'seq, id, webhook_id, markdown, html, metadata, created_at';

function migrate(sql: SqlStorage): void {
  sql.exec(`
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS log (
      seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, tx_id TEXT, webhook_id TEXT NOT NULL,
      markdown TEXT NOT NULL, html TEXT NOT NULL, metadata TEXT, created_at TEXT NOT NULL,
      flushed INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS log_unflushed ON log (seq) WHERE flushed = 0;
    CREATE INDEX IF NOT EXISTS log_tx ON log (tx_id) WHERE tx_id IS NOT NULL;
    CREATE TABLE IF NOT EXISTS keyed_ids (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, expires_at INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS prepared (
      tx_id TEXT PRIMARY KEY, coordinator TEXT NOT NULL, draft TEXT NOT NULL, prepared_at INTEGER NOT NULL
    );
  `);
}

/**
 * One chat room: orders, persists and broadcasts its messages.
 *
 * - Order: `seq` is taken from memory and written in the same synchronous step (no `await` in
 *   between), so concurrent posts get a total order. The log always keeps its newest row (trimming
 *   keeps the last LOCAL_WINDOW), so its largest seq is the last one given, and seq stays contiguous
 *   across restarts and evictions without a counter written on every post.
 * - Durability: a message is written to this object's SQLite storage in one transaction before the
 *   call returns; the runtime's output gate holds the reply (and the broadcast frames) until that
 *   write is durable, so a 2xx never precedes durability and no viewer sees a message that is lost.
 * - System of record: rows are then flushed to D1 in batches (INSERT .. ON CONFLICT DO NOTHING, so a
 *   retried flush never duplicates). A failed flush is retried by alarm with backoff; a safety alarm
 *   covers a flush lost to eviction. Flushed rows beyond the last LOCAL_WINDOW are dropped here.
 * - Viewers: hibernatable WebSockets; a new viewer is sent the replay, then `ready`, then becomes
 *   live in one synchronous step, so there is no gap or duplicate at the seam.
 * - Broadcast: committed messages wait in `pending` for a 0 ms timer, so the messages of one burst
 *   of calls go out as one frame per viewer instead of one frame per message per viewer (the cost
 *   that dominated at 100 viewers); after a frame of BUSY_BATCH or more messages (the room is
 *   saturated) the timer waits BUSY_SEND_DELAY_MS instead, so frames carry more. The timer's sends
 *   are output like any other, so the output gate still holds them until the writes before them
 *   are durable. A new viewer first flushes `pending`
 *   to the viewers already live, then reads its replay from storage (which holds those messages),
 *   so it gets each message once: by replay if committed before it went live, live otherwise.
 * - Multi-room posts: `prepare` / `commit` / `abort` (see chat/deliver.ts for the whole protocol).
 */
export class RoomObject extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private roomId: string | null;
  private lastSeq: number;
  private deleted: boolean;
  private readonly live = new Set<WebSocket>();
  /** Committed, not yet sent to the live viewers (in seq order). */
  private pending: ChatMessage[] = [];
  private sendScheduled = false;
  /** Messages in the last frame sent: many means the room is saturated (see BUSY_BATCH). */
  private lastBatch = 0;
  private alarmAt: number | null = null;
  private flushTail: Promise<void> = Promise.resolve();
  private flushQueued = false;
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private flushFailures = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrate(this.sql);
    this.roomId = this.meta('room_id');
    // meta.last_seq: the counter rooms wrote on every post before the log's own maximum was used.
    const newest = this.sql.exec<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM log').one().seq ?? 0;
    this.lastSeq = Math.max(newest, Number(this.meta('last_seq') ?? 0));
    this.deleted = this.meta('deleted') === '1';
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PROTOCOL.ping, PROTOCOL.pong));
    for (const ws of ctx.getWebSockets()) {
      if ((ws.deserializeAttachment() as ViewerState | null)?.live) this.live.add(ws);
    }
  }

  // ---- posting ------------------------------------------------------------------------------

  /** Single-room post: order, persist and broadcast in one step. */
  append(roomId: string, draft: MessageDraft): Delivery {
    this.bind(roomId);
    return this.commitMessage(draft, null);
  }

  /** Phase 1 of a multi-room post: keep the draft durably, invisible and without a seq. */
  prepare(roomId: string, txId: string, coordinator: string, draft: MessageDraft): void {
    this.bind(roomId);
    this.sql.exec(
      'INSERT OR IGNORE INTO prepared (tx_id, coordinator, draft, prepared_at) VALUES (?, ?, ?, ?)',
      txId,
      coordinator,
      JSON.stringify(draft),
      Date.now(),
    );
    this.ensureAlarm(Date.now() + PREPARE_TIMEOUT_MS);
  }

  /** Phase 2: give the prepared draft its seq. Repeating a commit answers the same delivery. */
  commit(roomId: string, txId: string): Delivery {
    this.bind(roomId);
    const done = this.sql.exec<{ seq: number; id: string }>('SELECT seq, id FROM log WHERE tx_id = ?', txId).toArray()[0];
    if (done) return { roomId, messageId: done.id, seq: done.seq };
    const prepared = this.sql.exec<PreparedRow>('SELECT * FROM prepared WHERE tx_id = ?', txId).toArray()[0];
    if (!prepared) throw new Error(`transaction ${txId} is not prepared in room ${roomId}`);
    return this.commitMessage(JSON.parse(prepared.draft) as MessageDraft, txId);
  }

  abort(roomId: string, txId: string): void {
    this.bind(roomId);
    this.sql.exec('DELETE FROM prepared WHERE tx_id = ?', txId);
  }

  /**
   * Gives the draft the next seq, stores it and broadcasts it, all in one synchronous step. A draft
   * whose id is already stored (a retried idempotent post) gets the stored delivery back instead.
   */
  private commitMessage(draft: MessageDraft, txId: string | null): Delivery {
    const roomId = this.roomId!;
    // Only a keyed post or a prepared one can come again with the same id; any other id is a fresh
    // random UUID (and the log's UNIQUE id would still refuse a repeat).
    const mayRepeat = draft.dedupe || txId !== null;
    const stored = mayRepeat
      ? this.sql
          .exec<{ seq: number }>('SELECT seq FROM log WHERE id = ? UNION ALL SELECT seq FROM keyed_ids WHERE id = ? LIMIT 1', draft.id, draft.id)
          .toArray()[0]
      : undefined;
    if (stored) {
      if (txId !== null) this.sql.exec('DELETE FROM prepared WHERE tx_id = ?', txId);
      return { roomId, messageId: draft.id, seq: stored.seq };
    }
    const message: ChatMessage = {
      id: draft.id,
      roomId,
      seq: this.lastSeq + 1,
      webhookId: draft.webhookId,
      markdown: draft.markdown,
      html: draft.html,
      metadata: draft.metadata,
      createdAt: new Date().toISOString(),
    };
    const insert = () =>
      this.sql.exec(
        `INSERT INTO log (${LOG_COLUMNS}, tx_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        message.seq,
        message.id,
        message.webhookId,
        message.markdown,
        message.html,
        message.metadata,
        message.createdAt,
        txId,
      );
    if (txId === null && !draft.dedupe) insert();
    else {
      this.ctx.storage.transactionSync(() => {
        insert();
        if (txId !== null) this.sql.exec('DELETE FROM prepared WHERE tx_id = ?', txId);
        if (draft.dedupe) {
          this.sql.exec('INSERT INTO keyed_ids (id, seq, expires_at) VALUES (?, ?, ?)', message.id, message.seq, Date.now() + DEDUPE_TTL_MS);
        }
      });
    }
    this.lastSeq = message.seq;
    this.queueBroadcast(message);
    this.ensureAlarm(Date.now() + SAFETY_ALARM_MS);
    this.requestFlush();
    return { roomId, messageId: message.id, seq: message.seq };
  }

  private queueBroadcast(message: ChatMessage): void {
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

  // ---- viewers ------------------------------------------------------------------------------

  /**
   * WebSocket upgrade, forwarded by the Worker after it checked the viewer's permission. Query:
   * `room` (the room id), and `after` (replay every message after that seq) or `tail` (replay the
   * latest n); neither: live messages only.
   */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get('Upgrade')?.toLowerCase() !== 'websocket') {
      return new Response('Expected a WebSocket upgrade.', { status: 426 });
    }
    const url = new URL(request.url);
    try {
      this.bind(url.searchParams.get('room') ?? '');
    } catch (err) {
      if (err instanceof RoomGoneError) return new Response('The room was deleted.', { status: 410 });
      throw err;
    }
    const after = url.searchParams.get(PROTOCOL.query.after);
    const tail = url.searchParams.get(PROTOCOL.query.tail);

    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    server.serializeAttachment({ live: false } satisfies ViewerState);

    let cursor = after !== null ? Number(after) : tail !== null ? Math.max(0, this.lastSeq - Number(tail)) : this.lastSeq;
    try {
      // Messages older than the local window come from D1 (they were flushed before being dropped here).
      for (;;) {
        const oldestLocal = this.oldestLocalSeq();
        if (cursor >= oldestLocal - 1) break;
        const rows = await this.readFromD1(cursor, oldestLocal - 1);
        if (rows.length === 0) throw new Error(`room ${this.roomId}: messages after ${cursor} are missing from D1`);
        for (const frame of encodeMessageFrames(rows)) server.send(frame);
        cursor = rows[rows.length - 1]!.seq;
      }
      // From the last check on, no await: the local rest, `ready` and going live form one step.
      // Pending messages go to the viewers already live first; this one reads them from storage.
      this.sendPending();
      const local = this.sql.exec<LogRow>(`SELECT ${LOG_COLUMNS} FROM log WHERE seq > ? ORDER BY seq`, cursor).toArray();
      for (const frame of encodeMessageFrames(local.map((row) => this.toMessage(row)))) server.send(frame);
      server.send(encodeFrame({ type: 'ready', lastSeq: this.lastSeq }));
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
    return new Response(null, { status: 101, webSocket: client });
  }

  override webSocketMessage(): void {
    // Viewers only send heartbeats, which the runtime answers without waking this object.
  }

  override webSocketClose(ws: WebSocket, code: number): void {
    this.live.delete(ws);
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, 'closing');
    } catch {
      // Already closed.
    }
  }

  override webSocketError(ws: WebSocket): void {
    this.live.delete(ws);
  }

  private oldestLocalSeq(): number {
    const row = this.sql.exec<{ seq: number | null }>('SELECT MIN(seq) AS seq FROM log').one();
    return row.seq ?? this.lastSeq + 1;
  }

  private async readFromD1(after: number, upTo: number): Promise<ChatMessage[]> {
    const { results } = await this.env.DB.prepare(
      `SELECT id, room_id, seq, webhook_id, markdown, html, metadata, created_at FROM messages
       WHERE room_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`,
    )
      .bind(this.roomId, after, upTo, REPLAY_PAGE)
      .all<LogRow & { room_id: string }>();
    return results.map((row) => this.toMessage(row));
  }

  private toMessage(row: LogRow): ChatMessage {
    return {
      id: row.id,
      roomId: this.roomId!,
      seq: row.seq,
      webhookId: row.webhook_id,
      markdown: row.markdown,
      html: row.html,
      metadata: row.metadata,
      createdAt: row.created_at,
    };
  }

  // ---- flushing to D1 -----------------------------------------------------------------------

  /** Resolves once every message stored so far is in D1 (history reads D1 after this). */
  async flush(roomId: string): Promise<void> {
    this.bind(roomId);
    await this.flushNow().catch((err: unknown) => {
      this.flushFailed(err);
      throw err;
    });
  }

  /** Coalesces flush requests: one starts FLUSH_DELAY_MS after the first; while one runs, at most one more is queued. */
  private requestFlush(): void {
    if (this.flushQueued || this.flushTimer !== null) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      if (this.flushQueued) return;
      this.flushQueued = true;
      this.flushNow().catch((err: unknown) => this.flushFailed(err));
    }, FLUSH_DELAY_MS);
  }

  private flushNow(): Promise<void> {
    const run = this.flushTail.then(() => {
      this.flushQueued = false;
      return this.flushPending();
    });
    this.flushTail = run.catch(() => undefined);
    return run;
  }

  private async flushPending(): Promise<void> {
    const roomId = this.roomId;
    if (roomId === null) return;
    for (;;) {
      const rows: LogRow[] = [];
      let chars = 0;
      for (const row of this.sql.exec<LogRow>(`SELECT ${LOG_COLUMNS} FROM log WHERE flushed = 0 ORDER BY seq LIMIT ?`, FLUSH_MAX_ROWS)) {
        chars += row.markdown.length + row.html.length + (row.metadata?.length ?? 0);
        if (rows.length > 0 && chars > FLUSH_MAX_CHARS) break;
        rows.push(row);
      }
      if (rows.length === 0) {
        this.flushFailures = 0;
        return;
      }
      await this.insertIntoD1(roomId, rows);
      const last = rows[rows.length - 1]!.seq;
      this.sql.exec('UPDATE log SET flushed = 1 WHERE flushed = 0 AND seq <= ?', last);
      this.sql.exec('DELETE FROM log WHERE flushed = 1 AND seq <= ?', this.lastSeq - LOCAL_WINDOW);
      this.sql.exec('DELETE FROM keyed_ids WHERE expires_at <= ?', Date.now());
    }
  }

  /** INSERT .. ON CONFLICT DO NOTHING (on the id or on room and seq), so a repeated flush never duplicates. */
  private async insertIntoD1(roomId: string, rows: LogRow[]): Promise<void> {
    const insert = this.env.DB.prepare(INSERT_MESSAGES);
    const statements: D1PreparedStatement[] = [];
    let chunk: string[] = [];
    let chars = 0;
    for (const row of rows) {
      const json = JSON.stringify([row.id, row.seq, row.webhook_id, row.markdown, row.html, row.metadata, row.created_at]);
      if (chunk.length > 0 && chars + json.length > STATEMENT_MAX_CHARS) {
        statements.push(insert.bind(roomId, `[${chunk.join(',')}]`));
        chunk = [];
        chars = 0;
      }
      chunk.push(json);
      chars += json.length + 1;
    }
    if (chunk.length > 0) statements.push(insert.bind(roomId, `[${chunk.join(',')}]`));
    if (statements.length > 0) await this.env.DB.batch(statements);
  }

  private flushFailed(err: unknown): void {
    this.flushFailures++;
    const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (this.flushFailures - 1));
    console.warn(`room ${this.roomId}: flush to D1 failed (attempt ${this.flushFailures}), retrying in ${delay} ms`, err);
    this.ensureAlarm(Date.now() + delay);
  }

  // ---- alarm: flush retries and settling of stale prepared messages --------------------------

  private ensureAlarm(at: number): void {
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }

  override async alarm(): Promise<void> {
    this.alarmAt = null;
    if (this.deleted) return;
    await this.settleStalePrepared();
    try {
      await this.flushNow();
    } catch (err) {
      this.flushFailed(err);
    }
    const oldest = this.sql.exec<{ at: number | null }>('SELECT MIN(prepared_at) AS at FROM prepared').one().at;
    if (oldest !== null) this.ensureAlarm(Math.max(Date.now() + RETRY_BASE_MS, oldest + PREPARE_TIMEOUT_MS));
  }

  /**
   * A prepared message whose commit or abort never came (the Worker failed mid-way): ask the
   * coordinator for the outcome. If it had not decided yet, asking decides "abort", so the post's
   * Worker can no longer commit it elsewhere.
   */
  private async settleStalePrepared(): Promise<void> {
    const stale = this.sql
      .exec<PreparedRow>('SELECT * FROM prepared WHERE prepared_at <= ? ORDER BY prepared_at', Date.now() - PREPARE_TIMEOUT_MS)
      .toArray();
    for (const row of stale) {
      try {
        const gate = this.env.WEBHOOK_GATES.get(this.env.WEBHOOK_GATES.idFromName(row.coordinator));
        const outcome = await gate.settle(row.tx_id);
        const still = this.sql.exec('SELECT 1 FROM prepared WHERE tx_id = ?', row.tx_id).toArray().length > 0;
        if (!still) continue;
        if (outcome === 'commit') this.commitMessage(JSON.parse(row.draft) as MessageDraft, row.tx_id);
        else this.sql.exec('DELETE FROM prepared WHERE tx_id = ?', row.tx_id);
      } catch (err) {
        console.warn(`room ${this.roomId}: could not settle transaction ${row.tx_id}`, err);
      }
    }
  }

  // ---- deletion -----------------------------------------------------------------------------

  /** The room is being deleted: disconnect viewers and drop all state, leaving a tombstone. */
  async purge(roomId: string): Promise<void> {
    if (this.deleted) return;
    this.bind(roomId);
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.close(PROTOCOL.close.roomDeleted, 'room deleted');
      } catch {
        // Already closed.
      }
    }
    this.live.clear();
    this.pending = [];
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.flushTail;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    migrate(this.sql);
    this.setMeta('room_id', roomId);
    this.setMeta('deleted', '1');
    this.deleted = true;
    this.alarmAt = null;
  }

  // ---- helpers ------------------------------------------------------------------------------

  /** Every call names its room; the first one is remembered (D1 rows and replays need it). */
  private bind(roomId: string): void {
    if (this.deleted) throw new RoomGoneError();
    if (this.roomId === null) {
      this.setMeta('room_id', roomId);
      this.roomId = roomId;
    } else if (this.roomId !== roomId) {
      throw new Error(`room object for ${this.roomId} was called for ${roomId}`);
    }
  }

  private meta(key: string): string | null {
    return this.sql.exec<{ value: string }>('SELECT value FROM meta WHERE key = ?', key).toArray()[0]?.value ?? null;
  }

  private setMeta(key: string, value: string): void {
    this.sql.exec('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', key, value);
  }
}
