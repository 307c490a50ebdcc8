import { isMessageLevel, type ChatMessage } from '../protocol';
import { dropPrepared } from './two-phase';
import { RoomGoneError, type MessageDraft } from './types';

/** A keyed post replaces the message last posted (or replaced) with its key this recently; after that it starts a new one. */
export const MESSAGE_KEY_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** Who may change a message: its webhook, or the person (`person:<token id>`) who posted it. */
export function authorOf(message: { webhookId: string; personId?: string | null }): string {
  return message.personId ? `person:${message.personId}` : message.webhookId;
}

/** Outlives the gate's memory of an uncertain idempotency key (24 h). */
const DEDUPE_TTL_MS = 25 * 60 * 60 * 1000;

export type LogRow = {
  seq: number;
  id: string;
  webhook_id: string;
  markdown: string;
  html: string;
  metadata: string | null;
  /** Null only in rows stored before messages had a sender (see backfillSenders). */
  sender_name: string | null;
  sender_icon_url: string | null;
  level: string | null;
  created_at: string;
  /** A person's message: their token's id (webhook_id is then ''). Null for a webhook's, and in rows from before people posted. */
  person_id: string | null;
  edited_at: string | null;
  deleted_at: string | null;
  /** 0 as posted, +1 per change (null in rows from before edits: 0). */
  version: number | null;
};

/** What a row stored before messages had a sender shows until backfillSenders names it (its webhook gone, for good). */
export const UNKNOWN_SENDER: ChatMessage['sender'] = { name: 'Webhook', iconUrl: null };

export const LOG_COLUMNS =
  'seq, id, webhook_id, markdown, html, metadata, sender_name, sender_icon_url, level, created_at, person_id, edited_at, deleted_at, version';

/**
 * One replay page of `source` (a table and its condition, whose last `?` is the seq after which the
 * page starts): at most `?` rows (read first, so a page never reads further), and of those only the
 * ones that start within `?` characters (the first always), so a page of large messages stays small.
 * The same columns in the room's log and in D1's `messages`.
 */
export function replayPageSql(source: string): string {
  const size =
    'length(markdown) + length(html) + ifnull(length(metadata), 0) + ifnull(length(sender_name), 0) + ifnull(length(sender_icon_url), 0) + 300';
  return `SELECT ${LOG_COLUMNS} FROM (
      SELECT ${LOG_COLUMNS}, size, SUM(size) OVER (ORDER BY seq) AS upto FROM (
        SELECT ${LOG_COLUMNS}, ${size} AS size FROM ${source} ORDER BY seq LIMIT ?))
    WHERE upto - size < ? ORDER BY seq`;
}
const LOCAL_PAGE = replayPageSql('log WHERE seq > ?');

/**
 * `prepared` holds multi-room drafts awaiting their commit (see two-phase.ts). The sender and level
 * columns came later: a log made before them gets them added, null in its earlier rows.
 */
function migrate(sql: SqlStorage): void {
  sql.exec(`
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS log (
      seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, tx_id TEXT, webhook_id TEXT NOT NULL,
      markdown TEXT NOT NULL, html TEXT NOT NULL, metadata TEXT, created_at TEXT NOT NULL,
      flushed INTEGER NOT NULL DEFAULT 0, sender_name TEXT, sender_icon_url TEXT, level TEXT
    );
    CREATE INDEX IF NOT EXISTS log_unflushed ON log (seq) WHERE flushed = 0;
    CREATE INDEX IF NOT EXISTS log_tx ON log (tx_id) WHERE tx_id IS NOT NULL;
    CREATE TABLE IF NOT EXISTS keyed_ids (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, expires_at INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS prepared (
      tx_id TEXT PRIMARY KEY, coordinator TEXT NOT NULL, draft TEXT NOT NULL, prepared_at INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS edits (id TEXT PRIMARY KEY, version INTEGER NOT NULL, row TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS message_keys (
      author TEXT NOT NULL, key TEXT NOT NULL, id TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (author, key)
    );
  `);
  const columns = new Set(
    sql
      .exec<{ name: string }>('PRAGMA table_info(log)')
      .toArray()
      .map((c) => c.name),
  );
  for (const column of ['sender_name', 'sender_icon_url', 'level', 'person_id', 'edited_at', 'deleted_at']) {
    if (!columns.has(column)) sql.exec(`ALTER TABLE log ADD COLUMN ${column} TEXT`);
  }
  if (!columns.has('version')) sql.exec('ALTER TABLE log ADD COLUMN version INTEGER');
}

/**
 * The room's messages in its own SQLite storage, and the room's identity (meta).
 *
 * Order: `seq` is taken from memory and written in the same synchronous step (no `await` in
 * between), so concurrent posts get a total order. The log always keeps its newest row (trimming
 * keeps the last LOCAL_WINDOW), so its largest seq is the last one given, and seq stays contiguous
 * across restarts and evictions without a counter written on every post.
 */
export class RoomLog {
  private readonly sql: SqlStorage;
  private boundRoomId: string | null;
  private newestSeq: number;
  private tombstoned: boolean;

  constructor(private readonly storage: DurableObjectStorage) {
    this.sql = storage.sql;
    migrate(this.sql);
    this.boundRoomId = this.meta('room_id');
    // meta.last_seq: the counter rooms wrote on every post before the log's own maximum was used.
    const newest = this.sql.exec<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM log').one().seq ?? 0;
    this.newestSeq = Math.max(newest, Number(this.meta('last_seq') ?? 0));
    this.tombstoned = this.meta('deleted') === '1';
  }

  get roomId(): string | null {
    return this.boundRoomId;
  }

  /** The seq given last (0: none yet). */
  get lastSeq(): number {
    return this.newestSeq;
  }

  get deleted(): boolean {
    return this.tombstoned;
  }

  /** Every call names its room; the first one is remembered (D1 rows and replays need it). */
  bind(roomId: string): void {
    if (this.tombstoned) throw new RoomGoneError();
    if (this.boundRoomId === null) {
      this.setMeta('room_id', roomId);
      this.boundRoomId = roomId;
    } else if (this.boundRoomId !== roomId) {
      throw new Error(`room object for ${this.boundRoomId} was called for ${roomId}`);
    }
  }

  /** The seq already given to this draft's id, if the draft is a repeat (a retried idempotent post). */
  repeatOf(draft: MessageDraft, txId: string | null): number | undefined {
    // Only a keyed post or a prepared one can come again with the same id; any other id is a fresh
    // random UUID (and the log's UNIQUE id would still refuse a repeat).
    if (!draft.dedupe && txId === null) return undefined;
    return this.sql
      .exec<{ seq: number }>(
        'SELECT seq FROM log WHERE id = ? UNION ALL SELECT seq FROM keyed_ids WHERE id = ? LIMIT 1',
        draft.id,
        draft.id,
      )
      .toArray()[0]?.seq;
  }

  /**
   * Gives the draft the next seq and stores it, in one synchronous step. A prepared draft (`txId`)
   * leaves `prepared` in the same transaction; a keyed one is remembered for DEDUPE_TTL_MS.
   */
  append(draft: MessageDraft, txId: string | null): ChatMessage {
    const message: ChatMessage = {
      id: draft.id,
      roomId: this.boundRoomId!,
      seq: this.newestSeq + 1,
      webhookId: draft.webhookId,
      markdown: draft.markdown,
      html: draft.html,
      metadata: draft.metadata,
      sender: draft.sender ?? UNKNOWN_SENDER,
      level: draft.level ?? 'info',
      createdAt: new Date().toISOString(),
      personId: draft.personId ?? null,
      editedAt: null,
      deletedAt: null,
    };
    const keyed = draft.key !== undefined ? { author: authorOf(message), key: draft.key } : undefined;
    if (txId === null && !draft.dedupe && keyed === undefined) this.insert(message, null);
    else {
      this.storage.transactionSync(() => {
        this.insert(message, txId);
        if (keyed !== undefined) this.rememberKey(keyed.author, keyed.key, message.id);
        if (txId !== null) dropPrepared(this.sql, txId);
        if (draft.dedupe) {
          this.sql.exec(
            'INSERT INTO keyed_ids (id, seq, expires_at) VALUES (?, ?, ?)',
            message.id,
            message.seq,
            Date.now() + DEDUPE_TTL_MS,
          );
        }
      });
    }
    this.newestSeq = message.seq;
    return message;
  }

  private insert(message: ChatMessage, txId: string | null): void {
    this.sql.exec(
      `INSERT INTO log (${LOG_COLUMNS}, tx_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, 0, ?)`,
      message.seq,
      message.id,
      message.webhookId,
      message.markdown,
      message.html,
      message.metadata,
      message.sender.name,
      message.sender.iconUrl,
      message.level,
      message.createdAt,
      message.personId ?? null,
      txId,
    );
  }

  /** The message a multi-room transaction already put in this log, if any. */
  committed(txId: string): { seq: number; id: string } | undefined {
    return this.sql.exec<{ seq: number; id: string }>('SELECT seq, id FROM log WHERE tx_id = ?', txId).toArray()[0];
  }

  oldestLocalSeq(): number {
    const row = this.sql.exec<{ seq: number | null }>('SELECT MIN(seq) AS seq FROM log').one();
    return row.seq ?? this.newestSeq + 1;
  }

  /** Stored messages after `seq`, in order: one replay page (replayPageSql) of at most `rows` and about `chars`. */
  pageAfter(seq: number, rows: number, chars: number): ChatMessage[] {
    return this.sql
      .exec<LogRow>(LOCAL_PAGE, seq, rows, chars)
      .toArray()
      .map((row) => this.toMessage(row));
  }

  /** The oldest rows not yet in D1, in order. */
  unflushed(limit: number): Iterable<LogRow> {
    return this.sql.exec<LogRow>(`SELECT ${LOG_COLUMNS} FROM log WHERE flushed = 0 ORDER BY seq LIMIT ?`, limit);
  }

  markFlushed(upToSeq: number): void {
    this.sql.exec('UPDATE log SET flushed = 1 WHERE flushed = 0 AND seq <= ?', upToSeq);
  }

  /** Drops flushed rows older than the newest `window` (never the newest row: see Order above). */
  trim(window: number): void {
    this.sql.exec('DELETE FROM log WHERE flushed = 1 AND seq <= ?', this.newestSeq - window);
  }

  expireKeyedIds(now: number): void {
    this.sql.exec('DELETE FROM keyed_ids WHERE expires_at <= ?', now);
  }

  toMessage(row: LogRow): ChatMessage {
    return {
      id: row.id,
      roomId: this.boundRoomId!,
      seq: row.seq,
      webhookId: row.webhook_id,
      markdown: row.markdown,
      html: row.html,
      metadata: row.metadata,
      sender: row.sender_name === null ? UNKNOWN_SENDER : { name: row.sender_name, iconUrl: row.sender_icon_url },
      level: isMessageLevel(row.level) ? row.level : 'info',
      createdAt: row.created_at,
      personId: row.person_id,
      editedAt: row.edited_at,
      deletedAt: row.deleted_at,
    };
  }

  // ---- changes: edits, deletes, keyed replacements -------------------------------------------

  /** The message with this id in the log (the last LOCAL_WINDOW), as stored, pending changes included. */
  local(id: string): LogRow | undefined {
    return this.sql.exec<LogRow>(`SELECT ${LOG_COLUMNS} FROM log WHERE id = ?`, id).toArray()[0];
  }

  /** A change of a message older than the log's window that D1 does not have yet. */
  pendingChange(id: string): LogRow | undefined {
    const row = this.sql.exec<{ row: string }>('SELECT row FROM edits WHERE id = ?', id).toArray()[0];
    return row && (JSON.parse(row.row) as LogRow);
  }

  /** Pending changes of messages with `after < seq <= upTo` (a replay page read from D1 shows them). */
  pendingChanges(after: number, upTo: number): Map<string, LogRow> {
    const rows = this.sql.exec<{ id: string; row: string }>('SELECT id, row FROM edits').toArray();
    const found = new Map<string, LogRow>();
    for (const { id, row } of rows) {
      const parsed = JSON.parse(row) as LogRow;
      if (parsed.seq > after && parsed.seq <= upTo) found.set(id, parsed);
    }
    return found;
  }

  /** The message a keyed post replaces: the author's latest with this key (within MESSAGE_KEY_TTL_MS). */
  keyed(author: string, key: string): string | undefined {
    return this.sql
      .exec<{ id: string }>('SELECT id FROM message_keys WHERE author = ? AND key = ? AND expires_at > ?', author, key, Date.now())
      .toArray()[0]?.id;
  }

  private rememberKey(author: string, key: string, id: string): void {
    this.sql.exec(
      'INSERT INTO message_keys (author, key, id, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT (author, key) DO UPDATE SET id = excluded.id, expires_at = excluded.expires_at',
      author,
      key,
      id,
      Date.now() + MESSAGE_KEY_TTL_MS,
    );
  }

  /**
   * Stores `next` (the whole new version of a stored message, `version` one more) in one
   * transaction: in the log if the message is there, and in `edits`, which the outbox writes to D1.
   * A keyed replacement refreshes its key.
   */
  change(next: LogRow, key?: { author: string; key: string }): ChatMessage {
    this.storage.transactionSync(() => {
      this.sql.exec(
        `UPDATE log SET markdown = ?, html = ?, metadata = ?, sender_name = ?, sender_icon_url = ?, level = ?, edited_at = ?,
           deleted_at = ?, version = ? WHERE id = ?`,
        next.markdown,
        next.html,
        next.metadata,
        next.sender_name,
        next.sender_icon_url,
        next.level,
        next.edited_at,
        next.deleted_at,
        next.version,
        next.id,
      );
      this.sql.exec(
        'INSERT INTO edits (id, version, row) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version, row = excluded.row',
        next.id,
        next.version ?? 0,
        JSON.stringify(next),
      );
      if (key !== undefined) this.rememberKey(key.author, key.key, next.id);
    });
    return this.toMessage(next);
  }

  /** Changes not yet in D1, oldest first. */
  unflushedChanges(limit: number): LogRow[] {
    return this.sql
      .exec<{ row: string }>('SELECT row FROM edits ORDER BY rowid LIMIT ?', limit)
      .toArray()
      .map((r) => JSON.parse(r.row) as LogRow);
  }

  /** D1 has these versions now (a later change of the same message stays pending). */
  changesFlushed(rows: readonly LogRow[]): void {
    for (const row of rows) this.sql.exec('DELETE FROM edits WHERE id = ? AND version = ?', row.id, row.version ?? 0);
  }

  expireKeys(now: number): void {
    this.sql.exec('DELETE FROM message_keys WHERE expires_at <= ?', now);
  }

  /** Webhooks of rows stored before messages had a sender (none once backfillSenders has run). */
  webhooksWithoutSender(): string[] {
    return this.sql
      .exec<{ webhook_id: string }>('SELECT DISTINCT webhook_id FROM log WHERE sender_name IS NULL LIMIT 100')
      .toArray()
      .map((r) => r.webhook_id);
  }

  /**
   * Names the sender of rows stored before messages had one, as migration 0010 did in D1: the
   * webhook's name and its kind's icon (`senders`, by webhook id), or UNKNOWN_SENDER for a webhook
   * that is gone; level 'info'. Once done, no row is without a sender.
   */
  backfillSenders(webhookIds: readonly string[], senders: ReadonlyMap<string, ChatMessage['sender']>): void {
    for (const id of webhookIds) {
      const sender = senders.get(id) ?? UNKNOWN_SENDER;
      this.sql.exec(
        "UPDATE log SET sender_name = ?, sender_icon_url = ?, level = ifnull(level, 'info') WHERE webhook_id = ? AND sender_name IS NULL",
        sender.name,
        sender.iconUrl,
        id,
      );
    }
  }

  /** Drops all state, leaving a tombstone: every later call gets RoomGoneError. */
  async purge(roomId: string): Promise<void> {
    await this.storage.deleteAll();
    migrate(this.sql);
    this.setMeta('room_id', roomId);
    this.setMeta('deleted', '1');
    this.tombstoned = true;
  }

  private meta(key: string): string | null {
    return this.sql.exec<{ value: string }>('SELECT value FROM meta WHERE key = ?', key).toArray()[0]?.value ?? null;
  }

  private setMeta(key: string, value: string): void {
    this.sql.exec('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', key, value);
  }
}
