import { ANALYTICS_LIMITS } from '../limits';

/**
 * A part of a job's answer: the buckets [from, to) of the query's bucket plan, and the groups whose
 * key hashes to `share` modulo `shares` (aggregate.ts groupHash). A job starts with one unit, the
 * whole answer; a unit that passes a bound is split. Pure.
 */
export interface JobUnit {
  from: number;
  to: number;
  shares: number;
  share: number;
}

export function wholeAnswer(buckets: number): JobUnit[] {
  return [{ from: 0, to: buckets, shares: 1, share: 0 }];
}

/**
 * A unit stopped after adding `progress` of what it read (raw rows or rollup cells) is split into MARGIN / progress parts: twice the
 * estimate, because the share of rows read understates the cells still to come (bench w8 at 200,000:
 * with 1.25, 13 of 39 parts were still too large; with 2, 10 of 42).
 */
const MARGIN = 2;

/**
 * The units to answer instead of `unit`, which passed a bound; undefined when none would help.
 * Parts of its buckets first (fewer conversations read, fewer cells): halves, or, when the read says
 * how far it got before the bound stopped it (`progress`, 0–1), about MARGIN / progress equal parts
 * at once — a raw-path export 10 times over the bound is then read about twice, not once per level
 * of halving (bench w8 at 200,000: 25 of 51 units were halves read only to be split again; now 10 of 42). A single
 * bucket, when fewer groups would help (`splits` = any), into two shares of its groups. A ranked
 * query (topN/bottomN) ranks whole groups over the whole interval: it is never split.
 */
export function splitUnit(unit: JobUnit, splits: 'time' | 'any', ranked: boolean, progress?: number): JobUnit[] | undefined {
  if (ranked) return undefined;
  const buckets = unit.to - unit.from;
  if (buckets > 1) {
    return cut(unit, progress !== undefined && progress > 0 ? Math.min(buckets, Math.max(2, Math.ceil(MARGIN / progress))) : 2);
  }
  if (splits === 'time' || unit.shares * 2 > ANALYTICS_LIMITS.maxJobGroupShares) return undefined;
  return [
    { ...unit, shares: unit.shares * 2 },
    { ...unit, shares: unit.shares * 2, share: unit.share + unit.shares },
  ];
}

/**
 * The units still to answer, re-cut after a unit of `buckets` buckets was answered with `entries`
 * stats entries: each later run of buckets that, at that density, would pass `fill` of the bound is
 * cut into equal runs that would not. A raw-path export's neighbouring units are alike, so this spares
 * most of the reads that a unit too large makes only to be split (bench w8). A unit already split by
 * groups, or a single bucket, is left as it is; one cut too small costs only its own round trips.
 */
export function fitToDensity(pending: readonly JobUnit[], entries: number, buckets: number, bound: number, fill = 0.8): JobUnit[] {
  if (entries <= 0 || buckets <= 0) return [...pending];
  const most = Math.max(1, Math.floor((fill * bound * buckets) / entries));
  return pending.flatMap((unit) => {
    const length = unit.to - unit.from;
    return unit.shares > 1 || length <= most ? [unit] : cut(unit, Math.ceil(length / most));
  });
}

/** `unit`'s buckets in `parts` consecutive runs, their lengths differing by at most one. */
function cut(unit: JobUnit, parts: number): JobUnit[] {
  const length = unit.to - unit.from;
  return Array.from({ length: parts }, (_, i) => ({
    ...unit,
    from: unit.from + Math.floor((i * length) / parts),
    to: unit.from + Math.floor(((i + 1) * length) / parts),
  }));
}

/**
 * The results of one unit, its `{group, data}` entries of `sizes` bytes each (consecutive in the
 * answer, a comma between), cut into pages of at most `pageSize` entries and about `maxBytes` bytes
 * each as a JSON array (a single larger entry is a page of its own): each page's [first, end) entries.
 */
export function pageRanges(sizes: readonly number[], pageSize: number, maxBytes: number): [number, number][] {
  const pages: [number, number][] = [];
  let first = 0;
  let bytes = 2;
  for (let i = 0; i < sizes.length; i++) {
    const size = sizes[i]!;
    if (i > first && (i - first >= pageSize || bytes + size + 1 > maxBytes)) {
      pages.push([first, i]);
      first = i;
      bytes = 2;
    }
    bytes += size + 1;
  }
  if (sizes.length > first) pages.push([first, sizes.length]);
  return pages;
}
