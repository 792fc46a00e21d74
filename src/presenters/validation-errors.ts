import type { ErrorObject } from 'ajv';
import type { ErrorDetail } from '../domain/errors.js';

const LOCATIONS: Record<string, NonNullable<ErrorDetail['location']>> = { query: 'query', path: 'path', header: 'header', requestBody: 'body' };
const SUBJECTS = { query: 'query parameter', path: 'path parameter', header: 'header' } as const;

/** The reason after the subject: "is required", "must be integer", "must NOT have additional properties: 'x'". */
function reason(error: ErrorObject): string {
  const params = error.params as { missingProperty?: string; allowedValues?: unknown[]; additionalProperty?: string };
  if (params.missingProperty !== undefined) return 'is required';
  if (params.allowedValues) return `${error.message ?? 'is invalid'}: ${params.allowedValues.join(', ')}`;
  if (params.additionalProperty !== undefined) return `${error.message ?? 'is invalid'}: '${params.additionalProperty}'`;
  return error.message ?? 'is invalid';
}

/**
 * openapi-backend's Ajv errors as the error envelope: one detail per error, the first as the message,
 * naming the offending parameter or body field ("query parameter 'limit' must be integer",
 * "request body field 'email' is required").
 */
export function describeValidationErrors(errors: ErrorObject[]): { message: string; details: ErrorDetail[] } {
  const details = errors.map((error): ErrorDetail => {
    const [, head = '', ...rest] = error.instancePath.split('/');
    const missing = (error.params as { missingProperty?: string }).missingProperty;
    // A missing body is reported at the root as the property `requestBody`.
    const location = head === '' && missing === 'requestBody' ? 'body' : LOCATIONS[head];
    if (!location) return { message: error.message ?? 'invalid request' };
    const segments = missing !== undefined && missing !== 'requestBody' ? [...rest, missing] : rest;
    if (location === 'body') {
      const subject = segments.length === 0 ? 'request body' : `request body field '${segments.join('.')}'`;
      return { location, path: `/${segments.join('/')}`, message: `${subject} ${reason(error)}` };
    }
    const name = segments[0] ?? '';
    return { location, path: name, message: `${SUBJECTS[location]} '${name}' ${reason(error)}` };
  });
  return { message: details[0]?.message ?? 'invalid request', details };
}
