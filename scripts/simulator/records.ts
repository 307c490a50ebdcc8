/**
 * The conversation-detail record shape of the ingest contract (a subset of Genesys' detail records), and the
 * mutable drafts the simulator builds before it cuts a conversation at the end of the window and formats it.
 */

export type MediaType = 'voice' | 'chat' | 'email' | 'callback' | 'message';
export type Direction = 'inbound' | 'outbound';
export type Purpose = 'customer' | 'ivr' | 'acd' | 'agent' | 'voicemail';
export type SegmentType = 'ivr' | 'interact' | 'alert' | 'hold' | 'wrapup' | 'dialing' | 'contacting' | 'voicemail' | 'callback';
export type DisconnectType = 'endpoint' | 'client' | 'peer' | 'system' | 'error' | 'transfer' | 'consultTransfer' | 'noAnswerTransfer';
/** Genesys' routing methods (AnalyticsSession.usedRouting, requestedRoutings[]) that the simulator uses. */
export type Routing = 'Standard' | 'Predictive' | 'Bullseye' | 'Direct';

/**
 * Architect flow metrics, as real IVR sessions carry them (test/fixtures/shared/genesys-details). They belong
 * to Genesys' flow aggregate, not the conversation aggregate: ingest counts them as skipped.
 */
export const FLOW_METRIC_NAMES = ['nFlow', 'tFlow', 'tFlowDisconnect', 'tFlowExit'] as const;
export type FlowMetricName = (typeof FLOW_METRIC_NAMES)[number];

/** Every metric the simulator emits: conversation-aggregate metrics of docs/catalogue.md, and flow metrics. */
export type MetricName =
  | FlowMetricName
  | 'nConnected'
  | 'tConnected'
  | 'tIvr'
  | 'nOffered'
  | 'tAcd'
  | 'tWait'
  | 'tAbandon'
  | 'tShortAbandon'
  | 'tFlowOut'
  | 'tAnswered'
  | 'nOverSla'
  | 'tAlert'
  | 'tNotResponding'
  | 'tTalk'
  | 'tTalkComplete'
  | 'tHeld'
  | 'tHeldComplete'
  | 'tAcw'
  | 'tHandle'
  | 'nTransferred'
  | 'nBlindTransferred'
  | 'nConsult'
  | 'nConsultTransferred'
  | 'tContacting'
  | 'tDialing'
  | 'nOutbound'
  | 'nOutboundAttempted'
  | 'nOutboundConnected'
  | 'nOutboundAbandoned'
  | 'tVoicemail'
  | 'nError'
  | 'oMessageCount'
  | 'oMessageTurn'
  | 'tAgentResponseTime'
  | 'tFirstResponse'
  | 'nCallbackScheduled'
  | 'tCallbackVirtualWait'
  | 'tCallbackAbandon'
  | 'nCallbackAttempts'
  | 'tFirstDial'
  | 'tCallbackConnect'
  | 'tFirstConnect'
  | 'tCallbackNotReached'
  | 'nCallbackOverSla';

export interface MetricRecord {
  name: MetricName;
  value: number;
  emitDate: string;
}

export interface SegmentRecord {
  segmentStart: string;
  segmentEnd?: string;
  segmentType?: SegmentType;
  queueId?: string;
  requestedRoutingSkillIds?: string[];
  requestedLanguageId?: string;
  wrapUpCode?: string;
  errorCode?: string;
  disconnectType?: DisconnectType;
}

/** The IVR flow a session ran (AnalyticsFlow), trimmed to what reports read. */
export interface FlowRecord {
  flowId: string;
  flowName: string;
  flowType: 'INBOUNDCALL';
  flowVersion: string;
  entryType: 'dnis';
  /** Set when the flow ends. */
  exitReason?: 'TRANSFER' | 'DISCONNECT' | 'FLOW_DISCONNECT';
  transferType?: 'ACD';
  startingLanguage: string;
  endingLanguage?: string;
}

export interface ProposedAgentRecord {
  proposedAgentId: string;
  agentRank: number;
}

/** Session fields beyond the ids, media and addresses; written in this order (finalizeConversation). */
export interface SessionFields {
  messageType?: string;
  provider?: string;
  remote?: string;
  sessionDnis?: string;
  addressFrom?: string;
  addressTo?: string;
  edgeId?: string;
  outboundCampaignId?: string;
  outboundContactId?: string;
  outboundContactListId?: string;
  flowInType?: string;
  flowOutType?: string;
  requestedRoutings?: Routing[];
  usedRouting?: Routing;
  activeSkillIds?: string[];
  removedSkillIds?: string[];
  proposedAgents?: ProposedAgentRecord[];
  eligibleAgentCounts?: number[];
  waitingInteractionCounts?: number[];
  flow?: FlowRecord;
}

export const SESSION_FIELD_ORDER = [
  'messageType',
  'provider',
  'remote',
  'sessionDnis',
  'addressFrom',
  'addressTo',
  'edgeId',
  'outboundCampaignId',
  'outboundContactId',
  'outboundContactListId',
  'flowInType',
  'flowOutType',
  'requestedRoutings',
  'usedRouting',
  'activeSkillIds',
  'removedSkillIds',
  'proposedAgents',
  'eligibleAgentCounts',
  'waitingInteractionCounts',
  'flow',
] as const satisfies readonly (keyof SessionFields)[];

export interface SessionRecord extends SessionFields {
  sessionId: string;
  mediaType: MediaType;
  direction: Direction;
  ani?: string;
  dnis?: string;
  segments?: SegmentRecord[];
  metrics?: MetricRecord[];
}

export interface ParticipantRecord {
  participantId: string;
  participantName?: string;
  purpose: Purpose;
  userId?: string;
  teamId?: string;
  sessions: SessionRecord[];
}

/** What Genesys sets on messaging conversations only (AnalyticsConversation.conversationInitiator's description). */
export type ConversationInitiator = 'customer' | 'agent';

export interface ConversationRecord {
  conversationId: string;
  conversationStart: string;
  conversationEnd?: string;
  originatingDirection?: Direction;
  conversationInitiator?: ConversationInitiator;
  customerParticipation?: boolean;
  externalTag?: string;
  divisionIds?: string[];
  participants: ParticipantRecord[];
}

// ---- drafts: epoch milliseconds, mutable while a conversation is being played out ----

export interface SegmentFields {
  queueId?: string | undefined;
  wrapUpCode?: string | undefined;
  errorCode?: string | undefined;
  disconnectType?: DisconnectType | undefined;
}

export interface SegmentDraft extends SegmentFields {
  type: SegmentType;
  start: number;
  end: number;
}

interface MetricDraft {
  name: MetricName;
  value: number;
  at: number;
}

export class SessionDraft {
  readonly segments: SegmentDraft[] = [];
  readonly metrics: MetricDraft[] = [];
  /** Session fields (routing, addresses, flow...) known from the start, written in SESSION_FIELD_ORDER. */
  readonly fields: SessionFields = {};
  /** Session fields that become known (or change) at a later instant: a record cut before it does not show them. */
  readonly laterFields: { key: keyof SessionFields; value: unknown; at: number }[] = [];
  /** Skills and language the contact was routed with: on every segment of this session that has a queueId. */
  skills: readonly string[] | undefined;
  languageId: string | undefined;

  constructor(
    readonly sessionId: string,
    readonly mediaType: MediaType,
    readonly direction: Direction,
    readonly ani: string | undefined,
    readonly dnis: string | undefined,
  ) {}

  segment(type: SegmentType, start: number, end: number, fields: SegmentFields = {}): SegmentDraft {
    if (!(end > start)) throw new Error(`empty ${type} segment`);
    const seg: SegmentDraft = { type, start, end, ...fields };
    this.segments.push(seg);
    return seg;
  }

  /** Sets a session field from instant `at` on (how routing ended, how the flow exited...). */
  fieldAt<K extends keyof SessionFields>(key: K, value: SessionFields[K], at: number): void {
    this.laterFields.push({ key, value, at });
  }

  /** A count: posts when the event happens. */
  count(name: MetricName, at: number): void {
    this.metrics.push({ name, value: 1, at });
  }

  /** A timer: posts when what it measures ends. */
  timer(name: MetricName, start: number, end: number): void {
    this.metrics.push({ name, value: end - start, at: end });
  }

  /** A timer whose value is not a single span (totals): posted at `at`. */
  total(name: MetricName, value: number, at: number): void {
    this.metrics.push({ name, value, at });
  }

  lastSegment(): SegmentDraft {
    const seg = this.segments[this.segments.length - 1];
    if (!seg) throw new Error('session has no segment');
    return seg;
  }
}

export interface ParticipantDraft {
  participantId: string;
  participantName: string | undefined;
  purpose: Purpose;
  userId: string | undefined;
  teamId: string | undefined;
  sessions: SessionDraft[];
}

export interface ConversationDraft {
  conversationId: string;
  start: number;
  originatingDirection: Direction;
  conversationInitiator?: ConversationInitiator;
  customerParticipation?: boolean;
  externalTag?: string;
  divisionIds: string[];
  participants: ParticipantDraft[];
}

const DAY = 86_400_000;
const PAD2: readonly string[] = Array.from({ length: 60 }, (_, i) => i.toString().padStart(2, '0'));
const PAD3: readonly string[] = Array.from({ length: 1000 }, (_, i) => i.toString().padStart(3, '0'));
const dayPrefixes = new Map<number, string>();

/** Date.prototype.toISOString, but several times faster: records carry dozens of dates each. */
export function iso(ms: number): string {
  const day = Math.floor(ms / DAY);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    prefix = new Date(day * DAY).toISOString().slice(0, 11);
    if (dayPrefixes.size > 4096) dayPrefixes.clear();
    dayPrefixes.set(day, prefix);
  }
  let rem = ms - day * DAY;
  const h = Math.floor(rem / 3_600_000);
  rem -= h * 3_600_000;
  const m = Math.floor(rem / 60_000);
  rem -= m * 60_000;
  const sec = Math.floor(rem / 1000);
  return `${prefix}${PAD2[h]}:${PAD2[m]}:${PAD2[sec]}.${PAD3[rem - sec * 1000]}Z`;
}

/**
 * Formats a draft as a record, keeping only what has happened before `cutAt`: metrics emitted at or after it
 * are dropped, segments starting at or after it are dropped, segments still open lose their end, and the
 * conversation keeps its `conversationEnd` only when everything ended before `cutAt`.
 */
export function finalizeConversation(draft: ConversationDraft, cutAt: number): ConversationRecord {
  let lastEnd = draft.start;
  const participants: ParticipantRecord[] = [];
  for (const p of draft.participants) {
    const sessions: SessionRecord[] = [];
    for (const s of p.sessions) {
      const segments: SegmentRecord[] = [];
      for (const seg of inOrder(s.segments, byStart)) {
        if (seg.end > lastEnd) lastEnd = seg.end;
        if (seg.start >= cutAt) continue;
        // Properties are assigned in a fixed order so that the JSON is byte-for-byte reproducible.
        const out: SegmentRecord = { segmentStart: iso(seg.start) };
        if (seg.end < cutAt) out.segmentEnd = iso(seg.end);
        out.segmentType = seg.type;
        if (seg.queueId !== undefined) {
          out.queueId = seg.queueId;
          if (s.skills !== undefined && s.skills.length > 0) out.requestedRoutingSkillIds = [...s.skills];
          if (s.languageId !== undefined) out.requestedLanguageId = s.languageId;
        }
        if (seg.wrapUpCode !== undefined) out.wrapUpCode = seg.wrapUpCode;
        if (seg.errorCode !== undefined) out.errorCode = seg.errorCode;
        if (seg.disconnectType !== undefined) out.disconnectType = seg.disconnectType;
        segments.push(out);
      }
      const metrics: MetricRecord[] = [];
      for (const m of inOrder(s.metrics, byEmit)) {
        if (m.at < cutAt) metrics.push({ name: m.name, value: m.value, emitDate: iso(m.at) });
      }
      if (segments.length === 0 && metrics.length === 0) continue;
      const session: SessionRecord = { sessionId: s.sessionId, mediaType: s.mediaType, direction: s.direction };
      if (s.ani !== undefined) session.ani = s.ani;
      if (s.dnis !== undefined) session.dnis = s.dnis;
      const fields = { ...s.fields } as Record<string, unknown>;
      for (const later of s.laterFields) if (later.at < cutAt) fields[later.key] = later.value;
      const out = session as unknown as Record<string, unknown>;
      for (const key of SESSION_FIELD_ORDER) if (fields[key] !== undefined) out[key] = copy(fields[key]);
      session.segments = segments;
      session.metrics = metrics;
      sessions.push(session);
    }
    if (sessions.length === 0) continue;
    const participant = { participantId: p.participantId } as ParticipantRecord;
    if (p.participantName !== undefined) participant.participantName = p.participantName;
    participant.purpose = p.purpose;
    if (p.userId !== undefined) participant.userId = p.userId;
    if (p.teamId !== undefined) participant.teamId = p.teamId;
    participant.sessions = sessions;
    participants.push(participant);
  }
  const record: ConversationRecord = {
    conversationId: draft.conversationId,
    conversationStart: iso(draft.start),
  } as ConversationRecord;
  if (lastEnd < cutAt) record.conversationEnd = iso(lastEnd);
  record.originatingDirection = draft.originatingDirection;
  if (draft.conversationInitiator !== undefined) record.conversationInitiator = draft.conversationInitiator;
  if (draft.customerParticipation !== undefined) record.customerParticipation = draft.customerParticipation;
  if (draft.externalTag !== undefined) record.externalTag = draft.externalTag;
  if (draft.divisionIds.length > 0) record.divisionIds = [...draft.divisionIds];
  record.participants = participants;
  return record;
}

/** A copy of a field value, so that records never share arrays or objects with drafts or with each other. */
function copy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copy);
  if (typeof value === 'object' && value !== null) return { ...value };
  return value;
}

const byStart = (x: SegmentDraft, y: SegmentDraft): number => x.start - y.start;
const byEmit = (x: MetricDraft, y: MetricDraft): number => x.at - y.at;

/** The items ordered by `compare`, stably; drafts are nearly always built in order, so usually no copy is made. */
function inOrder<T>(items: readonly T[], compare: (a: T, b: T) => number): readonly T[] {
  for (let i = 1; i < items.length; i++) {
    if (compare(items[i - 1]!, items[i]!) > 0) return [...items].sort(compare);
  }
  return items;
}
