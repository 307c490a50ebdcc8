import { z } from 'zod';
import { code, count, esc, link, linkDestination, linkMarkdown, metadata, quote, shortSha } from './text';
import { bitbucketBuildLevel } from './level';
import { expectShape, ignored, message, Unrecognised, withDetails, type NativePost, type Translation } from './types';

/**
 * Bitbucket Cloud webhooks (support.atlassian.com "Event payloads"): the event is the `X-Event-Key`
 * header; accounts, repositories, pull requests and comments have one shape in every payload.
 */

const str = z.string();
const optStr = z.string().nullish();
const href = z.object({ href: optStr }).nullish();
const account = z.object({ display_name: optStr, nickname: optStr }).nullish();
const repository = z.object({ full_name: str, links: z.object({ html: href }).nullish() });

const ref = z.object({ type: optStr, name: str }).nullish();
const commit = z.object({
  hash: str,
  message: optStr,
  links: z.object({ html: href }).nullish(),
});
const change = z.object({
  new: ref,
  old: ref,
  created: z.boolean().nullish(),
  closed: z.boolean().nullish(),
  forced: z.boolean().nullish(),
  truncated: z.boolean().nullish(),
  commits: z.array(commit).nullish(),
  links: z.object({ html: href }).nullish(),
});
const pushEvent = z.object({ actor: account, repository, push: z.object({ changes: z.array(change).min(1) }) });

const pullRequest = z.object({
  id: z.number(),
  title: str,
  description: optStr,
  reason: optStr,
  source: z.object({ branch: z.object({ name: str }) }),
  destination: z.object({ branch: z.object({ name: str }) }),
  links: z.object({ html: href }).nullish(),
});
const pullRequestEvent = z.object({ actor: account, repository, pullrequest: pullRequest });
const commentEvent = pullRequestEvent.extend({
  comment: z.object({
    content: z.object({ raw: optStr }).nullish(),
    inline: z.object({ path: optStr }).nullish(),
    links: z.object({ html: href }).nullish(),
  }),
});

/** A build's result reported on a commit (Bitbucket Pipelines, or any CI through the build status API). */
const commitStatusEvent = z.object({
  actor: account,
  repository,
  commit_status: z.object({
    name: optStr,
    description: optStr,
    state: str,
    key: optStr,
    url: optStr,
    type: optStr,
    refname: optStr,
    commit: z.object({ hash: optStr }).nullish(),
    links: z.object({ commit: href }).nullish(),
  }),
});

type Account = z.infer<typeof account>;

function actorOf(actor: Account): string {
  return esc(actor?.display_name ?? actor?.nickname ?? 'Someone');
}

function repoLink(repo: z.infer<typeof repository>): string {
  return link(repo.full_name, repo.links?.html?.href);
}

const MAX_CHANGES = 5;
const MAX_COMMITS = 10;

function refWord(type: string | null | undefined): string {
  return type === 'tag' ? 'tag' : 'branch';
}

function changeText(actor: string, repo: string, c: z.infer<typeof change>): string {
  const target = c.new ?? c.old;
  if (!target) throw new Unrecognised('Not a Bitbucket push: a change has neither "new" nor "old".', 'push.changes');
  const what = `${refWord(target.type)} ${code(target.name)}`;
  if (!c.new) return `${actor} deleted ${what} in ${repo}.`;
  const commits = c.commits ?? [];
  const n = commits.length;
  const many = n > 0 ? `${c.truncated ? 'more than ' : ''}${count(n, 'commit')}` : '';
  if (c.new.type === 'tag') return `${actor} ${c.old ? 'moved' : 'pushed'} ${what} to ${repo}.`;
  const compareUrl = c.old ? linkDestination(c.links?.html?.href) : null;
  const compare = compareUrl === null ? '' : ` ([compare](${compareUrl}))`;
  const head = c.old
    ? `${actor} ${c.forced ? 'force-pushed' : 'pushed'} ${many ? `${many} ` : ''}to ${code(c.new.name)} in ${repo}${compare}`
    : `${actor} created ${what} in ${repo}${many ? ` with ${many}` : ''}`;
  if (n === 0) return `${head}.`;
  const lines = commits.slice(0, MAX_COMMITS).map((k) => {
    const sha = shortSha(k.hash) ?? (k.hash.replace(/[^0-9A-Za-z]/g, '').slice(0, 7) || '?');
    return `- ${linkMarkdown(code(sha), k.links?.html?.href)} ${esc((k.message ?? '').split('\n', 1)[0] ?? '', 100)}`;
  });
  if (n > MAX_COMMITS || c.truncated) lines.push('- \u2026');
  return `${head}:\n${lines.join('\n')}`;
}

function pushMessage(e: z.infer<typeof pushEvent>): Translation {
  const actor = actorOf(e.actor);
  const repo = repoLink(e.repository);
  const changes = e.push.changes;
  const parts = changes.slice(0, MAX_CHANGES).map((c) => changeText(actor, repo, c));
  if (changes.length > MAX_CHANGES) parts.push(`\u2026 and ${count(changes.length - MAX_CHANGES, 'more ref')}.`);
  const first = changes[0]?.new ?? changes[0]?.old;
  const meta = metadata('bitbucket:repo:push', [
    ['repo', e.repository.full_name],
    [first?.type === 'tag' ? 'tag' : 'branch', first?.name],
  ]);
  return message(parts.join('\n\n'), meta);
}

function pullRequestMessage(eventKey: string, e: z.infer<typeof pullRequestEvent>): Translation {
  const pr = e.pullrequest;
  const actor = actorOf(e.actor);
  const subject = `pull request ${link(`#${pr.id} ${pr.title}`, pr.links?.html?.href)} in ${repoLink(e.repository)}`;
  const branches = `(${code(pr.source.branch.name)} \u2192 ${code(pr.destination.branch.name)})`;
  const meta = metadata(`bitbucket:${eventKey}`, [
    ['repo', e.repository.full_name],
    ['pr', pr.id],
    ['branch', pr.destination.branch.name],
  ]);
  const withText = (head: string, text: string | null | undefined): string => {
    const quoted = quote(text ?? '');
    return quoted === '' ? `${head}.` : `${head}:\n\n${quoted}`;
  };
  switch (eventKey) {
    case 'pullrequest:created':
      return message(withText(`${actor} opened ${subject} ${branches}`, pr.description), meta);
    case 'pullrequest:fulfilled':
      return message(`${actor} merged ${subject} ${branches}.`, meta);
    case 'pullrequest:rejected':
      return message(withText(`${actor} declined ${subject}`, pr.reason), meta);
    default:
      return ignored(`Bitbucket event "${eventKey}" is not shown.`);
  }
}

function commentMessage(e: z.infer<typeof commentEvent>): Translation {
  const pr = e.pullrequest;
  const path = e.comment.inline?.path;
  const head =
    `${actorOf(e.actor)} ${linkMarkdown('commented', e.comment.links?.html?.href)} on pull request ` +
    `${link(`#${pr.id} ${pr.title}`, pr.links?.html?.href)} in ${repoLink(e.repository)}${path ? ` (on ${code(path, 200)})` : ''}`;
  const quoted = quote(e.comment.content?.raw ?? '');
  const meta = metadata('bitbucket:pullrequest:comment_created', [
    ['repo', e.repository.full_name],
    ['pr', pr.id],
    ['branch', pr.destination.branch.name],
  ]);
  return message(quoted === '' ? `${head}.` : `${head}:\n\n${quoted}`, meta);
}

const BUILD_STATES: Readonly<Record<string, { icon: string; phrase: string }>> = {
  SUCCESSFUL: { icon: '\u2705 ', phrase: 'succeeded' },
  FAILED: { icon: '\u274c ', phrase: 'failed' },
  INPROGRESS: { icon: '', phrase: 'started' },
  STOPPED: { icon: '', phrase: 'was stopped' },
};

function commitStatusMessage(eventKey: string, e: z.infer<typeof commitStatusEvent>): Translation {
  const status = e.commit_status;
  const state = status.state.toUpperCase();
  const { icon, phrase } = BUILD_STATES[state] ?? { icon: '', phrase: `is ${esc(status.state, 30)}` };
  // The commit's hash: its own field, else the end of its API link.
  const hash = status.commit?.hash ?? /\/commit\/([0-9a-f]{7,40})(?:[/?#]|$)/i.exec(status.links?.commit?.href ?? '')?.[1];
  const sha = shortSha(hash);
  const what = [status.refname ? ` on ${code(status.refname)}` : '', sha ? ` for commit ${code(sha)}` : ''].join('');
  const name = status.name?.trim() || status.key?.trim() || 'Build';
  const head = `${icon}Build ${link(name, status.url)} ${phrase}${what} in ${repoLink(e.repository)}`;
  const description = esc(status.description ?? '', 200);
  const meta = metadata(`bitbucket:${eventKey}`, [
    ['repo', e.repository.full_name],
    ['state', state],
    ['key', status.key],
    ['branch', status.refname],
    ['commit', sha],
  ]);
  return withDetails(message(description === '' ? `${head}.` : `${head}: ${description}`, meta), { level: bitbucketBuildLevel(state) });
}

const EVENT_KEY = /^[a-z_]{1,40}(?::[a-z_]{1,40}){1,3}$/;

export function translateBitbucket(post: NativePost): Translation {
  const eventKey = post.header('X-Event-Key');
  if (eventKey === undefined || !EVENT_KEY.test(eventKey)) {
    throw new Unrecognised(
      'A bitbucket webhook takes Bitbucket Cloud deliveries: an X-Event-Key header (repo:push, pullrequest:created, …) with its JSON payload, or the generic {"message", "metadata"} body.',
      'X-Event-Key',
    );
  }
  const what = `Bitbucket webhook payload (${eventKey})`;
  switch (eventKey) {
    case 'repo:push':
      return pushMessage(expectShape(pushEvent, post.json, what));
    case 'pullrequest:created':
    case 'pullrequest:fulfilled':
    case 'pullrequest:rejected':
      return pullRequestMessage(eventKey, expectShape(pullRequestEvent, post.json, what));
    case 'pullrequest:comment_created':
      return commentMessage(expectShape(commentEvent, post.json, what));
    case 'repo:commit_status_created':
    case 'repo:commit_status_updated':
      return commitStatusMessage(eventKey, expectShape(commitStatusEvent, post.json, what));
    default:
      return ignored(`Bitbucket event "${eventKey}" is not shown.`);
  }
}
