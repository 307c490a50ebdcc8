/**
 * A deliberately naive reference for the conversation aggregate query, used only by tests.
 *
 * Written from the issue text, the seed rules and test records contract, without reading the real query or ingest
 * code, so that a disagreement between the two points at a bug in one of them. It loops over every observation
 * for every query; speed does not matter here, readability does.
 *
 * Supported: intervals `<start>/<end>` (anything `Date` parses), granularity PTnM / PTnH / PnD / PnW as elapsed
 * UTC time (a day is 24 h), groupBy, metrics, and filters of type and/or with nested clauses and dimension
 * predicates using matches / exists / notExists. Anything else (time zones, views, topN, metric predicates)
 * throws, so a test cannot silently compare against a guess.
 */
import {
  DIMENSIONS,
  METRICS,
  USER_PURPOSES,
  type Dimension,
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
  direction: string;
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

export interface Predicate {
  type?: 'dimension';
  dimension: string;
  value?: string;
  operator?: 'matches' | 'exists' | 'notExists';
}

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
  queryType?: string;
  flattenMultivaluedDimensions?: boolean;
  alternateTimeDimension?: string;
}

export interface ServiceLevelSettings {
  includeFlowOuts: boolean;
  includeShortAbandons: boolean;
  target: number;
  queues: Record<string, { target: number }>;
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
export type Stats = TimerStats | CountStats | ServiceLevelStats;

export interface MetricEntry {
  metric: string;
  stats: Stats;
}
export interface DataEntry {
  interval: string;
  metrics: MetricEntry[];
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
  dims: Partial<Record<Dimension, string>>;
}

const SERVICE_LEVEL = 'oServiceLevel';
const SERVICE_LEVEL_COMPONENTS = ['tAnswered', 'nOverSla', 'tAbandon', 'tShortAbandon', 'tFlowOut'];

function metricDef(name: string): MetricDef {
  const def = METRICS.find((m) => m.name === name);
  if (!def) throw new Error(`reference: unknown metric ${name}`);
  return def;
}

function isDimension(name: string): name is Dimension {
  return (DIMENSIONS as readonly string[]).includes(name);
}

function setIfPresent(dims: Partial<Record<Dimension, string>>, dim: Dimension, value: string | null | undefined): void {
  if (value !== undefined && value !== null && value !== '') dims[dim] = value;
}

/** The value of `field` on the latest segment (by segmentStart) started at or before `time` that carries it. */
function segmentField(
  segments: RecordSegment[],
  field: 'queueId' | 'wrapUpCode' | 'disconnectType',
  time: number,
): string | undefined {
  let best: { start: number; value: string } | undefined;
  for (const segment of segments) {
    const start = Date.parse(segment.segmentStart);
    const value = segment[field];
    if (value === undefined || value === '' || start > time) continue;
    // `>=`: of two segments starting at the same instant, the later one in the record wins.
    if (best === undefined || start >= best.start) best = { start, value };
  }
  return best?.value;
}

/**
 * Turns records into observations: dimensions per the records contract, inapplicable dimensions dropped, and
 * duplicates (same conversationId, sessionId, metric and emit instant) skipped so the first value seen wins.
 */
export function observationsFromRecords(records: readonly ConversationRecord[]): Observation[] {
  const seen = new Set<string>();
  const observations: Observation[] = [];
  for (const record of records) {
    for (const participant of record.participants) {
      for (const session of participant.sessions) {
        for (const metric of session.metrics ?? []) {
          const def = metricDef(metric.name);
          if (def.kind === 'calculated') throw new Error(`reference: ${metric.name} cannot be ingested`);
          const time = Date.parse(metric.emitDate);
          if (Number.isNaN(time)) throw new Error(`reference: bad emitDate ${metric.emitDate}`);

          const key = JSON.stringify([record.conversationId, session.sessionId, metric.name, time]);
          if (seen.has(key)) continue;
          seen.add(key);

          const dims: Partial<Record<Dimension, string>> = {};
          setIfPresent(dims, 'conversationId', record.conversationId);
          setIfPresent(dims, 'originatingDirection', record.originatingDirection);
          setIfPresent(dims, 'divisionId', record.divisionIds?.[0]);
          setIfPresent(dims, 'purpose', participant.purpose);
          setIfPresent(dims, 'participantName', participant.participantName);
          if (USER_PURPOSES.has(participant.purpose)) setIfPresent(dims, 'userId', participant.userId);
          setIfPresent(dims, 'mediaType', session.mediaType);
          setIfPresent(dims, 'direction', session.direction);
          setIfPresent(dims, 'ani', session.ani);
          setIfPresent(dims, 'dnis', session.dnis);
          setIfPresent(dims, 'sessionId', session.sessionId);
          const segments = session.segments ?? [];
          setIfPresent(dims, 'queueId', segmentField(segments, 'queueId', time));
          setIfPresent(dims, 'wrapUpCode', segmentField(segments, 'wrapUpCode', time));
          setIfPresent(dims, 'disconnectType', segmentField(segments, 'disconnectType', time));
          for (const dropped of def.notApplicable) delete dims[dropped];

          observations.push({ metric: metric.name, value: metric.value, time, dims });
        }
      }
    }
  }
  return observations;
}

// ---------------------------------------------------------------------------------------------------------------
// Query parts

function parseInterval(interval: string): { start: number; end: number } {
  const parts = interval.split('/');
  if (parts.length !== 2) throw new Error(`reference: interval must be <start>/<end>: ${interval}`);
  const start = Date.parse(parts[0] ?? '');
  const end = Date.parse(parts[1] ?? '');
  if (Number.isNaN(start) || Number.isNaN(end)) throw new Error(`reference: unparseable interval ${interval}`);
  if (end <= start) throw new Error(`reference: interval ends before it starts: ${interval}`);
  return { start, end };
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function parseGranularity(granularity: string): number {
  const units: [RegExp, number][] = [
    [/^PT(\d+)M$/, MINUTE],
    [/^PT(\d+)H$/, HOUR],
    [/^P(\d+)D$/, DAY],
    [/^P(\d+)W$/, 7 * DAY],
  ];
  for (const [pattern, unit] of units) {
    const match = pattern.exec(granularity);
    if (match) return Number(match[1]) * unit;
  }
  throw new Error(`reference: unsupported granularity ${granularity}`);
}

/** Rule 2, for every operator: a predicate on a dimension that does not apply to the metric is false. */
function predicateHolds(predicate: Predicate, dims: Partial<Record<Dimension, string>>, def: MetricDef): boolean {
  if (predicate.type !== undefined && predicate.type !== 'dimension') {
    throw new Error(`reference: unsupported predicate type ${predicate.type}`);
  }
  if (!isDimension(predicate.dimension)) throw new Error(`reference: unknown dimension ${predicate.dimension}`);
  if (def.notApplicable.includes(predicate.dimension)) return false;
  const value = dims[predicate.dimension];
  const operator = predicate.operator ?? 'matches';
  if (operator === 'exists') return value !== undefined;
  if (operator === 'notExists') return value === undefined;
  if (operator === 'matches') return value !== undefined && value === predicate.value;
  throw new Error(`reference: unsupported operator ${String(operator)}`);
}

function filterHolds(filter: Filter, dims: Partial<Record<Dimension, string>>, def: MetricDef): boolean {
  const outcomes: boolean[] = [];
  for (const predicate of filter.predicates ?? []) outcomes.push(predicateHolds(predicate, dims, def));
  for (const clause of filter.clauses ?? []) outcomes.push(filterHolds(clause, dims, def));
  if (filter.type === 'and') return outcomes.every((x) => x);
  if (filter.type === 'or') return outcomes.some((x) => x);
  throw new Error(`reference: unsupported filter type ${String(filter.type)}`);
}

/** Rule 3: mediaType always, then each groupBy dimension the observation carries. */
function groupOf(dims: Partial<Record<Dimension, string>>, groupBy: readonly Dimension[]): Group {
  const group: Group = {};
  const mediaType = dims.mediaType;
  if (mediaType !== undefined) group['mediaType'] = mediaType;
  for (const dim of groupBy) {
    const value = dims[dim];
    if (value !== undefined) group[dim] = value;
  }
  return group;
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

function formatInterval(start: number, end: number): string {
  return `${new Date(start).toISOString()}/${new Date(end).toISOString()}`;
}

// ---------------------------------------------------------------------------------------------------------------
// The aggregation

interface ServiceLevelCounts {
  tAnswered: number;
  nOverSla: number;
  tAbandon: number;
  tShortAbandon: number;
  tFlowOut: number;
}

interface Cell {
  group: Group;
  bucket: number;
  values: Map<string, number[]>;
  serviceLevel?: ServiceLevelCounts;
}

const KNOWN_QUERY_FIELDS = new Set([
  'interval',
  'granularity',
  'groupBy',
  'metrics',
  'filter',
  'timeZone',
  'queryType',
  'flattenMultivaluedDimensions',
  'alternateTimeDimension',
]);

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
  if (query.timeZone !== undefined && query.timeZone !== 'UTC') throw new Error('reference: only UTC is supported');
  if (query.queryType !== undefined && query.queryType !== 'groupBy') throw new Error('reference: only groupBy queries');
  const settings: ServiceLevelSettings = { ...DEFAULT_SERVICE_LEVEL_SETTINGS, ...settingsIn };

  const { start, end } = parseInterval(query.interval);
  const size = query.granularity === undefined ? end - start : parseGranularity(query.granularity);
  if ((end - start) % size !== 0) throw new Error('reference: granularity does not divide the interval');

  const groupBy: Dimension[] = [];
  for (const name of query.groupBy ?? []) {
    if (!isDimension(name)) throw new Error(`reference: unknown dimension ${name}`);
    if (!groupBy.includes(name)) groupBy.push(name);
  }
  const serviceLevelGroupBy = groupBy.filter((d) => d !== 'userId');

  if (query.metrics !== undefined && query.metrics.length === 0) throw new Error('reference: empty metrics list');
  // Requested metrics in the order the response lists them: the request's order, else the catalogue's.
  const requested: string[] = [];
  for (const name of query.metrics ?? METRICS.map((m) => m.name)) {
    metricDef(name);
    if (!requested.includes(name)) requested.push(name);
  }
  const wantServiceLevel = requested.includes(SERVICE_LEVEL);
  const serviceLevelDef = metricDef(SERVICE_LEVEL);

  const cells = new Map<string, Cell>();
  function cellFor(group: Group, bucket: number): Cell {
    const key = `${groupKey(group)}#${bucket}`;
    let cell = cells.get(key);
    if (!cell) {
      cell = { group, bucket, values: new Map() };
      cells.set(key, cell);
    }
    return cell;
  }

  for (const observation of observations) {
    if (observation.time < start || observation.time >= end) continue;
    const bucket = Math.floor((observation.time - start) / size);
    const def = metricDef(observation.metric);

    const passes = query.filter === undefined || filterHolds(query.filter, observation.dims, def);
    if (requested.includes(observation.metric) && passes) {
      const cell = cellFor(groupOf(observation.dims, groupBy), bucket);
      const values = cell.values.get(observation.metric) ?? [];
      values.push(observation.value);
      cell.values.set(observation.metric, values);
    }

    // oServiceLevel has its own applicability (userId never applies) and its own groups (never by userId).
    if (wantServiceLevel && SERVICE_LEVEL_COMPONENTS.includes(observation.metric)) {
      const passesForServiceLevel =
        query.filter === undefined || filterHolds(query.filter, observation.dims, serviceLevelDef);
      if (passesForServiceLevel) {
        const cell = cellFor(groupOf(observation.dims, serviceLevelGroupBy), bucket);
        cell.serviceLevel ??= { tAnswered: 0, nOverSla: 0, tAbandon: 0, tShortAbandon: 0, tFlowOut: 0 };
        cell.serviceLevel[observation.metric as keyof ServiceLevelCounts] += 1;
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
        if (name === SERVICE_LEVEL) {
          if (cell.serviceLevel) {
            metrics.push({ metric: name, stats: serviceLevelStats(cell.serviceLevel, cell.group, settings) });
          }
          continue;
        }
        const values = cell.values.get(name);
        if (values === undefined || values.length === 0) continue;
        metrics.push({ metric: name, stats: plainStats(metricDef(name), values) });
      }
      if (metrics.length === 0) continue;
      const bucketStart = start + cell.bucket * size;
      data.push({ interval: formatInterval(bucketStart, bucketStart + size), metrics });
    }
    if (data.length > 0) response.results.push({ group: result.group, data });
  }
  return response;
}

function plainStats(def: MetricDef, values: number[]): Stats {
  if (def.kind === 'count') return { count: values.length };
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

function serviceLevelStats(counts: ServiceLevelCounts, group: Group, settings: ServiceLevelSettings): ServiceLevelStats {
  const numerator = counts.tAnswered - counts.nOverSla;
  let denominator = counts.tAnswered + counts.tAbandon;
  if (settings.includeFlowOuts) denominator += counts.tFlowOut;
  if (!settings.includeShortAbandons) denominator -= counts.tShortAbandon;
  const queueId = group['queueId'];
  const override = queueId === undefined ? undefined : settings.queues[queueId];
  const target = override ? override.target : settings.target;
  const stats: ServiceLevelStats = { numerator, denominator, target };
  if (denominator !== 0) stats.ratio = numerator / denominator;
  return stats;
}

// ---------------------------------------------------------------------------------------------------------------
// Comparing answers

/**
 * A copy of `response` in canonical order: results by groupKey, data by bucket start, metrics by `metricOrder`
 * (the request's `metrics`; the catalogue's order when omitted). Fields other than these are kept as they are.
 */
export function canonicalize<T extends AggregateResponse>(response: T, metricOrder?: readonly string[]): T {
  const order = metricOrder ?? METRICS.map((m) => m.name);
  const rank = (name: string): number => {
    const i = order.indexOf(name);
    return i === -1 ? order.length : i;
  };
  const results = response.results.map((result) => ({
    ...result,
    data: result.data
      .map((entry) => ({
        ...entry,
        metrics: [...entry.metrics].sort((a, b) => rank(a.metric) - rank(b.metric) || compareStrings(a.metric, b.metric)),
      }))
      .sort((a, b) => compareStrings(a.interval, b.interval)),
  }));
  results.sort((a, b) => compareStrings(groupKey(a.group), groupKey(b.group)));
  return { ...response, results };
}
