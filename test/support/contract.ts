import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { OpenAPIRouter, type Document, type Operation } from 'openapi-backend';
import { DOCUMENT_PATH } from '../../src/server.js';

const addFormats = addFormatsModule.default;

type Json = Record<string, unknown>;

/**
 * Checks HTTP responses against the bundled OpenAPI document: the status must be documented for the
 * operation, the media type must be the documented one, and the body must validate against its schema
 * (types, nulls, required and additional properties). Routing uses openapi-backend's stock router.
 */
export class ContractChecker {
  private readonly router: OpenAPIRouter;
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: Json = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8')) as Json) {
    this.router = new OpenAPIRouter({ definition: document as unknown as Document });
    // The document's own `nullable` and `example` keywords are understood; unknown `x-` keywords pass.
    this.ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema(document, 'openapi');
  }

  /** Returns the problems with this response; an empty list means it matches the document. */
  check(request: { method: string; path: string }, response: { status: number; contentType: string | null; body: unknown }): string[] {
    const operation = this.router.matchOperation({ method: request.method, path: request.path.split('?')[0] ?? '/', headers: {} });
    const where = `${request.method.toUpperCase()} ${request.path} -> ${response.status}`;
    if (!operation) {
      // Routing failures are answered by the dispatcher itself with the error envelope.
      return [404, 405].includes(response.status) ? this.checkSchema(where, '#/components/schemas/ErrorEnvelope', response.body) : [`${where}: no operation in the document`];
    }
    const pointer = this.responsePointer(operation, response.status);
    if (!pointer) return [`${where}: status ${response.status} is not documented for ${operation.operationId}`];
    const content = this.resolve(pointer).content as Record<string, { schema?: unknown }> | undefined;
    const mediaTypes = Object.keys(content ?? {});
    const mediaType = (response.contentType ?? '').split(';')[0]!.trim();
    if (mediaTypes.length === 0) return response.body === undefined || response.body === '' ? [] : [`${where}: documented without a body`];
    if (!mediaTypes.includes(mediaType)) return [`${where}: content type '${mediaType}' is not one of ${mediaTypes.join(', ')}`];
    return this.checkSchema(where, `${pointer}/content/${escape(mediaType)}/schema`, response.body);
  }

  private checkSchema(where: string, pointer: string, body: unknown): string[] {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi${pointer}` });
      this.validators.set(pointer, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${where}: body${e.instancePath} ${e.message ?? 'is invalid'} ${JSON.stringify(e.params)}`);
  }

  /** JSON pointer (`#/...`) of the response object documented for this status, following a `$ref`. */
  private responsePointer(operation: Operation, status: number): string | undefined {
    const pathItem = `#/paths/${escape(operation.path)}/${operation.method}/responses`;
    const responses = this.resolve(pathItem);
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
    if (!key) return undefined;
    const response = responses[key] as { $ref?: string };
    return response.$ref ?? `${pathItem}/${escape(key)}`;
  }

  private resolve(pointer: string): Json {
    return pointer
      .slice(2)
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<Json>((node, key) => node[key] as Json, this.document);
  }
}

function escape(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
