import type { Operation, Request } from 'openapi-backend';
import { invalid } from '../../domain/errors.js';
import { findUnstorable, unstorable } from '../../domain/storable-text.js';
import { sendError } from '../errors.js';
import { malformedNumerals } from '../query.js';
import { PathParameterEncodingError } from '../router.js';
import type { CompiledValidator } from '../validator.js';
import { describeValidationErrors } from '../../presenters/validation-errors.js';
import type { Route, Step } from './call.js';

/** The first declared query value or body field holding text that cannot be stored. */
function textProblem(
  route: Route,
  query: Record<string, unknown>,
  body: unknown,
): { where: string; location: 'query' | 'body'; path: string; problem: string } | undefined {
  for (const name of route.queryNames) {
    const value = query[name];
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      const problem = typeof item === 'string' ? unstorable(item) : undefined;
      if (problem) return { where: `query parameter '${name}'`, location: 'query', path: name, problem };
    }
  }
  if (body === undefined) return undefined;
  const found = findUnstorable(body);
  return found ? { where: `request body field '${found.path}'`, location: 'body', path: found.path, problem: found.problem } : undefined;
}

function validated(validator: CompiledValidator, request: Request, operation: Operation): ReturnType<CompiledValidator['validateOperation']> {
  try {
    return validator.validateOperation(request, operation, true);
  } catch (error) {
    // openapi-backend's path parser percent-decodes path parameters and throws on a malformed escape.
    if (error instanceof PathParameterEncodingError) {
      throw invalid(`path parameter '${error.parameter}' ${error.problem === 'bad percent-encoding' ? 'is not validly percent-encoded' : error.problem}`, [
        { location: 'path', path: error.parameter, message: error.problem },
      ]);
    }
    throw error;
  }
}

/**
 * 400 for text PostgreSQL cannot store (NUL, lone surrogates) in the body or a declared query parameter,
 * then for what the precompiled request validators refuse (with coercion and the documented defaults
 * filled in); keeps the coerced path parameters.
 */
export function validate(validator: CompiledValidator): Step {
  return (call) => {
    const { koa, route, query, request, operation } = call;
    const bad = textProblem(route, query, request.body);
    if (bad) throw invalid(`${bad.where} ${bad.problem}`, [{ location: bad.location, path: bad.path, message: bad.problem }]);

    // On the values as sent: validation coerces the query in place.
    const numerals = malformedNumerals(route.numeric, query);
    const validation = validated(validator, request, operation);
    if (numerals || validation.errors) {
      const reported = new Set(numerals?.map((error) => error.instancePath));
      const errors = [...(numerals ?? []), ...(validation.errors ?? []).filter((error) => !reported.has(error.instancePath))];
      const { message, details } = describeValidationErrors(errors);
      sendError(koa, 'invalid_request', message, details);
      return false;
    }
    // No path parameters if no validator passed.
    call.params = validation.coerced ? validation.params : undefined;
    return true;
  };
}
