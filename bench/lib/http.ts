/** Small HTTP helpers for talking to the Worker from Node. */
import http from 'node:http';

export async function api<T>(base: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 2000)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export async function isUp(base: string, token: string): Promise<boolean> {
  const res = await fetch(`${base}/api/v1/tokens`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5000) });
  await res.arrayBuffer();
  return res.status === 200;
}

/**
 * A POST through node:http on kept-alive connections, for the load generators of the webhook
 * scenario: at 200 posts/s undici's fetch cost the bench process ~1.5 ms of CPU per request
 * (0.3 of a core), taken from the 2 cores the system under test runs on.
 */
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 64 });

export function postText(url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent: keepAlive, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
