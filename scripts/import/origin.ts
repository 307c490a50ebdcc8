/** Where a record was read: its file, its line in an NDJSON file, its place in a file's `conversations`. */
export interface Origin {
  file: string;
  line?: number;
  index?: number;
}

export function formatOrigin({ file, line, index }: Origin): string {
  return `${file}${line === undefined ? '' : `:${line}`}${index === undefined ? '' : ` conversations[${index}]`}`;
}
