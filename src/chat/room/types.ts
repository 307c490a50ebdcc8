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
  /** A person's message (chat:write): their token's id; `webhookId` is then ''. */
  personId?: string | null;
  /**
   * A keyed post: replaces the message its author last posted with this key in the room (it keeps
   * its id and seq), unless that one was deleted or is older than MESSAGE_KEY_TTL_MS.
   */
  key?: string;
}

export interface Delivery {
  roomId: string;
  messageId: string;
  seq: number;
  /** A keyed post replaced an earlier message (the one named), or a change was made: true; a change that changed nothing: false. */
  replaced?: boolean;
}

/** The new content of an edited message (rendered by the Worker), or null: delete it. */
export interface MessageEdit {
  markdown: string;
  html: string;
  metadata: string | null;
  level: MessageLevel;
  sender: ChatMessage['sender'];
}

/** An edit or delete of a stored message, by its id, asked by its author (anyone else: not found). */
export interface MessageChange {
  messageId: string;
  webhookId: string;
  personId: string | null;
  edit: MessageEdit | null;
}

/** `changed: false`: the message already was so (a repeat, or a delete of a deleted message); nothing stored, no frame. */
export type ChangeResult = { kind: 'changed'; message: ChatMessage; changed: boolean } | { kind: 'not-found' };

export class RoomGoneError extends Error {
  constructor() {
    super('The room was deleted.');
  }
}

/** Messages kept in the object's own storage once they are in D1 (replays beyond them read D1). */
export const LOCAL_WINDOW = 1_000;

/** A prepared multi-room message not committed by then is settled with its coordinator. */
export const PREPARE_TIMEOUT_MS = 30_000;
