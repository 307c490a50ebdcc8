import { DAY_MS, instantMs } from '../iso8601';

/**
 * The analytics store spans several D1 databases by time (docs/analytics-storage.md, "Partitions").
 * `ANALYTICS_PARTITIONS` names which D1 binding holds the conversations that start in which period:
 *
 *   "DB"                                                     one database, all time (the default)
 *   "A2026H2:2026-07-01.., A2026H1:2026-01-01..2026-07-01, DB:..2026-01-01"
 *
 * Entries are comma-separated, `BINDING` alone (all time) or `BINDING:START..END`: the period
 * [START, END), each bound a UTC date (`2026-07-01`) or an ISO 8601 instant, empty for open. Periods
 * may not overlap; a gap is allowed (a conversation starting there is refused). A partition whose
 * whole period ended more than `ANALYTICS_RETENTION_DAYS` days ago is retired: never read nor written,
 * and emptied by the scheduled maintenance (retention.ts).
 */

/** A period of the configuration: conversations starting in [start, end) belong to the binding `name`. */
export interface PartitionPeriod {
  /** The D1 binding's name; it names the database everywhere (dictionary cache, query source header). */
  readonly name: string;
  /** Inclusive; -Infinity: since ever. */
  readonly start: number;
  /** Exclusive; Infinity: for ever. */
  readonly end: number;
}

export interface Partition extends PartitionPeriod {
  readonly d1: D1Database;
}

export interface AnalyticsStore {
  /** Every configured partition, in period order. */
  readonly partitions: readonly Partition[];
  /** Days after which a whole partition is dropped; undefined: kept for ever. */
  readonly retentionDays?: number;
}

/** A configuration that cannot be served; its message says what to fix in wrangler.toml. */
export class PartitionConfigError extends Error {
  override name = 'PartitionConfigError';
}

const DEFAULT_PARTITIONS = 'DB';
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** The periods of `text` (ANALYTICS_PARTITIONS), validated, in period order. Pure. */
export function parsePartitions(text: string | undefined): PartitionPeriod[] {
  const source = text?.trim() || DEFAULT_PARTITIONS;
  const periods = source.split(',').map((entry) => parseEntry(entry.trim()));
  const names = new Set<string>();
  for (const p of periods) {
    if (names.has(p.name)) throw configError(`names the binding ${p.name} twice; one database holds one period`);
    names.add(p.name);
  }
  periods.sort((a, b) => a.start - b.start);
  for (let i = 1; i < periods.length; i++) {
    const [before, after] = [periods[i - 1]!, periods[i]!];
    if (after.start < before.end) {
      throw configError(`${before.name} (${describePeriod(before)}) and ${after.name} (${describePeriod(after)}) overlap`);
    }
  }
  return periods;
}

function parseEntry(entry: string): PartitionPeriod {
  const colon = entry.indexOf(':');
  const name = (colon < 0 ? entry : entry.slice(0, colon)).trim();
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw configError(`entry ${JSON.stringify(entry)}: expected BINDING or BINDING:START..END`);
  if (colon < 0) return { name, start: -Infinity, end: Infinity };
  const period = entry.slice(colon + 1);
  const dots = period.indexOf('..');
  if (dots < 0) throw configError(`entry ${JSON.stringify(entry)}: the period is START..END (either may be empty)`);
  const start = parseBound(period.slice(0, dots).trim(), -Infinity, entry);
  const end = parseBound(period.slice(dots + 2).trim(), Infinity, entry);
  if (start >= end) throw configError(`entry ${JSON.stringify(entry)}: the period ends before it starts`);
  return { name, start, end };
}

function parseBound(text: string, open: number, entry: string): number {
  if (text === '') return open;
  const ms = instantMs(DATE_ONLY.test(text) ? `${text}T00:00:00.000Z` : text);
  if (typeof ms === 'string')
    throw configError(`entry ${JSON.stringify(entry)}: ${JSON.stringify(text)} is not a date (2026-07-01) nor an ISO 8601 instant`);
  return ms;
}

/** `ANALYTICS_RETENTION_DAYS`: a positive whole number of days, or empty for none. Pure. */
export function parseRetentionDays(text: string | undefined): number | undefined {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return undefined;
  const days = Number(trimmed);
  if (!Number.isSafeInteger(days) || days <= 0) {
    throw new PartitionConfigError(
      `ANALYTICS_RETENTION_DAYS must be a positive whole number of days or empty; it is ${JSON.stringify(text)}`,
    );
  }
  return days;
}

function configError(message: string): PartitionConfigError {
  return new PartitionConfigError(`ANALYTICS_PARTITIONS ${message}`);
}

function day(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
}

/** `2026-01-01..2026-07-01`, open ends left empty, as the configuration writes it. */
export function describePeriod(p: PartitionPeriod): string {
  return `${Number.isFinite(p.start) ? day(p.start) : ''}..${Number.isFinite(p.end) ? day(p.end) : ''}`;
}

/** Parsed layouts by configuration text: parsing is cheap, but every request would repeat it. Holds no bindings. */
const layouts = new Map<string, { periods: PartitionPeriod[]; retentionDays?: number }>();

/**
 * The analytics store this Worker's configuration describes, each period with its D1 binding.
 * Throws PartitionConfigError, naming what to fix, when the configuration cannot be served.
 */
export function analyticsStore(env: Env): AnalyticsStore {
  const vars = env as unknown as Record<string, unknown>;
  const text = String(vars.ANALYTICS_PARTITIONS ?? '');
  const retention = String(vars.ANALYTICS_RETENTION_DAYS ?? '');
  const key = `${text}\n${retention}`;
  let layout = layouts.get(key);
  if (!layout) {
    const retentionDays = parseRetentionDays(retention);
    layout = { periods: parsePartitions(text), ...(retentionDays === undefined ? {} : { retentionDays }) };
    layouts.set(key, layout);
  }
  const partitions = layout.periods.map((p) => {
    const d1 = vars[p.name] as Partial<D1Database> | undefined;
    if (typeof d1?.prepare !== 'function' || typeof d1.batch !== 'function') {
      throw configError(`names ${p.name}, which is not a D1 binding of this Worker (add it to wrangler.toml's [[d1_databases]])`);
    }
    return { ...p, d1: d1 as D1Database };
  });
  return layout.retentionDays === undefined ? { partitions } : { partitions, retentionDays: layout.retentionDays };
}

/** Whether the whole period of `p` ended longer ago than the retention, at `now`: then it is dropped. */
export function isRetired(store: AnalyticsStore, p: PartitionPeriod, now: number): boolean {
  return store.retentionDays !== undefined && p.end <= now - store.retentionDays * DAY_MS;
}

/** The partitions queries read at `now`: all but the retired ones. */
export function readablePartitions(store: AnalyticsStore, now: number): Partition[] {
  return store.partitions.filter((p) => !isRetired(store, p, now));
}

/** Where a conversation starting at `startMs` is stored, or why it is not. */
export function partitionFor(store: AnalyticsStore, startMs: number, now: number): Partition | { refused: string } {
  const p = store.partitions.find((x) => x.start <= startMs && startMs < x.end);
  if (!p) {
    const periods = store.partitions.map((x) => `${x.name} ${describePeriod(x)}`).join(', ');
    return { refused: `no analytics partition holds that period (ANALYTICS_PARTITIONS: ${periods})` };
  }
  if (isRetired(store, p, now)) {
    return {
      refused: `it belongs to partition ${p.name} (${describePeriod(p)}), older than the retention of ${store.retentionDays} days (ANALYTICS_RETENTION_DAYS): it is no longer kept`,
    };
  }
  return p;
}
