/**
 * Plays out one conversation from its start time and traffic stream: who joins, when each segment starts and
 * ends, and which metrics each session emits. Counts post when their event happens, timers when what they
 * measure ends. Times are epoch milliseconds; records.ts formats and cuts them.
 */
import { loadFactor, nextStaffed, type Arrival } from './arrivals';
import {
  CAMPAIGNS,
  DIVISIONS,
  EDGES,
  IVR_FLOW,
  LANGUAGES,
  MANUAL_OUTBOUND_SHARE,
  WRAP_UP_CODES,
  queuesOfStream,
  type Agent,
  type Campaign,
  type QueueConfig,
  type StreamName,
} from './config';
import { mix32, type Rng } from './prng';
import type {
  ConversationDraft,
  Direction,
  DisconnectType,
  FlowRecord,
  MediaType,
  ParticipantDraft,
  Purpose,
  SessionFields,
} from './records';
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

/** The contact as the queue and the agents see it: its medium, its addresses and how it is routed. */
interface Contact {
  stream: StreamName;
  mediaType: MediaType;
  direction: Direction;
  ani: string | undefined;
  dnis: string | undefined;
  /** The customer as the agent's screen shows them (session.remote of agent and IVR sessions). */
  remote: string | undefined;
  /** Voice: the edge that carries the call (session.edgeId). */
  edgeId: string | undefined;
  /** Messaging: sms, whatsapp, webmessaging, facebook (session.messageType). */
  messageType: string | undefined;
  /** Email and messaging: session.addressFrom / addressTo of the customer's and the agents' sessions. */
  addressFrom: string | undefined;
  addressTo: string | undefined;
  /** Routing language chosen in the IVR or the pre-chat form; absent for the default (English). */
  languageId: string | undefined;
  /** Dialer calls: the campaign and the contact's id in its contact list. */
  campaign: Campaign | undefined;
  outboundContactId: string | undefined;
}

/** How the customer's side of the conversation ended. */
interface Ending {
  end: number;
  customerDisconnect: DisconnectType;
  /** How the queue visit ended, when the contact went through a queue. */
  outcome?: 'answered' | 'abandoned' | 'flowOut';
}

const PROVIDERS: Record<MediaType, string> = {
  voice: 'Edge',
  chat: 'PureCloud Webchat v2',
  message: 'PureCloud Messaging',
  email: 'PureCloud Email',
  callback: 'PureCloud Callback',
};

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

  participant(purpose: Purpose, participantName?: string, agent?: Agent): ParticipantDraft {
    const p: ParticipantDraft = {
      participantId: this.rng.uuid(),
      participantName,
      purpose,
      userId: agent?.id,
      teamId: agent?.teamId,
      sessions: [],
    };
    this.draft.participants.push(p);
    return p;
  }

  /**
   * A session of the contact, with the session fields real records carry for that participant: provider on
   * the customer's and the IVR's, edge on the voice legs of customer and agents, addresses, message type and
   * the dialer campaign wherever the contact goes (as in test/fixtures/shared/genesys-details).
   */
  session(p: ParticipantDraft, contact: Contact): SessionDraft {
    const s = new SessionDraft(this.rng.uuid(), contact.mediaType, contact.direction, contact.ani, contact.dnis);
    const f = s.fields;
    const purpose = p.purpose;
    f.messageType = contact.messageType;
    if (purpose === 'customer' || purpose === 'ivr') f.provider = PROVIDERS[contact.mediaType];
    if (purpose === 'agent' || purpose === 'ivr') f.remote = contact.remote;
    if (purpose === 'customer' || purpose === 'ivr') f.sessionDnis = contact.mediaType === 'voice' ? contact.dnis : undefined;
    if (purpose === 'customer' || purpose === 'agent') {
      f.addressFrom = contact.addressFrom;
      f.addressTo = contact.addressTo;
      f.edgeId = contact.edgeId;
    }
    if (contact.campaign && purpose !== 'voicemail') {
      f.outboundCampaignId = contact.campaign.id;
      f.outboundContactId = contact.outboundContactId;
      f.outboundContactListId = contact.campaign.contactListId;
    }
    p.sessions.push(s);
    return s;
  }

  agentSession(agent: Agent, contact: Contact): SessionDraft {
    return this.session(this.participant('agent', agent.name, agent), contact);
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

/** A dialer contact's id in its list: 32 hex digits, fixed per customer (the form real records show). */
function contactIdOf(customer: number): string {
  let out = '';
  for (let i = 0; i < 4; i++) out += (mix32(customer * 4 + i + 0x51ed) >>> 0).toString(16).padStart(8, '0');
  return out;
}

/** A contact with the given addresses and nothing routed yet. */
function baseContact(stream: StreamName, mediaType: MediaType, direction: Direction, ani?: string, dnis?: string): Contact {
  return {
    stream,
    mediaType,
    direction,
    ani,
    dnis,
    remote: undefined,
    edgeId: undefined,
    messageType: undefined,
    addressFrom: undefined,
    addressTo: undefined,
    languageId: undefined,
    campaign: undefined,
    outboundContactId: undefined,
  };
}

/** The number or address an agent's screen shows for a customer. */
function remoteOf(address: string): string {
  return address.replace(/^(tel|mailto):/, '');
}

/** The routing language: English (the default, not requested) for most, Spanish or French for some. */
function pickLanguage(rng: Rng, spanish: number, french: number): (typeof LANGUAGES)[keyof typeof LANGUAGES] {
  const r = rng.float();
  return r < spanish ? LANGUAGES.spanish : r < spanish + french ? LANGUAGES.french : LANGUAGES.english;
}

const languageIdOf = (language: (typeof LANGUAGES)[keyof typeof LANGUAGES]): string | undefined =>
  language === LANGUAGES.english ? undefined : language.id;

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
  // The IVR flow lives in the Home division: every call that reaches it meets that division too.
  play.division(DIVISIONS.home.id);
  const ani = phoneOf(play.customer());
  const contact = baseContact('voiceInbound', 'voice', 'inbound', ani, queue.address);
  contact.remote = remoteOf(ani);
  contact.edgeId = rng.pick(EDGES);
  // "Para español, oprima dos": the caller picks the language in the menu; it is requested when routing.
  const language = pickLanguage(rng, 0.12, 0.03);
  contact.languageId = languageIdOf(language);
  const customer = play.session(play.participant('customer'), contact);
  customer.count('nConnected', t0);

  const ivr = play.session(play.participant('ivr', IVR_FLOW.name), contact);
  const flowStart = t0 + Math.round(rng.between(30, 120));
  ivr.count('nFlow', flowStart);
  const flow: FlowRecord = {
    flowId: IVR_FLOW.id,
    flowName: IVR_FLOW.name,
    flowType: 'INBOUNDCALL',
    flowVersion: IVR_FLOW.version,
    entryType: 'dnis',
    startingLanguage: LANGUAGES.english.code,
  };
  // What the record shows while the caller is in the menu; the exit is known when the flow ends.
  ivr.fields.flow = { ...flow };
  const menu = play.duration(35 * SECOND, 0.5, 6 * SECOND, 4 * MINUTE);
  const r = rng.float();
  let ending: Ending;
  // The flow ends a few milliseconds after the IVR segment (as in real records).
  const flowEnd = (end: number, exit: 'tFlowExit' | 'tFlowDisconnect'): void => {
    const at = end + 3;
    ivr.timer('tFlow', flowStart, at);
    ivr.timer(exit, flowStart, at);
    ivr.fieldAt('flow', flow, at);
  };
  if (r < 0.05) {
    // Hung up in the menu, before choosing a language.
    const end = t0 + Math.round(menu * rng.between(0.2, 1));
    ivr.segment('ivr', t0, end, { disconnectType: 'peer' });
    ivr.timer('tIvr', t0, end);
    flowEnd(end, 'tFlowDisconnect');
    flow.exitReason = 'DISCONNECT';
    ending = { end, customerDisconnect: 'endpoint' };
  } else if (r < 0.13) {
    // Self-service: balance, opening hours, order status... then the flow says goodbye and hangs up.
    const end = t0 + Math.round(menu * rng.between(1.5, 3));
    ivr.segment('ivr', t0, end, { disconnectType: 'peer' });
    ivr.timer('tIvr', t0, end);
    flowEnd(end, 'tFlowDisconnect');
    flow.exitReason = 'FLOW_DISCONNECT';
    flow.endingLanguage = language.code;
    ending = { end, customerDisconnect: 'endpoint' };
  } else {
    const entry = t0 + menu;
    ivr.segment('ivr', t0, entry, { disconnectType: 'transfer' });
    ivr.timer('tIvr', t0, entry);
    flowEnd(entry, 'tFlowExit');
    flow.exitReason = 'TRANSFER';
    flow.transferType = 'ACD';
    flow.endingLanguage = language.code;
    ending = throughQueue(play, queue, contact, entry, 0, 'ivr');
  }
  const errored = ending.outcome === 'answered' && rng.chance(0.004);
  customer.segment('interact', t0, ending.end, {
    disconnectType: errored ? 'error' : ending.customerDisconnect,
    // The customer's media stopped (as in real records): the call drops with an error.
    errorCode: errored ? 'error.ininedgecontrol.connection.media.endpoint.idle' : undefined,
  });
  if (errored) customer.count('nError', ending.end);
  customer.timer('tConnected', t0, ending.end);
  return play.draft;
}

// ---- chat, message, email, callback: customer → routing flow → queue → agent ----

const MESSAGE_TYPES = ['sms', 'webmessaging', 'whatsapp', 'facebook'] as const;
const MESSAGE_TYPE_WEIGHTS = [0.5, 0.3, 0.12, 0.08];

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
  // Messaging: SMS and WhatsApp come from a phone number; web messaging and Facebook from no address at all.
  const messageType = media === 'message' ? MESSAGE_TYPES[rng.weighted(MESSAGE_TYPE_WEIGHTS)] : undefined;
  const byPhone = media === 'callback' || messageType === 'sms' || messageType === 'whatsapp';
  const ani = media === 'email' ? emailOf(who) : byPhone ? phoneOf(who) : undefined;
  const contact = baseContact(arrival.stream, media, 'inbound', ani, ani === undefined ? undefined : queue.address);
  contact.messageType = messageType;
  contact.remote = ani === undefined ? `Visitor ${who}` : remoteOf(ani);
  if (media === 'email' || media === 'message') {
    contact.addressFrom = ani === undefined ? undefined : remoteOf(ani);
    contact.addressTo = ani === undefined ? undefined : remoteOf(queue.address);
  }
  if (media === 'chat' || media === 'message') contact.languageId = languageIdOf(pickLanguage(rng, 0.08, 0.02));
  if (media === 'message') {
    // Genesys sets these on messaging conversations only; here every one is started by the customer's message.
    play.draft.conversationInitiator = 'customer';
    play.draft.customerParticipation = true;
  }
  // A CRM case number that the web form or the email subject carries, on a few digital contacts.
  if (media !== 'callback' && rng.chance(0.05)) play.draft.externalTag = `CASE-${(100_000 + rng.int(900_000)).toString()}`;
  const customer = play.session(play.participant('customer'), contact);
  customer.count('nConnected', t0);
  const [lo, hi] = FLOW_DELAY[media];
  const entry = t0 + Math.round(rng.between(lo, hi));
  const ending = throughQueue(play, queue, contact, entry, 0, 'flow');
  customer.segment(media === 'callback' ? 'callback' : 'interact', t0, ending.end, {
    disconnectType: ending.customerDisconnect,
  });
  customer.timer('tConnected', t0, ending.end);
  return play.draft;
}

// ---- the queue ----

type Waited =
  | { kind: 'answered'; agent: Agent; alertStart: number; answerAt: number; attempts: number }
  | { kind: 'abandoned' | 'flowOut'; at: number; attempts: number };

function alertDuration(play: Play, queue: QueueConfig): number {
  const median = queue.mediaType === 'voice' || queue.mediaType === 'callback' ? 4 * SECOND : 7 * SECOND;
  return play.duration(median, 0.5, 800, queue.alertTimeoutMs - 500);
}

/** How a queue visit is routed: the skills and language requested, on the ACD session and every agent it offers. */
interface Visit {
  queue: QueueConfig;
  stream: StreamName;
  skills: readonly string[];
  languageId: string | undefined;
}

/** Offers the contact to an agent of the visit: a session whose queue segments carry the visit's skills and language. */
function offeredSession(play: Play, visit: Visit, agent: Agent, contact: Contact): SessionDraft {
  const s = play.agentSession(agent, contact);
  s.skills = visit.skills;
  s.languageId = visit.languageId;
  return s;
}

/**
 * 0–3 of the queue's skills: 60 % of contacts request none, 28 % one, 10 % two, 2 % three; Bullseye queues always
 * request 1–3 (45 % one, 45 % two, 10 % three), so that there is something to relax.
 */
function pickSkills(play: Play, queue: QueueConfig): string[] {
  const rng = play.rng;
  const r = rng.float();
  const wanted = queue.routing === 'Bullseye' ? (r < 0.45 ? 1 : r < 0.9 ? 2 : 3) : r < 0.6 ? 0 : r < 0.88 ? 1 : r < 0.98 ? 2 : 3;
  const skills: string[] = [];
  for (let n = Math.min(wanted, queue.skillIds.length); skills.length < n; ) {
    const skill = rng.pick(queue.skillIds);
    if (!skills.includes(skill)) skills.push(skill);
  }
  return skills;
}

/**
 * The contact waits for an agent. The first offer comes after an exponential wait (scaled by the load of the
 * hour, with a long tail; business-hours queues also wait for opening time); the customer gives up after an
 * exponential patience; the flow takes the contact out after the queue's flow-out time. An alerted agent may
 * not respond, or the offer may fail (an error), and the contact is offered to a second agent.
 */
function waitForAgent(play: Play, visit: Visit, contact: Contact, entry: number): Waited {
  const { queue } = visit;
  const rng = play.rng;
  let firstDelay = rng.exponential(queue.meanWaitMs * loadFactor(contact.stream, entry) * (rng.chance(0.05) ? 5 : 1));
  if (queue.staffedHours === 'business') firstDelay += nextStaffed(entry) - entry;
  // At least 1 ms: a caller who hangs up the instant they are queued still waited (a segment is never empty).
  const abandonAt = entry + Math.max(1, Math.round(rng.exponential(queue.patienceMeanMs)));
  let flowAt = entry + queue.flowOutAfterMs;
  // A quarter of callers would take the "press 1 to leave a message" option if still waiting at the announcement.
  if (queue.mediaType === 'voice' && contact.direction === 'inbound' && rng.chance(0.25)) {
    flowAt = entry + Math.round(rng.between(30, 90) * SECOND);
  }

  let cursor = entry;
  for (let attempt = 0; ; attempt++) {
    const alertStart = cursor + Math.round(attempt === 0 ? firstDelay : 500 + rng.exponential(4 * SECOND));
    const limit = Math.min(abandonAt, flowAt);
    if (alertStart >= limit) return { kind: abandonAt <= flowAt ? 'abandoned' : 'flowOut', at: limit, attempts: attempt };
    const agent = play.agentOf(queue);
    const notResponding = attempt === 0 && rng.chance(queue.notRespondingRate);
    // Now and then the offer fails on the agent's side (a station or protocol error) and is re-offered.
    const failed = attempt === 0 && !notResponding && rng.chance(0.004);
    const alertEnd =
      alertStart + (notResponding ? queue.alertTimeoutMs : failed ? Math.round(rng.between(200, 3000)) : alertDuration(play, queue));
    if (abandonAt < alertEnd) {
      // The customer hangs up while the agent is being alerted.
      const s = offeredSession(play, visit, agent, contact);
      s.segment('alert', alertStart, abandonAt, { queueId: queue.id, disconnectType: 'peer' });
      s.timer('tAlert', alertStart, abandonAt);
      return { kind: 'abandoned', at: abandonAt, attempts: attempt + 1 };
    }
    if (notResponding || failed) {
      const s = offeredSession(play, visit, agent, contact);
      s.segment('alert', alertStart, alertEnd, {
        queueId: queue.id,
        disconnectType: failed ? 'error' : 'noAnswerTransfer',
        errorCode: failed ? 'error.ininedgecontrol.connection.protocol' : undefined,
      });
      s.timer('tAlert', alertStart, alertEnd);
      if (failed) s.count('nError', alertEnd);
      else s.timer('tNotResponding', alertStart, alertEnd);
      cursor = alertEnd;
      continue;
    }
    return { kind: 'answered', agent, alertStart, answerAt: alertEnd, attempts: attempt + 1 };
  }
}

/** Bullseye queues drop the last requested skill once the contact has waited this long (the next ring). */
const BULLSEYE_RING_MS = 20 * SECOND;

/**
 * The routing fields of the ACD session (and of the agent session that answered): requested and used routing,
 * predictive routing's proposed agents and counts, Bullseye's active and removed skills.
 */
function routeFields(play: Play, visit: Visit, acd: SessionDraft, waited: Waited, entry: number, answered?: SessionDraft): void {
  const rng = play.rng;
  const { queue, skills } = visit;
  const f: SessionFields = {};
  const left = waited.kind === 'answered' ? waited.answerAt : waited.at;
  if (queue.routing === 'Predictive') {
    // Predictive routing falls back to standard routing when its model has too few eligible agents.
    const fallback = rng.chance(0.1);
    f.requestedRoutings = fallback ? ['Predictive', 'Standard'] : ['Predictive'];
    const pool = play.world.agentsByQueue.get(queue.id) ?? play.world.agents;
    const attempts = Math.max(1, waited.attempts);
    const load = loadFactor(visit.stream, entry);
    f.eligibleAgentCounts = Array.from({ length: attempts }, () => 1 + rng.int(Math.max(1, Math.round(pool.length / 4))));
    f.waitingInteractionCounts = Array.from({ length: attempts }, () => rng.int(Math.round(4 * load) + 1));
    if (waited.kind === 'answered' && !fallback) {
      // The model ranks a few agents (1 is best); the one who answered is usually the best ranked.
      const others = Array.from({ length: rng.int(3) }, () => rng.pick(pool)).filter(
        (a, i, all) => a !== waited.agent && all.indexOf(a) === i,
      );
      const ranked = [waited.agent, ...others];
      const answererRank = rng.chance(0.8) ? 1 : Math.min(ranked.length, 2);
      f.proposedAgents = ranked.map((a, i) => ({
        proposedAgentId: a.id,
        agentRank: i === 0 ? answererRank : i + 1 === answererRank ? 1 : i + 1,
      }));
    }
    if (waited.kind === 'answered') f.usedRouting = fallback ? 'Standard' : 'Predictive';
  } else {
    f.requestedRoutings = [queue.routing];
    if (waited.kind === 'answered') f.usedRouting = queue.routing;
  }
  // Known at entry: what was requested and the predictive model's counts; known when the contact leaves the
  // queue: the method used and the agents proposed.
  acd.fields.requestedRoutings = f.requestedRoutings;
  acd.fields.eligibleAgentCounts = f.eligibleAgentCounts;
  acd.fields.waitingInteractionCounts = f.waitingInteractionCounts;
  if (f.proposedAgents) acd.fieldAt('proposedAgents', f.proposedAgents, left);
  if (f.usedRouting) acd.fieldAt('usedRouting', f.usedRouting, left);
  if (answered && f.usedRouting) answered.fieldAt('usedRouting', f.usedRouting, left);
  if (queue.routing === 'Bullseye' && skills.length > 0) {
    // Every requested skill is active at first; after the first ring Bullseye drops the last one.
    acd.fields.activeSkillIds = [...skills];
    if (left - entry > BULLSEYE_RING_MS && skills.length > 1) {
      const ring = entry + BULLSEYE_RING_MS;
      acd.fieldAt('activeSkillIds', skills.slice(0, -1), ring);
      acd.fieldAt('removedSkillIds', skills.slice(-1), ring);
      if (answered) {
        answered.fields.activeSkillIds = skills.slice(0, -1);
        answered.fields.removedSkillIds = skills.slice(-1);
      }
    }
  }
}

/** The ACD participant: offered at entry, then answered, abandoned or flowed out. */
function throughQueue(
  play: Play,
  queue: QueueConfig,
  contact: Contact,
  entry: number,
  depth: number,
  flowInType: 'ivr' | 'flow' | 'transfer' | undefined,
): Ending {
  play.division(queue.divisionId);
  const visit: Visit = { queue, stream: contact.stream, skills: pickSkills(play, queue), languageId: contact.languageId };
  const acd = play.session(play.participant('acd', queue.name), contact);
  acd.skills = visit.skills;
  acd.languageId = visit.languageId;
  acd.fields.flowInType = flowInType;
  acd.count('nOffered', entry);
  const callback = contact.mediaType === 'callback';
  if (callback) acd.count('nCallbackScheduled', entry);
  const waited = waitForAgent(play, visit, contact, entry);

  if (waited.kind === 'answered') {
    const { agent, alertStart, answerAt } = waited;
    acd.segment('interact', entry, answerAt, { queueId: queue.id, disconnectType: 'transfer' });
    acd.timer('tAcd', entry, answerAt);
    acd.timer('tWait', entry, answerAt);
    if (callback) acd.timer('tCallbackVirtualWait', entry, answerAt);
    const s = offeredSession(play, visit, agent, contact);
    routeFields(play, visit, acd, waited, entry, s);
    s.segment('alert', alertStart, answerAt, { queueId: queue.id });
    s.timer('tAlert', alertStart, answerAt);
    s.timer('tAnswered', entry, answerAt);
    if (answerAt - entry > queue.slaMs) s.count('nOverSla', answerAt);
    const opts: TalkOptions = { depth, queueId: queue.id, extraFirstTalkMs: 0, visit };
    if (!callback) return { ...converse(play, s, queue, contact, agent, answerAt, opts), outcome: 'answered' };
    return { ...callBack(play, s, queue, contact, agent, entry, answerAt, opts), outcome: 'answered' };
  }

  routeFields(play, visit, acd, waited, entry);
  const at = waited.at;
  const abandoned = waited.kind === 'abandoned';
  acd.segment('interact', entry, at, { queueId: queue.id, disconnectType: abandoned ? 'peer' : 'transfer' });
  acd.timer('tAcd', entry, at);
  acd.timer('tWait', entry, at);
  if (abandoned) {
    acd.timer('tAbandon', entry, at);
    if (at - entry < queue.shortAbandonMs) acd.timer('tShortAbandon', entry, at);
    if (callback) acd.timer('tCallbackAbandon', entry, at);
    return { end: at, customerDisconnect: 'endpoint', outcome: 'abandoned' };
  }
  acd.timer('tFlowOut', entry, at);
  if (contact.mediaType !== 'voice') {
    acd.fieldAt('flowOutType', 'timeout', at);
    return { end: at, customerDisconnect: 'transfer', outcome: 'flowOut' };
  }
  // Voice flows out to the queue's voicemail box.
  acd.fieldAt('flowOutType', 'voicemail', at);
  const message = play.duration(30 * SECOND, 0.5, 5 * SECOND, 3 * MINUTE);
  const box = play.session(play.participant('voicemail', `${queue.name} voicemail`), contact);
  box.segment('voicemail', at, at + message, { queueId: queue.id, disconnectType: 'peer' });
  box.timer('tVoicemail', at, at + message);
  return { end: at + message, customerDisconnect: 'endpoint', outcome: 'flowOut' };
}

/**
 * A callback the agent has accepted: a moment to preview it, then the agent dials the customer. Connected, the
 * call goes on as any other; not reached, the agent wraps up. Callback metrics as docs/catalogue.md places them.
 */
function callBack(
  play: Play,
  s: SessionDraft,
  queue: QueueConfig,
  contact: Contact,
  agent: Agent,
  entry: number,
  answerAt: number,
  opts: TalkOptions,
): Ending {
  const rng = play.rng;
  const dialStart = answerAt + play.duration(6 * SECOND, 0.6, 1 * SECOND, 2 * MINUTE);
  s.segment('callback', answerAt, dialStart, { queueId: queue.id });
  s.count('nCallbackAttempts', dialStart);
  s.timer('tFirstDial', entry, dialStart);
  if (dialStart - entry > queue.slaMs) s.count('nCallbackOverSla', dialStart);
  if (rng.chance(0.15)) {
    // Not reached: the phone rings out or goes to the customer's voicemail.
    const dialEnd = dialStart + Math.round(rng.between(20, 45) * SECOND);
    s.segment('dialing', dialStart, dialEnd, { queueId: queue.id });
    s.timer('tDialing', dialStart, dialEnd);
    s.timer('tCallbackNotReached', dialStart, dialEnd);
    const notReached = { end: dialEnd, talkMs: 0, heldMs: 0 };
    finishAndWrapUp(play, s, { ...queue, acwMedianMs: 10 * SECOND }, queue.id, notReached, 'client', WRAP_UP_CODES.noAnswer);
    return { end: dialEnd, customerDisconnect: 'peer' };
  }
  const connectAt = dialStart + play.duration(8 * SECOND, 0.5, 2 * SECOND, 40 * SECOND);
  s.segment('dialing', dialStart, connectAt, { queueId: queue.id });
  s.timer('tDialing', dialStart, connectAt);
  s.timer('tCallbackConnect', dialStart, connectAt);
  s.timer('tFirstConnect', entry, connectAt);
  return converse(play, s, queue, contact, agent, connectAt, opts);
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
  /** The queue visit that brought the contact (absent for a direct transfer to a person). */
  visit?: Visit;
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
  // Now and then the agent's station drops during wrap-up (as in real records): the session ends in error.
  const inactive = s.mediaType === 'voice' && play.rng.chance(0.004);
  s.segment('wrapup', end, end + acw, {
    queueId,
    wrapUpCode: wrapUp.id,
    errorCode: inactive ? 'error.ininedgecontrol.session.inactive' : undefined,
  });
  s.timer('tAcw', end, end + acw);
  s.total('tHandle', talkMs + heldMs + acw, end + acw);
  if (inactive) s.count('nError', end + acw);
}

/**
 * Messaging metrics of an agent's message session over its talk: the agent answers the customer's messages
 * turn by turn. tAgentResponseTime per answer (how long the customer waited), tFirstResponse for the first,
 * then the session's turns and messages when the conversation ends.
 */
function messagingMetrics(play: Play, s: SessionDraft, from: number, talked: Talked): void {
  const rng = play.rng;
  const span = talked.end - from;
  const turns = Math.max(1, Math.min(12, Math.round(span / (3 * MINUTE))));
  let previous = from;
  for (let i = 0; i < turns; i++) {
    const at = from + Math.round((span * (i + 0.5)) / turns);
    if (at <= previous) break;
    const waited = Math.min(at - previous, play.duration(40 * SECOND, 0.8, 2 * SECOND, 10 * MINUTE));
    s.total('tAgentResponseTime', waited, at);
    if (i === 0) s.timer('tFirstResponse', from, at);
    previous = at;
  }
  s.total('oMessageTurn', turns, talked.end);
  s.total('oMessageCount', 2 * turns + rng.int(turns + 2), talked.end);
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
  const canTransfer = opts.depth === 0 && contact.mediaType === 'voice' && contact.direction === 'inbound';
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
    finishAndWrapUp(play, s, queue, opts.queueId, held, 'consultTransfer');

    const s2 = opts.visit ? offeredSession(play, opts.visit, colleague, contact) : play.agentSession(colleague, contact);
    s2.segment('alert', alertStart, answer2, { queueId: opts.queueId });
    s2.timer('tAlert', alertStart, answer2);
    return converse(play, s2, queue, contact, colleague, answer2, {
      depth: opts.depth + 1,
      queueId: opts.queueId,
      extraFirstTalkMs: handover - answer2,
      visit: opts.visit,
    });
  }

  const talked = runPhases(s, opts.queueId, answerAt, phases);
  if (contact.mediaType === 'message') messagingMetrics(play, s, answerAt, talked);
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
    return throughQueue(play, rng.pick(others), contact, talked.end, opts.depth + 1, 'transfer');
  }
  return directToAgent(play, queue, contact, agent, talked.end, opts.depth + 1);
}

/** A blind transfer to a named person (a specialist); unanswered, it goes to that person's voicemail. */
function directToAgent(play: Play, queue: QueueConfig, contact: Contact, from: Agent, at: number, depth: number): Ending {
  const rng = play.rng;
  let person = rng.pick(play.world.agents);
  while (person === from) person = rng.pick(play.world.agents);
  const s = play.agentSession(person, contact);
  s.fields.requestedRoutings = ['Direct'];
  const alertStart = at + Math.round(rng.between(300, 1500));
  if (rng.chance(0.35)) {
    const alertEnd = alertStart + 20 * SECOND;
    s.segment('alert', alertStart, alertEnd);
    s.timer('tAlert', alertStart, alertEnd);
    s.timer('tNotResponding', alertStart, alertEnd);
    // The person's voicemail takes the call: a voicemail participant of theirs (with their userId) emits tVoicemail.
    const message = play.duration(30 * SECOND, 0.5, 5 * SECOND, 3 * MINUTE);
    const owner = play.participant('voicemail', `${person.name} voicemail`);
    owner.userId = person.id;
    const box = play.session(owner, contact);
    box.segment('voicemail', alertEnd, alertEnd + message, { disconnectType: 'peer' });
    box.timer('tVoicemail', alertEnd, alertEnd + message);
    return { end: alertEnd + message, customerDisconnect: 'endpoint' };
  }
  const answerAt = alertStart + alertDuration(play, queue);
  s.fieldAt('usedRouting', 'Direct', answerAt);
  s.segment('alert', alertStart, answerAt);
  s.timer('tAlert', alertStart, answerAt);
  return converse(play, s, queue, contact, person, answerAt, { depth, queueId: undefined, extraFirstTalkMs: 0 });
}

// ---- outbound voice: agents' own calls, preview campaigns, and the predictive dialer ----

function outboundVoice(rng: Rng, world: World, arrival: Arrival): ConversationDraft {
  const t0 = arrival.start;
  const play = new Play(rng, world, t0, 'outbound');
  const queue = pickQueue(play, 'voiceOutbound');
  play.division(queue.divisionId);
  const who = play.customer();
  const dnis = phoneOf(who);
  const contact = baseContact('voiceOutbound', 'voice', 'outbound', queue.address, dnis);
  contact.remote = remoteOf(dnis);
  contact.edgeId = rng.pick(EDGES);
  const campaign = CAMPAIGNS[rng.weighted([...CAMPAIGNS.map((c) => c.share), MANUAL_OUTBOUND_SHARE])];
  if (campaign) {
    contact.campaign = campaign;
    contact.outboundContactId = contactIdOf(who);
  }
  if (campaign?.mode === 'predictive') return predictiveDial(play, queue, contact, t0);

  // The agent places the call: a preview of a campaign's contact, or a call of their own.
  const agent = play.agentOf(queue);
  const s = play.agentSession(agent, contact);
  const customer = play.session(play.participant('customer'), contact);
  const queueId = queue.id;

  s.count('nOutbound', t0);
  const dialStart = t0 + Math.round(rng.between(0.8, 3) * SECOND);
  s.segment('contacting', t0, dialStart, { queueId });
  s.timer('tContacting', t0, dialStart);
  if (campaign) s.count('nOutboundAttempted', dialStart);

  const r = rng.float();
  if (r >= 0.6) {
    // No answer (the agent gives up after ringing) or busy (the far end rejects the call quickly).
    const busy = r >= 0.9;
    const dialEnd = dialStart + Math.round(busy ? rng.between(2, 6) * SECOND : rng.between(15, 45) * SECOND);
    s.segment('dialing', dialStart, dialEnd, { queueId, disconnectType: busy ? 'peer' : 'client' });
    s.timer('tDialing', dialStart, dialEnd);
    customer.segment('alert', dialStart, dialEnd, { disconnectType: busy ? 'endpoint' : 'peer' });
    const notConnected = { end: dialEnd, talkMs: 0, heldMs: 0 };
    const quickWrapUp = { ...queue, acwMedianMs: 8 * SECOND };
    finishAndWrapUp(play, s, quickWrapUp, queueId, notConnected, busy ? 'peer' : 'client', WRAP_UP_CODES.noAnswer);
    return play.draft;
  }

  const connectAt = dialStart + play.duration(9 * SECOND, 0.5, 2 * SECOND, 40 * SECOND);
  s.segment('dialing', dialStart, connectAt, { queueId });
  s.timer('tDialing', dialStart, connectAt);
  if (campaign) s.count('nOutboundConnected', connectAt);
  customer.count('nConnected', connectAt);
  const talked = runPhases(s, queueId, connectAt, phasesFor(play, queue, 0, false));
  const customerHangsUp = rng.chance(0.4);
  finishAndWrapUp(play, s, queue, queueId, talked, customerHangsUp ? 'peer' : 'client');
  customer.segment('interact', connectAt, talked.end, { disconnectType: customerHangsUp ? 'endpoint' : 'peer' });
  customer.timer('tConnected', connectAt, talked.end);
  return play.draft;
}

/**
 * The predictive dialer calls the contact; only an answered call goes to the campaign's queue, where an agent
 * should be free within a second or two. A called party who hangs up before an agent is connected is an
 * abandoned outbound call (nOutboundAbandoned, on the customer's session, as docs/catalogue.md places it).
 */
function predictiveDial(play: Play, queue: QueueConfig, contact: Contact, t0: number): ConversationDraft {
  const rng = play.rng;
  const customer = play.session(play.participant('customer'), contact);
  customer.count('nOutboundAttempted', t0);
  const r = rng.float();
  if (r >= 0.5) {
    // No answer, busy, or an answering machine the dialer hangs up on.
    const busy = r >= 0.9;
    const machine = !busy && r >= 0.75;
    const end = t0 + Math.round((busy ? rng.between(2, 6) : machine ? rng.between(8, 15) : rng.between(20, 30)) * SECOND);
    customer.segment('dialing', t0, end, { queueId: queue.id, disconnectType: machine ? 'system' : busy ? 'endpoint' : 'client' });
    return play.draft;
  }
  const connectAt = t0 + play.duration(9 * SECOND, 0.5, 2 * SECOND, 30 * SECOND);
  // The campaign's queue is on the called party's segments too (as in real dialer records).
  customer.segment('dialing', t0, connectAt, { queueId: queue.id });
  customer.count('nOutboundConnected', connectAt);
  customer.count('nConnected', connectAt);
  // The dialer paces calls to the agents it expects free: waits are short and the called party is impatient.
  const dialerQueue: QueueConfig = { ...queue, meanWaitMs: 1200, patienceMeanMs: 25 * SECOND, notRespondingRate: 0.01 };
  const ending = throughQueue(play, dialerQueue, contact, connectAt, 0, undefined);
  if (ending.outcome === 'abandoned') customer.count('nOutboundAbandoned', ending.end);
  customer.segment('interact', connectAt, ending.end, { queueId: queue.id, disconnectType: ending.customerDisconnect });
  customer.timer('tConnected', connectAt, ending.end);
  return play.draft;
}
