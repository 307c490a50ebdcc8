import { APPLIES, CALLBACK_SERVICE_LEVEL, DIMENSION_INDEX, METRICS, SERVICE_LEVEL, SERVICE_TARGET, type Dimension } from '../catalog';
import type { DimValue, DimValues } from '../ingest/to-observations';
import type { CompiledFilter } from './filter';
import { tooManyCells, tooManyGroups, tooManyGroupsPerObservation } from './too-large';
import { emptyCounts, type ServiceLevelCounts } from '../service-level';

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
  /** Most stats entries (metric cells, oServiceLevel and view entries) it may hold; one more throws 413. */
  maxCells: number;
  views?: ViewSpec[];
  rank?: RankSpec;
  /** flattenMultivaluedDimensions: a list is one group value, joined by commas, instead of a group per value. */
  flatten?: boolean;
  /** Most groups one observation may fall in (multi-valued dimensions); one more throws 413. Default: no bound. */
  maxGroupsPerObservation?: number;
  /** Only the groups whose key hashes (groupHash) to `index` modulo `count`: one part of an answer a job splits. */
  partition?: { count: number; index: number };
}

/** Marks, in the group trie, a group of another partition. */
const OTHER_PART = {} as GroupState;

/** FNV-1a (32 bits) of a group's values (undefined apart from every string): stable across isolates and versions. */
export function groupHash(values: readonly (string | undefined)[]): number {
  let h = 0x811c9dc5;
  for (const v of values) {
    const text = v === undefined ? '\u0001' : `${v}\u0000`;
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
  }
  return h >>> 0;
}

export interface Accumulator {
  count: number;
  sum: number;
  min: number;
  max: number;
}

/** One group of the answer and what was added into it. */
export interface GroupState {
  /** mediaType, then each groupBy dimension in request order (undefined where the group lacks it). */
  values: (string | undefined)[];
  group: Record<string, string>;
  /** cellKey(bucket, metric) -> row of the aggregation's CellTable: one lookup per cell, no per-bucket maps. */
  cells: Map<number, number>;
  /** bucket -> oServiceLevel components */
  serviceLevel: Map<number, ServiceLevelCounts>;
  /** bucket -> view index -> accumulator */
  views: Map<number, Map<number, Accumulator>>;
}

const MEDIA_TYPE = DIMENSION_INDEX.mediaType;
const METRIC_COUNT = METRICS.length;

/** A group's cell of one metric in one bucket, as one number. */
export function cellKey(bucket: number, metric: number): number {
  return bucket * METRIC_COUNT + metric;
}

export function bucketOfCell(key: number): number {
  return Math.floor(key / METRIC_COUNT);
}

function metricOfCell(key: number): number {
  return key % METRIC_COUNT;
}

/** Groups found by their key values one level at a time (mediaType, then each groupBy dimension): no key strings built per cell. */
type GroupTrie = Map<string | undefined, GroupTrie | GroupState>;

/** Components of the calculated service-level metrics (oServiceLevel, oCallbackServiceLevel, and oServiceTarget where either applies), by role. */
const SL_ROLE = new Map<number, keyof ServiceLevelCounts>([
  [SERVICE_LEVEL.answered, 'answered'],
  [SERVICE_LEVEL.overSla, 'overSla'],
  [SERVICE_LEVEL.abandon, 'abandon'],
  [SERVICE_LEVEL.shortAbandon, 'shortAbandon'],
  [SERVICE_LEVEL.flowOut, 'flowOut'],
  [CALLBACK_SERVICE_LEVEL.callbackConnected, 'callbackConnected'],
  [CALLBACK_SERVICE_LEVEL.callbackOverSla, 'callbackOverSla'],
  [CALLBACK_SERVICE_LEVEL.callbackAbandon, 'callbackAbandon'],
  [CALLBACK_SERVICE_LEVEL.callbackNotReached, 'callbackNotReached'],
]);
/**
 * The metrics of a query that names none: every metric with data. oServiceTarget is configuration, not data:
 * it is answered only when named.
 */
const ALL_METRICS: readonly number[] = METRICS.map((_, i) => i).filter((m) => m !== SERVICE_TARGET);

const CALLBACK_ROLES = new Set<keyof ServiceLevelCounts>(['callbackConnected', 'callbackOverSla', 'callbackAbandon', 'callbackNotReached']);

/**
 * The components a query needs: oServiceLevel's for it or oServiceTarget, the callback ones for
 * oCallbackServiceLevel or oServiceTarget (which appears where either has components). Reading no more
 * keeps a per-user query on oServiceLevel answerable by agg_user (callback metrics are not kept per user).
 */
function serviceLevelRoles(metrics: readonly number[] | undefined): Map<number, keyof ServiceLevelCounts> {
  const wants = (m: number) => (metrics === undefined ? ALL_METRICS.includes(m) : metrics.includes(m));
  const standard = wants(SERVICE_LEVEL.metric) || wants(SERVICE_TARGET);
  const callback = wants(CALLBACK_SERVICE_LEVEL.metric) || wants(SERVICE_TARGET);
  return new Map([...SL_ROLE].filter(([, role]) => (CALLBACK_ROLES.has(role) ? callback : standard)));
}

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
 * count, sum, min and max of every cell of an aggregation, four numbers per row in one growing
 * Float64Array: a query adds tens of thousands of cells, and an object per cell was a fifth of the
 * time spent adding them (allocation and the garbage collector).
 */
export class CellTable {
  values = new Float64Array(4 * 1024);
  private rows = 0;

  /** A new row holding these; returns its index. */
  push(count: number, sum: number, min: number, max: number): number {
    if (4 * this.rows === this.values.length) {
      const next = new Float64Array(2 * this.values.length);
      next.set(this.values);
      this.values = next;
    }
    const at = 4 * this.rows;
    const v = this.values;
    v[at] = count;
    v[at + 1] = sum;
    v[at + 2] = min;
    v[at + 3] = max;
    return this.rows++;
  }

  merge(row: number, count: number, sum: number, min: number, max: number): void {
    const at = 4 * row;
    const v = this.values;
    v[at] = v[at]! + count;
    v[at + 1] = v[at + 1]! + sum;
    if (min < v[at + 2]!) v[at + 2] = min;
    if (max > v[at + 3]!) v[at + 3] = max;
  }

  accumulator(row: number): Accumulator {
    const at = 4 * row;
    const v = this.values;
    return { count: v[at]!, sum: v[at + 1]!, min: v[at + 2]!, max: v[at + 3]! };
  }
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

/**
 * The pure heart of the aggregate query. Stores feed it cells — one observation (with its value),
 * or a pre-aggregated run of observations with the same bucket, metric and relevant dimensions —
 * and it applies the seed's rules: filter per metric (rule 2), group by mediaType plus the groupBy
 * dimensions each observation has (rule 3), absent-not-zero (rule 4), the service level computed
 * per group without userId from its components, views, and topN/bottomN ranking. What it holds
 * becomes the answer in results-json.ts.
 */
export class Aggregation {
  private readonly groups: GroupTrie = new Map();
  private readonly states: GroupState[] = [];
  /** count, sum, min and max of every group's cells. */
  readonly table = new CellTable();
  /** Metrics accumulated per group: the ones answered, plus view targets and the sort metric. */
  private readonly accumulated: boolean[];
  private readonly groupIndexes: number[];
  private readonly groupNames: Dimension[];
  /** Scratch of groupsFor: the key being walked, the groups found. */
  private readonly path: (string | undefined)[] = [];
  private readonly found: GroupState[] = [];
  /** groupsFor's value at each level (mediaType, then the groupBy dimensions), and whether `found` holds their groups. */
  private readonly levels: (DimValue | undefined)[];
  private levelsWalked = false;
  /** Metric indexes in answer order. */
  readonly order: readonly number[];
  /** Per metric index (arrays, not maps: add() runs once per cell). */
  private readonly viewsByTarget: ({ index: number; view: ViewSpec }[] | undefined)[] = [];
  private readonly serviceLevelRole: (keyof ServiceLevelCounts | undefined)[];
  /** Stats entries created so far (spec.maxCells bounds them); read through `entries`. */
  private created = 0;

  /** Stats entries created so far (what maxCells bounds). */
  get entries(): number {
    return this.created;
  }

  constructor(private readonly spec: AggregateSpec) {
    const extra = new Set([...(spec.views ?? []).map((v) => v.target), ...(spec.rank ? [spec.rank.metric] : [])]);
    this.accumulated = METRICS.map((_, i) => spec.metrics === undefined || spec.metrics.includes(i) || extra.has(i));
    const roles = serviceLevelRoles(spec.metrics);
    this.serviceLevelRole = METRICS.map((_, i) => roles.get(i));
    this.order = spec.metrics ?? ALL_METRICS;
    this.groupNames = spec.groupBy.filter((d) => d !== 'mediaType');
    this.groupIndexes = this.groupNames.map((d) => DIMENSION_INDEX[d]);
    this.levels = new Array(this.groupIndexes.length + 1).fill(undefined);
    (spec.views ?? []).forEach((view, index) => {
      (this.viewsByTarget[view.target] ??= []).push({ index, view });
    });
  }

  /** Observed metrics a store must read for this query; undefined = all. */
  static metricsToRead(spec: Pick<AggregateSpec, 'metrics' | 'views' | 'rank'>): number[] | undefined {
    if (spec.metrics === undefined) return undefined;
    const read = new Set(spec.metrics.filter((m) => METRICS[m]!.kind !== 'calculated'));
    for (const m of serviceLevelRoles(spec.metrics).keys()) read.add(m);
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
      const key = cellKey(bucket, metric);
      const views = this.viewsByTarget[metric];
      for (const state of this.groupsFor(metric, dims)) {
        const row = state.cells.get(key);
        if (row === undefined) {
          this.countCell();
          state.cells.set(key, this.table.push(count, sum, min, max));
        } else this.table.merge(row, count, sum, min, max);
        if (views) {
          for (const { index, view } of views) {
            if ((view.gte === undefined || value >= view.gte) && (view.lt === undefined || value < view.lt)) {
              const accs = this.bucketMap(state.views, bucket);
              if (!accs.has(index)) this.countCell();
              accumulate(accs, index, 1, value, value, value);
            }
          }
        }
      }
    }
    const role = this.serviceLevelRole[metric];
    if (role && filter(SERVICE_LEVEL.metric, metric, dims, value)) {
      for (const state of this.groupsFor(SERVICE_LEVEL.metric, dims)) {
        let counts = state.serviceLevel.get(bucket);
        if (!counts) {
          this.countCell();
          state.serviceLevel.set(bucket, (counts = emptyCounts()));
        }
        counts[role] += count;
      }
    }
  }

  /** One more stats entry: the bound is checked as the answer grows, long before it is written. */
  private countCell(): void {
    if (++this.created > this.spec.maxCells) throw tooManyCells(this.spec.maxCells);
  }

  private bucketMap<T>(map: Map<number, Map<number, T>>, bucket: number): Map<number, T> {
    let inner = map.get(bucket);
    if (!inner) map.set(bucket, (inner = new Map()));
    return inner;
  }

  /** A group key level's value: absent where the dimension does not apply; a list joined when flattened. */
  private levelValue(level: number, applies: readonly boolean[], dims: DimValues): DimValue | undefined {
    const i = level === 0 ? MEDIA_TYPE : this.groupIndexes[level - 1]!;
    if (level > 0 && !applies[i]) return undefined;
    const v = dims[i];
    return v === undefined || typeof v === 'string' || !this.spec.flatten ? v : v.join(',');
  }

  /**
   * The groups an observation of `metric` falls in: mediaType, then each groupBy dimension it has. One
   * group, but for a multi-valued dimension (not flattened): a group per value, so an observation with
   * divisions [a, b] is counted under a and under b (docs/catalogue.md, "Multi-valued dimensions").
   * The array returned is reused by the next call.
   */
  private groupsFor(metric: number, dims: DimValues): GroupState[] {
    const applies = APPLIES[metric]!;
    // The groups depend only on the value at each level. A rollup row's metrics mostly share them (one
    // row, and the same dimensions apply): the last call's groups serve them again, a comparison per
    // level in place of a Map lookup per level.
    const levels = this.levels;
    let same = this.levelsWalked;
    for (let l = 0; l < levels.length; l++) {
      const v = this.levelValue(l, applies, dims);
      if (v !== levels[l]) {
        same = false;
        levels[l] = v;
      }
    }
    const out = this.found;
    if (same) return out;
    // Not valid again until the walk has finished (it may throw).
    this.levelsWalked = false;
    out.length = 0;
    this.walk(this.groups, 0, out);
    const max = this.spec.maxGroupsPerObservation;
    if (max !== undefined && out.length > max) throw tooManyGroupsPerObservation(max);
    this.levelsWalked = true;
    return out;
  }

  private walk(node: GroupTrie, level: number, out: GroupState[]): void {
    // Stop as soon as the bound is passed: the walk itself is the cost it bounds.
    const max = this.spec.maxGroupsPerObservation;
    if (max !== undefined && out.length > max) return;
    const v = this.levels[level];
    if (v === undefined || typeof v === 'string') this.step(node, level, v, out);
    else for (const one of v) this.step(node, level, one, out);
  }

  // Map keys keep every value apart (absent is undefined), with no separator a value could contain.
  private step(node: GroupTrie, level: number, key: string | undefined, out: GroupState[]): void {
    this.path[level] = key;
    if (level < this.groupIndexes.length) {
      let next = node.get(key) as GroupTrie | undefined;
      if (!next) node.set(key, (next = new Map()));
      this.walk(next, level + 1, out);
      return;
    }
    let state = node.get(key) as GroupState | undefined;
    if (state === OTHER_PART) return;
    if (!state) {
      if (this.states.length >= this.spec.maxGroups) {
        throw tooManyGroups(this.spec.maxGroups);
      }
      const values = this.path.slice(0, this.groupIndexes.length + 1);
      const partition = this.spec.partition;
      if (partition && groupHash(values) % partition.count !== partition.index) {
        // Another part's group: remembered as such, so the walk decides once per group.
        node.set(key, OTHER_PART);
        return;
      }
      const group: Record<string, string> = {};
      if (values[0] !== undefined) group.mediaType = values[0];
      this.groupNames.forEach((name, l) => {
        if (values[l + 1] !== undefined) group[name] = values[l + 1]!;
      });
      state = { values, group, cells: new Map(), serviceLevel: new Map(), views: new Map() };
      node.set(key, state);
      this.states.push(state);
    }
    out.push(state);
  }

  /** Views in request order (a group's `views` map is keyed by their index). */
  get views(): readonly ViewSpec[] {
    return this.spec.views ?? [];
  }

  /** Most groups the answer may show (topN/bottomN's limit); undefined = all. */
  get limit(): number | undefined {
    return this.spec.rank?.limit;
  }

  /** Every group, in answer order: by their dimension values, or ranked (topN/bottomN). */
  groupsInOrder(): GroupState[] {
    const states = [...this.states].sort((a, b) => compareGroups(a.values, b.values));
    return this.spec.rank ? this.rank(states, this.spec.rank) : states;
  }

  /** Whole groups ordered by the sort function of the sort metric over all buckets; groups without it last. */
  private rank(states: GroupState[], rank: RankSpec): GroupState[] {
    const score = (state: GroupState): number | undefined => {
      let total: Accumulator | undefined;
      for (const [key, row] of state.cells) {
        if (metricOfCell(key) !== rank.metric) continue;
        const acc = this.table.accumulator(row);
        if (!total) total = acc;
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
