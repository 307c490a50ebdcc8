/** Every limit of the analytics API, in one place (the README's limits table mirrors this). */
export const ANALYTICS_LIMITS = {
  /** Longest query interval. */
  maxIntervalDays: 732,
  /** Most buckets one query may produce (interval / granularity). */
  maxBuckets: 20_000,
  /** Finest granularity. */
  minGranularityMs: 60_000,
  /** Most groupBy dimensions. */
  maxGroupBy: 8,
  /** Most metrics named in one query. */
  maxMetrics: 100,
  /** Most predicates in a filter (all clauses together). */
  maxPredicates: 100,
  /** Most views in one query (Genesys' documented limit). */
  maxViews: 10,
  /** Largest topN/bottomN limit. */
  maxLimit: 10_000,
  /** Most groups in one answer; a query that would produce more gets 400 asking to narrow it. */
  maxGroups: 50_000,
  /** Query body size. */
  queryBodyBytes: 256 * 1024,
  /** Ingest: conversations per request and body size. */
  maxConversationsPerIngest: 1_000,
  ingestBodyBytes: 5 * 1024 * 1024,
  /** Ingest: length of any string field and of arrays inside a record. */
  maxStringLength: 256,
  maxParticipants: 100,
  maxSessions: 100,
  maxSegments: 1_000,
  maxMetricsPerSession: 1_000,
  /** Ingest: largest metric value (ms for timers): about 31 years. */
  maxMetricValue: 1e12,
  /** Ingest: emit dates must lie between these years. */
  minYear: 1971,
  maxYear: 2999,
} as const;
