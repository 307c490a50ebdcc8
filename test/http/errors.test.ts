import { describe, expect, it } from 'vitest';
import { expectError, send } from '../helpers';

describe('the common error path', () => {
  it('answers an unknown route with a 404 not.found ErrorBody and the correlation header', async () => {
    const res = await send('GET', '/no/such/route');
    expectError(res, 404, 'not.found');
  });

  it('answers a body that is not JSON with 415 unsupported.media.type', async () => {
    const res = await send('POST', '/api/v1/tokens', { body: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expectError(res, 415, 'unsupported.media.type');
  });

  it('answers malformed JSON with 400 bad.request', async () => {
    const res = await send('POST', '/api/v1/tokens', { body: '{"name": ', headers: { 'Content-Type': 'application/json' } });
    expectError(res, 400, 'bad.request');
  });

  it('answers a body over the route limit with 413', async () => {
    const res = await send('POST', '/api/v1/tokens', { json: { name: 'x'.repeat(20_000), permissions: ['tokens:manage'] } });
    expectError(res, 413, 'payload.too.large');
  });

  it('names the offending field of an invalid body', async () => {
    const res = await send('POST', '/api/v1/tokens', { json: { name: 'ok', permissions: ['tokens:manage', 'nope'] } });
    expectError(res, 400, 'invalid.value', 'permissions[1]');
  });

  it('gives every answer, success included, a fresh correlation id', async () => {
    const a = await send('GET', '/api/v1/tokens');
    const b = await send('GET', '/api/v1/tokens');
    expect(a.status).toBe(200);
    expect(a.headers.get('ININ-Correlation-Id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers.get('ININ-Correlation-Id')).not.toBe(b.headers.get('ININ-Correlation-Id'));
  });
});
