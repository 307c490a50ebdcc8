import { DomainError, type DomainErrorKind } from '../../errors';

/*
 * The refusals of a query that asks for more than one Worker may compute at once. Each says which
 * bound was passed and how to narrow the query. Most also say how an asynchronous aggregate job
 * (`…/aggregates/jobs`, analytics/jobs) gets the whole answer: a job answers in parts, each within
 * these bounds, and `splits` tells it which parts help.
 */

const NARROW = 'Narrow the query: a shorter interval, a coarser granularity, fewer groupBy dimensions or metrics, or a filter.';
const BY_JOB =
  'Or submit it as an asynchronous aggregate job (POST /api/v2/analytics/conversations/aggregates/jobs), which answers in pages.';

/**
 * A bound a smaller part of the query would stay within: `time` — fewer buckets at once (a shorter
 * interval reads fewer conversations and holds fewer cells); `any` — fewer buckets or fewer groups.
 */
export class QueryTooLarge extends DomainError {
  /**
   * How much of what it read the read had added when a bound on its answer (entries, groups) stopped
   * it, 0–1, when known (raw rows: conversations; rollup rows: characters of cells): a job splits such a part into about 1/progress parts at once rather than in
   * halves, each of which would read its rows again only to be split once more.
   */
  progress?: number;

  constructor(
    kind: DomainErrorKind,
    message: string,
    readonly splits: 'time' | 'any',
    field?: string,
  ) {
    super(kind, message, field);
  }
}

export function tooManyCells(max: number): DomainError {
  return new QueryTooLarge(
    'too-large',
    `The answer would hold more than ${max.toLocaleString('en-US')} stats entries (groups × buckets × metrics). ${NARROW} ${BY_JOB}`,
    'any',
  );
}

export function tooManyGroups(max: number): DomainError {
  return new QueryTooLarge(
    'invalid',
    `The query produces more than ${max.toLocaleString('en-US')} groups; narrow the filter or group by fewer dimensions. ${BY_JOB}`,
    'any',
    'groupBy',
  );
}

export function answerTooLarge(maxBytes: number): DomainError {
  return new QueryTooLarge(
    'too-large',
    `The answer would be larger than ${maxBytes.toLocaleString('en-US')} bytes. ${NARROW} ${BY_JOB}`,
    'any',
  );
}

/** A rollup read past maxRollupReadBytes: fewer buckets at once read fewer cells (more groups come from the same rows). */
export function tooManyRollupBytes(maxBytes: number, bytes: number): QueryTooLarge {
  const err = new QueryTooLarge(
    'too-large',
    `The query would read about ${mib(bytes)} of stored cells, more than the ${mib(maxBytes)} one query may read. ${NARROW} ${BY_JOB}`,
    'time',
  );
  // The share of it that would fit: a job cuts the part into about 2/progress runs of buckets.
  err.progress = Math.min(1, maxBytes / bytes);
  return err;
}

const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

export function tooManyRawConversations(max: number): DomainError {
  return new QueryTooLarge(
    'too-large',
    `The query would read more than ${max.toLocaleString('en-US')} conversations from the raw observations ` +
      '(they are read when the rollups cannot answer: two dimensions other than mediaType, direction, queueId and userId ' +
      'together or one of them with direction, queueId or userId, ids such as conversationId, buckets not aligned to 15 ' +
      `minutes (to hours for the dimensions beyond those four), metric predicates, views). ${NARROW} ${BY_JOB}`,
    'time',
  );
}

export function tooManyRawBytes(maxBytes: number): DomainError {
  return new QueryTooLarge(
    'too-large',
    `The query would read more than ${maxBytes.toLocaleString('en-US')} bytes of raw observations ` +
      '(conversations carrying many observations each; they are read when the rollups cannot answer). ' +
      `${NARROW} ${BY_JOB}`,
    'time',
  );
}

export function tooManyGroupsPerObservation(max: number): DomainError {
  return new DomainError(
    'too-large',
    `An observation falls in more than ${max.toLocaleString('en-US')} groups (one per value of each multi-valued groupBy dimension, ` +
      'and every combination of them). Group by fewer multi-valued dimensions, or set flattenMultivaluedDimensions to true.',
  );
}
