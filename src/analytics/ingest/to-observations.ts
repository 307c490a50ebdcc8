import { APPLIES, DIMENSION_INDEX as D, DIMENSIONS, METRIC_INDEX, USER_PURPOSES } from '../catalog';
import type { ConversationRecord } from './record.schema';

/** Dimension values of one observation, indexed like DIMENSIONS; `undefined` = absent. */
export type DimValues = (string | undefined)[];

export interface Observation {
  metric: number;
  emit: number;
  value: number;
  dims: DimValues;
}

type Segment = NonNullable<ConversationRecord['participants'][number]['sessions'][number]['segments']>[number];
const SEGMENT_FIELDS = [
  ['queueId', D.queueId],
  ['wrapUpCode', D.wrapUpCode],
  ['disconnectType', D.disconnectType],
] as const;

/**
 * The observations a conversation-detail record states, in record order: one per session metric,
 * with the dimensions the conversation, participant, session and segments give it, minus the ones
 * the catalogue says never apply to that metric. Duplicates are not removed here.
 */
export function toObservations(record: ConversationRecord): Observation[] {
  const out: Observation[] = [];
  const base: DimValues = new Array(DIMENSIONS.length).fill(undefined);
  base[D.conversationId] = record.conversationId;
  base[D.originatingDirection] = record.originatingDirection;
  base[D.divisionId] = record.divisionIds?.[0];

  for (const participant of record.participants) {
    for (const session of participant.sessions) {
      if (!session.metrics?.length) continue;
      const sessionDims = base.slice();
      sessionDims[D.purpose] = participant.purpose;
      sessionDims[D.participantName] = participant.participantName;
      sessionDims[D.userId] = USER_PURPOSES.has(participant.purpose) ? participant.userId : undefined;
      sessionDims[D.mediaType] = session.mediaType;
      sessionDims[D.direction] = session.direction;
      sessionDims[D.ani] = session.ani;
      sessionDims[D.dnis] = session.dnis;
      sessionDims[D.sessionId] = session.sessionId;
      // Stable sort by start so "the latest segment that started at or before" is a backwards scan.
      const segments = (session.segments ?? []).slice().sort((a, b) => a.segmentStart - b.segmentStart);

      for (const m of session.metrics) {
        const metric = METRIC_INDEX.get(m.name)!;
        const dims = sessionDims.slice();
        for (const [field, index] of SEGMENT_FIELDS) dims[index] = latestSegmentValue(segments, m.emitDate, field);
        const applies = APPLIES[metric]!;
        for (let i = 0; i < dims.length; i++) if (!applies[i]) dims[i] = undefined;
        out.push({ metric, emit: m.emitDate, value: m.value, dims });
      }
    }
  }
  return out;
}

function latestSegmentValue(segments: Segment[], at: number, field: 'queueId' | 'wrapUpCode' | 'disconnectType'): string | undefined {
  for (let i = segments.length - 1; i >= 0; i--) {
    const segment = segments[i]!;
    if (segment.segmentStart <= at && segment[field] !== undefined) return segment[field];
  }
  return undefined;
}

/** The identity of an observation inside its conversation: (sessionId, metric, emitDate). */
export function observationKey(o: Observation): string {
  return `${o.dims[D.sessionId]}\u0000${o.metric}\u0000${o.emit}`;
}

/**
 * A set of observationKey identities without building a string per observation (ingest checks every
 * observation against its conversation's stored ones): sessionId -> metric and emit as one number.
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
