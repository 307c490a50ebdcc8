import { z } from 'zod';
import { count, esc, link, metadata, quote } from './text';
import { jiraPriorityLevel } from './level';
import { expectShape, ignored, message, Unrecognised, withDetails, type DeliveryKey, type NativePost, type Translation } from './types';

/**
 * Jira webhooks (developer.atlassian.com "Webhooks"): the event is the body's `webhookEvent`. Issue
 * events carry the issue (REST API shape) and, for updates, the `changelog`; comment events carry
 * the comment and a slimmer issue. Jira's payload has no browser URL, so the issue link is made
 * from the origin of the issue's `self` (REST) URL: `<origin>/browse/<KEY>`.
 */

const str = z.string();
const optStr = z.string().nullish();
const person = z.object({ displayName: optStr, name: optStr }).nullish();
/** Priority, status and issue type are objects with a name; Atlassian's own sample has priority as a bare string. */
const named = z.union([z.object({ name: optStr }), z.string()]).nullish();

const issue = z.object({
  key: str,
  self: optStr,
  fields: z
    .object({
      summary: optStr,
      description: z.unknown().optional(),
      issuetype: named,
      priority: named,
      status: named,
      assignee: person,
      project: z.object({ key: optStr }).nullish(),
    })
    .nullish(),
});
const comment = z.object({ body: z.unknown().optional(), author: person, updateAuthor: person, self: optStr });
const event = z.object({
  webhookEvent: str,
  user: person,
  issue: issue.nullish(),
  comment: comment.nullish(),
  changelog: z
    .object({
      items: z.array(z.object({ field: str, fromString: optStr, toString: optStr })).nullish(),
    })
    .nullish(),
});

type Issue = z.infer<typeof issue>;
type Person = z.infer<typeof person>;

function nameOf(value: z.infer<typeof named>): string | null {
  if (typeof value === 'string') return value || null;
  return value?.name || null;
}

function personName(p: Person): string | null {
  return p?.displayName || p?.name || null;
}

const ISSUE_KEY = /^[A-Za-z][A-Za-z0-9_]*-\d+$/;

function browseUrl(i: Issue): string | null {
  if (!i.self || !ISSUE_KEY.test(i.key)) return null;
  try {
    const origin = new URL(i.self).origin;
    return origin === 'null' ? null : `${origin}/browse/${i.key}`;
  } catch {
    return null;
  }
}

function issueLink(i: Issue): string {
  const summary = i.fields?.summary;
  return link(summary ? `${i.key}: ${summary}` : i.key, browseUrl(i));
}

/** Jira Cloud's REST v3 shape gives rich text as an Atlassian Document (ADF): its text, paragraph by paragraph. */
function richText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return '';
  const lines: string[] = [];
  let line = '';
  // Iterative walk: a hostile document cannot nest deep enough to overflow the stack.
  const stack: unknown[] = [value];
  let nodes = 0;
  while (stack.length > 0 && nodes++ < 10_000) {
    const node = stack.pop();
    if (node === 'BREAK') {
      lines.push(line);
      line = '';
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    const n = node as { type?: unknown; text?: unknown; content?: unknown };
    if (n.type === 'text' && typeof n.text === 'string') line += n.text;
    else if (n.type === 'hardBreak') stack.push('BREAK');
    if (Array.isArray(n.content)) {
      if (n.type === 'paragraph' || n.type === 'heading' || n.type === 'listItem' || n.type === 'codeBlock') stack.push('BREAK');
      for (let k = n.content.length - 1; k >= 0; k--) stack.push(n.content[k]);
    }
  }
  lines.push(line);
  return lines.join('\n');
}

function projectOf(i: Issue): string | undefined {
  return i.fields?.project?.key ?? /^([^-]+)-/.exec(i.key)?.[1];
}

function meta(webhookEvent: string, i: Issue): string {
  return metadata(`jira:${webhookEvent.replace(/^jira:/, '')}`, [
    ['project', projectOf(i)],
    ['issue', i.key],
    ['status', nameOf(i.fields?.status)],
  ]);
}

function withQuote(head: string, body: unknown): string {
  const quoted = quote(richText(body));
  return quoted === '' ? `${head}.` : `${head}:\n\n${quoted}`;
}

const SHOWN_CHANGES: ReadonlyArray<readonly [string, string]> = [
  ['status', 'Status'],
  ['assignee', 'Assignee'],
  ['priority', 'Priority'],
];

function change(from: string | null | undefined, to: string | null | undefined, none: string): string {
  return `${esc(from || none, 100)} \u2192 ${esc(to || none, 100)}`;
}

function createdMessage(user: string, i: Issue, webhookEvent: string): Translation {
  const f = i.fields;
  const bullets: string[] = [];
  const type = nameOf(f?.issuetype);
  const priority = nameOf(f?.priority);
  if (type) bullets.push(`- **Type**: ${esc(type, 100)}`);
  if (priority) bullets.push(`- **Priority**: ${esc(priority, 100)}`);
  if (f && 'assignee' in f) bullets.push(`- **Assignee**: ${esc(personName(f.assignee) ?? 'Unassigned', 100)}`);
  const quoted = quote(richText(f?.description));
  const parts = [`${user} created ${issueLink(i)}${bullets.length > 0 || quoted ? ':' : '.'}`];
  if (bullets.length > 0) parts[0] += `\n${bullets.join('\n')}`;
  if (quoted) parts.push(quoted);
  return message(parts.join('\n\n'), meta(webhookEvent, i));
}

const MAX_CHANGES = 10;

function updatedMessage(user: string, e: z.infer<typeof event>, i: Issue): Translation {
  const items = e.changelog?.items ?? [];
  // Status, assignee and priority first, then every other change in the changelog's order.
  const rank = (field: string) => {
    const at = SHOWN_CHANGES.findIndex(([known]) => known === field.toLowerCase());
    return at === -1 ? SHOWN_CHANGES.length : at;
  };
  const ordered = items.map((item, at) => ({ item, at })).sort((a, b) => rank(a.item.field) - rank(b.item.field) || a.at - b.at);
  const bullets = ordered.slice(0, MAX_CHANGES).map(({ item }) => {
    const known = SHOWN_CHANGES.find(([field]) => field === item.field.toLowerCase());
    const label = known ? known[1] : esc(item.field, 50);
    return `- **${label}**: ${change(item.fromString, item.toString, item.field.toLowerCase() === 'assignee' ? 'Unassigned' : 'None')}`;
  });
  if (items.length > MAX_CHANGES) bullets.push(`- \u2026 and ${count(items.length - MAX_CHANGES, 'more change')}`);
  if (bullets.length === 0) {
    // Jira Server reports a comment as an issue update ("issue_commented") carrying the comment.
    if (e.comment) return commentMessage('comment_created', e, i);
    return ignored('A Jira issue update without changes is not shown.');
  }
  return message(`${user} updated ${issueLink(i)}:\n${bullets.join('\n')}`, meta(e.webhookEvent, i));
}

function commentMessage(kind: 'comment_created' | 'comment_updated', e: z.infer<typeof event>, i: Issue): Translation {
  const c = e.comment;
  if (!c) throw new Unrecognised(`Not a Jira ${kind} payload: comment is missing.`, 'comment');
  const who =
    kind === 'comment_updated' ? (personName(c.updateAuthor) ?? personName(c.author)) : (personName(c.author) ?? personName(e.user));
  const verb = kind === 'comment_updated' ? 'edited a comment on' : 'commented on';
  return message(withQuote(`${esc(who ?? 'Someone')} ${verb} ${issueLink(i)}`, c.body), meta(kind, i));
}

/**
 * Old Jira Server versions send comment_created without the issue. The comment's REST URL still
 * names it (`<base>/rest/api/2/issue/<id or key>/comment/<id>`): linked by key (`/browse/KEY`) or
 * by id (`/secure/ViewIssue.jspa?id=…`, which Jira Server redirects to the issue).
 */
function commentWithoutIssue(kind: 'comment_created' | 'comment_updated', e: z.infer<typeof event>): Translation {
  const c = e.comment;
  if (!c) throw new Unrecognised(`Not a Jira ${kind} payload: comment is missing.`, 'comment');
  let target = 'an issue';
  let issueRef: string | undefined;
  let project: string | undefined;
  const found = c.self ? /^(https?:\/\/.+?)\/rest\/api\/\d+\/issue\/([^/?#]+)\/comment(?:[/?#]|$)/i.exec(c.self) : null;
  if (found?.[1] && found[2]) {
    const base = found[1];
    const ref = decodeURIComponentSafe(found[2]);
    if (ISSUE_KEY.test(ref)) {
      issueRef = ref;
      project = /^([^-]+)-/.exec(ref)?.[1];
      target = link(ref, `${base}/browse/${ref}`);
    } else if (/^\d{1,18}$/.test(ref)) {
      issueRef = ref;
      target = link(`issue ${ref}`, `${base}/secure/ViewIssue.jspa?id=${ref}`);
    }
  }
  const who =
    kind === 'comment_updated' ? (personName(c.updateAuthor) ?? personName(c.author)) : (personName(c.author) ?? personName(e.user));
  const verb = kind === 'comment_updated' ? 'edited a comment on' : 'commented on';
  return message(
    withQuote(`${esc(who ?? 'Someone')} ${verb} ${target}`, c.body),
    metadata(`jira:${kind}`, [
      ['project', project],
      ['issue', issueRef],
    ]),
  );
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function issueMessage(webhookEvent: string, e: z.infer<typeof event>, i: Issue): Translation {
  const user = esc(personName(e.user) ?? 'Someone');
  switch (webhookEvent) {
    // An issue created or changed carries its priority: a P1 stands out (comments and deletions do not).
    case 'jira:issue_created':
      return withDetails(createdMessage(user, i, webhookEvent), { level: jiraPriorityLevel(nameOf(i.fields?.priority)) });
    case 'jira:issue_updated': {
      const updated = updatedMessage(user, e, i);
      // Jira Server's "issue_commented" is an update carrying a comment, shown as the comment it is.
      const isComment = updated.kind === 'message' && updated.metadata.startsWith('jira:comment_');
      return isComment ? updated : withDetails(updated, { level: jiraPriorityLevel(nameOf(i.fields?.priority)) });
    }
    case 'jira:issue_deleted': {
      const summary = i.fields?.summary;
      return message(`${user} deleted ${esc(summary ? `${i.key}: ${summary}` : i.key)}.`, meta(webhookEvent, i));
    }
    default:
      return commentMessage(webhookEvent === 'comment_updated' ? 'comment_updated' : 'comment_created', e, i);
  }
}

/** X-Atlassian-Webhook-Identifier: the same on every retry of one delivery. */
function deliveryKey(post: NativePost): DeliveryKey | undefined {
  const id = post.header('X-Atlassian-Webhook-Identifier');
  return id && /^[\x21-\x7e]{1,200}$/.test(id) ? { id } : undefined;
}

export function translateJira(post: NativePost): Translation {
  const body = post.json;
  const webhookEvent = body !== null && typeof body === 'object' ? (body as { webhookEvent?: unknown }).webhookEvent : undefined;
  if (typeof webhookEvent !== 'string') {
    throw new Unrecognised(
      'A jira webhook takes Jira deliveries: a JSON body with "webhookEvent" (jira:issue_created, jira:issue_updated, comment_created, …), or the generic {"message", "metadata"} body.',
      'webhookEvent',
    );
  }
  const shown = ['jira:issue_created', 'jira:issue_updated', 'jira:issue_deleted', 'comment_created', 'comment_updated'];
  if (!shown.includes(webhookEvent)) return ignored(`Jira event "${webhookEvent.slice(0, 60)}" is not shown.`);

  const e = expectShape(event, body, `Jira webhook payload (${webhookEvent})`);
  const commentKind = webhookEvent === 'comment_updated' ? 'comment_updated' : 'comment_created';
  if (!e.issue && !(webhookEvent.startsWith('comment_') && e.comment)) {
    throw new Unrecognised(`Not a Jira ${webhookEvent} payload: issue is missing.`, 'issue');
  }
  const translation = e.issue ? issueMessage(webhookEvent, e, e.issue) : commentWithoutIssue(commentKind, e);
  const key = deliveryKey(post);
  return translation.kind === 'message' && key ? { ...translation, deliveryKey: key } : translation;
}
