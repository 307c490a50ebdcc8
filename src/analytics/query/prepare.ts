import { CALLBACK_SERVICE_LEVEL, METRIC_INDEX, METRIC_NAMES, SERVICE_LEVEL, SERVICE_TARGET } from '../catalog';
import { ANALYTICS_LIMITS } from '../limits';
import { Aggregation, type AggregateSpec } from './aggregate';
import { compileFilter, filterDimensions, hasMetricPredicates, requiredAnyOf, requiredMatches } from './filter';
import { planBuckets, type BucketPlan } from './interval';
import type { AggregateQuery } from './query.schema';
import type { ReadSpec } from './read-spec';

const SETTINGS_METRICS = new Set([SERVICE_LEVEL.metric, SERVICE_TARGET, CALLBACK_SERVICE_LEVEL.metric].map((m) => METRIC_NAMES[m]!));

/** What answering a query takes: its buckets, the aggregation and the read. */
export interface PreparedQuery {
  plan: BucketPlan;
  spec: AggregateSpec;
  read: ReadSpec;
  /** Only the service-level entries (oServiceLevel, oServiceTarget, oCallbackServiceLevel) need the settings. */
  needsSettings: boolean;
}

/** Bounds an answer is computed within: the synchronous query's by default; a job's units set their own. */
export interface AnswerBounds {
  maxGroups: number;
  maxCells: number;
  /** Answer only the groups whose key hashes to `index` modulo `count` (a job's share of a large answer). */
  partition?: { count: number; index: number };
}

/**
 * A validated query turned into its bucket plan, aggregation spec and read spec. `interval` replaces
 * the query's interval (a job answers its interval a run of buckets at a time).
 */
export function prepareQuery(
  query: AggregateQuery,
  bounds: AnswerBounds = { maxGroups: ANALYTICS_LIMITS.maxGroups, maxCells: ANALYTICS_LIMITS.maxAnswerCells },
  interval = query.interval,
): PreparedQuery {
  const plan = planBuckets({ interval, granularity: query.granularity, timeZone: query.timeZone });
  const index = (name: string) => METRIC_INDEX.get(name)!;
  const spec: AggregateSpec = {
    metrics: query.metrics?.map(index),
    groupBy: query.groupBy,
    flatten: query.flattenMultivaluedDimensions === true,
    filter: compileFilter(query.filter),
    maxGroups: bounds.maxGroups,
    maxGroupsPerObservation: ANALYTICS_LIMITS.maxGroupsPerObservation,
    maxCells: bounds.maxCells,
    ...(bounds.partition ? { partition: bounds.partition } : {}),
    views: query.views.map((v) => ({ name: v.name, target: index(v.target), gte: v.range.gte, lt: v.range.lt })),
    rank:
      query.queryType === 'groupBy' || !query.sortMetric
        ? undefined
        : { order: query.queryType, metric: index(query.sortMetric.name), function: query.sortMetric.function, limit: query.limit },
  };
  const read: ReadSpec = {
    plan,
    metrics: Aggregation.metricsToRead(spec),
    dimensions: new Set(['mediaType', ...query.groupBy, ...filterDimensions(query.filter)]),
    pushdown: requiredMatches(query.filter),
    anyOf: requiredAnyOf(query.filter),
    needsValues: query.views.length > 0 || hasMetricPredicates(query.filter),
  };
  const needsSettings = query.metrics === undefined || query.metrics.some((m) => SETTINGS_METRICS.has(m));
  return { plan, spec, read, needsSettings };
}
