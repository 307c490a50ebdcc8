/**
 * ISO 8601 date-times and durations, and the proleptic Gregorian calendar under them: pure, shared by
 * ingest (instants in records) and the query (intervals and granularities). Instants are epoch
 * milliseconds; text that is not what it should be comes back as the reason, for the caller to word.
 */

export const SECOND_MS = 1_000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** An ISO 8601 duration split into what steps on the calendar and what is elapsed time. */
export interface IsoDuration {
  /** Calendar months (years count 12). */
  months: number;
  /** Calendar days (weeks count 7). */
  days: number;
  /** Elapsed milliseconds (hours, minutes, seconds). */
  ms: number;
}

// ---------------------------------------------------------------------------------------------
// Civil calendar, without Date.UTC, which maps years 0..99 to 1900..1999.

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

export function daysInMonth(y: number, m: number): number {
  if (m === 2) return isLeapYear(y) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil). */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function civilFromDays(z: number): { y: number; m: number; d: number } {
  const zz = z + 719_468;
  const era = Math.floor(zz / 146_097);
  const doe = zz - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

/**
 * Adds calendar months (clamping the day to the target month's length), then calendar days, to a
 * "wall" value: a local date-time encoded as the epoch ms it would have if its zone were UTC.
 */
export function addCalendar(wall: number, months: number, days: number): number {
  const dayNumber = Math.floor(wall / DAY_MS);
  const timeOfDay = wall - dayNumber * DAY_MS;
  let date = dayNumber;
  if (months !== 0) {
    const { y, m, d } = civilFromDays(dayNumber);
    const monthIndex = y * 12 + (m - 1) + months;
    const ny = Math.floor(monthIndex / 12);
    const nm = monthIndex - ny * 12 + 1;
    date = daysFromCivil(ny, nm, Math.min(d, daysInMonth(ny, nm)));
  }
  return (date + days) * DAY_MS + timeOfDay;
}

// ---------------------------------------------------------------------------------------------
// Date-times

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;
/** Largest UTC offset accepted in a date-time (the range Java's ZoneOffset allows). */
const MAX_OFFSET_MS = 18 * HOUR_MS;

/** Epoch ms of an ISO 8601 date-time, or the reason it is not one. No offset means UTC; fractions below 1 ms are truncated. */
export function parseDateTime(text: string): number | string {
  const match = DATE_TIME.exec(text);
  if (!match) return 'expected yyyy-MM-ddTHH:mm[:ss[.SSS]] with an optional offset (Z, +hh:mm, +hhmm or +hh)';
  const [, ys, mos, ds, hs, mis, ss, fraction, , sign, ohs, oms] = match;
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  const hour = Number(hs);
  const minute = Number(mis);
  const second = ss === undefined ? 0 : Number(ss);
  if (month < 1 || month > 12) return `month ${mos} does not exist`;
  if (day < 1 || day > daysInMonth(year, month)) return `day ${ds} does not exist in ${ys}-${mos}`;
  if (hour > 23) return `hour ${hs} does not exist (00-23)`;
  if (minute > 59) return `minute ${mis} does not exist (00-59)`;
  if (second > 59) return `second ${ss} does not exist (00-59)`;
  let offset = 0;
  if (sign !== undefined) {
    const offsetMinutes = oms === undefined ? 0 : Number(oms);
    if (offsetMinutes > 59) return `offset minute ${oms} does not exist (00-59)`;
    offset = (Number(ohs) * HOUR_MS + offsetMinutes * MINUTE_MS) * (sign === '-' ? -1 : 1);
    if (Math.abs(offset) > MAX_OFFSET_MS) return 'offset must lie within ±18:00';
  }
  const millis = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  const wall = daysFromCivil(year, month, day) * DAY_MS + hour * HOUR_MS + minute * MINUTE_MS + second * SECOND_MS + millis;
  return wall - offset;
}

/** The decimal number in text[from, to), or -1 if any of it is not a digit. */
function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * `yyyy-MM-ddTHH:mm:ss.SSSZ`, the form nearly every record uses, without the general parser's regex
 * (it was a tenth of ingest's CPU); undefined for anything else, which parseDateTime then judges.
 */
function canonicalInstant(text: string): number | undefined {
  if (
    text.length !== 24 ||
    text[4] !== '-' ||
    text[7] !== '-' ||
    text[10] !== 'T' ||
    text[13] !== ':' ||
    text[16] !== ':' ||
    text[19] !== '.' ||
    text[23] !== 'Z'
  ) {
    return undefined;
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  const millis = digits(text, 20, 23);
  // A non-digit makes its field -1, out of every range below.
  if (
    year < 0 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 59 ||
    millis < 0
  ) {
    return undefined;
  }
  if (day > daysInMonth(year, month)) return undefined;
  return daysFromCivil(year, month, day) * DAY_MS + hour * HOUR_MS + minute * MINUTE_MS + second * SECOND_MS + millis;
}

/** Epoch ms of an ISO 8601 instant, or why it is not one: the common form fast, any other through parseDateTime. */
export function instantMs(text: string): number | string {
  return canonicalInstant(text) ?? parseDateTime(text);
}

// ---------------------------------------------------------------------------------------------
// Durations

const DURATION =
  /^P(?:(\d{1,9})Y)?(?:(\d{1,9})M)?(?:(\d{1,9})W)?(?:(\d{1,9})D)?(?:(T)(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9})(?:[.,](\d{1,3}))?S)?)?$/i;
const DURATION_FORMAT = 'expected an ISO-8601 duration PnYnMnWnDTnHnMnS with at least one component, for example P1D, PT15M or P1DT12H';

/** The duration, or the reason the text is not one. A zero-length duration parses (callers decide). */
export function parseIsoDuration(text: string): IsoDuration | string {
  const match = DURATION.exec(text);
  if (!match) return DURATION_FORMAT;
  const [, y, mo, w, d, t, h, mi, s, fraction] = match;
  const hasDate = y !== undefined || mo !== undefined || w !== undefined || d !== undefined;
  const hasTime = h !== undefined || mi !== undefined || s !== undefined;
  // "P" alone, and a "T" with nothing after it ("PT", "P1DT"), are not durations.
  if ((!hasDate && !hasTime) || (t !== undefined && !hasTime)) return DURATION_FORMAT;
  const n = (v: string | undefined): number => (v === undefined ? 0 : Number(v));
  const millis = fraction === undefined ? 0 : Number(fraction.padEnd(3, '0'));
  return {
    months: n(y) * 12 + n(mo),
    days: n(w) * 7 + n(d),
    ms: n(h) * HOUR_MS + n(mi) * MINUTE_MS + n(s) * SECOND_MS + millis,
  };
}
