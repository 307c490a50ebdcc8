/** Small HTTP helpers for talking to the Worker from Node. */

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
