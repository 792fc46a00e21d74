import type { ErrorObject } from 'ajv';
import { OpenAPIValidator, type Operation, type Request, type ValidationResult } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { CompiledRouter, type RequestParts } from './router.js';

type Parameter = OpenAPIV3.ParameterObject;

interface OperationChecks {
  /** `_.find(operation.parameters, { name, in: 'query' })`, by name. */
  queryByName: Map<string, Parameter>;
  /** The query parameters declared with `content: application/json`. */
  jsonQueryParams: Parameter[];
  /** `_.keys(_.get(operation, 'requestBody.content', {}))` */
  payloadFormats: string[];
  /** Whether the operation declares a request body (which openapi-backend builds a validator for). */
  readsBody: boolean;
  /**
   * Whether the operation declares a header or cookie parameter (or one not resolved): if not, its
   * validators accept any object for both, so the request's are not copied for them.
   */
  readsHeaders: boolean;
  /** Whether `queryByName` has a parameter declared as an array (a single value of which is wrapped). */
  arrayQueryParams: boolean;
}

/** A header by its lowercased name, as in parseRequest's copy (the last of the names that lowercase to it). */
function lowercasedHeader(headers: Request['headers'] | undefined, name: string): unknown {
  let value: unknown;
  // for-in with hasOwn: Object.keys's keys and order, without the array
  if (headers) for (const key in headers) if (Object.hasOwn(headers, key) && key.toLowerCase() === name) value = headers[key];
  return value;
}

/**
 * openapi-backend's request validator with its per-request lookups done once per operation. The stock
 * `validateRequest` scans the operation's parameters with lodash `_.find` for each query value, filters
 * them again for JSON-encoded ones, and builds its parameter object with `_.omitBy`; this port of
 * openapi-backend 5.21's `validateRequest` keeps its steps, order and results (the same validator
 * functions get the same parameter object) with those lookups cached per operation. Its work is in
 * `validateOperation`, which the dispatcher calls without the copy of the request validateRequest returns;
 * an operation that declares no header or cookie parameter gets empty ones (its validators accept any).
 */
export class CompiledValidator extends OpenAPIValidator {
  private readonly checks = new WeakMap<Operation, OperationChecks>();

  override validateRequest(req: Request, operationOrId?: Operation | string): ValidationResult<Request> {
    const coerced = (Object.hasOwn(req, '__proto__') ? { ...req } : Object.assign({}, req)) as unknown as Record<string, unknown>;
    const result: ValidationResult<Request> = { valid: true, coerced: coerced as unknown as Request };
    let operation: Operation | undefined;
    if (!operationOrId) operation = this.router.matchOperation(req);
    else if (typeof operationOrId === 'string') operation = this.router.getOperation(operationOrId);
    else operation = operationOrId;
    if (!operation || !operation.operationId) throw new Error(`Unknown operation`);

    const outcome = this.validateOperation(req, operation);
    if (outcome.coerced) {
      coerced.query = outcome.query;
      coerced.params = outcome.params;
    }
    result.errors = outcome.errors;
    if (outcome.errors) result.valid = false;
    return result;
  }

  /**
   * validateRequest's checks and coercions of a request to the operation, without its copy of the request:
   * the errors (null if none) and, if a validator passed (`coerced`), the coerced query and path parameters.
   * `ownQuery` true: the request's query object is the caller's own copy, coerced in place (not copied).
   */
  validateOperation(
    req: Request,
    operation: Operation,
    ownQuery = false,
  ): { errors: ErrorObject[] | null; coerced: boolean; query: unknown; params: unknown } {
    let errors: ErrorObject[] | undefined;
    let coerced = false;
    const validators = this.getRequestValidatorsForOperation(operation.operationId as string) || [];
    const checks = this.checksOf(operation);
    // The text of JSON query parameters, read before parsing: with `ownQuery` the parsed values replace it.
    const rawQuery = checks.jsonQueryParams.length ? this.router.parseRequestQuery(req) : undefined;
    const { params, query, headers, cookies, requestBody } =
      this.router instanceof CompiledRouter ? this.router.parseParts(req, operation, checks.readsHeaders, ownQuery) : (this.router.parseRequest(req, operation) as RequestParts);

    // a single value of a parameter declared as an array becomes a one-element array
    if (query && checks.arrayQueryParams) {
      for (const name of Object.keys(query)) {
        const value = query[name];
        if (typeof value !== 'string') continue;
        const schema = checks.queryByName.get(name)?.schema as OpenAPIV3.SchemaObject | undefined;
        if (schema && schema.type === 'array') query[name] = [value];
      }
    }

    // `_.omitBy({ path, query, header, cookie }, _.isNil)`
    const parameters: Record<string, unknown> = {};
    if (params != null) parameters.path = params;
    if (query != null) parameters.query = query;
    if (headers != null) parameters.header = headers;
    if (cookies != null) parameters.cookie = cookies;

    if (typeof req.body !== 'object' && req.body !== undefined) {
      if (checks.payloadFormats.length === 1 && checks.payloadFormats[0] === 'application/json') {
        try {
          JSON.parse(`${req.body}`);
        } catch (err) {
          if (err instanceof Error) (errors ??= []).push({ keyword: 'parse', instancePath: '', schemaPath: '#/requestBody', params: [] as never, message: err.message });
        }
      }
    }

    if (rawQuery) {
      for (const param of checks.jsonQueryParams) {
        const rawValue = rawQuery[param.name];
        if (typeof rawValue !== 'string') continue;
        try {
          JSON.parse(rawValue);
        } catch (err) {
          if (err instanceof Error) {
            (errors ??= []).push({ keyword: 'parse', instancePath: `/query/${param.name}`, schemaPath: `#/parameters/${param.name}`, params: [] as never, message: err.message });
          }
        }
      }
    }

    // Only a request-body validator reads `requestBody`: without one, no content type to look up.
    if (checks.readsBody) {
      const rawContentType = checks.readsHeaders ? (headers as Record<string, unknown>)['content-type'] : lowercasedHeader(req.headers, 'content-type');
      const contentTypeHeader = String((Array.isArray(rawContentType) ? rawContentType[0] : rawContentType) || '');
      // `.split(';')[0]`, without the array
      const semicolon = contentTypeHeader.indexOf(';');
      const contentType = (semicolon === -1 ? contentTypeHeader : contentTypeHeader.slice(0, semicolon)).trim().toLowerCase();
      if (typeof requestBody === 'object' || contentType === 'application/json') parameters.requestBody = requestBody;
    }

    for (const validate of validators) {
      validate(parameters);
      if (validate.errors) (errors ??= []).push(...validate.errors);
      else if (this.coerceTypes) coerced = true;
    }
    return {
      errors: errors ?? null,
      coerced,
      query: coerced ? parameters.query : undefined,
      params: coerced ? parameters.path : undefined,
    };
  }

  private checksOf(operation: Operation): OperationChecks {
    let checks = this.checks.get(operation);
    if (!checks) {
      const parameters = operation.parameters ?? [];
      const queryByName = new Map<string, Parameter>();
      for (const param of parameters) {
        // lodash's `{ name, in: 'query' }` matcher: any parameter object with those two values, first one wins
        const candidate = param as Partial<Parameter> | null;
        if (candidate && candidate.in === 'query' && typeof candidate.name === 'string' && !queryByName.has(candidate.name)) {
          queryByName.set(candidate.name, candidate as Parameter);
        }
      }
      const jsonQueryParams = parameters.filter(
        (param): param is Parameter => !('$ref' in param) && param.in === 'query' && Boolean(param.content?.['application/json']),
      );
      const content = (operation.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content as unknown;
      const payloadFormats = content === undefined || content === null ? [] : Object.keys(content);
      const readsHeaders = parameters.some((param) => !param || '$ref' in param || param.in === 'header' || param.in === 'cookie');
      const arrayQueryParams = [...queryByName.values()].some((param) => (param.schema as OpenAPIV3.SchemaObject | undefined)?.type === 'array');
      checks = { queryByName, jsonQueryParams, payloadFormats, readsBody: Boolean(operation.requestBody), readsHeaders, arrayQueryParams };
      this.checks.set(operation, checks);
    }
    return checks;
  }
}
