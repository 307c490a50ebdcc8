import { describe, expect, it } from 'vitest';
import { DIMENSION_INDEX, DIMENSIONS, METRICS } from '../../src/analytics/catalog';
import { packedRows, rollupRows } from '../../src/analytics/ingest/rollup-rows';
import type { Observation } from '../../src/analytics/ingest/to-observations';
import { notStoredYet } from '../../src/analytics/ingest/write-plan';
import { ROLLUP_DIMENSIONS, ROLLUP_TABLES, ROLLUPS, type Rollup } from '../../src/analytics/rollups';

/**
 * The JSON rows ingest sends to the rollup upserts, against a plain string-keyed aggregation written
 * here from their documented format (one text per cell, per resolution, in order of first
 * observation). The stored result of these rows through D1 is checked against the reference
 * aggregator in ingest-storage and agg-user-packed; this pins the texts themselves, on batches
 * wider than the simulator's: slots from 1970 to 2999, dictionary ids up to 2^31 - 1.
 */
const STRIDE = ROLLUP_DIMENSIONS.length;
const MINUTE = 60_000;

function batch(seed: number, n: number, spanMs: number, start: number): { observations: Observation[]; ids: Int32Array } {
  let x = seed;
  const rand = (m: number) => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    return x % m;
  };
  const idPool = [0, 1, 2, 7, 300, 65_536, 2_147_483_647];
  const observations: Observation[] = [];
  const ids = new Int32Array(n * STRIDE);
  for (let i = 0; i < n; i++) {
    const dims = new Array<string | undefined>(DIMENSIONS.length).fill(undefined);
    dims[DIMENSION_INDEX.sessionId] = `s${rand(3)}`;
    observations.push({
      metric: rand(METRICS.length),
      emit: start + rand(1000) * Math.floor(spanMs / 1000) + rand(MINUTE),
      value: rand(5_000),
      dims,
    });
    for (let j = 0; j < STRIDE; j++) ids[i * STRIDE + j] = idPool[rand(j === 0 ? 2 : idPool.length)]!;
  }
  return { observations, ids };
}

function expectedRows(rollup: Rollup, observations: Observation[], ids: Int32Array): string[] {
  const k = rollup.dims.length;
  const out: string[] = [];
  for (const res of rollup.resolutions) {
    const cells = new Map<string, { head: number[]; values: number[] }>();
    observations.forEach((o, i) => {
      if (rollup.keeps && !rollup.keeps.includes(o.metric)) return;
      const head = [res, Math.floor(o.emit / (res * MINUTE)), o.metric, ...ids.subarray(i * STRIDE, i * STRIDE + k)];
      const key = head.join('|');
      const cell = cells.get(key) ?? cells.set(key, { head, values: [] }).get(key)!;
      cell.values.push(o.value);
    });
    for (const { head, values } of cells.values()) {
      const sum = values.reduce((a, b) => a + b, 0);
      out.push(
        JSON.stringify(values.length === 1 ? [...head, sum] : [...head, sum, values.length, Math.min(...values), Math.max(...values)]),
      );
    }
  }
  return out;
}

function expectedPacked(rollup: Rollup, observations: Observation[], ids: Int32Array): string[] {
  const k = rollup.dims.length;
  const metrics = rollup.packed!.metrics.map((m) => m.metric);
  const out: string[] = [];
  for (const res of rollup.resolutions) {
    const rows = new Map<string, { k: number[]; values: Map<number, number[]> }>();
    observations.forEach((o, i) => {
      if (!metrics.includes(o.metric)) return;
      const head = [res, Math.floor(o.emit / (res * MINUTE)), ...ids.subarray(i * STRIDE, i * STRIDE + k)];
      const key = head.join('|');
      const row = rows.get(key) ?? rows.set(key, { k: head, values: new Map() }).get(key)!;
      row.values.set(o.metric, [...(row.values.get(o.metric) ?? []), o.value]);
    });
    for (const row of rows.values()) {
      // By hand: JSON.stringify would put the integer-like metric keys before "k".
      const parts = [`"k":${JSON.stringify(row.k)}`];
      for (const m of metrics) {
        const v = row.values.get(m);
        if (v)
          parts.push(
            `"${m}":${JSON.stringify(v.length === 1 ? v[0] : [v.length, v.reduce((a, b) => a + b, 0), Math.min(...v), Math.max(...v)])}`,
          );
      }
      out.push(`{${parts.join(',')}}`);
    }
  }
  return out;
}

describe('rollup rows sent to the upserts', () => {
  const cases = [
    { name: 'a day of 2026', ...batch(1, 3_000, 86_400_000, Date.UTC(2026, 10, 16)) },
    { name: '1970 to 2999', ...batch(2, 3_000, Date.UTC(2999, 0, 1), 0) },
    { name: 'one observation', ...batch(3, 1, MINUTE, Date.UTC(2026, 0, 1)) },
    { name: 'none', ...batch(4, 0, MINUTE, 0) },
  ];
  for (const { name, observations, ids } of cases) {
    it(`writes each cell of agg_media, agg_queue and agg_user_more (its metrics only) as documented (${name})`, () => {
      for (const rollup of ROLLUP_TABLES.filter((r) => !r.packed))
        expect(rollupRows(rollup, observations, ids)).toEqual(expectedRows(rollup, observations, ids));
    });
    it(`writes each packed agg_user row as documented (${name})`, () => {
      for (const rollup of ROLLUPS.filter((r) => r.packed))
        expect(packedRows(rollup, observations, ids)).toEqual(expectedPacked(rollup, observations, ids));
    });
  }

  it('takes resolutions that are no multiple of the finest from the observations', () => {
    const { observations, ids } = cases[0]!;
    const odd = { ...ROLLUPS.find((r) => r.table === 'agg_queue')!, resolutions: [1440, 25, 15, 5] };
    expect(rollupRows(odd, observations, ids)).toEqual(expectedRows(odd, observations, ids));
  });

  it('aggregates repeated cells (count, sum, min, max)', () => {
    const media = ROLLUPS.find((r) => r.table === 'agg_media')!;
    const emit = Date.UTC(2026, 0, 1, 10, 20);
    const observations = [5, 9, 2].map((value) => ({ metric: 3, emit, value, dims: [] }));
    const ids = new Int32Array(3 * STRIDE).fill(4);
    // 1440, 60, 30 and 15 minutes; slot numbers by hand.
    expect(rollupRows(media, observations, ids)).toEqual([
      `[1440,${Date.UTC(2026, 0, 1) / 86_400_000},3,4,16,3,2,9]`,
      `[60,${Date.UTC(2026, 0, 1, 10) / 3_600_000},3,4,16,3,2,9]`,
      `[30,${Date.UTC(2026, 0, 1, 10) / 1_800_000},3,4,16,3,2,9]`,
      `[15,${Date.UTC(2026, 0, 1, 10, 15) / 900_000},3,4,16,3,2,9]`,
    ]);
  });
});

describe('notStoredYet', () => {
  const obs = (session: string, metric: number, emit: number, value = 1): Observation => {
    const dims = new Array<string | undefined>(DIMENSIONS.length).fill(undefined);
    dims[DIMENSION_INDEX.sessionId] = session;
    return { metric, emit, value, dims };
  };

  it('keeps one metric at one instant in different sessions', () => {
    const incoming = [obs('a', 1, 100), obs('b', 1, 100), obs('a', 2, 100), obs('a', 1, 101)];
    expect(notStoredYet([], incoming)).toEqual(incoming);
  });

  it('drops a repeat within the request, whatever its value, and keeps the first', () => {
    const incoming = [obs('a', 1, 100, 5), obs('b', 1, 100), obs('a', 1, 100, 7), obs('c', 2, 5)];
    expect(notStoredYet([], incoming)).toEqual([incoming[0], incoming[1], incoming[3]]);
  });

  it('drops what is stored already', () => {
    const stored = [obs('a', 1, 100), obs('b', 2, 200)];
    const incoming = [obs('a', 1, 100), obs('a', 2, 200), obs('b', 2, 200), obs('b', 3, 200)];
    expect(notStoredYet(stored, incoming)).toEqual([incoming[1], incoming[3]]);
    expect(notStoredYet(stored, [obs('a', 1, 100)])).toEqual([]);
  });

  it('takes each conversation afresh', () => {
    expect(notStoredYet([], [obs('a', 1, 100)])).toHaveLength(1);
    expect(notStoredYet([], [obs('a', 1, 100)])).toHaveLength(1);
  });
});
