/**
 * The object's one alarm, shared by flush retries, the flush safety net and prepared drafts: it is
 * only ever moved earlier, so no reason to wake is lost, and the time kept in memory spares the post
 * path a setAlarm call when an earlier alarm is already set.
 */
export class AlarmSchedule {
  private at: number | null = null;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** Wakes the object at `at` or earlier. */
  ensure(at: number): void {
    if (this.at !== null && this.at <= at) return;
    this.at = at;
    void this.storage.setAlarm(at);
  }

  /** The alarm fired or was deleted: the next `ensure` sets it again. */
  forget(): void {
    this.at = null;
  }
}
