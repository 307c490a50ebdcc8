/**
 * A room viewer in Node that keeps watching through drops and restarts, reconnecting with
 * `after=<last seq received>` as the README tells clients to. It records every message (from its `messages` frames) it is
 * sent, across all its connections, so a test can check "each message exactly once, in seq order".
 *
 * It acks what it receives (flow control, src/chat/protocol.ts), as every client must: a viewer that
 * does not is closed once it is a budget behind (4008), and its replay waits.
 *
 * WebSocket client: Miniflare's `fetch` (miniflare is a direct devDependency; Node 20 has no global
 * WebSocket), which upgrades over `ws` and lets us send the Authorization header.
 */
import { fetch as upgradeFetch, type WebSocket } from 'miniflare';
import type { ChatMessage } from '../../../src/chat/protocol';
import { AckCounter, decodeServerFrame } from '../../../src/chat/protocol';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RoomViewer {
  /** Every message received, in arrival order, over all connections. */
  readonly received: ChatMessage[] = [];
  /** Frames that broke the order (seq not last + 1) as they arrived; must stay empty. */
  readonly outOfOrder: string[] = [];
  /** Connections opened (the first one included) and dropped on purpose. */
  connections = 0;
  drops = 0;
  failedAttempts = 0;
  /** `after=` of every connection, in order. */
  readonly afters: number[] = [];
  private socket: WebSocket | null = null;
  private stopped = false;
  private connecting: Promise<void> | null = null;

  constructor(
    private readonly baseUrl: string,
    private readonly roomId: string,
    private readonly token: string,
    private readonly deadline: number,
  ) {}

  get lastSeq(): number {
    return this.received[this.received.length - 1]?.seq ?? 0;
  }

  get connected(): boolean {
    return this.socket !== null;
  }

  /** Connects (retrying while the server is away) and resolves once the socket is open. */
  start(): Promise<void> {
    return this.reconnect();
  }

  /** Closes the socket from this side; the viewer reconnects with `after=` by itself. */
  drop(): void {
    const ws = this.socket;
    if (!ws) return;
    try {
      ws.close(1000, 'drop');
      this.drops++;
    } catch {
      // Closed by the other side already; its close event brings the reconnect.
    }
  }

  stop(): void {
    this.stopped = true;
    try {
      this.socket?.close(1000, 'done');
    } catch {
      // Closed already.
    }
    this.socket = null;
  }

  private reconnect(): Promise<void> {
    this.connecting ??= this.connectLoop().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async connectLoop(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      if (Date.now() > this.deadline) throw new Error(`viewer of ${this.roomId} could not reconnect before the deadline`);
      const after = this.lastSeq;
      try {
        const res = await upgradeFetch(`${this.baseUrl}/api/v1/rooms/${this.roomId}/ws?after=${after}`, {
          headers: { Upgrade: 'websocket', Authorization: `Bearer ${this.token}` },
        });
        const ws = res.webSocket;
        if (res.status === 101 && ws) {
          this.open(ws, after);
          return;
        }
        await res.arrayBuffer().catch(() => undefined);
        if (res.status !== 503) throw new Error(`viewer upgrade answered ${res.status}`);
      } catch (err) {
        if (err instanceof Error && err.message.startsWith('viewer upgrade answered')) throw err;
        // Connection refused or reset: the server is restarting.
      }
      this.failedAttempts++;
      await sleep(Math.min(1_000, 100 * 2 ** Math.min(attempt, 4)));
    }
  }

  private open(ws: WebSocket, after: number): void {
    ws.accept();
    this.socket = ws;
    this.connections++;
    this.afters.push(after);
    const acks = new AckCounter();
    ws.addEventListener('message', (event) => {
      if (typeof event.data === 'string') {
        const ack = acks.frame(event.data);
        if (ack !== undefined) {
          try {
            ws.send(ack);
          } catch {
            // Closing: the reconnect follows from its close event.
          }
        }
      }
      const frame = typeof event.data === 'string' ? decodeServerFrame(event.data) : undefined;
      if (frame?.type !== 'messages') return;
      for (const message of frame.messages) {
        const expected = this.lastSeq + 1;
        if (message.seq !== expected)
          this.outOfOrder.push(`got seq ${message.seq}, expected ${expected} (connection ${this.connections}, after=${after})`);
        this.received.push(message);
      }
    });
    ws.addEventListener('close', () => {
      if (this.socket !== ws) return;
      this.socket = null;
      if (!this.stopped) void this.reconnect().catch(() => undefined);
    });
  }
}
