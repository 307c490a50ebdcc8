/**
 * Posts records to the ingest endpoint in batches of 1,000 with a few requests in flight, timing
 * each request. The bodies are simulated and serialised before the clock starts (prepareBodies):
 * on this 2-core machine a client that simulates while it sends takes ~0.6 of a core from workerd
 * and, while it computes the next batch, leaves the bodies in flight unsent; workerd's thread was
 * idle 13 % of an ingest that way (2026-11-25). What is timed is the endpoint, as a real sender
 * with its data at hand would see it.
 */
import { progress } from './results';

/** Request bodies ready to send, and how many conversations (or items) each holds. */
export interface PreparedBodies {
  bodies: Buffer[];
  counts: number[];
  bytes: number;
}

/**
 * Groups `items` in batches of `batchSize` and serialises each with `toBody`, as UTF-8 bytes (1M
 * conversations: ~3 GB, held outside V8's heap).
 */
export function prepareBodies<T>(
  items: Iterable<T>,
  opts: { batchSize: number; total: number; label: string; toBody: (batch: T[]) => string },
): PreparedBodies {
  const out: PreparedBodies = { bodies: [], counts: [], bytes: 0 };
  let batch: T[] = [];
  let done = 0;
  let nextReport = Math.max(opts.batchSize, Math.round(opts.total / 5));
  const flush = () => {
    const body = Buffer.from(opts.toBody(batch), 'utf8');
    out.bodies.push(body);
    out.counts.push(batch.length);
    out.bytes += body.length;
    done += batch.length;
    batch = [];
    if (done >= nextReport) {
      progress(
        `${opts.label}: prepared ${done.toLocaleString('en-US')}/${opts.total.toLocaleString('en-US')} (${(out.bytes / 1024 ** 2).toFixed(0)} MiB of bodies)`,
      );
      nextReport += Math.max(opts.batchSize, Math.round(opts.total / 5));
    }
  };
  for (const item of items) {
    batch.push(item);
    if (batch.length >= opts.batchSize) flush();
  }
  if (batch.length > 0) flush();
  return out;
}

/** Ingest request bodies (`{conversations: [...]}`) of `records`, in batches of `batchSize`. */
export function prepareIngestBodies(records: Iterable<unknown>, opts: { batchSize: number; total: number; label: string }): PreparedBodies {
  return prepareBodies(records, { ...opts, toBody: (batch) => JSON.stringify({ conversations: batch }) });
}

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
  prepared: PreparedBodies,
  opts: { total: number; inFlight: number; label: string },
): Promise<IngestRun> {
  const run: IngestRun = {
    conversations: 0,
    observations: 0,
    duplicates: 0,
    requests: 0,
    retries: 0,
    seconds: 0,
    bodyBytes: 0,
    latencies: [],
    marks: [],
  };
  const started = performance.now();
  const pending = new Set<Promise<void>>();
  let failure: unknown;
  let nextReport = 0;

  const post = async (body: Buffer) => {
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
      nextReport = run.conversations + Math.round(opts.total / 20);
    }
  };

  const send = async (body: Buffer) => {
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

  for (const body of prepared.bodies) await send(body);
  await Promise.all(pending);
  if (failure) throw failure;
  run.seconds = (performance.now() - started) / 1000;
  return run;
}
