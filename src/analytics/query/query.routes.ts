import { Hono } from 'hono';
import { CALLBACK_SERVICE_LEVEL, METRIC_INDEX, METRIC_NAMES, SERVICE_LEVEL, SERVICE_TARGET } from '../catalog';
import { ApiError } from '../../http/api-error';
import { requirePermission } from '../../http/auth';
import type { AppEnv } from '../../http/context';
import { jsonBody } from '../../http/json-body';
import { validJson } from '../../http/validate';
import { ANALYTICS_LIMITS } from '../limits';
import { DEFAULT_SERVICE_LEVEL, getServiceLevelSettings } from '../settings/service-level.settings';
import { Aggregation, type AggregateSpec } from './aggregate';
import { compileFilter, filterDimensions, hasMetricPredicates, requiredMatches } from './filter';
import { formatInterval, planBuckets } from './interval';
import { aggregateQuerySchema } from './query.schema';
import { readInto, readsRaw, type ReadSpec } from './query.store';
import { rawQueries } from './raw-gate';
import { answerJson } from './results-json';

const SETTINGS_METRICS = new Set([SERVICE_LEVEL.metric, SERVICE_TARGET, CALLBACK_SERVICE_LEVEL.metric].map((m) => METRIC_NAMES[m]!));

export const queryRoutes = new Hono<AppEnv>().post(
  '/api/v2/analytics/conversations/aggregates/query',
  requirePermission('analytics:conversationAggregate:view'),
  jsonBody(ANALYTICS_LIMITS.queryBodyBytes),
  validJson(aggregateQuerySchema),
  async (c) => {
    const query = c.req.valid('json');
    const plan = planBuckets({ interval: query.interval, granularity: query.granularity, timeZone: query.timeZone });
    const index = (name: string) => METRIC_INDEX.get(name)!;
    // Only the service-level entries (oServiceLevel, oServiceTarget, oCallbackServiceLevel) need the settings:
    // read them only then, alongside the observations.
    const settings =
      query.metrics === undefined || query.metrics.some((m) => SETTINGS_METRICS.has(m))
        ? getServiceLevelSettings(c.var.db)
        : Promise.resolve(DEFAULT_SERVICE_LEVEL);
    settings.catch(() => {}); // awaited below; this only keeps a failure before then from being "unhandled"
    const spec: AggregateSpec = {
      metrics: query.metrics?.map(index),
      groupBy: query.groupBy,
      flatten: query.flattenMultivaluedDimensions === true,
      filter: compileFilter(query.filter),
      maxGroups: ANALYTICS_LIMITS.maxGroups,
      maxGroupsPerObservation: ANALYTICS_LIMITS.maxGroupsPerObservation,
      maxCells: ANALYTICS_LIMITS.maxAnswerCells,
      views: query.views.map((v) => ({ name: v.name, target: index(v.target), gte: v.range.gte, lt: v.range.lt })),
      rank:
        query.queryType === 'groupBy' || !query.sortMetric
          ? undefined
          : { order: query.queryType, metric: index(query.sortMetric.name), function: query.sortMetric.function, limit: query.limit },
    };
    const readSpec: ReadSpec = {
      plan,
      metrics: Aggregation.metricsToRead(spec),
      dimensions: new Set(['mediaType', ...query.groupBy, ...filterDimensions(query.filter)]),
      pushdown: requiredMatches(query.filter),
      needsValues: query.views.length > 0 || hasMetricPredicates(query.filter),
    };
    // A raw-path query computes only in its turn (raw-gate.ts), from its read to its written answer.
    const leave = readsRaw(readSpec) ? await rawQueries.enter() : () => {};
    if (!leave) {
      throw new ApiError(
        429,
        'too.many.requests',
        'Too many queries that read the raw observations are running or waiting here; retry shortly, or narrow the query so the rollups can answer it.',
        [],
        { 'Retry-After': '2' },
      );
    }
    try {
      const aggregation = new Aggregation(spec);
      const { source } = await readInto(c.env.DB, readSpec, aggregation);
      c.header('Switchboard-Query-Source', source);
      const intervalOf = (bucket: number) => formatInterval(plan.boundaries[bucket]!, plan.boundaries[bucket + 1]!);
      const body = await answerJson(aggregation, await settings, intervalOf, ANALYTICS_LIMITS.maxAnswerBytes);
      return c.body(body, 200, { 'Content-Type': 'application/json' });
    } finally {
      leave();
    }
  },
);
