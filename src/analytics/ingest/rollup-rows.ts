import { ROLLUP_DIMENSIONS, type Rollup } from '../rollups';
import type { Observation } from './to-observations';

/*
 * What an ingest adds to each rollup, as the JSON texts of the rows its upsert reads (one text per
 * row, chunked into JSON array parameters by the store). Pure: observations and their dictionary ids in.
 */

/**
 * A small number per dimension tuple of a rollup (a cell's or row's key is numeric), found one
 * dimension at a time: (previous tuple number, next dictionary id) -> tuple number. The keys are
 * tuple × (largest id + 1) + id: mostly below 2^30, so V8 keeps them as small integers
 * (no heap number per lookup, and the Map hashes them cheaply); still exact far beyond that.
 */
class TupleNumbers {
  private readonly levels: Map<number, number>[];
  private readonly base: number;
  private count = 0;

  constructor(
    private readonly k: number,
    ids: Int32Array,
  ) {
    this.levels = Array.from({ length: k }, () => new Map<number, number>());
    let max = 0;
    for (let i = 0; i < ids.length; i++) if (ids[i]! > max) max = ids[i]!;
    this.base = max + 1;
  }

  /** The number of the tuple of the k ids at `ids[at…]`. */
  of(ids: Int32Array, at: number): number {
    let tuple = 0;
    for (let j = 0; j < this.k; j++) {
      const key = tuple * this.base + ids[at + j]!;
      const level = this.levels[j]!;
      let next = level.get(key);
      if (next === undefined) level.set(key, (next = this.count++));
      tuple = next;
    }
    return tuple;
  }
}

/**
 * The cells of one rollup (not packed; only the metrics it keeps) at each of `resolutions` (its own by default), as the JSON texts of its upsert's
 * rows: `[res, slot in widths, metric, dim ids…, sum]` for a cell holding one observation, else
 * `[…, sum, cnt, mn, max]` (D1's isolates parse every byte of it; see observations.sql.ts rollupUpsertSql). The text is
 * written directly, not through number arrays and JSON.stringify: the same bytes (values are
 * integers, sums finite). `ids` holds `stride` dictionary ids per observation (ROLLUP_DIMENSIONS.length
 * by default); the rollup's dimensions are a prefix of those.
 */
export function rollupRows(
  rollup: Pick<Rollup, 'resolutions' | 'keeps'> & { dims: readonly unknown[] },
  observations: Observation[],
  ids: Int32Array,
  resolutions: readonly number[] = rollup.resolutions,
  stride: number = ROLLUP_DIMENSIONS.length,
): string[] {
  const n = observations.length;
  if (n === 0) return [];
  const k = rollup.dims.length;
  // A series is a (dimension tuple, metric); numbered densely, so a cell's key, series × slots in
  // the batch's span + slot, stays a small integer for any real batch (see TupleNumbers).
  const tuples = new TupleNumbers(k, ids);
  const seriesOf = new Map<number, number>();
  // -1: an observation of a metric the rollup does not keep.
  const series = new Int32Array(n).fill(-1);
  const kept = keptMetrics(rollup);
  let minEmit = Infinity;
  let maxEmit = -Infinity;
  for (let i = 0; i < n; i++) {
    const obs = observations[i]!;
    if (kept && kept[obs.metric] !== 1) continue;
    // tuple < 2^19 (a 5 MB body holds fewer observations than that), metric < 256.
    const key = tuples.of(ids, i * stride) * 256 + obs.metric;
    let s = seriesOf.get(key);
    if (s === undefined) seriesOf.set(key, (s = seriesOf.size));
    series[i] = s;
    if (obs.emit < minEmit) minEmit = obs.emit;
    if (obs.emit > maxEmit) maxEmit = obs.emit;
  }
  if (minEmit === Infinity) return [];
  // Per cell: the observation that opened it (for its metric and ids), then cnt, sum, mn, mx.
  type Cell = { first: number; slot: number; cnt: number; sum: number; mn: number; mx: number };
  const cellsAt = (res: number, from: Cell[] | undefined, fromRes: number): Map<number, Cell> => {
    const width = res * 60_000;
    const firstSlot = Math.floor(minEmit / width);
    // Below 2^53: series < 2^19 (at most one per observation), slots < 2^26 (see packedRows).
    const span = Math.floor(maxEmit / width) - firstSlot + 1;
    const cells = new Map<number, Cell>();
    if (from) {
      // Finer cells merged, in their order: each cell still comes first where its first observation does.
      const ratio = res / fromRes;
      for (const fine of from) {
        const slot = Math.floor(fine.slot / ratio);
        const key = series[fine.first]! * span + (slot - firstSlot);
        const cell = cells.get(key);
        if (!cell) {
          cells.set(key, { ...fine, slot });
          continue;
        }
        cell.cnt += fine.cnt;
        cell.sum += fine.sum;
        if (fine.mn < cell.mn) cell.mn = fine.mn;
        if (fine.mx > cell.mx) cell.mx = fine.mx;
      }
      return cells;
    }
    for (let i = 0; i < n; i++) {
      if (series[i] === -1) continue;
      const obs = observations[i]!;
      const slot = Math.floor(obs.emit / width);
      const key = series[i]! * span + (slot - firstSlot);
      const value = obs.value;
      const cell = cells.get(key);
      if (!cell) {
        cells.set(key, { first: i, slot, cnt: 1, sum: value, mn: value, mx: value });
        continue;
      }
      cell.cnt += 1;
      cell.sum += value;
      if (value < cell.mn) cell.mn = value;
      if (value > cell.mx) cell.mx = value;
    }
    return cells;
  };
  // The finest resolution from the observations, the others (multiples of it: its slots nest in
  // theirs) from its cells, a few hundred against thousands of observations. Sums of integers are
  // exact in any order.
  const finest = Math.min(...resolutions);
  const fine = [...cellsAt(finest, undefined, finest).values()];
  const texts: string[] = [];
  for (const res of resolutions) {
    const cells =
      res === finest ? fine : res % finest === 0 ? cellsAt(res, fine, finest).values() : cellsAt(res, undefined, finest).values();
    for (const cell of cells) {
      const at = cell.first * stride;
      let text = `[${res},${cell.slot},${observations[cell.first]!.metric}`;
      for (let j = 0; j < k; j++) text += `,${ids[at + j]}`;
      texts.push(cell.cnt === 1 ? `${text},${cell.sum}]` : `${text},${cell.sum},${cell.cnt},${cell.mn},${cell.mx}]`);
    }
  }
  return texts;
}

/** Metric index -> 1 for the metrics a rollup keeps; undefined when it keeps every one. */
function keptMetrics(rollup: Pick<Rollup, 'keeps'>): Uint8Array | undefined {
  if (!rollup.keeps) return undefined;
  const kept = new Uint8Array(256);
  for (const m of rollup.keeps) kept[m] = 1;
  return kept;
}

/**
 * The rows of a packed rollup (agg_user) for `observations`, as JSON texts, one per (resolution,
 * slot, dimension tuple): `{"k":[res, slot in widths, dim ids…], "<metric>": x, …}` for each of
 * its metrics present, x being the value when the row holds one observation of it, else
 * [cnt, sum, mn, mx]. Objects, not dense arrays: a row holds a few of its 21 metrics. Observations of
 * other metrics are left out (see Rollup.packed). See observations.sql.ts packedUpsertSql.
 */
export function packedRows(
  rollup: Rollup,
  observations: Observation[],
  ids: Int32Array,
  resolutions: readonly number[] = rollup.resolutions,
): string[] {
  const packed = rollup.packed!;
  const k = rollup.dims.length;
  const stride = ROLLUP_DIMENSIONS.length;
  const kept = new Uint8Array(Math.max(...packed.metrics.map((m) => m.metric)) + 1);
  for (const m of packed.metrics) kept[m.metric] = 1;
  const widths = resolutions.map((res) => res * 60_000);
  // A numeric row key: the slot number and the number of the dimension tuple.
  const tuples = new TupleNumbers(k, ids);
  type Row = { key: number[]; metrics: (number[] | undefined)[] };
  const byRes = resolutions.map(() => new Map<number, Row>());
  for (let i = 0; i < observations.length; i++) {
    const obs = observations[i]!;
    if (kept[obs.metric] !== 1) continue;
    const at = i * stride;
    const tuple = tuples.of(ids, at);
    for (let r = 0; r < resolutions.length; r++) {
      const slotNumber = Math.floor(obs.emit / widths[r]!);
      // Below 2^53: slot numbers < 2^26 (15 minutes up to the year 2999, ingest's limit), tuples < 2^19.
      const key = slotNumber * 524_288 + tuple;
      const rows = byRes[r]!;
      let row = rows.get(key);
      if (!row) {
        const rowKey = [resolutions[r]!, slotNumber];
        for (let j = 0; j < k; j++) rowKey.push(ids[at + j]!);
        rows.set(key, (row = { key: rowKey, metrics: [] }));
      }
      const acc = row.metrics[obs.metric];
      if (!acc) row.metrics[obs.metric] = [1, obs.value, obs.value, obs.value];
      else {
        acc[0]! += 1;
        acc[1]! += obs.value;
        if (obs.value < acc[2]!) acc[2] = obs.value;
        if (obs.value > acc[3]!) acc[3] = obs.value;
      }
    }
  }
  const texts: string[] = [];
  for (const rows of byRes) {
    for (const row of rows.values()) {
      let text = `{"k":[${row.key.join(',')}]`;
      for (const { metric } of packed.metrics) {
        const acc = row.metrics[metric];
        if (acc) text += acc[0] === 1 ? `,"${metric}":${acc[1]}` : `,"${metric}":[${acc.join(',')}]`;
      }
      texts.push(`${text}}`);
    }
  }
  return texts;
}
