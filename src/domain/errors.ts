/**
 * Failures the domain reports. The HTTP layer maps each code to a status and the error envelope;
 * the domain itself knows nothing of HTTP.
 */
export type DomainErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'unprocessable'
  | 'unavailable'
  | 'rate_limited';

export interface ErrorDetail {
  location?: 'path' | 'query' | 'header' | 'body';
  path?: string;
  message: string;
}

/** What an error message echoes of a value a client sent: at most `length` characters of it. */
export function clip(value: unknown, length = 24): string {
  const s = String(value);
  return s.length > length ? `${s.slice(0, length)}...` : s;
}

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** rate_limited: when to try again. */
    readonly retryAfterSecs?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalid = (message: string, details?: ErrorDetail[]) => new DomainError('invalid_request', message, details);
export const notFound = (message = 'not found') => new DomainError('not_found', message);
export const conflict = (message: string) => new DomainError('conflict', message);
export const unauthorized = (message = 'missing or invalid bearer token') => new DomainError('unauthorized', message);
export const forbidden = (message: string) => new DomainError('forbidden', message);
export const unprocessable = (message: string) => new DomainError('unprocessable', message);
/** A service the request depends on (such as the identity provider) cannot be reached now. */
export const unavailable = (message: string, cause?: unknown) => Object.assign(new DomainError('unavailable', message), cause === undefined ? {} : { cause });
/** Too many attempts: refused before any work, to be tried again after `retryAfterSecs`. */
export const rateLimited = (message: string, retryAfterSecs: number) =>
  new DomainError('rate_limited', message, undefined, Math.max(1, Math.ceil(retryAfterSecs)));
