import { APPLIES, DIMENSION_INDEX, METRIC_NAMES } from '../../src/analytics/catalog';
import { USER_METRICS } from '../../src/analytics/rollups';

/**
 * The metrics a per-user rollup read can answer: the agent metrics agg_user keeps (its columns) and
 * those a userId never applies to, but for the callback service level and the target. Agent metrics added by issue 23 are not kept per user, so a query
 * naming no metrics (every one) by user reads the raw observations; read-path tests that mean to
 * exercise agg_user name these.
 */
export const KEPT_PER_USER: string[] = METRIC_NAMES.filter(
  (name, m) =>
    USER_METRICS.some((p) => p.metric === m) ||
    // The callback service level (and the target, which appears where it does) needs callback metrics agents emit.
    (!APPLIES[m]![DIMENSION_INDEX.userId] && name !== 'oCallbackServiceLevel' && name !== 'oServiceTarget'),
);
