/**
 * The peers of scenario 3, run under the same `wrangler dev` front as Switchboard and behind static assets
 * configured as Switchboard's are (wrangler.toml), so a request takes the same path through wrangler
 * dev's asset router on both sides:
 * - `POST /` (the ceiling): answers every request with a constant, to show what the local toolchain
 *   alone allows per request.
 * - `/floor/<room>` (the fan-out floor): the least a room can do and still meet the steady-rate
 *   target's definition. `POST` hands the body to the room's Durable Object, which gives it the
 *   next seq and sends it at once, in Switchboard's frame format, to every WebSocket viewer of the
 *   room, then answers the seq; `GET …/ws` (an upgrade) adds a viewer. No auth, no validation, no
 *   markdown, no storage and no batching: what remains is the runtime's own cost of a post and of
 *   100 sends, so the floor's tail is what `wrangler dev` allows this machine at that rate.
 */
import { DurableObject } from 'cloudflare:workers';

interface Env {
  FLOOR: DurableObjectNamespace<FanOutFloor>;
}

const BODY = '{"deliveries":[{"roomId":"ceiling","messageId":"ceiling","seq":0}]}';
const FLOOR_PATH = /^\/floor\/([\w-]{1,64})(\/ws)?$/;

export class FanOutFloor extends DurableObject<Env> {
  /** In memory only: after the object hibernates it counts again from 1 (each timed phase resets the viewers first). */
  private seq = 0;
  private readonly live = new Set<WebSocket>();
  /** The padding string, built once per length rather than per post (the floor's post path stays minimal). */
  private padding = '';

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Idle between phases, the object hibernates; its viewers stay connected and come back here.
    for (const ws of ctx.getWebSockets()) this.live.add(ws);
  }

  /** One post: the next seq, one frame sent to every viewer now, the seq answered. `pad` characters make the frame as long as Switchboard's. */
  post(roomId: string, body: string, pad: number): number {
    const seq = ++this.seq;
    if (this.padding.length !== pad) this.padding = 'x'.repeat(pad);
    const frame = JSON.stringify({
      type: 'messages',
      messages: [{ id: String(seq), roomId, seq, body, pad: this.padding, createdAt: new Date().toISOString() }],
    });
    for (const ws of this.live) ws.send(frame);
    return seq;
  }

  override fetch(): Response {
    // Hibernatable, as Switchboard's rooms are, so each send takes the same path in workerd.
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    server.send(JSON.stringify({ type: 'ready', lastSeq: this.seq }));
    this.live.add(server);
    return new Response(null, { status: 101, webSocket: client });
  }

  override webSocketClose(ws: WebSocket): void {
    this.live.delete(ws);
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const floor = FLOOR_PATH.exec(url.pathname);
    if (floor) {
      const room = floor[1]!;
      const stub = env.FLOOR.get(env.FLOOR.idFromName(room));
      if (floor[2]) return stub.fetch(request);
      const pad = Math.min(Math.max(Number(url.searchParams.get('pad')) || 0, 0), 100_000);
      const seq = await stub.post(room, await request.text(), pad);
      return Response.json({ deliveries: [{ roomId: room, messageId: String(seq), seq }] });
    }
    // Read the body, as the real webhook does, so the request is fully received before answering.
    await request.arrayBuffer();
    return new Response(BODY, { headers: { 'Content-Type': 'application/json' } });
  },
};
