import { CHAT_LIMITS, VIEWER_LINK_PARAM } from '../../limits';
import { isChatMessage, type ChatMessage } from '../../protocol';
import { withIdentity } from './sender';

export interface RoomInfo {
  name: string;
  topic: string | null;
}

export type TicketAnswer =
  | { kind: 'ticket'; ticket: string; room: RoomInfo }
  | { kind: 'token not accepted' }
  | { kind: 'token may not read' }
  | { kind: 'no such room' }
  /** Network error, 5xx or an answer not understood: worth trying again later. */
  | { kind: 'try later' };

export type HistoryAnswer =
  | { ok: true; messages: ChatMessage[] }
  /** `status` is undefined after a network error. */
  | { ok: false; status?: number };

/** One history page, as the server's default. */
export const HISTORY_PAGE = CHAT_LIMITS.historyDefault;

const bearer = (token: string): HeadersInit => ({ Authorization: `Bearer ${token}` });

async function jsonBody(res: Response): Promise<Record<string, unknown> | undefined> {
  try {
    const body: unknown = await res.json();
    return typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function isRoomInfo(value: unknown): value is RoomInfo {
  if (typeof value !== 'object' || value === null) return false;
  const room = value as Record<string, unknown>;
  return typeof room.name === 'string' && (room.topic === null || room.topic === undefined || typeof room.topic === 'string');
}

const viewerLinkKey = (roomId: string) => `switchboard.viewerLink.${roomId}`;

/**
 * The room's viewer link secret, which the page uses in place of a token: taken from the address's
 * fragment (`#view=<secret>`, also `#<seq>&view=<secret>` with a deep link), then kept for this room
 * in localStorage (a wall screen's browser restarts) and removed from the address bar, so it is not
 * left in the history or on screen; otherwise the one kept before. Null: no viewer link. `#view=`
 * with no secret forgets the kept one.
 */
export function takeViewerLink(roomId: string): string | null {
  const prefix = `${VIEWER_LINK_PARAM}=`;
  const linkIn = (hash: string) => hash.slice(1).split('&');
  // A new link opened in this tab changes only the fragment (no navigation): start again with it.
  window.addEventListener('hashchange', () => {
    if (linkIn(location.hash).some((part) => part.startsWith(prefix))) location.reload();
  });
  const parts = linkIn(location.hash);
  const given = parts.find((part) => part.startsWith(prefix))?.slice(prefix.length);
  if (given !== undefined) {
    const rest = parts.filter((part) => part !== '' && !part.startsWith(prefix)).join('&');
    history.replaceState(history.state, '', `${location.pathname}${location.search}${rest === '' ? '' : `#${rest}`}`);
  }
  try {
    // `#view=` with nothing: this browser forgets the room's link (and asks for a token again).
    if (given === '') localStorage.removeItem(viewerLinkKey(roomId));
    else if (given !== undefined) localStorage.setItem(viewerLinkKey(roomId), given);
    return localStorage.getItem(viewerLinkKey(roomId)) ?? null;
  } catch {
    // Storage disabled: the link still opens the room, for this visit.
    return given || null;
  }
}

/** A one-use ticket for the room's WebSocket, with the room's name and topic. */
export async function requestTicket(roomId: string, token: string): Promise<TicketAnswer> {
  let res: Response;
  try {
    res = await fetch(`/api/v1/rooms/${roomId}/ws-ticket`, { method: 'POST', headers: bearer(token) });
  } catch {
    return { kind: 'try later' };
  }
  if (res.status === 401) return { kind: 'token not accepted' };
  if (res.status === 403) return { kind: 'token may not read' };
  if (res.status === 404) return { kind: 'no such room' };
  if (!res.ok) return { kind: 'try later' };
  const body = await jsonBody(res);
  if (typeof body?.ticket !== 'string' || !isRoomInfo(body.room)) return { kind: 'try later' };
  return { kind: 'ticket', ticket: body.ticket, room: { name: body.room.name, topic: body.room.topic ?? null } };
}

/** The most one history read returns (deep links read back this much at a time). */
export const HISTORY_MAX = CHAT_LIMITS.historyMax;

type MessagesPage = { ok: true; entities: unknown[]; body: Record<string, unknown> } | { ok: false; status?: number };

/** One read of `GET …/messages` (history, search, a date's first seq): its entities, or why there are none. */
async function readMessages(roomId: string, token: string, query: URLSearchParams): Promise<MessagesPage> {
  let res: Response;
  try {
    res = await fetch(`/api/v1/rooms/${roomId}/messages?${query}`, { headers: bearer(token) });
  } catch {
    return { ok: false };
  }
  if (!res.ok) return { ok: false, status: res.status };
  const body = await jsonBody(res);
  if (!Array.isArray(body?.entities)) return { ok: false, status: res.status };
  return { ok: true, entities: body.entities, body };
}

const messagesOf = (entities: unknown[]): ChatMessage[] => entities.map(withIdentity).filter(isChatMessage);

/** Stored messages with after < seq < before, oldest first, one page (`limit`) at most. */
export async function readHistory(
  roomId: string,
  token: string,
  after: number,
  before: number,
  limit: number = HISTORY_PAGE,
): Promise<HistoryAnswer> {
  const query = new URLSearchParams({ after: String(after), before: String(before), limit: String(limit) });
  const page = await readMessages(roomId, token, query);
  return page.ok ? { ok: true, messages: messagesOf(page.entities) } : page;
}

export type PostAnswer =
  | { ok: true; seq: number }
  /** The API's message (ErrorBody.message), and Retry-After in seconds on a 429. */
  | { ok: false; status?: number; message: string; retryAfter?: number };

/**
 * Posts a message into the room as the token's holder (`chat:write`). `key` is the Idempotency-Key:
 * the same for retries of one message, so a retry after a lost answer stores it once.
 */
export async function postMessage(roomId: string, token: string, message: string, key: string): Promise<PostAnswer> {
  let res: Response;
  try {
    res = await fetch(`/api/v1/rooms/${roomId}/messages`, {
      method: 'POST',
      headers: { ...bearer(token), 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify({ message }),
    });
  } catch {
    return { ok: false, message: 'The server could not be reached; try again.' };
  }
  const body = await jsonBody(res);
  if (res.ok && typeof body?.seq === 'number') return { ok: true, seq: body.seq };
  const retry = Number(res.headers.get('Retry-After'));
  return {
    ok: false,
    status: res.status,
    message: typeof body?.message === 'string' ? body.message : `The server answered ${res.status}.`,
    ...(Number.isFinite(retry) && retry > 0 ? { retryAfter: retry } : {}),
  };
}

export type SearchAnswer =
  | { ok: true; messages: ChatMessage[]; nextBefore?: number }
  /** `status` is undefined after a network error. */
  | { ok: false; status?: number };

export interface SearchQuery {
  /** Full-text search (the server's FTS5 index): every word must appear. */
  q?: string;
  /** Exact metadata. */
  metadata?: string;
  /** Only messages with a seq below this (the previous page's `nextBefore`). */
  before?: number;
  limit: number;
}

/** One page of a history search, newest first; `nextBefore` when more remain. */
export async function searchHistory(roomId: string, token: string, search: SearchQuery): Promise<SearchAnswer> {
  const query = new URLSearchParams({ order: 'desc', limit: String(search.limit) });
  if (search.q) query.set('q', search.q);
  if (search.metadata) query.set('metadata', search.metadata);
  if (search.before !== undefined) query.set('before', String(search.before));
  const page = await readMessages(roomId, token, query);
  if (!page.ok) return page;
  const messages = messagesOf(page.entities);
  const { nextBefore } = page.body;
  return typeof nextBefore === 'number' ? { ok: true, messages, nextBefore } : { ok: true, messages };
}

/** The seq of the room's first message created at or after `at` (a jump to a date); null: none since. */
export async function firstSeqSince(
  roomId: string,
  token: string,
  at: Date,
): Promise<{ ok: true; seq: number | null } | { ok: false; status?: number }> {
  const page = await readMessages(roomId, token, new URLSearchParams({ since: at.toISOString(), limit: '1' }));
  if (!page.ok) return page;
  const first: unknown = page.entities[0];
  const seq = typeof first === 'object' && first !== null ? (first as { seq?: unknown }).seq : undefined;
  return { ok: true, seq: typeof seq === 'number' ? seq : null };
}
