/**
 * The admin page (issue 25 item 10), in Chromium against a real `wrangler dev`: sign in with a
 * `chat:admin` token (one with neither it nor `tokens:manage`, or an unknown one, refused readably),
 * create a room and a webhook through the forms, copy the webhook's URL (clipboard, and the selected-text fallback), send a test post and
 * find it in the delivery log and the room's history, pause (a test post refused, and logged),
 * resume, rotate, delete; the API's error messages shown as they are.
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPage } from '../../scripts/build-page';
import { openAdmin as openPage, signIn } from './support/admin-page';
import type { Api } from './support/api';
import type { DevServer } from './support/dev-server';
import { ARTIFACTS, closeTestbed, openTestbed } from './support/testbed';
import { waitFor } from './support/page-probe';

let server: DevServer;
let api: Api;
let browser: Browser;

const openAdmin = (options: { clipboard?: boolean; dark?: boolean; phone?: boolean } = {}) => openPage(browser, server.baseUrl, options);

const webhookRow = (page: Page, name: string) => page.locator('#webhooks tbody tr', { hasText: name });
const roomRow = (page: Page, name: string) => page.locator('#rooms tbody tr', { hasText: name });
const deliveryRows = (page: Page) =>
  page.$$eval('#deliveries tbody tr', (rows) =>
    rows.map((row) => [...row.querySelectorAll('td')].slice(1).map((td) => td.textContent ?? '')),
  ) as Promise<string[][]>;

beforeAll(async () => {
  await buildPage();
  ({ server, api, browser } = await openTestbed());
});

afterAll(async () => {
  await closeTestbed({ server, browser });
});

/**
 * In the page: how many distinct top and bottom edges the cells of each row of the rooms and webhooks
 * tables have (distinct counts over all rows). [1]: every cell spans its row exactly, so the row's
 * borders are straight lines (a cell laid out as anything but a table cell ends short of them).
 */
const CELL_EDGES = `[...new Set([...document.querySelectorAll('#rooms tbody tr, #webhooks tbody tr')].map(
  (tr) => new Set([...tr.cells].map((td) => { const r = td.getBoundingClientRect(); return Math.round(r.top * 2) + '/' + Math.round(r.bottom * 2); })).size))]`;

describe('the admin page', () => {
  it('refuses a token without chat:admin or tokens:manage, and an unknown one, readably; the token never reaches the URL or storage', async () => {
    const reader = await api.createToken(['chat:read']);
    const { context, page, errors } = await openAdmin();
    await signIn(page, reader);
    const error = page.locator('#token-error');
    await error.waitFor({ state: 'visible' });
    const text = (await error.textContent()) ?? '';
    expect(text).toContain('This token holds neither chat:admin (rooms, webhooks and viewer links) nor tokens:manage');
    expect(text).toContain('chat:admin');
    expect(text).toContain('403 missing.permissions');
    expect(await page.isHidden('#admin')).toBe(true);
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-refused.png') });

    await signIn(page, 'sbt_not-a-token');
    await waitFor(
      'the 401 message',
      async () => (await error.textContent()) ?? '',
      (t) => t.includes('not accepted'),
    );
    expect(await error.textContent()).toContain('401 bad.credentials');

    expect(page.url()).toBe(`${server.baseUrl}/admin`);
    expect(await page.evaluate('({ session: { ...sessionStorage }, local: { ...localStorage } })')).toEqual({ session: {}, local: {} });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('creates a room and a webhook, copies its URL, sends test posts, pauses, rotates and deletes, with every answer shown', async () => {
    const { context, page, errors } = await openAdmin({ clipboard: true });
    await signIn(page, server.adminToken);
    await page.locator('#admin').waitFor({ state: 'visible' });
    expect(page.url()).toBe(`${server.baseUrl}/admin`);
    expect(await page.evaluate("sessionStorage.getItem('switchboard.adminToken')")).toBe(server.adminToken);

    // Bad input: the API's own message, naming the field.
    await page.locator('#room-name').fill('x'.repeat(101));
    await page.getByRole('button', { name: 'Create room' }).click();
    const roomFormError = page.locator('#room-form-error');
    await roomFormError.waitFor({ state: 'visible' });
    expect(await roomFormError.textContent()).toMatch(/name.*400 invalid\.value/);

    // A room.
    await page.locator('#room-name').fill('Deploys');
    await page.locator('#room-topic').fill('CI and releases');
    await page.getByRole('button', { name: 'Create room' }).click();
    await roomRow(page, 'Deploys').waitFor();
    expect(await roomFormError.isHidden()).toBe(true);
    const roomId = (await roomRow(page, 'Deploys').getAttribute('data-room-id'))!;
    expect((await api.admin<{ name: string; topic: string }>('GET', `/api/v1/rooms/${roomId}`)).topic).toBe('CI and releases');
    expect(await roomRow(page, 'Deploys').getByRole('link', { name: 'Open page' }).getAttribute('href')).toBe(`/rooms/${roomId}`);

    // Rename it.
    await page.getByRole('button', { name: 'Edit room Deploys' }).click();
    await page.getByLabel('Room name').fill('Deploys (prod)');
    await page.getByRole('button', { name: 'Save' }).click();
    await roomRow(page, 'Deploys (prod)').waitFor();
    expect((await api.admin<{ name: string }>('GET', `/api/v1/rooms/${roomId}`)).name).toBe('Deploys (prod)');

    // A webhook, first with a bad avatar URL (the API's message), then right.
    await page.locator('#webhook-name').fill('Jenkins');
    await page.locator('#webhook-kind').selectOption('jenkins');
    expect(await page.isHidden('#webhook-secret-label')).toBe(true);
    await page.locator('#webhook-room').selectOption(roomId);
    await page.locator('#webhook-burst').fill('50');
    await page.locator('#webhook-avatar').fill('http://ci.example/jenkins.png');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const webhookFormError = page.locator('#webhook-form-error');
    await webhookFormError.waitFor({ state: 'visible' });
    expect(await webhookFormError.textContent()).toMatch(/avatarUrl.*https.*400 invalid\.value/);
    await page.locator('#webhook-avatar').fill('https://ci.example/jenkins.png');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await webhookRow(page, 'Jenkins').waitFor();
    const hooks = await api.admin<{
      entities: { id: string; name: string; url: string; rateLimit: { burst: number }; avatarUrl: string }[];
    }>('GET', '/api/v1/webhooks');
    const hook = hooks.entities.find((w) => w.name === 'Jenkins')!;
    expect(hook).toBeDefined();
    expect(hook.rateLimit.burst).toBe(50);
    expect(hook.avatarUrl).toBe('https://ci.example/jenkins.png');
    const row = webhookRow(page, 'Jenkins');
    expect(await row.locator('td').nth(1).textContent()).toBe('jenkins');
    expect(await row.locator('td').nth(2).textContent()).toBe('Deploys (prod)');
    expect(await row.locator('td').nth(3).textContent()).toBe('Active');
    expect(await row.locator('td').nth(4).textContent()).toBe('never');

    // The signed kinds ask for a secret, the others do not.
    await page.locator('#webhook-kind').selectOption('github');
    expect(await page.isVisible('#webhook-secret-label')).toBe(true);
    await page.locator('#webhook-kind').selectOption('generic');

    // Its panel opened: the URL, copied to the clipboard.
    await page.locator('#detail').waitFor({ state: 'visible' });
    expect(await page.inputValue('#detail-url')).toBe(hook.url);
    await page.getByRole('button', { name: 'Copy URL' }).click();
    await waitFor(
      'the copy',
      async () => (await page.textContent('#copy-status')) ?? '',
      (t) => t !== '',
    );
    expect(await page.textContent('#copy-status')).toBe('Copied to the clipboard.');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(hook.url);

    // A test post: its answer, its delivery log entry, the message in the room.
    await page.locator('#test-message').fill('Hello from the **admin page**');
    await page.getByRole('button', { name: 'Send test post' }).click();
    const answer = page.locator('#test-answer');
    await waitFor(
      'the test post answer',
      async () => (await answer.textContent()) ?? '',
      (t) => t.startsWith('200'),
    );
    expect(await answer.textContent()).toMatch(/^200: stored in Deploys \(prod\) as #1 \(message [0-9a-f-]{36}\)\.$/);
    await waitFor(
      'the delivery log entry',
      () => deliveryRows(page),
      (rows) => rows.length === 1,
    );
    const [first] = await deliveryRows(page);
    expect(first!.slice(0, 3)).toEqual(['POST', '200', '']);
    expect(first![3]).toMatch(/^Deploys \(prod\) #1 · [0-9a-f]{8}$/);
    const history = await api.history(roomId);
    expect(history.map((m) => [m.seq, m.markdown])).toEqual([[1, 'Hello from the **admin page**']]);
    await waitFor(
      'the last delivery time',
      async () => (await row.locator('td').nth(4).textContent()) ?? '',
      (t) => t === 'just now',
    );
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-webhook.png'), fullPage: true });

    // Paused: the test post is refused with the API's answer, and logged; nothing reaches the room.
    await page.getByRole('button', { name: 'Pause' }).click();
    await waitFor(
      'the paused state',
      async () => (await row.locator('td').nth(3).textContent()) ?? '',
      (t) => t === 'Paused',
    );
    expect(await page.getByRole('button', { name: 'Resume' }).getAttribute('aria-pressed')).toBe('true');
    await page.getByRole('button', { name: 'Send test post' }).click();
    await waitFor(
      'the refusal',
      async () => (await answer.textContent()) ?? '',
      (t) => t.startsWith('Refused'),
    );
    expect(await answer.textContent()).toContain('403 webhook.inactive');
    await waitFor(
      'the refusal in the log',
      () => deliveryRows(page),
      (rows) => rows.length === 2,
    );
    const [refused] = await deliveryRows(page);
    expect(refused!.slice(0, 2)).toEqual(['POST', '403']);
    expect(refused![2]).toMatch(/^webhook\.inactive: /);
    expect(refused![3]).toBe('');
    expect(await api.history(roomId)).toHaveLength(1);
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-paused.png'), fullPage: true });

    // Resumed and rotated: the old URL answers 404, the new one posts.
    await page.getByRole('button', { name: 'Resume' }).click();
    await waitFor(
      'the active state',
      async () => (await row.locator('td').nth(3).textContent()) ?? '',
      (t) => t === 'Active',
    );
    await page.getByRole('button', { name: 'Rotate URL' }).click();
    const rotated = await waitFor(
      'the new URL',
      () => page.inputValue('#detail-url'),
      (url) => url !== hook.url,
    );
    expect(rotated).toMatch(new RegExp(`^${server.baseUrl}/webhooks/api/v1/webhook/[0-9a-f-]{36}$`));
    const old = await fetch(hook.url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"message":"old"}' });
    expect(old.status).toBe(404);
    await page.getByRole('button', { name: 'Send test post' }).click();
    await waitFor(
      'the post on the new URL',
      async () => (await answer.textContent()) ?? '',
      (t) => t.startsWith('200'),
    );
    expect(await answer.textContent()).toContain('as #2');

    // The room cannot go while the webhook posts to it: the 409 names the webhook.
    await page.getByRole('button', { name: 'Delete room Deploys (prod)' }).click();
    const roomsError = page.locator('#rooms-error');
    await roomsError.waitFor({ state: 'visible' });
    const conflict = (await roomsError.textContent()) ?? '';
    expect(conflict).toContain('Webhooks post to this room');
    expect(conflict).toContain('Webhooks: Jenkins.');
    expect(conflict).toContain('409 conflict');
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-overview.png'), fullPage: true });

    // Deleted: the webhook, then the room.
    await page.getByRole('button', { name: 'Delete webhook' }).click();
    await row.waitFor({ state: 'detached' });
    expect(await page.isHidden('#detail')).toBe(true);
    expect(
      (await fetch(`${server.baseUrl}/api/v1/webhooks/${hook.id}`, { headers: { Authorization: `Bearer ${server.adminToken}` } })).status,
    ).toBe(404);
    await page.getByRole('button', { name: 'Delete room Deploys (prod)' }).click();
    await roomRow(page, 'Deploys (prod)').waitFor({ state: 'detached' });
    expect((await api.admin<{ entities: { id: string }[] }>('GET', '/api/v1/rooms')).entities.map((r) => r.id)).not.toContain(roomId);

    // Reloaded, the tab still has its token and signs in by itself.
    await page.reload();
    await page.locator('#admin').waitFor({ state: 'visible' });
    expect(await page.isHidden('#token-form')).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('falls back to selecting the URL when the clipboard refuses', async () => {
    const room = await api.createRoom('Fallback room');
    const hook = await api.createWebhook(room.id);
    const { context, page, errors } = await openAdmin();
    await page.evaluate(() => {
      Object.defineProperty(navigator, 'clipboard', { value: { writeText: () => Promise.reject(new Error('denied')) } });
    });
    await signIn(page, server.adminToken);
    await page.getByRole('button', { name: `Manage webhook e2e ${room.id.slice(0, 8)}` }).click();
    await page.getByRole('button', { name: 'Copy URL' }).click();
    await waitFor(
      'the fallback',
      async () => (await page.textContent('#copy-status')) ?? '',
      (t) => t !== '',
    );
    expect(await page.textContent('#copy-status')).toContain('the URL is selected, press Ctrl+C');
    // The focused element and its selected text (the page's globals, as a string: Node has no DOM types).
    const selection = await page.evaluate(
      '({ id: document.activeElement.id, selected: document.activeElement.value.slice(document.activeElement.selectionStart, document.activeElement.selectionEnd) })',
    );
    expect(selection).toEqual({ id: 'detail-url', selected: hook.url });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('pages through the delivery log, newest first, in the dark scheme', async () => {
    const room = await api.createRoom('Busy room');
    const hook = await api.createWebhook(room.id);
    for (let i = 1; i <= 25; i++) await api.postOk(hook, `post ${i}`);
    const bad = await fetch(hook.url, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'nope' });
    expect(bad.status).toBe(415);
    const { context, page, errors } = await openAdmin({ dark: true });
    await signIn(page, server.adminToken);
    await page.getByRole('button', { name: `Manage webhook e2e ${room.id.slice(0, 8)}` }).click();
    // The log is written just after each answer: wait until the refusal, the last request, is in it.
    const firstPage = await waitFor(
      'the first page',
      async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return deliveryRows(page);
      },
      (rows) => rows[0]?.[1] === '415',
    );
    expect(firstPage).toHaveLength(20);
    expect(firstPage[0]!.slice(0, 3)).toEqual(['POST', '415', expect.stringMatching(/^unsupported\.media\.type: /)]);
    expect(firstPage.slice(1).map((r) => r[3]?.split(' · ')[0])).toEqual(Array.from({ length: 19 }, (_, i) => `Busy room #${25 - i}`));
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-dark.png'), fullPage: true });
    await page.getByRole('button', { name: 'Older deliveries' }).click();
    const all = await waitFor(
      'the second page',
      () => deliveryRows(page),
      (rows) => rows.length === 26,
    );
    expect(all.slice(20).map((r) => r[3]?.split(' · ')[0])).toEqual(Array.from({ length: 6 }, (_, i) => `Busy room #${6 - i}`));
    expect(await page.isHidden('#older-deliveries')).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });
  it('draws each table row as one line of cells: a cell of buttons ends where its row does', async () => {
    const room = await api.createRoom('Tall row', 'A topic that wraps onto several lines in the topic column. '.repeat(4).trim());
    await api.createWebhook(room.id);
    const { context, page, errors } = await openAdmin({});
    await signIn(page, server.adminToken);
    await roomRow(page, 'Tall row').waitFor();
    await webhookRow(page, `e2e ${room.id.slice(0, 8)}`).waitFor();
    expect(await page.evaluate(CELL_EDGES)).toEqual([1]);
    expect(errors).toEqual([]);
    await context.close();
  });
  it('fits a phone: the page never scrolls sideways, a wide table scrolls in its panel, ids on one line, actions side by side', async () => {
    const room = await api.createRoom('Phone room', 'A topic long enough to need more than one line in a narrow column');
    const hook = await api.createWebhook(room.id);
    const { context, page, errors } = await openAdmin({ phone: true });
    await signIn(page, server.adminToken);
    await roomRow(page, 'Phone room').waitFor();
    await webhookRow(page, `e2e ${room.id.slice(0, 8)}`).waitFor();

    const measure = () =>
      page.evaluate(`(() => {
        const row = [...document.querySelectorAll('#rooms tbody tr')].find((r) => r.textContent.includes('Phone room'));
        const id = row.querySelector('td code');
        const actions = [...row.querySelectorAll('td.actions button, td.actions a')].map((b) => b.getBoundingClientRect());
        const wrap = document.querySelector('#rooms').parentElement;
        return {
          page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
          wrap: [wrap.scrollWidth, wrap.clientWidth],
          idLines: id.getClientRects().length,
          idText: id.textContent,
          // Side by side: every action's box overlaps every other's height (one line of them, not a column).
          actionsInOneLine: actions.length > 1 && Math.max(...actions.map((b) => b.top)) < Math.min(...actions.map((b) => b.bottom)),
          cellEdges: ${CELL_EDGES},
        };
      })()`) as Promise<{
        page: number[];
        wrap: number[];
        idLines: number;
        idText: string;
        actionsInOneLine: boolean;
        cellEdges: number[];
      }>;
    const at = await measure();
    expect(at.page[0]).toBeLessThanOrEqual(at.page[1]!);
    expect(at.wrap[0]).toBeGreaterThan(at.wrap[1]!);
    expect(at.idText).toBe(room.id);
    expect(at.idLines).toBe(1);
    expect(at.actionsInOneLine).toBe(true);
    expect(at.cellEdges).toEqual([1]);

    // What is off to the side is reached by scrolling the table: Manage opens the webhook.
    const manage = webhookRow(page, `e2e ${room.id.slice(0, 8)}`).getByRole('button', { name: 'Manage' });
    await manage.scrollIntoViewIfNeeded();
    const box = (await manage.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    await manage.click();
    await page.locator('#detail').waitFor({ state: 'visible' });
    expect(await page.locator('#detail-url').inputValue()).toBe(api.webhookUrl(hook));
    expect(errors).toEqual([]);
    await context.close();
  });

  it('works from the keyboard: sign in, create a room, open a webhook and reach its URL without the mouse', async () => {
    const room = await api.createRoom('Keyboard room');
    await api.createWebhook(room.id);
    const { context, page, errors } = await openAdmin();
    const focused = () => page.evaluate<string>("document.activeElement?.id || document.activeElement?.getAttribute('aria-label') || ''");
    /** Tabs forward until `target` has the focus (at most 60 presses). */
    const tabTo = async (target: string) => {
      for (let i = 0; i < 60; i++) {
        if ((await focused()) === target) return;
        await page.keyboard.press('Tab');
      }
      throw new Error(`Tab never reached ${target}; last: ${await focused()}`);
    };
    await page.getByLabel('Admin token with chat:admin').waitFor({ state: 'visible' });
    expect(await focused()).toBe('token');
    await page.keyboard.type(server.adminToken);
    await page.keyboard.press('Enter');
    await page.locator('#admin').waitFor({ state: 'visible' });

    await tabTo('room-name');
    await page.keyboard.type('Typed room');
    await page.keyboard.press('Enter');
    await roomRow(page, 'Typed room').waitFor();

    const manage = `Manage webhook e2e ${room.id.slice(0, 8)}`;
    await tabTo(manage);
    await page.keyboard.press('Enter');
    await page.locator('#detail').waitFor({ state: 'visible' });
    expect(await focused()).toBe('detail-title');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('detail-url');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('copy-url');
    expect(errors).toEqual([]);
    await context.close();
  });
});
