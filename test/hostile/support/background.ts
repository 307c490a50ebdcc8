/**
 * The background work (`waitUntil`) of requests the direct client (client.ts) has already answered.
 * A client never waits for it: awaited per request, the delivery log's coalesced write (it waits up to
 * 250 ms to batch, src/chat/webhook-post/delivery-log.ts) made every webhook post take ~260 ms here.
 * So it runs beside the test's next requests, as in production, and `settleBackground` (registered
 * after each test by test/setup/apply-migrations.ts) waits for what is left, so none of it outlives
 * its test.
 */
const running = new Set<Promise<unknown>>();

export function inBackground(work: Promise<unknown>): void {
  const tracked = work.finally(() => running.delete(tracked));
  running.add(tracked);
}

export async function settleBackground(): Promise<void> {
  while (running.size > 0) await Promise.allSettled([...running]);
}
