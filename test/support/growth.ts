/**
 * Linear time without a wall-clock budget: the same work at two sizes in one run, compared as a ratio.
 * A busy machine slows both sizes alike; taking the fastest of several runs of each drops one-off stalls.
 * For sizes n and 8n, linear work gives a ratio near 8 and quadratic work near 64: far enough apart that a
 * collection or a neighbour's burst in one of the runs does not blur them.
 */
export function fastestMs(fn: () => void, runs = 5): number {
  fn(); // warm-up: compilation and caches are not part of the growth
  let best = Infinity;
  for (let i = 0; i < runs; i++) best = Math.min(best, sampleMs(fn));
  return best;
}

/**
 * workerd's clock ticks in whole milliseconds (measured: every delta an integer), so one call of sub-millisecond
 * work reads 0 or 1. A sample repeats the call until SAMPLE_MS have passed and divides: ±1 tick in 20 is 5 %.
 */
const SAMPLE_MS = 20;

function sampleMs(fn: () => void): number {
  const started = performance.now();
  let calls = 0;
  let elapsed = 0;
  do {
    fn();
    calls++;
    elapsed = performance.now() - started;
  } while (elapsed < SAMPLE_MS);
  return elapsed / calls;
}

/** The smallest size must be large enough that its work, not a call's fixed cost, is what is timed. */
const MIN_SMALL_MS = 5;

/** How much larger the second size is. */
export const GROWTH = 8;

/**
 * Time of `work(8n)` over time of `work(n)`, each the fastest of `runs`, where n starts at `size` and
 * doubles (up to `maxSize`) until the run at n takes at least MIN_SMALL_MS. The smallest ratio of up to
 * ROUNDS rounds: load only ever inflates a ratio (the small size is the fastest of many calls, so a stall
 * there is dropped), so the smallest is the closest to the work's own growth, and a quadratic algorithm
 * (near 64) cannot read low by chance.
 */
export function growthRatio(work: (size: number) => void, size: number, maxSize = size * 64, runs = 7): { ratio: number; size: number } {
  let n = size;
  let small = fastestMs(() => work(n), runs);
  while (small < MIN_SMALL_MS && n * 2 <= maxSize) {
    n *= 2;
    small = fastestMs(() => work(n), runs);
  }
  const large = () => work(GROWTH * n);
  large();
  let ratio = Infinity;
  for (let round = 0; round < ROUNDS && ratio > LINEAR_RATIO_MAX / 2; round++) {
    // The two sizes are timed in turns, so a stretch of heavy load (a CI run's other processes, at a higher
    // priority than the workerd tests) weighs on both alike: timed one after the other, the large size once
    // met such a stretch alone and a linear renderer read 37.9x for 8x the characters. Interleaved, one run
    // under load still read 35.5x: hence the rounds.
    let bestSmall = small;
    let bestLarge = Infinity;
    for (let i = 0; i < runs; i++) {
      bestLarge = Math.min(bestLarge, sampleMs(large));
      bestSmall = Math.min(
        bestSmall,
        sampleMs(() => work(n)),
      );
    }
    ratio = Math.min(ratio, bestLarge / Math.max(bestSmall, 0.01));
  }
  return { ratio, size: n };
}

/** Rounds of interleaved timing at most; a round under half the bound ends it (a linear run's usual case). */
const ROUNDS = 3;

/** Linear work at sizes n and 8n (about 8), slightly superlinear work (n log n, about 11): half of quadratic's 64. */
export const LINEAR_RATIO_MAX = 32;
