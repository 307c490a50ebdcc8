import { describe, expect, it } from 'vitest';
import { translate } from '../../../src/chat/integrations';
import { BITBUCKET, bbPullRequest, bbRepository, shown } from './fixtures';
import { nativePost } from './support';

describe('Bitbucket Cloud payloads', () => {
  it.each(Object.entries(BITBUCKET))('turns %s into its message and metadata', (_, c) => {
    expect(translate('bitbucket', nativePost(c.body, c.headers))).toEqual(shown(c));
  });

  it('recognises the events it does not show and says so', () => {
    const body = {
      actor: { display_name: 'Emma' },
      pullrequest: bbPullRequest(),
      repository: bbRepository,
      approval: { date: '2024-05-15' },
    };
    expect(translate('bitbucket', nativePost(body, { 'X-Event-Key': 'pullrequest:approved' }))).toEqual({
      kind: 'ignored',
      reason: 'Bitbucket event "pullrequest:approved" is not shown.',
    });
    expect(translate('bitbucket', nativePost({ repository: bbRepository }, { 'X-Event-Key': 'repo:fork' }))).toEqual({
      kind: 'ignored',
      reason: 'Bitbucket event "repo:fork" is not shown.',
    });
  });

  it('answers a delivery without X-Event-Key, or with a payload that does not fit, as unrecognised', () => {
    expect(translate('bitbucket', nativePost(BITBUCKET['pull request created']!.body))).toEqual({
      kind: 'unrecognised',
      expected: expect.stringContaining('X-Event-Key header'),
      fieldName: 'X-Event-Key',
    });
    expect(translate('bitbucket', nativePost({ push: { changes: [] }, repository: bbRepository }, { 'X-Event-Key': 'repo:push' }))).toEqual(
      {
        kind: 'unrecognised',
        expected: expect.stringMatching(/^Not a Bitbucket webhook payload \(repo:push\): push\.changes: /),
        fieldName: 'body',
      },
    );
  });
});
