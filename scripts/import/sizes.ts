/** Numbers as the importer's messages show them, and byte sizes as `--max-request-bytes` takes them (1024-based K and M). */

/** A count with thousands separators: `12,500`. */
export const fmt = (n: number): string => n.toLocaleString('en-US');

const UNITS: Record<string, number> = { '': 1, k: 1024, kib: 1024, m: 1024 * 1024, mib: 1024 * 1024 };

/** `32768`, `32K`, `32KiB`, `5M`, `5MiB` (any case) in bytes; undefined for anything else. */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+)\s*([a-z]*)$/i.exec(text.trim());
  const unit = UNITS[match?.[2]?.toLowerCase() ?? ''];
  return match && unit !== undefined ? Number(match[1]) * unit : undefined;
}

/** In the largest unit that writes it whole: `5 MiB`, `32 KiB`, `33,000 bytes`. */
export function formatSize(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${fmt(bytes)} bytes`;
}

/** A value for `--max-request-bytes` no larger than `bytes`: rounded down to whole KiB, as a user would type it. */
export function sizeArgument(bytes: number): string {
  return bytes >= 1024 ? `${Math.floor(bytes / 1024)}K` : String(bytes);
}
