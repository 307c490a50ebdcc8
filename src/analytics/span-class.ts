/**
 * Span classes of conversations: a conversation's span (last emit − first emit, in ms) falls in
 * class c = its bit length, so class c holds spans in [2^(c−1), 2^c − 1] (class 0: span 0).
 *
 * Why: raw reads find conversations by first emit, and a conversation can emit long after it starts,
 * so a read must start one span before the interval. With one global maximum span, a single
 * far-flung conversation (emits in 1971 and 2999) made every raw read scan the whole table. Per
 * class, each read scans first_emit in [start − that class's longest span, end) through the index
 * (span_class, first_emit): an outlier only widens the scan of its own class, which holds it alone.
 * The window of a class is at most twice as wide as any span in it.
 *
 * migrations/0006_span_classes.sql computes the same classes in SQL (spanClassSql).
 */

/** Spans reach ~3.2e13 ms (emits lie in 1971–2999): below 2^45. */
export const MAX_SPAN_CLASS = 45;

export function spanClass(spanMs: number): number {
  let c = 0;
  while (c < MAX_SPAN_CLASS && spanMs >= 2 ** c) c++;
  return c;
}

/** spanClass in SQL for an integer expression: its bit length as a sum of comparisons (SQLite has no log2 everywhere). */
export function spanClassSql(span: string): string {
  return Array.from({ length: MAX_SPAN_CLASS }, (_, k) => `(${span} >= ${2 ** k})`).join(' + ');
}

/** meta keys of the classes present, whose values are the longest span seen in the class. */
export const SPAN_CLASS_KEY_PREFIX = 'span_class:';
