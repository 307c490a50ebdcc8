/** Percentiles and timing loops. */

/** Nearest-rank percentile (p in 0..100) of `values`; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export interface Timing {
  runs: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
}

export function summarize(samples: readonly number[]): Timing {
  let min = Infinity;
  let max = -Infinity;
  for (const s of samples) {
    if (s < min) min = s;
    if (s > max) max = s;
  }
  return { runs: samples.length, p50: percentile(samples, 50), p95: percentile(samples, 95), min, max };
}

export interface TimeOptions {
  warmup: number;
  /** At least this many timed runs… */
  minRuns: number;
  /** …and more up to this many while the time budget lasts. */
  maxRuns: number;
  budgetMs: number;
}

/** Times `fn` (milliseconds per call) after warm-up calls. */
export async function timeRuns(fn: () => Promise<unknown>, opts: TimeOptions): Promise<Timing> {
  for (let i = 0; i < opts.warmup; i++) await fn();
  const samples: number[] = [];
  const started = performance.now();
  while (samples.length < opts.minRuns || (samples.length < opts.maxRuns && performance.now() - started < opts.budgetMs)) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return summarize(samples);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
