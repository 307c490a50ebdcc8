import { describe, expect, it } from 'vitest';
import { translate } from '../../../src/chat/integrations';
import { JIRA_CASES, jiraIssue } from './fixtures';
import { nativePost } from './support';

describe('Jira payloads', () => {
  it.each(Object.entries(JIRA_CASES))('turns %s into its message and metadata', (_, c) => {
    expect(translate('jira', nativePost(c.body, c.headers))).toEqual({ kind: 'message', markdown: c.markdown, metadata: c.metadata });
  });

  it('takes X-Atlassian-Webhook-Identifier (the same on every retry) as the delivery key', () => {
    const c = JIRA_CASES['issue created']!;
    expect(translate('jira', nativePost(c.body, { 'X-Atlassian-Webhook-Identifier': '12345-67890' }))).toEqual({
      kind: 'message',
      markdown: c.markdown,
      metadata: c.metadata,
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
});
