/** A JSON parameter's budget: D1 caps a bound string at 2 MB, and the chunks stay well below it. */
export const JSON_PARAM_MAX_CHARS = 900_000;

/**
 * Rows for D1 as JSON array texts of at most `maxChars` characters each, in order, for statements that
 * read one JSON parameter with json_each (a bound parameter costs D1 far more than a byte of JSON, and
 * D1 caps one at 2 MB). Rows are JSON texts already, or turned into them by `serialise`. A row longer
 * than the budget travels alone; no rows, no chunks.
 */
export function jsonChunks(rows: readonly string[], maxChars: number): string[];
export function jsonChunks<T>(rows: readonly T[], maxChars: number, serialise: (row: T) => string): string[];
export function jsonChunks<T>(rows: readonly T[], maxChars: number, serialise?: (row: T) => string): string[] {
  const out: string[] = [];
  let parts: string[] = [];
  // Characters of `[parts…]` so far.
  let chars = 2;
  for (const row of rows) {
    const text = serialise ? serialise(row) : (row as string);
    if (parts.length > 0 && chars + 1 + text.length > maxChars) {
      out.push(`[${parts.join(',')}]`);
      parts = [];
      chars = 2;
    }
    chars += parts.length > 0 ? 1 + text.length : text.length;
    parts.push(text);
  }
  if (parts.length > 0) out.push(`[${parts.join(',')}]`);
  return out;
}
