/** Progress on stderr while an import runs: a line redrawn in place on a terminal, a line every few seconds otherwise. */
import { fmt } from './sizes';
import type { Tally } from './tally';

export class Progress {
  private readonly tty = process.stderr.isTTY === true;
  private readonly timer: NodeJS.Timeout;
  private drawn = false;

  constructor(private readonly tally: Tally) {
    this.timer = setInterval(() => this.draw(), this.tty ? 250 : 5_000);
    // Progress never keeps the process alive on its own.
    this.timer.unref();
  }

  private line(): string {
    const t = this.tally;
    const done = t.dryRun ? `${fmt(t.records)} conversations read` : `${fmt(t.stored)} conversations sent`;
    const rate = Math.round((t.dryRun ? t.records : t.stored) / Math.max(t.seconds, 0.001));
    const retries = t.retries > 0 ? `, ${fmt(t.retries)} retries` : '';
    const refused = t.refusedCount > 0 ? `, ${fmt(t.refusedCount)} refused` : '';
    return `import: ${fmt(t.filesRead)}/${fmt(t.filesTotal)} files, ${done} (${fmt(rate)}/s)${refused}${retries}`;
  }

  private draw(): void {
    if (this.tty) process.stderr.write(`\r${this.line()}\u001b[K`);
    else process.stderr.write(`${this.line()}\n`);
    this.drawn = true;
  }

  stop(): void {
    clearInterval(this.timer);
    if (this.tty && this.drawn) process.stderr.write('\r\u001b[K');
  }
}
