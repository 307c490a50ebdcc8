/**
 * Headless Chromium driven by playwright-core. The browser arrives with `npm install`: @sparticuz/chromium
 * ships a Chromium build inside its npm package (unpacked to /tmp on first use), so no apt package and no
 * browser download is needed. CHROMIUM_PATH points at another build instead (e.g. Debian's /usr/bin/chromium).
 */
import sparticuz from '@sparticuz/chromium';
import { chromium, type Browser } from 'playwright-core';

export async function executablePath(): Promise<string> {
  return process.env.CHROMIUM_PATH ?? (await sparticuz.executablePath());
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await executablePath(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
  });
}
