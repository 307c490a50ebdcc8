/**
 * Deterministic contact-center traffic in the conversation-detail record format of the ingest endpoint.
 * Pure (no Node imports): `npm run simulate`, `npm run dev`, the benchmarks and the tests in workerd share it.
 *
 * What the numbers look like (all times UTC; see config.ts for every figure):
 * - Traffic: 56 % inbound voice, 12 % outbound voice, 12 % chat, 8 % message, 8 % email, 4 % callback.
 *   Hourly curves per stream: quiet nights (voice at 03:00 is ~3 % of its 10:00 peak), morning peak 09–11,
 *   lunch dip, afternoon peak 14–15, chat and messaging busier in the evening, outbound dialling only in
 *   business hours; weekends carry about 40 % of a weekday's voice. Exactly `conversations` start in the window.
 * - 8 queues in 2 divisions (and the Home division of the IVR flow, which every inbound call also meets, so
 *   inbound voice conversations carry 2–3 divisionIds). Inbound voice: Customer Service (50 %), Billing (30 %), Technical Support (20 %),
 *   SLA 20 s (Technical Support 30 s), short abandons under 10 s. Web Chat (SLA 60 s), Messaging (5 min),
 *   Email Support (1 h), Callbacks (15 min), Outbound Sales. Email and callbacks are staffed Mon–Fri 07–21 and
 *   Sat–Sun 09–17; what arrives outside waits for opening time.
 * - Inbound voice: ~35 s in the IVR (5 % hang up there, 8 % self-serve), then the queue. Wait before the first
 *   alert: exponential with a mean of 6–14 s at average load, scaled ×0.6–1.8 by the hour's load, 5 % of calls
 *   with a 5× tail. Patience: exponential, mean 5 min. A quarter of callers would take the "leave a message"
 *   option at the 30–90 s announcement, and the queue flows out to voicemail after 6 min. 4 % of first alerts
 *   go unanswered (15 s timeout: tNotResponding) and a second agent is alerted. With seed 42 over a week this
 *   gives 5–9 % abandons (about half of them short), ~1 % flow-outs, and service levels of 69–77 % at 20 s
 *   (Technical Support 30 s); chat ~80 % at 60 s, messaging ~84 % at 5 min, email ~66 % at 1 h.
 * - Answered: talk log-normal around 4–7 min; 18–35 % of calls have 1–2 holds (~40 s); 6–10 % are transferred
 *   (half blind to another queue, a third consult transfers, the rest blind to a named person, a third of whom
 *   do not answer and the caller leaves a voicemail: tVoicemail on that person's voicemail participant, as on
 *   a queue's voicemail box); 3 % consult without transferring.
 *   After-call work around 30–60 s with a wrap-up code (3 % time out: ININ-WRAP-UP-TIMEOUT after 2 min).
 * - Outbound: 45 % predictive dialer ("Winter renewals": the dialer calls, 50 % answer, the answered call goes
 *   to Outbound Sales and an agent within ~1 s; a called party who hangs up first is nOutboundAbandoned on the
 *   customer's session), 25 % preview campaign ("Broadband upgrade": the agent dials) and 30 % agents' own
 *   calls. Agent-dialled: contacting 1–3 s, 60 % connect after ~9 s of ringing, 30 % no answer (agent gives up
 *   after 15–45 s), 10 % busy; connected calls talk ~3 min. Campaign calls carry outboundCampaignId,
 *   outboundContactId and outboundContactListId on every session and count nOutboundAttempted/Connected.
 * - Chat ~9 min, message ~15 min (async), email ~6 min of handling (waits ~25 min when staffed), callbacks ~4 min.
 *   Messaging: messageType sms 50 %, webmessaging 30 %, whatsapp 12 %, facebook 8 %; the agent's session counts
 *   a turn every ~3 min (oMessageTurn, oMessageCount, tAgentResponseTime per answer, tFirstResponse).
 *   Callbacks: nCallbackScheduled and tCallbackVirtualWait (or tCallbackAbandon) on the queue; the agent previews,
 *   dials (nCallbackAttempts, tFirstDial, nCallbackOverSla after the SLA) and reaches the customer (85 %,
 *   tCallbackConnect, tFirstConnect) or not (tCallbackNotReached).
 * - Routing: each queue visit requests 0–3 of its queue's skills (60 % none; Technical Support always 1–3) and,
 *   for 15 % of callers (12 % Spanish, 3 % French, chosen in the IVR) and 10 % of chats and messages, a
 *   language. Customer Service routes predictively (proposedAgents, eligibleAgentCounts,
 *   waitingInteractionCounts; 10 % fall back to Standard), Technical Support by Bullseye (the last skill is
 *   removed after 20 s: activeSkillIds, removedSkillIds), the rest Standard; direct transfers are Direct.
 * - IVR sessions carry the Main Menu flow (session.flow) and the flow metrics real records carry (nFlow, tFlow,
 *   tFlowExit or tFlowDisconnect): ingest skips those; the summary counts them apart. The ACD session says
 *   flowInType (ivr, flow, transfer) and, with tFlowOut, flowOutType (voicemail, timeout).
 * - Now and then (0.4 % each) an offer fails with an error and is re-offered, an agent's station drops in
 *   wrap-up, or the customer's media stops: nError with the segment's errorCode.
 * - Agents: about 65 conversations per agent-day (500 agents for 1 M conversations over 30 days, at least 16),
 *   each skilled in 1–3 queues and in one of 6 teams (participant.teamId). Agents are not scheduled: one may hold
 *   overlapping conversations.
 * - Metrics post as the contract says: counts when the event happens, timers when what they measure ends.
 *   tTalk and tHeld post per talk or hold segment; tTalkComplete and tHeldComplete post the session's totals
 *   when the agent's connected part ends; tHandle = tTalk + tHeld + tAcw, posted at the end of after-call work.
 * - Conversations still going at `end` are cut there: nothing at or after `end`, open segments lose their end,
 *   conversationEnd is left out, and session fields not yet known (usedRouting, the flow's exit...) too.
 */
import { arrivals } from './arrivals';
import {
  CAMPAIGNS,
  DIVISIONS,
  EDGES,
  IVR_FLOW,
  LANGUAGES,
  QUEUES,
  SKILLS,
  TEAMS,
  WRAP_UP_CODES,
  agentCountFor,
  buildAgents,
  type Agent,
} from './config';
import { playConversation, type World } from './conversation';
import { Rng } from './prng';
import { finalizeConversation, type ConversationRecord } from './records';

export * from './records';
export {
  CAMPAIGNS,
  DIVISIONS,
  EDGES,
  IVR_FLOW,
  IVR_FLOW_NAME,
  LANGUAGES,
  MANUAL_OUTBOUND_SHARE,
  QUEUES,
  SKILLS,
  TEAMS,
  TRAFFIC,
  WRAP_UP_CODES,
  agentCountFor,
  buildAgents,
} from './config';
export type { Agent, Campaign, Division, Named, QueueConfig, TrafficStream, WrapUpCode } from './config';
export { Rng } from './prng';
export { SummaryCollector, conversationOutcome, summarize, type Outcome, type SimulationSummary } from './summary';

const DAY = 86_400_000;
export const MAX_DAYS = 366;
export const MAX_CONVERSATIONS = 10_000_000;

export interface SimulationOptions {
  /** Length of the window, in days (fractions allowed, at least one minute). */
  days: number;
  /** Exactly this many conversations start in the window. */
  conversations: number;
  /** Any integer from 0 to 2^53 - 1; the same options give the same records. */
  seed: number;
  /** End of the window (exclusive); the window is [end - days, end). */
  end: Date;
}

/** Problems with the options, as readable sentences (empty when they are fine). */
export function optionProblems(opts: SimulationOptions): string[] {
  const problems: string[] = [];
  if (!Number.isFinite(opts.days) || opts.days * 1440 < 1 || opts.days > MAX_DAYS) {
    problems.push(`days must be a number from 1/1440 (one minute) to ${MAX_DAYS}`);
  }
  if (!Number.isSafeInteger(opts.conversations) || opts.conversations < 1 || opts.conversations > MAX_CONVERSATIONS) {
    problems.push(`conversations must be a whole number from 1 to ${MAX_CONVERSATIONS}`);
  }
  if (!Number.isSafeInteger(opts.seed) || opts.seed < 0) problems.push('seed must be a whole number from 0 to 2^53 - 1');
  if (!(opts.end instanceof Date) || Number.isNaN(opts.end.getTime())) problems.push('end must be a valid date');
  return problems;
}

export interface SimulationConfig {
  divisions: typeof DIVISIONS;
  queues: typeof QUEUES;
  wrapUpCodes: typeof WRAP_UP_CODES;
  teams: typeof TEAMS;
  skills: typeof SKILLS;
  languages: typeof LANGUAGES;
  campaigns: typeof CAMPAIGNS;
  edges: typeof EDGES;
  ivrFlow: typeof IVR_FLOW;
  agents: Agent[];
  /** The window the traffic covers: [start, end). */
  start: Date;
  end: Date;
}

/** The queues, agents and window a run with these options uses. */
export function simulationConfig(opts: SimulationOptions): SimulationConfig {
  const endMs = opts.end.getTime();
  return {
    divisions: DIVISIONS,
    queues: QUEUES,
    wrapUpCodes: WRAP_UP_CODES,
    teams: TEAMS,
    skills: SKILLS,
    languages: LANGUAGES,
    campaigns: CAMPAIGNS,
    edges: EDGES,
    ivrFlow: IVR_FLOW,
    agents: buildAgents(agentCountFor(opts.conversations, opts.days)),
    start: new Date(endMs - Math.round(opts.days * DAY)),
    end: new Date(endMs),
  };
}

/**
 * Yields `conversations` records in conversation-start order. Lazy: memory does not grow with the count.
 * Throws a RangeError for invalid options.
 */
export function* simulateConversations(opts: SimulationOptions): Generator<ConversationRecord, void, undefined> {
  const problems = optionProblems(opts);
  if (problems.length > 0) throw new RangeError(problems.join('; '));
  const config = simulationConfig(opts);
  const agentsByQueue = new Map<string, Agent[]>(QUEUES.map((q) => [q.id, []]));
  for (const agent of config.agents) for (const q of agent.queueIds) agentsByQueue.get(q)?.push(agent);
  const world: World = {
    agents: config.agents,
    agentsByQueue,
    customerPool: Math.max(500, Math.round(opts.conversations * 0.6)),
  };
  const startMs = config.start.getTime();
  const endMs = config.end.getTime();
  let index = 0;
  for (const arrival of arrivals(Rng.stream(opts.seed, 'arrivals'), startMs, endMs, opts.conversations)) {
    const draft = playConversation(Rng.stream(opts.seed, 'conversation', index++), world, arrival);
    yield finalizeConversation(draft, endMs);
  }
}
