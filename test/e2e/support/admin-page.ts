/** Opening the admin page (`/admin`) in Chromium and signing in, for the admin page's e2e files. */
import type { Browser, BrowserContext, Page } from 'playwright-core';

export interface OpenedAdmin {
  context: BrowserContext;
  page: Page;
  /** Page errors and console errors (a CSP violation is one). */
  errors: string[];
}

/**
 * The admin page in a fresh context: a desktop window, or a phone's; light or dark; with clipboard
 * access granted or not (the page then falls back to selecting the text). Every confirmation the page
 * asks for (rotate, revoke, delete) is answered yes.
 */
export async function openAdmin(
  browser: Browser,
  baseUrl: string,
  options: { clipboard?: boolean; dark?: boolean; phone?: boolean } = {},
): Promise<OpenedAdmin> {
  const context = await browser.newContext({
    viewport: options.phone ? { width: 390, height: 844 } : { width: 1200, height: 900 },
    ...(options.phone ? { isMobile: true, hasTouch: true } : {}),
    colorScheme: options.dark ? 'dark' : 'light',
  });
  if (options.clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) errors.push(msg.text());
  });
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(`${baseUrl}/admin`);
  return { context, page, errors };
}

/** Types the token into the sign-in form and sends it; whether it is taken is the caller's to check. */
export async function signIn(page: Page, token: string): Promise<void> {
  const field = page.getByLabel('Admin token with chat:admin');
  await field.waitFor({ state: 'visible' });
  await field.fill(token);
  await field.press('Enter');
}
