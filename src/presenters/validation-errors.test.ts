import type { ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { describeValidationErrors } from './validation-errors.js';

const error = (instancePath: string, params: Record<string, unknown>, message?: string): ErrorObject =>
  ({ instancePath, params, message, keyword: 'x', schemaPath: '#' }) as ErrorObject;

describe('describeValidationErrors', () => {
  it.each([
    [error('/query/limit', { type: 'integer' }, 'must be integer'), "query parameter 'limit' must be integer", { location: 'query', path: 'limit' }],
    [error('/query', { missingProperty: 'q' }, "must have required property 'q'"), "query parameter 'q' is required", { location: 'query', path: 'q' }],
    [error('/path/order_id', {}, 'must NOT have more than 64 characters'), "path parameter 'order_id' must NOT have more than 64 characters", { location: 'path', path: 'order_id' }],
    [error('', { missingProperty: 'requestBody' }, "must have required property 'requestBody'"), 'request body is required', { location: 'body', path: '/' }],
    [error('/requestBody', { missingProperty: 'email' }, "must have required property 'email'"), "request body field 'email' is required", { location: 'body', path: '/email' }],
    [error('/requestBody/order/count', { type: 'string' }, 'must be string'), "request body field 'order.count' must be string", { location: 'body', path: '/order/count' }],
    [error('/requestBody', { additionalProperty: 'fee' }, 'must NOT have additional properties'), "request body must NOT have additional properties: 'fee'", { location: 'body', path: '/' }],
    [error('/requestBody/side', { allowedValues: ['yes', 'no'] }, 'must be equal to one of the allowed values'), "request body field 'side' must be equal to one of the allowed values: yes, no", { location: 'body', path: '/side' }],
  ])('describes %j', (input, message, detail) => {
    const described = describeValidationErrors([input]);
    expect(described.message).toBe(message);
    expect(described.details[0]).toEqual({ ...detail, message });
  });

  it('keeps every error as a detail', () => {
    const described = describeValidationErrors([error('/query/a', {}, 'must be integer'), error('/query/b', {}, 'must be integer')]);
    expect(described.details).toHaveLength(2);
  });
});
