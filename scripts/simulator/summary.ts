/**
 * What a batch of records amounts to: counts by media type and by outcome, read back from the records'
 * metrics (not from the simulator's internals), so it also describes records from anywhere else.
 */
import type { ConversationRecord } from './records';

export type Outcome = 'answered' | 'abandoned' | 'flowOut' | 'ivrOnly' | 'outboundConnected' | 'outboundNotConnected' | 'inProgress';

/** How the conversation's first queue (or its dialling, for outbound) ended. */
export function conversationOutcome(record: ConversationRecord): Outcome {
  const sessions = record.participants.flatMap((p) => p.sessions.map((s) => ({ purpose: p.purpose, s })));
  const has = (purpose: string, name: string): boolean =>
    sessions.some((x) => x.purpose === purpose && (x.s.metrics ?? []).some((m) => m.name === name));
  if (record.originatingDirection === 'outbound') {
    if (has('agent', 'nOutboundConnected')) return 'outboundConnected';
    if (has('agent', 'nOutboundAbandoned')) return 'outboundNotConnected';
    return 'inProgress';
  }
  const firstQueue = sessions.find((x) => x.purpose === 'acd');
  if (!firstQueue) return record.conversationEnd === undefined ? 'inProgress' : 'ivrOnly';
  const names = new Set((firstQueue.s.metrics ?? []).map((m) => m.name));
  if (names.has('tAbandon')) return 'abandoned';
  if (names.has('tFlowOut')) return 'flowOut';
  if (names.has('tAcd')) return 'answered';
  return 'inProgress';
}

export interface SimulationSummary {
  conversations: number;
  /** Session metrics, i.e. observations the ingest endpoint would store. */
  observations: number;
  /** Conversations cut at the end of the window. */
  inProgress: number;
  byMediaType: Record<string, number>;
  byOutcome: Record<string, number>;
  firstStart: string | undefined;
  lastStart: string | undefined;
}

export class SummaryCollector {
  private readonly s: SimulationSummary = {
    conversations: 0,
    observations: 0,
    inProgress: 0,
    byMediaType: {},
    byOutcome: {},
    firstStart: undefined,
    lastStart: undefined,
  };

  add(record: ConversationRecord): void {
    const s = this.s;
    s.conversations++;
    if (record.conversationEnd === undefined) s.inProgress++;
    for (const p of record.participants) for (const session of p.sessions) s.observations += session.metrics?.length ?? 0;
    const first = record.participants[0]?.sessions[0];
    const media = first ? (record.originatingDirection === 'outbound' ? `${first.mediaType} (outbound)` : first.mediaType) : 'none';
    s.byMediaType[media] = (s.byMediaType[media] ?? 0) + 1;
    const outcome = conversationOutcome(record);
    s.byOutcome[outcome] = (s.byOutcome[outcome] ?? 0) + 1;
    s.firstStart ??= record.conversationStart;
    s.lastStart = record.conversationStart;
  }

  result(): SimulationSummary {
    return { ...this.s, byMediaType: { ...this.s.byMediaType }, byOutcome: { ...this.s.byOutcome } };
  }
}

export function summarize(records: Iterable<ConversationRecord>): SimulationSummary {
  const c = new SummaryCollector();
  for (const r of records) c.add(r);
  return c.result();
}
