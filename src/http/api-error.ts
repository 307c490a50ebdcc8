import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { DomainError } from '../errors';

/**
 * Genesys Cloud's ErrorBody codes, plus the few this service adds (`payload.too.large`,
 * `service.unavailable`, `webhook.inactive`, `conflict`, `bad.signature`, `bad.gateway`). Every error answer of every
 * route carries one of these in `code`.
 */
export type ErrorCode =
  | 'bad.request'
  | 'invalid.value'
  | 'invalid.date'
  | 'authentication.required'
  | 'bad.credentials'
  | 'missing.permissions'
  | 'not.found'
  | 'method.not.allowed'
  | 'conflict'
  | 'payload.too.large'
  | 'unsupported.media.type'
  | 'too.many.requests'
  | 'internal.server.error'
  | 'service.unavailable'
  | 'webhook.inactive'
  /** A webhook with a shared secret got a post whose HMAC signature is missing or wrong (401); an image-proxy URL not signed here (403). */
  | 'bad.signature'
  | 'upgrade.required'
  /** The image proxy (chat/image-proxy) could not serve an image from its host (502). */
  | 'bad.gateway';

export interface ErrorDetail {
  errorCode: string;
  fieldName?: string;
  /** The entity the detail is about (e.g. the conversationId of a refused record). */
  entityId?: string;
}

/** Wire shape of every error answer (Genesys' ErrorBody, the fields this service fills). */
export interface ErrorBody {
  message: string;
  code: ErrorCode;
  status: number;
  /** Set on an inner error about one entity (ErrorBody.errors[]). */
  entityId?: string;
  contextId: string;
  details: ErrorDetail[];
  errors: ErrorBody[];
}

/** The one exception type routes throw; `onError` turns it into an ErrorBody. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
    /** One error per entity that failed (ErrorBody.errors), e.g. each refused record of an ingest batch. */
    readonly errors: ApiError[] = [],
  ) {
    super(message);
  }

  /** The entity this error is about (inner errors). */
  entityId?: string;

  about(entityId: string | undefined): this {
    this.entityId = entityId;
    return this;
  }

  static invalidValue(fieldName: string, message: string): ApiError {
    return new ApiError(400, 'invalid.value', message, [{ errorCode: 'invalid.value', fieldName }]);
  }

  static invalidDate(fieldName: string, message: string): ApiError {
    return new ApiError(400, 'invalid.date', message, [{ errorCode: 'invalid.date', fieldName }]);
  }

  static notFound(message = 'The requested resource was not found.'): ApiError {
    return new ApiError(404, 'not.found', message);
  }
}

/** The one mapping from the domain's errors to HTTP answers. */
export function fromDomainError(err: DomainError): ApiError {
  const details = (code: string): ErrorDetail[] => (err.field === undefined ? [] : [{ errorCode: code, fieldName: err.field }]);
  switch (err.kind) {
    case 'invalid': {
      const code = err.dateField ? 'invalid.date' : 'invalid.value';
      return new ApiError(400, code, err.message, details(code));
    }
    case 'too-large':
      return new ApiError(413, 'payload.too.large', err.message, details('payload.too.large'));
    case 'not-found':
      return new ApiError(404, 'not.found', err.message);
    case 'conflict':
      return new ApiError(409, 'conflict', err.message, details('conflict'));
    case 'unavailable':
      return new ApiError(503, 'service.unavailable', err.message, [], { 'Retry-After': '1' });
  }
}

export function errorBody(error: ApiError, contextId: string): ErrorBody {
  return {
    message: error.message,
    code: error.code,
    status: error.status,
    ...(error.entityId === undefined ? {} : { entityId: error.entityId }),
    contextId,
    details: error.details,
    errors: error.errors.map((inner) => errorBody(inner, contextId)),
  };
}
