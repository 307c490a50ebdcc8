import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NATIVE_KINDS, translate, type NativeKind, type Translation } from '../../../src/chat/integrations';
import { CHAT_LIMITS, codePointLength } from '../../../src/chat/limits';
import { isAllowedHtml, renderMarkdown } from '../../../src/chat/markdown';
import { BITBUCKET, GITHUB, JENKINS, JIRA_CASES, SALESFORCE_FLOW, SALESFORCE_OUTBOUND, type Case } from './fixtures';
import { nativePost } from './support';

const CASES: Array<[NativeKind, Case]> = [
  ...Object.values(GITHUB).map((c) => ['github', c] as [NativeKind, Case]),
  ...Object.values(BITBUCKET).map((c) => ['bitbucket', c] as [NativeKind, Case]),
  ...Object.values(JIRA_CASES).map((c) => ['jira', c] as [NativeKind, Case]),
  ...Object.values(JENKINS).map((c) => ['jenkins', c] as [NativeKind, Case]),
  ['salesforce', SALESFORCE_FLOW],
];

/** Every string in `value` replaced by `replace(original)`; outermost non-empty arrays grown to `copies` entries. */
function mapStrings(value: unknown, replace: (s: string) => string, copies = 1): unknown {
  if (typeof value === 'string') return replace(value);
  if (Array.isArray(value)) {
    const items = value.length === 0 ? [] : Array.from({ length: Math.max(value.length, copies) }, (_, i) => value[i % value.length]);
    return items.map((v) => mapStrings(v, replace, 1));
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, replace, copies)]));
  }
  return value;
}

function expectPostable(result: Translation): void {
  expect(['message', 'ignored', 'unrecognised']).toContain(result.kind);
  if (result.kind !== 'message') return;
  expect(codePointLength(result.markdown)).toBeLessThanOrEqual(CHAT_LIMITS.messageChars);
  expect(codePointLength(result.metadata)).toBeLessThanOrEqual(CHAT_LIMITS.metadataChars);
  expect(result.markdown.trim()).not.toBe('');
  const html = renderMarkdown(result.markdown);
  expect(isAllowedHtml(html)).toBe(true);
  expect(html).not.toContain('<img');
  for (const [, href = ''] of html.matchAll(/<a href="([^"]*)"/g)) expect(href).toMatch(/^https?:\/\//);
}

const HOSTILE_PIECES = [
  '](https://evil.example)',
  '![i](https://evil.example/i.png)',
  '<script>',
  '**',
  '_',
  '`',
  '\n# h\n',
  '&amp;',
  'https://x.example/a_(b)',
  '\u202e',
  '😀',
  'x',
];

describe('translated messages stay postable whatever the payload holds', () => {
  it('keeps every message within 40,000 characters and its metadata within 4,000 when every string is huge', () => {
    const huge = (s: string) => (s.startsWith('http') ? `${s}?${'q'.repeat(3_000)}` : HOSTILE_PIECES.join('').repeat(60));
    for (const [kind, c] of CASES) {
      const result = translate(kind, nativePost(mapStrings(c.body, huge, 200), c.headers));
      expectPostable(result);
    }
    for (const c of Object.values(SALESFORCE_OUTBOUND)) {
      const notification = c.xml.slice(c.xml.indexOf('   <Notification>'), c.xml.lastIndexOf('</Notification>') + 16);
      const value = `https://x.example/${'_*['.repeat(1_000)}`;
      const many = Array.from({ length: 100 }, (_, i) =>
        notification.replace(/04l0000000000(\d\d)AAA/, `04l00000000${String(i).padStart(4, '0')}AAA`),
      ).join('');
      const fields = Array.from({ length: 40 }, (_, i) => `<sf:F${i}>${value}</sf:F${i}>`).join('');
      const xml = c.xml.replace(notification, many.replaceAll('<sf:Amount>', `${fields}<sf:Amount>`));
      expectPostable(translate('salesforce', nativePost(xml, {}, 'text/xml')));
    }
  });

  it('never throws and never makes an unsafe message, for any string in any field of a real payload', () => {
    const text = fc
      .array(fc.oneof(fc.constantFrom(...HOSTILE_PIECES), fc.string({ maxLength: 20 })), { maxLength: 8 })
      .map((a) => a.join(''));
    fc.assert(
      fc.property(fc.constantFrom(...CASES), fc.infiniteStream(text), ([kind, c], texts) => {
        const it = texts[Symbol.iterator]();
        expectPostable(
          translate(
            kind,
            nativePost(
              mapStrings(c.body, () => it.next().value as string),
              c.headers,
            ),
          ),
        );
      }),
      { numRuns: 1_500 },
    );
  });

  it('never throws for arbitrary JSON under any event header', () => {
    const headers = fc.record({
      'X-GitHub-Event': fc.constantFrom(
        'ping',
        'push',
        'pull_request',
        'pull_request_review',
        'issues',
        'issue_comment',
        'release',
        'workflow_run',
        'check_suite',
        'create',
        'delete',
        'star',
      ),
      'X-Event-Key': fc.constantFrom(
        'repo:push',
        'pullrequest:created',
        'pullrequest:fulfilled',
        'pullrequest:rejected',
        'pullrequest:comment_created',
      ),
    });
    const body = fc.oneof(
      fc.jsonValue(),
      fc.record({
        webhookEvent: fc.constantFrom(
          'jira:issue_created',
          'jira:issue_updated',
          'jira:issue_deleted',
          'comment_created',
          'comment_updated',
        ),
        issue: fc.jsonValue(),
        changelog: fc.jsonValue(),
        comment: fc.jsonValue(),
      }),
      fc.record({ name: fc.jsonValue(), build: fc.jsonValue() }),
      fc.record({ object: fc.string(), action: fc.jsonValue(), record: fc.jsonValue() }),
    );
    fc.assert(
      fc.property(fc.constantFrom(...NATIVE_KINDS), body, headers, (kind, json, h) => {
        expectPostable(translate(kind, nativePost(JSON.stringify(json), h)));
      }),
      { numRuns: 3_000 },
    );
  });
});
