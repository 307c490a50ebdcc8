import { APPLIES, DIMENSION_INDEX, type Dimension } from '../catalog';
import type { DimValues } from '../ingest/to-observations';

export type FilterType = 'and' | 'or';
export type PredicateOperator = 'matches' | 'exists' | 'notExists';

export interface DimensionPredicate {
  dimension: Dimension;
  operator: PredicateOperator;
  value?: string;
}

export interface Clause {
  type: FilterType;
  predicates: DimensionPredicate[];
}

export interface Filter {
  type: FilterType;
  predicates: DimensionPredicate[];
  clauses: Clause[];
}

/** Decides whether an observation (its metric, its dimension values) passes the filter. */
export type CompiledFilter = (metric: number, dims: DimValues) => boolean;

/**
 * Compiles a filter into a predicate over observations. Seed rule 2 for every operator: a
 * predicate on a dimension that does not apply to the metric is false for it (so a userId filter
 * removes nOffered, and `notExists userId` does not bring it back). In an `or`, such a branch is
 * simply false, so the metric is returned when any branch can apply to it.
 *
 * `metric` is the metric whose applicability counts: the observation's own, or oServiceLevel when
 * the observation is one of its components.
 */
export function compileFilter(filter: Filter | undefined): CompiledFilter {
  if (!filter || (filter.predicates.length === 0 && filter.clauses.length === 0)) return () => true;
  const parts: CompiledFilter[] = [
    ...filter.predicates.map(compilePredicate),
    ...filter.clauses.map((clause) => combine(clause.type, clause.predicates.map(compilePredicate))),
  ];
  return combine(filter.type, parts);
}

function combine(type: FilterType, parts: CompiledFilter[]): CompiledFilter {
  if (parts.length === 0) return () => true;
  if (parts.length === 1) return parts[0]!;
  return type === 'and'
    ? (metric, dims) => parts.every((p) => p(metric, dims))
    : (metric, dims) => parts.some((p) => p(metric, dims));
}

function compilePredicate(p: DimensionPredicate): CompiledFilter {
  const index = DIMENSION_INDEX[p.dimension];
  switch (p.operator) {
    case 'matches':
      return (metric, dims) => APPLIES[metric]![index]! && dims[index] === p.value;
    case 'exists':
      return (metric, dims) => APPLIES[metric]![index]! && dims[index] !== undefined;
    case 'notExists':
      return (metric, dims) => APPLIES[metric]![index]! && dims[index] === undefined;
  }
}

/** Every dimension the filter reads. */
export function filterDimensions(filter: Filter | undefined): Set<Dimension> {
  const out = new Set<Dimension>();
  if (!filter) return out;
  for (const p of filter.predicates) out.add(p.dimension);
  for (const c of filter.clauses) for (const p of c.predicates) out.add(p.dimension);
  return out;
}

/**
 * When the filter is a plain conjunction of `matches` predicates, the (dimension, value) pairs it
 * requires: a store may apply them before reading (equivalent, by rule 2, to evaluating the filter).
 */
export function requiredMatches(filter: Filter | undefined): { dimension: Dimension; value: string }[] | undefined {
  if (!filter) return [];
  const conjunctive = filter.type === 'and' || filter.predicates.length + filter.clauses.length <= 1;
  if (!conjunctive || filter.clauses.length > 0) return undefined;
  if (filter.predicates.some((p) => p.operator !== 'matches')) return undefined;
  return filter.predicates.map((p) => ({ dimension: p.dimension, value: p.value! }));
}
