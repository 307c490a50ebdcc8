import {
  APPLIES,
  DIMENSION_DEFS,
  DIMENSION_INDEX as D,
  DIMENSIONS,
  OBSERVED_METRIC_INDEX,
  USER_PURPOSES,
  type DimensionDef,
  type FieldKind,
} from '../catalog';
import type { ConversationRecord } from './record.schema';

/** A dimension's value: text, or for a multi-valued dimension its distinct values in record order (never empty). */
export type DimValue = string | readonly string[];
/** Dimension values of one observation, indexed like DIMENSIONS; `undefined` = absent. */
export type DimValues = (DimValue | undefined)[];

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

type Participant = ConversationRecord['participants'][number];
type Session = Participant['sessions'][number];
type Segment = NonNullable<Session['segments']>[number];
type Fields = { readonly [field: string]: unknown };

/** One dimension read from a record field: its index, the field (`list.item` for object lists) and the field's kind. */
interface Read {
  index: number;
  field: string;
  item?: string;
  kind: FieldKind;
}

const DEFS: readonly DimensionDef[] = DIMENSION_DEFS;

function readsOf(level: DimensionDef['level']): Read[] {
  const out: Read[] = [];
  DEFS.forEach((d, index) => {
    if (d.level !== level || d.field === undefined) return;
    const [field, item] = d.field.split('.') as [string, string | undefined];
    out.push({ index, field, ...(item === undefined ? {} : { item }), kind: d.kind! });
  });
  return out;
}

const CONVERSATION_READS = readsOf('conversation');
const PARTICIPANT_READS = readsOf('participant');
const SESSION_READS = readsOf('session');
const SEGMENT_READS = readsOf('segment');
const DIM_COUNT = DIMENSIONS.length;

/** Distinct values in record order; an empty list is absent. */
function distinct(values: readonly string[]): readonly string[] | undefined {
  if (values.length === 0) return undefined;
  if (values.length === 1) return values;
  const out = [...new Set(values)];
  return out.length === values.length ? values : out;
}

/** A field's value as a dimension value (booleans "true"/"false", integers in decimal). */
function fieldValue(source: Fields, read: Read): DimValue | undefined {
  const raw = source[read.field];
  if (raw === undefined) return undefined;
  if (read.item !== undefined) {
    const values: string[] = [];
    for (const element of raw as Fields[]) {
      const v = element[read.item];
      if (v !== undefined) values.push(String(v));
    }
    return distinct(values);
  }
  switch (read.kind) {
    case 'string':
      return raw as string;
    case 'boolean':
    case 'integer':
      return String(raw);
    case 'strings':
      return distinct(raw as string[]);
    case 'integers':
      return distinct((raw as number[]).map(String));
    case 'properties':
      // `property NUL value`: a property predicate matches the name, then the value (query/filter.ts).
      return distinct((raw as { property: string; value?: string }[]).map((p) => `${p.property}\u0000${p.value ?? ''}`));
  }
}

function fill(out: DimValues, source: Fields, reads: readonly Read[]): void {
  for (const read of reads) out[read.index] = fieldValue(source, read);
}

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
const bySegmentStart = (a: Segment, b: Segment) => a.segmentStart - b.segmentStart;

/** Dims arrays already built for the current session, with what they were built from. */
interface Built {
  cls: number;
  /** The segment-level values (SEGMENT_READS, then firstQueue) they were built with. */
  atEmit: DimValues;
  dims: DimValues;
}

/** The queue the conversation was first offered to (its acd participants' earliest segment naming one): what firstQueue compares with. */
function firstQueueOf(record: ConversationRecord): string | undefined {
  let first: string | undefined;
  let at = Number.POSITIVE_INFINITY;
  for (const participant of record.participants) {
    if (participant.purpose !== 'acd') continue;
    for (const session of participant.sessions)
      for (const segment of session.segments ?? []) {
        const queue = segment.queueId as string | undefined;
        if (queue !== undefined && segment.segmentStart < at) {
          at = segment.segmentStart;
          first = queue;
        }
      }
  }
  return first;
}

/** The first queue a session's segments name. */
function sessionQueue(session: Session): string | undefined {
  for (const segment of session.segments ?? []) if (segment.queueId !== undefined) return segment.queueId as string;
  return undefined;
}

/**
 * The derived dimensions of a session (docs/catalogue.md, "Dimensions with no record field"): each a
 * choice where Genesys says what a dimension means but the record has no field for it.
 */
function deriveSession(out: DimValues, participant: Participant, s: number, acdQueuesBefore: Set<string>): void {
  const session = participant.sessions[s]!;
  const requested = out[D.requestedRouting] as readonly string[] | undefined;
  out[D.activeRouting] = (session.usedRouting as string | undefined) ?? requested?.[requested.length - 1];
  const converting = session.segments?.some((g) => g.segmentType === 'converting') === true;
  out[D.convertedFrom] = converting ? session.mediaType : undefined;
  out[D.convertedTo] = converting ? participant.sessions[s + 1]?.mediaType : undefined;
  out[D.videoPresent] = session.videoRoomId !== undefined || session.videoAddressSelf !== undefined ? 'true' : undefined;
  if (participant.purpose === 'acd') {
    const queue = sessionQueue(session);
    out[D.reoffered] = queue !== undefined && acdQueuesBefore.has(queue) ? 'true' : 'false';
    if (queue !== undefined) acdQueuesBefore.add(queue);
  } else out[D.reoffered] = undefined;
}

/**
 * The observations a conversation-detail record states, in record order: one per session metric of
 * the catalogue, with the dimensions its conversation, participant, session and segments give it
 * (record-fields.ts; segment-level ones from the latest segment of its session that started at or
 * before its emit and states them), minus the ones the catalogue says never apply to that metric.
 * Duplicates are not removed here. Observations with equal dimensions share one dims array (see
 * Observation.dims). Metrics the catalogue does not observe (flow metrics, names Genesys adds later)
 * are skipped and counted in `skipped` by name.
 */
export function toObservations(record: ConversationRecord, skipped?: Map<string, number>): Observation[] {
  const out: Observation[] = [];
  const sessionDims: DimValues = new Array(DIM_COUNT).fill(undefined);
  fill(sessionDims, record, CONVERSATION_READS);
  const firstQueue = firstQueueOf(record);
  // A conversation that met a queue (an acd participant) is contact-centre work; any other is enterprise (user to user).
  const contactCenter = record.participants.some((p) => p.purpose === 'acd');
  sessionDims[D.interactionType] = contactCenter ? 'contactCenter' : 'enterprise';
  const acdQueuesBefore = new Set<string>();
  const built: Built[] = [];
  const atEmit: DimValues = new Array(SEGMENT_READS.length + 1);

  for (const participant of record.participants) {
    fill(sessionDims, participant, PARTICIPANT_READS);
    sessionDims[D.purpose] = participant.purpose;
    // userId only where a user took part (agent, user): a voicemail or acd participant's id is not an agent's.
    if (!USER_PURPOSES.has(participant.purpose)) sessionDims[D.userId] = undefined;
    sessionDims[D.canonicalExternalContactId] = sessionDims[D.externalContactId];
    for (let s = 0; s < participant.sessions.length; s++) {
      const session = participant.sessions[s]!;
      fill(sessionDims, session, SESSION_READS);
      sessionDims[D.mediaType] = session.mediaType;
      sessionDims[D.sessionId] = session.sessionId;
      deriveSession(sessionDims, participant, s, acdQueuesBefore);
      const metrics = session.metrics;
      if (!metrics?.length) continue;
      // Stable sort by start so "the latest segment that started at or before" is a backwards scan
      // (a copy only when the record's order is not already that).
      let segments: Segment[] = session.segments ?? [];
      for (let i = 1; i < segments.length; i++) {
        if (segments[i]!.segmentStart < segments[i - 1]!.segmentStart) {
          segments = segments.slice().sort(bySegmentStart);
          break;
        }
      }
      // Each segment's segment-level values, read once.
      const segmentValues = segments.map((segment) => SEGMENT_READS.map((read) => fieldValue(segment, read)));
      built.length = 0;
      let at = Number.NaN;

      for (const m of metrics) {
        const metric = OBSERVED_METRIC_INDEX.get(m.name);
        if (metric === undefined) {
          skipped?.set(m.name, (skipped.get(m.name) ?? 0) + 1);
          continue;
        }
        const cls = APPLIES_CLASS[metric]!;
        // For each segment-level field, the latest segment that started at or before the emit and
        // states it: one backwards scan (none when the previous metric had the same emit).
        if (m.emitDate !== at) {
          at = m.emitDate;
          atEmit.fill(undefined);
          let missing = SEGMENT_READS.length;
          for (let i = segments.length - 1; i >= 0 && missing > 0; i--) {
            if (segments[i]!.segmentStart > at) continue;
            const values = segmentValues[i]!;
            for (let k = 0; k < values.length; k++) {
              if (atEmit[k] === undefined && values[k] !== undefined) {
                atEmit[k] = values[k];
                missing--;
              }
            }
          }
          const queue = atEmit[SEGMENT_QUEUE] as string | undefined;
          atEmit[SEGMENT_READS.length] = queue === undefined || firstQueue === undefined ? undefined : String(queue === firstQueue);
        }
        let dims: DimValues | undefined;
        for (const b of built) {
          if (b.cls === cls && sameValues(b.atEmit, atEmit)) {
            dims = b.dims;
            break;
          }
        }
        if (dims === undefined) {
          for (let k = 0; k < SEGMENT_READS.length; k++) sessionDims[SEGMENT_READS[k]!.index] = atEmit[k];
          sessionDims[D.firstQueue] = atEmit[SEGMENT_READS.length];
          const applies = APPLIES[metric]!;
          dims = new Array<DimValue | undefined>(DIM_COUNT);
          for (let i = 0; i < DIM_COUNT; i++) dims[i] = applies[i] ? sessionDims[i] : undefined;
          built.push({ cls, atEmit: atEmit.slice(), dims });
        }
        out.push({ metric, emit: m.emitDate, value: m.value, dims });
      }
    }
  }
  return out;
}

const SEGMENT_QUEUE = SEGMENT_READS.findIndex((r) => r.index === D.queueId);

function sameValues(a: DimValues, b: DimValues): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
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
    const session = o.dims[D.sessionId] as string | undefined;
    let set = this.bySession.get(session);
    if (!set) this.bySession.set(session, (set = new Set()));
    // emit < 3.3e13 (ingest accepts years up to 2999) and metric < 256 keep this below 2^53.
    const key = o.emit * 256 + o.metric;
    if (set.has(key)) return false;
    set.add(key);
    return true;
  }
}
