import { beforeAll, describe, expect, it } from 'vitest';
import { fastestMs, LINEAR_RATIO_MAX } from '../support/growth';
import { DIRECTIONS, MEDIA_TYPES, METRICS, OBSERVED_METRIC_NAMES, PURPOSES } from '../../src/analytics/catalog';
import { QUEUES, simulateConversations, summarize, type ConversationRecord, type SimulationOptions } from '../../scripts/simulator/index';

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

  if (!isObject(record)) return ['record is not an object'];
  only(record, 'record', ['conversationId', 'conversationStart', 'conversationEnd', 'originatingDirection', 'divisionIds', 'participants']);
  uuid(record.conversationId, 'conversationId');
  date(record.conversationStart, 'conversationStart');
  if ('conversationEnd' in record) date(record.conversationEnd, 'conversationEnd');
  if ('originatingDirection' in record) oneOf(record.originatingDirection, DIRECTIONS, 'originatingDirection');
  if ('divisionIds' in record) list(record.divisionIds, 'divisionIds', true).forEach((d, i) => uuid(d, `divisionIds[${i}]`));
  list(record.participants, 'participants', true).forEach((p, i) => {
    const pp = `participants[${i}]`;
    if (!isObject(p)) return void problems.push(`${pp} is not an object`);
    only(p, pp, ['participantId', 'participantName', 'purpose', 'userId', 'sessions']);
    uuid(p.participantId, `${pp}.participantId`);
    if ('participantName' in p) text(p.participantName, `${pp}.participantName`);
    oneOf(p.purpose, PURPOSES, `${pp}.purpose`);
    if ('userId' in p) uuid(p.userId, `${pp}.userId`);
    if ((p.purpose === 'agent') !== 'userId' in p) problems.push(`${pp}: agents, and only agents, carry a userId`);
    list(p.sessions, `${pp}.sessions`, true).forEach((s, j) => {
      const sp = `${pp}.sessions[${j}]`;
      if (!isObject(s)) return void problems.push(`${sp} is not an object`);
      only(s, sp, ['sessionId', 'mediaType', 'direction', 'ani', 'dnis', 'segments', 'metrics']);
      uuid(s.sessionId, `${sp}.sessionId`);
      oneOf(s.mediaType, MEDIA_TYPES, `${sp}.mediaType`);
      oneOf(s.direction, DIRECTIONS, `${sp}.direction`);
      if ('ani' in s) text(s.ani, `${sp}.ani`);
      if ('dnis' in s) text(s.dnis, `${sp}.dnis`);
      if ('segments' in s) {
        list(s.segments, `${sp}.segments`, false).forEach((g, k) => {
          const gp = `${sp}.segments[${k}]`;
          if (!isObject(g)) return void problems.push(`${gp} is not an object`);
          only(g, gp, ['segmentStart', 'segmentEnd', 'segmentType', 'queueId', 'wrapUpCode', 'disconnectType']);
          date(g.segmentStart, `${gp}.segmentStart`);
          if ('segmentEnd' in g) {
            date(g.segmentEnd, `${gp}.segmentEnd`);
            if (String(g.segmentEnd) <= String(g.segmentStart)) problems.push(`${gp} ends before it starts`);
          }
          for (const f of ['segmentType', 'wrapUpCode', 'disconnectType'] as const) if (f in g) text(g[f], `${gp}.${f}`);
          if ('queueId' in g) uuid(g.queueId, `${gp}.queueId`);
        });
      }
      if ('metrics' in s) {
        list(s.metrics, `${sp}.metrics`, false).forEach((m, k) => {
          const mp = `${sp}.metrics[${k}]`;
          if (!isObject(m)) return void problems.push(`${mp} is not an object`);
          only(m, mp, ['name', 'value', 'emitDate']);
          oneOf(m.name, OBSERVED_METRIC_NAMES, `${mp}.name`);
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

  it('emits each metric from the participant the catalogue assigns it to', () => {
    const owner = new Map(METRICS.map((m) => [m.name, m.participant]));
    for (const { purpose, session } of sessionsOf(week)) {
      for (const m of session.metrics ?? []) expect(`${m.name} from ${purpose}`).toBe(`${m.name} from ${owner.get(m.name)}`);
    }
  });

  it('emits every observed metric of the catalogue somewhere in a week of traffic', () => {
    const seen = new Set<string>();
    for (const { session } of sessionsOf(week)) for (const m of session.metrics ?? []) seen.add(m.name);
    expect([...seen].sort()).toEqual([...OBSERVED_METRIC_NAMES].sort());
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
        if (['tAnswered', 'nOverSla', 'nOutbound', 'tDialing', 'nOutboundConnected'].includes(m.name)) {
          expect(lookup(session, 'queueId', m.emitDate), m.name).toBeDefined();
        }
        if (m.name === 'tHandle' || m.name === 'tAcw') expect(lookup(session, 'wrapUpCode', m.emitDate)).toBeDefined();
      }
    }
  });

  it('places outbound calls on agent sessions with direction outbound and a reporting queue', () => {
    const outbound = week.filter((r) => r.originatingDirection === 'outbound');
    expect(outbound.length).toBeGreaterThan(0);
    for (const record of outbound) {
      const agent = record.participants.find((p) => p.purpose === 'agent')!;
      const session = agent.sessions[0]!;
      expect(session).toMatchObject({ mediaType: 'voice', direction: 'outbound' });
      expect(metricsNamed(session, 'nOutbound')).toHaveLength(1);
      for (const seg of session.segments ?? []) expect(seg.queueId).toBeDefined();
      const connected = metricsNamed(session, 'nOutboundConnected').length;
      const notConnected = metricsNamed(session, 'nOutboundAbandoned').length;
      if (record.conversationEnd !== undefined) expect(connected + notConnected).toBe(1);
    }
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
});
