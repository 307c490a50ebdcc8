/**
 * The room WebSocket's wire protocol, the one definition used by the Worker (routes), the
 * RoomObject (sender) and the room page (its script is built with `PROTOCOL` inlined as data).
 *
 * Server → client, one JSON object per text frame:
 *   {type:"message", message: ChatMessage}   in seq order, replayed ones first
 *   {type:"ready", lastSeq}                  once, after the replay; everything later is live
 * Client → server: only the heartbeat `{"type":"ping"}`, answered `{"type":"pong"}` by the runtime
 * (auto-response), so idle viewers never wake a hibernating room.
 */

export interface ChatMessage {
  id: string;
  roomId: string;
  /** 1, 2, 3, … per room, no gaps, no duplicates. */
  seq: number;
  webhookId: string;
  markdown: string;
  /** Sanitised HTML rendered from `markdown` when the message was posted. */
  html: string;
  metadata: string | null;
  createdAt: string;
}

export type ServerFrame = { type: 'message'; message: ChatMessage } | { type: 'ready'; lastSeq: number };

export const PROTOCOL = {
  version: 1,
  query: { after: 'after', tail: 'tail', ticket: 'ticket' },
  frames: { message: 'message', ready: 'ready' },
  ping: '{"type":"ping"}',
  pong: '{"type":"pong"}',
  heartbeatMs: 30_000,
  close: {
    /** The room was deleted; do not reconnect. */
    roomDeleted: 4404,
    /** The replay could not be read; reconnect later with the same `after`. */
    replayFailed: 4503,
  },
} as const;

export function encodeFrame(frame: ServerFrame): string {
  return JSON.stringify(frame);
}

function isChatMessage(value: unknown): value is ChatMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  return (
    typeof m.id === 'string' &&
    typeof m.roomId === 'string' &&
    Number.isSafeInteger(m.seq) &&
    typeof m.webhookId === 'string' &&
    typeof m.markdown === 'string' &&
    typeof m.html === 'string' &&
    (m.metadata === null || typeof m.metadata === 'string') &&
    typeof m.createdAt === 'string'
  );
}

/** Parses a server frame; anything that is not a well-formed frame gives `undefined`. */
export function decodeServerFrame(data: string): ServerFrame | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const frame = value as Record<string, unknown>;
  if (frame.type === PROTOCOL.frames.message && isChatMessage(frame.message)) return { type: 'message', message: frame.message };
  if (frame.type === PROTOCOL.frames.ready && Number.isSafeInteger(frame.lastSeq)) return { type: 'ready', lastSeq: frame.lastSeq as number };
  return undefined;
}
