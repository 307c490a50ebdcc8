import type { Dimension } from '../catalog';
import type { Match } from './filter';
import type { BucketPlan } from './interval';

/** What a query reads (prepare.ts makes it from the request): the read side of the plan, for query.store.ts and rollup-sql.ts. */
export interface ReadSpec {
  plan: BucketPlan;
  /** Observed metrics to read; undefined = all. */
  metrics?: number[];
  /** Dimensions the aggregation looks at (mediaType, groupBy, filter). */
  dimensions: Set<Dimension>;
  /** Conjunctive `matches` predicates that may be applied while reading, when the filter is that simple. */
  pushdown?: Match[];
  /** Disjunctions of `matches` every counted observation satisfies (filter.ts requiredAnyOf): cells failing one may be skipped. */
  anyOf?: Match[][];
  /** Metric predicates and views judge single values: only raw observations have them. */
  needsValues: boolean;
  /** Most conversations the raw path may read; one more throws 413. Default: ANALYTICS_LIMITS.maxRawConversations. */
  maxRawConversations?: number;
  /** Most bytes of encoded observations the raw path may read; more throws 413. Default: ANALYTICS_LIMITS.maxRawBytes. */
  maxRawBytes?: number;
  /** Most encoded bytes in one raw page (a row larger comes alone). Default: ANALYTICS_LIMITS.rawPageBytes. */
  rawPageBytes?: number;
  /** Most characters of rollup cells the query may read. Default: ANALYTICS_LIMITS.maxRollupReadBytes. */
  maxRollupReadBytes?: number;
  /** Most characters of rollup cells read before the isolate's turn is needed. Default: ANALYTICS_LIMITS.rollupReadAloneBytes. */
  rollupReadAloneBytes?: number;
  /** Most partitions whose raw rows are read at once. Default: ANALYTICS_LIMITS.partitionsAtOnce. */
  partitionsAtOnce?: number;
}
