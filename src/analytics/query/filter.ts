import { APPLIES, DIMENSION_INDEX, METRIC_INDEX, MULTI_VALUED, type Dimension } from '../catalog';
import type { DimValue, DimValues } from '../ingest/to-observations';

export type FilterType = 'and' | 'or';
export type PredicateOperator = 'matches' | 'exists' | 'notExists';

export interface DimensionPredicate {
  type: 'dimension';
  dimension: Dimension;
  operator: PredicateOperator;
  value?: string;
  /** `matches` on a numeric dimension: a value in this range (the schema allows it on numeric dimensions only). */
  range?: MetricRange;
}

export interface MetricRange {
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

export interface MetricPredicate {
  type: 'metric';
  metric: string;
  range: MetricRange;
}

/** A segment property's type, as Genesys' records and predicates name it. */
export type PropertyType = 'bool' | 'integer' | 'real' | 'date' | 'string' | 'uuid';

/**
 * A predicate on the segment properties (`properties[]` of the segment current at the emit): one named
 * `property` exists, or its value matches `value` (compared as `propertyType` says) or lies in `range`
 * (integer, real; date as epoch ms).
 */
export interface PropertyPredicate {
  type: 'property';
  property: string;
  propertyType: PropertyType;
  operator: PredicateOperator;
  value?: string;
  range?: MetricRange;
}

export type Predicate = DimensionPredicate | MetricPredicate | PropertyPredicate;

export interface Clause {
  type: FilterType;
  predicates: Predicate[];
}

export interface Filter {
  type: FilterType;
  predicates: Predicate[];
  clauses: Clause[];
}

/**
 * Decides whether an observation passes the filter. `applies` is the metric whose applicability
 * counts for dimension predicates (the observation's own, or oServiceLevel for its components);
 * `metric` and `value` are the observation's own, for metric predicates.
 */
export type CompiledFilter = (applies: number, metric: number, dims: DimValues, value: number) => boolean;

/** Three-valued: a metric predicate has no opinion on observations of other metrics. */
const FALSE = 0;
const TRUE = 1;
const NO_OPINION = 2;
type Verdict = typeof FALSE | typeof TRUE | typeof NO_OPINION;
type Part = (applies: number, metric: number, dims: DimValues, value: number) => Verdict;

/**
 * Compiles a filter (semantics in README, "Filter semantics in full"):
 * - a dimension predicate is false for a metric its dimension never applies to (seed rule 2), for
 *   every operator, so a userId filter removes nOffered and `notExists userId` does not bring it back;
 * - a metric predicate judges only observations of its metric (value in range) and has no opinion
 *   on the others, so it is left out of the `and`/`or` around it; with no opinion at the top the
 *   observation is kept.
 */
export function compileFilter(filter: Filter | undefined): CompiledFilter {
  if (!filter || (filter.predicates.length === 0 && filter.clauses.length === 0)) return () => true;
  const top = combine(filter.type, [
    ...filter.predicates.map(compilePredicate),
    ...filter.clauses.map((clause) => combine(clause.type, clause.predicates.map(compilePredicate))),
  ]);
  return (applies, metric, dims, value) => top(applies, metric, dims, value) !== FALSE;
}

function combine(type: FilterType, parts: Part[]): Part {
  if (parts.length === 1) return parts[0]!;
  const decisive = type === 'and' ? FALSE : TRUE;
  const other = type === 'and' ? TRUE : FALSE;
  return (applies, metric, dims, value) => {
    let verdict: Verdict = NO_OPINION;
    for (const part of parts) {
      const v = part(applies, metric, dims, value);
      if (v === decisive) return decisive;
      if (v === other) verdict = other;
    }
    return verdict;
  };
}

const PROPERTIES = DIMENSION_INDEX.segmentProperty;

/** A property's stored value (`name NUL value`) as the predicate's type compares it: a number, or the text. */
function propertyTest(p: PropertyPredicate): (value: string) => boolean {
  const numeric = p.propertyType === 'integer' || p.propertyType === 'real' || p.propertyType === 'date';
  const asNumber = (v: string) => (p.propertyType === 'date' ? Date.parse(v) : v.trim() === '' ? Number.NaN : Number(v));
  if (p.range) {
    const { gt, gte, lt, lte } = p.range;
    return (v) => {
      const n = asNumber(v);
      return (
        Number.isFinite(n) &&
        (gt === undefined || n > gt) &&
        (gte === undefined || n >= gte) &&
        (lt === undefined || n < lt) &&
        (lte === undefined || n <= lte)
      );
    };
  }
  if (p.value === undefined) return () => true;
  const wanted = p.value;
  if (numeric) {
    const n = asNumber(wanted);
    return (v) => asNumber(v) === n;
  }
  // bool: "true"/"True" alike; string and uuid: exact text.
  return p.propertyType === 'bool' ? (v) => v.toLowerCase() === wanted.toLowerCase() : (v) => v === wanted;
}

function compileProperty(p: PropertyPredicate): Part {
  const prefix = `${p.property}\u0000`;
  const test = propertyTest(p);
  const found = (dims: DimValues): boolean => {
    const stored = dims[PROPERTIES] as readonly string[] | undefined;
    return stored?.some((entry) => entry.startsWith(prefix) && (p.operator !== 'matches' || test(entry.slice(prefix.length)))) === true;
  };
  return (_applies, _m, dims) => ((p.operator === 'notExists' ? !found(dims) : found(dims)) ? TRUE : FALSE);
}

function compilePredicate(p: Predicate): Part {
  if (p.type === 'property') return compileProperty(p);
  if (p.type === 'metric') {
    const target = METRIC_INDEX.get(p.metric)!;
    const { gt, gte, lt, lte } = p.range;
    return (_applies, metric, _dims, value) => {
      if (metric !== target) return NO_OPINION;
      const inRange =
        (gt === undefined || value > gt) &&
        (gte === undefined || value >= gte) &&
        (lt === undefined || value < lt) &&
        (lte === undefined || value <= lte);
      return inRange ? TRUE : FALSE;
    };
  }
  const index = DIMENSION_INDEX[p.dimension];
  const truth = (b: boolean): Verdict => (b ? TRUE : FALSE);
  // A multi-valued dimension matches when any of its values does (docs/catalogue.md).
  const test = p.range ? inRange(p.range) : (v: string) => v === p.value;
  const matches = (v: DimValue | undefined) => v !== undefined && (typeof v === 'string' ? test(v) : v.some(test));
  switch (p.operator) {
    case 'matches':
      return (applies, _m, dims) => truth(APPLIES[applies]![index]! && matches(dims[index]));
    case 'exists':
      return (applies, _m, dims) => truth(APPLIES[applies]![index]! && dims[index] !== undefined);
    case 'notExists':
      return (applies, _m, dims) => truth(APPLIES[applies]![index]! && dims[index] === undefined);
  }
}

/** A numeric dimension's value (decimal text) in the range. */
function inRange({ gt, gte, lt, lte }: MetricRange): (v: string) => boolean {
  return (v) => {
    const n = Number(v);
    return (
      v !== '' &&
      Number.isFinite(n) &&
      (gt === undefined || n > gt) &&
      (gte === undefined || n >= gte) &&
      (lt === undefined || n < lt) &&
      (lte === undefined || n <= lte)
    );
  };
}

function allPredicates(filter: Filter | undefined): Predicate[] {
  if (!filter) return [];
  return [...filter.predicates, ...filter.clauses.flatMap((c) => c.predicates)];
}

/** Every dimension the filter reads. */
export function filterDimensions(filter: Filter | undefined): Set<Dimension> {
  const out = new Set<Dimension>();
  for (const p of allPredicates(filter)) {
    if (p.type === 'dimension') out.add(p.dimension);
    // Properties are read from the raw observations only.
    if (p.type === 'property') out.add('segmentProperty');
  }
  return out;
}

/** Whether the filter judges single values (then only raw observations can answer it). */
export function hasMetricPredicates(filter: Filter | undefined): boolean {
  return allPredicates(filter).some((p) => p.type === 'metric');
}

/** A `matches` predicate a store can apply in SQL: one value of a single-valued dimension. */
export interface Match {
  dimension: Dimension;
  value: string;
}

function pushable(p: Predicate): p is DimensionPredicate & { value: string } {
  // A multi-valued dimension matches when any element does; its stored value (the cube's) is the
  // whole list, which no equality in SQL can test: the Aggregation applies it.
  return p.type === 'dimension' && p.operator === 'matches' && p.range === undefined && !MULTI_VALUED[DIMENSION_INDEX[p.dimension]];
}

const match = (p: DimensionPredicate & { value: string }): Match => ({ dimension: p.dimension, value: p.value });

/** A filter of type `and`, or of one predicate or clause, which is the same. */
function conjunctive(filter: Filter): boolean {
  return filter.type === 'and' || filter.predicates.length + filter.clauses.length <= 1;
}

/**
 * The (dimension, value) pairs of the `matches` predicates every counted observation satisfies: those at the
 * top of a conjunctive filter (type `and`, or a lone predicate), beside whatever else it asks (other
 * predicates, clauses), which the Aggregation still evaluates. A store may apply them before reading
 * (equivalent, by rule 2, to evaluating them): bench query h, `usedRouting` and (`teamId` or `wrapUpCode`),
 * reads only the cells of its `usedRouting`.
 */
export function requiredMatches(filter: Filter | undefined): Match[] {
  if (!filter || !conjunctive(filter)) return [];
  return filter.predicates.filter(pushable).map(match);
}

/**
 * Disjunctions every counted observation satisfies, beyond requiredMatches: at least one pair of each
 * list matches. From the clauses of a conjunctive filter (an `or` clause whose predicates are all
 * pushable `matches`; each pushable predicate of an `and` clause alone), or from a filter of type `or`
 * without clauses whose predicates all are. A store may read only the cells passing them: a cell that
 * fails one fails the filter for every metric, since a dimension predicate is true only where its value
 * matches (rule 2 makes it false elsewhere). The Aggregation still evaluates the whole filter. Query h's
 * (`teamId` or `wrapUpCode`) reads only the cells of that team or that code.
 */
export function requiredAnyOf(filter: Filter | undefined): Match[][] {
  if (!filter) return [];
  if (!conjunctive(filter)) {
    return filter.clauses.length === 0 && filter.predicates.every(pushable) ? [filter.predicates.map(match)] : [];
  }
  const out: Match[][] = [];
  for (const clause of filter.clauses) {
    if (clause.type === 'or' && clause.predicates.length > 1) {
      if (clause.predicates.every(pushable)) out.push(clause.predicates.map(match));
    } else {
      for (const p of clause.predicates) if (pushable(p)) out.push([match(p)]);
    }
  }
  return out;
}
