import { Hono } from 'hono';
import { ApiError } from '../../http/api-error';
import { requirePermission } from '../../http/auth';
import type { AppEnv } from '../../http/context';
import { jsonBody } from '../../http/json-body';
import { validJson } from '../../http/validate';
import { ANALYTICS_LIMITS } from '../limits';
import { analyticsStore, readablePartitions } from '../partitions/partitions';
import { DEFAULT_SERVICE_LEVEL, getServiceLevelSettings } from '../settings/service-level.settings';
import { Aggregation } from './aggregate';
import { formatInterval } from './interval';
import { prepareQuery } from './prepare';
import { aggregateQuerySchema } from './query.schema';
import { readInto, readsRaw } from './query.store';
import { heavyQueries } from './query-gate';
import { answerJson } from './results-json';

export const queryRoutes = new Hono<AppEnv>().post(
  '/api/v2/analytics/conversations/aggregates/query',
  requirePermission('analytics:conversationAggregate:view'),
  jsonBody(ANALYTICS_LIMITS.queryBodyBytes),
  validJson(aggregateQuerySchema),
  async (c) => {
    const query = c.req.valid('json');
    const store = analyticsStore(c.env);
    const { plan, spec, read: readSpec, needsSettings } = prepareQuery(query);
    // Read the settings only when needed, alongside the observations.
    const settings = needsSettings ? getServiceLevelSettings(c.var.db) : Promise.resolve(DEFAULT_SERVICE_LEVEL);
    settings.catch(() => {}); // awaited below; this only keeps a failure before then from being "unhandled"
    // A raw-path query computes only in its turn (query-gate.ts), from its read to its written answer. A
    // rollup query takes one too when it has to read raw rows after all (a cube lacking earlier
    // conversations) or many cells (more than rollupReadAloneBytes).
    let leave: (() => void) | undefined;
    const takeTurn = async () => {
      leave ??= await heavyQueries.enter();
      if (!leave) {
        throw new ApiError(
          429,
          'too.many.requests',
          'Too many large queries (reading the raw observations, or many stored cells) are running or waiting here; retry shortly, or narrow the query.',
          [],
          { 'Retry-After': '2' },
        );
      }
    };
    if (readsRaw(readSpec)) await takeTurn();
    try {
      const aggregation = new Aggregation(spec);
      const { source, partitions } = await readInto(readablePartitions(store, Date.now()), readSpec, aggregation, { takeTurn });
      // With several partitions configured, the header also names those that answered (`raw partitions=A2026H1,A2026H2`).
      c.header('Switchboard-Query-Source', store.partitions.length > 1 ? `${source} partitions=${partitions.join(',')}` : source);
      const intervalOf = (bucket: number) => formatInterval(plan.boundaries[bucket]!, plan.boundaries[bucket + 1]!);
      const body = await answerJson(aggregation, await settings, intervalOf, ANALYTICS_LIMITS.maxAnswerBytes);
      return c.body(body, 200, { 'Content-Type': 'application/json' });
    } finally {
      leave?.();
    }
  },
);
