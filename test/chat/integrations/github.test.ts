import { describe, expect, it } from 'vitest';
import { translate } from '../../../src/chat/integrations';
import { renderMarkdown } from '../../../src/chat/markdown';
import { GH_REPO_URL, GITHUB, GITHUB_IGNORED, ghCommit, ghPullRequest, ghPush, ghRepository, ghSender } from './fixtures';
import { nativePost } from './support';

describe('GitHub payloads', () => {
  it.each(Object.entries(GITHUB))('turns %s into its message and metadata', (_, c) => {
    expect(translate('github', nativePost(c.body, c.headers))).toEqual({ kind: 'message', markdown: c.markdown, metadata: c.metadata });
  });

  it.each(Object.entries(GITHUB_IGNORED))('recognises %s and says why it is not shown', (_, c) => {
    expect(translate('github', nativePost(c.body, c.headers))).toEqual({ kind: 'ignored', reason: c.reason });
  });

  it('reads the JSON in the payload field of a form-encoded delivery', () => {
    const c = GITHUB['push of two commits to a branch']!;
    const form = new URLSearchParams({ payload: JSON.stringify(c.body) }).toString();
    expect(translate('github', nativePost(form, c.headers, 'application/x-www-form-urlencoded'))).toEqual({
      kind: 'message',
      markdown: c.markdown,
      metadata: c.metadata,
    });
  });

  it('lists ten commits of a large push and counts the rest', () => {
    const commits = Array.from({ length: 12 }, (_, i) => ghCommit(`${String(i).padStart(2, '0')}${'a'.repeat(38)}`, `Commit ${i}`));
    const result = translate('github', nativePost(ghPush({ commits, compare: null }), { 'X-GitHub-Event': 'push' }));
    expect(result).toMatchObject({ kind: 'message' });
    const lines = (result as { markdown: string }).markdown.split('\n');
    expect(lines[0]).toBe(`Codertocat pushed 12 commits to \`master\` in [Codertocat/Hello-World](${GH_REPO_URL}):`);
    expect(lines).toHaveLength(12);
    expect(lines[10]).toBe(`- [\`09aaaaa\`](${GH_REPO_URL}/commit/09${'a'.repeat(38)}) Commit 9`);
    expect(lines[11]).toBe('- \u2026 and 2 more commits');
  });

  it('keeps a hostile title, branch and body from forging links, images or formatting', () => {
    const body = {
      action: 'opened',
      number: 3,
      pull_request: ghPullRequest({
        number: 3,
        title: 'Fix](https://evil.example) ![x](https://evil.example/x.png) <img src=x onerror=alert(1)> **bold**',
        head: { ref: 'a`b` [c](javascript:alert(1))' },
        body: '[click me](javascript:alert(1))\n<script>alert(1)</script>\n![tracker](https://evil.example/t.png)',
        html_url: 'javascript:alert(1)',
      }),
      repository: ghRepository(),
      sender: { ...ghSender, login: '<b>mallory</b>' },
    };
    const result = translate('github', nativePost(body, { 'X-GitHub-Event': 'pull_request' }));
    expect(result).toEqual({
      kind: 'message',
      markdown:
        '\\<b>mallory\\</b> opened pull request #3 Fix\\](https\\://evil.example) !\\[x\\](https\\://evil.example/x.png) \\<img src=x onerror=alert(1)> \\*\\*bold\\*\\* ' +
        `in [Codertocat/Hello-World](${GH_REPO_URL}) (\`\`a\`b\` [c](javascript:alert(1))\`\` \u2192 \`master\`):\n\n` +
        '> \\[click me\\](javascript:alert(1))\n> \\<script>alert(1)\\</script>\n' +
        '> !\\[tracker\\]([https\\://evil.example/t.png](https://evil.example/t.png))',
      metadata: 'github:pull_request repo=Codertocat/Hello-World action=opened pr=3 branch=master',
    });
    const html = renderMarkdown((result as { markdown: string }).markdown);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<strong>');
    // The only links: the repository, and a URL written in the body, shown as itself.
    expect([...html.matchAll(/<a href="([^"]*)"[^>]*>([^<]*)<\/a>/g)].map((m) => [m[1], m[2]])).toEqual([
      [GH_REPO_URL, 'Codertocat/Hello-World'],
      ['https://evil.example/t.png', 'https://evil.example/t.png'],
    ]);
  });

  it('answers a delivery without X-GitHub-Event as unrecognised, naming the header', () => {
    expect(translate('github', nativePost(GITHUB['push of two commits to a branch']!.body))).toEqual({
      kind: 'unrecognised',
      expected: expect.stringContaining('X-GitHub-Event header'),
      fieldName: 'X-GitHub-Event',
    });
  });

  it('answers a payload that does not fit its event as unrecognised, naming the field', () => {
    expect(translate('github', nativePost({ ref: 'refs/heads/main' }, { 'X-GitHub-Event': 'push' }))).toEqual({
      kind: 'unrecognised',
      expected: 'Not a GitHub webhook payload (push): repository: Invalid input: expected object, received undefined.',
      fieldName: 'body',
    });
    expect(translate('github', nativePost([1, 2], { 'X-GitHub-Event': 'issues' }))).toMatchObject({ kind: 'unrecognised' });
    expect(
      translate('github', nativePost('payload=%7Bnot-json', { 'X-GitHub-Event': 'push' }, 'application/x-www-form-urlencoded')),
    ).toEqual({
      kind: 'unrecognised',
      expected: 'The "payload" field of a GitHub delivery must be JSON.',
      fieldName: 'payload',
    });
    expect(translate('github', nativePost('other=1', { 'X-GitHub-Event': 'push' }, 'application/x-www-form-urlencoded'))).toMatchObject({
      kind: 'unrecognised',
      fieldName: 'payload',
    });
  });
});
