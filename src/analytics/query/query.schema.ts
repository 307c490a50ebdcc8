import { z } from 'zod';
import { DIMENSIONS, METRIC_NAMES } from '../catalog';
import { ANALYTICS_LIMITS as L } from '../limits';

function allowed(what: string, values: readonly string[]) {
  return (issue: { input?: unknown }) =>
    `Value [${String(issue.input)}] is not valid for field type [${what}]. Allowable values are: ${values.join(', ')}`;
}

const dimension = z.enum(DIMENSIONS, { error: allowed('dimension', DIMENSIONS) });
const metric = z.enum(METRIC_NAMES as [string, ...string[]], { error: allowed('metric', METRIC_NAMES) });
const filterType = z.enum(['and', 'or'], { error: allowed('filter type', ['and', 'or']) });

const predicate = z
  .object({
    type: z.literal('dimension', { error: 'Only dimension predicates are supported: type must be "dimension" or absent' }).optional(),
    dimension,
    operator: z.enum(['matches', 'exists', 'notExists'], { error: allowed('operator', ['matches', 'exists', 'notExists']) }).default('matches'),
    value: z.string().max(L.maxStringLength).optional(),
  })
  .superRefine((p, ctx) => {
    if (p.operator === 'matches' && p.value === undefined) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: 'A matches predicate needs a value' });
    }
    if (p.operator !== 'matches' && p.value !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `A ${p.operator} predicate takes no value` });
    }
  });

const clause = z.object({ type: filterType, predicates: z.array(predicate).min(1).max(L.maxPredicates) });

const filter = z
  .object({
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

export const aggregateQuerySchema = z.object({
  interval: z.string({ error: 'interval is required: <start>/<end> in ISO 8601' }).max(200),
  granularity: z.string().max(100).optional(),
  timeZone: z.string().max(100).optional(),
  groupBy: z
    .array(dimension)
    .max(L.maxGroupBy, { error: `At most ${L.maxGroupBy} groupBy dimensions` })
    .refine(unique, 'groupBy names a dimension twice')
    .default([]),
  metrics: z
    .array(metric)
    .min(1)
    .max(L.maxMetrics)
    .refine(unique, 'metrics names a metric twice')
    .optional(),
  filter: filter.optional(),
});

export type AggregateQuery = z.output<typeof aggregateQuerySchema>;
