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

/** Marks a custom zod issue as a date error, so it answers `invalid.date`. */
export const DATE_ISSUE = { code: 'invalid.date' } as const;

function issueCode(issue: core.$ZodIssue): 'invalid.date' | 'invalid.value' {
  return issue.code === 'custom' && (issue.params as { code?: string } | undefined)?.code === 'invalid.date'
    ? 'invalid.date'
    : 'invalid.value';
}

export function issuesToError(issues: readonly core.$ZodIssue[]): ApiError {
  const details: ErrorDetail[] = issues.slice(0, 20).map((issue) => ({
    errorCode: issueCode(issue),
    fieldName: fieldPath(issue.path),
  }));
  const first = issues[0]!;
  const code = issueCode(first);
  const message = `${fieldPath(first.path)}: ${first.message}`;
  return new ApiError(400, code, message, details);
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

export function validParams<T extends ZodType>(schema: T) {
  return zValidator('param', schema, (result) => {
    if (!result.success) throw issuesToError(result.error.issues);
  });
}
