import { describe, expect, it } from 'vitest';
import type { WebhookMapping } from '../../src/db/schema';
import { routeMessage } from '../../src/chat/routing';

const mapping = (field: WebhookMapping['field'], match: WebhookMapping['match'], value: string, roomIds: string[]): WebhookMapping => ({
  field,
  match,
  value,
  roomIds,
});

describe('routeMessage', () => {
  it('sends to the default room when there are no mappings', () => {
    expect(routeMessage({ roomId: 'home', mappings: [] }, 'anything', null)).toEqual(['home']);
  });

  it('matches exact, contains and prefix, case-sensitively', () => {
    const config = {
      roomId: 'home',
      mappings: [
        mapping('message', 'exact', 'Build OK', ['a']),
        mapping('message', 'contains', 'fail', ['b']),
        mapping('message', 'prefix', 'JIRA-', ['c']),
      ],
    };
    expect(routeMessage(config, 'Build OK', null)).toEqual(['a']);
    expect(routeMessage(config, 'Build OK!', null)).toEqual(['home']);
    expect(routeMessage(config, 'build ok', null)).toEqual(['home']);
    expect(routeMessage(config, 'tests failed', null)).toEqual(['b']);
    expect(routeMessage(config, 'tests FAILED', null)).toEqual(['home']);
    expect(routeMessage(config, 'JIRA-12 done', null)).toEqual(['c']);
    expect(routeMessage(config, 'see JIRA-12', null)).toEqual(['home']);
  });

  it('matches metadata only when there is metadata', () => {
    const config = { roomId: 'home', mappings: [mapping('metadata', 'contains', 'prod', ['ops'])] };
    expect(routeMessage(config, 'prod is down', null)).toEqual(['home']);
    expect(routeMessage(config, 'down', 'env=prod')).toEqual(['ops']);
  });

  it('unites the rooms of every matching mapping, each once, in mapping order', () => {
    const config = {
      roomId: 'home',
      mappings: [
        mapping('message', 'contains', 'x', ['r1', 'r2']),
        mapping('metadata', 'exact', 'm', ['r2', 'r3', 'r1']),
        mapping('message', 'contains', 'zzz', ['r9']),
      ],
    };
    expect(routeMessage(config, 'x', 'm')).toEqual(['r1', 'r2', 'r3']);
  });
});
