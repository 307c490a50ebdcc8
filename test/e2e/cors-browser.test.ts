/**
 * CORS in a real browser: a wallboard page served from one origin calls the API on another (wrangler
 * dev) with fetch and an Authorization header, as Genesys' users' wallboards do. An origin on
 * CORS_ORIGINS gets its answers, errors included, and reads the correlation header; any other origin
 * is stopped by Chromium itself, while the same request from Node (no CORS) is answered.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './support/browser';
import { startDevServer, type DevServer } from './support/dev-server';

const QUERY = '/api/v2/analytics/conversations/aggregates/query';
const DAY = '2002-03-04T00:00:00.000Z/2002-03-05T00:00:00.000Z';
const BODY = { interval: DAY, metrics: ['nOffered'] };

/** A page server on 127.0.0.1: the wallboard's own origin. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>wallboard</title><h1>wallboard</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface BrowserAnswer {
  ok: boolean;
  status?: number;
  body?: any;
  correlationId?: string | null;
  error?: string;
}

/** fetch() inside the page, as a wallboard's script runs it. */
function fetchInPage(
  page: Page,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
): Promise<BrowserAnswer> {
  return page.evaluate(
    async ({ url, init }) => {
      try {
        const res = await fetch(url, init);
        return { ok: true, status: res.status, body: await res.json(), correlationId: res.headers.get('ININ-Correlation-Id') };
      } catch (err) {
        return { ok: false, error: `${(err as Error).name}: ${(err as Error).message}` };
      }
    },
    { url, init },
  );
}

let dev: DevServer;
let browser: Browser;
let allowed: { server: Server; origin: string };
let other: { server: Server; origin: string };
let accessToken: string;

async function nodePost(path: string, body: unknown, token: string): Promise<any> {
  const res = await fetch(dev.baseUrl + path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return res.json();
}

beforeAll(async () => {
  allowed = await pageServer();
  other = await pageServer();
  dev = await startDevServer({ vars: { CORS_ORIGINS: `https://wall.example.com,${allowed.origin}` } });
  // The wallboard's token comes from the client-credentials grant (its backend logs in, not the page).
  const client = await nodePost(
    '/api/v2/oauth/clients',
    { name: 'wallboard', authorizedGrantType: 'CLIENT-CREDENTIALS', permissions: ['analytics:conversationAggregate:view'] },
    dev.adminToken,
  );
  const login = await fetch(`${dev.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  expect(login.status).toBe(200);
  accessToken = ((await login.json()) as { access_token: string }).access_token;
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await dev?.dispose();
  for (const s of [allowed, other]) await new Promise((resolve) => s?.server.close(resolve));
});

async function pageOn(origin: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${origin}/`);
  expect(await page.evaluate('location.origin')).toBe(origin);
  return page;
}

describe('CORS in Chromium', () => {
  it('lets a page on an allow-listed origin POST a query with a bearer token and read the answer and ININ-Correlation-Id', async () => {
    const expected = await nodePost(QUERY, BODY, accessToken);
    const page = await pageOn(allowed.origin);
    const res = await fetchInPage(page, dev.baseUrl + QUERY, {
      method: 'POST',
      headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(BODY),
    });
    expect(res).toEqual({ ok: true, status: 200, body: expected, correlationId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    await page.close();
  });

  it('lets that page read an error answer too: status, ErrorBody and the correlation id that names it', async () => {
    const page = await pageOn(allowed.origin);
    const res = await fetchInPage(page, dev.baseUrl + QUERY, {
      method: 'POST',
      headers: { Authorization: 'Bearer sba_not-a-token', 'Content-Type': 'application/json' },
      body: JSON.stringify(BODY),
    });
    expect(res.ok).toBe(true);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'bad.credentials', status: 401 });
    expect(res.correlationId).toBe(res.body.contextId);
    await page.close();
  });

  it('stops a page on another origin: the browser refuses the call that Node makes without trouble', async () => {
    const page = await pageOn(other.origin);
    // Preflighted (Authorization, JSON): refused before the request is sent.
    const res = await fetchInPage(page, dev.baseUrl + QUERY, {
      method: 'POST',
      headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(BODY),
    });
    expect(res.ok).toBe(false);
    expect(res.error).toMatch(/^TypeError/);
    // A simple request (no preflight) is sent, but its answer is withheld from the page.
    const simple = await fetchInPage(page, `${dev.baseUrl}/api/v1/tokens`, { method: 'GET', headers: {} });
    expect(simple.ok).toBe(false);
    expect(simple.error).toMatch(/^TypeError/);
    await page.close();
    // The control: the same query from Node, where no CORS applies, is answered.
    expect(await nodePost(QUERY, BODY, accessToken)).toEqual({ results: [] });
  });
});
