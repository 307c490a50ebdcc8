/**
 * The simulated contact center: divisions, queues (with their service-level thresholds and the behaviour of the
 * contacts they take), wrap-up codes, agents, and the traffic mix with its daily and weekly shape.
 *
 * Ids are fixed (queues, divisions, wrap-up codes) or derived from the agent's index alone, so every run,
 * whatever its seed, talks about the same queues and the same agents.
 */
import type { Direction, MediaType } from './records';
import { Rng } from './prng';

export interface Division {
  id: string;
  name: string;
}

export const DIVISIONS = {
  retail: { id: 'cc9873ae-8c8e-4754-8795-74360c90ad1e', name: 'Retail' },
  business: { id: '9e606157-8534-4ffc-a0fb-03aa82173c19', name: 'Business' },
} as const satisfies Record<string, Division>;

export interface WrapUpCode {
  id: string;
  name: string;
}

export const WRAP_UP_CODES = {
  resolved: { id: '3706e746-6666-4548-b13b-06d2b9688e1e', name: 'Resolved' },
  information: { id: '8784872c-ae18-4cc7-9336-2048468e8830', name: 'Information provided' },
  followUp: { id: '5098c615-a360-42d8-a2ff-de30ac1bb830', name: 'Follow-up required' },
  complaint: { id: '23c102ff-223d-4e2a-a74f-7521bc59aa45', name: 'Complaint logged' },
  payment: { id: '5d30c0e1-1bbd-4aab-b9a6-a2cf1b4c680d', name: 'Payment taken' },
  adjustment: { id: '19e54560-2de5-4d87-b3a2-4281c9b5f50d', name: 'Billing adjustment' },
  escalated: { id: 'a12d6323-92a9-4b87-a73b-9bdd727b0afc', name: 'Escalated to tier 2' },
  sale: { id: '7090729a-5604-40da-aabf-9d60a230e5e3', name: 'Sale' },
  noSale: { id: '7ea4ec97-4450-4f53-9203-241576056a5d', name: 'No sale' },
  callbackRequested: { id: '17beaeaf-388e-4c49-9af6-3e693cba2562', name: 'Callback requested' },
  noAnswer: { id: '9bc8cc22-ec8f-4829-b2aa-b2afb2bc0d05', name: 'No answer' },
  spam: { id: 'ca83cc67-99c1-46a9-98b9-12c8510b3160', name: 'Spam' },
  // Genesys' system code when an agent lets the wrap-up timer run out.
  timeout: { id: 'ININ-WRAP-UP-TIMEOUT', name: 'Wrap-up timeout' },
} as const satisfies Record<string, WrapUpCode>;

const W = WRAP_UP_CODES;
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export interface QueueConfig {
  id: string;
  name: string;
  divisionId: string;
  mediaType: MediaType;
  direction: Direction;
  /** Answered later than this (tAnswered > slaMs) counts in nOverSla. */
  slaMs: number;
  /** Abandoned sooner than this also counts in tShortAbandon. */
  shortAbandonMs: number;
  /** Service-level target for this queue (a suggestion for the org settings; the data does not depend on it). */
  serviceLevelTarget: number;
  /** The number customers dial or write to (inbound), or the caller id shown (outbound). */
  address: string;
  /** 'business': staffed Mon–Fri 07:00–21:00 and Sat–Sun 09:00–17:00 UTC; contacts arriving outside wait. */
  staffedHours: 'always' | 'business';
  /** Share of its traffic stream (the inbound voice queues split the inbound voice stream). */
  share: number;
  /** Share of the agents whose main skill this queue is. */
  staffWeight: number;
  /** Mean time before the first agent is alerted, at average load (exponential, with a long tail). */
  meanWaitMs: number;
  /** Mean time a customer waits before giving up (exponential); Infinity: never abandons. */
  patienceMeanMs: number;
  /** The routing flow takes the contact out of the queue after this long (voicemail, offline form...). */
  flowOutAfterMs: number;
  /** How long an agent is alerted before the offer counts as not responding. */
  alertTimeoutMs: number;
  notRespondingRate: number;
  talkMedianMs: number;
  talkSigma: number;
  holdRate: number;
  transferRate: number;
  acwMedianMs: number;
  wrapUpCodes: readonly WrapUpCode[];
}

type QueueBehaviour = Omit<QueueConfig, 'id' | 'name' | 'divisionId' | 'mediaType' | 'direction' | 'address'>;

const VOICE: Omit<QueueBehaviour, 'share' | 'staffWeight' | 'wrapUpCodes'> = {
  slaMs: 20 * SECOND,
  shortAbandonMs: 10 * SECOND,
  serviceLevelTarget: 0.8,
  staffedHours: 'always',
  meanWaitMs: 6 * SECOND,
  patienceMeanMs: 5 * MINUTE,
  flowOutAfterMs: 6 * MINUTE,
  alertTimeoutMs: 15 * SECOND,
  notRespondingRate: 0.04,
  talkMedianMs: 4 * MINUTE,
  talkSigma: 0.6,
  holdRate: 0.18,
  transferRate: 0.06,
  acwMedianMs: 30 * SECOND,
};

export const QUEUES: readonly QueueConfig[] = [
  {
    ...VOICE,
    id: '2776d5a8-1e7e-4d1b-9b29-72c98568d263',
    name: 'Customer Service',
    divisionId: DIVISIONS.retail.id,
    mediaType: 'voice',
    direction: 'inbound',
    address: 'tel:+18005550100',
    share: 0.5,
    staffWeight: 0.25,
    wrapUpCodes: [W.resolved, W.resolved, W.information, W.followUp, W.complaint],
  },
  {
    ...VOICE,
    id: '85fb58ae-75fa-4acf-b99b-5e5bd8322289',
    name: 'Billing',
    divisionId: DIVISIONS.retail.id,
    mediaType: 'voice',
    direction: 'inbound',
    address: 'tel:+18005550110',
    share: 0.3,
    staffWeight: 0.15,
    meanWaitMs: 8 * SECOND,
    talkMedianMs: 5 * MINUTE,
    holdRate: 0.25,
    transferRate: 0.08,
    acwMedianMs: 40 * SECOND,
    wrapUpCodes: [W.payment, W.adjustment, W.resolved, W.followUp],
  },
  {
    ...VOICE,
    id: '13fcf662-dbf9-4254-9599-144c867755d8',
    name: 'Technical Support',
    divisionId: DIVISIONS.business.id,
    mediaType: 'voice',
    direction: 'inbound',
    address: 'tel:+18005550120',
    slaMs: 30 * SECOND,
    serviceLevelTarget: 0.7,
    share: 0.2,
    staffWeight: 0.15,
    meanWaitMs: 14 * SECOND,
    talkMedianMs: 7 * MINUTE,
    talkSigma: 0.7,
    holdRate: 0.35,
    transferRate: 0.1,
    acwMedianMs: 60 * SECOND,
    wrapUpCodes: [W.resolved, W.escalated, W.followUp, W.information],
  },
  {
    ...VOICE,
    id: 'a871922f-77fc-4a6b-ac78-0801afcf62e2',
    name: 'Outbound Sales',
    divisionId: DIVISIONS.business.id,
    mediaType: 'voice',
    direction: 'outbound',
    address: 'tel:+18005550130',
    staffedHours: 'business',
    share: 1,
    staffWeight: 0.12,
    talkMedianMs: 3 * MINUTE,
    holdRate: 0.08,
    transferRate: 0,
    acwMedianMs: 25 * SECOND,
    wrapUpCodes: [W.sale, W.noSale, W.noSale, W.callbackRequested],
  },
  {
    id: 'a9609c1f-70cb-4c2a-97d1-afb8f45861f6',
    name: 'Web Chat',
    divisionId: DIVISIONS.retail.id,
    mediaType: 'chat',
    direction: 'inbound',
    address: 'https://switchboard.example/chat',
    slaMs: 60 * SECOND,
    shortAbandonMs: 10 * SECOND,
    serviceLevelTarget: 0.8,
    staffedHours: 'always',
    share: 1,
    staffWeight: 0.13,
    meanWaitMs: 20 * SECOND,
    patienceMeanMs: 8 * MINUTE,
    flowOutAfterMs: 15 * MINUTE,
    alertTimeoutMs: 30 * SECOND,
    notRespondingRate: 0.03,
    talkMedianMs: 9 * MINUTE,
    talkSigma: 0.5,
    holdRate: 0,
    transferRate: 0,
    acwMedianMs: 45 * SECOND,
    wrapUpCodes: [W.resolved, W.information, W.followUp, W.spam],
  },
  {
    id: 'c38c62e8-821b-4c2c-984d-c01d4655727e',
    name: 'Messaging',
    divisionId: DIVISIONS.retail.id,
    mediaType: 'message',
    direction: 'inbound',
    address: 'tel:+18005550150',
    slaMs: 5 * MINUTE,
    shortAbandonMs: 10 * SECOND,
    serviceLevelTarget: 0.8,
    staffedHours: 'always',
    share: 1,
    staffWeight: 0.08,
    meanWaitMs: 2 * MINUTE,
    patienceMeanMs: 2 * HOUR,
    flowOutAfterMs: 8 * HOUR,
    alertTimeoutMs: 60 * SECOND,
    notRespondingRate: 0.05,
    talkMedianMs: 15 * MINUTE,
    talkSigma: 0.7,
    holdRate: 0,
    transferRate: 0,
    acwMedianMs: 30 * SECOND,
    wrapUpCodes: [W.resolved, W.information, W.followUp],
  },
  {
    id: '0769b275-8eed-4dd2-b477-c8127045d777',
    name: 'Email Support',
    divisionId: DIVISIONS.business.id,
    mediaType: 'email',
    direction: 'inbound',
    address: 'mailto:support@switchboard.example',
    slaMs: HOUR,
    shortAbandonMs: 10 * SECOND,
    serviceLevelTarget: 0.9,
    staffedHours: 'business',
    share: 1,
    staffWeight: 0.07,
    meanWaitMs: 25 * MINUTE,
    patienceMeanMs: Infinity,
    flowOutAfterMs: 48 * HOUR,
    alertTimeoutMs: 60 * SECOND,
    notRespondingRate: 0.03,
    talkMedianMs: 6 * MINUTE,
    talkSigma: 0.6,
    holdRate: 0,
    transferRate: 0,
    acwMedianMs: 60 * SECOND,
    wrapUpCodes: [W.resolved, W.information, W.followUp, W.escalated, W.spam],
  },
  {
    ...VOICE,
    id: '3f9a411d-1386-4a26-9474-4aea40b239f8',
    name: 'Callbacks',
    divisionId: DIVISIONS.retail.id,
    mediaType: 'callback',
    direction: 'inbound',
    address: 'tel:+18005550100',
    slaMs: 15 * MINUTE,
    staffedHours: 'business',
    share: 1,
    staffWeight: 0.05,
    meanWaitMs: 6 * MINUTE,
    patienceMeanMs: 6 * HOUR,
    flowOutAfterMs: 24 * HOUR,
    alertTimeoutMs: 20 * SECOND,
    holdRate: 0.1,
    transferRate: 0,
    wrapUpCodes: [W.resolved, W.information, W.payment, W.followUp],
  },
];

/** The IVR flow every inbound call passes through before a queue. */
export const IVR_FLOW_NAME = 'Main Menu';

// ---- traffic: streams, their shares of all conversations, and their hourly shape (UTC) ----

export type StreamName = 'voiceInbound' | 'voiceOutbound' | 'chat' | 'message' | 'email' | 'callback';

export interface TrafficStream {
  name: StreamName;
  /** Share of all conversations over the simulated window. */
  share: number;
  /** Relative arrival rate per hour of day, Monday to Friday. */
  weekday: readonly number[];
  /** Relative arrival rate per hour of day, Saturday and Sunday. */
  weekend: readonly number[];
}

// Hour:                 00    01    02    03    04    05    06    07    08    09    10    11    12    13    14    15    16    17    18    19    20    21    22    23
const VOICE_WEEKDAY = [
  0.06, 0.04, 0.03, 0.03, 0.04, 0.08, 0.2, 0.5, 0.85, 1.0, 1.0, 0.95, 0.78, 0.85, 0.95, 0.9, 0.8, 0.62, 0.45, 0.32, 0.24, 0.18, 0.12, 0.08,
];
const VOICE_WEEKEND = [
  0.05, 0.03, 0.02, 0.02, 0.03, 0.04, 0.08, 0.15, 0.25, 0.35, 0.4, 0.42, 0.4, 0.38, 0.36, 0.34, 0.3, 0.25, 0.2, 0.16, 0.12, 0.1, 0.08, 0.06,
];
const SALES_WEEKDAY = [0, 0, 0, 0, 0, 0, 0, 0, 0.3, 1.0, 1.0, 0.9, 0.4, 0.8, 1.0, 1.0, 0.9, 0.5, 0.15, 0, 0, 0, 0, 0];
const SALES_WEEKEND = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.2, 0.2, 0.15, 0.15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const CHAT_WEEKDAY = [
  0.1, 0.06, 0.04, 0.03, 0.03, 0.05, 0.12, 0.3, 0.55, 0.75, 0.85, 0.9, 0.95, 0.9, 0.85, 0.85, 0.8, 0.8, 0.85, 0.9, 0.85, 0.6, 0.35, 0.2,
];
const CHAT_WEEKEND = [
  0.1, 0.06, 0.04, 0.03, 0.03, 0.04, 0.08, 0.15, 0.3, 0.45, 0.55, 0.6, 0.6, 0.6, 0.58, 0.55, 0.55, 0.55, 0.6, 0.65, 0.6, 0.45, 0.3, 0.18,
];
const MESSAGE_WEEKDAY = [
  0.15, 0.08, 0.05, 0.04, 0.04, 0.06, 0.15, 0.35, 0.6, 0.75, 0.8, 0.85, 0.9, 0.85, 0.8, 0.8, 0.8, 0.85, 0.9, 0.95, 0.9, 0.75, 0.5, 0.3,
];
const MESSAGE_WEEKEND = [
  0.15, 0.08, 0.05, 0.04, 0.04, 0.05, 0.1, 0.2, 0.4, 0.55, 0.65, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.75, 0.8, 0.75, 0.6, 0.4, 0.25,
];
const EMAIL_WEEKDAY = [
  0.2, 0.15, 0.12, 0.12, 0.15, 0.2, 0.35, 0.6, 0.9, 1.0, 1.0, 0.95, 0.8, 0.9, 0.95, 0.9, 0.85, 0.7, 0.55, 0.45, 0.4, 0.35, 0.3, 0.25,
];
const EMAIL_WEEKEND = [
  0.15, 0.12, 0.1, 0.1, 0.1, 0.12, 0.15, 0.2, 0.3, 0.35, 0.4, 0.4, 0.4, 0.4, 0.38, 0.36, 0.34, 0.3, 0.28, 0.26, 0.24, 0.2, 0.18, 0.15,
];
const CALLBACK_WEEKDAY = [0, 0, 0, 0, 0, 0, 0, 0.3, 0.8, 1.0, 1.0, 0.95, 0.8, 0.85, 0.95, 0.9, 0.8, 0.6, 0.4, 0.3, 0.2, 0, 0, 0];
const CALLBACK_WEEKEND = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0.3, 0.35, 0.35, 0.3, 0.3, 0.3, 0.25, 0.2, 0, 0, 0, 0, 0, 0, 0];

export const TRAFFIC: readonly TrafficStream[] = [
  { name: 'voiceInbound', share: 0.56, weekday: VOICE_WEEKDAY, weekend: VOICE_WEEKEND },
  { name: 'voiceOutbound', share: 0.12, weekday: SALES_WEEKDAY, weekend: SALES_WEEKEND },
  { name: 'chat', share: 0.12, weekday: CHAT_WEEKDAY, weekend: CHAT_WEEKEND },
  { name: 'message', share: 0.08, weekday: MESSAGE_WEEKDAY, weekend: MESSAGE_WEEKEND },
  { name: 'email', share: 0.08, weekday: EMAIL_WEEKDAY, weekend: EMAIL_WEEKEND },
  { name: 'callback', share: 0.04, weekday: CALLBACK_WEEKDAY, weekend: CALLBACK_WEEKEND },
];

/** The queues each stream feeds. */
export function queuesOfStream(stream: StreamName): QueueConfig[] {
  const [media, direction]: [MediaType, Direction] =
    stream === 'voiceInbound' ? ['voice', 'inbound'] : stream === 'voiceOutbound' ? ['voice', 'outbound'] : [stream, 'inbound'];
  return QUEUES.filter((q) => q.mediaType === media && q.direction === direction);
}

// ---- agents ----

export interface Agent {
  id: string;
  name: string;
  /** Queues the agent is skilled in (1 to 3); the first is the main one. */
  queueIds: string[];
}

/** About 65 conversations per agent per day: 500 agents for a million conversations over 30 days. */
export function agentCountFor(conversations: number, days: number): number {
  return Math.min(5000, Math.max(2 * QUEUES.length, Math.round(conversations / days / 65)));
}

const FIRST_NAMES = [
  'Ava',
  'Liam',
  'Noah',
  'Emma',
  'Olivia',
  'Mateo',
  'Sofia',
  'Lucas',
  'Amara',
  'Ethan',
  'Mia',
  'Kenji',
  'Isla',
  'Omar',
  'Chloe',
  'Ravi',
  'Zoe',
  'Diego',
  'Hana',
  'Leo',
  'Nora',
  'Samuel',
  'Priya',
  'Felix',
  'Grace',
  'Tariq',
  'Elena',
  'Jonas',
  'Maya',
  'Victor',
  'Aisha',
  'Hugo',
  'Lena',
  'Marcus',
  'Yuki',
  'Daniel',
  'Ines',
  'Kofi',
  'Ruth',
  'Tomas',
  'Clara',
] as const;
const LAST_NAMES = [
  'Thompson',
  'Garcia',
  'Nguyen',
  'Okafor',
  'Schmidt',
  'Rossi',
  'Kowalski',
  'Silva',
  'Haddad',
  'Tanaka',
  'Murphy',
  'Johansson',
  'Dubois',
  'Patel',
  'Novak',
  'Moreau',
  'Fischer',
  'Costa',
  'Reyes',
  'Ivanova',
  'Larsen',
  'Mensah',
  'Brennan',
  'Kaur',
  'Weber',
  'Andersen',
  'Popescu',
  'Yilmaz',
  'Sato',
  'Lindqvist',
  'Ortiz',
  'Walsh',
  'Keller',
  'Adeyemi',
  'Fontaine',
  'Horvat',
  'Nakamura',
  'Bauer',
] as const;
const NAME_COMBINATIONS = FIRST_NAMES.length * LAST_NAMES.length;

function agentName(index: number): string {
  // A multiplicative step coprime with the number of combinations visits every pair once, in a mixed order.
  const k = (index * 1009) % NAME_COMBINATIONS;
  const base = `${FIRST_NAMES[k % FIRST_NAMES.length]} ${LAST_NAMES[Math.floor(k / FIRST_NAMES.length)]}`;
  const round = Math.floor(index / NAME_COMBINATIONS);
  return round === 0 ? base : `${base} ${round + 1}`;
}

/** Independent of the run's seed, so agent n is the same person in every run. */
const AGENT_STREAM_SEED = 0x5b0a_2d;

export function buildAgents(count: number): Agent[] {
  const weights = QUEUES.map((q) => q.staffWeight);
  const agents: Agent[] = [];
  for (let i = 0; i < count; i++) {
    const rng = Rng.stream(AGENT_STREAM_SEED, 'agent', i);
    const id = rng.uuid();
    // The first two agents of each queue make sure every queue has someone to answer and to consult.
    const main = i < 2 * QUEUES.length ? i % QUEUES.length : rng.weighted(weights);
    const skills = [main];
    const extra = rng.chance(0.2) ? 2 : rng.chance(0.45) ? 1 : 0;
    while (skills.length < 1 + extra) {
      const q = rng.weighted(weights);
      if (!skills.includes(q)) skills.push(q);
    }
    agents.push({ id, name: agentName(i), queueIds: skills.map((q) => QUEUES[q]!.id) });
  }
  return agents;
}
