/**
 * Signing in to the admin page with what a token holds, in Chromium against a real `wrangler dev`: a
 * `tokens:manage` token without `chat:admin` gets the Access part alone (no empty rooms or webhooks
 * parts), works there, keeps that mode across a reload, and is sent back to the form only when it
 * stops working (401), not by a 403; a token with neither permission is refused naming both.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPage } from '../../scripts/build-page';
import { openAdmin as openPage, signIn } from './support/admin-page';
import type { Api } from './support/api';
import type { DevServer } from './support/dev-server';
import { waitFor } from './support/page-probe';
import { closeTestbed, openTestbed } from './support/testbed';

let server: DevServer;
let api: Api;
let browser: Browser;

const openAdmin = () => openPage(browser, server.baseUrl);

const ACCESS_ONLY =
  'This token manages access only: API tokens and OAuth clients. Rooms, webhooks and viewer links need a token with chat:admin.';

/** The parts of the page a person sees: the visible second-level headings. */
const visibleParts = (page: Page) => page.getByRole('heading', { level: 2 }).allTextContents();

/** A name no other test uses (the tests share one server). */
let names = 0;
const unique = (what: string) => `${what} ${++names}-${Date.now().toString(36)}`;

async function status(token: string, method: string, route: string): Promise<number> {
  const res = await fetch(server.baseUrl + route, { method, headers: { Authorization: `Bearer ${token}` } });
  await res.body?.cancel();
  return res.status;
}

beforeAll(async () => {
  await buildPage();
  ({ server, api, browser } = await openTestbed());
  // A room on the server, so "no rooms part" is not just an empty list.
  await api.createRoom('Not for access managers');
});

afterAll(async () => {
  await closeTestbed({ server, browser });
});

describe('the admin page: signing in by permission', () => {
  it('gives a tokens:manage-only token the Access part alone: it creates a token there, a 403 keeps it signed in, a 401 does not', async () => {
    const manager = await api.admin<{ id: string; token: string }>('POST', '/api/v1/tokens', {
      name: unique('Access manager'),
      permissions: ['tokens:manage'],
    });
    const { context, page, errors } = await openAdmin();
    const reads: string[] = [];
    page.on('request', (request) => {
      const { pathname } = new URL(request.url());
      if (request.method() === 'GET' && pathname.startsWith('/api/')) reads.push(pathname);
    });
    await signIn(page, manager.token);
    await page.locator('#access-parts').waitFor({ state: 'visible' });

    expect(await page.textContent('#access-only')).toBe(ACCESS_ONLY);
    expect(await page.isVisible('#access-only')).toBe(true);
    expect(await visibleParts(page)).toEqual(['Access']);
    for (const part of ['#jump', '#rooms-part', '#webhooks-part', '#links', '#detail', '#access-locked', '#token-form']) {
      expect(await page.isHidden(part), part).toBe(true);
    }
    expect(await page.getByText('Not for access managers').count()).toBe(0);
    await waitFor(
      'the status',
      async () => (await page.textContent('#status')) ?? '',
      (t) => t.startsWith('Signed in'),
    );
    expect(await page.textContent('#status')).toBe('Signed in to manage access only.');
    // Signing in tried the token on the rooms list (403), then on the tokens list, which the Access part
    // shows as read: each list once.
    expect(reads.sort()).toEqual(['/api/v1/rooms', '/api/v1/tokens', '/api/v2/oauth/clients']);

    // A permission it does not hold: the API's 403 in the form, and still signed in.
    const formError = page.locator('#api-token-form-error');
    await page.locator('#api-token-name').fill(unique('Too much'));
    await page.locator('#api-token-permissions input[value="chat:read"]').check();
    await page.getByRole('button', { name: 'Create token' }).click();
    await formError.waitFor({ state: 'visible' });
    expect(await formError.textContent()).toContain('403 missing.permissions');
    expect(await page.isVisible('#access-parts')).toBe(true);
    expect(await page.isHidden('#token-form')).toBe(true);
    expect(await page.evaluate('Object.keys(sessionStorage)')).toEqual(['switchboard.adminToken']);

    // One it holds: created, shown once, listed, and it works as made.
    const name = unique('Delegate');
    await page.locator('#api-token-permissions input[value="chat:read"]').uncheck();
    await page.locator('#api-token-permissions input[value="tokens:manage"]').check();
    await page.locator('#api-token-name').fill(name);
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.locator('#api-token-new').waitFor({ state: 'visible' });
    const secret = await page.inputValue('#api-token-secret');
    expect(secret).toMatch(/^sbt_/);
    await page.locator('#api-tokens tbody tr', { hasText: name }).waitFor();
    expect(await status(secret, 'GET', '/api/v1/tokens')).toBe(200);
    expect(await status(secret, 'GET', '/api/v1/rooms')).toBe(403);

    // Revoked elsewhere: the next request answers 401, and the page asks for a token again.
    expect(await status(server.adminToken, 'DELETE', `/api/v1/tokens/${manager.id}`)).toBe(204);
    await page.getByRole('button', { name: 'Reload lists' }).click();
    const tokenError = page.locator('#token-error');
    await tokenError.waitFor({ state: 'visible' });
    expect(await tokenError.textContent()).toContain('The token no longer works: ');
    expect(await tokenError.textContent()).toContain('401 bad.credentials');
    expect(await page.isHidden('#admin')).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('refuses a token with neither chat:admin nor tokens:manage, naming both; an unknown one is still not accepted', async () => {
    const analyst = await api.createToken(['analytics:conversationAggregate:view']);
    const { context, page, errors } = await openAdmin();
    await signIn(page, analyst);
    const error = page.locator('#token-error');
    await error.waitFor({ state: 'visible' });
    const text = (await error.textContent()) ?? '';
    expect(text).toContain('This token holds neither chat:admin');
    expect(text).toContain('nor tokens:manage');
    expect(text).toContain('403 missing.permissions');
    expect(await page.isHidden('#admin')).toBe(true);
    expect(await page.evaluate('({ ...sessionStorage })')).toEqual({});

    await signIn(page, 'sbt_not-a-token');
    await waitFor(
      'the 401 message',
      async () => (await error.textContent()) ?? '',
      (t) => t.includes('not accepted'),
    );
    expect(await error.textContent()).toContain('This token is not accepted (unknown or revoked): ');
    expect(await error.textContent()).toContain('401 bad.credentials');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('keeps access-only mode across a reload; a chat:admin token signed in after it gets the rooms back', async () => {
    const manager = await api.createToken(['tokens:manage']);
    const { context, page, errors } = await openAdmin();
    await signIn(page, manager);
    await page.locator('#access-parts').waitFor({ state: 'visible' });
    expect(await visibleParts(page)).toEqual(['Access']);

    await page.reload();
    await page.locator('#access-parts').waitFor({ state: 'visible' });
    expect(await page.isVisible('#access-only')).toBe(true);
    expect(await visibleParts(page)).toEqual(['Access']);
    expect(await page.isHidden('#token-form')).toBe(true);
    await waitFor(
      'the status',
      async () => (await page.textContent('#status')) ?? '',
      (t) => t.startsWith('Signed in'),
    );
    expect(await page.textContent('#status')).toBe('Signed in to manage access only.');

    // Forgotten, then a chat:admin-only token: rooms and webhooks as ever, Access with its notice.
    await page.getByRole('button', { name: 'Forget token' }).click();
    await signIn(page, await api.createToken(['chat:admin']));
    await page.locator('#rooms tbody tr', { hasText: 'Not for access managers' }).waitFor();
    await page.locator('#access-locked').waitFor({ state: 'visible' });
    expect(await page.isHidden('#access-only')).toBe(true);
    expect(await page.isVisible('#jump')).toBe(true);
    expect(await visibleParts(page)).toEqual(['Rooms', 'Webhooks', 'Access']);
    expect(errors).toEqual([]);
    await context.close();
  });
});
