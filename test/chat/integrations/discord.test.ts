import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { translate } from '../../../src/chat/integrations';
import { renderMarkdown } from '../../../src/chat/markdown';
import { expectError, send, type Sent } from '../../helpers';
import { history, type PostTarget, roomWithWebhook, webhookPath } from '../helpers';
import { hostileText, nativePost } from './support';

/**
 * Discord's Execute Webhook body (discord-api-docs `docs/resources/webhook.mdx`, see
 * ../shared/reference/incoming-webhooks-peers.md §5): bodies written by hand in the shapes its
 * docs and common senders use, with the expected messages worked out by hand.
 */

/** A CI notifier's embed (as GitHub Actions' Discord notifiers post): colour, fields, author, footer, timestamp. */
const CI_FAILED = {
  username: 'GitHub Actions',
  avatar_url: 'https://github.githubassets.com/images/modules/logos_page/GitHub-Mark.png',
  content: null,
  tts: false,
  allowed_mentions: { parse: [] },
  embeds: [
    {
      title: 'build failed on main',
      url: 'https://github.com/acme/api/actions/runs/42',
      description: 'Commit `a1b2c3d` by **octocat**:\n> Fix the *flaky* test',
      color: 15158332, // 0xE74C3C, red
      fields: [
        { name: 'Repository', value: 'acme/api', inline: true },
        { name: 'Duration', value: '3m 12s', inline: true },
      ],
      author: { name: 'octocat', url: 'https://github.com/octocat', icon_url: 'https://github.com/octocat.png' },
      footer: { text: 'CI', icon_url: 'https://ci.example/icon.png' },
      timestamp: '2024-05-15T10:16:00.000Z',
    },
  ],
};

const CI_FAILED_MARKDOWN = [
  '\u{1f534} [octocat](https://github.com/octocat)',
  '**[build failed on main](https://github.com/acme/api/actions/runs/42)**',
  'Commit `a1b2c3d` by **octocat**:\n> Fix the *flaky* test',
  '- **Repository**: acme/api\n- **Duration**: 3m 12s',
  '*CI \u00b7 2024-05-15 10:16 UTC*',
].join('\n\n');

/** Plain `content` in Discord's markdown, as a script posts it. */
const CONTENT = {
  content:
    '# Release v2.0\nShipped **api** and *web* ~~today~~ __now__: see [notes](https://example.com/notes)\n- fixes <@123456789>\n1. docs\n```bash\nnpm i\n```\n@everyone <t:1715768160:f>',
  username: 'release-bot',
  flags: 4096,
};

const CONTENT_MARKDOWN = [
  '**Release v2.0**',
  'Shipped **api** and *web* ~~today~~ **now**: see [notes](https://example.com/notes)\n- fixes \\@123456789\n1. docs',
  '```\nnpm i\n```',
  '\\@everyone 2024-05-15 10:16 UTC',
].join('\n\n');

function hrefs(html: string): string[] {
  return [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
}

describe('Discord payloads (the translator)', () => {
  it('shows an embed: author, linked title, description, fields, footer and time, colour as a marker', () => {
    expect(translate('discord', nativePost(CI_FAILED))).toEqual({
      kind: 'message',
      markdown: CI_FAILED_MARKDOWN,
      metadata:
        'discord:message username=GitHub%20Actions avatar_url=https://github.githubassets.com/images/modules/logos_page/GitHub-Mark.png level=danger',
      level: 'critical',
    });
  });

  it('reads content as Discord markdown: emphasis, links, headings, lists, code; mentions as text', () => {
    expect(translate('discord', nativePost(CONTENT))).toEqual({
      kind: 'message',
      markdown: CONTENT_MARKDOWN,
      metadata: 'discord:message username=release-bot',
    });
  });

  it('shows content, then each embed; images as links; the worst colour in metadata', () => {
    const t = translate(
      'discord',
      nativePost({
        content: 'Two alerts',
        thread_name: 'alerts',
        embeds: [
          { title: 'Disk low', color: 0xf1c40f, image: { url: 'https://img.example/disk.png' } },
          { description: 'Back to normal', color: 0x2ecc71, thumbnail: { url: 'https://img.example/t.png' } },
          null,
          { color: 0xff0000 },
        ],
      }),
    );
    expect(t).toEqual({
      kind: 'message',
      markdown: [
        'Two alerts',
        '\u{1f7e1} **Disk low**',
        '[image](https://img.example/disk.png)',
        '\u{1f7e2} Back to normal',
        '[thumbnail](https://img.example/t.png)',
      ].join('\n\n'),
      metadata: 'discord:message thread_name=alerts level=warning',
      level: 'warning',
    });
  });

  it('shows a poll and link buttons; interactive buttons have nothing to open', () => {
    const t = translate(
      'discord',
      nativePost({
        poll: { question: { text: 'Deploy now?' }, answers: [{ poll_media: { text: 'Yes' } }, { poll_media: { text: 'No' } }] },
        components: [
          {
            type: 1,
            components: [
              { type: 2, style: 5, label: 'Open run', url: 'https://ci.example/run/1' },
              { type: 2, style: 1, label: 'Retry', custom_id: 'retry' },
            ],
          },
        ],
      }),
    );
    expect(t).toEqual({
      kind: 'message',
      markdown: '\u{1f4ca} **Deploy now?**\n\n- Yes\n- No\n\n[Open run](https://ci.example/run/1)',
      metadata: 'discord:message',
    });
  });

  it('reads a Slack body as Slack\u2019s (Discord\u2019s /slack endpoint takes them)', () => {
    expect(translate('discord', nativePost({ text: 'Deploy *done*', attachments: [{ title: 'v2', color: 'good' }] }))).toEqual({
      kind: 'message',
      markdown: 'Deploy **done**\n\n\u{1f7e2} **v2**',
      metadata: 'slack:message level=good',
      level: 'success',
    });
  });

  it('answers a body with nothing to show as unrecognised, naming the fields it expected', () => {
    for (const body of [
      {},
      { content: '' },
      { content: null, embeds: [] },
      { embeds: [{}, null] },
      { tts: true },
      { embeds: [{ color: 5 }] },
    ]) {
      expect(translate('discord', nativePost(body))).toEqual({
        kind: 'unrecognised',
        expected: expect.stringContaining('"content" or "embeds"'),
        fieldName: 'content',
      });
    }
    for (const body of [[1], 'x', null]) {
      expect(translate('discord', nativePost(JSON.stringify(body)))).toMatchObject({ kind: 'unrecognised', fieldName: 'body' });
    }
  });

  it('shows hostile text in every field as text: no HTML, no image, no link but to the URLs given', () => {
    const hostile = hostileText(
      '](javascript:alert(1))',
      '![x](https://evil.example/i.png)',
      '<javascript:x|y>',
      '<t:99999999999999:R>',
      '<:x:1>',
      '||spoiler||',
      '__u__',
      '~~s~~',
      '\n# ',
      '\n>>> ',
      '\n> ',
      '\n- ',
      '\n1. ',
      '\n```js\n',
      '\n---\n',
      '@everyone',
    );
    fc.assert(
      fc.property(hostile, hostile, hostile, hostile, (a, b, c, d) => {
        const t = translate(
          'discord',
          nativePost({
            content: a,
            username: b,
            avatar_url: c,
            embeds: [
              {
                title: b,
                url: 'https://ok.example/t',
                description: c,
                color: 0xff0000,
                fields: [{ name: d, value: a, inline: true }],
                author: { name: c, url: d },
                footer: { text: d },
                timestamp: a,
                image: { url: b },
              },
            ],
            poll: { question: { text: c }, answers: [{ poll_media: { text: d } }] },
            components: [{ type: 1, components: [{ type: 2, style: 5, label: a, url: b }] }],
          }),
        );
        // Fields of only markers (an empty code fence, a lone `# `) leave nothing to show: refused, never a broken message.
        if (t.kind !== 'message') {
          expect(t.kind).toBe('unrecognised');
          return;
        }
        const html = renderMarkdown(t.markdown);
        expect(html).not.toMatch(/<(script|img|iframe|b>|h\d)/);
        for (const href of hrefs(html)) {
          expect(href === 'https://ok.example/t' || /^https?:\/\/(evil\.example|www\.evil\.example)/.test(href), href).toBe(true);
        }
        expect(t.metadata.length).toBeLessThanOrEqual(4_000);
        expect(t.metadata).not.toMatch(/\n/);
      }),
      { numRuns: 500 },
    );
  });
});

function postRaw(target: PostTarget, body: string, contentType: string): Promise<Sent> {
  return send('POST', webhookPath(target), { token: null, body, headers: { 'Content-Type': contentType } });
}

describe('Discord payloads posted end to end', () => {
  it.each(['discord', 'generic'])('a %s webhook stores Discord bodies as their messages, read back through history', async (kind) => {
    const { roomId, hook } = await roomWithWebhook({ kind });
    for (const body of [CI_FAILED, CONTENT, { embeds: [{ description: 'embeds only' }] }]) {
      const res = await postRaw(hook, JSON.stringify(body), 'application/json');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const stored = (await history(roomId)).body.entities as { markdown: string; metadata: string; html: string }[];
    expect(stored.map((m) => m.markdown)).toEqual([CI_FAILED_MARKDOWN, CONTENT_MARKDOWN, 'embeds only']);
    expect(stored.map((m) => m.metadata)).toEqual([
      expect.stringMatching(/^discord:message username=GitHub%20Actions .* level=danger$/),
      'discord:message username=release-bot',
      'discord:message',
    ]);
    expect(stored[0]!.html).toContain('<a href="https://github.com/acme/api/actions/runs/42"');
    // A mention stays text (the renderer may highlight it).
    expect(stored[1]!.html).toMatch(/<li>fixes (?:<span class="mention">)?@123456789(?:<\/span>)?<\/li>/);
    expect(stored.some((m) => m.html.includes('<img'))).toBe(false);
  });

  it('answers a Discord body with nothing to show with 400 on a discord webhook, and a urlencoded form with 415', async () => {
    const { hook } = await roomWithWebhook({ kind: 'discord' });
    expectError(await postRaw(hook, JSON.stringify({ content: '', embeds: [] }), 'application/json'), 400, 'invalid.value', 'content');
    expectError(await postRaw(hook, 'payload_json=%7B%7D', 'application/x-www-form-urlencoded'), 415, 'unsupported.media.type');
    // The generic body still works on a discord webhook.
    expect((await postRaw(hook, JSON.stringify({ message: 'plain' }), 'application/json')).status).toBe(200);
  });

  it('takes Discord\u2019s multipart form: the JSON in payload_json (or plain fields), files named but not kept', async () => {
    const { roomId, hook } = await roomWithWebhook({ kind: 'discord' });
    const withFile = new FormData();
    withFile.append('payload_json', JSON.stringify({ content: 'Report *attached*', username: 'reporter' }));
    withFile.append('files[0]', new File(['a,b\n1,2'], 'report_*1*.csv', { type: 'text/csv' }));
    const fields = new FormData();
    fields.append('content', 'Plain **fields**');
    const filesOnly = new FormData();
    filesOnly.append('files[0]', new File(['x'], 'graph.png'));
    for (const form of [withFile, fields, filesOnly]) {
      const req = new Request('http://x/', { method: 'POST', body: form });
      const res = await postRaw(hook, await req.text(), req.headers.get('Content-Type')!);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const stored = (await history(roomId)).body.entities as { markdown: string; metadata: string }[];
    expect(stored.map((m) => [m.markdown, m.metadata])).toEqual([
      ['Report *attached*\n\n\u{1f4ce} report\\_\\*1\\*.csv (attached files are not kept)', 'discord:message username=reporter'],
      ['Plain **fields**', 'discord:message'],
      ['\u{1f4ce} graph.png (attached files are not kept)', 'discord:message'],
    ]);
    const broken = new FormData();
    broken.append('payload_json', '{not json');
    const req = new Request('http://x/', { method: 'POST', body: broken });
    expectError(await postRaw(hook, await req.text(), req.headers.get('Content-Type')!), 400, 'invalid.value', 'payload_json');
    expectError(await postRaw(hook, '--x\r\nbroken', 'multipart/form-data; boundary=x'), 400, 'bad.request');
    // Only a discord webhook takes a multipart form.
    const generic = await roomWithWebhook({ kind: 'generic' });
    const again = new Request('http://x/', { method: 'POST', body: fields });
    expectError(await postRaw(generic.hook, await again.text(), again.headers.get('Content-Type')!), 415, 'unsupported.media.type');
  });

  it('keeps the generic webhook\u2019s answer for a body that is neither Slack\u2019s nor Discord\u2019s', async () => {
    const { hook } = await roomWithWebhook({ kind: 'generic' });
    expectError(await postRaw(hook, JSON.stringify({ content: 5, embeds: 'x' }), 'application/json'), 400, 'invalid.value', 'message');
    expectError(await postRaw(hook, JSON.stringify({ content: '' }), 'application/json'), 400, 'invalid.value', 'content');
  });
});
