/**
 * Issue 25 item 7 on the room page, in Chromium against a real `wrangler dev` (its D1 full-text
 * index): the search box and the metadata filter list the newest matches first, a page at a time,
 * with the matched words marked; a result opens the message in context in the timeline; Esc goes
 * back to live, and live messages keep arriving throughout; a date puts its first message at the
 * top of the timeline, which scrolls both ways from there. Every expected set is computed from the
 * posts this file made, not from the page or the API's search. Also: relative times are refreshed in
 * view only (issue 25 item 11: a long page re-laid out every message at a minute's turn).
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api, Room, Webhook } from './support/api';
import type { DevServer } from './support/dev-server';
import { ARTIFACTS, closeTestbed, openTestbed } from './support/testbed';
import { attachProbe, makeMessage, type Probe, scriptRoom, waitFor } from './support/page-probe';
import { watchdog } from './support/watchdog';

/** The page's results per search page (history-search.ts SEARCH_PAGE). */
const SEARCH_PAGE = 25;
const BEFORE_GAP = 40;
const AFTER_GAP = 130;

interface Posted {
  seq: number;
  message: string;
  metadata: string | null;
}

let server: DevServer;
let api: Api;
let browser: Browser;
let room: Room;
let hook: Webhook;
let token: string;
/** Every message posted into the room, in seq order. */
const posted: Posted[] = [];
/** The first instant after the gap between the two batches, to the second. */
let gapEnd: Date;

const textOf = (i: number) =>
  [`Entry ${i}`, i % 4 === 0 ? 'deploy' : 'build', i % 3 === 0 ? 'rollback' : 'steady', i % 10 === 0 ? 'at the Café' : ''].join(' ').trim();
const metadataOf = (i: number) => (i % 7 === 0 ? 'jenkins' : i % 2 === 0 ? 'github' : null);

async function post(message: string, metadata: string | null): Promise<Posted> {
  const delivery = await api.postOk(hook, message, metadata ?? undefined);
  if (delivery.seq === null) throw new Error('the post has no seq');
  const entry = { seq: delivery.seq, message, metadata };
  posted.push(entry);
  return entry;
}

/** Folded words, as the search folds them (case and accents). */
const words = (text: string) =>
  (text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? []) as string[];

/** Seqs of the posts matching a search, newest first: computed from what was posted. */
function expected(q: string, metadata?: string): number[] {
  return posted
    .filter(
      (p) =>
        (metadata === undefined || p.metadata === metadata) && words(q).every((w) => words(`${p.message} ${p.metadata ?? ''}`).includes(w)),
    )
    .map((p) => p.seq)
    .reverse();
}

async function openRoom(options: { wall?: boolean; width?: number } = {}): Promise<{ page: Page; probe: Probe }> {
  const page = await browser.newPage({ viewport: { width: options.width ?? 1440, height: 900 }, timezoneId: 'UTC' });
  const probe = await attachProbe(page, server.baseUrl, []);
  await page.goto(`${server.baseUrl}/rooms/${room.id}${options.wall ? '?wall=1' : ''}`);
  const field = page.getByLabel('Access token with chat:read');
  await field.waitFor({ state: 'visible' });
  await field.fill(token);
  await page.getByRole('button', { name: 'Open room' }).click();
  await waitFor(
    'the page to go live',
    () => page.$eval('#state', (el) => el.className),
    (kind) => kind === 'live',
  );
  return { page, probe };
}

const item = (page: Page, seq: number) => page.locator(`#messages li.message[data-seq="${seq}"]`);
const resultSeqs = (page: Page) => page.$$eval('#results-list a.result', (els) => els.map((el) => Number(el.getAttribute('data-seq'))));
const shownSeqs = (page: Page) => page.$$eval('#messages li.message', (els) => els.map((el) => Number(el.getAttribute('data-seq'))));
const contiguous = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Where the message is relative to the viewport and the sticky header. */
const placeOf = async (page: Page, seq: number) => {
  const box = (await item(page, seq).boundingBox())!;
  const header = (await page.locator('header').boundingBox())!;
  return { top: box.y, bottom: box.y + box.height, headerBottom: header.y + header.height, viewport: page.viewportSize()!.height };
};

const atBottom = async (page: Page) =>
  (await page.evaluate('window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 60')) as boolean;

async function search(page: Page, q: string, metadata = ''): Promise<void> {
  await page.getByLabel('Search messages').fill(q);
  await page.getByLabel('Metadata').fill(metadata);
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await waitFor(
    `the results of "${q}" / "${metadata}"`,
    () => page.locator('#results-status').textContent(),
    (text) => /result|No message/.test(text ?? ''),
  );
}

/**
 * Posts messages `from`..`to`, six in flight (the set-up posted 170 one at a time), then puts `posted` back in
 * seq order: the room numbers them as they arrive.
 */
async function postRange(from: number, to: number): Promise<void> {
  const queue = Array.from({ length: to - from + 1 }, (_, k) => from + k);
  const poster = async () => {
    for (let i = queue.shift(); i !== undefined; i = queue.shift()) await post(textOf(i), metadataOf(i));
  };
  await Promise.all(Array.from({ length: 6 }, poster));
  posted.sort((a, b) => a.seq - b.seq);
}

beforeAll(async () => {
  const steps = watchdog('room-page-history set-up', 200_000, () => server);
  steps.step('dev server and Chromium');
  ({ server, api, browser } = await openTestbed());
  steps.step('room, webhook and token');
  room = await api.createRoom('history', 'search, filter, jump');
  hook = await api.createWebhook(room.id);
  token = await api.createToken(['chat:read']);
  steps.step(`posts 1–${BEFORE_GAP}`);
  await postRange(1, BEFORE_GAP);
  steps.step('history, then the gap');
  const lastBefore = (await api.history(room.id)).at(-1)!;
  gapEnd = new Date(Math.floor(Date.parse(lastBefore.createdAt) / 1000) * 1000 + 1000);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, gapEnd.getTime() - Date.now()) + 300));
  steps.step(`posts ${BEFORE_GAP + 1}–${BEFORE_GAP + AFTER_GAP}`);
  await postRange(BEFORE_GAP + 1, BEFORE_GAP + AFTER_GAP);
  steps.done();
});

afterAll(async () => {
  await closeTestbed({ server, browser });
});

describe('searching a room from its page', () => {
  it('lists the newest matches first with the words marked, pages with "More results", opens one in context, and goes back to live on Esc', async () => {
    const { page, probe } = await openRoom();
    const all = expected('Deploy');
    expect(all.length).toBeGreaterThan(SEARCH_PAGE);

    await search(page, 'Deploy');
    expect(await resultSeqs(page)).toEqual(all.slice(0, SEARCH_PAGE));
    expect(await page.locator('#results-status').textContent()).toBe(`${SEARCH_PAGE}+ results, newest first`);
    const marks = await page.$$eval('#results-list mark', (els) => els.map((el) => el.textContent));
    expect(marks.length).toBe(SEARCH_PAGE);
    expect(new Set(marks)).toEqual(new Set(['deploy']));
    await page.getByRole('button', { name: 'More results' }).click();
    await waitFor(
      'the second page',
      () => resultSeqs(page),
      (seqs) => seqs.length === all.length,
    );
    expect(await resultSeqs(page)).toEqual(all);
    expect(await page.getByRole('button', { name: 'More results' }).isVisible()).toBe(false);
    expect(await page.locator('#results-status').textContent()).toBe(`${all.length} results, newest first`);

    // Two words, accents folded: "cafe" finds and marks "Café".
    await search(page, 'cafe deploy');
    expect(await resultSeqs(page)).toEqual(expected('cafe deploy'));
    expect(new Set(await page.$$eval('#results-list mark', (els) => els.map((el) => el.textContent)))).toEqual(new Set(['Café', 'deploy']));
    await page.screenshot({ path: path.join(ARTIFACTS, 'room-history-search.png') });

    // The oldest result is far above what the page showed: it opens in context, with its neighbours.
    await search(page, 'Deploy');
    await page.getByRole('button', { name: 'More results' }).click();
    await waitFor(
      'the second page',
      () => resultSeqs(page),
      (seqs) => seqs.length === all.length,
    );
    const oldest = all.at(-1)!;
    expect(oldest).toBeLessThan(posted.length - 100);
    await page.locator(`#results-list a.result[data-seq="${oldest}"]`).click();
    await item(page, oldest).and(page.locator('.linked')).waitFor();
    await waitFor(
      'the result in view',
      () => placeOf(page, oldest),
      (p) => p.top >= p.headerBottom && p.bottom <= p.viewport,
    );
    expect(new URL(page.url()).hash).toBe(`#${oldest}`);
    expect(await page.locator(`#results-list a.result[data-seq="${oldest}"]`).getAttribute('aria-current')).toBe('true');
    const last = posted.at(-1)!.seq;
    const inContext = await shownSeqs(page);
    expect(inContext[0]).toBeLessThanOrEqual(oldest);
    expect(inContext).toEqual(contiguous(inContext[0]!, last));
    await page.screenshot({ path: path.join(ARTIFACTS, 'room-history-in-context.png') });

    // The room stays live under the search: a message posted now is on the page, the results stay.
    const during = await post('posted while searching', null);
    await item(page, during.seq).waitFor();
    expect(await page.locator('#results').isVisible()).toBe(true);

    await page.keyboard.press('Escape');
    await waitFor(
      'the results to close',
      () => page.locator('#results').isVisible(),
      (visible) => !visible,
    );
    expect(await page.getByLabel('Search messages').inputValue()).toBe('');
    expect(new URL(page.url()).hash).toBe('');
    expect(await page.locator('#messages .linked').count()).toBe(0);
    await waitFor(
      'the bottom',
      () => atBottom(page),
      (yes) => yes,
    );
    const after = await post('posted after the search', null);
    await item(page, after.seq).waitFor();
    await waitFor(
      'the page to follow the new message',
      () => atBottom(page),
      (yes) => yes,
    );
    const shown = await shownSeqs(page);
    expect(shown).toEqual(contiguous(shown[0]!, after.seq));
    await page.screenshot({ path: path.join(ARTIFACTS, 'room-history-back-to-live.png') });
    expect(probe.pageErrors).toEqual([]);
    expect((await probe.report()).csp).toEqual([]);
    await page.close();
  });

  it('filters by metadata, alone or with words, and says when nothing matches (a narrow window: results over the foot)', async () => {
    const { page, probe } = await openRoom({ width: 900 });
    await search(page, 'deploy', 'jenkins');
    const matches = expected('deploy', 'jenkins');
    expect(await resultSeqs(page)).toEqual(matches);
    // Opened, the message is in view above the results panel.
    await page.locator(`#results-list a.result[data-seq="${matches.at(-1)}"]`).click();
    await item(page, matches.at(-1)!).and(page.locator('.linked')).waitFor();
    const panelTop = (await page.locator('#results').boundingBox())!.y;
    await waitFor(
      'the message above the panel',
      () => placeOf(page, matches.at(-1)!),
      (p) => p.top >= p.headerBottom && p.bottom <= panelTop,
    );
    await page.screenshot({ path: path.join(ARTIFACTS, 'room-history-narrow.png') });
    await search(page, '', 'jenkins');
    expect(await resultSeqs(page)).toEqual(expected('', 'jenkins'));
    expect(await page.$$eval('#results-list .tag', (els) => [...new Set(els.map((el) => el.textContent))])).toEqual(['jenkins']);
    // The metadata the page has seen is offered in the field.
    expect(await page.$$eval('#metadata-seen option', (els) => els.map((el) => el.getAttribute('value')).sort())).toEqual([
      'github',
      'jenkins',
    ]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'room-history-metadata.png') });
    await search(page, 'nothing-like-this', '');
    expect(await page.locator('#results-status').textContent()).toBe('No message matches.');
    expect(await resultSeqs(page)).toEqual([]);
    // Clearing the fields is leaving the search.
    await page.getByLabel('Search messages').fill('');
    await waitFor(
      'the results to close',
      () => page.locator('#results').isVisible(),
      (visible) => !visible,
    );
    expect(probe.pageErrors).toEqual([]);
    await page.close();
  });
});

describe('jumping to a date from the room page', () => {
  it('puts the first message at or after the date at the top, and scrolls both ways from there', async () => {
    const { page, probe } = await openRoom();
    const stored = await api.history(room.id);
    const first = stored.find((m) => Date.parse(m.createdAt) >= gapEnd.getTime())!;
    expect(first.seq).toBe(BEFORE_GAP + 1);
    // Not on the page before the jump: the page showed the latest 100.
    expect(await item(page, first.seq).count()).toBe(0);

    await page.getByLabel('Jump to date').fill(gapEnd.toISOString().slice(0, 19));
    await page.getByRole('button', { name: 'Jump to date' }).click();
    await item(page, first.seq).and(page.locator('.linked')).waitFor();
    const place = await waitFor(
      'the message at the top',
      () => placeOf(page, first.seq),
      (p) => p.top >= p.headerBottom - 1 && p.top < p.headerBottom + 40,
    );
    expect(place.top).toBeGreaterThanOrEqual(place.headerBottom - 1);
    await page.screenshot({ path: path.join(ARTIFACTS, 'room-history-jump.png') });

    // Up: the messages before the date load as the reader scrolls; down: everything to the latest.
    await waitFor(
      'message 1 after scrolling up',
      async () => {
        await page.mouse.wheel(0, -3000);
        return item(page, 1).count();
      },
      (n) => n === 1,
    );
    const last = posted.at(-1)!.seq;
    expect(await shownSeqs(page)).toEqual(contiguous(1, last));

    // A date after the last message: said so, and the latest are shown.
    await page.getByLabel('Jump to date').fill('2100-01-01T00:00:00');
    await page.getByRole('button', { name: 'Jump to date' }).click();
    await waitFor(
      'the answer',
      () => page.locator('#jump-status').textContent(),
      (text) => (text ?? '').startsWith('No message since'),
    );
    await waitFor(
      'the bottom',
      () => atBottom(page),
      (yes) => yes,
    );
    expect(probe.pageErrors).toEqual([]);
    expect((await probe.report()).csp).toEqual([]);
    await page.close();
  });

  it('is hidden while the page asks for a token, and there once it is live', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    await page.goto(`${server.baseUrl}/rooms/${room.id}`);
    const field = page.getByLabel('Access token with chat:read');
    await field.waitFor({ state: 'visible' });
    expect(await page.locator('#history-tools').isVisible()).toBe(false);
    await field.fill(token);
    await page.getByRole('button', { name: 'Open room' }).click();
    await page.getByLabel('Search messages').waitFor({ state: 'visible' });
    await page.close();
  });

  it('is hidden on a wall screen, which is watched rather than searched', async () => {
    const { page } = await openRoom({ wall: true });
    expect(await page.locator('#history-tools').isVisible()).toBe(false);
    expect(await page.locator('#tools-toggle').isVisible()).toBe(false);
    await page.close();
  });

  it('waits behind a History button on a phone, leaving the messages most of the screen; a wide window shows it at once', async () => {
    const { page, probe } = await openRoom({ width: 390 });
    const toggle = page.getByRole('button', { name: 'History' });
    const field = page.getByLabel('Search messages');
    expect(await field.isVisible()).toBe(false);
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    // The sticky header: a fifth of the 900-pixel window at most (the tools' three rows made it a quarter).
    expect((await page.locator('header').boundingBox())!.height).toBeLessThan(900 / 5);

    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    expect(await field.isVisible()).toBe(true);
    expect(await page.evaluate('document.activeElement?.id')).toBe('search-q');
    await page.keyboard.type('rollback');
    await page.keyboard.press('Enter');
    await waitFor(
      'the results',
      () => resultSeqs(page),
      (seqs) => seqs.length > 0,
    );
    expect(await resultSeqs(page)).toEqual(expected('rollback').slice(0, SEARCH_PAGE));
    await page.getByRole('button', { name: 'Back to live' }).click();
    await toggle.click();
    expect(await field.isVisible()).toBe(false);
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(probe.pageErrors).toEqual([]);
    await page.close();

    const wide = await openRoom({ width: 1100 });
    expect(await wide.page.getByLabel('Search messages').isVisible()).toBe(true);
    expect(await wide.page.locator('#tools-toggle').isVisible()).toBe(false);
    await wide.page.close();
  });
});

describe('relative times on a long page', () => {
  it('refreshes the times in view every 30 s, and the others as they scroll into view', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    await attachProbe(page, server.baseUrl, []);
    // 50 s old when the page opens ("just now"), past a minute at the page's first refresh, 30 s later.
    const at = new Date(Date.now() - 50_000).toISOString();
    await scriptRoom(
      page,
      Array.from({ length: 100 }, (_, i) => makeMessage(room.id, i + 1, { createdAt: at })),
    );
    // The page's clock, not the wall's: the 30 s refresh is reached by moving the clock, not by waiting.
    await page.clock.install();
    await page.goto(`${server.baseUrl}/rooms/${room.id}`);
    await page.getByLabel('Access token with chat:read').fill(token);
    await page.getByRole('button', { name: 'Open room' }).click();
    await item(page, 100).waitFor();
    const timeOf = (seq: number) => item(page, seq).locator('time').textContent();
    expect(await timeOf(100)).toBe('just now');
    await page.clock.fastForward(31_000);
    await waitFor(
      'the refresh of the times in view',
      () => timeOf(100),
      (text) => text === '1 min ago',
    );
    // Far above the viewport: not laid out again for text nobody sees, until it is in view.
    expect(await timeOf(1)).toBe('just now');
    await item(page, 1).scrollIntoViewIfNeeded();
    await waitFor(
      'the time of a message scrolled into view',
      () => timeOf(1),
      (text) => text === '1 min ago',
    );
    await page.close();
  });
});
