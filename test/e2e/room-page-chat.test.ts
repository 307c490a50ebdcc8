/**
 * Issue 25 items 8 and 9 on the room page, in Chromium against a real `wrangler dev`: a person with
 * `chat:write` posts from the compose box and sees the message come back as themselves; a webhook's
 * edit and deletion reach the open page as update frames and replace the message at its seq; a token
 * that may only read is told it cannot post.
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from './support/api';
import type { DevServer } from './support/dev-server';
import { ARTIFACTS, closeTestbed, openTestbed } from './support/testbed';
import { attachProbe, type Probe, waitFor } from './support/page-probe';

let server: DevServer;
let api: Api;
let browser: Browser;

async function openRoom(roomId: string, token: string): Promise<{ page: Page; probe: Probe }> {
  const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
  const probe = await attachProbe(page, server.baseUrl, []);
  await page.goto(`${server.baseUrl}/rooms/${roomId}`);
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

beforeAll(async () => {
  ({ server, api, browser } = await openTestbed());
});

afterAll(async () => {
  await closeTestbed({ server, browser });
});

describe('talking in a room from its page', () => {
  it('posts from the compose box as the token holder; edits and deletions by the webhook replace the message in place', async () => {
    const room = await api.createRoom('chat');
    const hook = await api.createWebhook(room.id);
    const writer = await api.admin<{ token: string }>('POST', '/api/v1/tokens', { name: 'Dana', permissions: ['chat:read', 'chat:write'] });
    const { page, probe } = await openRoom(room.id, writer.token);

    const box = page.getByLabel('Message', { exact: true });
    await box.waitFor({ state: 'visible' });
    await box.fill('hello **team**');
    await box.press('Enter');
    const mine = item(page, 1);
    await mine.waitFor();
    expect(await mine.locator('.sender').textContent()).toBe('Dana');
    expect(await mine.locator('.body strong').textContent()).toBe('team');
    // Cleared once the post is answered, which may come after its message arrived over the socket.
    await expect.poll(() => box.inputValue()).toBe('');
    // Shift+Enter is a new line, not a send.
    await box.fill('two');
    await box.press('Shift+Enter');
    await box.type('lines');
    expect(await box.inputValue()).toBe('two\nlines');
    await page.getByRole('button', { name: 'Send' }).click();
    await item(page, 2).waitFor();
    const stored = await api.history(room.id);
    expect(stored.map((m) => [m.seq, m.markdown, m.sender.name])).toEqual([
      [1, 'hello **team**', 'Dana'],
      [2, 'two\nlines', 'Dana'],
    ]);

    // The webhook posts, then edits and deletes its message: the page follows at seq 3, live.
    const delivery = await api.postOk(hook, 'build **running**');
    await item(page, 3).waitFor();
    const edit = await fetch(`${api.webhookUrl(hook)}/messages/${delivery.messageId}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'build **passed**' }),
    });
    expect(edit.status).toBe(200);
    await waitFor(
      'the edit to reach the page',
      async () => ((await item(page, 3).locator('.body').textContent()) ?? '').trim(),
      (text) => text === 'build passed',
    );
    expect(await item(page, 3).locator('.edited').textContent()).toBe('edited');
    await page.screenshot({ path: path.join(ARTIFACTS, 'room-chat-edited.png') });
    const gone = await fetch(`${api.webhookUrl(hook)}/messages/${delivery.messageId}`, { method: 'DELETE' });
    expect(gone.status).toBe(200);
    await waitFor(
      'the deletion to reach the page',
      async () => ((await item(page, 3).locator('.body').textContent()) ?? '').trim(),
      (text) => text === 'This message was deleted.',
    );
    // Still three messages, in seq order, nothing duplicated.
    expect(await page.$$eval('#messages li.message', (els) => els.map((el) => el.getAttribute('data-seq')))).toEqual(['1', '2', '3']);
    expect(probe.pageErrors).toEqual([]);
    expect((await probe.report()).csp).toEqual([]);
    await page.close();
  });

  it('keeps the newest message in view above the compose box, which spans the timeline, on opening and live', async () => {
    const room = await api.createRoom('busy');
    const hook = await api.createWebhook(room.id);
    // More than the 800-pixel window holds: the page opens scrolled to the end.
    for (let i = 1; i <= 30; i++) await api.postOk(hook, `message **${i}**\n\nwith a second paragraph`);
    const writer = await api.createToken(['chat:read', 'chat:write']);
    const { page } = await openRoom(room.id, writer);
    await page.getByLabel('Message', { exact: true }).waitFor({ state: 'visible' });

    /** Boxes of the timeline, the compose box and the newest message, in the window's coordinates. */
    const layout = (seq: number) =>
      page.evaluate(`(() => {
        const box = (el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right }; };
        return {
          timeline: box(document.querySelector('#messages')),
          compose: box(document.querySelector('#compose')),
          newest: box(document.querySelector('#messages li.message[data-seq="${seq}"]')),
          window: innerHeight,
        };
      })()`) as Promise<
        Record<'timeline' | 'compose' | 'newest', { top: number; bottom: number; left: number; right: number }> & { window: number }
      >;
    const expectNewestAboveCompose = async (seq: number) => {
      // Layout settles on the frame after the message is placed.
      await page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))');
      const at = await layout(seq);
      expect(at.compose.left).toBeCloseTo(at.timeline.left, 0);
      expect(at.compose.right).toBeCloseTo(at.timeline.right, 0);
      // Flush with the window's foot at the page's end too: no band of the body's padding under it.
      expect(Math.abs(at.compose.bottom - at.window)).toBeLessThanOrEqual(0.5);
      expect(at.newest.top).toBeGreaterThanOrEqual(0);
      expect(at.newest.bottom).toBeLessThanOrEqual(at.compose.top + 0.5);
    };
    await expectNewestAboveCompose(30);

    await api.postOk(hook, 'message **31**\n\nposted while the page watches');
    await item(page, 31).waitFor();
    await expectNewestAboveCompose(31);
    await page.close();
  });

  it('says a room has no message yet, with the compose box at the foot of the window, until the first arrives', async () => {
    const room = await api.createRoom('quiet');
    const hook = await api.createWebhook(room.id);
    const writer = await api.createToken(['chat:read', 'chat:write']);
    const { page } = await openRoom(room.id, writer);
    const note = page.getByText('No messages yet.');
    await note.waitFor({ state: 'visible' });
    const foot = (await page.evaluate(
      "(() => { const r = document.querySelector('#compose').getBoundingClientRect(); return [r.bottom, innerHeight, document.documentElement.scrollHeight]; })()",
    )) as number[];
    // At the window's foot, and nothing to scroll.
    expect(Math.abs(foot[1]! - foot[0]!)).toBeLessThanOrEqual(0.5);
    expect(foot[2]).toBe(foot[1]);

    await api.postOk(hook, 'the **first** one');
    await item(page, 1).waitFor();
    expect(await note.isVisible()).toBe(false);
    await page.close();
  });

  it('tells a token that may only read that posting needs chat:write, and keeps the text', async () => {
    const room = await api.createRoom('read only');
    const reader = await api.createToken(['chat:read']);
    const { page } = await openRoom(room.id, reader);
    const box = page.getByLabel('Message', { exact: true });
    await box.fill('may I?');
    await box.press('Enter');
    await waitFor(
      'the refusal',
      () => page.locator('#compose-status').textContent(),
      (text) => (text ?? '').includes('needs chat:write'),
    );
    expect(await box.inputValue()).toBe('may I?');
    expect(await box.isDisabled()).toBe(true);
    expect(await api.history(room.id)).toEqual([]);
    await page.close();
  });
});
