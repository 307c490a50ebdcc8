import { describe, expect, it } from 'vitest';
import { codePointLength, isUuid } from '../../src/chat/limits';
import {
  AckCounter,
  decodeClientFrame,
  decodeServerFrame,
  encodeFrame,
  encodeMessageFrames,
  FRAME_BUDGET_CHARS,
  isChatMessage,
  MESSAGE_LEVELS,
  PROTOCOL,
  type ChatMessage,
  utf8Length,
} from '../../src/chat/protocol';

const message: ChatMessage = {
  id: '0f0e0d0c-0b0a-4909-8807-060504030201',
  roomId: '11111111-2222-4333-8444-555555555555',
  seq: 7,
  webhookId: '99999999-8888-4777-8666-555555555555',
  markdown: '**hi**',
  html: '<p><strong>hi</strong></p>',
  metadata: null,
  sender: { name: 'CI', iconUrl: '/assets/chat/icons/generic.svg' },
  level: 'info',
  createdAt: '2026-11-14T09:30:00.000Z',
};

describe('the wire protocol', () => {
  it('encodes frames as the JSON the README documents', () => {
    expect(JSON.parse(encodeFrame({ type: 'messages', messages: [message] }))).toEqual({ type: 'messages', messages: [message] });
    expect(encodeFrame({ type: 'ready', lastSeq: 12 })).toBe('{"type":"ready","lastSeq":12}');
  });

  it('decodes what it encodes and nothing malformed', () => {
    const two = [message, { ...message, seq: 8 }];
    expect(decodeServerFrame(encodeFrame({ type: 'messages', messages: two }))).toEqual({ type: 'messages', messages: two });
    expect(decodeServerFrame('{"type":"ready","lastSeq":0}')).toEqual({ type: 'ready', lastSeq: 0 });
    const bad = [
      '',
      'not json',
      '[]',
      'null',
      PROTOCOL.pong,
      '{"type":"ready","lastSeq":"1"}',
      JSON.stringify({ type: 'messages', messages: [{ ...message, seq: 1.5 }] }),
      JSON.stringify({ type: 'messages', messages: [message, { ...message, html: 3 }] }),
      JSON.stringify({ type: 'messages', messages: [] }),
      JSON.stringify({ type: 'messages', messages: message }),
      // The version 1 single-message frame is no longer sent.
      JSON.stringify({ type: 'message', message }),
    ];
    for (const frame of bad) expect(decodeServerFrame(frame)).toBeUndefined();
  });

  it('carries changes as update frames (version 4): whole messages with editedAt, deletedAt and personId', () => {
    expect(PROTOCOL.version).toBe(4);
    const edited = { ...message, editedAt: '2026-11-14T09:31:00.000Z', deletedAt: null, personId: null };
    const deleted = { ...message, seq: 8, markdown: '', html: '', deletedAt: '2026-11-14T09:32:00.000Z', editedAt: null, personId: null };
    const frames = encodeMessageFrames([edited, deleted], 'update');
    expect(frames).toHaveLength(1);
    expect(decodeServerFrame(frames[0]!)).toEqual({ type: 'update', messages: [edited, deleted] });
    const person = { ...message, webhookId: '', personId: 'tok-1', editedAt: null, deletedAt: null };
    expect(isChatMessage(person)).toBe(true);
    for (const bad of [
      JSON.stringify({ type: 'update', messages: [] }),
      JSON.stringify({ type: 'update', messages: [{ ...message, editedAt: 5 }] }),
      JSON.stringify({ type: 'update', messages: [{ ...message, deletedAt: true }] }),
      JSON.stringify({ type: 'update', message }),
    ]) {
      expect(decodeServerFrame(bad)).toBeUndefined();
    }
  });

  it('tells a well-formed message (as frames and the history carry them) from anything else', () => {
    expect(isChatMessage(message)).toBe(true);
    expect(isChatMessage({ ...message, metadata: 'deploys' })).toBe(true);
    expect(isChatMessage({ ...message, sender: { name: 'Prod alerts', iconUrl: null } })).toBe(true);
    for (const level of MESSAGE_LEVELS) expect(isChatMessage({ ...message, level })).toBe(true);
    const { sender: _sender, ...withoutSender } = message;
    const { level: _level, ...withoutLevel } = message;
    for (const bad of [
      null,
      'message',
      [],
      { ...message, seq: '7' },
      { ...message, metadata: undefined },
      { ...message, createdAt: 0 },
      withoutSender,
      withoutLevel,
      { ...message, sender: 'CI' },
      { ...message, sender: { name: 'CI' } },
      { ...message, sender: { name: 3, iconUrl: null } },
      { ...message, level: 'error' },
      { ...message, level: null },
    ]) {
      expect(isChatMessage(bad)).toBe(false);
    }
  });

  it('packs messages into as few frames as the budget allows, in order, each message once', () => {
    const small = Array.from({ length: 150 }, (_, i) => ({ ...message, seq: i + 1 }));
    expect(encodeMessageFrames(small).map((f) => JSON.parse(f))).toEqual([{ type: 'messages', messages: small }]);

    // 25,000-character messages: two fit under a 65,536 budget, a third does not.
    expect(FRAME_BUDGET_CHARS).toBe(65_536);
    const big = Array.from({ length: 5 }, (_, i) => ({ ...message, seq: i + 1, markdown: 'x'.repeat(12_500), html: 'y'.repeat(12_500) }));
    const frames = encodeMessageFrames(big);
    expect(frames.map((f) => (JSON.parse(f) as { messages: { seq: number }[] }).messages.map((m) => m.seq))).toEqual([[1, 2], [3, 4], [5]]);

    // Larger than the whole budget: alone in its frame, never dropped.
    const huge = [
      { ...message, seq: 1 },
      { ...message, seq: 2, html: 'z'.repeat(FRAME_BUDGET_CHARS + 1) },
      { ...message, seq: 3 },
    ];
    expect(encodeMessageFrames(huge).map((f) => (JSON.parse(f) as { messages: { seq: number }[] }).messages.map((m) => m.seq))).toEqual([
      [1],
      [2],
      [3],
    ]);
    expect(encodeMessageFrames([])).toEqual([]);
  });

  it('counts UTF-8 bytes as the runtime sends them', () => {
    for (const text of ['', 'ascii', 'é', '€', '😀', 'a😀é€z', '\ud800', 'x\udc00y', JSON.stringify({ s: '\ud83d' })]) {
      expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length);
    }
  });

  it('acks the bytes received once ackEveryBytes arrived since the last ack, pongs not counted', () => {
    const acks = new AckCounter();
    const frame = 'x'.repeat(10_000);
    const sent: (string | undefined)[] = [];
    for (let i = 0; i < 7; i++) sent.push(acks.frame(frame), acks.frame(PROTOCOL.pong));
    // 32,768 bytes: due after the 4th frame (40,000), then after the 8th (80,000 > 40,000 + 32,768).
    expect(sent.filter((a) => a !== undefined)).toEqual(['{"type":"ack","bytes":40000}']);
    expect(acks.frame('é'.repeat(13_000))).toBe('{"type":"ack","bytes":96000}');
    expect(decodeClientFrame('{"type":"ack","bytes":96000}')).toEqual({ type: 'ack', bytes: 96_000 });
    for (const bad of [
      PROTOCOL.ping,
      '{"type":"ack","bytes":-1}',
      '{"type":"ack","bytes":1.5}',
      '{"type":"ack"}',
      'ack',
      `{"type":"ack","bytes":1,"x":"${'y'.repeat(64)}"}`,
    ]) {
      expect(decodeClientFrame(bad)).toBeUndefined();
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
