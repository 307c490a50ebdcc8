import { CUBE_DIMENSIONS, CUBE_RESOLUTIONS, MASK_BITS, ROLLUP_DIMENSIONS } from '../rollups';
import type { Observation } from './to-observations';

/*
 * What an ingest adds to the dimension cube (rollups.ts CUBE_DIMENSIONS), as the JSON texts of the
 * rows of agg_dim's and agg_mask's upserts (observations-sql.ts rollupUpsertSql, with the key
 * columns CUBE_DIM_COLUMNS and CUBE_MASK_COLUMNS). Pure: observations and dictionary ids in.
 */

/** The cube dimensions each observation carries, with their dictionary ids. */
export interface CubeIds {
  /** Observation i's entries are entries[2 * starts[i] … 2 * starts[i + 1]): pairs (position in CUBE_DIMENSIONS, id). */
  starts: Int32Array;
  entries: Int32Array;
}

/** agg_dim's key columns after (res, slot, metric), in the order rows give them. */
export const CUBE_DIM_COLUMNS = ['media', 'dim', 'value'] as const;
/** agg_mask's key columns after (res, slot, metric). */
export const CUBE_MASK_COLUMNS = ['media', 'm0', 'm1'] as const;

const MEDIA_AT = ROLLUP_DIMENSIONS.findIndex((d) => d.dim === 'mediaType');
const STRIDE = ROLLUP_DIMENSIONS.length;

/** count/sum/min/max of one cell, and the key it is written with. */
interface Cell {
  key: number[];
  slot: number;
  cnt: number;
  sum: number;
  mn: number;
  mx: number;
}

/**
 * Numbers for keys of a few integers, found one part at a time: (previous number, next part) ->
 * number. Keys stay below 2^53 (numbers below the count of distinct keys, parts below 2^31·2^17).
 */
class KeyNumbers {
  private readonly levels: Map<number, number>[] = [];
  count = 0;

  of(parts: readonly number[]): number {
    let n = 0;
    for (let j = 0; j < parts.length; j++) {
      const level = (this.levels[j] ??= new Map());
      // Each level's numbers are dense, so n * 2^32 + part is exact (parts are ids below 2^31 or small).
      const key = n * 4_294_967_296 + parts[j]!;
      let next = level.get(key);
      if (next === undefined) level.set(key, (next = j === parts.length - 1 ? this.count++ : level.size));
      n = next;
    }
    return n;
  }
}

/**
 * The rows of agg_dim and agg_mask for `observations`: per resolution of CUBE_RESOLUTIONS, a cell per
 * (slot, metric, media, cube dimension, value) present and a cell per (slot, metric, media, presence
 * mask). `ids` holds ROLLUP_DIMENSIONS.length ids per observation (mediaType's among them). A row is
 * `[res, slot in widths, metric, key…, sum]` for one observation, else `[…, sum, cnt, mn, mx]`.
 */
export function cubeRows(observations: Observation[], ids: Int32Array, cube: CubeIds): { dim: string[]; mask: string[] } {
  const n = observations.length;
  if (n === 0) return { dim: [], mask: [] };
  const finest = Math.min(...CUBE_RESOLUTIONS);
  const width = finest * 60_000;
  let firstSlot = Infinity;
  let lastSlot = -Infinity;
  for (let i = 0; i < n; i++) {
    const slot = Math.floor(observations[i]!.emit / width);
    if (slot < firstSlot) firstSlot = slot;
    if (slot > lastSlot) lastSlot = slot;
  }
  const span = lastSlot - firstSlot + 1;
  const dimSeries = new KeyNumbers();
  const maskSeries = new KeyNumbers();
  // Finest cells by series * span + slot offset (below 2^53: series are fewer than 2^20 entries, span < 2^24 hours).
  const dimCells = new Map<number, Cell>();
  const maskCells = new Map<number, Cell>();
  const add = (cells: Map<number, Cell>, key: number, slot: number, cellKey: () => number[], value: number) => {
    const cell = cells.get(key);
    if (!cell) {
      cells.set(key, { key: cellKey(), slot, cnt: 1, sum: value, mn: value, mx: value });
      return;
    }
    cell.cnt += 1;
    cell.sum += value;
    if (value < cell.mn) cell.mn = value;
    if (value > cell.mx) cell.mx = value;
  };
  const parts = [0, 0, 0, 0];
  for (let i = 0; i < n; i++) {
    const obs = observations[i]!;
    const media = ids[i * STRIDE + MEDIA_AT]!;
    const slot = Math.floor(obs.emit / width);
    const offset = slot - firstSlot;
    let m0 = 0;
    let m1 = 0;
    for (let e = cube.starts[i]!; e < cube.starts[i + 1]!; e++) {
      const j = cube.entries[2 * e]!;
      const id = cube.entries[2 * e + 1]!;
      const bit = CUBE_DIMENSIONS[j]!.index;
      if (bit < MASK_BITS) m0 += 2 ** bit;
      else m1 += 2 ** (bit - MASK_BITS);
      parts[0] = obs.metric;
      parts[1] = media;
      parts[2] = j;
      parts[3] = id;
      const series = dimSeries.of(parts);
      add(dimCells, series * span + offset, slot, () => [obs.metric, media, bit, id], obs.value);
    }
    const series = maskSeries.of([
      obs.metric,
      media,
      m0 % 4_294_967_296,
      Math.floor(m0 / 4_294_967_296),
      m1 % 4_294_967_296,
      Math.floor(m1 / 4_294_967_296),
    ]);
    add(maskCells, series * span + offset, slot, () => [obs.metric, media, m0, m1], obs.value);
  }
  return { dim: texts(dimCells, finest, firstSlot, span), mask: texts(maskCells, finest, firstSlot, span) };
}

/** The rows of every resolution: the finest from the cells, coarser ones (multiples of it) merged from them. */
function texts(fine: Map<number, Cell>, finest: number, firstSlot: number, span: number): string[] {
  const out: string[] = [];
  for (const res of CUBE_RESOLUTIONS) {
    let cells: Iterable<Cell> = fine.values();
    if (res !== finest) {
      // Slots count widths from the epoch, so a fine slot lies in coarse slot floor(slot / ratio).
      const ratio = res / finest;
      const coarseFirst = Math.floor(firstSlot / ratio);
      const coarseSpan = Math.floor((firstSlot + span - 1) / ratio) - coarseFirst + 1;
      const coarse = new Map<number, Cell>();
      for (const [key, cell] of fine) {
        const slot = Math.floor(cell.slot / ratio);
        const coarseKey = Math.floor(key / span) * coarseSpan + (slot - coarseFirst);
        const at = coarse.get(coarseKey);
        if (!at) coarse.set(coarseKey, { ...cell, slot });
        else {
          at.cnt += cell.cnt;
          at.sum += cell.sum;
          if (cell.mn < at.mn) at.mn = cell.mn;
          if (cell.mx > at.mx) at.mx = cell.mx;
        }
      }
      cells = coarse.values();
    }
    for (const cell of cells) {
      const text = `[${res},${cell.slot},${cell.key.join(',')},${cell.sum}`;
      out.push(cell.cnt === 1 ? `${text}]` : `${text},${cell.cnt},${cell.mn},${cell.mx}]`);
    }
  }
  return out;
}
