/**
 * The admin page's Access part, in Chromium against a real `wrangler dev`: API tokens and OAuth
 * clients created in the page work against the API with exactly the permissions chosen there, and stop
 * working when revoked or deleted there; their secrets are shown once (with Copy, and the selected-text
 * fallback where the clipboard refuses) and never again; a
 * signed-in token without tokens:manage is told so; the API's refusals are shown as it words them; each
 * token and client shows its last use ("never" until it has one); a phone's window never scrolls
 * sideways; the keyboard alone does it.
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPage } from '../../scripts/build-page';
import type { Api } from './support/api';
import type { DevServer } from './support/dev-server';
import { openAdmin as openPage, signIn as typeToken } from './support/admin-page';
import { waitFor } from './support/page-probe';
import { ARTIFACTS, closeTestbed, openTestbed } from './support/testbed';

let server: DevServer;
let api: Api;
let browser: Browser;
/** A room with one message: what a chat:read token may read. */
let room: { id: string };

const openAdmin = (options: { clipboard?: boolean; dark?: boolean; phone?: boolean } = {}) => openPage(browser, server.baseUrl, options);

/** Signs in and waits for the page's lists. */
async function signIn(page: Page, token: string): Promise<void> {
  await typeToken(page, token);
  await page.locator('#admin').waitFor({ state: 'visible' });
}

/** A name no other test uses (the tests share one server). */
let names = 0;
const unique = (what: string) => `${what} ${++names}-${Date.now().toString(36)}`;

interface Answer {
  status: number;
  body: Record<string, unknown> | undefined;
}

/** One API request with a bearer token, as any client would send it. */
async function call(token: string, method: string, route: string, body?: unknown): Promise<Answer> {
  const res = await fetch(server.baseUrl + route, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

/** The client-credentials grant, as Genesys' SDK asks for it (HTTP Basic). */
async function grant(clientId: string, secret: string): Promise<Answer> {
  const res = await fetch(`${server.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** `token` reads the room's history (chat:read) and is refused a room's creation (chat:admin). */
async function expectReads(token: string): Promise<void> {
  const history = await call(token, 'GET', `/api/v1/rooms/${room.id}/messages`);
  expect(history.status).toBe(200);
  expect((history.body!.entities as { markdown: string }[]).map((m) => m.markdown)).toEqual(['for readers']);
  const create = await call(token, 'POST', '/api/v1/rooms', { name: 'not mine to make' });
  expect(create.status).toBe(403);
  expect(create.body!.message).toContain('chat:admin');
}

/** Everything the page holds: its HTML and the value of every field (a value is not in the HTML). */
const PAGE_CONTENT = `[document.documentElement.outerHTML, ...[...document.querySelectorAll('input, textarea')].map((f) => f.value)].join('\\n')`;

const tokenRow = (page: Page, name: string) => page.locator('#api-tokens tbody tr', { hasText: name });
const clientRow = (page: Page, name: string) => page.locator('#oauth-clients tbody tr', { hasText: name });
const cellTexts = (row: ReturnType<Page['locator']>) => row.locator('td').allTextContents();

async function choose(page: Page, form: 'api-token' | 'oauth-client', permissions: string[]): Promise<void> {
  for (const permission of permissions) await page.locator(`#${form}-permissions input[value="${permission}"]`).check();
}

beforeAll(async () => {
  await buildPage();
  ({ server, api, browser } = await openTestbed());
  room = await api.createRoom('Readers room');
  await api.postOk(await api.createWebhook(room.id), 'for readers');
});

afterAll(async () => {
  await closeTestbed({ server, browser });
});

describe('the admin page: API tokens', () => {
  it('creates a token with the chosen permissions, shows it once with Copy, lists it without it, and revokes it', async () => {
    const { context, page, errors } = await openAdmin({ clipboard: true });
    await signIn(page, server.adminToken);
    await page.locator('#access-parts').waitFor({ state: 'visible' });

    // The permissions offered are the API's: the admin token holds them all, and each can be chosen.
    const offered = await page.evaluate<string[]>(
      `[...document.querySelectorAll('#api-token-permissions input[type="checkbox"]')].map((box) => box.value)`,
    );
    expect(offered).toContain('chat:read');
    expect(offered).toContain('tokens:manage');

    // Refusals first: none chosen (the page), a name too long (the API's own message naming the field).
    const name = unique('Wallboard');
    const formError = page.locator('#api-token-form-error');
    await page.locator('#api-token-name').fill(name);
    await page.getByRole('button', { name: 'Create token' }).click();
    await formError.waitFor({ state: 'visible' });
    expect(await formError.textContent()).toBe('Choose at least one permission.');
    await page.locator('#api-token-name').fill('x'.repeat(101));
    const chosen = ['chat:read', 'analytics:conversationAggregate:view'];
    await choose(page, 'api-token', chosen);
    await page.getByRole('button', { name: 'Create token' }).click();
    await waitFor(
      'the API refusal',
      async () => (await formError.textContent()) ?? '',
      (t) => t.includes('400'),
    );
    expect(await formError.textContent()).toMatch(/name.*400 invalid\.value/);

    await page.locator('#api-token-name').fill(name);
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.locator('#api-token-new').waitFor({ state: 'visible' });
    expect(await formError.isHidden()).toBe(true);
    const secret = await page.inputValue('#api-token-secret');
    expect(secret).toMatch(/^sbt_[A-Za-z0-9_-]{20,}$/);
    expect(await page.textContent('#api-token-secret-label')).toBe(`Token "${name}" (shown once: copy it now)`);
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('api-token-secret');

    await page.getByRole('button', { name: 'Copy token' }).click();
    await waitFor(
      'the copy',
      async () => (await page.textContent('#api-token-copy-status')) ?? '',
      (t) => t !== '',
    );
    expect(await page.textContent('#api-token-copy-status')).toBe('Copied to the clipboard.');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);

    // The token works with exactly what was chosen: it reads a room, and is refused what it was not given.
    await expectReads(secret);
    expect((await call(secret, 'POST', `/api/v1/rooms/${room.id}/messages`, { message: 'hi' })).status).toBe(403);
    expect((await call(secret, 'GET', '/api/v1/tokens')).status).toBe(403);
    const listed = await api.admin<{ entities: { id: string; name: string; permissions: string[] }[] }>('GET', '/api/v1/tokens');
    const created = listed.entities.find((t) => t.name === name)!;
    expect([...created.permissions].sort()).toEqual([...chosen].sort());

    // The list shows it, with its permissions, and never the secret (not even while it is on show).
    const row = tokenRow(page, name);
    await row.waitFor();
    expect(await row.getAttribute('data-token-id')).toBe(created.id);
    expect(await row.locator('td').nth(1).locator('li').allTextContents()).toEqual(created.permissions);
    const [, , createdCell, stateCell] = await cellTexts(row);
    expect(createdCell).toBe('just now');
    expect(stateCell).toBe('Active');
    expect(await page.locator('#api-tokens').textContent()).not.toContain(secret);
    expect(await page.locator('#api-token-permissions input:checked').count()).toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-access-token.png'), fullPage: true });

    // Done: the secret leaves the page, and a reload does not bring it back.
    await page.getByRole('button', { name: 'Done: hide the token' }).click();
    expect(await page.isHidden('#api-token-new')).toBe(true);
    expect(await page.evaluate<string>(PAGE_CONTENT)).not.toContain(secret);
    await page.reload();
    await tokenRow(page, name).waitFor();
    expect(await page.evaluate<string>(PAGE_CONTENT)).not.toContain(secret);
    expect(JSON.stringify(await page.evaluate('({ ...sessionStorage, ...localStorage })'))).not.toContain(secret);

    // Revoked (after a confirmation): it answers 401 from now on, and leaves the list of active tokens.
    const asked: string[] = [];
    page.on('dialog', (dialog) => asked.push(dialog.message()));
    await page.getByRole('button', { name: `Revoke API token ${name}` }).click();
    await tokenRow(page, name).waitFor({ state: 'detached' });
    expect(asked).toEqual([expect.stringContaining(`Revoke API token "${name}"?`)]);
    const after = await call(secret, 'GET', `/api/v1/rooms/${room.id}/messages`);
    expect(after.status).toBe(401);
    expect(after.body!.code).toBe('bad.credentials');
    await page.getByLabel('Show revoked and deleted').check();
    const revoked = tokenRow(page, name);
    await revoked.waitFor();
    expect((await cellTexts(revoked))[3]).toBe('Revoked just now');
    expect(await revoked.getByRole('button').count()).toBe(0);
    expect(await page.evaluate<string>(PAGE_CONTENT)).not.toContain(secret);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('falls back to selecting the token when the clipboard refuses', async () => {
    const { context, page, errors } = await openAdmin();
    await page.evaluate(() => {
      Object.defineProperty(navigator, 'clipboard', { value: { writeText: () => Promise.reject(new Error('denied')) } });
    });
    await signIn(page, server.adminToken);
    await page.locator('#access-parts').waitFor({ state: 'visible' });
    await page.locator('#api-token-name').fill(unique('Clipboard refused'));
    await choose(page, 'api-token', ['chat:read']);
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.locator('#api-token-new').waitFor({ state: 'visible' });
    const secret = await page.inputValue('#api-token-secret');
    await page.getByRole('button', { name: 'Copy token' }).click();
    await waitFor(
      'the fallback',
      async () => (await page.textContent('#api-token-copy-status')) ?? '',
      (t) => t !== '',
    );
    expect(await page.textContent('#api-token-copy-status')).toBe(
      'The browser would not copy: the token is selected, press Ctrl+C (⌘C) to copy it.',
    );
    const selection = await page.evaluate(
      '({ id: document.activeElement.id, selected: document.activeElement.value.slice(document.activeElement.selectionStart, document.activeElement.selectionEnd) })',
    );
    expect(selection).toEqual({ id: 'api-token-secret', selected: secret });
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows the API's 403 when a token asks to hand out a permission it lacks, and stays signed in", async () => {
    const manager = await api.createToken(['chat:admin', 'tokens:manage']);
    const { context, page, errors } = await openAdmin();
    await signIn(page, manager);
    await page.locator('#access-parts').waitFor({ state: 'visible' });
    const name = unique('Poster');
    await page.locator('#api-token-name').fill(name);
    await choose(page, 'api-token', ['chat:admin', 'chat:write']);
    await page.getByRole('button', { name: 'Create token' }).click();
    const formError = page.locator('#api-token-form-error');
    await formError.waitFor({ state: 'visible' });
    const text = (await formError.textContent()) ?? '';
    expect(text).toContain('A token can grant only permissions it holds');
    expect(text).toContain('chat:write');
    expect(text).not.toContain('chat:admin');
    expect(text).toContain('403 missing.permissions');
    expect(await page.isVisible('#admin')).toBe(true);
    expect(await page.isHidden('#token-form')).toBe(true);
    const tokens = await api.admin<{ entities: { name: string }[] }>('GET', '/api/v1/tokens');
    expect(tokens.entities.map((t) => t.name)).not.toContain(name);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the admin page: OAuth clients', () => {
  it('creates a client whose id and secret get an access token with the chosen permissions; deleting it refuses the grant', async () => {
    const { context, page, errors } = await openAdmin({ clipboard: true });
    await signIn(page, server.adminToken);
    await page.locator('#access-parts').waitFor({ state: 'visible' });

    // The API's limits and default, and how to get a token, are on the page.
    expect(await page.getAttribute('#oauth-client-validity', 'placeholder')).toBe('86400');
    expect(await page.textContent('#oauth-client-validity-hint')).toContain('300–172800 seconds');
    expect(await page.textContent('#oauth-token-hint')).toBe(
      `curl -u CLIENT_ID:CLIENT_SECRET -d grant_type=client_credentials ${server.baseUrl}/oauth/token`,
    );

    const name = unique('Reporting job');
    const formError = page.locator('#oauth-client-form-error');
    await page.locator('#oauth-client-name').fill(name);
    await page.locator('#oauth-client-description').fill('Nightly export');
    await page.locator('#oauth-client-validity').fill('299');
    await choose(page, 'oauth-client', ['chat:read']);
    await page.getByRole('button', { name: 'Create client' }).click();
    await formError.waitFor({ state: 'visible' });
    expect(await formError.textContent()).toMatch(/accessTokenValiditySeconds.*400 invalid\.value/);

    const validity = 600;
    await page.locator('#oauth-client-validity').fill(String(validity));
    await page.getByRole('button', { name: 'Create client' }).click();
    await page.locator('#oauth-client-new').waitFor({ state: 'visible' });
    expect(await formError.isHidden()).toBe(true);
    const clientId = await page.inputValue('#oauth-client-id');
    const secret = await page.inputValue('#oauth-client-secret');
    expect(clientId).toMatch(/^[0-9a-f-]{36}$/);
    expect(secret).toMatch(/^sbc_/);

    await page.getByRole('button', { name: 'Copy secret' }).click();
    await waitFor(
      'the copy',
      async () => (await page.textContent('#oauth-client-copy-status')) ?? '',
      (t) => t !== '',
    );
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await page.getByRole('button', { name: 'Copy client id' }).click();
    await waitFor(
      'the id copied',
      () => page.evaluate<string>('navigator.clipboard.readText()'),
      (t) => t === clientId,
    );

    // The grant: an access token that lasts the chosen validity (less the second Genesys takes off)
    // and holds exactly the chosen permission.
    const granted = await grant(clientId, secret);
    expect(granted.status).toBe(200);
    expect(granted.body!.expires_in).toBe(validity - 1);
    const accessToken = granted.body!.access_token as string;
    await expectReads(accessToken);
    expect((await call(accessToken, 'GET', '/api/v2/oauth/clients')).status).toBe(403);
    const stored = await api.admin<{ permissions: string[]; accessTokenValiditySeconds: number; description: string }>(
      'GET',
      `/api/v2/oauth/clients/${clientId}`,
    );
    expect(stored).toMatchObject({ permissions: ['chat:read'], accessTokenValiditySeconds: validity, description: 'Nightly export' });

    // Listed with its id, permissions and validity; its secret nowhere but the box it was shown in.
    const row = clientRow(page, name);
    await row.waitFor();
    const [nameCell, idCell, permissionsCell, validityCell, createdCell, stateCell] = await cellTexts(row);
    expect(nameCell).toBe(`${name}Nightly export`);
    expect(idCell).toBe(clientId);
    expect(permissionsCell).toBe('chat:read');
    expect(validityCell).toBe('10 min');
    expect(createdCell).toBe('just now');
    expect(stateCell).toBe('Active');
    expect(await page.locator('#oauth-clients').textContent()).not.toContain(secret);
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-access-client.png'), fullPage: true });

    await page.getByRole('button', { name: 'Done: hide the secret' }).click();
    expect(await page.evaluate<string>(PAGE_CONTENT)).not.toContain(secret);
    await page.reload();
    await clientRow(page, name).waitFor();
    expect(await page.evaluate<string>(PAGE_CONTENT)).not.toContain(secret);

    // Deleted: the grant is refused, and the token it had stops at once.
    await page.getByRole('button', { name: `Delete OAuth client ${name}` }).click();
    await clientRow(page, name).waitFor({ state: 'detached' });
    const refused = await grant(clientId, secret);
    expect(refused.status).toBe(401);
    expect(refused.body!.error).toBe('invalid_client');
    expect((await call(accessToken, 'GET', `/api/v1/rooms/${room.id}/messages`)).status).toBe(401);
    await page.getByLabel('Show revoked and deleted').check();
    expect((await cellTexts(clientRow(page, name)))[5]).toBe('Deleted just now');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the admin page: last use', () => {
  it('lists a token or client never used as "never", and one used once with its time after "Reload lists"', async () => {
    const { context, page, errors } = await openAdmin();
    await signIn(page, server.adminToken);
    await page.locator('#access-parts').waitFor({ state: 'visible' });
    expect(await page.locator('#api-tokens thead th').allTextContents()).toContain('Last used');
    expect(await page.locator('#oauth-clients thead th').allTextContents()).toContain('Last used');

    // Two tokens made in the page, as anyone would: only the first is used.
    const made: { name: string; secret: string }[] = [];
    for (const what of ['Used', 'Unused']) {
      const name = unique(`${what} token`);
      await page.locator('#api-token-name').fill(name);
      await choose(page, 'api-token', ['chat:read']);
      await page.getByRole('button', { name: 'Create token' }).click();
      await waitFor(
        'the new token',
        async () => (await page.textContent('#api-token-secret-label')) ?? '',
        (t) => t.includes(name),
      );
      made.push({ name, secret: await page.inputValue('#api-token-secret') });
      await page.getByRole('button', { name: 'Done: hide the token' }).click();
    }
    const [used, unused] = made as [{ name: string; secret: string }, { name: string; secret: string }];
    const lastUsedCell = (row: ReturnType<Page['locator']>, index: number) => row.locator('td').nth(index);
    expect(await lastUsedCell(tokenRow(page, used.name), 4).textContent()).toBe('never');

    // A client used (it got an access token) and one not, made through the API.
    const clientNames = { used: unique('Used client'), unused: unique('Unused client') };
    const usedClient = await api.admin<{ id: string; secret: string }>('POST', '/api/v2/oauth/clients', {
      name: clientNames.used,
      authorizedGrantType: 'CLIENT-CREDENTIALS',
      permissions: ['chat:read'],
    });
    await api.admin('POST', '/api/v2/oauth/clients', {
      name: clientNames.unused,
      authorizedGrantType: 'CLIENT-CREDENTIALS',
      permissions: ['chat:read'],
    });

    expect((await call(used.secret, 'GET', `/api/v1/rooms/${room.id}/messages`)).status).toBe(200);
    expect((await grant(usedClient.id, usedClient.secret)).status).toBe(200);

    // The use is written just after the answer: the lists are read again until it shows.
    await waitFor(
      'the last uses listed',
      async () => {
        await page.getByRole('button', { name: 'Reload lists' }).click();
        return [
          await lastUsedCell(tokenRow(page, used.name), 4).textContent(),
          await lastUsedCell(clientRow(page, clientNames.used), 6).textContent(),
        ];
      },
      ([token, client]) => token === 'just now' && client === 'just now',
    );
    expect(await lastUsedCell(tokenRow(page, unused.name), 4).textContent()).toBe('never');
    expect(await lastUsedCell(clientRow(page, clientNames.unused), 6).textContent()).toBe('never');

    // The exact time is in the element, as the page's other times: the API's value, and the local time as its title.
    const tokens = await api.admin<{ entities: { name: string; lastUsedAt: string | null }[] }>('GET', '/api/v1/tokens');
    const recorded = tokens.entities.find((t) => t.name === used.name)!.lastUsedAt!;
    expect(tokens.entities.find((t) => t.name === unused.name)!.lastUsedAt).toBeNull();
    const time = lastUsedCell(tokenRow(page, used.name), 4).locator('time');
    expect(await time.getAttribute('datetime')).toBe(recorded);
    expect(await time.getAttribute('title')).toBe(await page.evaluate<string>(`new Date(${JSON.stringify(recorded)}).toLocaleString()`));
    expect(await lastUsedCell(tokenRow(page, unused.name), 4).locator('time').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the admin page: Access', () => {
  it('tells a token without tokens:manage that it needs it, and shows no lists', async () => {
    const roomsOnly = await api.createToken(['chat:admin']);
    const { context, page, errors } = await openAdmin();
    await signIn(page, roomsOnly);
    const notice = page.locator('#access-locked');
    await notice.waitFor({ state: 'visible' });
    expect(await notice.textContent()).toContain('needs a token with tokens:manage');
    expect(await page.isHidden('#access-parts')).toBe(true);
    expect(await page.isHidden('#access-error')).toBe(true);
    // The rest of the page works as before.
    expect(await page.isVisible('#rooms')).toBe(true);
    expect(await page.isHidden('#token-form')).toBe(true);

    // Signed out and in again with the admin token: the lists, no notice.
    await page.getByRole('button', { name: 'Forget token' }).click();
    await signIn(page, server.adminToken);
    await page.locator('#access-parts').waitFor({ state: 'visible' });
    expect(await notice.isHidden()).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('fits a phone: the page never scrolls sideways, the tables scroll in their panel, a new secret fits', async () => {
    await api.admin('POST', '/api/v1/tokens', {
      name: unique('Phone token with a long name'),
      permissions: ['analytics:conversationAggregate:view', 'chat:read'],
    });
    await api.admin('POST', '/api/v2/oauth/clients', {
      name: unique('Phone client'),
      authorizedGrantType: 'CLIENT-CREDENTIALS',
      permissions: ['analytics:conversationAggregate:view'],
    });
    const { context, page, errors } = await openAdmin({ phone: true, dark: true });
    await signIn(page, server.adminToken);
    await page.locator('#access-parts').waitFor({ state: 'visible' });
    const name = unique('Phone made');
    await page.locator('#oauth-client-name').fill(name);
    await choose(page, 'oauth-client', ['chat:read']);
    await page.getByRole('button', { name: 'Create client' }).click();
    await page.locator('#oauth-client-new').waitFor({ state: 'visible' });
    await clientRow(page, name).waitFor();

    const widths = (await page.evaluate(`(() => {
      const wrap = (id) => { const w = document.getElementById(id).parentElement; return [w.scrollWidth, w.clientWidth]; };
      return {
        page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
        clients: wrap('oauth-clients'),
        fresh: [document.getElementById('oauth-client-new').scrollWidth, document.getElementById('oauth-client-new').clientWidth],
        secretRight: document.getElementById('copy-oauth-client-secret').getBoundingClientRect().right,
      };
    })()`)) as { page: number[]; clients: number[]; fresh: number[]; secretRight: number };
    expect(widths.page[0]).toBeLessThanOrEqual(widths.page[1]!);
    expect(widths.clients[0]).toBeGreaterThan(widths.clients[1]!);
    expect(widths.fresh[0]).toBeLessThanOrEqual(widths.fresh[1]!);
    expect(widths.secretRight).toBeLessThanOrEqual(390);
    await page.locator('#access-title').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-access-phone.png'), fullPage: true });

    // What is off to the side is reached by scrolling the table: Delete asks, then deletes.
    const remove = clientRow(page, name).getByRole('button', { name: `Delete OAuth client ${name}` });
    await remove.scrollIntoViewIfNeeded();
    const box = (await remove.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    await remove.click();
    await clientRow(page, name).waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('works from the keyboard: create a token, reach its Copy button, revoke it', async () => {
    const { context, page, errors } = await openAdmin();
    const focused = () =>
      page.evaluate<string>(
        "document.activeElement?.id || document.activeElement?.getAttribute('aria-label') || document.activeElement?.textContent?.trim() || ''",
      );
    /** Tabs forward until `target` has the focus (at most 200 presses). */
    const tabTo = async (target: string) => {
      for (let i = 0; i < 200; i++) {
        if ((await focused()) === target) return;
        await page.keyboard.press('Tab');
      }
      throw new Error(`Tab never reached ${target}; last: ${await focused()}`);
    };
    await page.getByLabel('Admin token with chat:admin').waitFor({ state: 'visible' });
    await page.keyboard.type(server.adminToken);
    await page.keyboard.press('Enter');
    await page.locator('#access-parts').waitFor({ state: 'visible' });

    const name = unique('Typed token');
    await tabTo('api-token-name');
    await page.keyboard.type(name);
    await tabTo('api-token-permission-chat-read');
    await page.keyboard.press('Space');
    await tabTo('Create token');
    await page.keyboard.press('Enter');
    await page.locator('#api-token-new').waitFor({ state: 'visible' });
    expect(await focused()).toBe('api-token-secret');
    const secret = await page.inputValue('#api-token-secret');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('copy-api-token');
    await expectReads(secret);

    await tabTo(`Revoke API token ${name}`);
    await page.keyboard.press('Enter');
    await tokenRow(page, name).waitFor({ state: 'detached' });
    expect(await page.isHidden('#api-token-new')).toBe(true);
    expect((await call(secret, 'GET', `/api/v1/rooms/${room.id}/messages`)).status).toBe(401);
    expect(errors).toEqual([]);
    await context.close();
  });
});
