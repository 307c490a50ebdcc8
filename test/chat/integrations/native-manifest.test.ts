/// <reference types="vite/client" />
import { describe, expect, it } from 'vitest';
import { translate } from '../../../src/chat/integrations';
import type { NativeKind } from '../../../src/chat/integrations';
import { renderMarkdown } from '../../../src/chat/markdown';
import MANIFEST from '../../fixtures/shared/native-payloads/manifest.json';
import { nativePost } from './support';

/**
 * The 132 real payloads of test/fixtures/shared/native-payloads (GitHub, Bitbucket Cloud, Jira,
 * Jenkins, Salesforce), read as the bytes they are (Vite inlines them: workerd has no file system),
 * each translated as its manifest says it should be: shown ("deliver"), not shown ("ignore"),
 * either, or at least never a server error ("no5xx").
 */
const FILES = import.meta.glob('../../fixtures/shared/native-payloads/*/*.{json,xml}', {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;

const TEXT = new Map(Object.entries(FILES).map(([path, text]) => [path.split('/native-payloads/')[1], text]));

/** Entries the manifest marks "ignore" that issue 26 (item 4) made shown, as Zulip shows them. */
const SHOWN_SINCE_ISSUE_26 = new Set([
  'github/octokit-webhooks__pull_request__synchronize.payload.json',
  'github/octokit-webhooks__pull_request__labeled.payload.json',
  'github/ailisp-reallyfastci__webhook-pr-from-fork.json',
  'github/octokit-webhooks__pull_request_review_comment__created.payload.json',
  'github/idobata-idobata-hooks__pull_request_review_comment.json',
  'github/octokit-webhooks__check_run__completed.payload.json',
  'github/octokit-webhooks__fork__payload.json',
  'github/go-playground-webhooks__fork.json',
  'github/octokit-webhooks__status__payload.json',
  'github/idobata-idobata-hooks__status_failure.json',
  'github/octokit-webhooks__deployment_status__payload.json',
  'github/idobata-idobata-hooks__gollum.json',
  'github/idobata-idobata-hooks__commit_comment.json',
]);

/** Entries the manifest marks "ignore" that issue 25 (item 3: urgency) made shown: a build's result is what a level is for. */
const SHOWN_SINCE_ISSUE_25 = new Set(['bitbucket/go-playground-webhooks__repo-commit-status-updated.json']);

interface Entry {
  file: string;
  tool: string;
  event: string;
  expect: string;
}

function translateEntry(entry: Entry) {
  const text = TEXT.get(entry.file);
  if (text === undefined) throw new Error(`missing fixture ${entry.file}`);
  if (entry.tool === 'salesforce') return translate('salesforce', nativePost(text, {}, 'text/xml'));
  const headers: Record<string, string> =
    entry.tool === 'github' ? { 'X-GitHub-Event': entry.event } : entry.tool === 'bitbucket' ? { 'X-Event-Key': entry.event } : {};
  return translate(entry.tool as NativeKind, nativePost(text, headers));
}

describe('real native payloads, as their manifest says', () => {
  const entries = (MANIFEST as Entry[]).map((e) => [e.file, e] as const);

  it('has every file the manifest names', () => {
    expect(entries.length).toBe(132);
    for (const [file] of entries) expect(TEXT.has(file), file).toBe(true);
  });

  it.each(entries)('%s', (file, entry) => {
    const result = translateEntry(entry);
    const want = SHOWN_SINCE_ISSUE_26.has(file) || SHOWN_SINCE_ISSUE_25.has(file) ? 'deliver' : entry.expect;
    if (want === 'deliver') expect(result, JSON.stringify(result)).toMatchObject({ kind: 'message' });
    else if (want === 'ignore') expect(result, JSON.stringify(result)).toMatchObject({ kind: 'ignored' });
    else if (want === 'either') expect(['message', 'ignored']).toContain(result.kind);
    if (result.kind === 'message') {
      // Shown messages render without images, and link only to http(s).
      const html = renderMarkdown(result.markdown);
      expect(html).not.toContain('<img');
      for (const [, href] of html.matchAll(/<a href="([^"]*)"/g)) expect(href).toMatch(/^https?:\/\//);
    }
  });

  it('keeps the list of newly shown entries in step with the manifest', () => {
    const byFile = new Map((MANIFEST as Entry[]).map((e) => [e.file, e]));
    for (const file of [...SHOWN_SINCE_ISSUE_26, ...SHOWN_SINCE_ISSUE_25]) expect(byFile.get(file)?.expect, file).toBe('ignore');
  });
});
