import { z } from 'zod';
import { esc, link, metadata, quote } from './text';
import { expectShape, ignored, message, Unrecognised, type DeliveryKey, type NativePost, type Translation } from './types';

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
const comment = z.object({ body: z.unknown().optional(), author: person, updateAuthor: person });
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

function updatedMessage(user: string, e: z.infer<typeof event>, i: Issue): Translation {
  const items = e.changelog?.items ?? [];
  const bullets: string[] = [];
  for (const [field, label] of SHOWN_CHANGES) {
    const item = items.find((it) => it.field.toLowerCase() === field);
    if (item) bullets.push(`- **${label}**: ${change(item.fromString, item.toString, field === 'assignee' ? 'Unassigned' : 'None')}`);
  }
  const shown = new Set(SHOWN_CHANGES.map(([field]) => field));
  const others = [...new Set(items.map((it) => it.field).filter((f) => !shown.has(f.toLowerCase())))];
  if (others.length > 0) {
    const list =
      others
        .slice(0, 10)
        .map((f) => esc(f, 50))
        .join(', ') + (others.length > 10 ? ', \u2026' : '');
    bullets.push(`- ${bullets.length > 0 ? 'Also changed' : 'Changed'}: ${list}`);
  }
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
  if (!e.issue) throw new Unrecognised(`Not a Jira ${webhookEvent} payload: issue is missing.`, 'issue');
  const user = esc(personName(e.user) ?? 'Someone');
  let translation: Translation;
  switch (webhookEvent) {
    case 'jira:issue_created':
      translation = createdMessage(user, e.issue, webhookEvent);
      break;
    case 'jira:issue_updated':
      translation = updatedMessage(user, e, e.issue);
      break;
    case 'jira:issue_deleted': {
      const summary = e.issue.fields?.summary;
      translation = message(`${user} deleted ${esc(summary ? `${e.issue.key}: ${summary}` : e.issue.key)}.`, meta(webhookEvent, e.issue));
      break;
    }
    default:
      translation = commentMessage(webhookEvent === 'comment_updated' ? 'comment_updated' : 'comment_created', e, e.issue);
  }
  const key = deliveryKey(post);
  return translation.kind === 'message' && key ? { ...translation, deliveryKey: key } : translation;
}
