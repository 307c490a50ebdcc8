/**
 * Child process holding the benchmark's WebSocket viewers, so their frame handling does not share
 * an event loop with the posters (whose timestamps it would delay). Driven over IPC by
 * bench/scenarios/chat.ts. Receipt times are CLOCK_MONOTONIC milliseconds (process.hrtime), the
 * same clock the posters use in the parent process.
 *
 * `ws` rather than undici's WebSocket: undici always offers permessage-deflate, and a viewer must be
 * able not to (see ViewerSpec.deflate).
 */
import WebSocket from 'ws';
import { AckCounter } from '../../src/chat/protocol';
import { nowMs, type ViewerCommand, type ViewerReport, type ViewerSpec } from './protocol';

interface Viewer {
  spec: ViewerSpec;
  ws: WebSocket;
  ready: boolean;
  seqs: number[];
  times: number[];
  frames: number;
  /** Frames that were not a message or ready frame. */
  strange: number;
  closed?: string;
}

const viewers: Viewer[] = [];

type Frame = { type: string; messages?: { seq: number }[]; lastSeq?: number };
/**
 * The viewers of a room receive the same frame one after another: it is parsed once (they only
 * read it). Real viewers are on other machines; here they share 2 cores with workerd and the
 * proxy, and every microsecond they spend is taken from the system under test.
 */
let lastText = '';
let lastFrame: Frame = { type: '' };
function parseFrame(text: string): Frame {
  if (text !== lastText) {
    lastFrame = JSON.parse(text) as Frame;
    lastText = text;
  }
  return lastFrame;
}

function send(message: unknown): void {
  process.send!(message);
}

function open(spec: ViewerSpec): Promise<Viewer> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(spec.url, { headers: { Authorization: `Bearer ${spec.token}` }, perMessageDeflate: spec.deflate === true });
    const viewer: Viewer = { spec, ws, ready: false, seqs: [], times: [], frames: 0, strange: 0 };
    const timer = setTimeout(() => reject(new Error(`viewer ${spec.id} not ready after 30 s`)), 30_000);
    // Flow control (src/chat/protocol.ts): a viewer that does not ack is closed a budget behind.
    const acks = new AckCounter();
    ws.on('message', (data) => {
      const t = nowMs();
      const text = String(data);
      const ack = acks.frame(text, Buffer.isBuffer(data) ? data.length : undefined);
      if (ack !== undefined) ws.send(ack);
      const frame = parseFrame(text);
      if (frame.type === 'messages' && Array.isArray(frame.messages) && frame.messages.length > 0) {
        viewer.frames++;
        for (const message of frame.messages) {
          viewer.seqs.push(message.seq);
          viewer.times.push(t);
        }
      } else if (frame.type === 'ready') {
        viewer.ready = true;
        clearTimeout(timer);
        resolve(viewer);
      } else {
        viewer.strange++;
      }
    });
    ws.on('close', (code, reason) => {
      viewer.closed = `${code} ${String(reason)}`;
      if (!viewer.ready) {
        clearTimeout(timer);
        reject(new Error(`viewer ${spec.id} closed before ready: ${viewer.closed}`));
      }
    });
    ws.on('error', () => {
      if (!viewer.ready) {
        clearTimeout(timer);
        reject(new Error(`viewer ${spec.id} failed to connect to ${spec.url}`));
      }
    });
  });
}

async function waitFor(expect: Record<string, number>, timeoutMs: number): Promise<boolean> {
  const deadline = nowMs() + timeoutMs;
  for (;;) {
    const done = viewers.every((v) => {
      const want = expect[v.spec.room];
      return want === undefined || v.seqs.length >= want || v.closed !== undefined;
    });
    if (done) return true;
    if (nowMs() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

process.on('message', (raw) => {
  const cmd = raw as ViewerCommand;
  void (async () => {
    try {
      switch (cmd.type) {
        case 'open': {
          // A few at a time: each open is an authenticated upgrade through the Worker.
          for (let i = 0; i < cmd.viewers.length; i += 10) {
            viewers.push(...(await Promise.all(cmd.viewers.slice(i, i + 10).map(open))));
          }
          send({ type: 'opened', count: viewers.length });
          break;
        }
        case 'reset': {
          for (const v of viewers) {
            v.seqs = [];
            v.times = [];
            v.frames = 0;
            v.strange = 0;
          }
          send({ type: 'reset' });
          break;
        }
        case 'collect': {
          const complete = await waitFor(cmd.expect, cmd.timeoutMs);
          const reports: ViewerReport[] = viewers
            .filter((v) => cmd.expect[v.spec.room] !== undefined)
            .map((v) => ({
              id: v.spec.id,
              room: v.spec.room,
              seqs: v.seqs,
              times: v.times,
              frames: v.frames,
              strange: v.strange,
              closed: v.closed,
            }));
          send({ type: 'collected', complete, reports });
          break;
        }
        case 'close': {
          for (const v of viewers) v.ws.close(1000, 'bench done');
          send({ type: 'closed' });
          setTimeout(() => process.exit(0), 200);
          break;
        }
      }
    } catch (err) {
      send({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  })();
});
send({ type: 'started' });
