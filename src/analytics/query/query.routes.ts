import { Hono } from 'hono';
import { METRIC_INDEX } from '../catalog';
import { requirePermission } from '../../http/auth';
import type { AppEnv } from '../../http/context';
import { jsonBody } from '../../http/json-body';
import { validJson } from '../../http/validate';
import { ANALYTICS_LIMITS } from '../limits';
import { getServiceLevelSettings } from '../settings/service-level.settings';
import { Aggregation } from './aggregate';
import { compileFilter, filterDimensions, requiredMatches } from './filter';
import { formatInterval, planBuckets } from './interval';
import { aggregateQuerySchema } from './query.schema';
import { readInto } from './query.store';

export const queryRoutes = new Hono<AppEnv>().post(
  '/api/v2/analytics/conversations/aggregates/query',
  requirePermission('analytics:conversationAggregate:view'),
  jsonBody(ANALYTICS_LIMITS.queryBodyBytes),
  validJson(aggregateQuerySchema),
  async (c) => {
    const query = c.req.valid('json');
    const plan = planBuckets({ interval: query.interval, granularity: query.granularity, timeZone: query.timeZone });
    const metrics = query.metrics?.map((name) => METRIC_INDEX.get(name)!);
    const aggregation = new Aggregation({
      metrics,
      groupBy: query.groupBy,
      filter: compileFilter(query.filter),
      bucketCount: plan.boundaries.length - 1,
      serviceLevel: await getServiceLevelSettings(c.var.db),
      maxGroups: ANALYTICS_LIMITS.maxGroups,
    });
    const source = await readInto(
      c.env.DB,
      {
        plan,
        metrics: Aggregation.metricsToRead(metrics),
        dimensions: new Set(['mediaType', ...query.groupBy, ...filterDimensions(query.filter)]),
        pushdown: requiredMatches(query.filter),
      },
      aggregation,
    );
    c.header('Switchboard-Query-Source', source);
    return c.json({
      results: aggregation.results().map(({ group, buckets }) => ({
        group,
        data: buckets.map(({ bucket, metrics: m }) => ({
          interval: formatInterval(plan.boundaries[bucket]!, plan.boundaries[bucket + 1]!),
          metrics: m,
        })),
      })),
    });
  },
);
