/** What the Worker and a room object exchange over RPC. */

import type { ChatMessage, MessageLevel } from '../protocol';

/** A message as the Worker hands it to a room: rendered and identified, not yet ordered. */
export interface MessageDraft {
  id: string;
  webhookId: string;
  markdown: string;
  html: string;
  metadata: string | null;
  /**
   * Who sent it and how urgent it is, fixed by the Worker. Optional only for drafts prepared before
   * these existed (two-phase.ts keeps drafts as JSON): those read as a legacy row (room-log.ts).
   */
  sender?: ChatMessage['sender'];
  level?: MessageLevel;
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
