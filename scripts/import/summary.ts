/** The summary printed when an import ends (stdout): its figures, then what was left out and why. */
import { formatOrigin } from './origin';
import type { Entry, PackLimits } from './pack';
import { fmt, sizeArgument } from './sizes';
import type { Tally } from './tally';

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
const plural = (n: number, one: string, many = `${one}s`): string => `${fmt(n)} ${n === 1 ? one : many}`;

function listed<T>(title: string, total: number, items: readonly T[], line: (item: T) => string): string[] {
  if (total === 0) return [];
  const shown = items.map((item) => `  ${line(item)}`);
  const more = total - shown.length;
  return [`${title} (${fmt(total)}):`, ...shown, ...(more > 0 ? [`  and ${fmt(more)} more`] : [])];
}

/** A request a dry run would send: its size and where its records come from. */
export function packedLine(n: number, entries: readonly Entry[], bytes: number): string {
  const from = `${formatOrigin(entries[0]!.origin)} … ${formatOrigin(entries.at(-1)!.origin)}`;
  return `request ${fmt(n)}: ${plural(entries.length, 'conversation')}, ${fmt(bytes)} bytes (${from})`;
}

function splits(t: Tally): string {
  return t.splits > 0 ? `, ${plural(t.splits, 'request')} answered 413 and split in two` : '';
}

/**
 * After splits, a byte limit that would have spared them: every split uploads its request again, so behind a
 * proxy with a small body limit an import sends several times its bytes. What was stored got through, so
 * requests no larger than the largest of them should too.
 */
function nextTime(t: Tally): string[] {
  if (t.splits === 0 || t.largestStored === 0) return [];
  const largest = `the largest request stored was ${fmt(t.largestStored)} bytes`;
  return [
    `next time      --max-request-bytes ${sizeArgument(t.largestStored)} (${largest}): requests packed within it pass without 413s and splits`,
  ];
}

export function summaryLines(t: Tally, limits: PackLimits): string[] {
  const badFiles = t.badFiles.length > 0 ? ` (${fmt(t.badFiles.length)} not imported, listed below)` : '';
  const lines = [`files          ${fmt(t.filesRead)} read${badFiles}`];
  if (t.dryRun) {
    lines.push(
      `conversations  ${fmt(t.records)} read: ${fmt(t.records - t.refusedCount)} to send, ${fmt(t.refusedCount)} refused here`,
      `requests       ${fmt(t.requests)} would be sent: ${mib(t.bytes)} (the largest ${fmt(t.largestRequest)} bytes), each within ${plural(limits.records, 'conversation')} and ${fmt(limits.bytes)} bytes`,
      'dry run: nothing was sent',
    );
  } else {
    const skipped = [...t.skippedMetrics].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    lines.push(
      `conversations  ${fmt(t.records)} read: ${fmt(t.stored)} stored or counted, ${fmt(t.refusedCount)} refused, ${fmt(t.notSent)} not sent`,
      `observations   ${fmt(t.observations)} stored, ${fmt(t.duplicates)} duplicates`,
      `without observations  ${plural(t.withoutObservations, 'conversation')} (no metric of the catalogue: nothing stored)`,
      `skipped metrics  ${skipped.length === 0 ? 'none' : skipped.map(([name, n]) => `${name} ${fmt(n)}`).join(', ')}`,
      `requests       ${fmt(t.requests)} sent (${mib(t.bytes)}), ${plural(t.retries, 'retry', 'retries')}${splits(t)}, ${fmt(t.failedRequests)} failed`,
      ...nextTime(t),
    );
  }
  if (t.refusedFile) {
    const fix = t.refusedFile.written > 0 ? ': fix them and import that file again' : '';
    lines.push(`refused file   ${plural(t.refusedFile.written, 'record')} written to ${t.refusedFile.path}${fix}`);
  }
  const rate = Math.round((t.dryRun ? t.records : t.stored) / Math.max(t.seconds, 0.001));
  lines.push(`took ${t.seconds.toFixed(1)} s (${fmt(rate)} conversations/s)`);
  lines.push(
    ...listed('not imported', t.badFiles.length, t.badFiles, (f) => `${f.file}: ${f.message}`),
    ...listed(
      'refused',
      t.refusedCount,
      t.refusals,
      (r) =>
        `${formatOrigin(r.origin)}  ${r.conversationId ?? '(no conversationId)'}  ${r.message}${r.fieldName ? ` [${r.fieldName}]` : ''}`,
    ),
    ...listed(
      'failed requests',
      t.failedRequests,
      t.failures,
      (f) => `${plural(f.records, 'conversation')} (${formatOrigin(f.first)} … ${formatOrigin(f.last)}) not stored: ${f.message}`,
    ),
  );
  if (t.stopped !== undefined) lines.push(`stopped: ${t.stopped}`);
  return lines;
}
