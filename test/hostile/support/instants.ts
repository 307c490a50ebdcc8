/**
 * ISO 8601 instants for the ingest and query fuzzers: every written form the README allows (Z, an
 * offset as +hh:mm, +hhmm or +hh, none = UTC, fractions cut below a millisecond, minutes without
 * seconds), a strict parser for them written from the README and ISO 8601 (independent of
 * src/analytics/query/interval.ts), and dates that must be refused.
 */
import fc from 'fast-check';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** A point in time inside a case's day, written at run time in one of the allowed forms. */
export class Instant {
  constructor(
    /** ms after the start of the case's day. */
    readonly offsetInDay: number,
    readonly form: number,
    /** The UTC offset the text is written in, in minutes. */
    readonly zoneMinutes: number,
    /** Extra fraction digits below the millisecond (cut by the server). */
    readonly extraDigits: string,
  ) {}
  toString(): string {
    return `Instant(+${this.offsetInDay}ms, form ${this.form}, ${this.zoneMinutes}min)`;
  }
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Writes `ms` (UTC epoch) in the instant's form, by hand. */
export function writeInstant(ms: number, i: Instant): string {
  const zone = i.form === 0 || i.form === 4 || i.form === 5 ? 0 : i.zoneMinutes;
  const local = new Date(ms + zone * MINUTE);
  const date = `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}`;
  const hm = `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}`;
  const millis = pad(local.getUTCMilliseconds(), 3);
  const sign = zone < 0 ? '-' : '+';
  const zh = pad(Math.floor(Math.abs(zone) / 60));
  const zm = pad(Math.abs(zone) % 60);
  const sec = pad(local.getUTCSeconds());
  switch (i.form) {
    case 0: // 2950-01-01T10:00:00.000Z
      return `${date}T${hm}:${sec}.${millis}Z`;
    case 1: // +hh:mm
      return `${date}T${hm}:${sec}.${millis}${sign}${zh}:${zm}`;
    case 2: // +hhmm
      return `${date}T${hm}:${sec}.${millis}${sign}${zh}${zm}`;
    case 3: // +hh (whole hours only)
      return `${date}T${hm}:${sec}.${millis}${sign}${zh}`;
    case 4: // no offset: UTC
      return `${date}T${hm}:${sec}.${millis}`;
    case 5: // lower-case t and z
      return `${date}t${hm}:${sec}.${millis}z`;
    case 6: // nanoseconds, cut to the millisecond
      return `${date}T${hm}:${sec}.${millis}${i.extraDigits}${sign}${zh}:${zm}`;
    default: // minutes only (the instant is on a whole minute)
      return `${date}T${hm}${sign}${zh}:${zm}`;
  }
}

export const instantArb: fc.Arbitrary<Instant> = fc
  .tuple(fc.integer({ min: 0, max: DAY - 1 }), fc.nat(7), fc.integer({ min: -72, max: 72 }), fc.constantFrom('', '4', '999999'))
  .map(([ms, form, quarters, extra]) => {
    const zone = form === 3 ? Math.trunc(quarters / 4) * 60 : quarters * 15;
    return new Instant(form === 7 ? ms - (ms % MINUTE) : ms, form, zone, extra);
  });

/** Dates that are not ISO 8601 instants, or lie outside 1971–2999 (README: invalid.date). */
export const invalidDateText: fc.Arbitrary<string> = fc.constantFrom(
  '2950-02-29T00:00:00Z', // 2950 is not a leap year
  '2950-13-01T00:00:00Z',
  '2950-00-10T00:00:00Z',
  '2950-01-32T00:00:00Z',
  '2950-01-01T24:00:00Z',
  '2950-01-01T23:60:00Z',
  '2950-01-01T23:59:60Z', // no leap seconds
  '2950-01-01',
  '2950-01-01T10',
  '2950-01-01 10:00:00Z',
  '2950-01-01T10:00:00+19:00',
  '2950-01-01T10:00:00+05:60',
  '2950-01-01T10:00:00.Z',
  '2950-01-01T10:00:00.1234567890Z',
  '+02950-01-01T00:00:00Z',
  '29500-01-01T00:00:00Z',
  '1970-12-31T23:59:59.999Z',
  '3000-01-01T00:00:00.000Z',
  '2999-12-31T23:00:00-01:00', // 3000-01-01 in UTC
  '1971-01-01T00:30:00+01:00', // 1970 in UTC
  '0000-01-01T00:00:00Z',
  'Tue, 01 Jan 2950 00:00:00 GMT',
  '2950-W01-1T00:00:00Z',
  '2950-001T00:00:00Z',
  'P1D',
  'now',
  '',
  ' 2950-01-01T00:00:00Z',
  '２９５０-01-01T00:00:00Z',
);

const ISO = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;
const MIN_MS = Date.UTC(1971, 0, 1);
const MAX_MS = Date.UTC(3000, 0, 1);

/** The instant an ISO 8601 text names, or undefined (with the README's 1971–2999 window). */
export function parseInstant(text: string): number | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, f, , sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (days === undefined || day < 1 || day > days) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s ?? 0) > 59) return undefined;
  let zone = 0;
  if (sign) {
    if (Number(om ?? 0) > 59) return undefined;
    zone = (Number(oh) * 60 + Number(om ?? 0)) * (sign === '-' ? -1 : 1);
    if (Math.abs(zone) > 18 * 60) return undefined;
  }
  const millis = f === undefined ? 0 : Number(f.slice(0, 3).padEnd(3, '0'));
  const ms = Date.UTC(year, month - 1, day, Number(h), Number(mi), Number(s ?? 0), millis) - zone * MINUTE;
  // Date.UTC maps years 0–99 to 1900–1999; those are outside the window anyway.
  if (year < 1000 || ms < MIN_MS || ms >= MAX_MS) return undefined;
  return ms;
}
