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

/**
 * A launch that has not answered in LAUNCH_TIMEOUT_MS is given up and tried once more: playwright waits
 * 180 s by default, and a file's set-up (the hook) has 240 s in all. Twice a fresh-clone CI run ended with
 * the room-page history file's set-up timing out, saying nothing of where: the launch was its one step
 * without a deadline of its own (a dev server's start and each API request have theirs). Which step hung is
 * not known; now a hung launch fails or recovers in its own words.
 */
const LAUNCH_TIMEOUT_MS = 60_000;

export async function launchChromium(): Promise<Browser> {
  try {
    return await launchOnce();
  } catch (err) {
    process.stderr.write(
      `[e2e] Chromium did not start (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); trying once more\n`,
    );
    return launchOnce();
  }
}

async function launchOnce(): Promise<Browser> {
  return chromium.launch({
    executablePath: await executablePath(),
    headless: true,
    timeout: LAUNCH_TIMEOUT_MS,
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
