import { OpenAPIRouter, type Operation, type Request } from 'openapi-backend';

interface PathPattern {
  regex: RegExp;
  /** Length of the literal part: the more literal, the more specific (openapi-backend's ordering). */
  specificity: number;
  byMethod: Map<string, Operation>;
}

/**
 * openapi-backend's router with its routing rules compiled once instead of on every request:
 * its stock `matchOperation` rebuilds the operation list and a RegExp per templated path for each call.
 *
 * Same semantics: an exact path match wins; otherwise the matching path templates are tried from the
 * most literal to the least, and the first one that has the method is taken; a path that matches with no
 * such method is "405", no match at all "404". So `/events/keyset` beats `/events/{id}`.
 */
export class CompiledRouter extends OpenAPIRouter {
  private operations: Operation[] | undefined;
  private byId: Map<string, Operation> | undefined;
  private exact: Map<string, Map<string, Operation>> | undefined;
  private patterns: PathPattern[] | undefined;

  override getOperations(): Operation[] {
    this.operations ??= super.getOperations();
    return this.operations;
  }

  override getOperation(operationId: string): Operation | undefined {
    this.byId ??= new Map(this.getOperations().map((op) => [op.operationId ?? '', op]));
    return this.byId.get(operationId);
  }

  override matchOperation(req: Request): Operation | undefined;
  override matchOperation(req: Request, strict: true): Operation;
  override matchOperation(req: Request, strict?: boolean): Operation | undefined {
    this.compile();
    const normalized = this.normalizeRequest(req);
    const method = normalized.method;
    const fail = (reason: string) => {
      if (strict) throw Error(reason);
      return undefined;
    };
    // The service mounts the API at apiRoot '/', so every normalized path is under it.
    const path = this.normalizePath(normalized.path);

    const exactMatch = this.exact!.get(path)?.get(method);
    if (exactMatch) return exactMatch;

    let pathMatched = false;
    for (const pattern of this.patterns!) {
      if (!pattern.regex.test(path)) continue;
      pathMatched = true;
      const operation = pattern.byMethod.get(method);
      if (operation) return operation;
    }
    return pathMatched
      ? fail('405-methodNotAllowed: this method is not registered for the route')
      : fail('404-notFound: no route matches request');
  }

  private compile(): void {
    if (this.exact && this.patterns) return;
    const exact = new Map<string, Map<string, Operation>>();
    const patterns = new Map<string, PathPattern>();
    for (const operation of this.getOperations()) {
      const { path, method } = operation;
      if (!exact.has(path)) exact.set(path, new Map());
      exact.get(path)!.set(method, operation);
      if (!patterns.has(path)) {
        const source = path
          .replace(/\{[^}]+\}/g, '\0')
          .split('\0')
          .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('[^/]+');
        patterns.set(path, {
          regex: new RegExp(`^${source}$`),
          specificity: path.replace(/\{.*?\}/g, '').length,
          byMethod: new Map(),
        });
      }
      const pattern = patterns.get(path)!;
      if (!pattern.byMethod.has(method)) pattern.byMethod.set(method, operation);
    }
    this.exact = exact;
    // Array.prototype.sort is stable: ties keep document order, as lodash's orderBy does.
    this.patterns = [...patterns.values()].sort((a, b) => b.specificity - a.specificity);
  }
}
