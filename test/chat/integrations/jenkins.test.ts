import { describe, expect, it } from 'vitest';
import { translate } from '../../../src/chat/integrations';
import { JENKINS, jenkinsNotification, shown } from './fixtures';
import { nativePost } from './support';

describe('Jenkins Notification plugin payloads', () => {
  it.each(Object.entries(JENKINS))('turns %s into its message and metadata', (_, c) => {
    expect(translate('jenkins', nativePost(c.body, c.headers))).toEqual(shown(c));
  });

  it('recognises QUEUED (and any other phase) and does not show it', () => {
    expect(translate('jenkins', nativePost(jenkinsNotification({ phase: 'QUEUED', status: undefined })))).toEqual({
      kind: 'ignored',
      reason: 'Jenkins QUEUED notifications are not shown (only STARTED, COMPLETED and FINALIZED).',
    });
  });

  it('answers anything but the plugin\u2019s JSON as unrecognised, saying what it expects', () => {
    expect(translate('jenkins', nativePost({ text: 'build passed' }))).toEqual({
      kind: 'unrecognised',
      expected: expect.stringContaining('Notification plugin'),
      fieldName: 'body',
    });
    expect(translate('jenkins', nativePost({ name: 'asgard', build: { number: 'x', phase: 'COMPLETED' } }))).toEqual({
      kind: 'unrecognised',
      expected: 'Not a Jenkins Notification plugin payload: build.number: Invalid input: expected number, received string.',
      fieldName: 'body',
    });
  });
});
