const encoder = new TextEncoder();

/** A constant piece of JSON text, encoded once (ASCII or not). */
export function jsonPiece(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * JSON text written straight into a growing UTF-8 buffer: an answer is sent as these bytes.
 *
 * Why not strings: an aggregate answer can hold tens of thousands of metric entries (query c of the
 * bench: 1.9 MB). Built as strings, each entry is a handful of short-lived pieces, then a rope that
 * must be flattened, then encoded to UTF-8 again for the response; in workerd that was the largest
 * share of the Worker's own time for such a query. Here each number and piece is written once, in
 * place, and the response body is the buffer.
 *
 * The writer does no JSON escaping itself: `text` takes JSON that is already valid (from
 * JSON.stringify or a constant), and `number` writes what JSON.stringify would.
 */
export class JsonBytes {
  private buf: Uint8Array<ArrayBuffer>;
  private len = 0;

  /**
   * `maxBytes`: the text may never grow past it; a write that would throws `overflow()`, so an answer
   * too large to send is refused as soon as it passes the bound, and the buffer never outgrows it.
   */
  constructor(
    initialBytes = 64 * 1024,
    private readonly maxBytes = Number.POSITIVE_INFINITY,
    private readonly overflow: () => Error = () => new RangeError(`JSON text longer than ${maxBytes} bytes`),
  ) {
    this.buf = new Uint8Array(Math.min(initialBytes, maxBytes));
  }

  /** Bytes written so far; with `rewind`, this drops what a part wrote when it turns out empty. */
  get length(): number {
    return this.len;
  }

  rewind(length: number): void {
    this.len = length;
  }

  /** A pre-encoded piece. */
  piece(bytes: Uint8Array): void {
    const n = bytes.length;
    if (this.len + n > this.buf.length) this.grow(n);
    // A loop for short pieces (set's call costs more than their copy), set for long ones (an interval's ~55 bytes).
    const buf = this.buf;
    if (n >= 24) {
      buf.set(bytes, this.len);
      this.len += n;
      return;
    }
    let at = this.len;
    for (let i = 0; i < n; i++) buf[at++] = bytes[i]!;
    this.len = at;
  }

  /** One ASCII character, by code. */
  char(code: number): void {
    if (this.len === this.buf.length) this.grow(1);
    this.buf[this.len++] = code;
  }

  /** JSON text (already escaped), encoded as UTF-8. */
  text(json: string): void {
    const n = json.length;
    this.room(n);
    const buf = this.buf;
    let at = this.len;
    for (let i = 0; i < n; i++) {
      const code = json.charCodeAt(i);
      if (code >= 0x80) {
        // Not ASCII: let the encoder do the rest (up to 3 bytes per UTF-16 unit).
        this.len = at;
        this.room(3 * (n - i));
        this.len += encoder.encodeInto(json.slice(i), this.buf.subarray(this.len)).written;
        return;
      }
      buf[at++] = code;
    }
    this.len = at;
  }

  /** A number as JSON.stringify writes it (integers without a string in between). */
  number(value: number): void {
    // Most numbers of an answer (counts, ms) are non-negative and below 2^31: integer arithmetic,
    // digits counted by comparison, no Math calls (query c writes ~90,000 of them).
    if ((value | 0) === value && value >= 0) {
      let n = value | 0;
      const digits =
        n < 10
          ? 1
          : n < 100
            ? 2
            : n < 1000
              ? 3
              : n < 10000
                ? 4
                : n < 100000
                  ? 5
                  : n < 1000000
                    ? 6
                    : n < 10000000
                      ? 7
                      : n < 100000000
                        ? 8
                        : n < 1000000000
                          ? 9
                          : 10;
      if (this.len + digits > this.buf.length) this.grow(digits);
      const buf = this.buf;
      let at = this.len + digits;
      this.len = at;
      do {
        const q = (n / 10) | 0;
        buf[--at] = 48 + n - q * 10;
        n = q;
      } while (n > 0);
      return;
    }
    if (!Number.isSafeInteger(value)) {
      this.text(JSON.stringify(value));
      return;
    }
    if (value >= 0 && value < 10) {
      this.char(48 + value);
      return;
    }
    let n = value;
    let digits = 1;
    for (let p = 10; p <= Math.abs(n); p *= 10) digits++;
    this.room(n < 0 ? digits + 1 : digits);
    const buf = this.buf;
    if (n < 0) {
      buf[this.len++] = 45; // '-'
      n = -n;
    }
    let at = this.len + digits;
    this.len = at;
    do {
      const q = Math.floor(n / 10);
      buf[--at] = 48 + (n - q * 10);
      n = q;
    } while (n > 0);
  }

  /** The text written: a view of the buffer, valid until the next write. */
  bytes(): Uint8Array<ArrayBuffer> {
    return this.buf.subarray(0, this.len);
  }

  private room(more: number): void {
    if (this.len + more > this.buf.length) this.grow(more);
  }

  private grow(more: number): void {
    const needed = this.len + more;
    if (needed > this.maxBytes) throw this.overflow();
    let size = Math.max(1, this.buf.length * 2);
    while (size < needed) size *= 2;
    size = Math.min(size, this.maxBytes);
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
}
