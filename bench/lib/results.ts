/** Result rows, the printed table and progress lines. */

export interface ResultRow {
  scenario: string;
  metric: string;
  value: number;
  unit: string;
  peer?: string;
  peerValue?: number;
  /** value / peerValue. */
  ratio?: number;
  /** Target from issue 4, as text (e.g. "<= 50"), when the row has one. */
  target?: string;
  /** Whether the row meets its target. */
  met?: boolean;
  note?: string;
}

export class Results {
  readonly rows: ResultRow[] = [];

  add(row: ResultRow): ResultRow {
    if (row.peerValue !== undefined && row.ratio === undefined && row.peerValue !== 0 && Number.isFinite(row.value)) {
      row.ratio = row.value / row.peerValue;
    }
    this.rows.push(row);
    progress(
      `${row.scenario} · ${row.metric}: ${fmt(row.value)} ${row.unit}${row.peer ? ` (${row.peer}: ${fmt(row.peerValue)}${row.ratio !== undefined ? `, ratio ${fmt(row.ratio)}` : ''})` : ''}${row.target ? ` target ${row.target}: ${row.met ? 'met' : 'MISSED'}` : ''}`,
    );
    return row;
  }

  table(): string {
    const header = ['scenario', 'metric', 'value', 'unit', 'peer', 'peer value', 'ratio', 'target'];
    const body = this.rows.map((r) => [
      r.scenario,
      r.metric,
      fmt(r.value),
      r.unit,
      r.peer ?? '',
      r.peerValue === undefined ? '' : fmt(r.peerValue),
      r.ratio === undefined ? '' : fmt(r.ratio),
      r.target === undefined ? '' : `${r.target} ${r.met ? '✓' : '✗'}`,
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
    const line = (cells: string[]) =>
      cells.map((c, i) => (i >= 2 && i !== 3 && i !== 4 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
    return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
  }

  markdown(): string {
    const rows = this.rows.map(
      (r) =>
        `| ${r.scenario} | ${r.metric} | ${fmt(r.value)} | ${r.unit} | ${r.peer ?? ''} | ${r.peerValue === undefined ? '' : fmt(r.peerValue)} | ${r.ratio === undefined ? '' : fmt(r.ratio)} | ${r.target === undefined ? '' : `${r.target} ${r.met ? '✓' : '✗'}`} |`,
    );
    return ['| scenario | metric | value | unit | peer | peer value | ratio | target |', '|---|---|--:|---|---|--:|--:|---|', ...rows].join(
      '\n',
    );
  }
}

export function fmt(n: number | undefined): string {
  if (n === undefined || Number.isNaN(n)) return '—';
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  if (abs >= 1000) return Math.round(n).toLocaleString('en-US');
  if (abs >= 100) return n.toFixed(0);
  if (abs >= 10) return n.toFixed(1);
  if (abs >= 1) return n.toFixed(2);
  if (abs === 0) return '0';
  return n.toPrecision(2);
}

const started = Date.now();

/** A progress line on stderr, with the time since the run began. */
export function progress(text: string): void {
  const s = (Date.now() - started) / 1000;
  const mm = Math.floor(s / 60);
  const ss = (s - mm * 60).toFixed(0).padStart(2, '0');
  process.stderr.write(`[bench ${mm}:${ss}] ${text}\n`);
}
