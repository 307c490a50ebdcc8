import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { executablePath } from '../e2e/support/browser';
import { prepareLocalD1 } from '../../scripts/dev/local-d1';
import { ROOT } from '../e2e/support/dev-server';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A local state directory with every migration applied, copied by each e2e dev server. */
    e2eMigratedState: string;
  }
}

/**
 * Global setup of the e2e project: the migrations applied once, into a template directory, the way
 * `npm run dev` applies them (scripts/dev/local-d1.ts). Each dev server starts on a copy of it instead
 * of migrating again: one Node and workerd start-up per file less.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  // @sparticuz/chromium unpacks its browser to /tmp on first use: once here, not by two files at once.
  await executablePath();
  const dir = mkdtempSync(path.join(tmpdir(), 'switchboard-e2e-template-'));
  await prepareLocalD1({ persistTo: dir, config: path.join(ROOT, 'wrangler.toml') });
  project.provide('e2eMigratedState', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
