import { createRequire } from 'node:module';
import type { ErrorObject } from 'ajv';
import type { ErrorDetail } from '../domain/errors.js';
import { describeValidationErrors } from '../presenters/validation-errors.js';

const require = createRequire(import.meta.url);

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** Compiled by codegen from the document (see codegen/validators.ts), as the dispatcher loads them. */
const precompiled = require('../generated/request-validators.cjs') as Readonly<Record<string, readonly Validate[]>>;

/**
 * Checks a value as the request body of another operation, with the validators codegen compiled for that
 * operation (the dispatcher's own): for a handler that takes several such bodies in one request (the orders
 * of a batch placement) and answers each one's problems as that operation would have answered them alone.
 * Returns the error envelope's message and details (field paths within the value), or undefined if valid.
 */
export function bodyCheckOf(operationId: string): (body: unknown) => { message: string; details: ErrorDetail[] } | undefined {
  const validators = Object.hasOwn(precompiled, operationId) ? precompiled[operationId] : undefined;
  if (!validators) throw new Error(`no precompiled request validators for ${operationId} (run npm run codegen)`);
  return (body) => {
    // The operation's parameters are empty here: only its request-body validator has anything to check.
    const request = { path: {}, query: {}, header: {}, cookie: {}, requestBody: body };
    const errors: ErrorObject[] = [];
    for (const validate of validators) if (!validate(request)) errors.push(...(validate.errors ?? []));
    return errors.length > 0 ? describeValidationErrors(errors) : undefined;
  };
}
