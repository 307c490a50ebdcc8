import { DIMENSIONS, MULTI_VALUED } from '../catalog';
import { readNames } from '../dictionary';
import { conversationIdOfKey, STORED_KEY_SQL } from '../ingest/conversation-key';
import { DATA_SQL, decodeObservations } from '../ingest/observation-codec';
import type { DimValues } from '../ingest/to-observations';
import { ANALYTICS_LIMITS } from '../limits';
import type { Partition } from '../partitions/partitions';
import { mapAtMost } from '../partitions/fan-out';
import { CUBE_INCOMPLETE_KEY, needsWholeCube, pickRollup, type Rollup } from '../rollups';
import { SPAN_CLASS_KEY_PREFIX } from '../span-class';
import type { Aggregation } from './aggregate';
import { alignedTo, bucketIndex, type BucketPlan } from './interval';
import { Pacer } from './pace';
import { QueryTooLarge, tooManyRawBytes, tooManyRawConversations, tooManyRollupBytes } from './too-large';
import type { ReadSpec } from './read-spec';
import { OVER_SLOT, rollupQuery, UNPACKED_ROW_CHARS } from './rollup-sql';

/** Where an answer was read from, e.g. `rollup:agg_queue@1440` or `raw`; sent as a response header. */
export type QuerySource = string;

/** What a read did: where from, and for the raw path how much it read. */
export interface ReadResult {
  source: QuerySource;
  /** Conversations decoded from the raw rows (0 from a rollup). */
  conversations: number;
  /** Bytes of encoded observations decoded from the raw rows (0 from a rollup). */
  bytes: number;
  /** Rows D1 reports the raw path's statements read (index entries and table rows); 0 from a rollup. */
  rowsRead: number;
  /** Characters of rollup cells read (what maxRollupReadBytes bounds); 0 from the raw rows. */
  cellChars: number;
  /** The partitions read, by binding name, in period order (none when given one database). */
  partitions: string[];
}

/**
 * Conversations per raw page. Turning a page's rows into JS values is one step nothing else runs
 * during: 500 keeps it near a millisecond (2,000 made ordinary requests wait behind it; bench
 * scenario 4, `--levers queries`: ordinary post p50 5.5× quiet at 2,000 and 5,000 per pause, 2.3× at
 * 500 and 1,000).
 */
const RAW_PAGE_ROWS = 500;
/**
 * Cells or observations added between pauses that let other requests in the isolate run: about a
 * millisecond of work (adding a cell costs well under a µs; decoding a conversation and adding its
 * ~20 observations ~20 µs).
 */
const ADDS_PER_PAUSE = 1_000;

/**
 * Reads every observation (or pre-aggregated cell) the query needs into `aggregation`, from the
 * smallest rollup that keeps all the dimensions it looks at, at the coarsest resolution its buckets
 * align to; otherwise from the raw observations.
 *
 * From several partitions (partitions.ts), it reads each one that can hold an observation in the
 * interval, all at once into the same aggregation (adding is synchronous, and count/sum/min/max
 * merge exactly whatever the order). A partition holds the conversations that *start* in its period,
 * and those emit after they start, so its period says little about which instants it holds. A rollup
 * read of a partition holding nothing there is one statement finding no cells, as cheap as asking
 * first, so every partition is read; the raw path asks each partition's span-class rows which of its
 * classes can reach the interval (`reach`; a single database's estimate reads its classes from meta) and
 * scans only those. The raw path's bound, maxRawConversations, is for the whole query.
 *
 * `takeTurn` is awaited before any raw row is read and before a rollup read larger than rollupReadAloneBytes:
 * the route takes the isolate's turn for heavy reads there (query-gate.ts), also when the plan was a rollup and a
 * partition's cube turned out incomplete, or its cells many, which readsRaw cannot foresee. Without it (an
 * aggregate job's runner) rollup reads go up to maxRollupReadBytes at once.
 */
export async function readInto(
  from: D1Database | readonly Partition[],
  spec: ReadSpec,
  aggregation: Aggregation,
  { takeTurn }: { takeTurn?: () => Promise<void> } = {},
): Promise<ReadResult> {
  const picked = rollupFor(spec);
  const pacer = new Pacer(ADDS_PER_PAUSE);
  const raw: RawRead = {
    conversations: 0,
    added: 0,
    bytes: 0,
    rowsRead: 0,
    max: spec.maxRawConversations ?? ANALYTICS_LIMITS.maxRawConversations,
    maxBytes: spec.maxRawBytes ?? ANALYTICS_LIMITS.maxRawBytes,
    pageBytes: spec.rawPageBytes ?? ANALYTICS_LIMITS.rawPageBytes,
  };
  const cells: CellBudget = {
    fetched: 0,
    added: 0,
    max: spec.maxRollupReadBytes ?? ANALYTICS_LIMITS.maxRollupReadBytes,
    alone: takeTurn ? (spec.rollupReadAloneBytes ?? ANALYTICS_LIMITS.rollupReadAloneBytes) : Number.POSITIVE_INFINITY,
  };
  let source = picked ? `rollup:${picked.rollup.table}@${picked.res}` : 'raw';
  const result = (partitions: string[]) => ({
    source,
    conversations: raw.conversations,
    bytes: raw.bytes,
    rowsRead: raw.rowsRead,
    cellChars: cells.fetched,
    partitions,
  });

  if (!Array.isArray(from) || from.length === 1) {
    const only = Array.isArray(from) ? from[0]! : undefined;
    const d1 = only ? only.d1 : (from as D1Database);
    const rolled = picked && (await readRollups([{ d1 }], spec, picked, aggregation, pacer, cells, takeTurn))[0]!.read;
    if (!picked || rolled?.kind === 'cube-incomplete') {
      if (picked) source = 'raw (the dimension cube lacks earlier conversations)';
      await takeTurn?.();
      // The classes the database records are read by the estimate itself: one round trip for both.
      const [scan] = await checkRawEstimate([{ d1 }], spec, raw);
      await withProgress(() => readRaw(d1, spec, aggregation, pacer, raw, scan!.classes), rawShare(raw, [scan!]));
    }
    return result(only ? [only.name] : []);
  }
  const all = from as readonly Partition[];
  let partitions = all;
  if (picked) {
    const answered = await readRollups(all, spec, picked, aggregation, pacer, cells, takeTurn);
    const names = answered.filter((a) => a.read.kind === 'added' && a.read.any).map((a) => a.target.name);
    partitions = answered.filter((a) => a.read.kind === 'cube-incomplete').map((a) => a.target);
    if (partitions.length === 0) return result(names);
    // Partitions whose cube lacks earlier conversations are read from their raw rows.
    source += ` + raw (the dimension cube of ${partitions.map((p) => p.name).join(', ')} lacks earlier conversations)`;
    await takeTurn?.();
    const rest = await rawFromPartitions(partitions, spec, aggregation, pacer, raw);
    return result(all.map((p) => p.name).filter((name) => names.includes(name) || rest.includes(name)));
  }
  await takeTurn?.();
  return result(await rawFromPartitions(partitions, spec, aggregation, pacer, raw));
}

/**
 * The rollup reads of a query, one per database: all at once (one round trip, whatever the number of
 * partitions), each within an equal share of what one read may bring without a turn (`cells.alone`, at
 * most `cells.max`). Databases past their share (the data is seldom spread evenly over partitions) are
 * read again with what the others left, their sizes known now: a query that cannot fit in `max` is
 * refused without reading them, and one past `alone` first waits for the isolate's turn for heavy reads,
 * so only one such read holds its tens of MiB at a time.
 */
async function readRollups<T extends { d1: D1Database }>(
  targets: readonly T[],
  spec: ReadSpec,
  picked: { rollup: Rollup; res: number },
  aggregation: Aggregation,
  pacer: Pacer,
  cells: CellBudget,
  takeTurn: (() => Promise<void>) | undefined,
): Promise<{ target: T; read: Exclude<RollupRead, { kind: 'over' }> }[]> {
  const readEach = (list: readonly T[], budget: (t: T) => number) =>
    withProgress(
      () =>
        Promise.all(
          list.map(async (target) => ({
            target,
            read: await readRollup(target.d1, spec, picked.rollup, picked.res, aggregation, pacer, cells, budget(target)),
          })),
        ),
      cellShare(cells),
    );
  const first = Math.min(cells.max, cells.alone);
  let answered = await readEach(targets, () => Math.floor(first / targets.length));
  const over = answered.flatMap((a) => (a.read.kind === 'over' ? [{ target: a.target, chars: a.read.chars }] : []));
  if (over.length > 0) {
    const wanted = over.reduce((n, o) => n + o.chars, 0);
    if (cells.fetched + wanted > cells.max) throw tooManyRollupBytes(cells.max, cells.fetched + wanted);
    if (cells.fetched + wanted > cells.alone) await takeTurn?.();
    const slack = Math.floor((cells.max - cells.fetched - wanted) / over.length);
    const again = await readEach(
      over.map((o) => o.target),
      (t) => over.find((o) => o.target === t)!.chars + slack,
    );
    // Grown since they were measured (ingest meanwhile) past what is left.
    const still = again.flatMap((a) => (a.read.kind === 'over' ? [a.read.chars] : []));
    if (still.length > 0) throw tooManyRollupBytes(cells.max, cells.fetched + still.reduce((n, c) => n + c, 0));
    answered = answered.map((a) => again.find((b) => b.target === a.target) ?? a);
  }
  return answered as { target: T; read: Exclude<RollupRead, { kind: 'over' }> }[];
}

/** The raw path over several partitions: the ones whose span classes reach the interval; their names. */
async function rawFromPartitions(
  partitions: readonly Partition[],
  spec: ReadSpec,
  aggregation: Aggregation,
  pacer: Pacer,
  raw: RawRead,
): Promise<string[]> {
  const reached = await Promise.all(
    partitions.map(async (p) => {
      const { classes, rowsRead } = await reach(p.d1, spec.plan);
      raw.rowsRead += rowsRead;
      return { name: p.name, d1: p.d1, classes };
    }),
  );
  const scanned = reached.filter((p) => p.classes.length > 0);
  const paged = await checkRawEstimate(scanned, spec, raw);
  // Each partition's read holds its current page (up to rawPageBytes, twice that as hex while decoded):
  // a few partitions at a time, however many the interval reaches.
  const atOnce = spec.partitionsAtOnce ?? ANALYTICS_LIMITS.partitionsAtOnce;
  await withProgress(() => mapAtMost(paged, atOnce, (p) => readRaw(p.d1, spec, aggregation, pacer, raw, p.classes)), rawShare(raw, paged));
  return scanned.map((p) => p.name);
}

/**
 * Runs a read; when a bound on the answer stops it, notes on the refusal how far it had got (`share`,
 * 0–1, when known), for a job to split by (too-large.ts): a unit is then cut into about 2/progress runs
 * at once instead of halves.
 */
async function withProgress<T>(read: () => Promise<T>, share: () => number | undefined): Promise<T> {
  try {
    return await read();
  } catch (err) {
    const got = err instanceof QueryTooLarge && err.splits === 'any' ? share() : undefined;
    if (got !== undefined) (err as QueryTooLarge).progress = Math.min(1, got);
    throw err;
  }
}

/** A raw read's share: the conversations it has added since `before`, against those the estimate counted. */
function rawShare(raw: RawRead, scans: readonly { classes: PagedClass[] }[]): () => number | undefined {
  const before = raw.added;
  const counted = scans.reduce((n, s) => n + s.classes.reduce((m, c) => m + c.rows, 0), 0);
  return () => (counted > 0 ? (raw.added - before) / counted : undefined);
}

/**
 * Rollup reads' share: the characters of cells added against those D1 returned. Cells of a partition not
 * yet answered are not counted, so the share errs high, toward fewer, larger parts.
 */
const cellShare = (cells: CellBudget) => () => (cells.fetched > 0 ? cells.added / cells.fetched : undefined);

/**
 * A query's rollup reads across partitions, in characters of cells: those D1 returned so far and those
 * added into the Aggregation (an unpacked fallback row counts as UNPACKED_ROW_CHARS), the most the
 * query may read (maxRollupReadBytes) and the most it may read without the isolate's turn.
 */
interface CellBudget {
  fetched: number;
  added: number;
  max: number;
  alone: number;
}

/**
 * What one database's rollup read did:
 * - `added`: its cells are in the aggregation; `any` says whether it held any cell of the query;
 * - `cube-incomplete`: its dimension cube lacks conversations ingested before it or before its latest
 *   generation (migrations 0016, 0018 and 0019 mark such a database with meta `cube:incomplete`):
 *   nothing was added, read its raw rows instead;
 * - `over`: past its budget, nothing was added; `chars` of cells is what it would have returned.
 */
type RollupRead = { kind: 'added'; any: boolean } | { kind: 'cube-incomplete' } | { kind: 'over'; chars: number };

/** A span class present in a database, and the longest span seen in it (span-class.ts). */
interface SpanClass {
  spanClass: number;
  longestSpan: number;
}

/** The raw path's reading so far, across partitions. */
interface RawRead {
  conversations: number;
  /** Conversations whose observations were all added (the ones read are counted a page ahead). */
  added: number;
  /** Bytes of encoded observations read (the blob's length, not its hex text). */
  bytes: number;
  rowsRead: number;
  /** Most conversations the whole query may read. */
  max: number;
  /** Most bytes of encoded observations the whole query may read. */
  maxBytes: number;
  /** Most encoded bytes in one page. */
  pageBytes: number;
}

/** A span class to scan, with the rows per page that keep a page within the page budget. */
interface PagedClass extends SpanClass {
  pageRows: number;
  /** What the estimate counted: its rows in reach and their encoded bytes. */
  rows: number;
  bytes: number;
}

/**
 * Refuses (413) a raw read that would pass the query's bounds before anything is decoded: counts,
 * per span class and partition, the conversations it would scan and the bytes of their encoded
 * observations (`length(data)`), stopping one past what the bound has left. Reading 100,000
 * conversations only to refuse took seconds of the isolate's turn; bytes are bounded as well because
 * a conversation may carry tens of thousands of observations (one ingest body allows ~70,000), so
 * conversations alone bound neither the time nor the memory of a read. The largest row of each class
 * sets its page size: at most RAW_PAGE_ROWS rows and rawPageBytes bytes (one row, if it alone is
 * larger), so no page of large rows is ever held.
 *
 * One statement per partition, not one per class: the classes (up to ~20; a partition's reach, or for
 * a scan given none every class the database records in meta) are the outer loop of a join, each
 * reaching its rows through the (span_class, first_emit) index, under one LIMIT. So a query
 * far beyond the bound is still refused after reading about the bound's worth of row headers, class
 * after class as before, and an ordinary raw query pays one D1 round trip here instead of one a class
 * (bench scenario 6's b-raw: 19 classes).
 */
async function checkRawEstimate<T extends { d1: D1Database; classes?: SpanClass[] }>(
  scans: T[],
  spec: ReadSpec,
  raw: RawRead,
): Promise<(T & { classes: PagedClass[] })[]> {
  const { start, end } = spec.plan;
  let conversations = 0;
  let bytes = 0;
  const out: (T & { classes: PagedClass[] })[] = [];
  for (const scan of scans) {
    const classes: PagedClass[] = [];
    if (scan.classes?.length === 0) {
      out.push({ ...scan, classes });
      continue;
    }
    // The classes to count: the ones given (a partition's reach), or every class the database records (meta).
    const source = scan.classes
      ? `SELECT value->>0 AS cls, value->>1 AS longest FROM json_each(?1)`
      : `SELECT substr(key, ${SPAN_CLASS_KEY_PREFIX.length + 1}) + 0 AS cls, value AS longest FROM meta WHERE key >= ?5 AND key < ?6`;
    const given = JSON.stringify((scan.classes ?? []).map((c) => [c.spanClass, c.longestSpan]));
    const { results, meta } = await scan.d1
      .prepare(
        `SELECT cls, max(longest) AS longest, count(*) AS n, coalesce(sum(len), 0) AS bytes, coalesce(max(len), 0) AS largest
         FROM (SELECT k.cls, k.longest, length(c.data) AS len
               FROM (${source}) k CROSS JOIN conversations c
               WHERE c.span_class = k.cls AND c.first_emit >= ?3 - k.longest - 1 AND c.first_emit < ?2 AND c.last_emit >= ?3
               LIMIT ?4)
         GROUP BY cls`,
      )
      // ?5 and ?6 only where the statement names them: D1 wants exactly the parameters it counts.
      .bind(
        given,
        end,
        start,
        raw.max - conversations + 1,
        ...(scan.classes ? [] : [SPAN_CLASS_KEY_PREFIX, nextKey(SPAN_CLASS_KEY_PREFIX)]),
      )
      .all<{ cls: number; longest: number; n: number; bytes: number; largest: number }>();
    raw.rowsRead += meta.rows_read;
    const byClass = new Map(results.map((r) => [r.cls, r]));
    // In the order the statement read the classes (meta's is its keys'): the bound named is the one passed first.
    const order: SpanClass[] =
      scan.classes ??
      results.map((r) => ({ spanClass: r.cls, longestSpan: r.longest })).sort((x, y) => (`${x.spanClass}` < `${y.spanClass}` ? -1 : 1));
    for (const c of order) {
      const counted = byClass.get(c.spanClass) ?? { n: 0, bytes: 0, largest: 0 };
      conversations += counted.n;
      bytes += counted.bytes;
      if (conversations > raw.max) throw tooManyRawConversations(raw.max);
      if (bytes > raw.maxBytes) throw tooManyRawBytes(raw.maxBytes);
      const pageRows = Math.max(1, Math.min(RAW_PAGE_ROWS, Math.floor(raw.pageBytes / Math.max(1, counted.largest))));
      if (counted.n > 0) classes.push({ ...c, pageRows, rows: counted.n, bytes: counted.bytes });
    }
    out.push({ ...scan, classes });
  }
  return out;
}

/**
 * The span classes of a database whose conversations can emit inside the plan's interval: per class,
 * first emits lie in [lowest, highest] (two seeks of the (span_class, first_emit) index) and emits
 * in [lowest, highest + longest span]. None: the database holds nothing the query can use.
 */
async function reach(d1: D1Database, plan: BucketPlan): Promise<{ classes: SpanClass[]; rowsRead: number }> {
  const firstEmit = (fn: string) =>
    `(SELECT ${fn}(first_emit) FROM conversations WHERE span_class = substr(key, ${SPAN_CLASS_KEY_PREFIX.length + 1}) + 0)`;
  const { results, meta } = await d1
    .prepare(`SELECT key, value, ${firstEmit('min')} AS lowest, ${firstEmit('max')} AS highest FROM meta WHERE key >= ?1 AND key < ?2`)
    .bind(SPAN_CLASS_KEY_PREFIX, nextKey(SPAN_CLASS_KEY_PREFIX))
    .all<{ key: string; value: number; lowest: number | null; highest: number | null }>();
  const classes = results
    .filter((r) => r.lowest !== null && r.highest !== null && r.lowest < plan.end && r.highest + r.value >= plan.start)
    .map((r) => ({ spanClass: Number(r.key.slice(SPAN_CLASS_KEY_PREFIX.length)), longestSpan: r.value }));
  return { classes, rowsRead: meta.rows_read };
}

/** The rollup and resolution that can answer the query, or undefined: it reads the raw observations. */
function rollupFor(spec: ReadSpec) {
  return spec.needsValues ? undefined : pickRollup(spec.dimensions, (m) => alignedTo(spec.plan, m * 60_000), spec.metrics);
}

/** Whether the query reads the raw observations (the costly path: see query-gate.ts). */
export function readsRaw(spec: ReadSpec): boolean {
  return rollupFor(spec) === undefined;
}

/** SQLite's SQLITE_TOOBIG, as D1 reports it ("string or blob too big"). */
function tooBig(err: unknown): boolean {
  return /SQLITE_TOOBIG|string or blob too big/i.test(String(err));
}

async function readRollup(
  d1: D1Database,
  spec: ReadSpec,
  rollup: Rollup,
  res: number,
  aggregation: Aggregation,
  pacer: Pacer,
  progress: CellBudget,
  maxChars: number,
): Promise<RollupRead> {
  const { sql, unpackedSql, params, dims, fixed, bucketsInSql, packedMetrics } = rollupQuery(spec, rollup, res, maxChars);
  // One array for every cell: Aggregation.add copies what it keeps.
  const values: DimValues = new Array(DIMENSIONS.length).fill(undefined);
  for (const d of fixed) values[d.index] = spec.pushdown!.find((p) => p.dimension === d.dim)!.value;
  const k = dims.length;
  let rows: [number, string, number][];
  try {
    rows = await d1
      .prepare(sql)
      .bind(...params)
      .raw<[number, string, number]>();
  } catch (err) {
    if (!tooBig(err)) throw err;
    if (needsWholeCube(rollup, res) && (await d1.prepare(`SELECT 1 FROM meta WHERE key = ?1`).bind(CUBE_INCOMPLETE_KEY).first()) !== null)
      return { kind: 'cube-incomplete' };
    const unpacked = await d1
      .prepare(unpackedSql)
      .bind(...params)
      .raw<(number | string | null)[]>();
    if (unpacked.length > Math.floor(maxChars / UNPACKED_ROW_CHARS)) return { kind: 'over', chars: unpacked.length * UNPACKED_ROW_CHARS };
    progress.fetched += unpacked.length * UNPACKED_ROW_CHARS;
    for (const row of unpacked) {
      const bucket = bucketsInSql ? (row[0] as number) : bucketIndex(spec.plan, row[0] as number);
      if (bucket < 0) continue;
      for (let i = 0; i < k; i++) {
        const v = (row[2 + i] as string | null) ?? undefined;
        values[dims[i]!.index] = v !== undefined && MULTI_VALUED[dims[i]!.index] ? (JSON.parse(v) as string[]) : v;
      }
      const cnt = row[2 + k] as number;
      const sum = row[3 + k] as number;
      // One observation: its min and max are its sum (rollups.ts extremeOf).
      aggregation.add(
        bucket,
        row[1] as number,
        values,
        cnt,
        sum,
        cnt === 1 ? sum : (row[4 + k] as number),
        cnt === 1 ? sum : (row[5 + k] as number),
      );
      progress.added += UNPACKED_ROW_CHARS;
      const pause = pacer.step();
      if (pause) await pause;
    }
    return { kind: 'added', any: unpacked.length > 0 };
  }
  const at = rows.findIndex((row) => row[0] === -1);
  if (needsWholeCube(rollup, res) && rows[at]![2] > 0) return { kind: 'cube-incomplete' };
  const measured = rows.findIndex((row) => row[0] === OVER_SLOT);
  const chars = rows[measured]![1] as unknown as number;
  if (chars > maxChars) return { kind: 'over', chars };
  progress.fetched += chars;
  const dictionary = JSON.parse(rows[at]![1]) as Record<number, string | string[]>;
  const metrics = packedMetrics.map((m) => m.metric);
  const cellStride = 1 + k + 4;
  for (let r = 0; r < rows.length; r++) {
    if (r === at || r === measured) continue;
    const bucket = bucketsInSql ? rows[r]![0] : bucketIndex(spec.plan, rows[r]![0]);
    if (bucket < 0) continue;
    const flat = JSON.parse(rows[r]![1]) as number[];
    let units = 0;
    if (rows[r]![2] === 1) {
      // Packed rows: the cells of each metric the row holds (packedCellSql: 1, 2 or 4 numbers each).
      for (let c = 0; c < flat.length; units++) {
        for (let i = 0; i < k; i++) values[dims[i]!.index] = dictionary[flat[c + i]!];
        c += k;
        for (let j = 0; j < metrics.length; j++) {
          const cnt = flat[c]!;
          if (cnt === 0) c += 1;
          else if (cnt === 1) {
            aggregation.add(bucket, metrics[j]!, values, 1, flat[c + 1]!, flat[c + 1]!, flat[c + 1]!);
            c += 2;
          } else {
            aggregation.add(bucket, metrics[j]!, values, cnt, flat[c + 1]!, flat[c + 2]!, flat[c + 3]!);
            c += 4;
          }
        }
      }
    } else {
      for (let cell = 0; cell < flat.length; cell += cellStride) {
        for (let i = 0; i < k; i++) values[dims[i]!.index] = dictionary[flat[cell + 1 + i]!];
        const cnt = flat[cell + 1 + k]!;
        const sum = flat[cell + 2 + k]!;
        // One observation: its min and max are its sum (rollups.ts extremeOf).
        aggregation.add(
          bucket,
          flat[cell]!,
          values,
          cnt,
          sum,
          cnt === 1 ? sum : flat[cell + 3 + k]!,
          cnt === 1 ? sum : flat[cell + 4 + k]!,
        );
      }
    }
    progress.added += rows[r]![1].length;
    // A row holds one slot's cells (up to thousands): pause between rows, never inside one.
    const pause = pacer.step(rows[r]![2] === 1 ? units : flat.length / cellStride);
    if (pause) await pause;
  }
  // Any cell of the query: a row besides the dictionary's and the measure.
  return { kind: 'added', any: rows.length > 2 };
}

/**
 * Scans the conversations whose observations can fall in the interval, per span class present
 * (span-class.ts; `classes` when the caller has read them): those of the class that started at most
 * its longest span before the interval, found through the (span_class, first_emit) index, page by
 * page in index order (first_emit, rowid). Stops with 413 once the query has read more than
 * `raw.max` conversations.
 *
 * Classes the estimate found small are read together: consecutive classes whose rows fit in one
 * page each, and together in one page's budget (rawPageBytes, RAW_PAGE_ROWS), have their first pages
 * read in one D1 batch and their dictionary names in one more. Most classes of an ordinary raw query
 * hold a few rows in reach, and a round trip per class was most of its time (bench scenario 6). A
 * class that turns out to have more rows (ingested since the estimate) goes on page by page.
 */
async function readRaw(
  d1: D1Database,
  spec: ReadSpec,
  aggregation: Aggregation,
  pacer: Pacer,
  raw: RawRead,
  classes: PagedClass[],
): Promise<void> {
  // The dictionary's values this database's rows name, read as pages name them (few after the first).
  const names = new Map<number, string>();
  for (const group of pageGroups(classes, raw.pageBytes)) {
    if (group.length === 1) {
      await readRawClass(d1, spec, aggregation, pacer, group[0]!, raw, names);
      continue;
    }
    const pages = await d1.batch<RawRow>(group.map((c) => rawPage(d1, spec, c, firstCursor(spec, c))));
    const rows = pages.flatMap((p) => {
      raw.rowsRead += p.meta.rows_read;
      return p.results;
    });
    countRead(raw, rows);
    await readNames(
      d1,
      rows.map((row) => row.data),
      names,
    );
    for (let i = 0; i < group.length; i++) {
      const { results } = pages[i]!;
      await addRows(spec, aggregation, pacer, raw, results, names);
      const c = group[i]!;
      if (results.length === c.pageRows) {
        const last = results[results.length - 1]!;
        await readRawClass(d1, spec, aggregation, pacer, c, raw, names, [last.first_emit, last.rowid]);
      }
    }
  }
}

/** Consecutive classes whose first pages are read together (see readRaw); a large class alone. */
function pageGroups(classes: readonly PagedClass[], pageBytes: number): PagedClass[][] {
  const groups: PagedClass[][] = [];
  let group: PagedClass[] = [];
  let rows = 0;
  let bytes = 0;
  for (const c of classes) {
    const small = c.rows < c.pageRows;
    if (!small || group.length === 0 || rows + c.rows > RAW_PAGE_ROWS || bytes + c.bytes > pageBytes) {
      if (group.length > 0) groups.push(group);
      group = [];
      rows = 0;
      bytes = 0;
    }
    group.push(c);
    rows += c.rows;
    bytes += c.bytes;
    if (!small) {
      groups.push(group);
      group = [];
      rows = 0;
      bytes = 0;
    }
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

interface RawRow {
  rowid: number;
  key: string;
  first_emit: number;
  data: string;
}

/** Where a class's scan starts: at most its longest span before the interval. */
function firstCursor(spec: ReadSpec, c: PagedClass): [number, number] {
  return [spec.plan.start - c.longestSpan - 1, 0];
}

/** One page of a class's rows in reach, after the cursor (first_emit, rowid), in index order. */
function rawPage(d1: D1Database, spec: ReadSpec, c: PagedClass, after: [number, number]): D1PreparedStatement {
  return d1
    .prepare(
      `SELECT rowid, ${STORED_KEY_SQL} AS key, first_emit, ${DATA_SQL} AS data FROM conversations
       WHERE span_class = ?5 AND first_emit >= ?1 AND (first_emit > ?1 OR rowid > ?2) AND first_emit < ?3 AND last_emit >= ?4
       ORDER BY first_emit, rowid LIMIT ?6`,
    )
    .bind(after[0], after[1], spec.plan.end, spec.plan.start, c.spanClass, c.pageRows);
}

/** Counts rows read against the query's bounds. The estimate refused what it saw; rows ingested since are caught here. */
function countRead(read: RawRead, rows: readonly RawRow[]): void {
  read.conversations += rows.length;
  for (const row of rows) read.bytes += row.data.length / 2;
  if (read.conversations > read.max) throw tooManyRawConversations(read.max);
  if (read.bytes > read.maxBytes) throw tooManyRawBytes(read.maxBytes);
}

/** Decodes rows (their names read) and adds their observations in the interval. */
async function addRows(
  spec: ReadSpec,
  aggregation: Aggregation,
  pacer: Pacer,
  raw: RawRead,
  rows: readonly RawRow[],
  names: Map<number, string>,
): Promise<void> {
  const { start, end } = spec.plan;
  const wanted = spec.metrics ? new Set(spec.metrics) : undefined;
  for (const row of rows) {
    const observations = decodeObservations(row.data, row.first_emit, conversationIdOfKey(row.key), names);
    for (const obs of observations) {
      if (obs.emit < start || obs.emit >= end || (wanted && !wanted.has(obs.metric))) continue;
      aggregation.add(bucketIndex(spec.plan, obs.emit), obs.metric, obs.dims, 1, obs.value, obs.value, obs.value, obs.value);
    }
    raw.added++;
    const pause = pacer.step(observations.length);
    if (pause) await pause;
  }
}

/** The first string after every string starting with `prefix` (its last character + 1). */
function nextKey(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

async function readRawClass(
  d1: D1Database,
  spec: ReadSpec,
  aggregation: Aggregation,
  pacer: Pacer,
  c: PagedClass,
  read: RawRead,
  names: Map<number, string>,
  from: [number, number] = firstCursor(spec, c),
): Promise<void> {
  let after = from;
  for (;;) {
    const page = await rawPage(d1, spec, c, after).all<RawRow>();
    const { results } = page;
    read.rowsRead += page.meta.rows_read;
    countRead(read, results);
    await readNames(
      d1,
      results.map((row) => row.data),
      names,
    );
    await addRows(spec, aggregation, pacer, read, results, names);
    if (results.length < c.pageRows) return;
    const last = results[results.length - 1]!;
    after = [last.first_emit, last.rowid];
  }
}
