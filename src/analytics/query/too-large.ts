import { DomainError } from '../../errors';

/*
 * The 413s of a query that asks for more than one Worker may compute. Each says which bound was
 * passed and how to narrow the query. Genesys answers such queries through asynchronous aggregate
 * jobs (`…/aggregates/jobs`), which this service does not offer yet.
 */

const NARROW = 'Narrow the query: a shorter interval, a coarser granularity, fewer groupBy dimensions or metrics, or a filter.';
const NO_JOBS = 'Asynchronous aggregate jobs are not available yet.';

export function tooManyCells(max: number): DomainError {
  return new DomainError(
    'too-large',
    `The answer would hold more than ${max.toLocaleString('en-US')} stats entries (groups × buckets × metrics). ${NARROW} ${NO_JOBS}`,
  );
}

export function answerTooLarge(maxBytes: number): DomainError {
  return new DomainError('too-large', `The answer would be larger than ${maxBytes.toLocaleString('en-US')} bytes. ${NARROW} ${NO_JOBS}`);
}

export function tooManyRawConversations(max: number): DomainError {
  return new DomainError(
    'too-large',
    `The query would read more than ${max.toLocaleString('en-US')} conversations from the raw observations ` +
      '(they are read when the rollups cannot answer: dimensions other than mediaType, direction, queueId and userId, ' +
      `buckets not aligned to 15 minutes, userId in buckets under an hour, metric predicates, views). ${NARROW} ${NO_JOBS}`,
  );
}

export function tooManyGroupsPerObservation(max: number): DomainError {
  return new DomainError(
    'too-large',
    `An observation falls in more than ${max.toLocaleString('en-US')} groups (one per value of each multi-valued groupBy dimension, ` +
      'and every combination of them). Group by fewer multi-valued dimensions, or set flattenMultivaluedDimensions to true.',
  );
}
