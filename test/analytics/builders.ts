/**
 * Terse builders for hand-written conversation-detail records (the ingest format), so that a test
 * reads as the scenario it describes. Times are ISO strings; metrics are [name, value, emitDate].
 */
export type MetricTuple = [name: string, value: number, emitDate: string];

export interface SegmentSpec {
  start: string;
  end?: string;
  type?: string;
  queueId?: string;
  wrapUpCode?: string;
  disconnectType?: string;
}

export interface SessionSpec {
  id?: string;
  mediaType?: string;
  direction?: string;
  ani?: string;
  dnis?: string;
  segments?: SegmentSpec[];
  metrics: MetricTuple[];
}

export interface ParticipantSpec {
  purpose: string;
  userId?: string;
  name?: string;
  sessions: SessionSpec[];
}

let counter = 0;
function id(prefix: string): string {
  counter++;
  return `${prefix}-${counter.toString(16).padStart(8, '0')}-${crypto.randomUUID().slice(9)}`;
}

export function conversation(spec: {
  id?: string;
  start: string;
  end?: string;
  originatingDirection?: string;
  divisionIds?: string[];
  participants: ParticipantSpec[];
}) {
  return {
    conversationId: spec.id ?? id('conv'),
    conversationStart: spec.start,
    ...(spec.end ? { conversationEnd: spec.end } : {}),
    ...(spec.originatingDirection ? { originatingDirection: spec.originatingDirection } : {}),
    ...(spec.divisionIds ? { divisionIds: spec.divisionIds } : {}),
    participants: spec.participants.map((p) => ({
      participantId: id('part'),
      purpose: p.purpose,
      ...(p.userId ? { userId: p.userId } : {}),
      ...(p.name ? { participantName: p.name } : {}),
      sessions: p.sessions.map((s) => ({
        sessionId: s.id ?? id('sess'),
        mediaType: s.mediaType ?? 'voice',
        direction: s.direction ?? 'inbound',
        ...(s.ani ? { ani: s.ani } : {}),
        ...(s.dnis ? { dnis: s.dnis } : {}),
        segments: (s.segments ?? []).map((g) => ({
          segmentStart: g.start,
          ...(g.end ? { segmentEnd: g.end } : {}),
          ...(g.type ? { segmentType: g.type } : {}),
          ...(g.queueId ? { queueId: g.queueId } : {}),
          ...(g.wrapUpCode ? { wrapUpCode: g.wrapUpCode } : {}),
          ...(g.disconnectType ? { disconnectType: g.disconnectType } : {}),
        })),
        metrics: s.metrics.map(([name, value, emitDate]) => ({ name, value, emitDate })),
      })),
    })),
  };
}

export type Record = ReturnType<typeof conversation>;
