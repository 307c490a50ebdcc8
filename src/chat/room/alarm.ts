/**
 * The object's one alarm, shared by flush retries, the flush safety net, prepared drafts and the
 * viewers' socket lifetimes: it is only ever moved earlier, so no reason to wake is lost, and the
 * time kept in memory spares the post path a setAlarm call when an earlier alarm is already set.
 * `load` reads the alarm a previous instance set, so a restarted object does not replace an early
 * alarm (a flush retry in 1 s) by a late one (a socket lifetime in an hour).
 */
export class AlarmSchedule {
  private at: number | null = null;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** Call before the object handles any event (blockConcurrencyWhile in the constructor). */
  async load(): Promise<void> {
    const at = await this.storage.getAlarm();
    if (at !== null && (this.at === null || at < this.at)) this.at = at;
  }

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
