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

export interface AggregateSpec {
  /** Metric indexes in answer order; undefined = every metric with data, in catalogue order. */
  metrics?: number[];
  groupBy: Dimension[];
  filter: CompiledFilter;
  bucketCount: number;
  serviceLevel: ServiceLevelSettings;
  maxGroups: number;
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

interface Accumulator {
  count: number;
  sum: number;
  min: number;
  max: number;
}

interface GroupState {
  group: Record<string, string>;
  /** bucket -> metric -> accumulator */
  buckets: Map<number, Map<number, Accumulator>>;
  /** bucket -> oServiceLevel components */
  serviceLevel: Map<number, ServiceLevelCounts>;
}

export interface GroupResult {
  group: Record<string, string>;
  /** Per bucket index with data: the metrics in answer order. */
  buckets: { bucket: number; metrics: MetricResult[] }[];
}

const MEDIA_TYPE = DIMENSION_INDEX.mediaType;

const SL_ROLE = new Map<number, keyof ServiceLevelCounts>([
  [SERVICE_LEVEL.answered, 'answered'],
  [SERVICE_LEVEL.overSla, 'overSla'],
  [SERVICE_LEVEL.abandon, 'abandon'],
  [SERVICE_LEVEL.shortAbandon, 'shortAbandon'],
  [SERVICE_LEVEL.flowOut, 'flowOut'],
]);

/**
 * The pure heart of the aggregate query. Stores feed it cells — one observation, or a
 * pre-aggregated run of observations with the same bucket, metric and relevant dimensions — and it
 * applies the seed's rules: filter per metric (rule 2), group by mediaType plus the groupBy
 * dimensions each observation has (rule 3), absent-not-zero (rule 4), and the service level
 * computed per group without userId from its components.
 */
export class Aggregation {
  private readonly groups = new Map<string, GroupState>();
  private readonly wanted: boolean[];
  private readonly wantServiceLevel: boolean;
  private readonly groupIndexes: number[];

  constructor(private readonly spec: AggregateSpec) {
    this.wanted = METRICS.map((_, i) => spec.metrics === undefined || spec.metrics.includes(i));
    this.wantServiceLevel = this.wanted[SERVICE_LEVEL.metric]!;
    this.groupIndexes = spec.groupBy.map((d) => DIMENSION_INDEX[d]).filter((i) => i !== MEDIA_TYPE);
  }

  /** Observed metrics a store must read for this query. */
  static metricsToRead(metrics: number[] | undefined): number[] | undefined {
    if (metrics === undefined) return undefined;
    const read = new Set(metrics.filter((m) => METRICS[m]!.kind !== 'calculated'));
    if (metrics.includes(SERVICE_LEVEL.metric)) for (const m of SL_ROLE.keys()) read.add(m);
    return [...read];
  }

  add(bucket: number, metric: number, dims: DimValues, count: number, sum: number, min: number, max: number): void {
    if (this.wanted[metric] && this.spec.filter(metric, dims)) {
      const byMetric = this.bucketOf(this.groupFor(metric, dims).buckets, bucket);
      const acc = byMetric.get(metric);
      if (acc) {
        acc.count += count;
        acc.sum += sum;
        if (min < acc.min) acc.min = min;
        if (max > acc.max) acc.max = max;
      } else {
        byMetric.set(metric, { count, sum, min, max });
      }
    }
    const role = this.wantServiceLevel ? SL_ROLE.get(metric) : undefined;
    if (role && this.spec.filter(SERVICE_LEVEL.metric, dims)) {
      const state = this.groupFor(SERVICE_LEVEL.metric, dims);
      let counts = state.serviceLevel.get(bucket);
      if (!counts) state.serviceLevel.set(bucket, (counts = emptyCounts()));
      counts[role] += count;
    }
  }

  private bucketOf(buckets: GroupState['buckets'], bucket: number): Map<number, Accumulator> {
    let byMetric = buckets.get(bucket);
    if (!byMetric) buckets.set(bucket, (byMetric = new Map()));
    return byMetric;
  }

  /** The group an observation of `metric` falls in: mediaType, then each groupBy dimension it has. */
  private groupFor(metric: number, dims: DimValues): GroupState {
    const applies = APPLIES[metric]!;
    let key = dims[MEDIA_TYPE] ?? '';
    for (const i of this.groupIndexes) key += '\u0000' + (applies[i] && dims[i] !== undefined ? dims[i] : '\u0001');
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
      state = { group, buckets: new Map(), serviceLevel: new Map() };
      this.groups.set(key, state);
    }
    return state;
  }

  /** Groups in a stable order (by their dimension values), buckets in time order, metrics in answer order. */
  results(): GroupResult[] {
    const order = this.spec.metrics ?? METRICS.map((_, i) => i);
    const out: GroupResult[] = [];
    const keys = [...this.groups.keys()].sort();
    for (const key of keys) {
      const state = this.groups.get(key)!;
      const bucketIds = new Set([...state.buckets.keys(), ...state.serviceLevel.keys()]);
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
          metrics.push({
            metric: def.name,
            stats: def.kind === 'timer' ? { max: acc.max, min: acc.min, count: acc.count, sum: acc.sum } : { count: acc.count },
          });
        }
        if (metrics.length > 0) buckets.push({ bucket, metrics });
      }
      if (buckets.length > 0) out.push({ group: state.group, buckets });
    }
    return out;
  }

  private serviceLevelStats(counts: ServiceLevelCounts, group: Record<string, string>): ServiceLevelStats {
    const settings = this.spec.serviceLevel;
    const queueId = group.queueId;
    const target = (queueId !== undefined ? settings.queues[queueId]?.target : undefined) ?? settings.target;
    return serviceLevel(counts, settings, target);
  }
}
