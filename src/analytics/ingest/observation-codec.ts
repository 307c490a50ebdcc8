import { DIMENSIONS } from '../catalog';
import type { DimValues, Observation } from './to-observations';

/**
 * Compact JSON for the observations of one conversation (the `conversations.data` column):
 * `{"s": [strings], "o": [metric, emit - base, value, dim_0 … dim_13, metric, …]}` where each dim is
 * 1 + its index in `s`, or 0 when absent. Strings repeat heavily inside a conversation (ids, queue,
 * media), so each is written once.
 */
interface Encoded {
  s: string[];
  o: number[];
}

const STRIDE = 3 + DIMENSIONS.length;

export function encodeObservations(observations: readonly Observation[], base: number): string {
  const strings: string[] = [];
  const index = new Map<string, number>();
  const o: number[] = [];
  for (const obs of observations) {
    o.push(obs.metric, obs.emit - base, obs.value);
    for (const value of obs.dims) {
      if (value === undefined) {
        o.push(0);
        continue;
      }
      let i = index.get(value);
      if (i === undefined) {
        i = strings.push(value) - 1;
        index.set(value, i);
      }
      o.push(i + 1);
    }
  }
  return JSON.stringify({ s: strings, o } satisfies Encoded);
}

export function decodeObservations(data: string, base: number): Observation[] {
  const { s, o } = JSON.parse(data) as Encoded;
  const out: Observation[] = [];
  for (let p = 0; p + STRIDE <= o.length; p += STRIDE) {
    const dims: DimValues = new Array(DIMENSIONS.length);
    for (let d = 0; d < DIMENSIONS.length; d++) {
      const ref = o[p + 3 + d]!;
      dims[d] = ref === 0 ? undefined : s[ref - 1];
    }
    out.push({ metric: o[p]!, emit: o[p + 1]! + base, value: o[p + 2]!, dims });
  }
  return out;
}
