import { APPLIES, DIMENSION_INDEX as D, DIMENSIONS, OBSERVED_METRIC_INDEX, USER_PURPOSES } from '../catalog';
import type { ConversationRecord } from './record.schema';

/** Dimension values of one observation, indexed like DIMENSIONS; `undefined` = absent. */
export type DimValues = (string | undefined)[];

export interface Observation {
  metric: number;
  emit: number;
  value: number;
  /**
   * Read-only once built: toObservations gives observations with equal dimensions one shared array
   * (a session's metrics mostly do; sharing saves the allocation, and lets the codec skip a repeat by
   * identity). Whoever needs different dimensions builds a new array.
   */
  dims: DimValues;
}

type Segment = NonNullable<ConversationRecord['participants'][number]['sessions'][number]['segments']>[number];

/**
 * Metrics whose APPLIES rows are equal share a class: within a session, observations of one class with
 * the same segment values have equal dimensions, so they share one array.
 */
const APPLIES_CLASS: readonly number[] = (() => {
  const seen = new Map<string, number>();
  return APPLIES.map((row) => {
    const key = row.map((a) => (a ? 1 : 0)).join('');
    let c = seen.get(key);
    if (c === undefined) seen.set(key, (c = seen.size));
    return c;
  });
})();
const DIM_COUNT = DIMENSIONS.length;
const bySegmentStart = (a: Segment, b: Segment) => a.segmentStart - b.segmentStart;

/** Dims arrays already built for the current session, with what they were built from. */
interface Built {
  cls: number;
  queueId: string | undefined;
  wrapUpCode: string | undefined;
  disconnectType: string | undefined;
  dims: DimValues;
}

/**
 * The observations a conversation-detail record states, in record order: one per session metric,
 * with the dimensions the conversation, participant, session and segments give it, minus the ones
 * the catalogue says never apply to that metric. Duplicates are not removed here. Observations with
 * equal dimensions share one dims array (see Observation.dims). Metrics the catalogue does not observe
 * (flow metrics, names Genesys adds later) are skipped and counted in `skipped` by name.
 */
export function toObservations(record: ConversationRecord, skipped?: Map<string, number>): Observation[] {
  const out: Observation[] = [];
  const sessionDims: DimValues = new Array(DIM_COUNT).fill(undefined);
  sessionDims[D.conversationId] = record.conversationId;
  sessionDims[D.originatingDirection] = record.originatingDirection;
  sessionDims[D.divisionId] = record.divisionIds?.[0];
  const built: Built[] = [];

  for (const participant of record.participants) {
    for (const session of participant.sessions) {
      const metrics = session.metrics;
      if (!metrics?.length) continue;
      sessionDims[D.purpose] = participant.purpose;
      sessionDims[D.participantName] = participant.participantName;
      sessionDims[D.userId] = USER_PURPOSES.has(participant.purpose) ? participant.userId : undefined;
      sessionDims[D.mediaType] = session.mediaType;
      sessionDims[D.direction] = session.direction;
      sessionDims[D.ani] = session.ani;
      sessionDims[D.dnis] = session.dnis;
      sessionDims[D.sessionId] = session.sessionId;
      // Stable sort by start so "the latest segment that started at or before" is a backwards scan
      // (a copy only when the record's order is not already that).
      let segments: Segment[] = session.segments ?? [];
      for (let i = 1; i < segments.length; i++) {
        if (segments[i]!.segmentStart < segments[i - 1]!.segmentStart) {
          segments = segments.slice().sort(bySegmentStart);
          break;
        }
      }
      built.length = 0;
      let at = Number.NaN;
      let queueId: string | undefined;
      let wrapUpCode: string | undefined;
      let disconnectType: string | undefined;

      for (const m of metrics) {
        const metric = OBSERVED_METRIC_INDEX.get(m.name);
        if (metric === undefined) {
          skipped?.set(m.name, (skipped.get(m.name) ?? 0) + 1);
          continue;
        }
        const cls = APPLIES_CLASS[metric]!;
        // For each field, the latest segment that started at or before the emit and states it: one
        // backwards scan for the three (and none when the previous metric had the same emit).
        if (m.emitDate !== at) {
          at = m.emitDate;
          queueId = wrapUpCode = disconnectType = undefined;
          for (let i = segments.length - 1; i >= 0; i--) {
            const segment = segments[i]!;
            if (segment.segmentStart > at) continue;
            if (queueId === undefined) queueId = segment.queueId;
            if (wrapUpCode === undefined) wrapUpCode = segment.wrapUpCode;
            if (disconnectType === undefined) disconnectType = segment.disconnectType;
            if (queueId !== undefined && wrapUpCode !== undefined && disconnectType !== undefined) break;
          }
        }
        let dims: DimValues | undefined;
        for (const b of built) {
          if (b.cls === cls && b.queueId === queueId && b.wrapUpCode === wrapUpCode && b.disconnectType === disconnectType) {
            dims = b.dims;
            break;
          }
        }
        if (dims === undefined) {
          sessionDims[D.queueId] = queueId;
          sessionDims[D.wrapUpCode] = wrapUpCode;
          sessionDims[D.disconnectType] = disconnectType;
          const applies = APPLIES[metric]!;
          dims = new Array<string | undefined>(DIM_COUNT);
          for (let i = 0; i < DIM_COUNT; i++) dims[i] = applies[i] ? sessionDims[i] : undefined;
          built.push({ cls, queueId, wrapUpCode, disconnectType, dims });
        }
        out.push({ metric, emit: m.emitDate, value: m.value, dims });
      }
    }
  }
  return out;
}

/**
 * A set of observation identities inside a conversation, (sessionId, metric, emitDate), without a
 * string per observation (ingest checks every observation against its conversation's stored ones):
 * sessionId -> metric and emit as one number.
 */
export class ObservationKeys {
  private readonly bySession = new Map<string | undefined, Set<number>>();

  /** Adds the observation's identity; false when it was already there. */
  add(o: Observation): boolean {
    const session = o.dims[D.sessionId];
    let set = this.bySession.get(session);
    if (!set) this.bySession.set(session, (set = new Set()));
    // emit < 3.3e13 (ingest accepts years up to 2999) and metric < 256 keep this below 2^53.
    const key = o.emit * 256 + o.metric;
    if (set.has(key)) return false;
    set.add(key);
    return true;
  }
}
