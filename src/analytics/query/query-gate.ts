import { ANALYTICS_LIMITS } from '../limits';

/**
 * How many queries on the raw path (those the rollups cannot answer) one isolate computes at once,
 * and how many may wait their turn.
 *
 * Why: every request an isolate serves shares its one thread and its 128 MB. A raw query reads up to
 * maxRawConversations and holds up to maxAnswerCells; pacing (pace.ts) lets other requests in
 * between its steps, but three such queries at once (the attacker's maximal query of issue 22) held
 * ~236 MiB and made ordinary posts 17× slower in the bench. One at a time keeps a query's memory
 * alone in the isolate and leaves the other requests turns between one query's steps instead of
 * several's. Rollup queries (milliseconds, little memory) wait here only for a read of many cells.
 */
/** How often a waiting query looks whether its turn has come. */
const POLL_MS = 10;
/** A waiter not seen for this long is gone (its request was cancelled): it loses its place. */
const ABANDONED_MS = 2_000;
/**
 * A turn is given back after this long even if its query never said so (a request cancelled
 * mid-way runs no `finally`); far longer than a query within the raw-read bound takes.
 */
const LEASE_MS = 30_000;

/**
 * Waiters poll (a timer of their own) instead of awaiting a promise that the leaving query resolves:
 * workerd cancels a request that waits only on another request's promise as hung.
 */
export class QueryGate {
  private readonly holders = new Set<{ since: number }>();
  private readonly queue: { seen: number }[] = [];

  constructor(
    private readonly atOnce: number,
    private readonly maxWaiting: number,
  ) {}

  /** Resolves with the function that frees the turn once it is this query's; undefined: the queue is full, refuse it. */
  async enter(): Promise<(() => void) | undefined> {
    this.prune(Date.now());
    if (this.queue.length === 0 && this.holders.size < this.atOnce) return this.take();
    if (this.queue.length >= this.maxWaiting) return undefined;
    const waiter = { seen: Date.now() };
    this.queue.push(waiter);
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      waiter.seen = Date.now();
      this.prune(waiter.seen);
      // Dropped as abandoned while the isolate was too busy to run its timer: back in line.
      if (!this.queue.includes(waiter)) this.queue.push(waiter);
      if (this.queue[0] === waiter && this.holders.size < this.atOnce) {
        this.queue.shift();
        return this.take();
      }
    }
  }

  private take(): () => void {
    const turn = { since: Date.now() };
    this.holders.add(turn);
    return () => this.holders.delete(turn);
  }

  private prune(now: number): void {
    for (const h of this.holders) if (now - h.since > LEASE_MS) this.holders.delete(h);
    while (this.queue.length > 0 && now - this.queue[0]!.seen > ABANDONED_MS) this.queue.shift();
  }
}

/**
 * The isolate's gate for heavy queries: raw-path ones, and rollup queries while they read more than
 * rollupReadAloneBytes of cells (query.store.ts).
 */
export const heavyQueries = new QueryGate(ANALYTICS_LIMITS.rawQueriesAtOnce, ANALYTICS_LIMITS.rawQueriesWaiting);
