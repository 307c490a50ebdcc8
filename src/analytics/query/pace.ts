/**
 * Lets the isolate's other requests run during a long computation. An aggregate query runs in the
 * same isolate as every other request, and JavaScript there is one thread: a loop adding a million
 * observations or writing a 10 MB answer holds every other request until it ends (measured: a
 * 158 MB answer held others 5–9 s). A timer is a turn of the event loop, so I/O that completed
 * meanwhile (other requests' D1 answers, new requests) is handled before the loop goes on.
 *
 * Counted in units of work, not in time: workerd does not advance the clock during execution.
 */
export class Pacer {
  private done = 0;

  constructor(private readonly every: number) {}

  /** Counts `units` of work; returns a promise to await when it is time to let others run. */
  step(units = 1): Promise<void> | undefined {
    this.done += units;
    if (this.done < this.every) return undefined;
    this.done = 0;
    return new Promise((resolve) => setTimeout(resolve, 0));
  }
}
