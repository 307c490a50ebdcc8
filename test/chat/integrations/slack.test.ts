/// <reference types="vite/client" />
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { translate } from '../../../src/chat/integrations';
import { convert } from '../../../src/chat/integrations/mrkdwn';
import { renderMarkdown } from '../../../src/chat/markdown';
import { expectError, send, type Sent } from '../../helpers';
import { createRoom, history, type PostTarget, roomWithWebhook, webhookPath } from '../helpers';
import { hostileText, nativePost } from './support';

/**
 * The 51 Slack-format bodies other projects send or expect (test/fixtures/shared/slack-format, see its
 * README), read as the bytes they are: Vite inlines them at build time, as workerd has no file system.
 */
const FILES = import.meta.glob('../../fixtures/shared/slack-format/*.{json,form}', {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;
const FIXTURES = Object.entries(FILES)
  .filter(([path]) => !path.endsWith('/manifest.json'))
  .map(([path, text]) => ({ name: path.split('/').at(-1) ?? path, text, form: path.endsWith('.form') }));

/** The JSON a fixture carries (a form's `payload=`, encoded or raw). */
function bodyOf(f: { text: string; form: boolean }): any {
  if (!f.form) return JSON.parse(f.text);
  try {
    return JSON.parse(new URLSearchParams(f.text).get('payload') ?? '');
  } catch {
    return JSON.parse(f.text.replace(/^payload=/, ''));
  }
}

function slackPost(f: { text: string; form: boolean }) {
  return f.form ? nativePost(f.text, {}, 'application/x-www-form-urlencoded') : nativePost(f.text);
}

/**
 * What a reader must see of a payload, worked out from the payload alone: the visible strings of the
 * fields Slack shows (top-level `text` only without blocks, as Slack does; attachments' pretext,
 * author, title, text, fields and footer; section, header and context blocks), with Slack's
 * `<target|label>` read as its label, mentions and shortcodes left out, and entities decoded.
 */
function visibleStrings(body: any): string[] {
  const out: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === 'string') out.push(v);
    else if (v && typeof v === 'object' && typeof (v as any).text === 'string') out.push((v as any).text);
  };
  const blocks = (list: unknown) => {
    for (const b of Array.isArray(list) ? list : []) {
      if (!b || typeof b !== 'object') continue;
      if (b.type === 'section') {
        add(b.text);
        for (const f of Array.isArray(b.fields) ? b.fields : []) add(f);
      } else if (b.type === 'header') add(b.text);
      else if (b.type === 'context') for (const e of Array.isArray(b.elements) ? b.elements : []) if (e?.type !== 'image') add(e);
    }
  };
  const hasBlocks = Array.isArray(body.blocks) && body.blocks.length > 0;
  if (!hasBlocks) add(body.text);
  blocks(body.blocks);
  for (const a of Array.isArray(body.attachments) ? body.attachments : []) {
    if (!a || typeof a !== 'object') continue;
    for (const k of ['pretext', 'author_name', 'title', 'text', 'footer']) add(a[k]);
    for (const f of Array.isArray(a.fields) ? a.fields : []) {
      if (!f) continue;
      add(f.title);
      add(typeof f.value === 'number' ? String(f.value) : f.value);
    }
    blocks(a.blocks);
  }
  return out;
}

function words(strings: string[]): string[] {
  const text = strings
    .join(' ')
    .replace(/<[!@#][^>]*>/g, ' ')
    .replace(/<([^>|]*)\|([^>]*)>/g, ' $2 ')
    .replace(/:[a-z0-9_+-]+:/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
  return [...new Set(text.match(/[\p{L}\p{N}]{3,}/gu) ?? [])];
}

/** The markdown as a reader sees its characters: escapes and our bracket references undone. */
function readable(markdown: string): string {
  return markdown.replace(/\\(.)/g, '$1').replace(/&#91;/g, '[').replace(/&#93;/g, ']');
}

/** http(s) links the payload offers (title_link, image_url, <url|label>, button urls…), as URL parsing writes them. */
function offeredUrls(text: string): Set<string> {
  const urls = new Set<string>();
  for (const [u] of text.replace(/\\u0026/g, '&').matchAll(/(?:https?:\/\/|mailto:)[^\s"<>|\\`)\]]+/g)) {
    urls.add(u);
    try {
      urls.add(new URL(u).href);
    } catch {}
  }
  return urls;
}

function hrefs(html: string): string[] {
  return [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
}

describe('mrkdwn converter', () => {
  const cases: Array<[string, string]> = [
    ['*bold* _italic_ ~strike~ `code`', '**bold** *italic* ~~strike~~ `code`'],
    ['see <https://example.com/a?b=1&amp;c=2|the page> now', 'see [the page](https://example.com/a?b=1&c=2) now'],
    ['<https://example.com>', '[https\\://example.com](https://example.com/)'],
    ['<mailto:ops@example.com|mail ops>', '[mail ops](mailto:ops@example.com)'],
    ['<javascript:alert(1)|click>', 'click'],
    ['<!here> <!channel> <!everyone> <!here|here>', '@here @channel @everyone @here'],
    ['hi <@U123> in <#C123|general> and <#C999>', 'hi \\@U123 in #general and #C999'],
    ['<!subteam^S1|@oncall> <!subteam^S2>', '\\@oncall \\@S2'],
    ['<!date^1392734382^{date_short}|Feb 18, 2014>', 'Feb 18, 2014'],
    [':tada: :rocket: :unknown_thing:', '\u{1f389} \u{1f680} :unknown\\_thing:'],
    ['1 &lt; 2 &amp;&amp; 3 &gt; 2', '1 \\< 2 \\&\\& 3 > 2'],
    ['> quoted\nnot quoted', '> quoted\n\nnot quoted'],
    ['# not a heading\n- not a list\n1. not ordered', '\\# not a heading\n\\- not a list\n1\\. not ordered'],
    ['**std bold** and [std](https://example.com/x)', '**std bold** and [std](https://example.com/x)'],
    ['[evil](javascript:alert(1))', '\\[evil\\](javascript:alert(1))'],
    ['a | b\n---|---', 'a \\| b\n\\---\\|---'],
    ['snake_case_name and 2*3*4', 'snake\\_case\\_name and 2\\*3\\*4'],
    ['```\nline <b>\n```', '```\nline <b>\n```'],
    ['    indented', '\u00a0\u00a0\u00a0\u00a0indented'],
    // Slack reads <…> as a control sequence: not a URL, so its text.
    ['<img src=x onerror=alert(1)>', 'img src=x onerror=alert(1)'],
  ];
  it.each(cases)('converts %j', (input, expected) => {
    expect(convert(input)).toBe(expected);
  });

  it('renders converted text with only the links it made, and no HTML of its own', () => {
    const html = renderMarkdown(
      convert('*hi* <https://ok.example/|ok> <script>x</script> ![i](https://img.example/i.png) [x](javascript:y)'),
    );
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    // A standard link is a link (shown as one, never an image: the `!` is escaped).
    expect(hrefs(html)).toEqual(['https://ok.example/', 'https://img.example/i.png']);
  });
});

describe('Slack payloads (the translator)', () => {
  it('translates text, attachments and blocks with their metadata', () => {
    const t = translate(
      'slack',
      nativePost({
        text: 'ignored when blocks show',
        channel: '#ops',
        username: 'Alert Bot',
        icon_emoji: ':bell:',
        thread_ts: '1700000000.000100',
        blocks: [
          { type: 'header', text: { type: 'plain_text', text: 'Disk *full*' } },
          { type: 'section', text: { type: 'mrkdwn', text: '*db-1* at 98%' }, fields: [{ type: 'mrkdwn', text: '*Region*: eu' }] },
          { type: 'divider' },
          { type: 'context', elements: [{ type: 'mrkdwn', text: 'via _cron_' }] },
          { type: 'image', image_url: 'https://img.example/graph.png', alt_text: 'graph' },
          { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open' }, url: 'https://ops.example/1' }] },
          { type: 'input', element: { type: 'plain_text_input' }, label: { type: 'plain_text', text: 'skipped' } },
        ],
        attachments: [
          {
            color: 'danger',
            pretext: 'Before',
            author_name: 'Grafana',
            author_link: 'https://grafana.example/',
            title: 'CPU high',
            title_link: 'https://grafana.example/d/1',
            text: 'Value is *95*',
            fields: [{ title: 'Host', value: 'web-1', short: true }, null, { title: 'Note', value: 'line 1\nline 2' }],
            image_url: 'https://img.example/cpu.png',
            footer: 'Grafana v10',
            ts: 1700000000,
          },
        ],
      }),
    );
    expect(t).toEqual({
      kind: 'message',
      markdown: [
        '**Disk \\*full\\***',
        '**db-1** at 98%\n\n- **Region**: eu',
        '---',
        'via *cron*',
        '[graph](https://img.example/graph.png)',
        '[Open](https://ops.example/1)',
        'Before',
        '\u{1f534} [Grafana](https://grafana.example/)',
        '**[CPU high](https://grafana.example/d/1)**',
        'Value is **95**',
        '- **Host**: web-1\n- **Note**:\n  line 1\n  line 2',
        '[image](https://img.example/cpu.png)',
        '*Grafana v10 \u00b7 2023-11-14 22:13 UTC*',
      ].join('\n\n'),
      metadata: 'slack:message channel=#ops username=Alert%20Bot icon_emoji=:bell: thread_ts=1700000000.000100 level=danger',
      // The worst colour, danger.
      level: 'critical',
    });
  });

  it('uses an attachment\u2019s fallback only when it has nothing else to show', () => {
    expect(translate('slack', nativePost({ attachments: [{ fallback: 'Plain *summary*', color: '#36a64f' }] }))).toEqual({
      kind: 'message',
      markdown: '\u{1f7e2} Plain **summary**',
      metadata: 'slack:message level=good',
      level: 'success',
    });
  });

  it('acknowledges a Slack body whose every field is empty (nothing stored), and answers one with none of them as unrecognised', () => {
    for (const body of [{ text: null }, { text: '  ' }, { attachments: [null, { title: null }] }, { blocks: [{ type: 'divider' }] }]) {
      expect(translate('slack', nativePost(body))).toMatchObject({ kind: 'ignored' });
    }
    for (const body of [{}, { username: 'bot' }, [1], '"x"']) {
      expect(translate('slack', nativePost(body as object))).toEqual({
        kind: 'unrecognised',
        expected: expect.stringContaining('"text", "attachments"'),
        fieldName: typeof body === 'object' && !Array.isArray(body) ? 'text' : 'body',
      });
    }
    expect(translate('slack', nativePost('payload=%7Bnot', {}, 'application/x-www-form-urlencoded'))).toMatchObject({
      kind: 'unrecognised',
      fieldName: 'payload',
    });
  });

  it('shows hostile text in every field as text: no HTML, no image, no link but to the URLs given', () => {
    const hostile = hostileText(
      '](javascript:alert(1))',
      '![x](https://evil.example/i.png)',
      '<javascript:x|y>',
      '<https://evil.example|',
      'www.evil.example',
      '&lt;b&gt;',
      '\n> ',
      '\n- ',
      '\n```\n',
      '\n---\n',
      ':tada:',
    );
    fc.assert(
      fc.property(hostile, hostile, hostile, hostile, (a, b, c, d) => {
        const t = translate(
          'slack',
          nativePost({
            text: a,
            username: b,
            attachments: [
              {
                pretext: b,
                title: c,
                title_link: 'https://ok.example/t',
                text: d,
                fields: [{ title: a, value: b }],
                footer: c,
                fallback: d,
              },
            ],
          }),
        );
        const blocks = translate(
          'slack',
          nativePost({
            blocks: [
              { type: 'header', text: { type: 'plain_text', text: a } },
              {
                type: 'section',
                text: { type: 'mrkdwn', text: b },
                fields: [
                  { type: 'mrkdwn', text: c },
                  { type: 'plain_text', text: d },
                ],
              },
              { type: 'context', elements: [{ type: 'mrkdwn', text: d }] },
              {
                type: 'rich_text',
                elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: a, style: { bold: true } }] }],
              },
            ],
          }),
        );
        if (blocks.kind === 'message') {
          const html = renderMarkdown(blocks.markdown);
          expect(html).not.toMatch(/<(script|img|iframe|b>)/);
          for (const href of hrefs(html)) expect(href).toMatch(/^https?:\/\/(evil\.example|www\.evil\.example)/);
        }
        if (t.kind !== 'message') return;
        const html = renderMarkdown(t.markdown);
        expect(html).not.toMatch(/<(script|img|iframe|b>)/);
        for (const href of hrefs(html)) {
          // Only the given title link, or a URL written out in the text itself (shown as itself).
          expect(href === 'https://ok.example/t' || /^https?:\/\/(evil\.example|www\.evil\.example)/.test(href)).toBe(true);
        }
        expect(t.metadata.length).toBeLessThanOrEqual(4_000);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the 51 Slack-format fixtures', () => {
  it('are all there', () => {
    expect(FIXTURES.length).toBe(51);
  });

  /** Slack `message_changed` events (Events API shapes): shown as the edited message's text. */
  const edited = (f: (typeof FIXTURES)[number]): string | undefined => {
    const body = bodyOf(f);
    const event = body?.event ?? body;
    return event?.subtype === 'message_changed' ? String(event.message?.text ?? '') : undefined;
  };
  /** Bodies whose every Slack field is null: acknowledged, nothing shown (Zulip ignores them too). */
  const NOTHING = FIXTURES.filter(
    (f) => edited(f) === undefined && words(visibleStrings(bodyOf(f))).length === 0 && !/image_url"\s*:\s*"http/.test(f.text),
  );

  it.each(FIXTURES.map((f) => [f.name, f] as const))('%s: every visible word, and only offered links, in the message', (_, f) => {
    const body = bodyOf(f);
    const t = translate('slack', slackPost(f));
    if (NOTHING.includes(f)) {
      expect(t).toMatchObject({ kind: 'ignored' });
      return;
    }
    const editedText = edited(f);
    if (editedText !== undefined) {
      expect(t).toMatchObject({ kind: 'message', metadata: expect.stringContaining('slack:message_changed') });
      if (t.kind === 'message') for (const word of words([editedText])) expect(readable(t.markdown)).toContain(word);
      return;
    }
    expect(t.kind, JSON.stringify(t)).toBe('message');
    if (t.kind !== 'message') return;
    const seen = readable(t.markdown);
    for (const word of words(visibleStrings(body))) expect(seen, word).toContain(word);
    const html = renderMarkdown(t.markdown);
    expect(html).not.toMatch(/<(script|img|iframe)/);
    const offered = offeredUrls(f.form ? decodeURIComponent(f.text.replace(/\+/g, ' ')) : f.text);
    for (const href of hrefs(html))
      expect(
        [...offered].some((u) => u === href || u.startsWith(href) || href.startsWith(u)),
        href,
      ).toBe(true);
    for (const key of ['channel', 'username'] as const) {
      if (typeof body[key] === 'string' && body[key].trim() !== '') expect(t.metadata).toContain(`${key}=`);
    }
  });

  it('shows 49 of them (two are message_changed events); the other 2, every field null, are acknowledged', () => {
    expect(FIXTURES.filter((f) => edited(f) !== undefined).length).toBe(2);
    expect(NOTHING.map((f) => f.name).sort()).toEqual([
      'zulip__zulip__zulip__zerver__webhooks__slack_incoming__fixtures__attachment_pieces_all_null.json',
      'zulip__zulip__zulip__zerver__webhooks__slack_incoming__fixtures__null_text.json',
    ]);
  });
});

function postRaw(target: PostTarget, body: string, contentType: string, query = ''): Promise<Sent> {
  return send('POST', webhookPath(target) + query, { token: null, body, headers: { 'Content-Type': contentType } });
}

function fixture(part: string) {
  const f = FIXTURES.find((x) => x.name.includes(part));
  if (!f) throw new Error(`no fixture ${part}`);
  return f;
}

describe('Slack payloads posted end to end', () => {
  it('routes by `channel` through a mapping on the metadata; without that channel, to the webhook\u2019s room', async () => {
    const { roomId, hook } = await roomWithWebhook({ kind: 'slack' });
    const alerts = await createRoom();
    const patched = await send('PATCH', `/api/v1/webhooks/${hook.id}`, {
      json: { mappings: [{ field: 'metadata', match: 'contains', value: 'channel=#alerts', roomIds: [alerts.id] }] },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const json = (body: unknown) => postRaw(hook, JSON.stringify(body), 'application/json');
    expect((await json({ channel: '#alerts', username: 'Alertmanager', text: 'disk full' })).body.deliveries).toEqual([
      expect.objectContaining({ roomId: alerts.id, seq: 1 }),
    ]);
    expect((await json({ channel: '#general', text: 'hello' })).body.deliveries).toEqual([expect.objectContaining({ roomId, seq: 1 })]);
    expect((await history(alerts.id)).body.entities.map((m: { markdown: string }) => m.markdown)).toEqual(['disk full']);
    expect((await history(roomId)).body.entities.map((m: { markdown: string }) => m.markdown)).toEqual(['hello']);
  });

  const SAMPLES = [
    'gatus__TwiN__gatus__alerting__provider__slack__slack_test.go__L157',
    'grafana__grafana',
    'urlencoded_text.txt.form',
    'incoming___index.md__L52.form',
    'Readme.md__L52',
  ];

  it.each(['slack', 'generic'])(
    'a %s webhook stores fixtures (JSON and form) as their translated messages, read back through history',
    async (kind) => {
      const { roomId, hook } = await roomWithWebhook({ kind });
      const expected: string[] = [];
      for (const part of SAMPLES) {
        const f = fixture(part);
        // A generic webhook takes Slack's JSON; forms stay a tool's kind's (415 on a generic webhook).
        if (f.form && kind === 'generic') {
          expectError(await postRaw(hook, f.text, 'application/x-www-form-urlencoded'), 415, 'unsupported.media.type');
          continue;
        }
        const res = await postRaw(hook, f.text, f.form ? 'application/x-www-form-urlencoded' : 'application/json');
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const t = translate('slack', slackPost(f));
        if (t.kind === 'message') expected.push(t.markdown);
      }
      const stored = (await history(roomId)).body.entities as { markdown: string; metadata: string; html: string }[];
      expect(stored.map((m) => m.markdown)).toEqual(expected);
      expect(stored.every((m) => m.metadata.startsWith('slack:message'))).toBe(true);
      expect(stored[0]!.html).toContain('<strong>');
      expect(stored.some((m) => m.html.includes('<img'))).toBe(false);
    },
  );

  it('answers `ok` as text/plain when the URL says ?answer=slack, our JSON otherwise', async () => {
    const { hook } = await roomWithWebhook({ kind: 'slack' });
    const ok = await postRaw(hook, JSON.stringify({ text: 'hello' }), 'application/json', '?answer=slack');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('Content-Type')).toContain('text/plain');
    expect(ok.body).toBe('ok');
    const json = await postRaw(hook, JSON.stringify({ text: 'hello' }), 'application/json');
    expect(json.body).toEqual({ deliveries: [expect.objectContaining({ seq: 2 })] });
    // Refusals keep their JSON error.
    expectError(
      await postRaw(hook, JSON.stringify({ username: 'bot' }), 'application/json', '?answer=slack'),
      400,
      'invalid.value',
      'text',
    );
    // Every Slack field empty: acknowledged as Slack would, nothing stored.
    const empty = await postRaw(hook, JSON.stringify({ text: '' }), 'application/json', '?answer=slack');
    expect([empty.status, empty.body]).toEqual([200, 'ok']);
  });

  it('keeps the generic webhook\u2019s answers for anything that is not Slack\u2019s', async () => {
    const { hook } = await roomWithWebhook({ kind: 'generic' });
    expectError(await postRaw(hook, JSON.stringify({ hello: 'x' }), 'application/json'), 400, 'invalid.value', 'message');
    expectError(await postRaw(hook, JSON.stringify({ message: '' }), 'application/json'), 400, 'invalid.value', 'message');
    expectError(await postRaw(hook, JSON.stringify({ text: null }), 'application/json'), 400, 'invalid.value', 'message');
    // An unknown webhook answers as a generic one, so a Slack body does not reveal whether an id exists.
    expectError(await postRaw(crypto.randomUUID(), JSON.stringify({ text: 'hi' }), 'application/json'), 400, 'invalid.value', 'message');
  });
});

/**
 * Mattermost's incoming webhooks take Slack's body plus `props` (`card`), `priority` and `type`
 * (../shared/reference/incoming-webhooks-peers.md §3), and read text as standard markdown.
 */
const MATTERMOST = {
  channel: 'town-square',
  username: 'test-automation',
  icon_url: 'https://mattermost.com/wp-content/uploads/2022/02/icon.png',
  text: '#### Test results for July 27th\n@channel please review *failed* tests: [logs](https://ci.example/logs)\n- Server: **948** run',
  props: { card: '## Details\nRun `#42` on *main*\n\n| a | b |' },
  priority: { priority: 'urgent', requested_ack: true },
  type: 'custom_ci',
};

const MATTERMOST_MARKDOWN = [
  '\u{1f6a8} **Urgent**',
  '**Test results for July 27th**\n\n\\@channel please review *failed* tests: [logs](https://ci.example/logs)\n- Server: **948** run',
  '---\n\n**Details**\n\nRun `#42` on *main*\n\n\\| a \\| b \\|',
].join('\n\n');

const MATTERMOST_METADATA =
  'slack:message channel=town-square username=test-automation icon_url=https://mattermost.com/wp-content/uploads/2022/02/icon.png format=mattermost type=custom_ci priority=urgent';

describe('Mattermost bodies on a slack webhook', () => {
  it('reads text as markdown, shows the card after the message and the priority above it', () => {
    expect(translate('slack', nativePost(MATTERMOST))).toEqual({
      kind: 'message',
      markdown: MATTERMOST_MARKDOWN,
      metadata: MATTERMOST_METADATA,
      // Mattermost's urgent priority.
      level: 'critical',
    });
  });

  it('knows a Mattermost body only by fields Slack has not: a Slack body with channel and icon_emoji stays mrkdwn', () => {
    expect(translate('slack', nativePost({ channel: '#ops', icon_emoji: ':bell:', text: '*bold*' }))).toMatchObject({
      markdown: '**bold**',
      metadata: 'slack:message channel=#ops icon_emoji=:bell:',
    });
    for (const extra of [{ props: {} }, { priority: { priority: 'important' } }, { type: 'custom_x' }]) {
      const t = translate('slack', nativePost({ text: '*italic*', ...extra }));
      expect(t).toMatchObject({ kind: 'message', metadata: expect.stringContaining('format=mattermost') });
      if (t.kind === 'message') expect(t.markdown.endsWith('*italic*') && !t.markdown.includes('**italic**')).toBe(true);
    }
    // Not a plugin type: Slack's own event shapes keep being read as Slack's.
    expect(translate('slack', nativePost({ type: 'message', text: '*b*' }))).toMatchObject({ markdown: '**b**' });
  });

  it('shows the important label, a card alone, and attachments kept in props', () => {
    expect(translate('slack', nativePost({ text: 'Deploy', priority: { priority: 'important' } }))).toEqual({
      kind: 'message',
      markdown: '\u2757 **Important**\n\nDeploy',
      metadata: 'slack:message format=mattermost priority=important',
      level: 'warning',
    });
    expect(translate('slack', nativePost({ text: '', props: { card: 'Only *the* card' } }))).toMatchObject({
      markdown: 'Only *the* card',
    });
    expect(translate('slack', nativePost({ props: { attachments: [{ title: 'In props', text: '*x*', color: 'danger' }] } }))).toEqual({
      kind: 'message',
      markdown: '\u{1f534} **In props**\n\n*x*',
      metadata: 'slack:message level=danger format=mattermost',
      level: 'critical',
    });
    // Priority alone is nothing to show.
    expect(translate('slack', nativePost({ priority: { priority: 'urgent' }, props: { card: ' ' } }))).toMatchObject({
      kind: 'unrecognised',
      fieldName: 'text',
    });
  });

  /** The fixtures written for Mattermost (its docs and tests, and Gatus' Mattermost provider): with a card added, it shows after them. */
  const FROM_MATTERMOST = FIXTURES.filter((f) => /^mattermost__|__mattermost__mattermost_test/.test(f.name));

  it.each(FROM_MATTERMOST.map((f) => [f.name, f] as const))('%s: shown, with a card added shown after it', (_, f) => {
    expect(FROM_MATTERMOST.length).toBe(9);
    const body = { ...bodyOf(f), props: { card: 'Card for **run 42**' } };
    const t = translate('slack', nativePost(body));
    expect(t.kind).toBe('message');
    if (t.kind !== 'message') return;
    expect(t.markdown.endsWith('\n\n---\n\nCard for **run 42**')).toBe(true);
    for (const word of words(visibleStrings(body))) expect(readable(t.markdown), word).toContain(word);
    expect(t.metadata).toContain('format=mattermost');
  });

  it('shows hostile text in text and card as text', () => {
    const hostile = hostileText('](javascript:x)', '\n# ', '\n- ', '\n1. ', '\n```js\n', '\n---\n', '\n> ');
    fc.assert(
      fc.property(hostile, hostile, hostile, (a, b, c) => {
        const t = translate('slack', nativePost({ text: a, props: { card: b }, priority: { priority: c }, type: `custom_${c}` }));
        if (t.kind !== 'message') return;
        const html = renderMarkdown(t.markdown);
        expect(html).not.toMatch(/<(script|img|iframe|h\d)/);
        expect(hrefs(html).every((h) => /^https?:\/\//.test(h))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('is read from a generic webhook too, and stored as translated', async () => {
    const { roomId, hook } = await roomWithWebhook({ kind: 'generic' });
    const res = await postRaw(hook, JSON.stringify(MATTERMOST), 'application/json');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [stored] = (await history(roomId)).body.entities as { markdown: string; metadata: string; html: string }[];
    expect(stored).toMatchObject({ markdown: MATTERMOST_MARKDOWN, metadata: MATTERMOST_METADATA });
    expect(stored!.html).toContain('<hr>');
    expect(stored!.html).toContain('<strong>Details</strong>');
  });
});
