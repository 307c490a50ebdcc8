import { CHAT_LIMITS } from '../../limits';
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

/** Stored messages with after < seq < before, oldest first, one page (`limit`) at most. */
export async function readHistory(
  roomId: string,
  token: string,
  after: number,
  before: number,
  limit: number = HISTORY_PAGE,
): Promise<HistoryAnswer> {
  const query = new URLSearchParams({ after: String(after), before: String(before), limit: String(limit) });
  let res: Response;
  try {
    res = await fetch(`/api/v1/rooms/${roomId}/messages?${query}`, { headers: bearer(token) });
  } catch {
    return { ok: false };
  }
  if (!res.ok) return { ok: false, status: res.status };
  const body = await jsonBody(res);
  if (!Array.isArray(body?.entities)) return { ok: false, status: res.status };
  return { ok: true, messages: body.entities.map(withIdentity).filter(isChatMessage) };
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
