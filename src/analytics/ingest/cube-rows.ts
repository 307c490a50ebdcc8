import { CUBE_DIM_RESOLUTIONS, CUBE_DIMENSIONS, CUBE_MASK_RESOLUTIONS, MASK_BITS, ROLLUP_DIMENSIONS } from '../rollups';
import type { Observation } from './to-observations';

/*
 * What an ingest adds to the dimension cube (rollups.ts CUBE_DIMENSIONS), as the JSON texts of the
 * rows of agg_dim's and agg_mask's upserts (observations-sql.ts rollupUpsertSql, with the key
 * columns CUBE_DIM_COLUMNS and CUBE_MASK_COLUMNS). Pure: observations and dictionary ids in.
 */

/** The cube dimensions each observation carries. */
export interface CubeValues {
  /** Observation i's entries are pairs (position j in CUBE_DIMENSIONS, local number n) at entries[2·starts[i] … 2·starts[i+1]). */
  starts: Int32Array;
  entries: Int32Array;
  /** Per position j, local number n -> dictionary id (index 0 unused). */
  ids: Int32Array[];
}

/** agg_dim's key columns after (res, slot, metric), in the order rows give them. */
export const CUBE_DIM_COLUMNS = ['media', 'dim', 'value'] as const;
/** agg_mask's key columns after (res, slot, metric). */
export const CUBE_MASK_COLUMNS = ['media', 'm0', 'm1'] as const;

const MEDIA_AT = ROLLUP_DIMENSIONS.findIndex((d) => d.dim === 'mediaType');
const STRIDE = ROLLUP_DIMENSIONS.length;
const J = CUBE_DIMENSIONS.length;
/** Per position in CUBE_DIMENSIONS: its mask bit's value, and whether it is in m0 (else m1). */
const BIT = Float64Array.from(CUBE_DIMENSIONS, ({ index }) => 2 ** (index < MASK_BITS ? index : index - MASK_BITS));
const LOW = CUBE_DIMENSIONS.map(({ index }) => index < MASK_BITS);
const HOUR = 3_600_000;

/**
 * Cells of one table at the finest resolution (hours), in parallel arrays: a cell is a series (its
 * key without the slot, as a number) at a slot. Found through a Map from series·span + slot offset:
 * mostly a small integer, so V8 hashes it cheaply (this runs ~10 times per observation), and exact
 * below 2^53 (series < 2^26: local value numbers, dimensions, metrics and media of one batch).
 */
class Cells {
  private readonly at = new Map<number, number>();
  /** Per cell: its series, slot (in hours), the first entry or observation (for its key), cnt, sum, mn, mx. */
  readonly series: number[] = [];
  readonly slot: number[] = [];
  readonly first: number[] = [];
  readonly cnt: number[] = [];
  readonly sum: number[] = [];
  readonly mn: number[] = [];
  readonly mx: number[] = [];

  constructor(
    private readonly firstSlot: number,
    private readonly span: number,
  ) {}

  add(series: number, slot: number, first: number, value: number): void {
    this.merge(series, slot, first, 1, value, value, value);
  }

  /** Adds a run of observations (a finer cell) to the cell of (series, slot). */
  merge(series: number, slot: number, first: number, cnt: number, sum: number, mn: number, mx: number): void {
    const key = series * this.span + (slot - this.firstSlot);
    const c = this.at.get(key);
    if (c === undefined) {
      this.at.set(key, this.series.length);
      this.series.push(series);
      this.slot.push(slot);
      this.first.push(first);
      this.cnt.push(cnt);
      this.sum.push(sum);
      this.mn.push(mn);
      this.mx.push(mx);
      return;
    }
    this.cnt[c]! += cnt;
    this.sum[c]! += sum;
    if (mn < this.mn[c]!) this.mn[c] = mn;
    if (mx > this.mx[c]!) this.mx[c] = mx;
  }

  /** These cells in slots `ratio` times as wide (slots count widths from the epoch: hour h lies in slot floor(h / ratio)). */
  coarser(ratio: number): Cells {
    const first = Math.floor(this.firstSlot / ratio);
    const out = new Cells(first, Math.floor((this.firstSlot + this.span - 1) / ratio) - first + 1);
    for (let c = 0; c < this.series.length; c++) {
      out.merge(this.series[c]!, Math.floor(this.slot[c]! / ratio), this.first[c]!, this.cnt[c]!, this.sum[c]!, this.mn[c]!, this.mx[c]!);
    }
    return out;
  }
}

/**
 * The rows of agg_dim and agg_mask for `observations`: a cell per (hour, metric, media, cube
 * dimension, value) present, and a cell per (slot, metric, media, presence mask) at each of
 * CUBE_MASK_RESOLUTIONS. `ids` holds ROLLUP_DIMENSIONS.length ids per observation (mediaType's among
 * them). A row is `[res, slot in widths, metric, key…, sum]` for one observation, else `[…, sum, cnt, mn, mx]`.
 */
export function cubeRows(observations: Observation[], ids: Int32Array, cube: CubeValues): { dim: string[]; mask: string[] } {
  const n = observations.length;
  if (n === 0) return { dim: [], mask: [] };
  // Media ids numbered 0… in the batch, so a series number stays small.
  const mediaSmall = new Map<number, number>();
  let firstSlot = Infinity;
  let lastSlot = -Infinity;
  let maxMetric = 0;
  for (let i = 0; i < n; i++) {
    const media = ids[i * STRIDE + MEDIA_AT]!;
    if (!mediaSmall.has(media)) mediaSmall.set(media, mediaSmall.size);
    const obs = observations[i]!;
    const slot = Math.floor(obs.emit / HOUR);
    if (slot < firstSlot) firstSlot = slot;
    if (slot > lastSlot) lastSlot = slot;
    if (obs.metric > maxMetric) maxMetric = obs.metric;
  }
  const span = lastSlot - firstSlot + 1;
  const D = mediaSmall.size;
  const M = maxMetric + 1;
  // A dim cell's series is (local value, dimension, metric, media) as one number.
  const dims = new Cells(firstSlot, span);
  const entryOf = new Int32Array(cube.starts[n]!);
  // A mask cell's series is (mask, metric, media), a mask as its number among the batch's masks.
  const maskNumber = new Map<string, number>();
  const masks = new Cells(firstSlot, span);
  const maskOf: string[] = [];
  const maskOfObservation = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const obs = observations[i]!;
    const media = mediaSmall.get(ids[i * STRIDE + MEDIA_AT]!)!;
    const slot = Math.floor(obs.emit / HOUR);
    const tail = obs.metric * D + media;
    let m0 = 0;
    let m1 = 0;
    for (let e = cube.starts[i]!; e < cube.starts[i + 1]!; e++) {
      const j = cube.entries[2 * e]!;
      if (LOW[j]) m0 += BIT[j]!;
      else m1 += BIT[j]!;
      entryOf[e] = i;
      dims.add((cube.entries[2 * e + 1]! * J + j) * M * D + tail, slot, e, obs.value);
    }
    const mask = `${m0},${m1}`;
    let k = maskNumber.get(mask);
    if (k === undefined) {
      maskNumber.set(mask, (k = maskOf.length));
      maskOf.push(mask);
    }
    maskOfObservation[i] = k;
    masks.add(k * M * D + tail, slot, i, obs.value);
  }

  // Keys written once per row, from the cell's first entry or observation.
  const dimKey = (first: number) => {
    const i = entryOf[first]!;
    const j = cube.entries[2 * first]!;
    return `${observations[i]!.metric},${ids[i * STRIDE + MEDIA_AT]},${CUBE_DIMENSIONS[j]!.index},${cube.ids[j]![cube.entries[2 * first + 1]!]}`;
  };
  const maskKey = (i: number) => `${observations[i]!.metric},${ids[i * STRIDE + MEDIA_AT]},${maskOf[maskOfObservation[i]!]}`;
  const dimRows: string[] = [];
  for (const res of CUBE_DIM_RESOLUTIONS) writeRows(dimRows, dims, res, dimKey);
  const maskRows: string[] = [];
  for (const res of CUBE_MASK_RESOLUTIONS) writeRows(maskRows, masks, res, maskKey);
  return { dim: dimRows, mask: maskRows };
}

/** The rows of `cells` (hourly) at `res`, an hour or a multiple of it; `keyText` of a cell's first entry or observation. */
function writeRows(out: string[], hourly: Cells, res: number, keyText: (first: number) => string): void {
  const cells = res === 60 ? hourly : hourly.coarser(res / 60);
  for (let c = 0; c < cells.series.length; c++)
    out.push(row(res, cells.slot[c]!, keyText(cells.first[c]!), cells.cnt[c]!, cells.sum[c]!, cells.mn[c]!, cells.mx[c]!));
}

function row(res: number, slot: number, key: string, cnt: number, sum: number, mn: number, mx: number): string {
  return cnt === 1 ? `[${res},${slot},${key},${sum}]` : `[${res},${slot},${key},${sum},${cnt},${mn},${mx}]`;
}
