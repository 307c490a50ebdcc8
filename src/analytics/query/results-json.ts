import { CALLBACK_SERVICE_LEVEL, METRICS, SERVICE_LEVEL, SERVICE_TARGET } from '../catalog';
import { bucketOfCell, cellKey, type Aggregation, type GroupState } from './aggregate';
import { jsonPiece, JsonBytes } from './json-bytes';
import { Pacer } from './pace';
import { answerTooLarge } from './too-large';
import {
  callbackServiceLevel,
  groupServiceLevel,
  groupTarget,
  hasCallbackServiceLevel,
  hasServiceLevel,
  type ServiceLevelSettings,
  type ServiceLevelStats,
} from '../service-level';

/** Constant pieces of the answer's JSON, encoded once. */
const P = {
  results: jsonPiece('{"results":'),
  /** `{"metric":"<name>","stats":` per metric index, encoded once. */
  prefix: METRICS.map((m) => jsonPiece(`{"metric":${JSON.stringify(m.name)},"stats":`)),
  max: jsonPiece('{"max":'),
  min: jsonPiece(',"min":'),
  timerCount: jsonPiece(',"count":'),
  sum: jsonPiece(',"sum":'),
  count: jsonPiece('{"count":'),
  ratio: jsonPiece('{"ratio":'),
  numerator: jsonPiece('"numerator":'),
  denominator: jsonPiece(',"denominator":'),
  target: jsonPiece(',"target":'),
  targetOnly: jsonPiece('{"target":'),
  group: jsonPiece('{"group":'),
  data: jsonPiece(',"data":['),
  interval: jsonPiece('{"interval":'),
  metrics: jsonPiece(',"metrics":['),
  views: jsonPiece(',"views":['),
  viewName: jsonPiece('{"name":'),
  stats: jsonPiece(',"stats":'),
};
const COMMA = 44;
const COMMA_PIECE = jsonPiece(',');
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
/** Stats entries written between pauses that let other requests run (~80 KB of answer, about a millisecond). */
const ENTRIES_PER_PAUSE = 1_000;

/**
 * The aggregate query's answer, `{"results": […]}` in Genesys' wire format, as UTF-8: groups in
 * the aggregation's order (at most its limit of them), each with `data` per bucket in time order
 * (`interval` from `intervalOf`), metrics in answer order, views in request order. A group or bucket
 * with nothing to show is left out. Longer than `maxBytes`: throws 413 as soon as the text passes it.
 * Pauses now and then so that other requests in the isolate are served meanwhile. `spans`, when given,
 * gets each written `{group, data}` entry's start and end in the bytes (an aggregate job cuts its pages
 * there instead of parsing the answer again).
 */
export async function answerJson(
  aggregation: Aggregation,
  serviceLevel: ServiceLevelSettings,
  intervalOf: (bucket: number) => string,
  maxBytes = Number.POSITIVE_INFINITY,
  spans?: number[],
): Promise<Uint8Array<ArrayBuffer>> {
  const groups = aggregation.groupsInOrder();
  const out = new JsonBytes(sizeHint(groups), maxBytes, () => answerTooLarge(maxBytes));
  const pacer = new Pacer(ENTRIES_PER_PAUSE);
  out.piece(P.results);
  const limit = aggregation.limit;
  const intervals: Uint8Array[] = [];
  const interval = (bucket: number) => (intervals[bucket] ??= jsonPiece(JSON.stringify(intervalOf(bucket))));
  let written = 0;
  out.char(OPEN_BRACKET);
  for (const state of groups) {
    const start = out.length;
    if (written > 0) out.char(COMMA);
    out.piece(P.group);
    out.text(JSON.stringify(state.group));
    out.piece(P.data);
    if (await writeGroupData(out, aggregation, state, serviceLevel, interval, pacer)) {
      out.char(CLOSE_BRACKET);
      out.char(CLOSE_BRACE);
      spans?.push(written > 0 ? start + 1 : start, out.length);
      written++;
    } else out.rewind(start);
    if (limit !== undefined && written >= limit) break;
  }
  out.char(CLOSE_BRACKET);
  out.char(CLOSE_BRACE);
  return out.bytes();
}

/**
 * About how many bytes the answer takes, so that the buffer seldom has to grow: a metric entry takes
 * ~40 (a count) to ~100 bytes (a timer), and each bucket's `{"interval": …, "metrics": […]}` ~75 more.
 * Cells alone at 80 bytes fell short for answers of few metrics per bucket (query f of the bench: 10 MB
 * from a hint of 7.9), and growing then doubled the buffer: 24 MB held at once, and 8 MB copied.
 */
function sizeHint(groups: readonly GroupState[]): number {
  let cells = 0;
  for (const state of groups) cells += state.cells.size + state.serviceLevel.size;
  return 1024 + cells * 104;
}

/** One `{"interval", "metrics", "views"?}` entry per bucket with data; false when there is none. */
async function writeGroupData(
  out: JsonBytes,
  aggregation: Aggregation,
  state: GroupState,
  serviceLevel: ServiceLevelSettings,
  interval: (bucket: number) => Uint8Array,
  pacer: Pacer,
): Promise<boolean> {
  const order = aggregation.order;
  const views = aggregation.views;
  const cells = cellIndex(state);
  const bucketIds = new Set([...state.serviceLevel.keys(), ...state.views.keys()]);
  if (cells.dense) {
    for (let b = 0, at = 0; at < cells.dense.length; b++, at += METRIC_COUNT) {
      for (let m = 0; m < METRIC_COUNT; m++) {
        if (cells.dense[at + m] !== -1) {
          bucketIds.add(cells.low + b);
          break;
        }
      }
    }
  } else for (const key of state.cells.keys()) bucketIds.add(bucketOfCell(key));
  let entries = 0;
  for (const bucket of [...bucketIds].sort((a, b) => a - b)) {
    const start = out.length;
    if (entries > 0) out.char(COMMA);
    out.piece(P.interval);
    out.piece(interval(bucket));
    out.piece(P.metrics);
    let metrics = 0;
    for (const m of order) {
      if (m === SERVICE_LEVEL.metric || m === CALLBACK_SERVICE_LEVEL.metric || m === SERVICE_TARGET) {
        const counts = state.serviceLevel.get(bucket);
        if (!counts) continue;
        // Each only where its components were seen; the target where either service level is.
        const standard = hasServiceLevel(counts);
        const callback = hasCallbackServiceLevel(counts);
        if (m === SERVICE_LEVEL.metric ? !standard : m === CALLBACK_SERVICE_LEVEL.metric ? !callback : !standard && !callback) continue;
        if (metrics++ > 0) out.char(COMMA);
        out.piece(P.prefix[m]!);
        if (m === SERVICE_LEVEL.metric) writeServiceLevel(out, groupServiceLevel(counts, state.group, serviceLevel));
        else if (m === CALLBACK_SERVICE_LEVEL.metric)
          writeServiceLevel(out, callbackServiceLevel(counts, groupTarget(state.group, serviceLevel, 'callback')));
        else {
          out.piece(P.targetOnly);
          out.number(groupTarget(state.group, serviceLevel));
          out.char(CLOSE_BRACE);
        }
        out.char(CLOSE_BRACE);
        continue;
      }
      const row = cells.dense ? cellRow(cells, bucket, m) : state.cells.get(cellKey(bucket, m));
      if (row === undefined) continue;
      if (metrics++ > 0) out.char(COMMA);
      out.piece(P.prefix[m]!);
      const v = aggregation.table.values;
      const at = 4 * row;
      // Counts answer {count}; timers and observed o* values {max, min, count, sum}.
      if (METRICS[m]!.kind !== 'count') writeTimer(out, v[at]!, v[at + 1]!, v[at + 2]!, v[at + 3]!);
      else {
        out.piece(P.count);
        out.number(v[at]!);
        out.char(CLOSE_BRACE);
      }
      out.char(CLOSE_BRACE);
    }
    out.char(CLOSE_BRACKET);
    const pause = pacer.step(metrics + 1);
    if (pause) await pause;
    let written = 0;
    const viewAccs = state.views.get(bucket);
    if (viewAccs) {
      views.forEach((view, index) => {
        const acc = viewAccs.get(index);
        if (!acc) return;
        out.piece(written++ > 0 ? COMMA_PIECE : P.views);
        out.piece(P.viewName);
        out.text(JSON.stringify(view.name));
        out.piece(P.stats);
        writeTimer(out, acc.count, acc.sum, acc.min, acc.max);
        out.char(CLOSE_BRACE);
      });
      if (written > 0) out.char(CLOSE_BRACKET);
    }
    if (metrics === 0 && written === 0) {
      out.rewind(start);
      continue;
    }
    out.char(CLOSE_BRACE);
    entries++;
  }
  return entries > 0;
}

const METRIC_COUNT = METRICS.length;

/**
 * A group's cells as a dense array, row per (bucket - low) * METRIC_COUNT + metric (-1: none), when
 * it is dense enough (at most 4 slots per cell, so it never takes more than a few bytes per cell):
 * writing looks up every metric of every bucket, and a Map lookup per metric was the writer's
 * largest cost for an answer of many cells (query c). Otherwise undefined: the Map is used.
 */
interface CellIndex {
  dense: Int32Array | undefined;
  low: number;
}

function cellIndex(state: GroupState): CellIndex {
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (const key of state.cells.keys()) {
    const bucket = bucketOfCell(key);
    if (bucket < low) low = bucket;
    if (bucket > high) high = bucket;
  }
  const size = (high - low + 1) * METRIC_COUNT;
  if (state.cells.size === 0 || !(size <= 4 * state.cells.size + METRIC_COUNT)) return { dense: undefined, low: 0 };
  const dense = new Int32Array(size).fill(-1);
  const offset = low * METRIC_COUNT;
  // cellKey(bucket, metric) - low * METRIC_COUNT is the slot.
  for (const [key, row] of state.cells) dense[key - offset] = row;
  return { dense, low };
}

function cellRow(cells: CellIndex, bucket: number, metric: number): number | undefined {
  // A bucket with only oServiceLevel or view entries may lie outside the cells' range.
  const at = (bucket - cells.low) * METRIC_COUNT + metric;
  if (at < 0 || at >= cells.dense!.length) return undefined;
  const row = cells.dense![at]!;
  return row === -1 ? undefined : row;
}

/** Timer stats, keys in the wire order. */
function writeTimer(out: JsonBytes, count: number, sum: number, min: number, max: number): void {
  out.piece(P.max);
  out.number(max);
  out.piece(P.min);
  out.number(min);
  out.piece(P.timerCount);
  out.number(count);
  out.piece(P.sum);
  out.number(sum);
  out.char(CLOSE_BRACE);
}

/** oServiceLevel stats: ratio (when defined), numerator, denominator, target. */
function writeServiceLevel(out: JsonBytes, stats: ServiceLevelStats): void {
  if (stats.ratio !== undefined) {
    out.piece(P.ratio);
    out.number(stats.ratio);
    out.char(COMMA);
  } else out.char(OPEN_BRACE);
  out.piece(P.numerator);
  out.number(stats.numerator);
  out.piece(P.denominator);
  out.number(stats.denominator);
  out.piece(P.target);
  out.number(stats.target);
  out.char(CLOSE_BRACE);
}
