/**
 * The simulated contact center: divisions, queues (with their service-level thresholds and the behaviour of the
 * contacts they take), wrap-up codes, agents, and the traffic mix with its daily and weekly shape.
 *
 * Ids are fixed (queues, divisions, wrap-up codes) or derived from the agent's index alone, so every run,
 * whatever its seed, talks about the same queues and the same agents.
 */
import type { Direction, MediaType, Routing } from './records';
import { Rng } from './prng';

export interface Division {
  id: string;
  name: string;
}

export const DIVISIONS = {
  retail: { id: 'cc9873ae-8c8e-4754-8795-74360c90ad1e', name: 'Retail' },
  business: { id: '9e606157-8534-4ffc-a0fb-03aa82173c19', name: 'Business' },
  // The default division: the IVR flow lives here, so every call through it meets it too.
  home: { id: '947a1904-785c-44fb-ba7d-495409701c3a', name: 'Home' },
} as const satisfies Record<string, Division>;

export interface Named {
  id: string;
  name: string;
}

/** Agent teams (participant.teamId); an agent is in one team, chosen by the queue it mainly works. */
export const TEAMS = {
  careNorth: { id: 'b7e6280e-bb36-4350-9931-17065d806052', name: 'Customer Care North' },
  careSouth: { id: 'b671df05-0efa-4a87-925b-2326ba1cd9e0', name: 'Customer Care South' },
  billing: { id: 'ddd33597-dd89-4832-9fa1-081f6336aafd', name: 'Billing Team' },
  tech: { id: '3b7c7211-03c6-46f8-950a-09983ba6ce64', name: 'Tech Support Tier 1' },
  sales: { id: '5f96435b-815f-4381-a3d9-6ecbe7f6d589', name: 'Sales' },
  digital: { id: '9b94e68b-63c1-4fc1-89e9-ce50a8fd3251', name: 'Digital Care' },
} as const satisfies Record<string, Named>;

/** Routing skills (segment.requestedRoutingSkillIds[]). */
export const SKILLS = {
  general: { id: '28d08941-de2d-4ab6-b6b8-e2dfb441bd05', name: 'General' },
  billing: { id: '3ee378bf-0322-42fb-9c2c-c1949de05243', name: 'Billing' },
  payments: { id: '70bdfc81-052f-4e6e-9f5a-d34ddca95323', name: 'Payments' },
  technical: { id: '1c587044-7dba-4240-9024-89b54d7f3f49', name: 'Technical' },
  broadband: { id: '2f02ed94-5b76-4f7d-af58-b3c2273820a1', name: 'Broadband' },
  mobile: { id: '812d7c7d-6f7a-4ba6-929d-f3bb0f051e19', name: 'Mobile' },
  premium: { id: 'd288f65c-c865-4ff0-8998-f06199f7bfc0', name: 'Premium customer' },
  sales: { id: '1fa30c27-07a6-4221-81ca-41bdb5f10787', name: 'Sales' },
} as const satisfies Record<string, Named>;

/** Routing languages (segment.requestedLanguageId), with the Architect language code the IVR speaks. */
export const LANGUAGES = {
  english: { id: '49e559fb-4872-4ccc-9f80-3052f599ce2b', name: 'English', code: 'en-us' },
  spanish: { id: 'd3a5fc81-c748-442e-b099-fd0851b33ea0', name: 'Spanish', code: 'es-us' },
  french: { id: 'f09e8074-e6f0-4a88-9f53-8abc8a46f5c5', name: 'French', code: 'fr-ca' },
} as const satisfies Record<string, Named & { code: string }>;

/** Telephony edges (session.edgeId of voice sessions; provider "Edge"). */
export const EDGES: readonly string[] = [
  '39aa5b1f-f2a9-4eef-a982-cab753837bce',
  '816907b7-a239-41cc-be32-b7750a63e5e0',
  '37496c6d-3ab6-49e5-9da6-3502d60551a1',
  'c89af097-46af-4d1b-9f14-4b4992fc3cbc',
];

export interface Campaign extends Named {
  contactListId: string;
  /** preview: the agent places the call; predictive: the dialer does and hands the answered call to a queue. */
  mode: 'preview' | 'predictive';
  /** Share of the outbound voice stream. */
  share: number;
}

/** Outbound dialer campaigns of the Outbound Sales queue (session.outboundCampaignId, outboundContactListId). */
export const CAMPAIGNS: readonly Campaign[] = [
  {
    id: 'd65a4389-f107-455d-9d17-d2db3a96f972',
    name: 'Winter renewals',
    contactListId: 'e42d6d7d-5a24-4c34-8cad-faac7cde3f14',
    mode: 'predictive',
    share: 0.45,
  },
  {
    id: 'b6d249cf-6f01-4fd3-bfd8-5e6d1b9d8511',
    name: 'Broadband upgrade',
    contactListId: '7da907ac-a9e5-4b53-b9b4-9546db24d327',
    mode: 'preview',
    share: 0.25,
  },
];
/** What the campaigns leave of the outbound stream: agents' own (manual) calls, outside any campaign. */
export const MANUAL_OUTBOUND_SHARE = 0.3;

/** The IVR flow every inbound call passes through before a queue (session.flow of the IVR session). */
export const IVR_FLOW = { id: 'f5abbe74-b164-4327-8335-76a1baabfce5', name: 'Main Menu', version: '14.0' } as const;

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
  /** How the queue routes: Predictive (with proposed agents), Bullseye (skills dropped as the wait grows) or Standard. */
  routing: Extract<Routing, 'Standard' | 'Predictive' | 'Bullseye'>;
  /** Skills a contact of this queue may request (0 to 3 of them; Bullseye queues always request one or more). */
  skillIds: readonly string[];
  /** The team of the agents whose main queue this is. */
  teamIds: readonly string[];
}

type QueueBehaviour = Omit<QueueConfig, 'id' | 'name' | 'divisionId' | 'mediaType' | 'direction' | 'address'>;

const S = SKILLS;
const T = TEAMS;

const VOICE: Omit<QueueBehaviour, 'share' | 'staffWeight' | 'wrapUpCodes' | 'routing' | 'skillIds' | 'teamIds'> = {
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
    routing: 'Predictive',
    skillIds: [S.general.id, S.premium.id, S.mobile.id],
    teamIds: [T.careNorth.id, T.careSouth.id],
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
    routing: 'Standard',
    skillIds: [S.billing.id, S.payments.id, S.premium.id],
    teamIds: [T.billing.id],
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
    routing: 'Bullseye',
    skillIds: [S.technical.id, S.broadband.id, S.mobile.id, S.premium.id],
    teamIds: [T.tech.id],
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
    routing: 'Standard',
    skillIds: [S.sales.id],
    teamIds: [T.sales.id],
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
    routing: 'Standard',
    skillIds: [S.general.id, S.billing.id, S.technical.id],
    teamIds: [T.digital.id],
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
    routing: 'Standard',
    skillIds: [S.general.id, S.billing.id, S.mobile.id],
    teamIds: [T.digital.id],
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
    routing: 'Standard',
    skillIds: [S.general.id, S.billing.id, S.technical.id],
    teamIds: [T.digital.id],
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
    routing: 'Standard',
    skillIds: [S.general.id, S.billing.id],
    teamIds: [T.careNorth.id, T.careSouth.id],
  },
];

/** The IVR flow's name (its participantName). */
export const IVR_FLOW_NAME = IVR_FLOW.name;

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
  /** The agent's team: one of its main queue's teams. */
  teamId: string;
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
    // Drawn last, so that ids, names and queues are those agents had before teams existed.
    const teamId = rng.pick(QUEUES[main]!.teamIds);
    agents.push({ id, name: agentName(i), queueIds: skills.map((q) => QUEUES[q]!.id), teamId });
  }
  return agents;
}
