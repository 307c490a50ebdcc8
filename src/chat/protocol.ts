/**
 * The room WebSocket's wire protocol, the one definition used by the Worker (routes), the
 * RoomObject (sender) and the room page's client (src/chat/page/client, bundled for the browser:
 * nothing here may depend on Worker or Node APIs).
 *
 * Server → client, one JSON object per text frame:
 *   {type:"messages", messages: ChatMessage[]}   one or more, in seq order, replayed ones first
 *   {type:"ready", lastSeq}                      once, after the replay; everything later is live
 * Messages committed close together share one frame (at 100 viewers, one frame per message per
 * viewer is more frames than the runtime, a proxy or a browser can carry); seq stays contiguous
 * across frames, so a client just appends each frame's messages in order.
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

export type ServerFrame = { type: 'messages'; messages: ChatMessage[] } | { type: 'ready'; lastSeq: number };

export const PROTOCOL = {
  query: { after: 'after', tail: 'tail', ticket: 'ticket' },
  frames: { messages: 'messages', ready: 'ready' },
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

/** Keeps frames well under the runtime's and browsers' message limits (1 MiB); counted in UTF-16 units. */
export const FRAME_BUDGET_CHARS = 256 * 1024;
/** Envelope, ids and field names of one message, roughly. */
const MESSAGE_OVERHEAD_CHARS = 300;

/**
 * `messages` (in seq order) as few frames as fit the budget; a message larger than the budget goes
 * alone in its frame.
 */
export function encodeMessageFrames(messages: readonly ChatMessage[]): string[] {
  const frames: string[] = [];
  let start = 0;
  let chars = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const size = MESSAGE_OVERHEAD_CHARS + m.markdown.length + m.html.length + (m.metadata?.length ?? 0);
    if (i > start && chars + size > FRAME_BUDGET_CHARS) {
      frames.push(encodeFrame({ type: 'messages', messages: messages.slice(start, i) }));
      start = i;
      chars = 0;
    }
    chars += size;
  }
  if (start < messages.length)
    frames.push(encodeFrame({ type: 'messages', messages: start === 0 ? [...messages] : messages.slice(start) }));
  return frames;
}

/** Whether `value` is a well-formed message, as frames and the history carry them. */
export function isChatMessage(value: unknown): value is ChatMessage {
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
  if (
    frame.type === PROTOCOL.frames.messages &&
    Array.isArray(frame.messages) &&
    frame.messages.length > 0 &&
    frame.messages.every(isChatMessage)
  ) {
    return { type: 'messages', messages: frame.messages };
  }
  if (frame.type === PROTOCOL.frames.ready && Number.isSafeInteger(frame.lastSeq))
    return { type: 'ready', lastSeq: frame.lastSeq as number };
  return undefined;
}
