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
  /**
   * Most groups one observation may fall in: a group per value of each multi-valued groupBy dimension,
   * every combination (100 divisions × 100 skills would be 10,000 additions per observation). Beyond: 413.
   */
  maxGroupsPerObservation: 100,
  /**
   * Most stats entries one query may compute: metric cells (group × bucket × metric, view targets and
   * the sort metric included), oServiceLevel entries and view entries. Counted as they are created,
   * so a query is stopped (413) long before its answer exists. About 80 bytes of answer each (bench
   * query c: 23,509 cells, 1.9 MB) and ~60 bytes of Worker memory: the answer stays near maxAnswerBytes
   * and a query's memory near 30 MB, so a few at once fit a deployed Worker's 128 MB.
   */
  maxAnswerCells: 100_000,
  /** Largest answer body; the writer stops (413) as soon as it would pass it (long group values make bytes outgrow cells). */
  maxAnswerBytes: 16 * 1024 * 1024,
  /**
   * Most conversations one query may read from the raw rows (queries the rollups cannot answer):
   * decoding and adding one costs ~20 µs in workerd on the 2-core machine (100,000 in ~2 s, measured by
   * test/analytics/query-bounds.test.ts), so a raw query stays within a few seconds of CPU, read in pages
   * of at most 500 rows; beyond it 413 asking to narrow the query.
   */
  maxRawConversations: 100_000,
  /**
   * Most bytes of encoded observations (the raw rows' `data`) one query may read, and most in one
   * page of the read: conversations alone bound neither, as one conversation may carry tens of
   * thousands of observations. Both counted before decoding (length(data) in SQL); the whole query's
   * estimated before its first page, so a query beyond it is refused (413) without reading it. A
   * simulated conversation holds ~570 bytes: 64 MiB is ~115,000 of them, so maxRawConversations binds
   * first for ordinary records. A page holds at most rawPageBytes (one row, if a row alone is larger;
   * the largest row of each span class sets its page size), twice that as hex text while it is decoded.
   */
  maxRawBytes: 64 * 1024 * 1024,
  rawPageBytes: 1024 * 1024,
  /**
   * Most characters of rollup cells (the packed JSON text D1 returns) one query may read, over all its
   * partitions. Measured in D1 before anything is sent (rollup-sql.ts): a read beyond it comes back
   * as its size alone and the query is refused (413). The bench's widest ordinary reads are under 2 MB
   * (queries f and g at 1,000,000 conversations); the Worker holds a result about twice as bytes of
   * heap while it adds it. A query over several partitions gives each an equal share first; those past
   * their share are read again with what the others left.
   */
  maxRollupReadBytes: 16 * 1024 * 1024,
  /**
   * A synchronous query's rollup reads past this many characters of cells are made only in the isolate's
   * turn for heavy reads, the raw-path queries' (query/query-gate.ts): read within it first, and read again
   * once the turn is the query's. So one isolate holds at most one read of up to maxRollupReadBytes (~3
   * times that of heap while it is added: the bench's w9, 15.8 MiB of cells, peaked at 46 MiB) besides
   * reads of at most this size. The bench's queries a–i read under 2 MB.
   */
  rollupReadAloneBytes: 4 * 1024 * 1024,
  /**
   * Raw-path queries one isolate computes at once, and how many may wait for their turn
   * (query/query-gate.ts); one more: 429 with Retry-After. Rollup queries take a turn only for a read past
   * rollupReadAloneBytes.
   */
  rawQueriesAtOnce: 1,
  rawQueriesWaiting: 4,
  /**
   * Partitions (D1 databases) whose raw rows one query reads at once: each holds its current page (up to
   * rawPageBytes, twice that as hex while decoded) until it is added, so this many pages bound a raw
   * fan-out's memory however many partitions its interval reaches (a query over 732 days of two-week
   * periods: ~50). The others wait their turn. Rollup reads and the small statements before a raw read
   * go to every partition at once: one round trip.
   */
  partitionsAtOnce: 4,
  /**
   * Asynchronous aggregate jobs (analytics/jobs). A job answers its query in units, each within the
   * bounds below (a unit too large is split: into runs of its buckets, then into shares of its
   * groups), so an export has no group limit; its results are kept in pages of at most pageSize
   * groups (default below) and jobPageBytes bytes, and all of them together at most jobResultBytes.
   */
  jobUnitCells: 25_000,
  jobUnitBytes: 4 * 1024 * 1024,
  /** A unit split into this many shares of its groups and still too large fails the job. */
  maxJobGroupShares: 1_024,
  defaultJobPageSize: 1_000,
  maxJobPageSize: 10_000,
  jobPageBytes: 1024 * 1024,
  jobResultBytes: 64 * 1024 * 1024,
  /** Jobs not yet finished at once; one more: 429. */
  maxUnfinishedJobs: 10,
  /** A finished job and its results are kept this long after it finished (an unfinished one, after it was submitted). */
  jobTtlMs: 24 * 60 * 60 * 1000,
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
  /** Ingest: length of a list of values read as a dimension (divisionIds, requestedRoutingSkillIds, proposedAgents…). */
  maxListLength: 100,
  /** Ingest: largest metric value (ms for timers): about 31 years. */
  maxMetricValue: 1e12,
  /** Ingest: emit dates must lie between these years. */
  minYear: 1971,
  maxYear: 2999,
} as const;
