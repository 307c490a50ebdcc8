import { ApiError } from '../http/api-error';

/** One answer for an id that is malformed, unknown, deleted or rotated away: which one is not revealed. */
export function webhookNotFound(): ApiError {
  return ApiError.notFound('No webhook matches this URL.');
}

export function roomNotFound(): ApiError {
  return ApiError.notFound('No room has this id.');
}

/** Storage could not be reached; nothing was stored, so the request can be repeated as is. */
export function storeUnavailable(message = 'The message could not be stored; nothing was stored. Retry later.'): ApiError {
  return new ApiError(503, 'service.unavailable', message, [], { 'Retry-After': '1' });
}

/** A 503 from storing a message; `maybeStored` when the room may have stored it before failing to answer. */
export class DeliveryError extends ApiError {
  constructor(readonly maybeStored: boolean) {
    super(
      503,
      'service.unavailable',
      maybeStored
        ? 'The room did not confirm the message. Retry with the same Idempotency-Key to have it stored exactly once.'
        : 'The message could not be stored; nothing was stored. Retry later.',
      [],
      { 'Retry-After': '1' },
    );
  }
}
