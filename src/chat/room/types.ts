/** What the Worker and a room object exchange over RPC. */

/** A message as the Worker hands it to a room: rendered and identified, not yet ordered. */
export interface MessageDraft {
  id: string;
  webhookId: string;
  markdown: string;
  html: string;
  metadata: string | null;
  /** The id derives from an idempotency attempt: remember it (24 h) and answer a repeat with the stored delivery. */
  dedupe: boolean;
}

export interface Delivery {
  roomId: string;
  messageId: string;
  seq: number;
}

export class RoomGoneError extends Error {
  constructor() {
    super('The room was deleted.');
  }
}

/** Messages kept in the object's own storage once they are in D1 (replays beyond them read D1). */
export const LOCAL_WINDOW = 1_000;

/** A prepared multi-room message not committed by then is settled with its coordinator. */
export const PREPARE_TIMEOUT_MS = 30_000;
