import type { MessageLevel } from '../protocol';

/**
 * How urgent a tool's event is, from the payload alone (docs/integrations.md, "Levels"). Undefined
 * means nothing stands out: the message is `info`.
 */

/** A GitHub check run, check suite or workflow run, by its `conclusion`. */
export function conclusionLevel(conclusion: string | null | undefined): MessageLevel | undefined {
  switch (conclusion?.toLowerCase()) {
    case 'success':
      return 'success';
    case 'failure':
    case 'timed_out':
    case 'startup_failure':
      return 'critical';
    case 'action_required':
      return 'warning';
    default:
      // cancelled, skipped, neutral, stale: nobody needs to act.
      return undefined;
  }
}

/** A GitHub commit status or deployment status, by its `state`. */
export function stateLevel(state: string): MessageLevel | undefined {
  switch (state.toLowerCase()) {
    case 'success':
      return 'success';
    case 'failure':
    case 'error':
      return 'critical';
    default:
      return undefined;
  }
}

/** A finished Jenkins build, by its `status`. UNSTABLE: built, but tests failed. */
export function jenkinsLevel(status: string | null): MessageLevel | undefined {
  switch (status?.toUpperCase()) {
    case 'SUCCESS':
      return 'success';
    case 'FAILURE':
      return 'critical';
    case 'UNSTABLE':
      return 'warning';
    default:
      return undefined;
  }
}

/** A Bitbucket build (commit status), by its `state`. */
export function bitbucketBuildLevel(state: string): MessageLevel | undefined {
  switch (state.toUpperCase()) {
    case 'SUCCESSFUL':
      return 'success';
    case 'FAILED':
      return 'critical';
    default:
      // INPROGRESS, STOPPED
      return undefined;
  }
}

/**
 * A Jira issue, by its priority's name: the highest ones of Jira's schemes (Highest; Blocker and
 * Critical of the older one; P0/P1; Urgent) are critical, the next (High, Major, P2) warning.
 */
export function jiraPriorityLevel(priority: string | null): MessageLevel | undefined {
  const name = priority?.trim().toLowerCase() ?? '';
  if (/^(?:highest|blocker|critical|urgent|p0|p1)\b/.test(name)) return 'critical';
  if (/^(?:high|major|p2)\b/.test(name)) return 'warning';
  return undefined;
}

/** A Slack attachment's or Discord embed's colour, as slack.ts's `level` reads it. */
export function colourLevel(colour: 'good' | 'warning' | 'danger' | null): MessageLevel | undefined {
  return colour === 'danger' ? 'critical' : colour === 'warning' ? 'warning' : colour === 'good' ? 'success' : undefined;
}

/** Mattermost's message priority: urgent is critical, important a warning. */
export function mattermostPriorityLevel(priority: string | undefined): MessageLevel | undefined {
  return priority === 'urgent' ? 'critical' : priority === 'important' ? 'warning' : undefined;
}

/** The most urgent of several levels (undefined when none is given). */
export function mostUrgent(levels: ReadonlyArray<MessageLevel | undefined>): MessageLevel | undefined {
  const order: readonly MessageLevel[] = ['critical', 'warning', 'success', 'info'];
  return order.find((l) => levels.includes(l));
}
