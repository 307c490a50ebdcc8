import { z } from 'zod';
import { code, link, metadata, shortSha, strong } from './text';
import { jenkinsLevel } from './level';
import { expectShape, ignored, message, Unrecognised, withDetails, type NativePost, type Translation } from './types';

/**
 * The Jenkins Notification plugin (plugins.jenkins.io/notification), Format JSON: `{name, url,
 * build: {full_url, number, phase, status, url, scm: {url, branch, commit}, …}}`, sent at the phases
 * the job's endpoint is set to (QUEUED, STARTED, COMPLETED, FINALIZED).
 */

const optStr = z.string().nullish();
const notification = z.object({
  name: z.string().min(1),
  display_name: optStr,
  url: optStr,
  build: z.object({
    number: z.number().int(),
    phase: z.string().min(1),
    status: optStr,
    full_url: optStr,
    scm: z.object({ branch: optStr, commit: optStr }).nullish(),
  }),
});

const STATUS_ICONS: Readonly<Record<string, string>> = {
  SUCCESS: '\u2705 ',
  FAILURE: '\u274c ',
  UNSTABLE: '\u26a0\ufe0f ',
};

const PHASES: Readonly<Record<string, string>> = { STARTED: 'started', COMPLETED: 'completed', FINALIZED: 'finished' };

export function translateJenkins(post: NativePost): Translation {
  const body = post.json;
  const looksLikeIt = body !== null && typeof body === 'object' && 'build' in body && 'name' in body;
  if (!looksLikeIt) {
    throw new Unrecognised(
      'A jenkins webhook takes the Notification plugin\'s JSON ({"name", "url", "build": {"number", "phase", "status", "full_url", "scm"}}), or the generic {"message", "metadata"} body.',
    );
  }
  const n = expectShape(notification, body, 'Jenkins Notification plugin payload');
  const phase = n.build.phase.toUpperCase();
  const verb = PHASES[phase];
  if (verb === undefined)
    return ignored(`Jenkins ${phase.slice(0, 30)} notifications are not shown (only STARTED, COMPLETED and FINALIZED).`);

  const status = phase === 'STARTED' ? null : (n.build.status ?? null);
  const icon = status ? (STATUS_ICONS[status.toUpperCase()] ?? '') : '';
  const build = link(`${n.name} #${n.build.number}`, n.build.full_url);
  const result = status ? `: ${strong(status, 30)}` : '';
  const scm = n.build.scm;
  const sha = shortSha(scm?.commit);
  const details = [scm?.branch ? `branch ${code(scm.branch)}` : '', sha ? `commit ${code(sha)}` : ''].filter(Boolean).join(', ');
  const markdown = `${icon}Build ${build} ${verb}${result}${details ? ` (${details})` : ''}.`;
  const meta = metadata(`jenkins:${phase.toLowerCase()}`, [
    ['job', n.name],
    ['build', n.build.number],
    ['status', status],
    ['branch', scm?.branch],
  ]);
  return withDetails(message(markdown, meta), { level: jenkinsLevel(status) });
}
