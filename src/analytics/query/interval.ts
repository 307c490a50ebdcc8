/**
 * The time core of the aggregate query: ISO 8601 intervals and durations, and the bucket plan
 * for a granularity in an IANA time zone. Plain values in, plain values out; every bad input
 * becomes a DomainError naming the request field.
 *
 * Instants are epoch milliseconds. A "wall" value is a local wall-clock date-time encoded as the
 * epoch milliseconds it would have if the zone were UTC; calendar arithmetic happens on wall values
 * and a zone's offset turns them back into instants.
 */
import { invalidDate, invalidValue, type DomainError } from '../../errors';
import {
  addCalendar,
  DAY_MS,
  daysFromCivil,
  HOUR_MS,
  MINUTE_MS,
  parseDateTime,
  parseIsoDuration,
  SECOND_MS,
  type IsoDuration,
} from '../iso8601';
import { ANALYTICS_LIMITS } from '../limits';

/** A half-open interval [start, end) in epoch milliseconds. */
export interface Interval {
  start: number;
  end: number;
}

/** Bucket edges: `boundaries[0] === start`, `boundaries[n] === end`, bucket i is [boundaries[i], boundaries[i+1]). */
export interface BucketPlan {
  start: number;
  end: number;
  boundaries: number[];
}

export interface PlanBucketsInput {
  interval: string;
  granularity?: string;
  timeZone?: string;
}

/** Consecutive buckets of equal width: bucket `firstIndex + k` starts at `start + k * width`, k < count. */
export interface UniformRun {
  start: number;
  width: number;
  count: number;
  firstIndex: number;
}

/** Echoes client input in messages, cut short so a huge value cannot bloat the error body. */
function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

// ---------------------------------------------------------------------------------------------
// Time zones

interface Zone {
  /** Offset (wall minus instant, ms) in effect at instant t. */
  offsetAt(t: number): number;
}

const UTC_ZONE: Zone = { offsetAt: () => 0 };
const UTC_NAMES = new Set(['utc', 'etc/utc', 'gmt', 'etc/gmt', 'zulu', 'etc/zulu', 'universal', 'etc/universal']);
const MAX_ZONE_NAME_LENGTH = 64;
const MAX_CACHED_ZONES = 512;
const zoneCache = new Map<string, Zone>();

type WallField = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second';
const WALL_FIELDS: readonly string[] = ['year', 'month', 'day', 'hour', 'minute', 'second'];

function wallFromFields(f: Record<WallField, number>, bc: boolean): number {
  const year = bc ? 1 - f.year : f.year;
  return daysFromCivil(year, f.month, f.day) * DAY_MS + f.hour * HOUR_MS + f.minute * MINUTE_MS + f.second * SECOND_MS;
}

function intlZone(formatter: Intl.DateTimeFormat): Zone {
  // format() is several times faster than formatToParts(); learn the order of its numbers once.
  const order = formatter
    .formatToParts(0)
    .map((part) => part.type)
    .filter((type): type is WallField => WALL_FIELDS.includes(type));
  const fields: Record<WallField, number> = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0 };

  const wallBySlowPath = (t: number): number => {
    let bc = false;
    for (const part of formatter.formatToParts(t)) {
      if (part.type === 'era') bc = part.value.startsWith('B');
      else if (WALL_FIELDS.includes(part.type)) fields[part.type as WallField] = Number(part.value);
    }
    return wallFromFields(fields, bc);
  };

  return {
    offsetAt(t: number): number {
      const text = formatter.format(t);
      const numbers = text.match(/\d+/g);
      let wall: number;
      if (numbers && numbers.length === order.length && order.length === WALL_FIELDS.length) {
        for (let i = 0; i < order.length; i++) fields[order[i] as WallField] = Number(numbers[i]);
        wall = wallFromFields(fields, text.includes('B'));
      } else {
        wall = wallBySlowPath(t);
      }
      return wall - Math.floor(t / SECOND_MS) * SECOND_MS;
    },
  };
}

/** The zone for an IANA name (formatters are costly to build, so each zone is built once); an unknown one is an invalid value. */
function resolveZone(name: string, fieldName: string): Zone {
  const cached = zoneCache.get(name);
  if (cached) return cached;
  if (UTC_NAMES.has(name.toLowerCase())) return UTC_ZONE;
  let formatter: Intl.DateTimeFormat | undefined;
  if (name.length > 0 && name.length <= MAX_ZONE_NAME_LENGTH) {
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone: name,
        hourCycle: 'h23',
        era: 'narrow',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      formatter = undefined;
    }
  }
  if (!formatter) {
    throw invalidValue(fieldName, `${fieldName} ${quote(name)} is not a known IANA time zone (for example "UTC" or "Europe/Berlin").`);
  }
  const zone = intlZone(formatter);
  // Intl accepts any capitalisation; bound the cache so odd spellings cannot grow it without limit.
  if (zoneCache.size >= MAX_CACHED_ZONES) zoneCache.clear();
  zoneCache.set(name, zone);
  return zone;
}

/**
 * The instant of a local wall-clock time. Deterministic rules for the two DST oddities (the same
 * as Temporal's "compatible" disambiguation):
 * - a wall time that does not exist (spring-forward gap) is read with the offset in effect before
 *   the gap, i.e. it moves forward by the gap's length (Berlin 2024-03-31 02:30 → 03:30 CEST);
 * - a wall time that occurs twice (fall-back) is the earlier instant (the one still on summer time).
 */
function wallToInstant(zone: Zone, wall: number): number {
  if (zone === UTC_ZONE) return wall;
  // Offsets a day either side bracket every offset that can apply to this wall time.
  const before = zone.offsetAt(wall - DAY_MS);
  const after = zone.offsetAt(wall + DAY_MS);
  if (before === after) {
    const candidate = wall - before;
    if (zone.offsetAt(candidate) === before) return candidate;
  }
  const withBefore = wall - before;
  const withAfter = wall - after;
  const beforeValid = zone.offsetAt(withBefore) === before;
  const afterValid = zone.offsetAt(withAfter) === after;
  if (beforeValid && afterValid) return Math.min(withBefore, withAfter);
  if (beforeValid) return withBefore;
  if (afterValid) return withAfter;
  return withBefore;
}

function instantToWall(zone: Zone, t: number): number {
  return t + zone.offsetAt(t);
}

/** Wall values beyond this cannot be handed to Intl (Date's range is ±8.64e15 ms). */
const MAX_WALL = 8.64e15 - 2 * DAY_MS;

/**
 * `t` plus `count` times `duration`: the calendar part on the zone's wall clock (from `tWall`, the
 * wall time of `t`), then the elapsed part. ±Infinity when the result leaves the range Intl handles.
 */
function addDuration(zone: Zone, t: number, tWall: number, duration: IsoDuration, count: number): number {
  let result = t;
  if (duration.months !== 0 || duration.days !== 0) {
    const wall = addCalendar(tWall, duration.months * count, duration.days * count);
    if (!(Math.abs(wall) <= MAX_WALL)) return wall > 0 ? Infinity : -Infinity;
    result = wallToInstant(zone, wall);
  }
  return result + duration.ms * count;
}

// ---------------------------------------------------------------------------------------------
// Parsing

const DATE_EXAMPLE = 'Dates must be specified as ISO-8601 strings. For example: yyyy-MM-ddTHH:mm:ss.SSSZ';

function isZeroDuration(d: IsoDuration): boolean {
  return d.months === 0 && d.days === 0 && d.ms === 0;
}

/** Parses an ISO 8601 duration (`PnYnMnWnDTnHnMnS`, any non-empty subset, positive) or throws an invalid value naming `fieldName`. */
export function parseDuration(text: string, fieldName: string): IsoDuration {
  const parsed = parseIsoDuration(text);
  if (typeof parsed === 'string') throw invalidValue(fieldName, `${fieldName} ${quote(text)} is not valid: ${parsed}.`);
  if (isZeroDuration(parsed)) throw invalidValue(fieldName, `${fieldName} ${quote(text)} must be longer than zero.`);
  return parsed;
}

/**
 * Parses `<start>/<end>`, `<start>/<duration>` or `<duration>/<end>` into [start, end) epoch ms.
 * A duration's calendar part steps on the wall clock of `timeZone` (default UTC).
 * Unparseable → an invalid date; end not after start, or longer than the limit → an invalid value.
 */
export function parseInterval(text: string, timeZone = 'UTC', fieldName = 'interval'): Interval {
  const zone = resolveZone(timeZone, 'timeZone');
  const parts = text.split('/');
  const invalid = (reason: string): DomainError =>
    invalidDate(fieldName, `${fieldName} ${quote(text)} is not valid: ${reason}. ${DATE_EXAMPLE}`);
  if (parts.length !== 2) throw invalid('expected <start>/<end>, <start>/<duration> or <duration>/<end>');
  const [first = '', second = ''] = parts;
  const isDuration = (s: string): boolean => /^P/i.test(s);
  let start: number;
  let end: number;
  if (isDuration(first) && isDuration(second)) {
    throw invalid('an interval cannot be two durations');
  } else if (isDuration(first)) {
    const duration = parseIsoDuration(first);
    if (typeof duration === 'string') throw invalid(`duration ${quote(first)}: ${duration}`);
    const parsedEnd = parseDateTime(second);
    if (typeof parsedEnd === 'string') throw invalid(`end ${quote(second)}: ${parsedEnd}`);
    end = parsedEnd;
    // Subtracting undoes adding: the elapsed part first, then the calendar part.
    const shifted = end - duration.ms;
    start = addDuration(zone, shifted, instantToWall(zone, shifted), { ...duration, ms: 0 }, -1);
  } else {
    const parsedStart = parseDateTime(first);
    if (typeof parsedStart === 'string') throw invalid(`start ${quote(first)}: ${parsedStart}`);
    start = parsedStart;
    if (isDuration(second)) {
      const duration = parseIsoDuration(second);
      if (typeof duration === 'string') throw invalid(`duration ${quote(second)}: ${duration}`);
      end = addDuration(zone, start, instantToWall(zone, start), duration, 1);
    } else {
      const parsedEnd = parseDateTime(second);
      if (typeof parsedEnd === 'string') throw invalid(`end ${quote(second)}: ${parsedEnd}`);
      end = parsedEnd;
    }
  }
  if (!(end > start)) {
    throw invalidValue(fieldName, `${fieldName} ${quote(text)} is not valid: the end must be after the start.`);
  }
  if (end - start > ANALYTICS_LIMITS.maxIntervalDays * DAY_MS) {
    throw invalidValue(fieldName, `${fieldName} ${quote(text)} is too long: at most ${ANALYTICS_LIMITS.maxIntervalDays} days are allowed.`);
  }
  return { start, end };
}

// ---------------------------------------------------------------------------------------------
// Buckets

function tooManyBuckets(granularity: string): DomainError {
  return invalidValue(
    'granularity',
    `granularity ${quote(granularity)} gives more than ${ANALYTICS_LIMITS.maxBuckets} buckets; choose a coarser granularity or a shorter interval.`,
  );
}

function unevenBuckets(granularity: string): DomainError {
  return invalidValue(
    'granularity',
    `granularity ${quote(granularity)} must divide the interval evenly: the buckets must end exactly at the interval end.`,
  );
}

/**
 * Splits the interval into buckets of `granularity` (one bucket when absent) in `timeZone` (default UTC).
 * Boundary k is the wall-clock time of the start plus k times the calendar part (years, months,
 * weeks, days; a month that lacks the start's day clamps to its last day), as an instant, plus k
 * times the elapsed part (hours, minutes, seconds). Each boundary is computed from the start, not
 * from the previous one, so Jan 31 + P1M is Feb 29 and + P2M is Mar 31.
 */
export function planBuckets(input: PlanBucketsInput): BucketPlan {
  const timeZone = input.timeZone ?? 'UTC';
  const zone = resolveZone(timeZone, 'timeZone');
  const { start, end } = parseInterval(input.interval, timeZone);
  const granularity = input.granularity;
  if (granularity === undefined) return { start, end, boundaries: [start, end] };

  const duration = parseDuration(granularity, 'granularity');
  if (duration.months === 0 && duration.days === 0) {
    if (duration.ms < ANALYTICS_LIMITS.minGranularityMs) {
      throw invalidValue(
        'granularity',
        `granularity ${quote(granularity)} is finer than the smallest allowed, PT${ANALYTICS_LIMITS.minGranularityMs / MINUTE_MS}M.`,
      );
    }
    const count = (end - start) / duration.ms;
    if (count > ANALYTICS_LIMITS.maxBuckets) throw tooManyBuckets(granularity);
    if (!Number.isInteger(count)) throw unevenBuckets(granularity);
    const boundaries = new Array<number>(count + 1);
    for (let k = 0; k <= count; k++) boundaries[k] = start + k * duration.ms;
    return { start, end, boundaries };
  }

  const startWall = instantToWall(zone, start);
  const boundaries = [start];
  let previous = start;
  for (let k = 1; ; k++) {
    if (k > ANALYTICS_LIMITS.maxBuckets) throw tooManyBuckets(granularity);
    const next = addDuration(zone, start, startWall, duration, k);
    if (next > end) throw unevenBuckets(granularity);
    // Only possible where a zone skips a whole calendar day (Pacific/Apia, 2011-12-30).
    if (next <= previous) {
      throw invalidValue('granularity', `granularity ${quote(granularity)} gives an empty bucket in time zone ${timeZone}.`);
    }
    boundaries.push(next);
    if (next === end) return { start, end, boundaries };
    previous = next;
  }
}

/** Index of the bucket containing instant t, or -1 when t lies outside [start, end). A boundary belongs to the later bucket. */
export function bucketIndex(plan: BucketPlan, t: number): number {
  const b = plan.boundaries;
  if (!(t >= plan.start && t < plan.end)) return -1;
  let lo = 0;
  let hi = b.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if ((b[mid] ?? Infinity) <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** `YYYY-MM-DDThh:mm:ss.sssZ/YYYY-MM-DDThh:mm:ss.sssZ`, in UTC with milliseconds. */
export function formatInterval(startMs: number, endMs: number): string {
  return `${new Date(startMs).toISOString()}/${new Date(endMs).toISOString()}`;
}

/** Maximal runs of consecutive buckets of equal width, in bucket order. */
export function uniformRuns(plan: BucketPlan): UniformRun[] {
  const b = plan.boundaries;
  const runs: UniformRun[] = [];
  let current: UniformRun | undefined;
  for (let i = 0; i + 1 < b.length; i++) {
    const from = b[i] ?? 0;
    const width = (b[i + 1] ?? 0) - from;
    if (current && current.width === width) {
      current.count++;
    } else {
      current = { start: from, width, count: 1, firstIndex: i };
      runs.push(current);
    }
  }
  return runs;
}

/** True when start, end and every boundary fall on a multiple of `unitMs` since the epoch (e.g. whole UTC hours). */
export function alignedTo(plan: BucketPlan, unitMs: number): boolean {
  if (plan.start % unitMs !== 0 || plan.end % unitMs !== 0) return false;
  return plan.boundaries.every((t) => t % unitMs === 0);
}
