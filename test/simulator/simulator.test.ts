import { beforeAll, describe, expect, it } from 'vitest';
import { fastestMs, LINEAR_RATIO_MAX } from '../support/growth';
import {
  QUEUES,
  simulateConversations,
  simulationConfig,
  summarize,
  type ConversationRecord,
  type SimulationOptions,
} from '../../scripts/simulator/index';
import reference from '../fixtures/shared/reference/genesys-aggregate-catalogue.json';
import models from '../fixtures/shared/genesys-details/models.json';

// The record's vocabulary, from Genesys' own lists rather than from src/ (whose catalogue is being extended):
// metric names from the SDK's aggregate query (shared/reference), enums from the record model (models.json).
const REFERENCE = reference as { metrics: string[] };
const MODELS = models as unknown as { models: Record<string, { fields: Record<string, { enum?: string[] }> }> };
/** Flow metrics as real IVR sessions carry them (fixtures): they belong to the flow aggregate, not this one. */
const FLOW_METRICS = ['nFlow', 'tFlow', 'tFlowDisconnect', 'tFlowExit'];
const METRIC_NAMES = [...REFERENCE.metrics, ...FLOW_METRICS];
const enumOf = (model: string, field: string): string[] => MODELS.models[model]!.fields[field]!.enum!;
const MEDIA_TYPES = enumOf('AnalyticsSession', 'mediaType');
const DIRECTIONS = enumOf('AnalyticsSession', 'direction');
const PURPOSES = enumOf('AnalyticsParticipant', 'purpose');
const ROUTINGS = enumOf('AnalyticsSession', 'usedRouting');
const INITIATORS = enumOf('AnalyticsConversation', 'conversationInitiator');
const FLOW_TYPES = enumOf('AnalyticsFlow', 'flowType');
const ENTRY_TYPES = enumOf('AnalyticsFlow', 'entryType');
const DISCONNECT_TYPES = enumOf('AnalyticsConversationSegment', 'disconnectType');
const SEGMENT_TYPES = enumOf('AnalyticsConversationSegment', 'segmentType');

/** docs/catalogue.md: the participant purposes that emit each metric the simulator emits ("agent" stands for agent and user). */
const EMITTED_BY: Record<string, string[]> = {
  nConnected: ['customer'],
  tConnected: ['customer'],
  tIvr: ['ivr'],
  nOffered: ['acd'],
  tAcd: ['acd'],
  tWait: ['acd'],
  tAbandon: ['acd'],
  tShortAbandon: ['acd'],
  tFlowOut: ['acd'],
  tAnswered: ['agent'],
  nOverSla: ['agent'],
  tAlert: ['agent'],
  tNotResponding: ['agent'],
  tTalk: ['agent'],
  tTalkComplete: ['agent'],
  tHeld: ['agent'],
  tHeldComplete: ['agent'],
  tAcw: ['agent'],
  tHandle: ['agent'],
  nTransferred: ['agent'],
  nBlindTransferred: ['agent'],
  nConsult: ['agent'],
  nConsultTransferred: ['agent'],
  tContacting: ['agent'],
  tDialing: ['agent'],
  nOutbound: ['agent'],
  nOutboundAttempted: ['customer', 'acd', 'agent'],
  nOutboundConnected: ['customer', 'acd', 'agent'],
  nOutboundAbandoned: ['customer', 'acd'],
  tVoicemail: ['voicemail'],
  nError: ['agent', 'customer', 'external'],
  oMessageCount: ['agent', 'customer'],
  oMessageTurn: ['agent'],
  tAgentResponseTime: ['agent'],
  tFirstResponse: ['agent'],
  nCallbackScheduled: ['acd', 'customer'],
  tCallbackVirtualWait: ['acd'],
  tCallbackAbandon: ['acd'],
  nCallbackAttempts: ['agent'],
  tFirstDial: ['agent'],
  tCallbackConnect: ['agent', 'acd'],
  tFirstConnect: ['agent'],
  tCallbackNotReached: ['agent', 'acd'],
  nCallbackOverSla: ['agent'],
  // Flow metrics: on IVR sessions (fixture census).
  nFlow: ['ivr'],
  tFlow: ['ivr'],
  tFlowDisconnect: ['ivr'],
  tFlowExit: ['ivr'],
};
/** docs/catalogue.md: metrics restricted to some media types. */
const MEDIA_OF: Record<string, string[]> = {
  tContacting: ['voice', 'callback'],
  tDialing: ['voice', 'callback'],
  nOutboundAttempted: ['voice', 'message', 'email'],
  nOutboundConnected: ['voice', 'message', 'email'],
  nOutboundAbandoned: ['voice'],
  tVoicemail: ['voice'],
  oMessageCount: ['message', 'chat', 'email'],
  oMessageTurn: ['message', 'chat'],
  tAgentResponseTime: ['message', 'chat', 'email'],
  tFirstResponse: ['message', 'chat', 'email'],
  nCallbackScheduled: ['callback'],
  tCallbackVirtualWait: ['callback'],
  tCallbackAbandon: ['callback'],
  nCallbackAttempts: ['callback'],
  tFirstDial: ['callback'],
  tCallbackConnect: ['callback'],
  tFirstConnect: ['callback'],
  tCallbackNotReached: ['callback'],
  nCallbackOverSla: ['callback'],
};

// A Monday, 00:00 UTC: a seven-day window is exactly the week from Monday 9 to Sunday 15 November 2026.
const END = new Date('2026-11-16T00:00:00.000Z');
const DAY = 86_400_000;
const WEEK: SimulationOptions = { days: 7, conversations: 3000, seed: 42, end: END };

const run = (opts: SimulationOptions): ConversationRecord[] => [...simulateConversations(opts)];
const ms = (iso: string): number => Date.parse(iso);

type Json = Record<string, unknown>;
type Session = ConversationRecord['participants'][number]['sessions'][number];
type Segment = NonNullable<Session['segments']>[number];

// ---- an independent reading of RECORDS.md: what a record may and must contain ----

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function shapeProblems(record: unknown): string[] {
  const problems: string[] = [];
  const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
  const only = (o: Json, path: string, allowed: string[]): void => {
    for (const k of Object.keys(o)) if (!allowed.includes(k)) problems.push(`${path}.${k} is not in the contract`);
  };
  const date = (v: unknown, path: string): void => {
    if (typeof v !== 'string' || !ISO_Z.test(v) || new Date(v).toISOString() !== v) problems.push(`${path} is not an ISO date with Z`);
  };
  const uuid = (v: unknown, path: string): void => {
    if (typeof v !== 'string' || !UUID.test(v)) problems.push(`${path} is not a UUID`);
  };
  const text = (v: unknown, path: string): void => {
    if (typeof v !== 'string' || v === '') problems.push(`${path} is not a non-empty string`);
  };
  const oneOf = (v: unknown, values: readonly string[], path: string): void => {
    if (typeof v !== 'string' || !values.includes(v)) problems.push(`${path} = ${String(v)} is not one of ${values.join(', ')}`);
  };
  const list = (v: unknown, path: string, nonEmpty: boolean): unknown[] => {
    if (!Array.isArray(v) || (nonEmpty && v.length === 0)) {
      problems.push(`${path} is not a${nonEmpty ? ' non-empty' : 'n'} array`);
      return [];
    }
    return v;
  };
  const count = (v: unknown, path: string, min: number): void => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) problems.push(`${path} is not an integer >= ${min}`);
  };
  const uuids = (v: unknown, path: string): void => {
    const items = list(v, path, true);
    items.forEach((x, i) => uuid(x, `${path}[${i}]`));
    if (new Set(items).size !== items.length) problems.push(`${path} repeats an id`);
  };

  if (!isObject(record)) return ['record is not an object'];
  only(record, 'record', [
    'conversationId',
    'conversationStart',
    'conversationEnd',
    'originatingDirection',
    'conversationInitiator',
    'customerParticipation',
    'externalTag',
    'divisionIds',
    'participants',
  ]);
  uuid(record.conversationId, 'conversationId');
  date(record.conversationStart, 'conversationStart');
  if ('conversationEnd' in record) date(record.conversationEnd, 'conversationEnd');
  if ('originatingDirection' in record) oneOf(record.originatingDirection, DIRECTIONS, 'originatingDirection');
  if ('conversationInitiator' in record) oneOf(record.conversationInitiator, INITIATORS, 'conversationInitiator');
  if ('customerParticipation' in record && typeof record.customerParticipation !== 'boolean')
    problems.push('customerParticipation is not a boolean');
  if ('externalTag' in record) text(record.externalTag, 'externalTag');
  if ('divisionIds' in record) uuids(record.divisionIds, 'divisionIds');
  list(record.participants, 'participants', true).forEach((p, i) => {
    const pp = `participants[${i}]`;
    if (!isObject(p)) return void problems.push(`${pp} is not an object`);
    only(p, pp, ['participantId', 'participantName', 'purpose', 'userId', 'teamId', 'sessions']);
    uuid(p.participantId, `${pp}.participantId`);
    if ('participantName' in p) text(p.participantName, `${pp}.participantName`);
    oneOf(p.purpose, PURPOSES, `${pp}.purpose`);
    if ('userId' in p) uuid(p.userId, `${pp}.userId`);
    if ('teamId' in p) uuid(p.teamId, `${pp}.teamId`);
    // Agents are users with a team; a person's voicemail box is theirs (it carries their userId, not a team).
    if (p.purpose === 'agent' && !('userId' in p && 'teamId' in p)) problems.push(`${pp}: an agent carries a userId and a teamId`);
    if (p.purpose !== 'agent' && p.purpose !== 'voicemail' && 'userId' in p)
      problems.push(`${pp}: a ${String(p.purpose)} carries a userId`);
    if (p.purpose !== 'agent' && 'teamId' in p) problems.push(`${pp}: only agents carry a teamId`);
    list(p.sessions, `${pp}.sessions`, true).forEach((s, j) => {
      const sp = `${pp}.sessions[${j}]`;
      if (!isObject(s)) return void problems.push(`${sp} is not an object`);
      only(s, sp, [
        'sessionId',
        'mediaType',
        'direction',
        'ani',
        'dnis',
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
        'segments',
        'metrics',
      ]);
      uuid(s.sessionId, `${sp}.sessionId`);
      oneOf(s.mediaType, MEDIA_TYPES, `${sp}.mediaType`);
      oneOf(s.direction, DIRECTIONS, `${sp}.direction`);
      for (const f of [
        'ani',
        'dnis',
        'messageType',
        'provider',
        'remote',
        'sessionDnis',
        'addressFrom',
        'addressTo',
        'flowInType',
        'flowOutType',
      ]) {
        if (f in s) text(s[f], `${sp}.${f}`);
      }
      for (const f of ['edgeId', 'outboundCampaignId', 'outboundContactListId']) if (f in s) uuid(s[f], `${sp}.${f}`);
      if ('outboundContactId' in s && !/^[0-9a-f]{32}$/.test(String(s.outboundContactId)))
        problems.push(`${sp}.outboundContactId is not 32 hex digits`);
      if ('requestedRoutings' in s)
        list(s.requestedRoutings, `${sp}.requestedRoutings`, true).forEach((r, i) => oneOf(r, ROUTINGS, `${sp}.requestedRoutings[${i}]`));
      if ('usedRouting' in s) oneOf(s.usedRouting, ROUTINGS, `${sp}.usedRouting`);
      for (const f of ['activeSkillIds', 'removedSkillIds']) if (f in s) uuids(s[f], `${sp}.${f}`);
      if ('proposedAgents' in s) {
        list(s.proposedAgents, `${sp}.proposedAgents`, true).forEach((a, i) => {
          const ap = `${sp}.proposedAgents[${i}]`;
          if (!isObject(a)) return void problems.push(`${ap} is not an object`);
          only(a, ap, ['proposedAgentId', 'agentRank']);
          uuid(a.proposedAgentId, `${ap}.proposedAgentId`);
          count(a.agentRank, `${ap}.agentRank`, 1);
        });
      }
      for (const f of ['eligibleAgentCounts', 'waitingInteractionCounts']) {
        if (f in s) list(s[f], `${sp}.${f}`, true).forEach((n, i) => count(n, `${sp}.${f}[${i}]`, 0));
      }
      if ('flow' in s) {
        const flow = s.flow;
        if (!isObject(flow)) problems.push(`${sp}.flow is not an object`);
        else {
          only(flow, `${sp}.flow`, [
            'flowId',
            'flowName',
            'flowType',
            'flowVersion',
            'entryType',
            'exitReason',
            'transferType',
            'startingLanguage',
            'endingLanguage',
          ]);
          uuid(flow.flowId, `${sp}.flow.flowId`);
          oneOf(flow.flowType, FLOW_TYPES, `${sp}.flow.flowType`);
          oneOf(flow.entryType, ENTRY_TYPES, `${sp}.flow.entryType`);
          for (const f of ['flowName', 'flowVersion', 'exitReason', 'transferType', 'startingLanguage', 'endingLanguage']) {
            if (f in flow) text(flow[f], `${sp}.flow.${f}`);
          }
        }
      }
      if ('segments' in s) {
        list(s.segments, `${sp}.segments`, false).forEach((g, k) => {
          const gp = `${sp}.segments[${k}]`;
          if (!isObject(g)) return void problems.push(`${gp} is not an object`);
          only(g, gp, [
            'segmentStart',
            'segmentEnd',
            'segmentType',
            'queueId',
            'requestedRoutingSkillIds',
            'requestedLanguageId',
            'wrapUpCode',
            'errorCode',
            'disconnectType',
          ]);
          date(g.segmentStart, `${gp}.segmentStart`);
          if ('segmentEnd' in g) {
            date(g.segmentEnd, `${gp}.segmentEnd`);
            if (String(g.segmentEnd) <= String(g.segmentStart)) problems.push(`${gp} ends before it starts`);
          }
          oneOf(g.segmentType, SEGMENT_TYPES, `${gp}.segmentType`);
          if ('disconnectType' in g) oneOf(g.disconnectType, DISCONNECT_TYPES, `${gp}.disconnectType`);
          for (const f of ['wrapUpCode', 'errorCode'] as const) if (f in g) text(g[f], `${gp}.${f}`);
          if ('queueId' in g) uuid(g.queueId, `${gp}.queueId`);
          if ('requestedRoutingSkillIds' in g) uuids(g.requestedRoutingSkillIds, `${gp}.requestedRoutingSkillIds`);
          if ('requestedLanguageId' in g) uuid(g.requestedLanguageId, `${gp}.requestedLanguageId`);
          if (!('queueId' in g) && ('requestedRoutingSkillIds' in g || 'requestedLanguageId' in g))
            problems.push(`${gp}: skills or language without a queue`);
        });
      }
      if ('metrics' in s) {
        list(s.metrics, `${sp}.metrics`, false).forEach((m, k) => {
          const mp = `${sp}.metrics[${k}]`;
          if (!isObject(m)) return void problems.push(`${mp} is not an object`);
          only(m, mp, ['name', 'value', 'emitDate']);
          oneOf(m.name, METRIC_NAMES, `${mp}.name`);
          if (typeof m.value !== 'number' || !Number.isInteger(m.value) || m.value < 0) problems.push(`${mp}.value is not an integer >= 0`);
          if (typeof m.name === 'string' && m.name.startsWith('n') && m.value !== 1) problems.push(`${mp}: a count is 1`);
          date(m.emitDate, `${mp}.emitDate`);
        });
      }
    });
  });
  return problems;
}

// ---- helpers over typed records ----

interface Visit {
  record: ConversationRecord;
  purpose: string;
  session: Session;
}

function* sessionsOf(records: readonly ConversationRecord[]): Generator<Visit> {
  for (const record of records) {
    for (const p of record.participants) for (const session of p.sessions) yield { record, purpose: p.purpose, session };
  }
}

const metricsNamed = (s: Session, name: string) => (s.metrics ?? []).filter((m) => m.name === name);
const sumOf = (s: Session, name: string): number => metricsNamed(s, name).reduce((t, m) => t + m.value, 0);

/** RECORDS.md's lookup: the latest segment that started at or before the emit time and carries the field. */
function lookup(s: Session, field: 'queueId' | 'wrapUpCode' | 'disconnectType', emitDate: string): string | undefined {
  let best: Segment | undefined;
  for (const seg of s.segments ?? []) {
    if (seg[field] === undefined || ms(seg.segmentStart) > ms(emitDate)) continue;
    if (!best || ms(seg.segmentStart) >= ms(best.segmentStart)) best = seg;
  }
  return best?.[field];
}

const queueById = new Map(QUEUES.map((q) => [q.id, q]));

describe('the contact-center simulator', () => {
  let week: ConversationRecord[];
  beforeAll(() => {
    week = run(WEEK);
  });

  it('produces exactly the requested number of conversations, in conversation-start order', () => {
    expect(week).toHaveLength(3000);
    for (let i = 1; i < week.length; i++) {
      expect(ms(week[i]!.conversationStart)).toBeGreaterThanOrEqual(ms(week[i - 1]!.conversationStart));
    }
  });

  it('gives identical records for the same options and different ones for another seed', () => {
    const again = run(WEEK);
    expect(JSON.stringify(again)).toBe(JSON.stringify(week));
    const other = run({ ...WEEK, seed: 43 });
    expect(other).toHaveLength(3000);
    expect(JSON.stringify(other)).not.toBe(JSON.stringify(week));
    expect(other[0]!.conversationId).not.toBe(week[0]!.conversationId);
  });

  it('writes records that follow the ingest contract', () => {
    for (const record of week) {
      const problems = shapeProblems(JSON.parse(JSON.stringify(record)));
      expect(problems, record.conversationId).toEqual([]);
    }
  });

  it('emits each metric from a participant and on a media type that docs/catalogue.md gives it', () => {
    const wrong = new Set<string>();
    for (const { purpose, session } of sessionsOf(week)) {
      for (const m of session.metrics ?? []) {
        if (!(EMITTED_BY[m.name] ?? []).includes(purpose)) wrong.add(`${m.name} from ${purpose}`);
        const media = MEDIA_OF[m.name];
        if (media && !media.includes(session.mediaType)) wrong.add(`${m.name} on ${session.mediaType}`);
      }
    }
    expect([...wrong]).toEqual([]);
  });

  it('emits every metric it knows somewhere in a week of traffic, and only metrics Genesys has', () => {
    const seen = new Set<string>();
    for (const { session } of sessionsOf(week)) for (const m of session.metrics ?? []) seen.add(m.name);
    expect([...seen].sort()).toEqual(Object.keys(EMITTED_BY).sort());
    for (const name of seen) expect(METRIC_NAMES, name).toContain(name);
    // Flow metrics are not conversation-aggregate metrics: the summary keeps them apart.
    const summary = summarize(week);
    let flow = 0;
    let other = 0;
    for (const { session } of sessionsOf(week)) {
      for (const m of session.metrics ?? []) {
        if (FLOW_METRICS.includes(m.name)) flow++;
        else other++;
      }
    }
    expect(summary.flowMetrics).toBe(flow);
    expect(summary.observations).toBe(other);
  });

  it('keeps every start and every emitDate inside [end - days, end)', () => {
    const from = END.getTime() - 7 * DAY;
    for (const { record, session } of sessionsOf(week)) {
      expect(ms(record.conversationStart)).toBeGreaterThanOrEqual(from);
      for (const m of session.metrics ?? []) {
        expect(ms(m.emitDate)).toBeGreaterThanOrEqual(ms(record.conversationStart));
        expect(ms(m.emitDate)).toBeLessThan(END.getTime());
      }
      for (const seg of session.segments ?? []) expect(ms(seg.segmentStart)).toBeGreaterThanOrEqual(ms(record.conversationStart));
    }
  });

  it('never repeats an observation identity (conversation, session, metric, emitDate)', () => {
    const keys = new Set<string>();
    let count = 0;
    for (const { record, session } of sessionsOf(week)) {
      for (const m of session.metrics ?? []) {
        keys.add(`${record.conversationId}|${session.sessionId}|${m.name}|${m.emitDate}`);
        count++;
      }
    }
    expect(keys.size).toBe(count);
  });

  it('cuts conversations still going at the end: no conversationEnd and an open segment', () => {
    // One busy day: the last minutes hold conversations that are still in progress.
    const day = run({ days: 1, conversations: 2000, seed: 7, end: END });
    const cut = day.filter((r) => r.conversationEnd === undefined);
    expect(cut.length).toBeGreaterThan(0);
    for (const record of day) {
      const segments = record.participants.flatMap((p) => p.sessions.flatMap((s) => s.segments ?? []));
      if (record.conversationEnd === undefined) {
        expect(segments.some((g) => g.segmentEnd === undefined)).toBe(true);
      } else {
        expect(ms(record.conversationEnd)).toBeLessThan(END.getTime());
        for (const g of segments) {
          expect(g.segmentEnd).toBeDefined();
          expect(ms(g.segmentEnd!)).toBeLessThanOrEqual(ms(record.conversationEnd));
        }
      }
    }
  });

  it('makes tHandle the sum of talk, hold and after-call work in every agent session', () => {
    let checked = 0;
    for (const { purpose, session } of sessionsOf(week)) {
      if (purpose !== 'agent') continue;
      const handle = metricsNamed(session, 'tHandle');
      if (handle.length === 0) continue;
      expect(handle).toHaveLength(1);
      expect(metricsNamed(session, 'tAcw')).toHaveLength(1);
      expect(handle[0]!.value).toBe(sumOf(session, 'tTalk') + sumOf(session, 'tHeld') + sumOf(session, 'tAcw'));
      if (metricsNamed(session, 'tTalkComplete').length > 0) expect(sumOf(session, 'tTalkComplete')).toBe(sumOf(session, 'tTalk'));
      if (metricsNamed(session, 'tHeldComplete').length > 0) expect(sumOf(session, 'tHeldComplete')).toBe(sumOf(session, 'tHeld'));
      checked++;
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('ends every offer to a queue as exactly one of answered, abandoned or flowed out', () => {
    const outcomes = { answered: 0, abandoned: 0, flowOut: 0 };
    for (const record of week) {
      const sessions = record.participants.flatMap((p) => p.sessions.map((s) => ({ purpose: p.purpose, s })));
      for (const { purpose, s: acd } of sessions) {
        if (purpose !== 'acd' || metricsNamed(acd, 'tAcd').length === 0) continue; // still waiting at the end
        const seg = acd.segments![0]!;
        const left = seg.segmentEnd!;
        const answered = sessions.filter(
          (x) =>
            x.purpose === 'agent' &&
            metricsNamed(x.s, 'tAnswered').some((m) => m.emitDate === left) &&
            x.s.segments!.some((g) => g.queueId === seg.queueId),
        ).length;
        const abandoned = metricsNamed(acd, 'tAbandon').length;
        const flowOut = metricsNamed(acd, 'tFlowOut').length;
        expect(metricsNamed(acd, 'nOffered')).toHaveLength(1);
        expect(answered + abandoned + flowOut).toBe(1);
        // Everything the queue times is the time from entry to leaving.
        const waited = ms(left) - ms(seg.segmentStart);
        for (const name of ['tAcd', 'tWait', 'tAbandon', 'tFlowOut']) for (const m of metricsNamed(acd, name)) expect(m.value).toBe(waited);
        outcomes.answered += answered;
        outcomes.abandoned += abandoned;
        outcomes.flowOut += flowOut;
      }
    }
    expect(outcomes.answered).toBeGreaterThan(outcomes.abandoned);
    expect(outcomes.abandoned).toBeGreaterThan(0);
    expect(outcomes.flowOut).toBeGreaterThan(0);
  });

  it("flags short abandons and answers over the SLA against the queue's thresholds", () => {
    let over = 0;
    let short = 0;
    for (const { purpose, session } of sessionsOf(week)) {
      if (purpose === 'acd') {
        const queue = queueById.get(session.segments![0]!.queueId!)!;
        for (const a of metricsNamed(session, 'tAbandon')) {
          const flagged = metricsNamed(session, 'tShortAbandon');
          expect(flagged.length).toBe(a.value < queue.shortAbandonMs ? 1 : 0);
          short += flagged.length;
        }
        if (metricsNamed(session, 'tAbandon').length === 0) expect(metricsNamed(session, 'tShortAbandon')).toEqual([]);
      }
      if (purpose === 'agent') {
        for (const a of metricsNamed(session, 'tAnswered')) {
          const queue = queueById.get(lookup(session, 'queueId', a.emitDate)!)!;
          const flagged = metricsNamed(session, 'nOverSla').filter((m) => m.emitDate === a.emitDate);
          expect(flagged.length).toBe(a.value > queue.slaMs ? 1 : 0);
          over += flagged.length;
        }
      }
    }
    expect(over).toBeGreaterThan(0);
    expect(short).toBeGreaterThan(0);
  });

  it('gives the dimension lookup sensible answers: queues on queue and agent metrics, wrap-up codes on handle time', () => {
    for (const { purpose, session } of sessionsOf(week)) {
      for (const m of session.metrics ?? []) {
        if (purpose === 'acd') expect(lookup(session, 'queueId', m.emitDate)).toBeDefined();
        const queued = ['tAnswered', 'nOverSla', 'nOutbound', 'tDialing', 'nOutboundAttempted', 'nOutboundConnected', 'nOutboundAbandoned'];
        if (queued.includes(m.name)) {
          expect(lookup(session, 'queueId', m.emitDate), m.name).toBeDefined();
        }
        if (m.name === 'tHandle' || m.name === 'tAcw') expect(lookup(session, 'wrapUpCode', m.emitDate)).toBeDefined();
      }
    }
  });

  it("dials outbound three ways: agents' own calls, preview campaigns, and the predictive dialer", () => {
    const outbound = week.filter((r) => r.originatingDirection === 'outbound');
    const kinds = { manual: 0, preview: 0, predictive: 0 };
    const campaigns = new Set<string>();
    for (const record of outbound) {
      const sessions = record.participants.flatMap((p) => p.sessions.map((s) => ({ purpose: p.purpose, s })));
      for (const { s } of sessions) expect(s).toMatchObject({ mediaType: 'voice', direction: 'outbound' });
      const customer = sessions.find((x) => x.purpose === 'customer')!.s;
      const agentFirst = record.participants[0]!.purpose === 'agent';
      const campaign = customer.outboundCampaignId;
      const countOf = (name: string) => sessions.reduce((n, x) => n + metricsNamed(x.s, name).length, 0);
      const answered = metricsNamed(customer, 'nConnected').length;
      if (campaign === undefined) {
        // The agent's own call: no dialer metrics, no campaign anywhere.
        kinds.manual++;
        expect(agentFirst).toBe(true);
        for (const { s } of sessions) expect(s.outboundCampaignId).toBeUndefined();
        expect(countOf('nOutboundAttempted') + countOf('nOutboundConnected') + countOf('nOutboundAbandoned')).toBe(0);
      } else {
        campaigns.add(campaign);
        // Every session of a campaign call names the campaign, the contact and its list.
        for (const { s } of sessions) {
          expect(s.outboundCampaignId).toBe(campaign);
          expect(s.outboundContactId).toBe(customer.outboundContactId);
          expect(s.outboundContactListId).toBe(customer.outboundContactListId);
        }
        expect(countOf('nOutboundAttempted')).toBe(1);
        expect(countOf('nOutboundConnected')).toBe(answered);
        if (agentFirst) {
          kinds.preview++;
          expect(countOf('nOutboundAbandoned')).toBe(0);
        } else {
          // The dialer calls first; an answered call goes to the queue, and an abandon there is an outbound abandon.
          kinds.predictive++;
          expect(record.participants[0]!.purpose).toBe('customer');
          const acd = sessions.find((x) => x.purpose === 'acd')?.s;
          if (answered === 0) expect(acd).toBeUndefined();
          else expect(acd).toBeDefined();
          if (acd && record.conversationEnd !== undefined) expect(countOf('nOutboundAbandoned')).toBe(metricsNamed(acd, 'tAbandon').length);
        }
      }
      if (agentFirst) {
        const agent = record.participants[0]!.sessions[0]!;
        expect(metricsNamed(agent, 'nOutbound')).toHaveLength(1);
        for (const seg of agent.segments ?? []) expect(seg.queueId).toBeDefined();
      }
    }
    expect(campaigns.size).toBe(2);
    for (const n of Object.values(kinds)) expect(n).toBeGreaterThan(outbound.length / 10);
    const summary = summarize(week);
    expect(Object.values(summary.byCampaign).reduce((a, b) => a + b, 0)).toBe(kinds.preview + kinds.predictive);
  });

  it('follows a daily curve: far more conversations start at 10:00 than at 03:00, and fewer at weekends', () => {
    const byHour = new Array<number>(24).fill(0);
    const byDay = new Array<number>(7).fill(0);
    for (const r of week) {
      const d = new Date(r.conversationStart);
      byHour[d.getUTCHours()]!++;
      byDay[d.getUTCDay()]!++;
    }
    expect(byHour[10]!).toBeGreaterThan(5 * byHour[3]!);
    const weekdayAverage = (byDay[1]! + byDay[2]! + byDay[3]! + byDay[4]! + byDay[5]!) / 5;
    const weekendAverage = (byDay[0]! + byDay[6]!) / 2;
    expect(weekdayAverage).toBeGreaterThan(1.5 * weekendAverage);
  });

  it('mixes every media type: voice both ways, chat, message, email and callback', () => {
    const media = new Set<string>();
    const directions = new Set<string>();
    for (const { session } of sessionsOf(week)) {
      media.add(session.mediaType);
      directions.add(`${session.mediaType}/${session.direction}`);
    }
    expect([...media].sort()).toEqual(['callback', 'chat', 'email', 'message', 'voice']);
    expect(directions).toContain('voice/inbound');
    expect(directions).toContain('voice/outbound');
    const summary = summarize(week);
    expect(Object.values(summary.byMediaType).reduce((a, b) => a + b, 0)).toBe(3000);
    expect(Object.values(summary.byOutcome).reduce((a, b) => a + b, 0)).toBe(3000);
  });

  it('is lazy: the first records of a million-conversation run cost what those of a thousand-conversation run cost', () => {
    const firstTen = (conversations: number) => {
      const it = simulateConversations({ days: 30, conversations, seed: 1, end: END });
      return Array.from({ length: 10 }, () => it.next().value as ConversationRecord);
    };
    const first = firstTen(1_000_000);
    expect(first.every((r) => UUID.test(r.conversationId))).toBe(true);
    expect(ms(first[0]!.conversationStart)).toBeGreaterThanOrEqual(END.getTime() - 30 * DAY);
    // A run that built its records up front would take about 1,000 times as long for the larger one.
    const ratio =
      fastestMs(() => firstTen(1_000_000)) /
      Math.max(
        fastestMs(() => firstTen(1_000)),
        0.01,
      );
    expect(ratio).toBeLessThan(LINEAR_RATIO_MAX);
  });

  it('rejects impossible options with a RangeError', () => {
    const bad: SimulationOptions[] = [
      { ...WEEK, days: 0 },
      { ...WEEK, days: 400 },
      { ...WEEK, conversations: 0 },
      { ...WEEK, conversations: 1.5 },
      { ...WEEK, seed: -1 },
      { ...WEEK, end: new Date('not a date') },
    ];
    for (const opts of bad) expect(() => simulateConversations(opts).next()).toThrow(RangeError);
  });

  // ---- the wider record: teams, skills, languages, routing, flows, addresses, campaigns, messaging, callbacks ----

  it('puts every agent in one team, the same in every conversation and in every run, and uses a few teams', () => {
    const teamOf = new Map<string, string>();
    for (const record of week) {
      for (const p of record.participants) {
        if (p.purpose !== 'agent') continue;
        const known = teamOf.get(p.userId!);
        if (known === undefined) teamOf.set(p.userId!, p.teamId!);
        else expect(p.teamId, p.userId).toBe(known);
      }
    }
    const teams = new Set(teamOf.values());
    expect(teams.size).toBeGreaterThanOrEqual(3);
    expect(teams.size).toBeLessThanOrEqual(10);
    // Teams come with the agent, not with the run: another seed gives the same agents the same teams.
    const agents = simulationConfig(WEEK).agents;
    expect(simulationConfig({ ...WEEK, seed: 43 }).agents).toEqual(agents);
    for (const [userId, teamId] of teamOf) expect(agents.find((a) => a.id === userId)?.teamId).toBe(teamId);
  });

  it('requests 0–3 skills per queue visit from a small set, the same list on every queue segment of a session', () => {
    const skills = new Set<string>();
    const perVisit = [0, 0, 0, 0];
    for (const { purpose, session } of sessionsOf(week)) {
      const queued = (session.segments ?? []).filter((g) => g.queueId !== undefined);
      const lists = new Set(queued.map((g) => JSON.stringify(g.requestedRoutingSkillIds ?? [])));
      expect(lists.size, session.sessionId).toBeLessThanOrEqual(1);
      const list = queued[0]?.requestedRoutingSkillIds ?? [];
      if (list.length > 0) expect(['acd', 'agent']).toContain(purpose);
      for (const skill of list) skills.add(skill);
      if (purpose === 'acd') perVisit[list.length]!++;
    }
    expect(skills.size).toBeGreaterThanOrEqual(4);
    expect(skills.size).toBeLessThanOrEqual(12);
    const visits = perVisit.reduce((a, b) => a + b, 0);
    // Most visits request no skill or one; every count from 0 to 3 occurs.
    expect(perVisit[0]! + perVisit[1]!).toBeGreaterThan(visits / 2);
    for (const n of perVisit) expect(n).toBeGreaterThan(0);
  });

  it('routes by the requested method: predictive with proposed agents, bullseye dropping skills, direct to a person', () => {
    const used = new Map<string, number>();
    let proposed = 0;
    let removed = 0;
    const agentIds = new Set(simulationConfig(WEEK).agents.map((a) => a.id));
    for (const record of week) {
      const sessions = record.participants.flatMap((p) => p.sessions.map((s) => ({ p, s })));
      for (const { p, s } of sessions) {
        if (s.usedRouting !== undefined) used.set(s.usedRouting, (used.get(s.usedRouting) ?? 0) + 1);
        if (p.purpose === 'acd') {
          expect(s.requestedRoutings!.length).toBeGreaterThan(0);
          if (s.usedRouting !== undefined) expect(s.requestedRoutings).toContain(s.usedRouting);
          // A completed routing (answered by an agent of this visit) says which method it used.
          const answered =
            metricsNamed(s, 'tAcd').length > 0 && metricsNamed(s, 'tAbandon').length + metricsNamed(s, 'tFlowOut').length === 0;
          expect(s.usedRouting !== undefined, s.sessionId).toBe(answered);
        }
        if (s.proposedAgents) {
          proposed++;
          expect(s.usedRouting).toBe('Predictive');
          const ranks = s.proposedAgents.map((a) => a.agentRank);
          expect(new Set(ranks).size).toBe(ranks.length);
          for (const a of s.proposedAgents) expect(agentIds.has(a.proposedAgentId)).toBe(true);
          // The agent who answered was one of those proposed.
          const answerer = sessions.find(
            ({ p: q, s: t }) =>
              q.purpose === 'agent' && metricsNamed(t, 'tAnswered').some((m) => m.emitDate === metricsNamed(s, 'tAcd')[0]!.emitDate),
          );
          expect(s.proposedAgents.map((a) => a.proposedAgentId)).toContain(answerer!.p.userId);
          expect(answerer!.s.usedRouting).toBe('Predictive');
        }
        if (s.eligibleAgentCounts || s.waitingInteractionCounts) {
          expect(s.requestedRoutings).toContain('Predictive');
          expect(s.eligibleAgentCounts!.length).toBe(s.waitingInteractionCounts!.length);
        }
        if (s.removedSkillIds) {
          removed++;
          const requested = (s.segments ?? []).find((g) => g.queueId !== undefined)!.requestedRoutingSkillIds!;
          expect(s.usedRouting ?? 'Bullseye').toBe('Bullseye');
          expect([...s.activeSkillIds!, ...s.removedSkillIds].sort()).toEqual([...requested].sort());
        }
      }
    }
    expect([...used.keys()].sort()).toEqual(['Bullseye', 'Direct', 'Predictive', 'Standard']);
    expect(proposed).toBeGreaterThan(50);
    expect(removed).toBeGreaterThan(10);
  });

  it('runs the IVR flow on every IVR session, with flow metrics as real records carry them', () => {
    let ivrs = 0;
    const languages = new Set<string>();
    for (const record of week) {
      const ivr = record.participants.find((p) => p.purpose === 'ivr')?.sessions[0];
      const acd = record.participants.find((p) => p.purpose === 'acd')?.sessions[0];
      if (!ivr) continue;
      ivrs++;
      const flow = ivr.flow!;
      expect(flow).toMatchObject({ flowType: 'INBOUNDCALL', entryType: 'dnis', startingLanguage: 'en-us' });
      if (record.conversationEnd === undefined) continue;
      expect(metricsNamed(ivr, 'nFlow')).toHaveLength(1);
      expect(metricsNamed(ivr, 'tFlow')).toHaveLength(1);
      const exit = metricsNamed(ivr, 'tFlowExit').length;
      expect(exit + metricsNamed(ivr, 'tFlowDisconnect').length).toBe(1);
      expect(metricsNamed(ivr, 'tFlow')[0]!.value).toBeLessThanOrEqual(metricsNamed(ivr, 'tIvr')[0]!.value);
      // A flow that transfers to a queue hands the contact to the ACD, which says it came from the IVR.
      expect(flow.exitReason === 'TRANSFER').toBe(exit === 1);
      expect(flow.transferType === 'ACD').toBe(exit === 1);
      expect(acd !== undefined).toBe(exit === 1);
      if (acd) expect(acd.flowInType).toBe('ivr');
      // The caller's language choice is what the queue is asked for.
      if (flow.endingLanguage) languages.add(flow.endingLanguage);
      const requested = (acd?.segments ?? []).find((g) => g.queueId !== undefined)?.requestedLanguageId;
      if (acd) expect(requested !== undefined).toBe(flow.endingLanguage !== 'en-us');
      // Voice sessions of the customer and the IVR name the dialled number.
      for (const p of record.participants) {
        for (const s of p.sessions) {
          if (p.purpose === 'customer' || p.purpose === 'ivr') expect(s.sessionDnis).toBe(s.dnis);
          if (p.purpose === 'customer' || p.purpose === 'agent') expect(UUID.test(s.edgeId!)).toBe(true);
          if (p.purpose === 'customer' || p.purpose === 'ivr') expect(s.provider).toBe('Edge');
        }
      }
    }
    expect(ivrs).toBeGreaterThan(1000);
    expect([...languages].sort()).toEqual(['en-us', 'es-us', 'fr-ca']);
  });

  it('says how a contact entered and left the queue: flowInType on every routed visit, flowOutType with tFlowOut', () => {
    for (const { record, purpose, session } of sessionsOf(week)) {
      if (purpose !== 'acd') continue;
      const dialer = record.originatingDirection === 'outbound';
      if (dialer) expect(session.flowInType).toBeUndefined();
      else expect(['ivr', 'flow', 'transfer']).toContain(session.flowInType);
      expect(session.flowOutType !== undefined).toBe(metricsNamed(session, 'tFlowOut').length > 0);
      if (session.flowOutType !== undefined) expect(session.flowOutType).toBe(session.mediaType === 'voice' ? 'voicemail' : 'timeout');
    }
  });

  it('gives some conversations several divisions, and digital contacts their addresses, message types and tags', () => {
    const several = week.filter((r) => (r.divisionIds ?? []).length > 1).length;
    expect(several).toBeGreaterThan(week.length / 4);
    expect(several).toBeLessThan(week.length);
    let tags = 0;
    const messageTypes = new Set<string>();
    for (const record of week) {
      const media = record.participants[0]!.sessions[0]!.mediaType;
      if (record.externalTag !== undefined) {
        tags++;
        expect(['chat', 'message', 'email']).toContain(media);
      }
      // Genesys sets the initiator and customer participation on messaging conversations.
      expect(record.conversationInitiator !== undefined).toBe(media === 'message');
      expect(record.customerParticipation !== undefined).toBe(media === 'message');
      if (media === 'message') expect(record.conversationInitiator).toBe('customer');
      for (const p of record.participants) {
        for (const s of p.sessions) {
          expect(s.messageType !== undefined).toBe(s.mediaType === 'message');
          if (s.messageType) messageTypes.add(s.messageType);
          if (s.addressFrom !== undefined || s.addressTo !== undefined) {
            expect(['email', 'message']).toContain(s.mediaType);
            expect(['customer', 'agent']).toContain(p.purpose);
          }
        }
      }
    }
    expect(tags).toBeGreaterThan(0);
    expect(tags).toBeLessThan(week.length / 20);
    expect([...messageTypes].sort()).toEqual(['facebook', 'sms', 'webmessaging', 'whatsapp']);
  });

  it("measures messaging agents' responses: one per turn, the first also as tFirstResponse", () => {
    let sessions = 0;
    for (const { record, purpose, session } of sessionsOf(week)) {
      if (purpose !== 'agent' || session.mediaType !== 'message' || metricsNamed(session, 'tTalkComplete').length === 0) continue;
      if (record.conversationEnd === undefined) continue;
      sessions++;
      const turns = metricsNamed(session, 'oMessageTurn');
      const responses = metricsNamed(session, 'tAgentResponseTime');
      const first = metricsNamed(session, 'tFirstResponse');
      expect(turns).toHaveLength(1);
      expect(responses.length).toBe(turns[0]!.value);
      expect(first).toHaveLength(1);
      expect(first[0]!.emitDate).toBe(responses[0]!.emitDate);
      expect(metricsNamed(session, 'oMessageCount')[0]!.value).toBeGreaterThanOrEqual(2 * turns[0]!.value);
      // Every response comes during the talk, and the customer never waited longer than since the last one.
      const talk = session.segments!.find((g) => g.segmentType === 'interact')!;
      let previous = ms(talk.segmentStart);
      for (const r of responses) {
        expect(ms(r.emitDate)).toBeLessThanOrEqual(ms(talk.segmentEnd!));
        expect(r.value).toBeLessThanOrEqual(ms(r.emitDate) - previous);
        previous = ms(r.emitDate);
      }
    }
    expect(sessions).toBeGreaterThan(100);
  });

  it('schedules and returns callbacks: virtual wait, first dial, connect or not reached', () => {
    let connected = 0;
    let notReached = 0;
    for (const record of week) {
      const acd = record.participants.find((p) => p.purpose === 'acd');
      if (!acd || acd.sessions[0]!.mediaType !== 'callback' || record.conversationEnd === undefined) continue;
      const q = acd.sessions[0]!;
      expect(metricsNamed(q, 'nCallbackScheduled')).toHaveLength(1);
      expect(sumOf(q, 'tCallbackAbandon')).toBe(sumOf(q, 'tAbandon'));
      const agent = record.participants.find(
        (p) => p.purpose === 'agent' && p.sessions.some((s) => metricsNamed(s, 'tAnswered').length > 0),
      );
      if (!agent) continue;
      expect(sumOf(q, 'tCallbackVirtualWait')).toBe(sumOf(q, 'tAcd'));
      const s = agent.sessions[0]!;
      expect(metricsNamed(s, 'nCallbackAttempts')).toHaveLength(1);
      const firstDial = metricsNamed(s, 'tFirstDial')[0]!;
      // The first dial is measured from the callback's entry into the queue.
      expect(firstDial.value).toBe(ms(firstDial.emitDate) - ms(q.segments![0]!.segmentStart));
      const queue = queueById.get(q.segments![0]!.queueId!)!;
      expect(metricsNamed(s, 'nCallbackOverSla').length).toBe(firstDial.value > queue.slaMs ? 1 : 0);
      const connect = metricsNamed(s, 'tCallbackConnect');
      const missed = metricsNamed(s, 'tCallbackNotReached');
      expect(connect.length + missed.length).toBe(1);
      if (connect.length === 1) {
        connected++;
        expect(sumOf(s, 'tFirstConnect')).toBe(firstDial.value + connect[0]!.value);
      } else {
        notReached++;
        expect(metricsNamed(s, 'tTalk')).toEqual([]);
      }
    }
    expect(connected).toBeGreaterThan(3 * notReached);
    expect(notReached).toBeGreaterThan(0);
  });

  it('ends a few sessions in error: nError with the segment that says why', () => {
    let errors = 0;
    for (const { purpose, session } of sessionsOf(week)) {
      const n = metricsNamed(session, 'nError');
      if (n.length === 0) {
        for (const g of session.segments ?? []) expect(g.errorCode).toBeUndefined();
        continue;
      }
      errors++;
      expect(n).toHaveLength(1);
      expect(['agent', 'customer']).toContain(purpose);
      const failed = (session.segments ?? []).filter((g) => g.errorCode !== undefined);
      expect(failed).toHaveLength(1);
      expect(failed[0]!.errorCode).toMatch(/^error\./);
      // The error posts when the failed segment ends.
      expect(n[0]!.emitDate).toBe(failed[0]!.segmentEnd);
    }
    expect(errors).toBeGreaterThan(3);
    expect(errors).toBeLessThan(week.length / 50);
  });
});
