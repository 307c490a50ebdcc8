/**
 * The room WebSocket's wire protocol (version 4), the one definition used by the Worker (routes),
 * the RoomObject (sender) and the room page's client (src/chat/page/client, bundled for the browser:
 * nothing here may depend on Worker or Node APIs).
 *
 * Server → client, one JSON object per text frame:
 *   {type:"messages", messages: ChatMessage[]}   one or more, in seq order, replayed ones first
 *   {type:"ready", lastSeq}                      once, after the replay; everything later is live
 *   {type:"update", messages: ChatMessage[]}     (version 4) messages already sent, edited or deleted:
 *                                                each is the message's whole latest version at its
 *                                                seq; replace the one shown at that seq (ignore one
 *                                                not shown: history and replays give the latest)
 * Messages committed close together share one frame (at 100 viewers, one frame per message per
 * viewer is more frames than the runtime, a proxy or a browser can carry); seq stays contiguous
 * across `messages` frames, so a client just appends each frame's messages in order.
 *
 * Updates (version 4): a message keeps its seq for ever. An edit (or a keyed post replacing it) sets
 * `editedAt`; a delete sets `deletedAt` and empties `markdown`, `html` and `metadata` (a tombstone:
 * it stays at its seq in replays, history and update frames, so seq stays gapless: show it as
 * "deleted", do not drop the seq). An `update` frame never adds a message; it comes only after the
 * frame that carried that message first, during the replay too (for a message already replayed).
 * A person's message (chat:write) has `webhookId: ""` and `personId` (their token's id, an OAuth
 * client's id, or "admin"); a webhook's has `personId: null`. People post, edit and delete over
 * HTTP: POST /api/v1/rooms/{id}/messages, PATCH|DELETE /api/v1/rooms/{id}/messages/{messageId}
 * (docs/api.md, "People posting").
 *
 * Client → server:
 *   {"type":"ping"}              heartbeat, answered `{"type":"pong"}` by the runtime (auto-response),
 *                                so idle viewers never wake a hibernating room
 *   {"type":"ack","bytes":N}     N = the UTF-8 bytes of every text frame received on this socket so
 *                                far, pongs excepted (cumulative). Sent once at least `ackEveryBytes`
 *                                arrived since the last ack (AckCounter does it), not per frame.
 * Flow control: the runtime's server-side WebSocket shows no send queue, so the room counts the bytes
 * it sent each viewer and not yet acknowledged. The replay is sent in pages, the next one only while
 * that amount is under half the budget; a live viewer over its budget (CHAT_LIMITS.viewerBudgetBytes)
 * when the room has a frame for it is closed with `close.tooSlow`. Acks are trusted: they bound a
 * slow or stalled client, not one written to lie.
 *
 * Close codes (PROTOCOL.close): what the client should do next is in each one's comment.
 */
/** How urgent a message is, least first: the page shows it as a colour bar (chat-delivery.md, "Sender and level"). */
export const MESSAGE_LEVELS = ['info', 'success', 'warning', 'critical'] as const;
export type MessageLevel = (typeof MESSAGE_LEVELS)[number];

export function isMessageLevel(value: unknown): value is MessageLevel {
  return typeof value === 'string' && (MESSAGE_LEVELS as readonly string[]).includes(value);
}

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
  /**
   * Who sent it, as fixed when it was posted: the webhook's name and icon (its `avatarUrl`, else
   * the default icon of its kind, a same-origin path), or the post's own where the webhook allows
   * overrides. `iconUrl` is an https URL or a path on this origin; null: none.
   */
  sender: { name: string; iconUrl: string | null };
  level: MessageLevel;
  createdAt: string;
  /**
   * Version 4. Who posted it when a person did (chat:write): the id of their token (an OAuth
   * client's id; `admin`); `webhookId` is then "". Null for a webhook's message.
   */
  personId?: string | null;
  /** Version 4. When it was last edited (null: never). */
  editedAt?: string | null;
  /** Version 4. When it was deleted (null: not): then `markdown`, `html` are "" and `metadata` null. */
  deletedAt?: string | null;
}

export type ServerFrame =
  | { type: 'messages'; messages: ChatMessage[] }
  | { type: 'ready'; lastSeq: number }
  | { type: 'update'; messages: ChatMessage[] };

export const PROTOCOL = {
  version: 4,
  query: { after: 'after', tail: 'tail', ticket: 'ticket' },
  frames: { messages: 'messages', ready: 'ready', update: 'update' },
  ping: '{"type":"ping"}',
  pong: '{"type":"pong"}',
  heartbeatMs: 30_000,
  /**
   * A client acks once this many bytes arrived since its last ack. Well under half the room's
   * budget, so a client that reads keeps the replay moving and never nears the budget.
   */
  ackEveryBytes: 32 * 1024,
  close: {
    /** The client fell behind: more than its budget sent and not acknowledged. Reconnect with `after=<last seq you have>`. */
    tooSlow: 4008,
    /** The token that opened the socket was revoked: do not reconnect with it. */
    revoked: 4401,
    /** The room was deleted; do not reconnect. */
    roomDeleted: 4404,
    /** The socket reached its maximum lifetime: reconnect with a fresh ticket (or token) and `after=<last seq you have>`. */
    expired: 4440,
    /** The replay could not be read; reconnect later with the same `after`. */
    replayFailed: 4503,
  },
} as const;

export type ClientFrame = { type: 'ack'; bytes: number };

export function encodeAck(bytes: number): string {
  return `{"type":"ack","bytes":${bytes}}`;
}

/** Parses a client frame (an ack); anything else, the ping included, gives `undefined`. Cheap: acks are short. */
export function decodeClientFrame(data: string | ArrayBuffer): ClientFrame | undefined {
  if (typeof data !== 'string' || data.length > 64) return undefined;
  const frame = parseObject(data);
  if (frame === undefined) return undefined;
  if (frame.type === 'ack' && Number.isSafeInteger(frame.bytes) && (frame.bytes as number) >= 0) {
    return { type: 'ack', bytes: frame.bytes as number };
  }
  return undefined;
}

/** The UTF-8 length of `text` (what the runtime queues for it), without encoding it. */
export function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // a surrogate pair: 2 units, 4 bytes
      i++;
    } else n += 2; // 3 bytes (a lone surrogate is sent as U+FFFD, also 3)
  }
  return n;
}

/**
 * The client's side of flow control: feed it every text frame received (or its byte length); it
 * answers the ack to send, when one is due.
 */
export class AckCounter {
  private received = 0;
  private lastAck = 0;

  /**
   * Counts one received text frame (`bytes`: its UTF-8 length, when the caller has it already);
   * returns the ack frame to send now, if one is due.
   */
  frame(text: string, bytes?: number): string | undefined {
    if (text === PROTOCOL.pong) return undefined;
    this.received += bytes ?? utf8Length(text);
    if (this.received - this.lastAck < PROTOCOL.ackEveryBytes) return undefined;
    this.lastAck = this.received;
    return encodeAck(this.received);
  }

  get bytes(): number {
    return this.received;
  }
}

export function encodeFrame(frame: ServerFrame): string {
  return JSON.stringify(frame);
}

/**
 * Keeps frames well under the runtime's and browsers' message limits (1 MiB), and small beside a
 * viewer's send budget (a viewer may hold its budget plus one frame); counted in UTF-16 units.
 */
export const FRAME_BUDGET_CHARS = 64 * 1024;
/** Envelope, ids and field names of one message, roughly. */
const MESSAGE_OVERHEAD_CHARS = 300;

/**
 * `messages` (in seq order) as few frames as fit the budget; a message larger than the budget goes
 * alone in its frame.
 */
export function encodeMessageFrames(messages: readonly ChatMessage[], type: 'messages' | 'update' = 'messages'): string[] {
  const frames: string[] = [];
  let start = 0;
  let chars = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const size =
      MESSAGE_OVERHEAD_CHARS +
      m.markdown.length +
      m.html.length +
      (m.metadata?.length ?? 0) +
      m.sender.name.length +
      (m.sender.iconUrl?.length ?? 0);
    if (i > start && chars + size > FRAME_BUDGET_CHARS) {
      frames.push(encodeFrame({ type, messages: messages.slice(start, i) }));
      start = i;
      chars = 0;
    }
    chars += size;
  }
  if (start < messages.length) frames.push(encodeFrame({ type, messages: start === 0 ? [...messages] : messages.slice(start) }));
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
    isSender(m.sender) &&
    isMessageLevel(m.level) &&
    typeof m.createdAt === 'string' &&
    optionalString(m.personId) &&
    optionalString(m.editedAt) &&
    optionalString(m.deletedAt)
  );
}

/** Absent (a server before version 4), null or a string. */
function optionalString(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}

function isSender(value: unknown): value is ChatMessage['sender'] {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Record<string, unknown>;
  return typeof s.name === 'string' && (s.iconUrl === null || typeof s.iconUrl === 'string');
}

/** Parses a server frame; anything that is not a well-formed frame gives `undefined`. */
export function decodeServerFrame(data: string): ServerFrame | undefined {
  const frame = parseObject(data);
  if (frame === undefined) return undefined;
  if (
    frame.type === PROTOCOL.frames.messages &&
    Array.isArray(frame.messages) &&
    frame.messages.length > 0 &&
    frame.messages.every(isChatMessage)
  ) {
    return { type: 'messages', messages: frame.messages };
  }
  if (
    frame.type === PROTOCOL.frames.update &&
    Array.isArray(frame.messages) &&
    frame.messages.length > 0 &&
    frame.messages.every(isChatMessage)
  ) {
    return { type: 'update', messages: frame.messages };
  }
  if (frame.type === PROTOCOL.frames.ready && Number.isSafeInteger(frame.lastSeq))
    return { type: 'ready', lastSeq: frame.lastSeq as number };
  return undefined;
}

/** A JSON object's fields, or undefined for anything else (invalid JSON included). */
function parseObject(data: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}
