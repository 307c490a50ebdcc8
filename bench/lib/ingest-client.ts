/**
 * Posts records to the ingest endpoint in batches of 1,000 with a few requests in flight, timing
 * each request. Bodies are serialised just before sending, so client CPU is part of the run (the
 * CpuMeter reports how much).
 */
import { progress } from './results';

export interface IngestRun {
  conversations: number;
  observations: number;
  duplicates: number;
  requests: number;
  /** Batches sent again after a 503. */
  retries: number;
  seconds: number;
  bodyBytes: number;
  /** Milliseconds per request, in completion order. */
  latencies: number[];
  /** [conversations stored, seconds since the start] at each progress report. */
  marks: [number, number][];
}

export async function ingestRecords(
  url: string,
  token: string,
  records: Iterable<unknown>,
  opts: { total: number; batchSize: number; inFlight: number; label: string },
): Promise<IngestRun> {
  const run: IngestRun = { conversations: 0, observations: 0, duplicates: 0, requests: 0, retries: 0, seconds: 0, bodyBytes: 0, latencies: [], marks: [] };
  const started = performance.now();
  const pending = new Set<Promise<void>>();
  let failure: unknown;
  let nextReport = 0;

  const post = async (body: string) => {
    let res: Response;
    let text: string;
    for (let attempt = 1; ; attempt++) {
      const t0 = performance.now();
      res = await fetch(url, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body,
      });
      text = await res.text();
      run.latencies.push(performance.now() - t0);
      // Ingest is idempotent: a batch cut short (503, e.g. wrangler restarting workerd) is simply sent again.
      if (res.status !== 503 || attempt === 3) break;
      run.retries++;
      progress(`${opts.label}: 503 (${text.slice(0, 120)}), sending the batch again`);
    }
    if (!res.ok) throw new Error(`ingest answered ${res.status}: ${text.slice(0, 1000)}`);
    const answer = JSON.parse(text) as { conversations: number; observations: number; duplicates: number };
    run.conversations += answer.conversations;
    run.observations += answer.observations;
    run.duplicates += answer.duplicates;
    run.requests++;
    if (run.conversations >= nextReport) {
      const s = (performance.now() - started) / 1000;
      run.marks.push([run.conversations, s]);
      const rate = run.conversations / s;
      const eta = rate > 0 ? (opts.total - run.conversations) / rate : 0;
      progress(
        `${opts.label}: ${run.conversations.toLocaleString('en-US')}/${opts.total.toLocaleString('en-US')} conversations, ` +
          `${Math.round(rate).toLocaleString('en-US')}/s, last request ${Math.round(run.latencies.at(-1)!)} ms, ETA ${Math.round(eta)} s`,
      );
      nextReport = run.conversations + Math.max(opts.batchSize, Math.round(opts.total / 20));
    }
  };

  const send = async (batch: unknown[]) => {
    const body = JSON.stringify({ conversations: batch });
    run.bodyBytes += body.length;
    const task = post(body).then(
      () => {
        pending.delete(task);
      },
      (err: unknown) => {
        pending.delete(task);
        failure ??= err;
      },
    );
    pending.add(task);
    if (pending.size >= opts.inFlight) await Promise.race(pending);
    if (failure) throw failure;
  };

  let batch: unknown[] = [];
  for (const record of records) {
    batch.push(record);
    if (batch.length >= opts.batchSize) {
      await send(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await send(batch);
  await Promise.all(pending);
  if (failure) throw failure;
  run.seconds = (performance.now() - started) / 1000;
  return run;
}
