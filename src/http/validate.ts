import { zValidator } from '@hono/zod-validator';
import type { ZodType } from 'zod';
import type { core } from 'zod';
import { ApiError, type ErrorDetail } from './api-error';

/** `a.b[3].c` from zod's path: the field name format of Genesys' error details. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || 'body';
}

/**
 * A short, safe description of a client's value for an error message: strings quoted and cut at
 * 80 characters; anything else named by its type (String() of a deeply nested array overflows).
 */
export function describeInput(input: unknown): string {
  if (typeof input === 'string') return JSON.stringify(input.length > 80 ? `${input.slice(0, 80)}…` : input);
  if (typeof input === 'number' || typeof input === 'boolean' || input === null) return String(input);
  return Array.isArray(input) ? 'an array' : typeof input === 'object' ? 'an object' : typeof input;
}

/** zod issue `params` that mark a date error (answers 400 `invalid.date`). */
export const DATE_ISSUE = { code: 'invalid.date' } as const;
/** zod issue `params` that mark a size limit (answers 413 `payload.too.large`). */
export const TOO_LARGE_ISSUE = { code: 'payload.too.large' } as const;

type IssueCode = 'invalid.date' | 'invalid.value' | 'payload.too.large';

function issueCode(issue: core.$ZodIssue): IssueCode {
  const marked = (issue as { params?: { code?: string } }).params?.code;
  return marked === 'invalid.date' || marked === 'payload.too.large' ? marked : 'invalid.value';
}

/**
 * An unknown key is reported at the key itself (`filter.predicates[0].valeu`), so the field named is
 * the one to fix; zod reports it at the object holding it.
 */
function atKey(issue: core.$ZodIssue): core.$ZodIssue {
  if (issue.code !== 'unrecognized_keys') return issue;
  const key = issue.keys[0] ?? '';
  const others = issue.keys.slice(1, 6).map(describeInput);
  const more = others.length ? ` (and ${others.join(', ')}${issue.keys.length > 6 ? ', …' : ''})` : '';
  return {
    ...issue,
    path: [...issue.path, key.slice(0, 100)],
    message: `Unknown field ${describeInput(key)}${more}: this service does not read it; check its spelling`,
  };
}

export function issuesToError(raw: readonly core.$ZodIssue[]): ApiError {
  const issues = raw.map(atKey);
  const details: ErrorDetail[] = issues.slice(0, 20).map((issue) => ({
    errorCode: issueCode(issue),
    fieldName: fieldPath(issue.path),
  }));
  // A size limit outranks the rest: the request is refused as too large, whatever else is wrong.
  const first = issues.find((i) => issueCode(i) === 'payload.too.large') ?? issues[0]!;
  const code = issueCode(first);
  const message = `${fieldPath(first.path)}: ${first.message}`;
  return new ApiError(code === 'payload.too.large' ? 413 : 400, code, message, details);
}

/** zValidator whose failures become one ApiError (400, field paths in `details`). */
export function validJson<T extends ZodType>(schema: T) {
  return zValidator('json', schema, (result) => {
    if (!result.success) throw issuesToError(result.error.issues);
  });
}

export function validQuery<T extends ZodType>(schema: T) {
  return zValidator('query', schema, (result) => {
    if (!result.success) throw issuesToError(result.error.issues);
  });
}
