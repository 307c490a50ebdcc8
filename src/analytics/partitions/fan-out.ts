/**
 * `fn` over every item with at most `limit` calls unfinished at once; the results in the items' order.
 * A query's raw reads of its partitions go through here: each holds a page (up to rawPageBytes, twice
 * that as hex while decoded) until it is added, so a fan-out over the ~50 partitions a long interval
 * may reach would otherwise hold ~50 pages at once in one 128 MB isolate.
 * After a failure no further call starts; the first failure is thrown once the started ones settle.
 */
export async function mapAtMost<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  let failure: unknown;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!);
      } catch (err) {
        if (!failed) failure = err;
        failed = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failed) throw failure;
  return results;
}
