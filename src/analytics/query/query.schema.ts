import { z } from 'zod';
import {
  DIMENSION_INDEX,
  FILTER_DIMENSIONS,
  DIMENSIONS,
  GROUP_BY_DIMENSIONS,
  METRIC_NAMES,
  METRICS,
  NUMERIC,
  OBSERVED_METRIC_NAMES,
  type Dimension,
} from '../catalog';
import { ANALYTICS_LIMITS as L } from '../limits';
import { describeInput } from '../../http/validate';

function allowed(what: string, values: readonly string[]) {
  return (issue: { input?: unknown }) =>
    `Value [${describeInput(issue.input)}] is not valid for field type [${what}]. Allowable values are: ${values.join(', ')}`;
}

const dimension = z.enum(FILTER_DIMENSIONS as [Dimension, ...Dimension[]], { error: allowed('dimension', FILTER_DIMENSIONS) });
const groupByDimension = z.enum(GROUP_BY_DIMENSIONS as [Dimension, ...Dimension[]], {
  error: allowed('groupBy dimension', GROUP_BY_DIMENSIONS),
});
const NUMERIC_DIMENSIONS = DIMENSIONS.filter((_, i) => NUMERIC[i]);
const PROPERTY_TYPES = ['bool', 'integer', 'real', 'date', 'string', 'uuid'] as const;
const RANGED_PROPERTY_TYPES: readonly string[] = ['integer', 'real', 'date'];
const metric = z.enum(METRIC_NAMES as [string, ...string[]], { error: allowed('metric', METRIC_NAMES) });
const observedMetric = z.enum(OBSERVED_METRIC_NAMES as [string, ...string[]], { error: allowed('observed metric', OBSERVED_METRIC_NAMES) });
const TIMER_METRICS = METRICS.filter((m) => m.kind === 'timer').map((m) => m.name);
const timerMetric = z.enum(TIMER_METRICS as [string, ...string[]], { error: allowed('timer metric', TIMER_METRICS) });
const filterType = z.enum(['and', 'or'], { error: allowed('filter type', ['and', 'or']) });

const bound = z.number().refine(Number.isFinite, 'must be a finite number').optional();
const numericRange = z
  .strictObject({ gt: bound, gte: bound, lt: bound, lte: bound }, { error: 'A range is {gt, gte, lt, lte}, numbers' })
  .refine((r) => [r.gt, r.gte, r.lt, r.lte].some((b) => b !== undefined), 'range needs at least one of gt, gte, lt, lte');

const OPERATORS = ['matches', 'exists', 'notExists'] as const;
const operator = z.enum(OPERATORS, { error: allowed('operator', OPERATORS) }).default('matches');
/** The right-hand side of a dimension or property predicate: a value or a range for `matches`, nothing otherwise. */
const rightHandSide = {
  operator,
  value: z.string().max(L.maxStringLength).optional(),
  range: numericRange.optional(),
};

type RightHandSide = { operator: (typeof OPERATORS)[number]; value?: string; range?: unknown };

/** The rules both predicates share; `rangeRefused` says why this one takes no range (undefined: it does). */
function checkRightHandSide(p: RightHandSide, ctx: z.RefinementCtx, needs: string, rangeRefused: string | undefined): void {
  if (p.operator === 'matches' && p.value === undefined && p.range === undefined) {
    ctx.addIssue({ code: 'custom', path: ['value'], message: needs });
  }
  if (p.value !== undefined && p.range !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['range'], message: 'A predicate takes a value or a range, not both' });
  }
  if (p.operator !== 'matches' && (p.value !== undefined || p.range !== undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [p.value !== undefined ? 'value' : 'range'],
      message: `A ${p.operator} predicate takes no value or range`,
    });
  }
  if (p.range !== undefined && rangeRefused !== undefined) ctx.addIssue({ code: 'custom', path: ['range'], message: rangeRefused });
}

// Genesys: "Right hand side for dimension predicates" takes a range on numeric dimensions (agentRank, mediaCount…).
const dimensionPredicate = z
  .strictObject({ type: z.literal('dimension'), dimension, ...rightHandSide })
  .superRefine((p, ctx) =>
    checkRightHandSide(
      p,
      ctx,
      'A matches predicate needs a value (or a range, on a numeric dimension)',
      NUMERIC[DIMENSION_INDEX[p.dimension]]
        ? undefined
        : `range applies to numeric dimensions only (${NUMERIC_DIMENSIONS.join(', ')}); ${p.dimension} takes a value`,
    ),
  );

/** Genesys' property predicate (AnalyticsQueryPredicate): a segment property by name and type. */
const propertyPredicate = z
  .strictObject({
    type: z.literal('property'),
    property: z.string().min(1).max(L.maxStringLength),
    propertyType: z.enum(PROPERTY_TYPES, { error: allowed('propertyType', PROPERTY_TYPES) }),
    ...rightHandSide,
  })
  .superRefine((p, ctx) =>
    checkRightHandSide(
      p,
      ctx,
      'A matches property predicate needs a value or a range',
      RANGED_PROPERTY_TYPES.includes(p.propertyType)
        ? undefined
        : `range applies to properties of type ${RANGED_PROPERTY_TYPES.join(', ')} (dates as epoch ms)`,
    ),
  );

const metricPredicate = z.strictObject({
  type: z.literal('metric'),
  metric: observedMetric,
  operator: z.literal('matches', { error: 'A metric predicate takes operator "matches" (a range)' }).optional(),
  range: z
    .strictObject({ gt: bound, gte: bound, lt: bound, lte: bound }, { error: 'A metric predicate needs a range {gt, gte, lt, lte}' })
    .refine((r) => [r.gt, r.gte, r.lt, r.lte].some((b) => b !== undefined), 'range needs at least one of gt, gte, lt, lte'),
});

/**
 * Genesys lets `type` be inferred ("can usually be inferred"): a predicate naming a metric is a metric
 * predicate, one naming a property a property predicate, one naming a dimension a dimension predicate.
 */
const predicate = z.preprocess(
  (p) => {
    if (typeof p !== 'object' || p === null || Array.isArray(p) || 'type' in p) return p;
    const type =
      'metric' in p ? 'metric' : 'property' in p ? 'property' : 'dimension' in p ? 'dimension' : 'range' in p ? 'metric' : 'dimension';
    return { ...p, type };
  },
  z.discriminatedUnion('type', [dimensionPredicate, metricPredicate, propertyPredicate], {
    error: allowed('predicate type', ['dimension', 'metric', 'property']),
  }),
);

const clause = z.strictObject({ type: filterType, predicates: z.array(predicate).min(1).max(L.maxPredicates) });

const filter = z
  .strictObject({
    type: filterType,
    predicates: z.array(predicate).max(L.maxPredicates).default([]),
    clauses: z.array(clause).max(L.maxPredicates).default([]),
  })
  .refine((f) => f.predicates.length + f.clauses.reduce((n, c) => n + c.predicates.length, 0) <= L.maxPredicates, {
    message: `A filter may hold at most ${L.maxPredicates} predicates in all`,
  });

function unique<T>(items: T[]): boolean {
  return new Set(items).size === items.length;
}

const view = z.strictObject({
  target: timerMetric,
  name: z.string().min(1).max(100),
  function: z.literal('rangeBound', { error: 'The only view function is "rangeBound"' }),
  range: z
    .object({ gte: bound, lt: bound }, { error: 'A rangeBound view needs a range {gte, lt}' })
    .refine((r) => r.gte !== undefined || r.lt !== undefined, 'range needs gte, lt or both')
    .refine((r) => r.gte === undefined || r.lt === undefined || r.gte < r.lt, 'range.gte must be below range.lt'),
});

const SORT_FUNCTIONS = ['sum', 'count', 'max', 'min', 'average'] as const;
const sortMetric = z.strictObject({
  name: observedMetric,
  function: z.enum(SORT_FUNCTIONS, { error: allowed('sort function', SORT_FUNCTIONS) }),
});

/** Strict at every level: a key this service does not read (a typo like `groupby`) is a 400 naming it, never ignored. */
const queryFields = {
  interval: z.string({ error: 'interval is required: <start>/<end> in ISO 8601' }).max(200),
  granularity: z.string().max(100).optional(),
  timeZone: z.string().max(100).optional(),
  groupBy: z
    .array(groupByDimension)
    .max(L.maxGroupBy, { error: `At most ${L.maxGroupBy} groupBy dimensions` })
    .refine(unique, 'groupBy names a dimension twice')
    .default([]),
  metrics: z.array(metric).min(1).max(L.maxMetrics).refine(unique, 'metrics names a metric twice').optional(),
  filter: filter.optional(),
  views: z
    .array(view)
    .max(L.maxViews, { error: `At most ${L.maxViews} views` })
    .default([]),
  queryType: z.enum(['groupBy', 'topN', 'bottomN'], { error: allowed('queryType', ['groupBy', 'topN', 'bottomN']) }).default('groupBy'),
  sortMetric: sortMetric.optional(),
  limit: z.number().int().min(1).max(L.maxLimit).optional(),
  // A multi-valued dimension's list as one group value, joined by commas, instead of a group per value.
  flattenMultivaluedDimensions: z.boolean().optional(),
  // Accepted for Genesys compatibility: time here is already event time (each metric's emit).
  alternateTimeDimension: z.literal('eventTime', { error: 'alternateTimeDimension may only be "eventTime"' }).optional(),
};

type QueryFields = z.output<z.ZodObject<typeof queryFields>>;

/** The rules across fields, shared by the query and the job. */
function checkQuery(q: QueryFields, ctx: z.RefinementCtx): void {
  const names = new Set<string>();
  q.views.forEach((v, i) => {
    if (METRIC_NAMES.includes(v.name))
      ctx.addIssue({ code: 'custom', path: ['views', i, 'name'], message: `A view may not be named like the metric ${v.name}` });
    if (names.has(v.name)) ctx.addIssue({ code: 'custom', path: ['views', i, 'name'], message: `Two views are named ${v.name}` });
    names.add(v.name);
  });
  const ranked = q.queryType !== 'groupBy';
  if (ranked && !q.sortMetric)
    ctx.addIssue({ code: 'custom', path: ['sortMetric'], message: `queryType ${q.queryType} needs a sortMetric {name, function}` });
  if (!ranked && q.sortMetric)
    ctx.addIssue({ code: 'custom', path: ['sortMetric'], message: 'sortMetric applies only to queryType topN or bottomN' });
  if (!ranked && q.limit !== undefined)
    ctx.addIssue({ code: 'custom', path: ['limit'], message: 'limit applies only to queryType topN or bottomN' });
}

export const aggregateQuerySchema = z.strictObject(queryFields).superRefine(checkQuery);

export type AggregateQuery = z.output<typeof aggregateQuerySchema>;

/**
 * An asynchronous aggregate job's body (Genesys' ConversationAsyncAggregationQuery): the query, and
 * how many groups a page of results holds at most.
 */
export const aggregateJobSchema = z
  .strictObject({
    ...queryFields,
    pageSize: z
      .number()
      .int()
      .min(1)
      .max(L.maxJobPageSize, { error: `pageSize may be at most ${L.maxJobPageSize}` })
      .default(L.defaultJobPageSize),
  })
  .superRefine(checkQuery);

export type AggregateJobQuery = z.output<typeof aggregateJobSchema>;
