/** Messages between the chat scenario and its viewers child process. */

export interface ViewerSpec {
  id: number;
  room: string;
  url: string;
  token: string;
  /**
   * Offer permessage-deflate (browsers always do). The Worker refuses compression, but under
   * `wrangler dev` miniflare's entry worker sits in front of its response and accepts the offer
   * anyway, so an offering viewer costs workerd a deflate of every frame; default false.
   */
  deflate?: boolean;
}

export type ViewerCommand =
  | { type: 'open'; viewers: ViewerSpec[] }
  | { type: 'reset' }
  /** Waits until every viewer of each room in `expect` has at least that many messages (or the timeout). */
  | { type: 'collect'; expect: Record<string, number>; timeoutMs: number }
  | { type: 'close' };

export interface ViewerReport {
  id: number;
  room: string;
  seqs: number[];
  times: number[];
  /** `messages` frames received (a frame carries one or more messages). */
  frames: number;
  strange: number;
  closed?: string;
}

export type ViewerEvent =
  | { type: 'started' }
  | { type: 'opened'; count: number }
  | { type: 'reset' }
  | { type: 'collected'; complete: boolean; reports: ViewerReport[] }
  | { type: 'closed' }
  | { type: 'error'; message: string };

/** CLOCK_MONOTONIC in milliseconds: the same clock in every process of the machine. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
