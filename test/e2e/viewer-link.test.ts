/**
 * Viewer links in Chromium against a real `wrangler dev`: a link opens its room's page with no token
 * prompt, messages arrive live, the secret leaves the address bar and travels only in the
 * Authorization header; a context with the first one's storage (a browser restart) opens the room
 * from its plain URL; after a revocation or rotation the page says the link was revoked or replaced,
 * and never asks for a token; a new link replaces the one kept.
 */
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from './support/api';
import type { DevServer } from './support/dev-server';
import { ARTIFACTS, closeTestbed, openTestbed } from './support/testbed';
import { attachProbe, type Probe, waitFor } from './support/page-probe';

const GONE = 'This link was revoked or replaced; ask for a new one.';

interface Link {
  id: string;
  secret: string;
  url: string;
}

let server: DevServer;
let api: Api;
let browser: Browser;

const seqsOnPage = (page: Page) =>
  page.$$eval('#messages li.message', (items) => items.map((item) => Number(item.getAttribute('data-seq')))) as Promise<number[]>;
/** The page's state line; `navigating` while the page reloads (a new link in the same tab reloads it). */
const stateOf = (page: Page) =>
  page.$eval('#state', (el) => ({ kind: el.className, text: el.textContent ?? '' })).catch(() => ({ kind: 'navigating', text: '' }));

async function createLink(roomId: string, label: string): Promise<Link> {
  const link = await api.admin<Link>('POST', `/api/v1/rooms/${roomId}/viewer-links`, { label });
  expect(new URL(link.url).origin).toBe(server.baseUrl);
  return link;
}

/** A page on `context` that records every request's URL and headers, and the page's problems. */
async function newPage(context: BrowserContext): Promise<{ page: Page; probe: Probe; sent: string[] }> {
  const page = await context.newPage();
  const probe = await attachProbe(page, server.baseUrl);
  const sent: string[] = [];
  page.on('request', (req) => {
    const headers = req.headers();
    sent.push(`${req.method()} ${req.url()} referer=${headers.referer ?? ''}`);
  });
  page.on('websocket', (ws) => sent.push(`WS ${ws.url()}`));
  return { page, probe, sent };
}

async function untilLive(page: Page): Promise<void> {
  await waitFor(
    'the page to go live',
    () => stateOf(page),
    (s) => s.kind === 'live',
  );
}

async function untilGone(page: Page): Promise<void> {
  await waitFor(
    'the revoked-link banner',
    async () => ((await page.isVisible('#offline')) ? await page.textContent('#offline-reason') : null),
    (reason) => reason === GONE,
  );
}

beforeAll(async () => {
  ({ server, api, browser } = await openTestbed());
});

afterAll(async () => {
  await closeTestbed({ server, browser });
});

describe('a viewer link on the room page', () => {
  it('opens the room without a token prompt, live, keeps the secret out of the address bar and URLs, and survives a browser restart', async () => {
    const room = await api.createRoom('Lobby wall', 'viewer link');
    const hook = await api.createWebhook(room.id);
    for (let i = 1; i <= 2; i++) expect((await api.postOk(hook, `before ${i}`)).seq).toBe(i);
    const link = await createLink(room.id, 'Lobby TV');

    const first = await browser.newContext({ viewport: { width: 1100, height: 700 } });
    const { page, probe, sent } = await newPage(first);
    await page.goto(link.url);
    await untilLive(page);
    expect(await page.isHidden('#token-form')).toBe(true);
    expect(await page.isHidden('#compose')).toBe(true);
    expect(page.url()).toBe(`${server.baseUrl}/rooms/${room.id}`);
    expect(await page.textContent('#room-name')).toBe('Lobby wall');
    expect(await seqsOnPage(page)).toEqual([1, 2]);

    expect((await api.postOk(hook, '**live** on the wall')).seq).toBe(3);
    await waitFor(
      'the live message',
      () => seqsOnPage(page),
      (seqs) => seqs.includes(3),
    );
    await page.screenshot({ path: path.join(ARTIFACTS, 'viewer-link-live.png') });
    expect(sent.length).toBeGreaterThan(2);
    for (const line of sent) expect(line).not.toContain(link.secret);
    expect(probe.dialogs).toEqual([]);
    expect(probe.pageErrors).toEqual([]);
    expect((await probe.report()).csp).toEqual([]);

    // A browser restart: the context goes, a new one with its storage opens the plain room URL.
    const storage = await first.storageState();
    await first.close();
    const second = await browser.newContext({ viewport: { width: 1100, height: 700 }, storageState: storage });
    const again = await newPage(second);
    await again.page.goto(`${server.baseUrl}/rooms/${room.id}`);
    await untilLive(again.page);
    expect(await again.page.isHidden('#token-form')).toBe(true);
    expect(await seqsOnPage(again.page)).toEqual([1, 2, 3]);
    expect((await api.postOk(hook, 'after the restart')).seq).toBe(4);
    await waitFor(
      'the message after the restart',
      () => seqsOnPage(again.page),
      (seqs) => seqs.includes(4),
    );
    await again.page.screenshot({ path: path.join(ARTIFACTS, 'viewer-link-restarted.png') });

    // Revoked: the open page says so (its socket is closed), and so does a reload; no token is asked for.
    const revoked = await fetch(`${server.baseUrl}/api/v1/rooms/${room.id}/viewer-links/${link.id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${server.adminToken}` },
    });
    expect(revoked.status).toBe(204);
    await untilGone(again.page);
    expect(await stateOf(again.page)).toEqual({ kind: 'offline', text: 'Link revoked' });
    expect(await again.page.isHidden('#token-form')).toBe(true);
    await again.page.screenshot({ path: path.join(ARTIFACTS, 'viewer-link-revoked.png') });
    await again.page.reload();
    await untilGone(again.page);
    expect(await again.page.isHidden('#token-form')).toBe(true);
    expect(again.probe.pageErrors).toEqual([]);
    await second.close();
  });

  it('keeps a #seq deep link given with the link; after a rotation the old link is refused and the new URL replaces it', async () => {
    const room = await api.createRoom('Rotating wall');
    const hook = await api.createWebhook(room.id);
    for (let i = 1; i <= 3; i++) await api.postOk(hook, `message ${i}`);
    const link = await createLink(room.id, 'Ops TV');

    const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
    const { page, sent } = await newPage(context);
    await page.goto(`${server.baseUrl}/rooms/${room.id}#2&view=${link.secret}`);
    await untilLive(page);
    expect(page.url()).toBe(`${server.baseUrl}/rooms/${room.id}#2`);
    await waitFor(
      'the linked message',
      () => page.$$eval('#messages li.linked', (items) => items.map((item) => Number(item.getAttribute('data-seq')))),
      (seqs) => seqs.length === 1 && seqs[0] === 2,
    );

    const rotated = await api.admin<Link>('POST', `/api/v1/rooms/${room.id}/viewer-links/${link.id}/rotate`);
    expect(rotated.secret).not.toBe(link.secret);
    await untilGone(page);
    expect(await page.isHidden('#token-form')).toBe(true);

    await page.goto(rotated.url);
    await untilLive(page);
    expect(page.url()).toBe(`${server.baseUrl}/rooms/${room.id}`);
    expect(await seqsOnPage(page)).toEqual([1, 2, 3]);
    // The new secret is the one kept: a plain visit opens the room.
    await page.goto(`${server.baseUrl}/rooms/${room.id}`);
    await untilLive(page);
    await page.screenshot({ path: path.join(ARTIFACTS, 'viewer-link-rotated.png') });
    for (const line of sent) {
      expect(line).not.toContain(link.secret);
      expect(line).not.toContain(rotated.secret);
    }
    await context.close();
  });
});

describe('viewer links on the admin page', () => {
  it('creates a link and shows its URL once with Copy, lists it with its last use, rotates and revokes it', async () => {
    const room = await api.createRoom('Admin wall');
    const hook = await api.createWebhook(room.id);
    await api.postOk(hook, 'on the wall');

    const adminContext = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    await adminContext.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    const admin = await adminContext.newPage();
    const errors: string[] = [];
    admin.on('pageerror', (err) => errors.push(err.message));
    admin.on('dialog', (dialog) => void dialog.accept());
    await admin.goto(`${server.baseUrl}/admin`);
    const field = admin.getByLabel('Admin token with chat:admin');
    await field.waitFor({ state: 'visible' });
    await field.fill(server.adminToken);
    await field.press('Enter');

    await admin
      .locator('#rooms tbody tr', { hasText: 'Admin wall' })
      .getByRole('button', { name: 'Viewer links of room Admin wall' })
      .click();
    await admin.locator('#links').waitFor({ state: 'visible' });
    expect(await admin.textContent('#links-title')).toBe('Viewer links: Admin wall');
    expect(await admin.isVisible('#links-empty')).toBe(true);

    // Refused input shows the API's message, and nothing is created.
    await admin.getByRole('button', { name: 'Create link' }).click();
    await admin.locator('#link-form-error').waitFor({ state: 'visible' });
    expect(await admin.textContent('#link-form-error')).toMatch(/label/);

    await admin.getByLabel('Label').fill('Reception TV');
    await admin.getByRole('button', { name: 'Create link' }).click();
    await admin.locator('#link-new').waitFor({ state: 'visible' });
    const url = await admin.inputValue('#link-url');
    expect(url).toMatch(new RegExp(`^${server.baseUrl}/rooms/${room.id}#view=sbv_`));
    await admin.getByRole('button', { name: 'Copy URL' }).click();
    await waitFor(
      'the copy',
      () => admin.textContent('#link-copy-status'),
      (text) => text === 'Copied to the clipboard.',
    );
    // A string, so the Node-side types need no DOM.
    expect(await admin.evaluate('navigator.clipboard.readText()')).toBe(url);
    expect(await admin.locator('#links-table tbody tr').count()).toBe(1);
    await admin.screenshot({ path: path.join(ARTIFACTS, 'viewer-link-admin.png'), fullPage: true });

    // The URL opens the room on a screen; the list then shows it used.
    const screenContext = await browser.newContext({ viewport: { width: 1100, height: 700 } });
    const screen = await screenContext.newPage();
    await screen.goto(url);
    await untilLive(screen);
    await admin.getByRole('button', { name: 'Viewer links of room Admin wall' }).click();
    await waitFor(
      'the last use in the list',
      () => admin.textContent('#links-table tbody tr td:nth-child(3)'),
      (text) => text === 'just now',
    );

    // Rotate: a new URL, shown once; the screen with the old one says so.
    await admin.getByRole('button', { name: 'Rotate viewer link Reception TV' }).click();
    await waitFor(
      'the new URL',
      () => admin.inputValue('#link-url'),
      (value) => value !== url && value.includes('#view=sbv_'),
    );
    await untilGone(screen);
    const rotatedUrl = await admin.inputValue('#link-url');
    await screen.goto(rotatedUrl);
    await untilLive(screen);

    // Revoke: gone from the list, the screen says so.
    await admin.getByRole('button', { name: 'Revoke viewer link Reception TV' }).click();
    await waitFor(
      'the empty list',
      () => admin.locator('#links-table tbody tr').count(),
      (n) => n === 0,
    );
    expect(await admin.isHidden('#link-new')).toBe(true);
    await untilGone(screen);
    expect(errors).toEqual([]);
    await screenContext.close();
    await adminContext.close();
  });
});
