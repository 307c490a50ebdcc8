/**
 * Seeded randomness for the simulator. sfc32 (Chris Doty-Humphrey's Small Fast Counting generator):
 * 128 bits of state, passes PractRand, and runs on 32-bit integer ops only, so the same seed gives the
 * same stream in Node and in workerd. Math.random is never used.
 */

/** murmur3's 32-bit finaliser: spreads every input bit over the output. */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** FNV-1a over a string, for naming independent streams ("arrivals", "agents", ...). */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function hex8(x: number): string {
  return HEX[(x >>> 24) & 0xff]! + HEX[(x >>> 16) & 0xff]! + HEX[(x >>> 8) & 0xff]! + HEX[x & 0xff]!;
}

function hex4(x: number): string {
  return HEX[(x >>> 8) & 0xff]! + HEX[x & 0xff]!;
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareNormal: number | null = null;

  /**
   * Streams are keyed by up to three 32-bit words (e.g. seed low bits, seed high bits, conversation index);
   * different keys give unrelated streams.
   */
  constructor(k0: number, k1 = 0, k2 = 0) {
    this.a = mix32((k0 ^ 0x9e3779b9) >>> 0);
    this.b = mix32((k1 + 0x7f4a7c15) >>> 0) ^ this.a;
    this.c = mix32((k2 ^ 0x2545f491) >>> 0) ^ mix32(this.b);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.nextU32();
  }

  /** Seeds a stream from a user seed (any safe integer ≥ 0), a stream name and an index. */
  static stream(seed: number, name: string, index = 0): Rng {
    const lo = seed >>> 0;
    const hi = Math.floor(seed / 0x1_0000_0000) >>> 0;
    return new Rng(lo, hashString(name) ^ mix32(hi), index);
  }

  nextU32(): number {
    const t0 = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    const t = (t0 + this.d) | 0;
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.nextU32() / 0x1_0000_0000;
  }

  /** Uniform in (0, 1]: safe under a logarithm. */
  floatOpenZero(): number {
    return (this.nextU32() + 1) / 0x1_0000_0000;
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** Uniform in [lo, hi). */
  between(lo: number, hi: number): number {
    return lo + (hi - lo) * this.float();
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** Index drawn with probability proportional to its weight. */
  weighted(weights: readonly number[], total?: number): number {
    let r = this.float() * (total ?? weights.reduce((s, w) => s + w, 0));
    for (let i = 0; i < weights.length; i++) {
      const w = weights[i]!;
      if (r < w) return i;
      r -= w;
    }
    return weights.length - 1;
  }

  exponential(mean: number): number {
    return -mean * Math.log(this.floatOpenZero());
  }

  normal(): number {
    if (this.spareNormal !== null) {
      const z = this.spareNormal;
      this.spareNormal = null;
      return z;
    }
    const r = Math.sqrt(-2 * Math.log(this.floatOpenZero()));
    const theta = 2 * Math.PI * this.float();
    this.spareNormal = r * Math.sin(theta);
    return r * Math.cos(theta);
  }

  /** Log-normal with the given median; sigma is the spread of the underlying normal. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** A random (version 4 shaped) UUID drawn from this stream. */
  uuid(): string {
    const w0 = this.nextU32();
    const w1 = this.nextU32();
    const w2 = this.nextU32();
    const w3 = this.nextU32();
    return (
      hex8(w0) +
      '-' +
      hex4(w1 >>> 16) +
      '-' +
      hex4(((w1 & 0x0fff) | 0x4000) >>> 0) +
      '-' +
      hex4((((w2 >>> 16) & 0x3fff) | 0x8000) >>> 0) +
      '-' +
      hex4(w2 & 0xffff) +
      hex8(w3)
    );
  }
}
