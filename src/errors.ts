/**
 * Errors the domain raises, in its own words: which input is wrong, what is missing, what could not be
 * reached. They know nothing of HTTP; http/api-error.ts maps each kind to a status and Genesys' ErrorBody,
 * in one place. This module imports nothing, so every floor may use it.
 */
export type DomainErrorKind =
  /** A client's value breaks a rule (400). `dateField`: the value is a date or interval (`invalid.date`). */
  | 'invalid'
  /** The request asks for more than a documented limit allows (413). */
  | 'too-large'
  /** No such resource, or not one the caller may know of (404). */
  | 'not-found'
  /** The resource exists but refuses this request as it stands (409). */
  | 'conflict'
  /** Storage or a Durable Object could not be reached; nothing was kept, so the request can be repeated (503). */
  | 'unavailable';

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    /** The request field the error is about, as `a.b[3].c`. */
    readonly field?: string,
    /** For `invalid`: the value is a date, an interval or a time zone (Genesys answers `invalid.date`). */
    readonly dateField = false,
  ) {
    super(message);
  }
}

export function invalidValue(field: string, message: string): DomainError {
  return new DomainError('invalid', message, field);
}

export function invalidDate(field: string, message: string): DomainError {
  return new DomainError('invalid', message, field, true);
}

export function unavailable(message: string): DomainError {
  return new DomainError('unavailable', message);
}
