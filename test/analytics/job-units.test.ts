import { describe, expect, it } from 'vitest';
import { fitToDensity, type JobUnit, pageRanges, splitUnit } from '../../src/analytics/jobs/job-units';

/** The buckets each unit covers, in order: the parts of a split must tile their unit exactly. */
const covered = (units: JobUnit[]) => units.flatMap((u) => Array.from({ length: u.to - u.from }, (_, i) => u.from + i));

describe('splitting a job unit that passed a bound', () => {
  const unit: JobUnit = { from: 10, to: 110, shares: 1, share: 0 };

  it('halves its buckets when the read says nothing of how far it got', () => {
    expect(splitUnit(unit, 'any', false)).toEqual([
      { from: 10, to: 60, shares: 1, share: 0 },
      { from: 60, to: 110, shares: 1, share: 0 },
    ]);
  });

  it('cuts it into about twice 1/progress parts at once, which tile its buckets', () => {
    // Stopped a tenth of the way through: the whole would be ~10 times the bound; 20 parts of 5 buckets.
    const parts = splitUnit(unit, 'any', false, 0.1)!;
    expect(parts).toHaveLength(20);
    expect(covered(parts)).toEqual(covered([unit]));
    for (const p of parts) expect(p.to - p.from).toBe(5);
    // Uneven: 7 parts of 100 buckets differ by at most one bucket.
    const seven = splitUnit(unit, 'any', false, 2 / 7)!;
    expect(seven).toHaveLength(7);
    expect(covered(seven)).toEqual(covered([unit]));
    const sizes = seven.map((p) => p.to - p.from);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
  });

  it('never into fewer than two parts nor more parts than buckets', () => {
    expect(splitUnit(unit, 'any', false, 1)).toHaveLength(2);
    expect(splitUnit({ ...unit, to: 13 }, 'any', false, 0.001)).toHaveLength(3);
  });

  it('splits a single bucket by groups when that helps, and a ranked query never', () => {
    const one = { ...unit, to: 11 };
    expect(splitUnit(one, 'any', false, 0.1)).toEqual([
      { from: 10, to: 11, shares: 2, share: 0 },
      { from: 10, to: 11, shares: 2, share: 1 },
    ]);
    expect(splitUnit(one, 'time', false, 0.1)).toBeUndefined();
    expect(splitUnit(unit, 'any', true, 0.1)).toBeUndefined();
  });
});

describe("cutting a unit's entries into result pages", () => {
  it('at most pageSize entries a page, consecutive, every entry once', () => {
    expect(pageRanges([10, 10, 10, 10, 10], 2, 1_000)).toEqual([
      [0, 2],
      [2, 4],
      [4, 5],
    ]);
    expect(pageRanges([], 2, 1_000)).toEqual([]);
  });

  it('within maxBytes as a JSON array (brackets and commas counted); a larger entry alone', () => {
    // [e,e] of 5-byte entries is 2 + 5 + 1 + 5 + 1 = 14 bytes as counted: fits 14, not 13.
    expect(pageRanges([5, 5, 5], 100, 14)).toEqual([
      [0, 2],
      [2, 3],
    ]);
    expect(pageRanges([5, 5, 5], 100, 13)).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
    expect(pageRanges([3, 50, 3], 100, 20)).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
  });
});

describe('re-cutting the units left to the density of one answered', () => {
  it('cuts each later run that would pass 80 % of the bound into equal runs that would not, in order', () => {
    // 10 buckets answered with 400 entries: 40 a bucket; 80 % of a bound of 1,000 is 800: at most 20 buckets.
    const pending: JobUnit[] = [
      { from: 10, to: 30, shares: 1, share: 0 },
      { from: 30, to: 80, shares: 1, share: 0 },
      { from: 80, to: 81, shares: 2, share: 1 },
    ];
    const cut = fitToDensity(pending, 400, 10, 1_000);
    expect(cut).toEqual([
      { from: 10, to: 30, shares: 1, share: 0 },
      { from: 30, to: 46, shares: 1, share: 0 },
      { from: 46, to: 63, shares: 1, share: 0 },
      { from: 63, to: 80, shares: 1, share: 0 },
      { from: 80, to: 81, shares: 2, share: 1 },
    ]);
    for (const u of cut) expect((u.to - u.from) * 40).toBeLessThanOrEqual(800);
  });

  it('leaves them as they are when the answered unit says nothing (no entries) or they already fit', () => {
    const pending: JobUnit[] = [{ from: 0, to: 50, shares: 1, share: 0 }];
    expect(fitToDensity(pending, 0, 10, 1_000)).toEqual(pending);
    expect(fitToDensity(pending, 10, 10, 1_000)).toEqual(pending);
    // Denser than the bound in one bucket: runs of one bucket (then split by groups if still too large).
    expect(fitToDensity([{ from: 0, to: 3, shares: 1, share: 0 }], 5_000, 1, 1_000)).toHaveLength(3);
  });
});
