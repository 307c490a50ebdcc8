/**
 * A deliberately naive reference for the conversation aggregate query, used only by tests.
 *
 * Written from the issue text, the seed rules, the records contract and the README ("Query" under "Conversation
 * aggregates"), without reading the real query or ingest code, so that a disagreement between the two points at a
 * bug in one of them. It loops over every observation for every query; speed does not matter here, readability does.
 *
 * Supported: intervals `<start>/<end>` (anything `Date` parses); granularity PTnM / PTnH as elapsed time and PnD /
 * PnW / PnM / PnY stepped in local wall-clock time of `timeZone` (default UTC, where a day is 24 h); groupBy;
 * metrics; filters of type and/or with nested clauses, dimension predicates (matches / exists / notExists) and
 * metric predicates (three-valued: true, false or no opinion); rangeBound views; queryType groupBy / topN /
 * bottomN. Anything else throws, so a test cannot silently compare against a guess.
 */
import {
  DIMENSION_DEFS,
  DIMENSIONS,
  METRICS,
  USER_PURPOSES,
  type Dimension,
  type DimensionDef,
  type MetricDef,
} from '../../src/analytics/catalog';

// ---------------------------------------------------------------------------------------------------------------
// Input shapes

export interface RecordMetric {
  name: string;
  value: number;
  emitDate: string;
}

export interface RecordSegment {
  segmentStart: string;
  segmentEnd?: string;
  segmentType?: string;
  queueId?: string;
  wrapUpCode?: string;
  disconnectType?: string;
}

export interface RecordSession {
  sessionId: string;
  mediaType: string;
  direction?: string;
  ani?: string;
  dnis?: string;
  segments?: RecordSegment[];
  metrics?: RecordMetric[];
}

export interface RecordParticipant {
  participantId: string;
  participantName?: string;
  purpose: string;
  userId?: string;
  sessions: RecordSession[];
}

export interface ConversationRecord {
  conversationId: string;
  conversationStart: string;
  conversationEnd?: string;
  originatingDirection?: string;
  divisionIds?: string[];
  participants: RecordParticipant[];
}

export interface DimensionPredicate {
  type?: 'dimension';
  dimension: string;
  value?: string;
  /** On numeric dimensions: the value (any of a list's) as a number in this range. */
  range?: NumericRange;
  operator?: 'matches' | 'exists' | 'notExists';
}

export interface NumericRange {
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

export interface MetricPredicate {
  type: 'metric';
  metric: string;
  range: NumericRange;
}

/** A segment property predicate (Genesys' AnalyticsQueryPredicate with type "property"). */
export interface PropertyPredicate {
  type: 'property';
  property: string;
  propertyType: 'bool' | 'integer' | 'real' | 'date' | 'string' | 'uuid';
  operator?: 'matches' | 'exists' | 'notExists';
  value?: string;
  range?: NumericRange;
}

export type Predicate = DimensionPredicate | MetricPredicate | PropertyPredicate;

export interface Filter {
  type: 'and' | 'or';
  predicates?: Predicate[];
  clauses?: Filter[];
}

export interface AggregateQuery {
  interval: string;
  granularity?: string;
  groupBy?: string[];
  metrics?: string[];
  filter?: Filter;
  timeZone?: string;
  views?: View[];
  queryType?: string;
  sortMetric?: SortMetric;
  limit?: number;
  flattenMultivaluedDimensions?: boolean;
  alternateTimeDimension?: string;
}

export interface View {
  target: string;
  name: string;
  function: 'rangeBound';
  range: { gte?: number; lt?: number };
}

export type SortFunction = 'sum' | 'count' | 'max' | 'min' | 'average';

export interface SortMetric {
  name: string;
  function: SortFunction;
}

export interface ServiceLevelSettings {
  includeFlowOuts: boolean;
  includeShortAbandons: boolean;
  target: number;
  /** Targets per media type; per queue a target and targets per media type (docs/api.md, service-level settings). */
  mediaTypes?: Record<string, { target: number }>;
  queues: Record<string, { target?: number; mediaTypes?: Record<string, { target: number }> }>;
}

export const DEFAULT_SERVICE_LEVEL_SETTINGS: ServiceLevelSettings = {
  includeFlowOuts: false,
  includeShortAbandons: true,
  target: 0.8,
  queues: {},
};

// ---------------------------------------------------------------------------------------------------------------
// Output shapes

export type Group = Record<string, string>;

export interface TimerStats {
  max: number;
  min: number;
  count: number;
  sum: number;
}
export interface CountStats {
  count: number;
}
export interface ServiceLevelStats {
  ratio?: number;
  numerator: number;
  denominator: number;
  target: number;
}
export type Stats = TimerStats | CountStats | ServiceLevelStats | { target: number };

export interface MetricEntry {
  metric: string;
  stats: Stats;
}
export interface ViewEntry {
  name: string;
  stats: TimerStats;
}
export interface DataEntry {
  interval: string;
  metrics: MetricEntry[];
  /** Present only when at least one view has observations in the bucket. */
  views?: ViewEntry[];
}
export interface ResultEntry {
  group: Group;
  data: DataEntry[];
}
export interface AggregateResponse {
  results: ResultEntry[];
}

// ---------------------------------------------------------------------------------------------------------------
// Observations

export interface Observation {
  metric: string;
  value: number;
  /** Emit time, ms since the epoch. */
  time: number;
  /** A multi-valued dimension holds its distinct values (never an empty list). */
  dims: Partial<Record<Dimension, string | string[]>>;
}

const SERVICE_LEVEL = 'oServiceLevel';
const SERVICE_LEVEL_COMPONENTS = ['tAnswered', 'nOverSla', 'tAbandon', 'tShortAbandon', 'tFlowOut'];
const CALLBACK_SERVICE_LEVEL = 'oCallbackServiceLevel';
const CALLBACK_COMPONENTS = ['tCallbackConnect', 'nCallbackOverSla', 'tCallbackAbandon', 'tCallbackNotReached'];
const SERVICE_TARGET = 'oServiceTarget';

function metricDef(name: string): MetricDef {
  const def = METRICS.find((m) => m.name === name);
  if (!def) throw new Error(`reference: unknown metric ${name}`);
  return def;
}

function isDimension(name: string): name is Dimension {
  return (DIMENSIONS as readonly string[]).includes(name);
}

type Fields = Record<string, unknown>;

/** A record field as dimension text: strings as they are, booleans and integers as JSON writes them; lists distinct, empty = absent. */
function asValue(raw: unknown, multi: boolean): string | string[] | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (multi) {
    const values = [...new Set((raw as unknown[]).filter((v) => v !== undefined && v !== null).map(String))];
    return values.length === 0 ? undefined : values;
  }
  return String(raw);
}

/** A field as written in the catalogue: `name` or `list.item` (the item's value in each element of the list). */
function readField(source: Fields, field: string, multi: boolean): string | string[] | undefined {
  const [list, item] = field.split('.');
  if (item === undefined) return asValue(source[list!], multi);
  const elements = (source[list!] as Fields[] | undefined) ?? [];
  return asValue(
    elements.map((e) => e[item]),
    true,
  );
}

/** The value a segment-level field has at `time`: the latest segment (by segmentStart) started at or before it that states it. */
function segmentField(segments: Fields[], field: string, multi: boolean, time: number): string | string[] | undefined {
  let best: { start: number; value: string | string[] } | undefined;
  for (const segment of segments) {
    const start = Date.parse(segment.segmentStart as string);
    const value = readField(segment, field, multi);
    if (value === undefined || start > time) continue;
    // `>=`: of two segments starting at the same instant, the later one in the record wins.
    if (best === undefined || start >= best.start) best = { start, value };
  }
  return best?.value;
}

/** The properties of the latest segment (by start) started at or before `time` that has any, as "name\0value". */
function segmentProperties(segments: Fields[], time: number): string[] | undefined {
  let best: { start: number; list: { property: string; value?: string }[] } | undefined;
  for (const segment of segments) {
    const start = Date.parse(segment.segmentStart as string);
    const list = segment.properties as { property: string; value?: string }[] | undefined;
    if (!list?.length || start > time) continue;
    if (best === undefined || start >= best.start) best = { start, list };
  }
  return best && [...new Set(best.list.map((p) => `${p.property}\u0000${p.value ?? ''}`))];
}

/**
 * Turns records into observations: every dimension of the catalogue read at its level (docs/catalogue.md, "How a
 * dimension applies to a metric"), the derived ones by the rules written there, inapplicable dimensions dropped,
 * and duplicates (same conversationId, sessionId, metric and emit instant) skipped so the first value seen wins.
 * Metrics that are not observed ones of the catalogue (flow metrics, future names, calculated names) are not stored.
 */
export function observationsFromRecords(records: readonly ConversationRecord[]): Observation[] {
  const seen = new Set<string>();
  const observations: Observation[] = [];
  for (const record of records) {
    // The conversation's first queue: the queueId of its acd participants' earliest segment (by start) that has one.
    const queued = record.participants
      .filter((p) => p.purpose === 'acd')
      .flatMap((p) => p.sessions.flatMap((s) => s.segments ?? []))
      .filter((g) => g.queueId !== undefined)
      .sort((a, b) => Date.parse(a.segmentStart) - Date.parse(b.segmentStart));
    const firstQueue = queued[0]?.queueId;
    const contactCenter = record.participants.some((p) => p.purpose === 'acd');
    const acdQueuesSeen: string[] = [];
    for (const participant of record.participants) {
      participant.sessions.forEach((session, s) => {
        const segments = (session.segments ?? []) as unknown as Fields[];
        // reoffered: an acd session whose first queue an earlier acd session of the conversation already had.
        const ownQueue = (session.segments ?? []).find((g) => g.queueId !== undefined)?.queueId;
        const reoffered = participant.purpose === 'acd' ? String(ownQueue !== undefined && acdQueuesSeen.includes(ownQueue)) : undefined;
        if (participant.purpose === 'acd' && ownQueue !== undefined) acdQueuesSeen.push(ownQueue);
        for (const metric of session.metrics ?? []) {
          const def = METRICS.find((m) => m.name === metric.name);
          if (def === undefined || def.kind === 'calculated') continue;
          const time = Date.parse(metric.emitDate);
          if (Number.isNaN(time)) throw new Error(`reference: bad emitDate ${metric.emitDate}`);

          const key = JSON.stringify([record.conversationId, session.sessionId, metric.name, time]);
          if (seen.has(key)) continue;
          seen.add(key);

          const dims: Partial<Record<Dimension, string | string[]>> = {};
          const set = (d: Dimension, v: string | string[] | undefined) => {
            if (v !== undefined) dims[d] = v;
          };
          for (const d of DIMENSION_DEFS as readonly DimensionDef[]) {
            const name = d.name as Dimension;
            const multi = d.multi === true;
            if (d.kind === 'properties') {
              // The segment current at the emit that has properties: its [name, value] pairs.
              set(name, segmentProperties(segments, time));
              continue;
            }
            if (d.level === 'conversation') set(name, readField(record as unknown as Fields, d.field!, multi));
            else if (d.level === 'participant') set(name, readField(participant as unknown as Fields, d.field!, multi));
            else if (d.level === 'session') set(name, readField(session as unknown as Fields, d.field!, multi));
            else if (d.level === 'segment') set(name, segmentField(segments, d.field!, multi, time));
          }
          if (!USER_PURPOSES.has(participant.purpose)) delete dims.userId;
          // Derived (docs/catalogue.md, "Dimensions with no record field").
          set('interactionType', contactCenter ? 'contactCenter' : 'enterprise');
          set('canonicalExternalContactId', dims.externalContactId);
          const requested = dims.requestedRouting as string[] | undefined;
          set('activeRouting', (dims.usedRouting as string | undefined) ?? requested?.[requested.length - 1]);
          if ((session.segments ?? []).some((g) => g.segmentType === 'converting')) {
            set('convertedFrom', session.mediaType);
            set('convertedTo', participant.sessions[s + 1]?.mediaType);
          }
          const video = session as unknown as Fields;
          if (video.videoRoomId !== undefined || video.videoAddressSelf !== undefined) set('videoPresent', 'true');
          set('reoffered', reoffered);
          if (dims.queueId !== undefined && firstQueue !== undefined) set('firstQueue', String(dims.queueId === firstQueue));
          for (const dropped of def.notApplicable) delete dims[dropped];

          observations.push({ metric: metric.name, value: metric.value, time, dims });
        }
      });
    }
  }
  return observations;
}

// ---------------------------------------------------------------------------------------------------------------
// Time: intervals, zones and buckets

function parseInterval(interval: string): { start: number; end: number } {
  const parts = interval.split('/');
  if (parts.length !== 2) throw new Error(`reference: interval must be <start>/<end>: ${interval}`);
  const start = Date.parse(parts[0] ?? '');
  const end = Date.parse(parts[1] ?? '');
  if (Number.isNaN(start) || Number.isNaN(end)) throw new Error(`reference: unparseable interval ${interval}`);
  if (end <= start) throw new Error(`reference: interval ends before it starts: ${interval}`);
  return { start, end };
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** No reference query needs more calendar buckets than this; beyond it something is wrong with the query. */
const MAX_CALENDAR_BUCKETS = 100_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new Error(`reference: unknown time zone ${zone}`);
    }
    formatters.set(zone, formatter);
  }
  return formatter;
}

/**
 * The zone's wall-clock date and time at `instant`, written as the UTC instant with the same fields
 * ("local epoch ms"), so that calendar arithmetic can use Date.UTC.
 */
function wallClockAt(instant: number, zone: string): number {
  const parts = formatterFor(zone).formatToParts(new Date(instant));
  const field = (type: Intl.DateTimeFormatPartTypes): number => {
    const value = Number(parts.find((p) => p.type === type)?.value);
    if (!Number.isInteger(value)) throw new Error(`reference: cannot read ${type} of ${new Date(instant).toISOString()} in ${zone}`);
    return value;
  };
  const millis = ((instant % SECOND) + SECOND) % SECOND;
  return Date.UTC(field('year'), field('month') - 1, field('day'), field('hour'), field('minute'), field('second'), millis);
}

function offsetAt(instant: number, zone: string): number {
  return wallClockAt(instant, zone) - instant;
}

/**
 * The instant at which the zone's clock shows `wall` (local epoch ms). Every offset in use within 16 hours either
 * side is tried (no zone is more than 14 hours from UTC, and no offset lasts less than an hour); a repeated wall
 * time takes its earlier instant; a skipped one moves forward by the size of the gap, as a clock set before the
 * change would show it.
 */
function instantOfWallClock(wall: number, zone: string): number {
  const offsets = new Set<number>();
  for (let h = -16; h <= 16; h++) offsets.add(offsetAt(wall + h * HOUR, zone));
  const matches = [...offsets].map((offset) => wall - offset).filter((instant) => wallClockAt(instant, zone) === wall);
  if (matches.length > 0) return Math.min(...matches);
  const gap = offsetAt(wall + DAY, zone) - offsetAt(wall - DAY, zone);
  if (gap <= 0) throw new Error(`reference: cannot place ${new Date(wall).toISOString()} (wall clock) in ${zone}`);
  return instantOfWallClock(wall + gap, zone);
}

/** Adds whole calendar months to a wall-clock time, keeping the day of month or clamping to the month's last day. */
function addMonths(wall: number, months: number): number {
  const d = new Date(wall);
  const monthIndex = d.getUTCMonth() + months;
  const year = d.getUTCFullYear() + Math.floor(monthIndex / 12);
  const month = ((monthIndex % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(d.getUTCDate(), lastDay);
  return Date.UTC(year, month, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
}

/** The query's time buckets: bucket i is [startOf(i), startOf(i + 1)), the last one ending at the interval end. */
interface Buckets {
  indexOf(time: number): number;
  startOf(index: number): number;
  endOf(index: number): number;
}

function elapsedBuckets(start: number, end: number, size: number): Buckets {
  if ((end - start) % size !== 0) throw new Error('reference: granularity does not divide the interval');
  return {
    indexOf: (time) => Math.floor((time - start) / size),
    startOf: (index) => start + index * size,
    endOf: (index) => start + (index + 1) * size,
  };
}

function boundaryBuckets(boundaries: number[]): Buckets {
  const at = (index: number): number => {
    const value = boundaries[index];
    if (value === undefined) throw new Error(`reference: no bucket ${index}`);
    return value;
  };
  return {
    indexOf(time) {
      // The last boundary at or before `time`; callers only pass times inside the interval.
      let low = 0;
      let high = boundaries.length - 2;
      while (low < high) {
        const mid = Math.ceil((low + high) / 2);
        if (at(mid) <= time) low = mid;
        else high = mid - 1;
      }
      return low;
    },
    startOf: at,
    endOf: (index) => at(index + 1),
  };
}

/**
 * Elapsed units (minutes, hours) count from the interval start; calendar units (days, weeks, months, years) step the
 * start's wall-clock time in `zone`: the k-th boundary is the start's local date-time plus k units, computed from the
 * start each time (so months from the 31st do not drift), then turned back into an instant.
 */
function makeBuckets(start: number, end: number, granularity: string | undefined, zone: string): Buckets {
  if (granularity === undefined) return boundaryBuckets([start, end]);
  const count = (match: RegExpExecArray | null): number | undefined => {
    if (!match) return undefined;
    const n = Number(match[1]);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`reference: unsupported granularity ${granularity}`);
    return n;
  };
  const minutes = count(/^PT(\d+)M$/.exec(granularity));
  if (minutes !== undefined) return elapsedBuckets(start, end, minutes * MINUTE);
  const hours = count(/^PT(\d+)H$/.exec(granularity));
  if (hours !== undefined) return elapsedBuckets(start, end, hours * HOUR);

  let step: ((wall: number, k: number) => number) | undefined;
  const days = count(/^P(\d+)D$/.exec(granularity));
  const weeks = count(/^P(\d+)W$/.exec(granularity));
  const months = count(/^P(\d+)M$/.exec(granularity));
  const years = count(/^P(\d+)Y$/.exec(granularity));
  if (days !== undefined) step = (wall, k) => wall + k * days * DAY;
  else if (weeks !== undefined) step = (wall, k) => wall + k * weeks * 7 * DAY;
  else if (months !== undefined) step = (wall, k) => addMonths(wall, k * months);
  else if (years !== undefined) step = (wall, k) => addMonths(wall, k * 12 * years);
  if (step === undefined) throw new Error(`reference: unsupported granularity ${granularity}`);

  const startWall = wallClockAt(start, zone);
  // Boundary 0 is the start itself, even when its wall time is the second of a repeated hour.
  const boundaries = [start];
  for (let k = 1; ; k++) {
    const boundary = instantOfWallClock(step(startWall, k), zone);
    if (boundary <= (boundaries[boundaries.length - 1] ?? start)) throw new Error('reference: buckets do not advance');
    boundaries.push(boundary);
    if (boundary === end) return boundaryBuckets(boundaries);
    if (boundary > end) throw new Error('reference: granularity does not land on the interval end');
    if (k >= MAX_CALENDAR_BUCKETS) throw new Error('reference: too many buckets for the granularity');
  }
}

function formatInterval(start: number, end: number): string {
  return `${new Date(start).toISOString()}/${new Date(end).toISOString()}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Filters

/** A predicate's verdict on one observation: true, false, or no opinion (undefined). */
type Opinion = boolean | undefined;

function checkRange(range: NumericRange | undefined, allowed: readonly (keyof NumericRange)[], where: string): void {
  if (range === undefined || range === null || typeof range !== 'object') throw new Error(`reference: ${where} needs a range`);
  const given = Object.entries(range).filter(([, v]) => v !== undefined);
  if (given.length === 0) throw new Error(`reference: ${where} range needs a bound`);
  for (const [bound, value] of given) {
    if (!(allowed as readonly string[]).includes(bound)) throw new Error(`reference: ${where} range has no bound ${bound}`);
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`reference: ${where} range ${bound} is not a number`);
  }
}

function inRange(value: number, range: NumericRange): boolean {
  return (
    (range.gt === undefined || value > range.gt) &&
    (range.gte === undefined || value >= range.gte) &&
    (range.lt === undefined || value < range.lt) &&
    (range.lte === undefined || value <= range.lte)
  );
}

/** Validates the whole filter up front, so a malformed one throws even when no observation reaches it. */
function checkFilter(filter: Filter): void {
  if (filter.type !== 'and' && filter.type !== 'or') throw new Error(`reference: unsupported filter type ${String(filter.type)}`);
  for (const predicate of filter.predicates ?? []) {
    if (predicate.type === 'metric') {
      const def = metricDef(predicate.metric);
      if (def.kind === 'calculated') throw new Error(`reference: metric predicate on calculated ${predicate.metric}`);
      checkRange(predicate.range, ['gt', 'gte', 'lt', 'lte'], `metric predicate on ${predicate.metric}`);
      continue;
    }
    if (predicate.type === 'property') {
      if (typeof predicate.property !== 'string' || predicate.property === '')
        throw new Error('reference: property predicate needs a property');
      if (predicate.range !== undefined)
        checkRange(predicate.range, ['gt', 'gte', 'lt', 'lte'], `property predicate on ${predicate.property}`);
      continue;
    }
    if (predicate.type !== undefined && predicate.type !== 'dimension') {
      throw new Error(`reference: unsupported predicate type ${String(predicate.type)}`);
    }
    if (!isDimension(predicate.dimension)) throw new Error(`reference: unknown dimension ${predicate.dimension}`);
    const operator = predicate.operator ?? 'matches';
    if (operator !== 'matches' && operator !== 'exists' && operator !== 'notExists') {
      throw new Error(`reference: unsupported operator ${String(operator)}`);
    }
    if (operator === 'matches' && predicate.value === undefined && predicate.range === undefined) {
      throw new Error(`reference: matches ${predicate.dimension} needs a value`);
    }
    if (predicate.range !== undefined)
      checkRange(predicate.range, ['gt', 'gte', 'lt', 'lte'], `dimension predicate on ${predicate.dimension}`);
  }
  for (const clause of filter.clauses ?? []) checkFilter(clause);
}

/**
 * A dimension predicate is judged on the observation's dimensions, false for every operator when the dimension
 * never applies to `def` (rule 2; `def` is the observation's metric, or oServiceLevel for its components). A metric
 * predicate speaks only about observations of its own metric.
 */
function judgeProperty(p: PropertyPredicate, observation: Observation): boolean {
  const entries = ((observation.dims.segmentProperty as string[] | undefined) ?? [])
    .map((e) => e.split('\u0000'))
    .filter(([name]) => name === p.property)
    .map(([, value]) => value ?? '');
  const operator = p.operator ?? 'matches';
  if (operator === 'exists') return entries.length > 0;
  if (operator === 'notExists') return entries.length === 0;
  const number = (v: string) => (p.propertyType === 'date' ? Date.parse(v) : v.trim() === '' ? Number.NaN : Number(v));
  return entries.some((v) => {
    if (p.range !== undefined) return Number.isFinite(number(v)) && inRange(number(v), p.range);
    if (p.propertyType === 'integer' || p.propertyType === 'real' || p.propertyType === 'date') return number(v) === number(p.value!);
    if (p.propertyType === 'bool') return v.toLowerCase() === p.value!.toLowerCase();
    return v === p.value;
  });
}

function judgePredicate(predicate: Predicate, observation: Observation, def: MetricDef): Opinion {
  if (predicate.type === 'property') return judgeProperty(predicate, observation);
  if (predicate.type === 'metric') {
    if (predicate.metric !== observation.metric) return undefined;
    return inRange(observation.value, predicate.range);
  }
  const dimension = predicate.dimension as Dimension;
  if (def.notApplicable.includes(dimension)) return false;
  const value = observation.dims[dimension];
  const operator = predicate.operator ?? 'matches';
  if (operator === 'exists') return value !== undefined;
  if (operator === 'notExists') return value === undefined;
  if (value === undefined) return false;
  // A list matches when any of its values does.
  const values = typeof value === 'string' ? [value] : value;
  if (predicate.range !== undefined) {
    const range = predicate.range;
    return values.some((v) => v !== '' && Number.isFinite(Number(v)) && inRange(Number(v), range));
  }
  return values.includes(predicate.value!);
}

/** Members without an opinion are left out; a filter whose every member has none has none itself. */
function judgeFilter(filter: Filter, observation: Observation, def: MetricDef): Opinion {
  const members: Opinion[] = [];
  for (const predicate of filter.predicates ?? []) members.push(judgePredicate(predicate, observation, def));
  for (const clause of filter.clauses ?? []) members.push(judgeFilter(clause, observation, def));
  const opinions = members.filter((x): x is boolean => x !== undefined);
  // No member with an opinion (none at all included: an empty and/or) means no opinion (README).
  if (opinions.length === 0) return undefined;
  return filter.type === 'and' ? opinions.every((x) => x) : opinions.some((x) => x);
}

/** Top level: no opinion keeps the observation. */
function keeps(filter: Filter | undefined, observation: Observation, def: MetricDef): boolean {
  return filter === undefined || (judgeFilter(filter, observation, def) ?? true);
}

// ---------------------------------------------------------------------------------------------------------------
// Groups

/**
 * Rule 3: mediaType always, then each groupBy dimension the observation carries. A multi-valued dimension puts the
 * observation in a group per value (every combination, with several), or, flattened, in one group whose value is the
 * list joined by commas.
 */
function groupsOf(dims: Observation['dims'], groupBy: readonly Dimension[], flatten: boolean): Group[] {
  let groups: Group[] = [{}];
  for (const dim of ['mediaType' as Dimension, ...groupBy.filter((d) => d !== 'mediaType')]) {
    const value = dims[dim];
    if (value === undefined) continue;
    const values = typeof value === 'string' ? [value] : flatten ? [value.join(',')] : value;
    groups = groups.flatMap((g) => values.map((v) => ({ ...g, [dim]: v })));
  }
  return groups;
}

/** JSON of the group with its keys sorted: the canonical identity and sort key of a result. */
export function groupKey(group: Group): string {
  const sorted: Group = {};
  for (const key of Object.keys(group).sort()) sorted[key] = group[key] ?? '';
  return JSON.stringify(sorted);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------------------------
// The aggregation

/** Per group and bucket: how many observations of each service-level component (either service level's). */
type ServiceLevelCounts = Record<string, number>;

interface Cell {
  group: Group;
  bucket: number;
  values: Map<string, number[]>;
  views: Map<string, number[]>;
  serviceLevel?: ServiceLevelCounts;
}

const KNOWN_QUERY_FIELDS = new Set([
  'interval',
  'granularity',
  'groupBy',
  'metrics',
  'filter',
  'timeZone',
  'views',
  'queryType',
  'sortMetric',
  'limit',
  'flattenMultivaluedDimensions',
  'alternateTimeDimension',
]);

const SORT_FUNCTIONS: readonly SortFunction[] = ['sum', 'count', 'max', 'min', 'average'];
const MAX_VIEWS = 10;

function checkViews(views: readonly View[]): void {
  if (views.length > MAX_VIEWS) throw new Error(`reference: more than ${MAX_VIEWS} views`);
  const names = new Set<string>();
  for (const view of views) {
    if (view.function !== 'rangeBound') throw new Error(`reference: unsupported view function ${String(view.function)}`);
    if (metricDef(view.target).kind !== 'timer') throw new Error(`reference: view target ${view.target} is not a timer`);
    if (typeof view.name !== 'string' || view.name === '') throw new Error('reference: view needs a name');
    if (names.has(view.name) || METRICS.some((m) => m.name === view.name)) throw new Error(`reference: view name ${view.name} collides`);
    names.add(view.name);
    checkRange(view.range, ['gte', 'lt'], `view ${view.name}`);
  }
}

function checkSort(query: AggregateQuery): SortMetric {
  const sort = query.sortMetric;
  if (sort === undefined) throw new Error(`reference: ${String(query.queryType)} needs sortMetric`);
  if (metricDef(sort.name).kind === 'calculated') throw new Error(`reference: cannot sort by ${sort.name}`);
  if (!SORT_FUNCTIONS.includes(sort.function)) throw new Error(`reference: unsupported sort function ${String(sort.function)}`);
  if (query.limit !== undefined && !(Number.isInteger(query.limit) && query.limit >= 1 && query.limit <= 10_000)) {
    throw new Error(`reference: limit ${query.limit} outside 1-10000`);
  }
  return sort;
}

function sortValue(values: readonly number[], fn: SortFunction): number {
  const sum = values.reduce((a, b) => a + b, 0);
  if (fn === 'sum') return sum;
  if (fn === 'count') return values.length;
  if (fn === 'max') return Math.max(...values);
  if (fn === 'min') return Math.min(...values);
  return sum / values.length;
}

/**
 * The exact response the aggregate query endpoint must give for `query` after ingesting `records` (in that order)
 * under the given service-level settings.
 */
export function referenceAggregate(
  records: readonly ConversationRecord[],
  query: AggregateQuery,
  settings: Partial<ServiceLevelSettings> = {},
): AggregateResponse {
  return aggregateObservations(observationsFromRecords(records), query, settings);
}

export function aggregateObservations(
  observations: readonly Observation[],
  query: AggregateQuery,
  settingsIn: Partial<ServiceLevelSettings> = {},
): AggregateResponse {
  for (const field of Object.keys(query)) {
    if (!KNOWN_QUERY_FIELDS.has(field)) throw new Error(`reference: unsupported query field ${field}`);
  }
  const zone = query.timeZone ?? 'UTC';
  formatterFor(zone);
  if (query.alternateTimeDimension !== undefined && query.alternateTimeDimension !== 'eventTime') {
    throw new Error(`reference: unsupported alternateTimeDimension ${query.alternateTimeDimension}`);
  }
  const queryType = query.queryType ?? 'groupBy';
  if (queryType !== 'groupBy' && queryType !== 'topN' && queryType !== 'bottomN') {
    throw new Error(`reference: unsupported queryType ${queryType}`);
  }
  // sortMetric and limit only mean something for topN / bottomN; a groupBy query ignores them.
  const sort = queryType === 'groupBy' ? undefined : checkSort(query);
  const settings: ServiceLevelSettings = { ...DEFAULT_SERVICE_LEVEL_SETTINGS, ...settingsIn };

  const { start, end } = parseInterval(query.interval);
  const buckets = makeBuckets(start, end, query.granularity, zone);

  const groupBy: Dimension[] = [];
  for (const name of query.groupBy ?? []) {
    if (!isDimension(name)) throw new Error(`reference: unknown dimension ${name}`);
    if (!groupBy.includes(name)) groupBy.push(name);
  }
  // oServiceLevel never has a userId or a teamId (it is a queue metric).
  const serviceLevelGroupBy = groupBy.filter((d) => !serviceLevelDefFor().notApplicable.includes(d));
  const flatten = query.flattenMultivaluedDimensions === true;

  if (query.metrics !== undefined && query.metrics.length === 0) throw new Error('reference: empty metrics list');
  // Requested metrics in the order the response lists them: the request's order, else the catalogue's.
  const requested: string[] = [];
  // Naming none means every metric with data; oServiceTarget (configuration, not data) only when named.
  for (const name of query.metrics ?? METRICS.map((m) => m.name).filter((m) => m !== SERVICE_TARGET)) {
    metricDef(name);
    if (!requested.includes(name)) requested.push(name);
  }
  // oServiceTarget appears wherever either service level's components do, so it needs both.
  const wantServiceLevel = [SERVICE_LEVEL, CALLBACK_SERVICE_LEVEL, SERVICE_TARGET].some((m) => requested.includes(m));
  const serviceLevelDef = metricDef(SERVICE_LEVEL);
  const views = query.views ?? [];
  checkViews(views);
  if (query.filter !== undefined) checkFilter(query.filter);

  const cells = new Map<string, Cell>();
  function cellFor(group: Group, bucket: number): Cell {
    const key = `${groupKey(group)}#${bucket}`;
    let cell = cells.get(key);
    if (!cell) {
      cell = { group, bucket, values: new Map(), views: new Map() };
      cells.set(key, cell);
    }
    return cell;
  }
  const push = (map: Map<string, number[]>, name: string, value: number): void => {
    const values = map.get(name) ?? [];
    values.push(value);
    map.set(name, values);
  };
  // groupKey -> every value of the sort metric in that group, over all buckets.
  const sortValues = new Map<string, number[]>();

  for (const observation of observations) {
    if (observation.time < start || observation.time >= end) continue;
    const bucket = buckets.indexOf(observation.time);
    const def = metricDef(observation.metric);

    if (keeps(query.filter, observation, def)) {
      for (const group of groupsOf(observation.dims, groupBy, flatten)) {
        if (requested.includes(observation.metric)) push(cellFor(group, bucket).values, observation.metric, observation.value);
        for (const view of views) {
          if (view.target === observation.metric && inRange(observation.value, view.range)) {
            push(cellFor(group, bucket).views, view.name, observation.value);
          }
        }
        if (sort !== undefined && sort.name === observation.metric) push(sortValues, groupKey(group), observation.value);
      }
    }

    // oServiceLevel has its own applicability (userId never applies) and its own groups (never by userId); metric
    // predicates still judge the component observation itself.
    if (wantServiceLevel && [...SERVICE_LEVEL_COMPONENTS, ...CALLBACK_COMPONENTS].includes(observation.metric)) {
      if (keeps(query.filter, observation, serviceLevelDef)) {
        for (const group of groupsOf(observation.dims, serviceLevelGroupBy, flatten)) {
          const cell = cellFor(group, bucket);
          cell.serviceLevel ??= {};
          cell.serviceLevel[observation.metric] = (cell.serviceLevel[observation.metric] ?? 0) + 1;
        }
      }
    }
  }

  const results = new Map<string, ResultEntry & { cells: Cell[] }>();
  for (const cell of cells.values()) {
    const key = groupKey(cell.group);
    const result = results.get(key) ?? { group: cell.group, data: [], cells: [] };
    result.cells.push(cell);
    results.set(key, result);
  }

  const response: AggregateResponse = { results: [] };
  const keys = [...results.keys()].sort(compareStrings);
  for (const key of keys) {
    const result = results.get(key);
    if (!result) continue;
    const data: DataEntry[] = [];
    const cellsInTimeOrder = [...result.cells].sort((a, b) => a.bucket - b.bucket);
    for (const cell of cellsInTimeOrder) {
      const metrics: MetricEntry[] = [];
      for (const name of requested) {
        if (name === SERVICE_LEVEL || name === CALLBACK_SERVICE_LEVEL || name === SERVICE_TARGET) {
          const counts = cell.serviceLevel;
          if (!counts) continue;
          const standard = SERVICE_LEVEL_COMPONENTS.some((m) => (counts[m] ?? 0) > 0);
          const callback = CALLBACK_COMPONENTS.some((m) => (counts[m] ?? 0) > 0);
          if (name === SERVICE_LEVEL && standard) metrics.push({ metric: name, stats: serviceLevelStats(counts, cell.group, settings) });
          if (name === CALLBACK_SERVICE_LEVEL && callback)
            metrics.push({ metric: name, stats: callbackStats(counts, cell.group, settings) });
          if (name === SERVICE_TARGET && (standard || callback))
            metrics.push({ metric: name, stats: { target: targetOf(cell.group, settings) } });
          continue;
        }
        const values = cell.values.get(name);
        if (values === undefined || values.length === 0) continue;
        metrics.push({ metric: name, stats: plainStats(metricDef(name), values) });
      }
      const viewEntries: ViewEntry[] = [];
      for (const view of views) {
        const values = cell.views.get(view.name);
        if (values !== undefined && values.length > 0) viewEntries.push({ name: view.name, stats: timerStats(values) });
      }
      if (metrics.length === 0 && viewEntries.length === 0) continue;
      const entry: DataEntry = { interval: formatInterval(buckets.startOf(cell.bucket), buckets.endOf(cell.bucket)), metrics };
      if (viewEntries.length > 0) entry.views = viewEntries;
      data.push(entry);
    }
    if (data.length > 0) response.results.push({ group: result.group, data });
  }

  if (sort !== undefined) {
    // Ties (and the groups without the metric) keep the API's documented group order (README, "Answer rules"):
    // mediaType, then each groupBy dimension in request order, a missing dimension first. Array.prototype.sort is stable.
    const order = ['mediaType', ...(query.groupBy ?? []).filter((d) => d !== 'mediaType')];
    response.results.sort((a, b) => {
      for (const d of order) {
        const x = a.group[d];
        const y = b.group[d];
        if (x === y) continue;
        if (x === undefined) return -1;
        if (y === undefined) return 1;
        return x < y ? -1 : 1;
      }
      return 0;
    });
    const rankOf = (result: ResultEntry): number | undefined => {
      const values = sortValues.get(groupKey(result.group));
      return values === undefined || values.length === 0 ? undefined : sortValue(values, sort.function);
    };
    const ranked = response.results.map((result) => ({ result, rank: rankOf(result) }));
    ranked.sort((a, b) => {
      if (a.rank === undefined || b.rank === undefined) return (a.rank === undefined ? 1 : 0) - (b.rank === undefined ? 1 : 0);
      return queryType === 'topN' ? b.rank - a.rank : a.rank - b.rank;
    });
    response.results = ranked.map((x) => x.result).slice(0, query.limit ?? ranked.length);
  }
  return response;
}

function serviceLevelDefFor(): MetricDef {
  return metricDef(SERVICE_LEVEL);
}

function timerStats(values: readonly number[]): TimerStats {
  let sum = 0;
  let max = values[0] ?? 0;
  let min = values[0] ?? 0;
  for (const v of values) {
    sum += v;
    if (v > max) max = v;
    if (v < min) min = v;
  }
  return { max, min, count: values.length, sum };
}

function plainStats(def: MetricDef, values: number[]): Stats {
  if (def.kind === 'count') return { count: values.length };
  return timerStats(values);
}

/** The most specific target set: the queue's for the media type, the queue's, the org's for the media type, the org's. */
function targetOf(group: Group, settings: ServiceLevelSettings, mediaType = group.mediaType): number {
  const queue = group.queueId === undefined ? undefined : settings.queues[group.queueId];
  const perMedia = (m: Record<string, { target: number }> | undefined) => (mediaType === undefined ? undefined : m?.[mediaType]?.target);
  return perMedia(queue?.mediaTypes) ?? queue?.target ?? perMedia(settings.mediaTypes) ?? settings.target;
}

/** (connected − over the callback service level) / (connected + abandoned + not reached), against the callback target. */
function callbackStats(counts: ServiceLevelCounts, group: Group, settings: ServiceLevelSettings): ServiceLevelStats {
  const n = (m: string) => counts[m] ?? 0;
  const numerator = n('tCallbackConnect') - n('nCallbackOverSla');
  const denominator = n('tCallbackConnect') + n('tCallbackAbandon') + n('tCallbackNotReached');
  const stats: ServiceLevelStats = { numerator, denominator, target: targetOf(group, settings, 'callback') };
  if (denominator !== 0) stats.ratio = numerator / denominator;
  return stats;
}

function serviceLevelStats(counts: ServiceLevelCounts, group: Group, settings: ServiceLevelSettings): ServiceLevelStats {
  const n = (m: string) => counts[m] ?? 0;
  const numerator = n('tAnswered') - n('nOverSla');
  let denominator = n('tAnswered') + n('tAbandon');
  if (settings.includeFlowOuts) denominator += n('tFlowOut');
  if (!settings.includeShortAbandons) denominator -= n('tShortAbandon');
  const target = targetOf(group, settings);
  const stats: ServiceLevelStats = { numerator, denominator, target };
  if (denominator !== 0) stats.ratio = numerator / denominator;
  return stats;
}

// ---------------------------------------------------------------------------------------------------------------
// Comparing answers

export interface CanonicalizeOptions {
  /** topN / bottomN: `results` are ranked by the server, so their order is part of the answer and is kept. */
  queryType?: string;
  /** The request's views, whose order `data[].views` is put in (by name when a view is not listed). */
  views?: readonly { name: string }[];
}

/**
 * A copy of `response` in canonical order: results by groupKey (kept as given for topN / bottomN), data by bucket
 * start, metrics by `metricOrder` (the request's `metrics`; the catalogue's order when omitted), views by the
 * request's order. An empty `views` list is dropped, since the README does not say whether a bucket without views
 * lists `views: []` or leaves it out. Fields other than these are kept as they are. Pass the query itself as
 * `options` to get both settings right.
 */
export function canonicalize<T extends AggregateResponse>(
  response: T,
  metricOrder?: readonly string[],
  options: CanonicalizeOptions = {},
): T {
  const order = metricOrder ?? METRICS.map((m) => m.name);
  const rank = (name: string): number => {
    const i = order.indexOf(name);
    return i === -1 ? order.length : i;
  };
  const viewOrder = (options.views ?? []).map((v) => v.name);
  const viewRank = (name: string): number => {
    const i = viewOrder.indexOf(name);
    return i === -1 ? viewOrder.length : i;
  };
  const results = response.results.map((result) => ({
    ...result,
    data: result.data
      .map((entry) => {
        const { views, ...rest } = entry;
        const canonical: DataEntry = {
          ...rest,
          metrics: [...entry.metrics].sort((a, b) => rank(a.metric) - rank(b.metric) || compareStrings(a.metric, b.metric)),
        };
        if (views !== undefined && views.length > 0) {
          canonical.views = [...views].sort((a, b) => viewRank(a.name) - viewRank(b.name) || compareStrings(a.name, b.name));
        }
        return canonical;
      })
      .sort((a, b) => compareStrings(a.interval, b.interval)),
  }));
  if (options.queryType !== 'topN' && options.queryType !== 'bottomN') {
    results.sort((a, b) => compareStrings(groupKey(a.group), groupKey(b.group)));
  }
  return { ...response, results };
}
