import type { DeliveryEntry, Problem } from './api';

/** "just now", "3 min ago", "5 h ago", then the local date and time. */
export function whenText(iso: string, now = new Date()): string {
  const at = new Date(iso);
  const seconds = Math.round((now.getTime() - at.getTime()) / 1000);
  if (Number.isNaN(seconds)) return iso;
  if (seconds < 45) return 'just now';
  if (seconds < 3600) return `${Math.max(1, Math.round(seconds / 60))} min ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h ago`;
  return at.toLocaleString();
}

/** A log entry's time: the clock time today, else the date and time (the relative time goes in its title). */
export function clockText(iso: string, now = new Date()): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return at.toDateString() === now.toDateString() ? at.toLocaleTimeString() : at.toLocaleString();
}

/** The API's message first (it names the field), then status and code, and the correlation id to quote. */
export function problemText(problem: Problem): string {
  const parts = [problem.message];
  const missing = problem.fields.filter((f) => !problem.message.includes(f));
  if (missing.length > 0 && problem.code !== 'conflict') parts.push(`(${missing.join(', ')})`);
  if (problem.status !== undefined) parts.push(`— ${problem.status}${problem.code ? ` ${problem.code}` : ''}`);
  if (problem.contextId) parts.push(`· ref ${problem.contextId}`);
  return parts.join(' ');
}

export function deliveryError(entry: DeliveryEntry): string {
  if (entry.errorCode === null && entry.errorMessage === null) return '';
  return [entry.errorCode, entry.errorMessage].filter((s) => s !== null && s !== '').join(': ');
}

export function statusClass(status: number): string {
  return status >= 200 && status < 300 ? 'ok' : 'refused';
}

/** A duration in seconds as hours and minutes where it divides evenly ("24 h", "1 h 30 min", "5 min"), else seconds. */
export function durationText(seconds: number): string {
  if (seconds % 60 !== 0) return `${seconds} s`;
  const hours = Math.floor(seconds / 3600);
  const minutes = (seconds % 3600) / 60;
  return [hours > 0 && `${hours} h`, minutes > 0 && `${minutes} min`].filter(Boolean).join(' ') || '0 s';
}
