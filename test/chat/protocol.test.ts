import { describe, expect, it } from 'vitest';
import { codePointLength, isUuid } from '../../src/chat/limits';
import { decodeServerFrame, encodeFrame, PROTOCOL } from '../../src/chat/protocol';

const message = {
  id: '0f0e0d0c-0b0a-4909-8807-060504030201',
  roomId: '11111111-2222-4333-8444-555555555555',
  seq: 7,
  webhookId: '99999999-8888-4777-8666-555555555555',
  markdown: '**hi**',
  html: '<p><strong>hi</strong></p>',
  metadata: null,
  createdAt: '2026-11-14T09:30:00.000Z',
};

describe('the wire protocol', () => {
  it('encodes frames as the JSON the issue specifies', () => {
    expect(JSON.parse(encodeFrame({ type: 'message', message }))).toEqual({ type: 'message', message });
    expect(encodeFrame({ type: 'ready', lastSeq: 12 })).toBe('{"type":"ready","lastSeq":12}');
  });

  it('decodes what it encodes and nothing malformed', () => {
    expect(decodeServerFrame(encodeFrame({ type: 'message', message }))).toEqual({ type: 'message', message });
    expect(decodeServerFrame('{"type":"ready","lastSeq":0}')).toEqual({ type: 'ready', lastSeq: 0 });
    for (const bad of ['', 'not json', '[]', 'null', PROTOCOL.pong, '{"type":"ready","lastSeq":"1"}', JSON.stringify({ type: 'message', message: { ...message, seq: 1.5 } })]) {
      expect(decodeServerFrame(bad)).toBeUndefined();
    }
  });

  it('has a heartbeat pair that is itself JSON', () => {
    expect(JSON.parse(PROTOCOL.ping)).toEqual({ type: 'ping' });
    expect(JSON.parse(PROTOCOL.pong)).toEqual({ type: 'pong' });
  });
});

describe('limits helpers', () => {
  it('counts characters as code points', () => {
    expect(codePointLength('abc')).toBe(3);
    expect(codePointLength('😀😀')).toBe(2);
    expect(codePointLength('é')).toBe(1);
    expect(codePointLength('\ud800x')).toBe(2); // a lone surrogate is one character
  });

  it('accepts lower-case UUIDs only', () => {
    expect(isUuid(crypto.randomUUID())).toBe(true);
    expect(isUuid(crypto.randomUUID().toUpperCase())).toBe(false);
    expect(isUuid('not-a-uuid')).toBe(false);
  });
});
