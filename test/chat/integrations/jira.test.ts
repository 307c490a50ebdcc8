import { describe, expect, it } from 'vitest';
import { translate } from '../../../src/chat/integrations';
import { renderMarkdown } from '../../../src/chat/markdown';
import { JIRA_CASES, jiraIssue, shown } from './fixtures';
import { nativePost } from './support';
import LABELS from '../../fixtures/shared/native-payloads/jira/mattermost-mattermost-plugin-jira__webhook-issue-updated-labels.json';
import SERVER_COMMENT from '../../fixtures/shared/native-payloads/jira/mattermost-mattermost-plugin-jira__webhook-server-comment-created.json';

describe('Jira payloads', () => {
  it.each(Object.entries(JIRA_CASES))('turns %s into its message and metadata', (_, c) => {
    expect(translate('jira', nativePost(c.body, c.headers))).toEqual(shown(c));
  });

  it('takes X-Atlassian-Webhook-Identifier (the same on every retry) as the delivery key', () => {
    const c = JIRA_CASES['issue created']!;
    expect(translate('jira', nativePost(c.body, { 'X-Atlassian-Webhook-Identifier': '12345-67890' }))).toEqual({
      kind: 'message',
      markdown: c.markdown,
      metadata: c.metadata,
      level: 'warning',
      deliveryKey: { id: '12345-67890' },
    });
  });

  it('shows a Jira Server comment reported as an issue update', () => {
    const body = {
      webhookEvent: 'jira:issue_updated',
      issue_event_type_name: 'issue_commented',
      user: { displayName: 'Mia Krystof' },
      issue: jiraIssue(),
      comment: { body: 'Seen on staging.', author: { displayName: 'Mia Krystof' } },
    };
    expect(translate('jira', nativePost(body))).toEqual({
      kind: 'message',
      markdown:
        'Mia Krystof commented on [SUP-42: Login page shows a blank screen](https://example.atlassian.net/browse/SUP-42):\n\n> Seen on staging.',
      metadata: 'jira:comment_created project=SUP issue=SUP-42 status=To%20Do',
    });
  });

  it('recognises the events it does not show, and an update without changes', () => {
    expect(translate('jira', nativePost({ webhookEvent: 'sprint_started', sprint: { id: 1 } }))).toEqual({
      kind: 'ignored',
      reason: 'Jira event "sprint_started" is not shown.',
    });
    expect(translate('jira', nativePost({ webhookEvent: 'jira:issue_updated', issue: jiraIssue(), changelog: { items: [] } }))).toEqual({
      kind: 'ignored',
      reason: 'A Jira issue update without changes is not shown.',
    });
  });

  it('links the issue only when its self URL is http(s)', () => {
    const body = {
      webhookEvent: 'jira:issue_deleted',
      user: { displayName: 'A' },
      issue: { key: 'SUP-1', self: 'javascript:alert(1)//', fields: { summary: 'x' } },
    };
    const created = {
      webhookEvent: 'jira:issue_created',
      user: { displayName: 'A' },
      issue: { key: 'SUP-1', self: 'javascript:alert(1)//', fields: { summary: 'x' } },
    };
    expect(translate('jira', nativePost(body))).toMatchObject({ markdown: 'A deleted SUP-1: x.' });
    expect(translate('jira', nativePost(created))).toMatchObject({ markdown: 'A created SUP-1: x.' });
  });

  it('answers a body without webhookEvent, or an issue event without an issue, as unrecognised', () => {
    expect(translate('jira', nativePost({ issue: jiraIssue() }))).toEqual({
      kind: 'unrecognised',
      expected: expect.stringContaining('"webhookEvent"'),
      fieldName: 'webhookEvent',
    });
    expect(translate('jira', nativePost({ webhookEvent: 'jira:issue_created' }))).toEqual({
      kind: 'unrecognised',
      expected: 'Not a Jira jira:issue_created payload: issue is missing.',
      fieldName: 'issue',
    });
  });

  it('shows from \u2192 to for every changed field, not only status, assignee and priority (a real labels change)', () => {
    const [item] = LABELS.changelog.items;
    const i = LABELS.issue;
    const browse = `${new URL(i.self).origin}/browse/${i.key}`;
    expect(translate('jira', nativePost(LABELS))).toEqual({
      kind: 'message',
      markdown: `${LABELS.user.displayName} updated [${i.key}: ${i.fields.summary}](${browse}):\n- **${item!.field}**: ${item!.fromString} \u2192 ${item!.toString}`,
      metadata: `jira:issue_updated project=${i.fields.project.key} issue=${i.key} status=${i.fields.status.name.replace(' ', '%20')}`,
      // Its priority is High.
      level: 'warning',
    });
  });

  it('lists known fields first, says "None" for an empty side, cuts long values and lists at most ten changes', () => {
    const items = [
      { field: 'description', fromString: null, toString: `${'long '.repeat(40)}end` },
      { field: 'status', fromString: 'To Do', toString: 'Done' },
      ...Array.from({ length: 10 }, (_, k) => ({ field: `customfield_${k}`, fromString: String(k), toString: '' })),
    ];
    const result = translate(
      'jira',
      nativePost({ webhookEvent: 'jira:issue_updated', user: { displayName: 'A' }, issue: jiraIssue(), changelog: { items } }),
    );
    const lines = (result as { markdown: string }).markdown.split('\n');
    expect(lines[1]).toBe('- **Status**: To Do \u2192 Done');
    expect(lines[2]).toMatch(/^- \*\*description\*\*: None \u2192 (long ){19}long\u2026$/);
    expect(lines[3]).toBe('- **customfield\\_0**: 0 \u2192 None');
    expect(lines).toHaveLength(12);
    expect(lines[11]).toBe('- \u2026 and 2 more changes');
  });

  it('keeps hostile changed values and field names as text', () => {
    const evil = '**x** [a](javascript:alert(1)) <img src=x onerror=alert(1)> ![t](https://evil.example/t.png)';
    const body = {
      webhookEvent: 'jira:issue_updated',
      user: { displayName: 'A' },
      issue: jiraIssue(),
      changelog: { items: [{ field: evil, fromString: evil, toString: `# ${evil}` }] },
    };
    const html = renderMarkdown((translate('jira', nativePost(body)) as { markdown: string }).markdown);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<strong><strong>');
    expect(html.match(/<strong>/g)).toHaveLength(1);
    expect([...html.matchAll(/<a href="([^"]*)"[^>]*>([^<]*)<\/a>/g)].map((m) => m[1])).toEqual([
      'https://example.atlassian.net/browse/SUP-42',
      // The URL written in the two values, shown as itself (the field name is cut before it).
      'https://evil.example/t.png',
      'https://evil.example/t.png',
    ]);
  });

  it('shows an old Jira Server comment_created without issue, linking the issue its comment URL names', () => {
    const c = SERVER_COMMENT.comment;
    expect(SERVER_COMMENT).not.toHaveProperty('issue');
    const [, base, issueId] = /^(.*)\/rest\/api\/2\/issue\/(\d+)\/comment\//.exec(c.self)!;
    expect(translate('jira', nativePost(SERVER_COMMENT))).toEqual({
      kind: 'message',
      markdown: `${c.author.displayName} commented on [issue ${issueId}](${base}/secure/ViewIssue.jspa?id=${issueId}):\n\n> ${c.body}`,
      metadata: `jira:comment_created issue=${issueId}`,
    });
    // With a key in the URL, the issue is linked by key; without a usable URL, nothing is linked.
    const byKey = { ...SERVER_COMMENT, comment: { ...c, self: 'https://jira.example.com/jira/rest/api/2/issue/OPS-7/comment/1' } };
    expect(translate('jira', nativePost(byKey))).toMatchObject({
      markdown: `${c.author.displayName} commented on [OPS-7](https://jira.example.com/jira/browse/OPS-7):\n\n> ${c.body}`,
      metadata: 'jira:comment_created project=OPS issue=OPS-7',
    });
    const hostile = {
      webhookEvent: 'comment_updated',
      comment: {
        self: 'javascript:alert(1)//rest/api/2/issue/1/comment/2',
        body: '[x](javascript:alert(1))',
        updateAuthor: { displayName: '<b>m</b>' },
      },
    };
    expect(translate('jira', nativePost(hostile))).toEqual({
      kind: 'message',
      markdown: '\\<b>m\\</b> edited a comment on an issue:\n\n> \\[x\\](javascript:alert(1))',
      metadata: 'jira:comment_updated',
    });
    // A comment event with neither issue nor comment is still refused.
    expect(translate('jira', nativePost({ webhookEvent: 'comment_created' }))).toMatchObject({ kind: 'unrecognised', fieldName: 'issue' });
  });
});
