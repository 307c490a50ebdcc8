/**
 * Streams conversation records into a running Switchboard over HTTP, in batches of 1,000 with a few
 * requests in flight. Shared by `npm run dev` (demo data) and `npm run simulate -- --ingest`.
 */
export interface IngestTotals {
  conversations: number;
  observations: number;
  duplicates: number;
}

export async function ingestOverHttp(
  url: string,
  token: string,
  records: Iterable<unknown>,
  options: { batchSize?: number; inFlight?: number; onBatch?: (totals: IngestTotals) => void } = {},
): Promise<IngestTotals> {
  const batchSize = options.batchSize ?? 1000;
  const inFlight = options.inFlight ?? 3;
  const totals: IngestTotals = { conversations: 0, observations: 0, duplicates: 0 };
  const pending = new Set<Promise<void>>();

  const post = async (batch: unknown[]) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ conversations: batch }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`ingest answered ${res.status}: ${text.slice(0, 2000)}`);
    const body = JSON.parse(text) as IngestTotals;
    totals.conversations += body.conversations;
    totals.observations += body.observations;
    totals.duplicates += body.duplicates;
    options.onBatch?.(totals);
  };

  let batch: unknown[] = [];
  const flush = async () => {
    const task = post(batch).finally(() => pending.delete(task));
    pending.add(task);
    // Failures surface through the race/all below; this only keeps Node from calling them unhandled meanwhile.
    task.catch(() => {});
    batch = [];
    if (pending.size >= inFlight) await Promise.race(pending);
  };
  for (const record of records) {
    batch.push(record);
    if (batch.length >= batchSize) await flush();
  }
  if (batch.length > 0) await flush();
  await Promise.all(pending);
  return totals;
}
