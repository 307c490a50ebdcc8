import { expect } from 'vitest';
import { send, type Sent } from '../helpers';
import type { IngestResult } from '../../src/analytics/ingest/observations.store';

export const INGEST = '/api/v2/analytics/conversations/details/ingest';
export const QUERY = '/api/v2/analytics/conversations/aggregates/query';
export const SERVICE_LEVEL = '/api/v2/analytics/settings/servicelevel';

export async function ingest(conversations: unknown[], token?: string): Promise<Sent> {
  return send('POST', INGEST, { json: { conversations }, token });
}

export async function ingestOk(conversations: unknown[]): Promise<IngestResult> {
  const res = await ingest(conversations);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

export async function query(body: unknown, token?: string): Promise<Sent> {
  return send('POST', QUERY, { json: body, token });
}

export async function queryOk(body: unknown): Promise<{ results: any[]; source: string }> {
  const res = await query(body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { ...res.body, source: res.headers.get('Switchboard-Query-Source') ?? '' };
}

export const timer = (...values: number[]) => ({
  max: Math.max(...values),
  min: Math.min(...values),
  count: values.length,
  sum: values.reduce((a, b) => a + b, 0),
});
export const count = (n: number) => ({ count: n });
