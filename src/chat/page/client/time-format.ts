/** How the page words times: relative for the last hour, a clock time after, and a label per day. */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A local calendar day, `YYYY-MM-DD`: messages on the same key share one day separator. */
export function dayKey(at: Date): string {
  const month = String(at.getMonth() + 1).padStart(2, '0');
  const day = String(at.getDate()).padStart(2, '0');
  return `${at.getFullYear()}-${month}-${day}`;
}

/** "Today", "Yesterday", or the date ("Monday 23 November 2026"; the year only when it is not this one). */
export function dayLabel(at: Date, now: Date): string {
  const today = dayKey(now);
  if (dayKey(at) === today) return 'Today';
  const yesterday = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1);
  if (dayKey(at) === dayKey(yesterday)) return 'Yesterday';
  return at.toLocaleDateString(undefined, {
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    ...(at.getFullYear() === now.getFullYear() ? {} : { year: 'numeric' }),
  });
}

/**
 * One formatter for every clock time: `toLocaleTimeString` with options builds a new ICU formatter
 * per call, which a page of 100 older messages would pay 100 times (bench/FINDINGS.md).
 */
let clock: Intl.DateTimeFormat | undefined;

/** "just now", "3 min ago" within the hour, then the clock time (the day separator says which day). */
export function messageTime(at: Date, now: Date): string {
  const age = now.getTime() - at.getTime();
  if (age < MINUTE) return 'just now';
  if (age < HOUR) return `${Math.floor(age / MINUTE)} min ago`;
  clock ??= new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
  return clock.format(at);
}

/** Whether `messageTime` may still change for this age (it settles on the clock time after an hour). */
export function timeStillMoves(at: Date, now: Date): boolean {
  return now.getTime() - at.getTime() < HOUR;
}

/** "just now", "4 min ago", "2 h ago", "3 days ago": how long since the last message. */
export function ago(at: Date, now: Date): string {
  const age = Math.max(0, now.getTime() - at.getTime());
  if (age < MINUTE) return 'just now';
  if (age < HOUR) return `${Math.floor(age / MINUTE)} min ago`;
  if (age < 48 * HOUR) return `${Math.floor(age / HOUR)} h ago`;
  return `${Math.floor(age / (24 * HOUR))} days ago`;
}
