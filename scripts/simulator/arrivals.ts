/**
 * When conversations start: a non-homogeneous arrival process shaped by the hourly curves of config.ts,
 * sampled so that exactly `count` start times come out, already in increasing order, in constant memory
 * per conversation (one cumulative intensity per minute of the window, nothing per conversation).
 */
import { TRAFFIC, type StreamName } from './config';
import type { Rng } from './prng';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MINUTES_PER_WEEK = 7 * 24 * 60;

/** Day of week with 0 = Monday (1970-01-01, day 0 of the epoch, was a Thursday). */
export function weekday(t: number): number {
  return (Math.floor(t / DAY) + 3) % 7;
}

function minuteOfWeek(t: number): number {
  return (Math.floor(t / MINUTE) + 3 * 24 * 60) % MINUTES_PER_WEEK;
}

/** Hourly anchors sit at the middle of each hour and are interpolated linearly, so the curve has no steps. */
function weeklyTable(weekdayCurve: readonly number[], weekendCurve: readonly number[]): Float64Array {
  const table = new Float64Array(MINUTES_PER_WEEK);
  for (let m = 0; m < MINUTES_PER_WEEK; m++) {
    const day = Math.floor(m / (24 * 60));
    const curve = day < 5 ? weekdayCurve : weekendCurve;
    const h = (m % (24 * 60)) / 60 - 0.5;
    const i0 = Math.floor(h);
    const frac = h - i0;
    const a = curve[(i0 + 24) % 24] ?? 0;
    const b = curve[(i0 + 1) % 24] ?? 0;
    table[m] = a * (1 - frac) + b * frac;
  }
  return table;
}

const TABLES: readonly Float64Array[] = TRAFFIC.map((s) => weeklyTable(s.weekday, s.weekend));
const WEEKLY_MEANS: readonly number[] = TABLES.map((t) => t.reduce((sum, v) => sum + v, 0) / MINUTES_PER_WEEK);
const STREAM_INDEX: ReadonlyMap<StreamName, number> = new Map(TRAFFIC.map((s, i) => [s.name, i]));

/**
 * How busy a stream is at `t` compared with its weekly average, squashed into [0.6, 1.8]: staffing follows the
 * forecast, so waits grow at peaks but far less than the traffic does.
 */
export function loadFactor(stream: StreamName, t: number): number {
  const i = STREAM_INDEX.get(stream) ?? 0;
  const relative = (TABLES[i]![minuteOfWeek(t)] ?? 0) / WEEKLY_MEANS[i]!;
  return Math.min(1.8, 0.6 + 0.4 * relative);
}

/** The first instant at or after `t` when the business-hours queues are staffed. */
export function nextStaffed(t: number): number {
  const dayStart = Math.floor(t / DAY) * DAY;
  for (let d = 0; d <= 7; d++) {
    const ds = dayStart + d * DAY;
    const [open, close] = weekday(ds) < 5 ? [7, 21] : [9, 17];
    const from = Math.max(t, ds + open * HOUR);
    if (from < ds + close * HOUR) return from;
  }
  return t;
}

export interface Arrival {
  start: number;
  stream: StreamName;
}

/**
 * `count` arrivals in [from, to), in increasing order. The intensity is the sum of the streams' curves, each
 * normalised over the window so that a stream gets its configured share of the conversations whatever the
 * window covers. Order statistics of uniforms are drawn one after the other (each the next-smallest of the
 * remaining ones) and mapped through the inverse cumulative intensity, minute by minute.
 */
export function* arrivals(rng: Rng, from: number, to: number, count: number): Generator<Arrival> {
  const windowMs = to - from;
  const bins = Math.ceil(windowMs / MINUTE);
  const width = (k: number): number => Math.min(MINUTE, windowMs - k * MINUTE);

  const means = TABLES.map((table) => {
    let sum = 0;
    for (let k = 0; k < bins; k++) sum += table[minuteOfWeek(from + k * MINUTE)]! * width(k);
    return sum / windowMs;
  });
  const weights = TRAFFIC.map((s, i) => (means[i]! > 0 ? s.share / means[i]! : 0));

  const cumulative = new Float64Array(bins + 1);
  for (let k = 0; k < bins; k++) {
    const mw = minuteOfWeek(from + k * MINUTE);
    let intensity = 0;
    for (let s = 0; s < TABLES.length; s++) intensity += weights[s]! * TABLES[s]![mw]!;
    cumulative[k + 1] = cumulative[k]! + intensity * width(k);
  }
  const total = cumulative[bins]!;

  const streamWeights = new Array<number>(TABLES.length).fill(0);
  let u = 0;
  let k = 0;
  for (let i = 0; i < count; i++) {
    u = 1 - (1 - u) * rng.floatOpenZero() ** (1 / (count - i));
    const target = u * total;
    while (k < bins - 1 && cumulative[k + 1]! <= target) k++;
    const lo = cumulative[k]!;
    const span = cumulative[k + 1]! - lo;
    const frac = span > 0 ? Math.min(Math.max((target - lo) / span, 0), 1) : 0;
    const w = width(k);
    const start = from + k * MINUTE + Math.min(w - 1, Math.floor(frac * w));

    const mw = minuteOfWeek(from + k * MINUTE);
    for (let s = 0; s < TABLES.length; s++) streamWeights[s] = weights[s]! * TABLES[s]![mw]!;
    yield { start, stream: TRAFFIC[rng.weighted(streamWeights)]!.name };
  }
}
