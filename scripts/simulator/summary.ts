/**
 * What a batch of records amounts to: counts by media type and by outcome, read back from the records'
 * metrics (not from the simulator's internals), so it also describes records from anywhere else.
 */
import { FLOW_METRIC_NAMES, type ConversationRecord } from './records';

const FLOW_METRICS: ReadonlySet<string> = new Set(FLOW_METRIC_NAMES);

export type Outcome = 'answered' | 'abandoned' | 'flowOut' | 'ivrOnly' | 'outboundConnected' | 'outboundNotConnected' | 'inProgress';

/** How the conversation's first queue (or its dialling, for outbound) ended. */
export function conversationOutcome(record: ConversationRecord): Outcome {
  const sessions = record.participants.flatMap((p) => p.sessions.map((s) => ({ purpose: p.purpose, s })));
  const has = (purpose: string, name: string): boolean =>
    sessions.some((x) => x.purpose === purpose && (x.s.metrics ?? []).some((m) => m.name === name));
  if (record.originatingDirection === 'outbound') {
    // Whoever dialled (an agent, or the dialer), the called party's session says whether they answered.
    if (has('customer', 'nConnected')) return 'outboundConnected';
    return record.conversationEnd === undefined ? 'inProgress' : 'outboundNotConnected';
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
  /** Session metrics but flow metrics, i.e. observations the ingest endpoint would store. */
  observations: number;
  /** Architect flow metrics (nFlow, tFlow...) of IVR sessions: ingest counts them as skipped. */
  flowMetrics: number;
  /** Outbound conversations of each dialer campaign, by campaign id. */
  byCampaign: Record<string, number>;
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
    flowMetrics: 0,
    byCampaign: {},
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
    let campaign: string | undefined;
    for (const p of record.participants) {
      for (const session of p.sessions) {
        campaign ??= session.outboundCampaignId;
        for (const m of session.metrics ?? []) {
          if (FLOW_METRICS.has(m.name)) s.flowMetrics++;
          else s.observations++;
        }
      }
    }
    if (campaign !== undefined) s.byCampaign[campaign] = (s.byCampaign[campaign] ?? 0) + 1;
    const first = record.participants[0]?.sessions[0];
    const media = first ? (record.originatingDirection === 'outbound' ? `${first.mediaType} (outbound)` : first.mediaType) : 'none';
    s.byMediaType[media] = (s.byMediaType[media] ?? 0) + 1;
    const outcome = conversationOutcome(record);
    s.byOutcome[outcome] = (s.byOutcome[outcome] ?? 0) + 1;
    s.firstStart ??= record.conversationStart;
    s.lastStart = record.conversationStart;
  }

  result(): SimulationSummary {
    return { ...this.s, byCampaign: { ...this.s.byCampaign }, byMediaType: { ...this.s.byMediaType }, byOutcome: { ...this.s.byOutcome } };
  }
}

export function summarize(records: Iterable<ConversationRecord>): SimulationSummary {
  const c = new SummaryCollector();
  for (const r of records) c.add(r);
  return c.result();
}
