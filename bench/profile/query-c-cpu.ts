/**
 * Query c's Worker-side CPU without D1 or HTTP (node, tsx): a synthetic no-groupBy, all-metrics
 * aggregation over 336 buckets fed like readRollup feeds it, then answerJson. Usage:
 *   npx tsx bench/profile/query-c-cpu.ts [repeats]
 */
import { createHash } from 'node:crypto';
import { DIMENSION_INDEX, DIMENSIONS, METRICS } from '../../src/analytics/catalog';
import { Aggregation } from '../../src/analytics/query/aggregate';
import { answerJson } from '../../src/analytics/query/results-json';

// Node clamps setTimeout(0) to 1 ms; workerd does not wait: the Pacer's pauses as immediates.
(globalThis as { setTimeout: unknown }).setTimeout = (f: () => void) => setImmediate(f);
const repeats = Number(process.argv[2] ?? 20);
const MEDIA = ['callback', 'chat', 'email', 'voice'];
const BUCKETS = 336;
const settings = { target: 20_000, includeFlowOuts: false, includeShortAbandons: false, queues: {} } as never;
const values: (string | undefined)[] = new Array(DIMENSIONS.length).fill(undefined);
function build(): Aggregation {
  const a = new Aggregation({ metrics: METRICS.map((_, i) => i), groupBy: [], filter: () => true, maxGroups: 1e6, maxCells: 1e7 });
  let seed = 1;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let b = 0; b < BUCKETS; b++)
    for (let m = 0; m < METRICS.length; m++) {
      if (METRICS[m]!.kind === 'calculated') continue;
      for (const media of MEDIA) {
        if (rnd() < 0.78) continue;
        values[DIMENSION_INDEX.mediaType] = media;
        const c = 1 + Math.floor(rnd() * 200);
        a.add(b, m, values as never, c, Math.floor(rnd() * 3e7), Math.floor(rnd() * 1000), Math.floor(rnd() * 9e5));
      }
    }
  return a;
}
const interval = (b: number) => `2026-11-0${1 + Math.floor(b / 48)}T00:00:00.000Z/2026-11-0${1 + Math.floor(b / 48)}T00:30:00.000Z`;
let addMs = 0;
let writeMs = 0;
let bytes = 0;
let digest = '';
for (let r = 0; r < repeats; r++) {
  const t0 = performance.now();
  const a = build();
  const t1 = performance.now();
  const body = await answerJson(a, settings, interval);
  bytes = body.length;
  digest = createHash('sha256').update(body).digest('hex').slice(0, 16);
  const t2 = performance.now();
  if (r >= 3) {
    addMs += t1 - t0;
    writeMs += t2 - t1;
  }
}
const n = repeats - 3;
console.log(`add ${(addMs / n).toFixed(2)} ms, answerJson ${(writeMs / n).toFixed(2)} ms, ${bytes} bytes, sha256 ${digest}`);
