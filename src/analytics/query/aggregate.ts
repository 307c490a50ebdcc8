import { APPLIES, DIMENSION_INDEX, METRICS, SERVICE_LEVEL, type Dimension } from '../catalog';
import type { DimValues } from '../ingest/to-observations';
import { ApiError } from '../../http/api-error';
import type { CompiledFilter } from './filter';
import { emptyCounts, serviceLevel, type ServiceLevelCounts, type ServiceLevelStats } from './service-level';

export interface ServiceLevelSettings {
  includeFlowOuts: boolean;
  includeShortAbandons: boolean;
  target: number;
  queues: Record<string, { target: number }>;
}

/** A rangeBound view: the target's observations with value in [gte, lt). */
export interface ViewSpec {
  name: string;
  target: number;
  gte?: number;
  lt?: number;
}

export type SortFunction = 'sum' | 'count' | 'max' | 'min' | 'average';

export interface RankSpec {
  order: 'topN' | 'bottomN';
  metric: number;
  function: SortFunction;
  limit?: number;
}

export interface AggregateSpec {
  /** Metric indexes in answer order; undefined = every metric with data, in catalogue order. */
  metrics?: number[];
  groupBy: Dimension[];
  filter: CompiledFilter;
  serviceLevel: ServiceLevelSettings;
  maxGroups: number;
  views?: ViewSpec[];
  rank?: RankSpec;
}

export interface TimerStats {
  max: number;
  min: number;
  count: number;
  sum: number;
}
export type MetricStats = TimerStats | { count: number } | ServiceLevelStats;

export interface MetricResult {
  metric: string;
  stats: MetricStats;
}

export interface ViewResult {
  name: string;
  stats: TimerStats;
}

interface Accumulator {
  count: number;
  sum: number;
  min: number;
  max: number;
}

interface GroupState {
  /** mediaType, then each groupBy dimension in request order (undefined where the group lacks it). */
  values: (string | undefined)[];
  group: Record<string, string>;
  /** bucket -> metric -> accumulator */
  buckets: Map<number, Map<number, Accumulator>>;
  /** bucket -> oServiceLevel components */
  serviceLevel: Map<number, ServiceLevelCounts>;
  /** bucket -> view index -> accumulator */
  views: Map<number, Map<number, Accumulator>>;
}

export interface GroupResult {
  group: Record<string, string>;
  /** Per bucket index with data: the metrics in answer order, and the views with data. */
  buckets: { bucket: number; metrics: MetricResult[]; views: ViewResult[] }[];
}

const MEDIA_TYPE = DIMENSION_INDEX.mediaType;

const SL_ROLE = new Map<number, keyof ServiceLevelCounts>([
  [SERVICE_LEVEL.answered, 'answered'],
  [SERVICE_LEVEL.overSla, 'overSla'],
  [SERVICE_LEVEL.abandon, 'abandon'],
  [SERVICE_LEVEL.shortAbandon, 'shortAbandon'],
  [SERVICE_LEVEL.flowOut, 'flowOut'],
]);

function accumulate(map: Map<number, Accumulator>, key: number, count: number, sum: number, min: number, max: number): void {
  const acc = map.get(key);
  if (!acc) {
    map.set(key, { count, sum, min, max });
    return;
  }
  acc.count += count;
  acc.sum += sum;
  if (min < acc.min) acc.min = min;
  if (max > acc.max) acc.max = max;
}

/**
 * The answer's group order: by mediaType, then each groupBy dimension in request order; a group
 * without a dimension comes before those with it; values compare by UTF-16 code units.
 */
function compareGroups(a: (string | undefined)[], b: (string | undefined)[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

function timerStats(acc: Accumulator): TimerStats {
  return { max: acc.max, min: acc.min, count: acc.count, sum: acc.sum };
}

/**
 * The pure heart of the aggregate query. Stores feed it cells — one observation (with its value),
 * or a pre-aggregated run of observations with the same bucket, metric and relevant dimensions —
 * and it applies the seed's rules: filter per metric (rule 2), group by mediaType plus the groupBy
 * dimensions each observation has (rule 3), absent-not-zero (rule 4), the service level computed
 * per group without userId from its components, views, and topN/bottomN ranking.
 */
export class Aggregation {
  private readonly groups = new Map<string, GroupState>();
  /** Metrics accumulated per group: the ones answered, plus view targets and the sort metric. */
  private readonly accumulated: boolean[];
  private readonly wantServiceLevel: boolean;
  private readonly groupIndexes: number[];
  private readonly viewsByTarget = new Map<number, { index: number; view: ViewSpec }[]>();

  constructor(private readonly spec: AggregateSpec) {
    const extra = new Set([...(spec.views ?? []).map((v) => v.target), ...(spec.rank ? [spec.rank.metric] : [])]);
    this.accumulated = METRICS.map((_, i) => spec.metrics === undefined || spec.metrics.includes(i) || extra.has(i));
    this.wantServiceLevel = spec.metrics === undefined || spec.metrics.includes(SERVICE_LEVEL.metric);
    this.groupIndexes = spec.groupBy.map((d) => DIMENSION_INDEX[d]).filter((i) => i !== MEDIA_TYPE);
    (spec.views ?? []).forEach((view, index) => {
      const list = this.viewsByTarget.get(view.target) ?? [];
      list.push({ index, view });
      this.viewsByTarget.set(view.target, list);
    });
  }

  /** Observed metrics a store must read for this query; undefined = all. */
  static metricsToRead(spec: Pick<AggregateSpec, 'metrics' | 'views' | 'rank'>): number[] | undefined {
    if (spec.metrics === undefined) return undefined;
    const read = new Set(spec.metrics.filter((m) => METRICS[m]!.kind !== 'calculated'));
    if (spec.metrics.includes(SERVICE_LEVEL.metric)) for (const m of SL_ROLE.keys()) read.add(m);
    for (const view of spec.views ?? []) read.add(view.target);
    if (spec.rank) read.add(spec.rank.metric);
    return [...read];
  }

  /**
   * Adds `count` observations of `metric` in `bucket` with these dimensions. `value` is the single
   * observation's value when count is 1 and it is known (raw rows); metric predicates and views need it.
   */
  add(bucket: number, metric: number, dims: DimValues, count: number, sum: number, min: number, max: number, value = Number.NaN): void {
    const filter = this.spec.filter;
    if (this.accumulated[metric] && filter(metric, metric, dims, value)) {
      const state = this.groupFor(metric, dims);
      accumulate(this.bucketMap(state.buckets, bucket), metric, count, sum, min, max);
      const views = this.viewsByTarget.get(metric);
      if (views) {
        for (const { index, view } of views) {
          if ((view.gte === undefined || value >= view.gte) && (view.lt === undefined || value < view.lt)) {
            accumulate(this.bucketMap(state.views, bucket), index, 1, value, value, value);
          }
        }
      }
    }
    const role = this.wantServiceLevel ? SL_ROLE.get(metric) : undefined;
    if (role && filter(SERVICE_LEVEL.metric, metric, dims, value)) {
      const state = this.groupFor(SERVICE_LEVEL.metric, dims);
      let counts = state.serviceLevel.get(bucket);
      if (!counts) state.serviceLevel.set(bucket, (counts = emptyCounts()));
      counts[role] += count;
    }
  }

  private bucketMap<T>(map: Map<number, Map<number, T>>, bucket: number): Map<number, T> {
    let inner = map.get(bucket);
    if (!inner) map.set(bucket, (inner = new Map()));
    return inner;
  }

  /** The group an observation of `metric` falls in: mediaType, then each groupBy dimension it has. */
  private groupFor(metric: number, dims: DimValues): GroupState {
    const applies = APPLIES[metric]!;
    const values = [dims[MEDIA_TYPE], ...this.groupIndexes.map((i) => (applies[i] ? dims[i] : undefined))];
    // JSON keeps every value apart (no separator or placeholder a value could contain); absent is null.
    const key = JSON.stringify(values);
    let state = this.groups.get(key);
    if (!state) {
      if (this.groups.size >= this.spec.maxGroups) {
        throw ApiError.invalidValue(
          'groupBy',
          `The query produces more than ${this.spec.maxGroups} groups; narrow the filter or group by fewer dimensions.`,
        );
      }
      const group: Record<string, string> = {};
      if (dims[MEDIA_TYPE] !== undefined) group.mediaType = dims[MEDIA_TYPE];
      for (const d of this.spec.groupBy) {
        const i = DIMENSION_INDEX[d];
        if (applies[i] && dims[i] !== undefined) group[d] = dims[i];
      }
      state = { values, group, buckets: new Map(), serviceLevel: new Map(), views: new Map() };
      this.groups.set(key, state);
    }
    return state;
  }

  /**
   * Groups in a stable order (by their dimension values) or ranked (topN/bottomN), buckets in time
   * order, metrics in answer order, views in request order.
   */
  results(): GroupResult[] {
    const states = [...this.groups.values()].sort((a, b) => compareGroups(a.values, b.values));
    const ranked = this.spec.rank ? this.rank(states, this.spec.rank) : states;
    const out: GroupResult[] = [];
    for (const state of ranked) {
      const result = this.groupResult(state);
      if (result.buckets.length > 0) out.push(result);
      if (this.spec.rank?.limit !== undefined && out.length >= this.spec.rank.limit) break;
    }
    return out;
  }

  private groupResult(state: GroupState): GroupResult {
    const order = this.spec.metrics ?? METRICS.map((_, i) => i);
    const bucketIds = new Set([...state.buckets.keys(), ...state.serviceLevel.keys(), ...state.views.keys()]);
    const buckets: GroupResult['buckets'] = [];
    for (const bucket of [...bucketIds].sort((a, b) => a - b)) {
      const metrics: MetricResult[] = [];
      const observed = state.buckets.get(bucket);
      for (const m of order) {
        if (m === SERVICE_LEVEL.metric) {
          const counts = state.serviceLevel.get(bucket);
          if (counts) metrics.push({ metric: METRICS[m]!.name, stats: this.serviceLevelStats(counts, state.group) });
          continue;
        }
        const acc = observed?.get(m);
        if (!acc) continue;
        const def = METRICS[m]!;
        metrics.push({ metric: def.name, stats: def.kind === 'timer' ? timerStats(acc) : { count: acc.count } });
      }
      const views: ViewResult[] = [];
      const viewAccs = state.views.get(bucket);
      (this.spec.views ?? []).forEach((view, index) => {
        const acc = viewAccs?.get(index);
        if (acc) views.push({ name: view.name, stats: timerStats(acc) });
      });
      if (metrics.length > 0 || views.length > 0) buckets.push({ bucket, metrics, views });
    }
    return { group: state.group, buckets };
  }

  /** Whole groups ordered by the sort function of the sort metric over all buckets; groups without it last. */
  private rank(states: GroupState[], rank: RankSpec): GroupState[] {
    const score = (state: GroupState): number | undefined => {
      let total: Accumulator | undefined;
      for (const byMetric of state.buckets.values()) {
        const acc = byMetric.get(rank.metric);
        if (!acc) continue;
        if (!total) total = { ...acc };
        else {
          total.count += acc.count;
          total.sum += acc.sum;
          total.min = Math.min(total.min, acc.min);
          total.max = Math.max(total.max, acc.max);
        }
      }
      if (!total) return undefined;
      switch (rank.function) {
        case 'sum':
          return total.sum;
        case 'count':
          return total.count;
        case 'max':
          return total.max;
        case 'min':
          return total.min;
        case 'average':
          return total.sum / total.count;
      }
    };
    const direction = rank.order === 'topN' ? -1 : 1;
    const scored = states.map((state, position) => ({ state, position, score: score(state) }));
    scored.sort((a, b) => {
      if (a.score === undefined || b.score === undefined) {
        return a.score === b.score ? a.position - b.position : a.score === undefined ? 1 : -1;
      }
      return a.score === b.score ? a.position - b.position : direction * (a.score - b.score);
    });
    return scored.map((s) => s.state);
  }

  private serviceLevelStats(counts: ServiceLevelCounts, group: Record<string, string>): ServiceLevelStats {
    const settings = this.spec.serviceLevel;
    const queueId = group.queueId;
    const target = (queueId !== undefined ? settings.queues[queueId]?.target : undefined) ?? settings.target;
    return serviceLevel(counts, settings, target);
  }
}
