import { jsonChunks } from '../../db/json-chunks';
import type { AlarmSchedule } from './alarm';
import { UNKNOWN_SENDER, type LogRow, type RoomLog } from './room-log';
import { LOCAL_WINDOW } from './types';

const FLUSH_MAX_ROWS = 500;
/**
 * Rows go to D1 as one JSON parameter per statement (a bound parameter costs D1 far more than a
 * byte of JSON); a parameter stays well under D1's 2 MB value limit even at 3 UTF-8 bytes a char.
 */
const STATEMENT_MAX_CHARS = 500_000;
/** A row without a sender (stored before messages had one, not yet backfilled) gets one as migration 0010 gave D1's. */
const INSERT_MESSAGES = `INSERT INTO messages (id, room_id, seq, webhook_id, markdown, html, metadata, created_at, sender_name, sender_icon_url, level,
    person_id, edited_at, deleted_at, version)
  SELECT json_extract(value, '$[0]'), ?1, json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
         json_extract(value, '$[4]'), json_extract(value, '$[5]'), json_extract(value, '$[6]'),
         ifnull(json_extract(value, '$[7]'), ifnull((SELECT name FROM webhooks WHERE id = json_extract(value, '$[2]')), '${UNKNOWN_SENDER.name}')),
         CASE WHEN json_extract(value, '$[7]') IS NULL
           THEN (SELECT '/assets/chat/icons/' || kind || '.svg' FROM webhooks WHERE id = json_extract(value, '$[2]'))
           ELSE json_extract(value, '$[8]') END,
         ifnull(json_extract(value, '$[9]'), 'info'),
         json_extract(value, '$[10]'), json_extract(value, '$[11]'), json_extract(value, '$[12]'), ifnull(json_extract(value, '$[13]'), 0)
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
/** Even if every flush attempt in memory is lost (eviction), an alarm brings the object back. */
const SAFETY_ALARM_MS = 30_000;
const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 60_000;

/**
 * A change (edit, delete) replaces D1's row only with a later version, and never a deleted row's
 * tombstone: a delete is final.
 */
const UPDATE_MESSAGE = `UPDATE messages SET markdown = ?, html = ?, metadata = ?, sender_name = ?, sender_icon_url = ?, level = ?,
    edited_at = ?, deleted_at = ?, version = ?
  WHERE id = ? AND room_id = ? AND version < ? AND deleted_at IS NULL`;
const FLUSH_MAX_CHANGES = 100;

/** One row as the JSON array INSERT_MESSAGES reads (`$[0]` … `$[13]`). */
function toJsonRow(row: LogRow): string {
  return JSON.stringify([
    row.id,
    row.seq,
    row.webhook_id,
    row.markdown,
    row.html,
    row.metadata,
    row.created_at,
    row.sender_name,
    row.sender_icon_url,
    row.level,
    row.person_id ?? null,
    row.edited_at ?? null,
    row.deleted_at ?? null,
    row.version ?? 0,
  ]);
}

/**
 * D1 is the system of record: rows of the log are flushed to it in batches (INSERT .. ON CONFLICT DO
 * NOTHING, so a retried flush never duplicates). A failed flush is retried by alarm with backoff; a
 * safety alarm covers a flush lost to eviction. Flushed rows beyond the last LOCAL_WINDOW are dropped
 * from the log.
 */
export class Outbox {
  private tail: Promise<void> = Promise.resolve();
  private queued = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private failures = 0;

  constructor(
    private readonly db: D1Database,
    private readonly log: RoomLog,
    private readonly alarms: AlarmSchedule,
  ) {}

  /** A row was appended to the log: flush it soon, and keep an alarm set in case that flush is lost. */
  appended(): void {
    this.alarms.ensure(Date.now() + SAFETY_ALARM_MS);
    this.request();
  }

  /** Resolves once every message stored so far is in D1 (history reads D1 after this). */
  flush(): Promise<void> {
    return this.flushNow().catch((err: unknown) => {
      this.failed(err);
      throw err;
    });
  }

  /** A flush nobody waits for (timer, alarm): a failure only schedules the next attempt. */
  attempt(): Promise<void> {
    return this.flushNow().catch((err: unknown) => this.failed(err));
  }

  /** No more flushes start; resolves once the running one has ended. */
  stop(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    return this.tail;
  }

  /** Coalesces flush requests: one starts FLUSH_DELAY_MS after the first; while one runs, at most one more is queued. */
  private request(): void {
    if (this.queued || this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.queued) return;
      this.queued = true;
      void this.attempt();
    }, FLUSH_DELAY_MS);
  }

  private flushNow(): Promise<void> {
    const run = this.tail.then(() => {
      this.queued = false;
      return this.flushPending();
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async flushPending(): Promise<void> {
    const roomId = this.log.roomId;
    if (roomId === null) return;
    for (;;) {
      const rows: LogRow[] = [];
      let chars = 0;
      for (const row of this.log.unflushed(FLUSH_MAX_ROWS)) {
        chars += row.markdown.length + row.html.length + (row.metadata?.length ?? 0) + (row.sender_name?.length ?? 0);
        if (rows.length > 0 && chars > FLUSH_MAX_CHARS) break;
        rows.push(row);
      }
      if (rows.length === 0) break;
      await this.insertIntoD1(roomId, rows);
      this.log.markFlushed(rows[rows.length - 1]!.seq);
      this.log.trim(LOCAL_WINDOW);
      this.log.expireKeyedIds(Date.now());
    }
    // Changes after new rows: a change of a message not yet in D1 finds its row there.
    for (;;) {
      const changes = this.log.unflushedChanges(FLUSH_MAX_CHANGES);
      if (changes.length === 0) break;
      const update = this.db.prepare(UPDATE_MESSAGE);
      await this.db.batch(
        changes.map((r) =>
          update.bind(
            r.markdown,
            r.html,
            r.metadata,
            r.sender_name,
            r.sender_icon_url,
            r.level,
            r.edited_at,
            r.deleted_at,
            r.version ?? 0,
            r.id,
            roomId,
            r.version ?? 0,
          ),
        ),
      );
      this.log.changesFlushed(changes);
    }
    this.log.expireKeys(Date.now());
    this.failures = 0;
  }

  /** INSERT .. ON CONFLICT DO NOTHING (on the id or on room and seq), so a repeated flush never duplicates. */
  private async insertIntoD1(roomId: string, rows: LogRow[]): Promise<void> {
    const insert = this.db.prepare(INSERT_MESSAGES);
    const statements = jsonChunks(rows, STATEMENT_MAX_CHARS, toJsonRow).map((json) => insert.bind(roomId, json));
    if (statements.length > 0) await this.db.batch(statements);
  }

  private failed(err: unknown): void {
    this.failures++;
    const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (this.failures - 1));
    console.warn(`room ${this.log.roomId}: flush to D1 failed (attempt ${this.failures}), retrying in ${delay} ms`, err);
    this.alarms.ensure(Date.now() + delay);
  }
}
