/**
 * Plays out one conversation from its start time and traffic stream: who joins, when each segment starts and
 * ends, and which metrics each session emits. Counts post when their event happens, timers when what they
 * measure ends. Times are epoch milliseconds; records.ts formats and cuts them.
 */
import { loadFactor, nextStaffed, type Arrival } from './arrivals';
import { IVR_FLOW_NAME, WRAP_UP_CODES, queuesOfStream, type Agent, type QueueConfig, type StreamName } from './config';
import type { Rng } from './prng';
import type { ConversationDraft, Direction, DisconnectType, MediaType, ParticipantDraft, Purpose } from './records';
import { SessionDraft } from './records';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export interface World {
  agents: readonly Agent[];
  agentsByQueue: ReadonlyMap<string, readonly Agent[]>;
  /** Distinct customers; repeat callers share a phone number or address. */
  customerPool: number;
}

interface StreamQueues {
  queues: readonly QueueConfig[];
  weights: readonly number[];
}

const STREAM_QUEUES = new Map<StreamName, StreamQueues>(
  (['voiceInbound', 'voiceOutbound', 'chat', 'message', 'email', 'callback'] as const).map((name) => {
    const queues = queuesOfStream(name);
    return [name, { queues, weights: queues.map((q) => q.share) }];
  }),
);
const INBOUND_VOICE_QUEUES = queuesOfStream('voiceInbound');

/** The contact as the queue and the agents see it: its medium and its addresses. */
interface Contact {
  stream: StreamName;
  mediaType: MediaType;
  direction: Direction;
  ani: string | undefined;
  dnis: string | undefined;
}

/** How the customer's side of the conversation ended. */
interface Ending {
  end: number;
  customerDisconnect: DisconnectType;
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

class Play {
  readonly draft: ConversationDraft;

  constructor(
    readonly rng: Rng,
    readonly world: World,
    start: number,
    originatingDirection: Direction,
  ) {
    this.draft = {
      conversationId: rng.uuid(),
      start,
      originatingDirection,
      divisionIds: [],
      participants: [],
    };
  }

  /** A duration in whole milliseconds, log-normal around `median`, kept within [lo, hi]. */
  duration(median: number, sigma: number, lo: number, hi: number): number {
    return Math.round(clamp(this.rng.logNormal(median, sigma), lo, hi));
  }

  division(id: string): void {
    if (!this.draft.divisionIds.includes(id)) this.draft.divisionIds.push(id);
  }

  participant(purpose: Purpose, participantName?: string, userId?: string): ParticipantDraft {
    const p: ParticipantDraft = {
      participantId: this.rng.uuid(),
      participantName,
      purpose,
      userId,
      sessions: [],
    };
    this.draft.participants.push(p);
    return p;
  }

  session(p: ParticipantDraft, contact: Contact): SessionDraft {
    const s = new SessionDraft(this.rng.uuid(), contact.mediaType, contact.direction, contact.ani, contact.dnis);
    p.sessions.push(s);
    return s;
  }

  agentSession(agent: Agent, contact: Contact): SessionDraft {
    return this.session(this.participant('agent', agent.name, agent.id), contact);
  }

  agentOf(queue: QueueConfig, other?: Agent): Agent {
    const pool = this.world.agentsByQueue.get(queue.id) ?? this.world.agents;
    for (;;) {
      const agent = this.rng.pick(pool);
      if (agent !== other || pool.length < 2) return agent;
    }
  }

  customer(): number {
    return this.rng.int(this.world.customerPool);
  }
}

/** Fictional North American numbers: 555 exchange, area code and line derived from the customer's index. */
function phoneOf(customer: number): string {
  const area = 201 + (customer % 780);
  const line = Math.floor(customer / 780) % 10_000;
  return `tel:+1${area}555${line.toString().padStart(4, '0')}`;
}

function emailOf(customer: number): string {
  return `mailto:customer${customer}@example.net`;
}

export function playConversation(rng: Rng, world: World, arrival: Arrival): ConversationDraft {
  switch (arrival.stream) {
    case 'voiceInbound':
      return inboundVoice(rng, world, arrival);
    case 'voiceOutbound':
      return outboundVoice(rng, world, arrival);
    default:
      return inboundDigital(rng, world, arrival);
  }
}

function pickQueue(play: Play, stream: StreamName): QueueConfig {
  const sq = STREAM_QUEUES.get(stream);
  if (!sq || sq.queues.length === 0) throw new Error(`no queue for ${stream}`);
  return sq.queues[play.rng.weighted(sq.weights)]!;
}

// ---- inbound voice: customer → IVR → queue → agent(s) ----

function inboundVoice(rng: Rng, world: World, arrival: Arrival): ConversationDraft {
  const t0 = arrival.start;
  const play = new Play(rng, world, t0, 'inbound');
  const queue = pickQueue(play, 'voiceInbound');
  play.division(queue.divisionId);
  const contact: Contact = {
    stream: 'voiceInbound',
    mediaType: 'voice',
    direction: 'inbound',
    ani: phoneOf(play.customer()),
    dnis: queue.address,
  };
  const customer = play.session(play.participant('customer'), contact);
  customer.count('nConnected', t0);

  const ivr = play.session(play.participant('ivr', IVR_FLOW_NAME), contact);
  const menu = play.duration(35 * SECOND, 0.5, 6 * SECOND, 4 * MINUTE);
  const r = rng.float();
  let ending: Ending;
  if (r < 0.05) {
    // Hung up in the menu.
    const end = t0 + Math.round(menu * rng.between(0.2, 1));
    ivr.segment('ivr', t0, end, { disconnectType: 'peer' });
    ivr.timer('tIvr', t0, end);
    ending = { end, customerDisconnect: 'endpoint' };
  } else if (r < 0.13) {
    // Self-service: balance, opening hours, order status... then the caller hangs up.
    const end = t0 + Math.round(menu * rng.between(1.5, 3));
    ivr.segment('ivr', t0, end, { disconnectType: 'peer' });
    ivr.timer('tIvr', t0, end);
    ending = { end, customerDisconnect: 'endpoint' };
  } else {
    const entry = t0 + menu;
    ivr.segment('ivr', t0, entry, { disconnectType: 'transfer' });
    ivr.timer('tIvr', t0, entry);
    ending = throughQueue(play, queue, contact, entry, 0);
  }
  customer.segment('interact', t0, ending.end, { disconnectType: ending.customerDisconnect });
  customer.timer('tConnected', t0, ending.end);
  return play.draft;
}

// ---- chat, message, email, callback: customer → routing flow → queue → agent ----

const FLOW_DELAY: Record<Exclude<MediaType, 'voice'>, [number, number]> = {
  chat: [1 * SECOND, 3 * SECOND],
  message: [1 * SECOND, 3 * SECOND],
  email: [5 * SECOND, 30 * SECOND],
  callback: [500, 2 * SECOND],
};

function inboundDigital(rng: Rng, world: World, arrival: Arrival): ConversationDraft {
  const t0 = arrival.start;
  const play = new Play(rng, world, t0, 'inbound');
  const queue = pickQueue(play, arrival.stream);
  const media = queue.mediaType;
  if (media === 'voice') throw new Error('voice is not a digital stream');
  const who = play.customer();
  const contact: Contact = {
    stream: arrival.stream,
    mediaType: media,
    direction: 'inbound',
    ani: media === 'chat' ? undefined : media === 'email' ? emailOf(who) : phoneOf(who),
    dnis: media === 'chat' ? undefined : queue.address,
  };
  const customer = play.session(play.participant('customer'), contact);
  customer.count('nConnected', t0);
  const [lo, hi] = FLOW_DELAY[media];
  const entry = t0 + Math.round(rng.between(lo, hi));
  const ending = throughQueue(play, queue, contact, entry, 0);
  customer.segment(media === 'callback' ? 'callback' : 'interact', t0, ending.end, {
    disconnectType: ending.customerDisconnect,
  });
  customer.timer('tConnected', t0, ending.end);
  return play.draft;
}

// ---- the queue ----

type Waited = { kind: 'answered'; agent: Agent; alertStart: number; answerAt: number } | { kind: 'abandoned' | 'flowOut'; at: number };

function alertDuration(play: Play, queue: QueueConfig): number {
  const median = queue.mediaType === 'voice' || queue.mediaType === 'callback' ? 4 * SECOND : 7 * SECOND;
  return play.duration(median, 0.5, 800, queue.alertTimeoutMs - 500);
}

/**
 * The contact waits for an agent. The first offer comes after an exponential wait (scaled by the load of the
 * hour, with a long tail; business-hours queues also wait for opening time); the customer gives up after an
 * exponential patience; the flow takes the contact out after the queue's flow-out time. An alerted agent may
 * not respond, and the contact is offered to a second agent.
 */
function waitForAgent(play: Play, queue: QueueConfig, contact: Contact, entry: number): Waited {
  const rng = play.rng;
  let firstDelay = rng.exponential(queue.meanWaitMs * loadFactor(contact.stream, entry) * (rng.chance(0.05) ? 5 : 1));
  if (queue.staffedHours === 'business') firstDelay += nextStaffed(entry) - entry;
  const abandonAt = entry + Math.round(rng.exponential(queue.patienceMeanMs));
  let flowAt = entry + queue.flowOutAfterMs;
  // A quarter of callers would take the "press 1 to leave a message" option if still waiting at the announcement.
  if (queue.mediaType === 'voice' && rng.chance(0.25)) flowAt = entry + Math.round(rng.between(30, 90) * SECOND);

  let cursor = entry;
  for (let attempt = 0; ; attempt++) {
    const alertStart = cursor + Math.round(attempt === 0 ? firstDelay : 500 + rng.exponential(4 * SECOND));
    const limit = Math.min(abandonAt, flowAt);
    if (alertStart >= limit) return { kind: abandonAt <= flowAt ? 'abandoned' : 'flowOut', at: limit };
    const agent = play.agentOf(queue);
    const notResponding = attempt === 0 && rng.chance(queue.notRespondingRate);
    const alertEnd = alertStart + (notResponding ? queue.alertTimeoutMs : alertDuration(play, queue));
    if (abandonAt < alertEnd) {
      // The customer hangs up while the agent is being alerted.
      const s = play.agentSession(agent, contact);
      s.segment('alert', alertStart, abandonAt, { queueId: queue.id, disconnectType: 'peer' });
      s.timer('tAlert', alertStart, abandonAt);
      return { kind: 'abandoned', at: abandonAt };
    }
    if (notResponding) {
      const s = play.agentSession(agent, contact);
      s.segment('alert', alertStart, alertEnd, { queueId: queue.id, disconnectType: 'transfer.noanswer' });
      s.timer('tAlert', alertStart, alertEnd);
      s.timer('tNotResponding', alertStart, alertEnd);
      cursor = alertEnd;
      continue;
    }
    return { kind: 'answered', agent, alertStart, answerAt: alertEnd };
  }
}

/** The ACD participant: offered at entry, then answered, abandoned or flowed out. */
function throughQueue(play: Play, queue: QueueConfig, contact: Contact, entry: number, depth: number): Ending {
  play.division(queue.divisionId);
  const acd = play.session(play.participant('acd', queue.name), contact);
  acd.count('nOffered', entry);
  const waited = waitForAgent(play, queue, contact, entry);

  if (waited.kind === 'answered') {
    const { agent, alertStart, answerAt } = waited;
    acd.segment('interact', entry, answerAt, { queueId: queue.id, disconnectType: 'transfer' });
    acd.timer('tAcd', entry, answerAt);
    acd.timer('tWait', entry, answerAt);
    const s = play.agentSession(agent, contact);
    s.segment('alert', alertStart, answerAt, { queueId: queue.id });
    s.timer('tAlert', alertStart, answerAt);
    s.timer('tAnswered', entry, answerAt);
    if (answerAt - entry > queue.slaMs) s.count('nOverSla', answerAt);
    return converse(play, s, queue, contact, agent, answerAt, { depth, queueId: queue.id, extraFirstTalkMs: 0 });
  }

  const at = waited.at;
  const abandoned = waited.kind === 'abandoned';
  acd.segment('interact', entry, at, { queueId: queue.id, disconnectType: abandoned ? 'peer' : 'transfer' });
  acd.timer('tAcd', entry, at);
  acd.timer('tWait', entry, at);
  if (abandoned) {
    acd.timer('tAbandon', entry, at);
    if (at - entry < queue.shortAbandonMs) acd.timer('tShortAbandon', entry, at);
    return { end: at, customerDisconnect: 'endpoint' };
  }
  acd.timer('tFlowOut', entry, at);
  if (contact.mediaType !== 'voice') return { end: at, customerDisconnect: 'transfer' };
  // Voice flows out to the queue's voicemail box.
  const message = play.duration(30 * SECOND, 0.5, 5 * SECOND, 3 * MINUTE);
  const box = play.session(play.participant('voicemail', `${queue.name} voicemail`), contact);
  box.segment('voicemail', at, at + message, { queueId: queue.id, disconnectType: 'peer' });
  return { end: at + message, customerDisconnect: 'endpoint' };
}

// ---- the agent: talk, holds, transfers, after-call work ----

interface Phase {
  kind: 'talk' | 'hold';
  ms: number;
  /** A hold during which the agent consults a colleague. */
  consult?: boolean;
}

interface TalkOptions {
  depth: number;
  /** Reporting queue on the agent's segments (absent for a direct transfer to a person). */
  queueId: string | undefined;
  /** A consulted agent already talks with the first agent before the customer is handed over. */
  extraFirstTalkMs: number;
}

type TransferKind = 'none' | 'blindQueue' | 'blindAgent' | 'consult';

/** Talk and hold phases: talk time split around 0–2 holds, one of which may be a consultation. */
function phasesFor(play: Play, queue: QueueConfig, extraFirstTalkMs: number, consultOnly: boolean): Phase[] {
  const rng = play.rng;
  const talk = play.duration(queue.talkMedianMs, queue.talkSigma, 15 * SECOND, 2 * HOUR);
  let holds = rng.chance(queue.holdRate) ? (rng.chance(0.25) ? 2 : 1) : 0;
  if (consultOnly && holds === 0) holds = 1;
  const parts = Array.from({ length: holds + 1 }, () => rng.between(0.3, 1));
  const sum = parts.reduce((s, x) => s + x, 0);
  const phases: Phase[] = [];
  let given = 0;
  parts.forEach((part, i) => {
    const ms = i === holds ? talk - given : Math.max(SECOND, Math.round((talk * part) / sum));
    given += ms;
    phases.push({ kind: 'talk', ms: i === 0 ? ms + extraFirstTalkMs : ms });
    if (i < holds) {
      const consult = consultOnly && i === 0;
      const held = play.duration(consult ? 50 * SECOND : 40 * SECOND, 0.7, 5 * SECOND, 10 * MINUTE);
      phases.push({ kind: 'hold', ms: held, consult });
    }
  });
  return phases.filter((p) => p.ms > 0);
}

interface Talked {
  end: number;
  talkMs: number;
  heldMs: number;
}

function runPhases(s: SessionDraft, queueId: string | undefined, from: number, phases: readonly Phase[]): Talked {
  let cur = from;
  let talkMs = 0;
  let heldMs = 0;
  for (const phase of phases) {
    const end = cur + phase.ms;
    if (phase.kind === 'talk') {
      s.segment('interact', cur, end, { queueId });
      s.timer('tTalk', cur, end);
      talkMs += phase.ms;
    } else {
      if (phase.consult) s.count('nConsult', cur);
      s.segment('hold', cur, end, { queueId });
      s.timer('tHeld', cur, end);
      heldMs += phase.ms;
    }
    cur = end;
  }
  return { end: cur, talkMs, heldMs };
}

/** Totals when the agent's connected part ends, then after-call work; tHandle = talk + held + ACW. */
function finishAndWrapUp(
  play: Play,
  s: SessionDraft,
  queue: QueueConfig,
  queueId: string | undefined,
  talked: Talked,
  disconnectType: DisconnectType,
  code?: { id: string },
): void {
  const { end, talkMs, heldMs } = talked;
  s.lastSegment().disconnectType = disconnectType;
  if (talkMs > 0) s.total('tTalkComplete', talkMs, end);
  if (heldMs > 0) s.total('tHeldComplete', heldMs, end);
  let acw = play.duration(queue.acwMedianMs, 0.6, 3 * SECOND, 15 * MINUTE);
  let wrapUp = code ?? play.rng.pick(queue.wrapUpCodes);
  if (code === undefined && play.rng.chance(0.03)) {
    wrapUp = WRAP_UP_CODES.timeout;
    acw = 2 * MINUTE;
  }
  s.segment('wrapup', end, end + acw, { queueId, wrapUpCode: wrapUp.id });
  s.timer('tAcw', end, end + acw);
  s.total('tHandle', talkMs + heldMs + acw, end + acw);
}

function converse(
  play: Play,
  s: SessionDraft,
  queue: QueueConfig,
  contact: Contact,
  agent: Agent,
  answerAt: number,
  opts: TalkOptions,
): Ending {
  const rng = play.rng;
  const canTransfer = opts.depth === 0 && contact.mediaType === 'voice';
  let transfer: TransferKind = 'none';
  if (canTransfer && rng.chance(queue.transferRate)) {
    const r = rng.float();
    transfer = r < 0.5 ? 'blindQueue' : r < 0.85 ? 'consult' : 'blindAgent';
  }
  const consultOnly = canTransfer && transfer === 'none' && rng.chance(0.03);
  const phases = phasesFor(play, queue, opts.extraFirstTalkMs, consultOnly);

  if (transfer === 'consult') {
    // The customer waits on hold while the agent reaches a colleague, then the colleague takes over.
    const talked = runPhases(s, opts.queueId, answerAt, phases);
    const colleague = play.agentOf(queue, agent);
    const alertStart = talked.end + Math.round(rng.between(1, 3) * SECOND);
    const answer2 = alertStart + alertDuration(play, queue);
    const handover = answer2 + play.duration(40 * SECOND, 0.6, 10 * SECOND, 5 * MINUTE);
    s.count('nConsult', talked.end);
    s.segment('hold', talked.end, handover, { queueId: opts.queueId });
    s.timer('tHeld', talked.end, handover);
    s.count('nConsultTransferred', handover);
    s.count('nTransferred', handover);
    const held = { end: handover, talkMs: talked.talkMs, heldMs: talked.heldMs + (handover - talked.end) };
    finishAndWrapUp(play, s, queue, opts.queueId, held, 'transfer.consult');

    const s2 = play.agentSession(colleague, contact);
    s2.segment('alert', alertStart, answer2, { queueId: opts.queueId });
    s2.timer('tAlert', alertStart, answer2);
    return converse(play, s2, queue, contact, colleague, answer2, {
      depth: opts.depth + 1,
      queueId: opts.queueId,
      extraFirstTalkMs: handover - answer2,
    });
  }

  const talked = runPhases(s, opts.queueId, answerAt, phases);
  if (transfer === 'none') {
    const customerHangsUp = contact.mediaType === 'email' ? false : rng.chance(0.55);
    finishAndWrapUp(play, s, queue, opts.queueId, talked, customerHangsUp ? 'peer' : 'client');
    return { end: talked.end, customerDisconnect: customerHangsUp ? 'endpoint' : 'peer' };
  }

  s.count('nTransferred', talked.end);
  s.count('nBlindTransferred', talked.end);
  finishAndWrapUp(play, s, queue, opts.queueId, talked, 'transfer');
  if (transfer === 'blindQueue') {
    const others = INBOUND_VOICE_QUEUES.filter((q) => q.id !== queue.id);
    return throughQueue(play, rng.pick(others), contact, talked.end, opts.depth + 1);
  }
  return directToAgent(play, queue, contact, agent, talked.end, opts.depth + 1);
}

/** A blind transfer to a named person (a specialist); unanswered, it goes to that person's voicemail. */
function directToAgent(play: Play, queue: QueueConfig, contact: Contact, from: Agent, at: number, depth: number): Ending {
  const rng = play.rng;
  let person = rng.pick(play.world.agents);
  while (person === from) person = rng.pick(play.world.agents);
  const s = play.agentSession(person, contact);
  const alertStart = at + Math.round(rng.between(300, 1500));
  if (rng.chance(0.35)) {
    const alertEnd = alertStart + 20 * SECOND;
    s.segment('alert', alertStart, alertEnd);
    s.timer('tAlert', alertStart, alertEnd);
    s.timer('tNotResponding', alertStart, alertEnd);
    const message = play.duration(30 * SECOND, 0.5, 5 * SECOND, 3 * MINUTE);
    s.segment('voicemail', alertEnd, alertEnd + message, { disconnectType: 'peer' });
    s.timer('tVoicemail', alertEnd, alertEnd + message);
    return { end: alertEnd + message, customerDisconnect: 'endpoint' };
  }
  const answerAt = alertStart + alertDuration(play, queue);
  s.segment('alert', alertStart, answerAt);
  s.timer('tAlert', alertStart, answerAt);
  return converse(play, s, queue, contact, person, answerAt, { depth, queueId: undefined, extraFirstTalkMs: 0 });
}

// ---- outbound voice: an agent dials a customer ----

function outboundVoice(rng: Rng, world: World, arrival: Arrival): ConversationDraft {
  const t0 = arrival.start;
  const play = new Play(rng, world, t0, 'outbound');
  const queue = pickQueue(play, 'voiceOutbound');
  play.division(queue.divisionId);
  const contact: Contact = {
    stream: 'voiceOutbound',
    mediaType: 'voice',
    direction: 'outbound',
    ani: queue.address,
    dnis: phoneOf(play.customer()),
  };
  const agent = play.agentOf(queue);
  const s = play.agentSession(agent, contact);
  const customer = play.session(play.participant('customer'), contact);
  const queueId = queue.id;

  s.count('nOutbound', t0);
  const dialStart = t0 + Math.round(rng.between(0.8, 3) * SECOND);
  s.segment('contacting', t0, dialStart, { queueId });
  s.timer('tContacting', t0, dialStart);
  s.count('nOutboundAttempted', dialStart);

  const r = rng.float();
  if (r >= 0.6) {
    // No answer (the agent gives up after ringing) or busy (the far end rejects the call quickly).
    const busy = r >= 0.9;
    const dialEnd = dialStart + Math.round(busy ? rng.between(2, 6) * SECOND : rng.between(15, 45) * SECOND);
    s.segment('dialing', dialStart, dialEnd, { queueId, disconnectType: busy ? 'peer' : 'client' });
    s.timer('tDialing', dialStart, dialEnd);
    s.count('nOutboundAbandoned', dialEnd);
    customer.segment('alert', dialStart, dialEnd, { disconnectType: busy ? 'endpoint' : 'peer' });
    const notConnected = { end: dialEnd, talkMs: 0, heldMs: 0 };
    const quickWrapUp = { ...queue, acwMedianMs: 8 * SECOND };
    finishAndWrapUp(play, s, quickWrapUp, queueId, notConnected, busy ? 'peer' : 'client', WRAP_UP_CODES.noAnswer);
    return play.draft;
  }

  const connectAt = dialStart + play.duration(9 * SECOND, 0.5, 2 * SECOND, 40 * SECOND);
  s.segment('dialing', dialStart, connectAt, { queueId });
  s.timer('tDialing', dialStart, connectAt);
  s.count('nOutboundConnected', connectAt);
  customer.count('nConnected', connectAt);
  const talked = runPhases(s, queueId, connectAt, phasesFor(play, queue, 0, false));
  const customerHangsUp = rng.chance(0.4);
  finishAndWrapUp(play, s, queue, queueId, talked, customerHangsUp ? 'peer' : 'client');
  customer.segment('interact', connectAt, talked.end, { disconnectType: customerHangsUp ? 'endpoint' : 'peer' });
  customer.timer('tConnected', connectAt, talked.end);
  return play.draft;
}
