import type { AlarmSchedule } from './alarm';
import { PREPARE_TIMEOUT_MS, type MessageDraft } from './types';

/** A stale draft whose coordinator could not be reached is asked about again no sooner than this. */
const SETTLE_RETRY_MS = 1_000;

type PreparedRow = { tx_id: string; coordinator: string; draft: string; prepared_at: number };

/** The draft leaves `prepared`: committed (in the same transaction as its log row), aborted, or found stored. */
export function dropPrepared(sql: SqlStorage, txId: string): void {
  sql.exec('DELETE FROM prepared WHERE tx_id = ?', txId);
}

/**
 * The participant side of a multi-room post (see chat/deliver.ts for the whole protocol): drafts
 * kept durably, unseen and without a seq, until the coordinator's decision reaches this room.
 */
export class PreparedDrafts {
  constructor(
    private readonly sql: SqlStorage,
    private readonly gates: Env['WEBHOOK_GATES'],
    private readonly alarms: AlarmSchedule,
  ) {}

  prepare(txId: string, coordinator: string, draft: MessageDraft): void {
    this.sql.exec(
      'INSERT OR IGNORE INTO prepared (tx_id, coordinator, draft, prepared_at) VALUES (?, ?, ?, ?)',
      txId,
      coordinator,
      JSON.stringify(draft),
      Date.now(),
    );
    this.alarms.ensure(Date.now() + PREPARE_TIMEOUT_MS);
  }

  draft(roomId: string, txId: string): MessageDraft {
    const prepared = this.sql.exec<PreparedRow>('SELECT * FROM prepared WHERE tx_id = ?', txId).toArray()[0];
    if (!prepared) throw new Error(`transaction ${txId} is not prepared in room ${roomId}`);
    return JSON.parse(prepared.draft) as MessageDraft;
  }

  drop(txId: string): void {
    dropPrepared(this.sql, txId);
  }

  /**
   * A prepared message whose commit or abort never came (the Worker failed mid-way): ask the
   * coordinator for the outcome. If it had not decided yet, asking decides "abort", so the post's
   * Worker can no longer commit it elsewhere.
   */
  async settleStale(roomId: string | null, commit: (draft: MessageDraft, txId: string) => void): Promise<void> {
    const stale = this.sql
      .exec<PreparedRow>('SELECT * FROM prepared WHERE prepared_at <= ? ORDER BY prepared_at', Date.now() - PREPARE_TIMEOUT_MS)
      .toArray();
    for (const row of stale) {
      try {
        const gate = this.gates.get(this.gates.idFromName(row.coordinator));
        const outcome = await gate.settle(row.tx_id);
        const still = this.sql.exec('SELECT 1 FROM prepared WHERE tx_id = ?', row.tx_id).toArray().length > 0;
        if (!still) continue;
        if (outcome === 'commit') commit(JSON.parse(row.draft) as MessageDraft, row.tx_id);
        else dropPrepared(this.sql, row.tx_id);
      } catch (err) {
        console.warn(`room ${roomId}: could not settle transaction ${row.tx_id}`, err);
      }
    }
  }

  /** Wakes the object again when the oldest draft still prepared is due to be settled. */
  scheduleSettling(): void {
    const oldest = this.sql.exec<{ at: number | null }>('SELECT MIN(prepared_at) AS at FROM prepared').one().at;
    if (oldest !== null) this.alarms.ensure(Math.max(Date.now() + SETTLE_RETRY_MS, oldest + PREPARE_TIMEOUT_MS));
  }
}
