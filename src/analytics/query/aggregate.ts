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
  maxGroups: number;
  views?: ViewSpec[];
  rank?: RankSpec;
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
  /** `bucket * METRIC_COUNT + metric` -> accumulator: one lookup per cell, no per-bucket maps. */
  cells: Map<number, Accumulator>;
  /** bucket -> oServiceLevel components */
  serviceLevel: Map<number, ServiceLevelCounts>;
  /** bucket -> view index -> accumulator */
  views: Map<number, Map<number, Accumulator>>;
}

const MEDIA_TYPE = DIMENSION_INDEX.mediaType;
const METRIC_COUNT = METRICS.length;

/** Groups found by their key values one level at a time (mediaType, then each groupBy dimension): no key strings built per cell. */
type GroupTrie = Map<string | undefined, GroupTrie | GroupState>;

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

/** JSON of timer stats, keys in the wire order (numbers print as JSON.stringify prints them). */
function timerJson(acc: Accumulator): string {
  return `{"max":${acc.max},"min":${acc.min},"count":${acc.count},"sum":${acc.sum}}`;
}

/** `{"metric":"<name>","stats":` per metric index, built once. */
const METRIC_PREFIX = METRICS.map((m) => `{"metric":${JSON.stringify(m.name)},"stats":`);

/**
 * The pure heart of the aggregate query. Stores feed it cells — one observation (with its value),
 * or a pre-aggregated run of observations with the same bucket, metric and relevant dimensions —
 * and it applies the seed's rules: filter per metric (rule 2), group by mediaType plus the groupBy
 * dimensions each observation has (rule 3), absent-not-zero (rule 4), the service level computed
 * per group without userId from its components, views, and topN/bottomN ranking.
 */
export class Aggregation {
  private readonly groups: GroupTrie = new Map();
  private readonly states: GroupState[] = [];
  /** Metrics accumulated per group: the ones answered, plus view targets and the sort metric. */
  private readonly accumulated: boolean[];
  private readonly groupIndexes: number[];
  /** Metric indexes in answer order. */
  private readonly order: readonly number[];
  /** Per metric index (arrays, not maps: add() runs once per cell). */
  private readonly viewsByTarget: ({ index: number; view: ViewSpec }[] | undefined)[] = [];
  private readonly serviceLevelRole: (keyof ServiceLevelCounts | undefined)[];

  constructor(private readonly spec: AggregateSpec) {
    const extra = new Set([...(spec.views ?? []).map((v) => v.target), ...(spec.rank ? [spec.rank.metric] : [])]);
    this.accumulated = METRICS.map((_, i) => spec.metrics === undefined || spec.metrics.includes(i) || extra.has(i));
    const wantServiceLevel = spec.metrics === undefined || spec.metrics.includes(SERVICE_LEVEL.metric);
    this.serviceLevelRole = METRICS.map((_, i) => (wantServiceLevel ? SL_ROLE.get(i) : undefined));
    this.order = spec.metrics ?? METRICS.map((_, i) => i);
    this.groupIndexes = spec.groupBy.map((d) => DIMENSION_INDEX[d]).filter((i) => i !== MEDIA_TYPE);
    (spec.views ?? []).forEach((view, index) => {
      (this.viewsByTarget[view.target] ??= []).push({ index, view });
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
      accumulate(state.cells, bucket * METRIC_COUNT + metric, count, sum, min, max);
      const views = this.viewsByTarget[metric];
      if (views) {
        for (const { index, view } of views) {
          if ((view.gte === undefined || value >= view.gte) && (view.lt === undefined || value < view.lt)) {
            accumulate(this.bucketMap(state.views, bucket), index, 1, value, value, value);
          }
        }
      }
    }
    const role = this.serviceLevelRole[metric];
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
    const indexes = this.groupIndexes;
    // Map keys keep every value apart (absent is undefined), with no separator a value could contain.
    let node = this.groups;
    let key = dims[MEDIA_TYPE];
    for (let level = 0; level < indexes.length; level++) {
      let next = node.get(key) as GroupTrie | undefined;
      if (!next) node.set(key, (next = new Map()));
      node = next;
      const i = indexes[level]!;
      key = applies[i] ? dims[i] : undefined;
    }
    const found = node.get(key) as GroupState | undefined;
    if (found) return found;
    if (this.states.length >= this.spec.maxGroups) {
      throw ApiError.invalidValue(
        'groupBy',
        `The query produces more than ${this.spec.maxGroups} groups; narrow the filter or group by fewer dimensions.`,
      );
    }
    const values = [dims[MEDIA_TYPE], ...indexes.map((i) => (applies[i] ? dims[i] : undefined))];
    const group: Record<string, string> = {};
    if (dims[MEDIA_TYPE] !== undefined) group.mediaType = dims[MEDIA_TYPE];
    for (const d of this.spec.groupBy) {
      const i = DIMENSION_INDEX[d];
      if (applies[i] && dims[i] !== undefined) group[d] = dims[i];
    }
    const state: GroupState = { values, group, cells: new Map(), serviceLevel: new Map(), views: new Map() };
    node.set(key, state);
    this.states.push(state);
    return state;
  }

  /**
   * The answer's `results` array as JSON text (Genesys wire format): groups in a stable order (by
   * their dimension values) or ranked (topN/bottomN), each with `data` per bucket in time order
   * (`interval` from `intervalOf`), metrics in answer order, views in request order. Assembled as
   * text: an answer can hold tens of thousands of metric entries, and building them as objects only
   * to stringify them was most of the Worker's own time.
   */
  resultsJson(serviceLevel: ServiceLevelSettings, intervalOf: (bucket: number) => string): string {
    const states = [...this.states].sort((a, b) => compareGroups(a.values, b.values));
    const ranked = this.spec.rank ? this.rank(states, this.spec.rank) : states;
    const limit = this.spec.rank?.limit;
    const out: string[] = [];
    for (const state of ranked) {
      const data = this.groupData(state, serviceLevel, intervalOf);
      if (data.length > 0) out.push(`{"group":${JSON.stringify(state.group)},"data":[${data.join(',')}]}`);
      if (limit !== undefined && out.length >= limit) break;
    }
    return `[${out.join(',')}]`;
  }

  /** One `{"interval", "metrics", "views"?}` entry per bucket with data. */
  private groupData(state: GroupState, serviceLevel: ServiceLevelSettings, intervalOf: (bucket: number) => string): string[] {
    const order = this.order;
    const bucketIds = new Set([...state.serviceLevel.keys(), ...state.views.keys()]);
    for (const key of state.cells.keys()) bucketIds.add(Math.floor(key / METRIC_COUNT));
    const data: string[] = [];
    for (const bucket of [...bucketIds].sort((a, b) => a - b)) {
      let metrics = '';
      const base = bucket * METRIC_COUNT;
      for (const m of order) {
        if (m === SERVICE_LEVEL.metric) {
          const counts = state.serviceLevel.get(bucket);
          if (counts) metrics += `${metrics ? ',' : ''}${METRIC_PREFIX[m]}${JSON.stringify(serviceLevelStats(counts, state.group, serviceLevel))}}`;
          continue;
        }
        const acc = state.cells.get(base + m);
        if (!acc) continue;
        const stats = METRICS[m]!.kind === 'timer' ? timerJson(acc) : `{"count":${acc.count}}`;
        metrics += `${metrics ? ',' : ''}${METRIC_PREFIX[m]}${stats}}`;
      }
      let views = '';
      const viewAccs = state.views.get(bucket);
      if (viewAccs) {
        (this.spec.views ?? []).forEach((view, index) => {
          const acc = viewAccs.get(index);
          if (acc) views += `${views ? ',' : ''}{"name":${JSON.stringify(view.name)},"stats":${timerJson(acc)}}`;
        });
      }
      if (metrics || views) {
        data.push(`{"interval":${JSON.stringify(intervalOf(bucket))},"metrics":[${metrics}]${views ? `,"views":[${views}]` : ''}}`);
      }
    }
    return data;
  }

  /** Whole groups ordered by the sort function of the sort metric over all buckets; groups without it last. */
  private rank(states: GroupState[], rank: RankSpec): GroupState[] {
    const score = (state: GroupState): number | undefined => {
      let total: Accumulator | undefined;
      for (const [key, acc] of state.cells) {
        if (key % METRIC_COUNT !== rank.metric) continue;
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
}

function serviceLevelStats(counts: ServiceLevelCounts, group: Record<string, string>, settings: ServiceLevelSettings): ServiceLevelStats {
  const queueId = group.queueId;
  const target = (queueId !== undefined ? settings.queues[queueId]?.target : undefined) ?? settings.target;
  return serviceLevel(counts, settings, target);
}
