/**
 * What a page test file starts before its tests and stops after them: its own `wrangler dev`, an API
 * client for it, a headless Chromium, and the folder screenshots go to.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { Api } from './api';
import { launchChromium } from './browser';
import { type DevServer, type DevServerOptions, startDevServer } from './dev-server';

/** Screenshots kept as artifacts (git-ignored). */
export const ARTIFACTS = path.resolve(import.meta.dirname, '../../artifacts');

export interface Testbed {
  server: DevServer;
  api: Api;
  browser: Browser;
}

export async function openTestbed(options: DevServerOptions = {}): Promise<Testbed> {
  const server = await startDevServer(options);
  const browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
  return { server, api: new Api(server), browser };
}

/** Closes what openTestbed opened; either may be missing when a start failed. */
export async function closeTestbed(bed: { server?: DevServer; browser?: Browser }): Promise<void> {
  await bed.browser?.close().catch(() => undefined);
  await bed.server?.dispose();
}
