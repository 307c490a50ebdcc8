/**
 * Queries a–d of issue 4 as Genesys request bodies, and the same answers computed by a peer in SQL
 * over raw observations (one row each, dimensions that never apply to the metric left NULL).
 *
 * Semantics the peer SQL implements (README "Answer rules" and "oServiceLevel"):
 * - mediaType is always a group key; a groupBy dimension the observation lacks (NULL) is left out of
 *   its group, so NULL group columns simply omit the key;
 * - a `matches` predicate on a dimension that never applies to a metric is false: that dimension is
 *   NULL for the metric's observations, so `col = 'v'` is false there (oServiceLevel: userId never
 *   applies, so a userId predicate removes it);
 * - timers give max/min/count/sum, counts give count;
 * - oServiceLevel per group without userId and bucket: (tAnswered − nOverSla) / (tAnswered +
 *   tAbandon [+ tFlowOut] [− tShortAbandon]), present when any component has data; oCallbackServiceLevel
 *   (tCallbackConnect − nCallbackOverSla) / (tCallbackConnect + tCallbackAbandon + tCallbackNotReached)
 *   likewise; oServiceTarget {target} where either is (named only).
 * Buckets come from boundaries computed here (IANA zone handled with Intl), not by src/.
 */
import { DIMENSIONS, METRICS, MULTI_VALUED, DIMENSION_INDEX, type Dimension } from '../../src/analytics/catalog';
import { TEAMS, WRAP_UP_CODES } from '../../scripts/simulator/config';
import { canonicalize, type AggregateResponse, type Group } from '../../test/support/reference-aggregator';

type Predicate = { dimension: string; value: string };

export interface BenchQuery {
  id: 'a' | 'b' | 'c' | 'd' | 'e' | 'f' | 'g' | 'h' | 'i';
  title: string;
  body: {
    interval: string;
    granularity: string;
    groupBy?: string[];
    metrics?: string[];
    filter?: { type: 'and'; predicates: Predicate[]; clauses?: { type: 'or'; predicates: Predicate[] }[] };
    timeZone?: string;
    flattenMultivaluedDimensions?: boolean;
  };
  /** Bucket edges in epoch ms (boundaries[0] = start, last = end). */
  boundaries: number[];
}

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

function uniform(start: number, end: number, width: number): number[] {
  const out: number[] = [];
  for (let t = start; t <= end; t += width) out.push(t);
  return out;
}

/** Offset of `zone` at instant t (wall minus UTC, ms), by Intl. */
function zoneOffset(zone: string, t: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(t));
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - Math.floor(t / 1000) * 1000;
}

/** The instant of local midnight of the civil date (y, m, d) in `zone`. */
function localMidnight(zone: string, y: number, m: number, d: number): number {
  const wall = Date.UTC(y, m - 1, d);
  let t = wall - zoneOffset(zone, wall);
  t = wall - zoneOffset(zone, t); // once more, in case the first guess crossed a transition
  return t;
}

/**
 * The four queries, placed inside the simulated window ending `end` (UTC midnight). The same
 * queries run in quick mode (fewer days of data simply leave older buckets empty).
 */
export function benchQueries(endIso: string, agentId: string): BenchQuery[] {
  const end = Date.parse(endIso);
  const monthStart = end - 30 * DAY;
  const weekStart = end - 7 * DAY;
  const dayStart = end - 3 * DAY; // a day inside even the quick run's three days
  const nyDays: number[] = [];
  const first = new Date(monthStart);
  for (let i = 0; i <= 30; i++) {
    nyDays.push(localMidnight('America/New_York', first.getUTCFullYear(), first.getUTCMonth() + 1, first.getUTCDate() + i));
  }
  return [
    {
      id: 'a',
      title: '30 days, P1D, groupBy queueId, nOffered tAnswered tAbandon tHandle oServiceLevel',
      body: {
        interval: `${iso(monthStart)}/${iso(end)}`,
        granularity: 'P1D',
        groupBy: ['queueId'],
        metrics: ['nOffered', 'tAnswered', 'tAbandon', 'tHandle', 'oServiceLevel'],
      },
      boundaries: uniform(monthStart, end, DAY),
    },
    {
      id: 'b',
      title: "the seed's shape: one day, PT12H, groupBy queueId userId, voice outbound, 8 metrics",
      body: {
        interval: `${iso(dayStart)}/${iso(dayStart + DAY)}`,
        granularity: 'PT12H',
        groupBy: ['queueId', 'userId'],
        filter: {
          type: 'and',
          predicates: [
            { dimension: 'mediaType', value: 'voice' },
            { dimension: 'direction', value: 'outbound' },
          ],
        },
        metrics: ['nOutbound', 'nOutboundAttempted', 'nOutboundConnected', 'tContacting', 'tDialing', 'tTalk', 'tAcw', 'tHandle'],
      },
      boundaries: uniform(dayStart, dayStart + DAY, DAY / 2),
    },
    {
      id: 'c',
      title: '7 days, PT30M, no groupBy, every catalogue metric named',
      body: {
        interval: `${iso(weekStart)}/${iso(end)}`,
        granularity: 'PT30M',
        metrics: METRICS.map((m) => m.name),
      },
      boundaries: uniform(weekStart, end, DAY / 48),
    },
    {
      id: 'd',
      title: '30 days, P1D, userId = one agent, timeZone America/New_York (local midnights, DST end inside)',
      body: {
        interval: `${iso(nyDays[0]!)}/${iso(nyDays[30]!)}`,
        granularity: 'P1D',
        timeZone: 'America/New_York',
        filter: { type: 'and', predicates: [{ dimension: 'userId', value: agentId }] },
      },
      boundaries: nyDays,
    },
    // e–i (issue 24): dimensions outside today's rollups.
    {
      id: 'e',
      title: '30 days, P1D, groupBy wrapUpCode, 4 metrics',
      body: {
        interval: `${iso(monthStart)}/${iso(end)}`,
        granularity: 'P1D',
        groupBy: ['wrapUpCode'],
        metrics: ['tHandle', 'tTalk', 'tAcw', 'nTransferred'],
      },
      boundaries: uniform(monthStart, end, DAY),
    },
    {
      id: 'f',
      title: 'one day, PT15M, groupBy userId, 5 metrics',
      body: {
        interval: `${iso(dayStart)}/${iso(dayStart + DAY)}`,
        granularity: 'PT15M',
        groupBy: ['userId'],
        metrics: ['tAnswered', 'tTalk', 'tHeld', 'tAcw', 'tHandle'],
      },
      boundaries: uniform(dayStart, dayStart + DAY, DAY / 96),
    },
    {
      id: 'g',
      title: '30 days, P1D, groupBy requestedRoutingSkillId (multi-valued) and teamId, 3 metrics',
      body: {
        interval: `${iso(monthStart)}/${iso(end)}`,
        granularity: 'P1D',
        groupBy: ['requestedRoutingSkillId', 'teamId'],
        metrics: ['nOffered', 'tAnswered', 'tHandle'],
      },
      boundaries: uniform(monthStart, end, DAY),
    },
    {
      id: 'h',
      title: '7 days, PT1H, usedRouting and (teamId or wrapUpCode), groupBy queueId, 3 metrics',
      body: {
        interval: `${iso(weekStart)}/${iso(end)}`,
        granularity: 'PT1H',
        groupBy: ['queueId'],
        metrics: ['tAnswered', 'tHandle', 'tAcw'],
        filter: {
          type: 'and',
          predicates: [{ dimension: 'usedRouting', value: 'Standard' }],
          clauses: [
            {
              type: 'or',
              predicates: [
                { dimension: 'teamId', value: TEAMS.billing.id },
                { dimension: 'wrapUpCode', value: WRAP_UP_CODES.resolved.id },
              ],
            },
          ],
        },
      },
      boundaries: uniform(weekStart, end, DAY / 24),
    },
    {
      id: 'i',
      title: '30 days, P1D, groupBy divisionId, flattenMultivaluedDimensions, 3 metrics',
      body: {
        interval: `${iso(monthStart)}/${iso(end)}`,
        granularity: 'P1D',
        groupBy: ['divisionId'],
        flattenMultivaluedDimensions: true,
        metrics: ['nOffered', 'tHandle', 'nConnected'],
      },
      boundaries: uniform(monthStart, end, DAY),
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Peer SQL

export interface Dialect {
  name: 'duckdb' | 'sqlite';
  /** Integer division of non-negative integers. */
  div(a: string, b: number): string;
}

export const DUCKDB: Dialect = { name: 'duckdb', div: (a, b) => `(${a}) // ${b}` };
export const SQLITE: Dialect = { name: 'sqlite', div: (a, b) => `(${a}) / ${b}` };

const STANDARD = ['tAnswered', 'nOverSla', 'tAbandon', 'tShortAbandon', 'tFlowOut'] as const;
const CALLBACK = ['tCallbackConnect', 'nCallbackOverSla', 'tCallbackAbandon', 'tCallbackNotReached'] as const;
/** Components of oServiceLevel and oCallbackServiceLevel (oServiceTarget appears where either has data). */
const SL_COMPONENTS = [...STANDARD, ...CALLBACK] as const;
const SL_METRICS = ['oServiceLevel', 'oServiceTarget', 'oCallbackServiceLevel'];
const OBSERVED = METRICS.filter((m) => m.kind !== 'calculated').map((m) => m.name);
const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

export interface PeerPlan {
  /** Cells: b, metric, mediaType, groupBy columns…, cnt, total, mn, mx. */
  cells: string;
  /** Service-level counts when they cannot be read from the cells: b, mediaType, groups…, 5 counts. */
  serviceLevel?: string;
  /** Group columns of `cells`, and of `serviceLevel`. */
  groupBy: Dimension[];
  slGroupBy: Dimension[];
  wantSl: boolean;
  /** The service level is computed from the cells' component counts. */
  slFromCells: boolean;
  /** Metrics the answer lists (undefined = every one with data). */
  requested?: string[];
}

/** A `matches` predicate: equality, or for a multi-valued dimension, any value of its list. */
function matches(p: Predicate, d: Dialect): string {
  if (!MULTI_VALUED[DIMENSION_INDEX[p.dimension as Dimension]]) return `${p.dimension} = ${quote(p.value)}`;
  return d.name === 'duckdb'
    ? `list_contains(from_json(${p.dimension}, '["VARCHAR"]'), ${quote(p.value)})`
    : `EXISTS (SELECT 1 FROM json_each(${p.dimension}) WHERE value = ${quote(p.value)})`;
}

/** The observations with each listed multi-valued dimension replaced by one of its values, a row per value. */
function unnestedObs(dims: Dimension[], d: Dialect): string {
  if (d.name === 'duckdb') {
    const others = COLUMN_NAMES.filter((c) => !dims.includes(c as Dimension));
    const values = dims.map((g) => `UNNEST(CASE WHEN ${g} IS NULL THEN [NULL] ELSE from_json(${g}, '["VARCHAR"]') END) AS ${g}`);
    return `(SELECT ${[...others, ...values].join(', ')} FROM obs)`;
  }
  const others = COLUMN_NAMES.filter((c) => !dims.includes(c as Dimension)).map((c) => `obs.${c}`);
  const joins = dims.map((g, i) => `LEFT JOIN json_each(obs.${g}) j${i}`).join(' ');
  return `(SELECT ${[...others, ...dims.map((g, i) => `j${i}.value AS ${g}`)].join(', ')} FROM obs ${joins})`;
}

const COLUMN_NAMES = ['metric', 'emit', 'value', ...DIMENSIONS];

function bucketExpr(boundaries: number[], d: Dialect): string {
  const widths = new Set(boundaries.slice(1).map((b, i) => b - boundaries[i]!));
  if (widths.size === 1) return d.div(`emit - ${boundaries[0]}`, [...widths][0]!);
  const whens = boundaries.slice(1, -1).map((b, i) => `WHEN emit < ${b} THEN ${i}`);
  return `CASE ${whens.join(' ')} ELSE ${boundaries.length - 2} END`;
}

export function peerPlan(q: BenchQuery, d: Dialect): PeerPlan {
  const groupBy = (q.body.groupBy ?? []).filter((g) => g !== 'mediaType') as Dimension[];
  for (const g of groupBy) if (!DIMENSIONS.includes(g)) throw new Error(`unknown dimension ${g}`);
  const predicates = q.body.filter?.predicates ?? [];
  const requested = q.body.metrics;
  const wantSl = requested === undefined || requested.some((m) => SL_METRICS.includes(m));
  // A userId predicate is false for oServiceLevel (userId never applies to it): no service level at all.
  const slPossible = wantSl && !predicates.some((p) => p.dimension === 'userId');
  const slGroupBy = groupBy.filter((g) => g !== 'userId');
  const slFromCells = slPossible && slGroupBy.length === groupBy.length;

  const start = q.boundaries[0]!;
  const end = q.boundaries[q.boundaries.length - 1]!;
  const clauses = (q.body.filter?.clauses ?? []).map((c) => `(${c.predicates.map((p) => matches(p, d)).join(' OR ')})`);
  const where = [`emit >= ${start}`, `emit < ${end}`, ...predicates.map((p) => matches(p, d)), ...clauses];
  const b = bucketExpr(q.boundaries, d);
  // A multi-valued groupBy dimension: one row per value (its JSON list unnested), or the list joined
  // by commas when flattened; NULL (no list) leaves the group without it.
  const flatten = q.body.flattenMultivaluedDimensions === true;
  const unnested = groupBy.filter((g) => MULTI_VALUED[DIMENSION_INDEX[g]] && !flatten);
  const source = unnested.length === 0 ? 'obs' : unnestedObs(unnested, d);
  const column = (g: Dimension) =>
    MULTI_VALUED[DIMENSION_INDEX[g]] && flatten
      ? d.name === 'duckdb'
        ? `array_to_string(from_json(${g}, '["VARCHAR"]'), ',')`
        : `(SELECT group_concat(value, ',') FROM json_each(${g}))`
      : g;

  const read = new Set((requested ?? OBSERVED).filter((m) => !SL_METRICS.includes(m)));
  if (slFromCells) for (const m of SL_COMPONENTS) read.add(m);
  const metricWhere = requested === undefined && !slFromCells ? [] : [`metric IN (${[...read].map(quote).join(', ')})`];
  const cols = ['mediaType', ...groupBy.map(column)];
  const cells = `SELECT ${b} AS b, metric, ${cols.join(', ')}, count(*) AS cnt, sum(value) AS total, min(value) AS mn, max(value) AS mx
FROM ${source} WHERE ${[...where, ...metricWhere].join(' AND ')}
GROUP BY 1, 2, ${cols.map((_, i) => i + 3).join(', ')}`;

  let serviceLevel: string | undefined;
  if (slPossible && !slFromCells) {
    const slCols = ['mediaType', ...slGroupBy];
    const counts = SL_COMPONENTS.map((m) => `sum(CASE WHEN metric = ${quote(m)} THEN 1 ELSE 0 END) AS ${m}`);
    serviceLevel = `SELECT ${b} AS b, ${slCols.join(', ')}, ${counts.join(', ')}
FROM obs WHERE ${[...where, `metric IN (${SL_COMPONENTS.map(quote).join(', ')})`].join(' AND ')}
GROUP BY 1, ${slCols.map((_, i) => i + 2).join(', ')}`;
  }
  return { cells, serviceLevel, groupBy, slGroupBy, wantSl: slPossible, slFromCells, requested };
}

export type SqlValue = string | number | bigint | null;

/** The bench's settings use an org target and queue targets only (per-media-type targets: docs/api.md). */
export interface ServiceLevelSettings {
  includeFlowOuts: boolean;
  includeShortAbandons: boolean;
  target: number;
  queues: Record<string, { target?: number }>;
}

type SlCounts = Record<(typeof SL_COMPONENTS)[number], number>;

/** Turns the peer's rows into the endpoint's answer, in canonical order. */
export function assemble(
  q: BenchQuery,
  plan: PeerPlan,
  cellRows: SqlValue[][],
  slRows: SqlValue[][],
  settings: ServiceLevelSettings,
): AggregateResponse {
  interface Cell {
    metrics: Map<string, { cnt: number; total: number; mn: number; mx: number }>;
    sl?: SlCounts;
  }
  const groups = new Map<string, { group: Group; cells: Map<number, Cell> }>();
  const cellOf = (mediaType: SqlValue, dims: Dimension[], values: SqlValue[], bucket: number): Cell => {
    const group: Group = {};
    if (mediaType !== null) group.mediaType = String(mediaType);
    dims.forEach((dim, i) => {
      const v = values[i];
      if (v !== null && v !== undefined) group[dim] = String(v);
    });
    const key = JSON.stringify(Object.entries(group).sort());
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { group, cells: new Map() }));
    let cell = g.cells.get(bucket);
    if (!cell) g.cells.set(bucket, (cell = { metrics: new Map() }));
    return cell;
  };
  const emptySl = (): SlCounts => Object.fromEntries(SL_COMPONENTS.map((m) => [m, 0])) as SlCounts;
  const k = plan.groupBy.length;
  const wanted = plan.requested === undefined ? undefined : new Set(plan.requested);
  for (const row of cellRows) {
    const bucket = Number(row[0]);
    const metric = String(row[1]);
    const [cnt, total, mn, mx] = row.slice(3 + k).map(Number) as [number, number, number, number];
    const cell = cellOf(row[2]!, plan.groupBy, row.slice(3, 3 + k), bucket);
    if (wanted === undefined || wanted.has(metric)) cell.metrics.set(metric, { cnt, total, mn, mx });
    if (plan.slFromCells && (SL_COMPONENTS as readonly string[]).includes(metric)) {
      cell.sl ??= emptySl();
      cell.sl[metric as keyof SlCounts] += cnt;
    }
  }
  const ks = plan.slGroupBy.length;
  for (const row of slRows) {
    const cell = cellOf(row[1]!, plan.slGroupBy, row.slice(2, 2 + ks), Number(row[0]));
    const c = row.slice(2 + ks).map(Number);
    cell.sl = Object.fromEntries(SL_COMPONENTS.map((m, i) => [m, c[i]!])) as SlCounts;
  }

  const order = plan.requested ?? METRICS.map((m) => m.name).filter((m) => m !== 'oServiceTarget');
  const response: AggregateResponse = { results: [] };
  for (const { group, cells } of groups.values()) {
    const data = [];
    for (const [bucket, cell] of [...cells].sort((x, y) => x[0] - y[0])) {
      const metrics = [];
      for (const name of order) {
        if (SL_METRICS.includes(name)) {
          if (plan.wantSl && cell.sl) {
            const s = cell.sl;
            const standard = STANDARD.some((m) => s[m] > 0);
            const callback = CALLBACK.some((m) => s[m] > 0);
            const queue = group.queueId;
            const target = (queue !== undefined ? settings.queues[queue]?.target : undefined) ?? settings.target;
            const ratio = (numerator: number, denominator: number) =>
              denominator > 0 ? { ratio: numerator / denominator, numerator, denominator, target } : { numerator, denominator, target };
            if (name === 'oServiceLevel' && standard) {
              let denominator = s.tAnswered + s.tAbandon;
              if (settings.includeFlowOuts) denominator += s.tFlowOut;
              if (!settings.includeShortAbandons) denominator -= s.tShortAbandon;
              metrics.push({ metric: name, stats: ratio(s.tAnswered - s.nOverSla, denominator) });
            }
            if (name === 'oCallbackServiceLevel' && callback) {
              const denominator = s.tCallbackConnect + s.tCallbackAbandon + s.tCallbackNotReached;
              metrics.push({ metric: name, stats: ratio(s.tCallbackConnect - s.nCallbackOverSla, denominator) });
            }
            if (name === 'oServiceTarget' && (standard || callback)) metrics.push({ metric: name, stats: { target } });
          }
          continue;
        }
        const m = cell.metrics.get(name);
        if (!m) continue;
        const timer = !name.startsWith('n'); // timers and observed o* values: {max, min, count, sum}
        metrics.push({ metric: name, stats: timer ? { max: m.mx, min: m.mn, count: m.cnt, sum: m.total } : { count: m.cnt } });
      }
      if (metrics.length > 0) data.push({ interval: `${iso(q.boundaries[bucket]!)}/${iso(q.boundaries[bucket + 1]!)}`, metrics });
    }
    if (data.length > 0) response.results.push({ group, data });
  }
  return canonicalize(response, plan.requested);
}

/** Canonical JSON of an answer (key order inside stats fixed) for comparing. */
export function canonicalJson(response: AggregateResponse, metricOrder?: readonly string[]): string {
  const c = canonicalize(response, metricOrder);
  return JSON.stringify(c, (_key, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
    }
    return value;
  });
}

/** The first difference between two canonical answers, for the error message. */
export function firstDifference(a: AggregateResponse, b: AggregateResponse): string {
  if (a.results.length !== b.results.length) return `${a.results.length} groups vs ${b.results.length}`;
  for (let i = 0; i < a.results.length; i++) {
    const x = JSON.stringify(a.results[i]);
    const y = JSON.stringify(b.results[i]);
    if (x !== y) {
      let j = 0;
      while (j < x.length && x[j] === y[j]) j++;
      return `group ${i}: …${x.slice(Math.max(0, j - 200), j + 200)}\n  vs …${y.slice(Math.max(0, j - 200), j + 200)}`;
    }
  }
  return 'no difference';
}
