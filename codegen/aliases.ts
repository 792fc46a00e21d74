import type { OpenAPIV3 } from 'openapi-types';
import { HTTP_METHODS } from './operations.js';

/**
 * Aliases are written once, on what they copy, and expanded when the document is bundled.
 *
 * An operation's `x-aliases` lists the other routes that serve it: each becomes an operation of its own with
 * the given `path` and `operationId` (and `method`, when it differs), the original's parameters, body,
 * responses, security and extensions, and `x-handler` naming the original, whose handler serves it.
 *
 *     get:
 *       operationId: listCompatEvents
 *       x-aliases:
 *         - path: /api/compat/events
 *           operationId: listCompatEventsAlias
 *           description: optional text for the alias only
 *
 * A parameter's `x-aliases` lists other names it is accepted under (`seriesTicker` beside `series_ticker`):
 * every parameter list that has the parameter gets one more parameter per alias, the same but for its name.
 *
 * Everything that could make an expanded document ambiguous is refused, one readable line per problem.
 */
export function expandAliases(doc: OpenAPIV3.Document): string[] {
  const problems = expandParameterAliases(doc);
  problems.push(...expandOperationAliases(doc));
  return problems;
}

type Method = (typeof HTTP_METHODS)[number];
type Parameter = OpenAPIV3.ParameterObject & { 'x-aliases'?: unknown };
type ParameterEntry = OpenAPIV3.ReferenceObject | OpenAPIV3.ParameterObject;
type Operation = OpenAPIV3.OperationObject & { 'x-aliases'?: unknown; 'x-handler'?: unknown };

const COMPONENT_PREFIX = '#/components/parameters/';

function isReference(value: unknown): value is OpenAPIV3.ReferenceObject {
  return typeof value === 'object' && value !== null && '$ref' in value;
}

/** `{id}` and `{slug}` of `/events/{id}/tags/{slug}`. */
function templateNames(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '').sort();
}

function aliasParameter(original: Parameter, name: string): OpenAPIV3.ParameterObject {
  const { 'x-aliases': _aliases, ...rest } = structuredClone(original);
  return { ...rest, name, description: `Alias of \`${original.name}\`: the same parameter under another name. ${original.description ?? ''}`.trimEnd() };
}

/** The names a parameter's `x-aliases` gives, or a problem. */
function parameterAliasNames(parameter: Parameter, where: string, problems: string[]): string[] {
  const aliases = parameter['x-aliases'];
  if (aliases === undefined) return [];
  if (!Array.isArray(aliases) || aliases.some((alias) => typeof alias !== 'string' || alias === '')) {
    problems.push(`${where}: x-aliases of parameter '${parameter.name}' must be a list of parameter names`);
    return [];
  }
  if (parameter.in === 'path') {
    problems.push(`${where}: path parameter '${parameter.name}' cannot have aliases (its name is part of the path template)`);
    return [];
  }
  const names = aliases as string[];
  const repeated = names.filter((name, index) => name === parameter.name || names.indexOf(name) !== index);
  if (repeated.length === 0) return names;
  problems.push(`${where}: x-aliases of parameter '${parameter.name}' repeats '${repeated.join("', '")}'`);
  return [];
}

function expandParameterAliases(doc: OpenAPIV3.Document): string[] {
  const problems: string[] = [];
  const components = (doc.components?.parameters ?? {}) as Record<string, ParameterEntry>;
  // Each aliased component gets one component per alias, `<component>_<alias name>`.
  const aliasRefs = new Map<string, string[]>();
  for (const [componentName, entry] of Object.entries(components)) {
    if (isReference(entry)) continue;
    const names = parameterAliasNames(entry, `components.parameters.${componentName}`, problems);
    if (names.length === 0) continue;
    const refs: string[] = [];
    for (const name of names) {
      const aliasComponent = `${componentName}_${name}`;
      if (components[aliasComponent]) problems.push(`components.parameters.${componentName}: alias '${name}' would replace the existing component ${aliasComponent}`);
      components[aliasComponent] = aliasParameter(entry, name);
      refs.push(`${COMPONENT_PREFIX}${aliasComponent}`);
    }
    delete (entry as Parameter)['x-aliases'];
    aliasRefs.set(`${COMPONENT_PREFIX}${componentName}`, refs);
  }

  const expandList = (list: ParameterEntry[] | undefined, where: string): ParameterEntry[] | undefined => {
    if (!list) return list;
    const expanded = list.flatMap((entry): ParameterEntry[] => {
      if (isReference(entry)) return [entry, ...(aliasRefs.get(entry.$ref) ?? []).map(($ref) => ({ $ref }))];
      const names = parameterAliasNames(entry, where, problems);
      const aliases = names.map((name) => aliasParameter(entry as Parameter, name));
      delete (entry as Parameter)['x-aliases'];
      return [entry, ...aliases];
    });
    const seen = new Set<string>();
    for (const entry of expanded) {
      const parameter = isReference(entry) ? (components[entry.$ref.slice(COMPONENT_PREFIX.length)] as OpenAPIV3.ParameterObject | undefined) : entry;
      if (!parameter) continue;
      const key = `${parameter.in} parameter '${parameter.name}'`;
      if (seen.has(key)) problems.push(`${where}: ${key} is declared twice (an alias collides with another parameter)`);
      seen.add(key);
    }
    return expanded;
  };

  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!item) continue;
    item.parameters = expandList(item.parameters, path);
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation) operation.parameters = expandList(operation.parameters, `${method.toUpperCase()} ${path}`);
    }
  }
  return problems;
}

interface OperationAlias {
  path: string;
  operationId: string;
  method: Method;
  description?: string;
}

/** The entries of an operation's `x-aliases`, or problems. */
function operationAliases(operation: Operation, method: Method, where: string, problems: string[]): OperationAlias[] {
  const raw = operation['x-aliases'];
  if (raw === undefined) return [];
  const entries = Array.isArray(raw) ? (raw as unknown[]) : [raw];
  const aliases: OperationAlias[] = [];
  for (const entry of entries) {
    const alias = entry as Partial<Record<keyof OperationAlias, unknown>> | null;
    const valid =
      Array.isArray(raw) &&
      typeof alias === 'object' && alias !== null &&
      typeof alias.path === 'string' && alias.path.startsWith('/') &&
      typeof alias.operationId === 'string' && alias.operationId !== '' &&
      (alias.method === undefined || HTTP_METHODS.includes(alias.method as Method)) &&
      (alias.description === undefined || typeof alias.description === 'string');
    if (!valid) {
      problems.push(`${where}: each x-aliases entry needs a path (starting with /) and an operationId, and may give a method (${HTTP_METHODS.join(', ')}) and a description`);
      continue;
    }
    aliases.push({ path: alias.path as string, operationId: alias.operationId as string, method: (alias.method as Method | undefined) ?? method, description: alias.description as string | undefined });
  }
  return aliases;
}

function aliasOperation(original: Operation, originalRoute: string, originalItem: OpenAPIV3.PathItemObject, alias: OperationAlias): OpenAPIV3.OperationObject {
  const { 'x-aliases': _aliases, operationId: _id, summary, description, parameters, ...rest } = structuredClone(original);
  const note = alias.description ? ` ${alias.description.trim()}` : '';
  // Parameters of the original's path item travel with the operation: the alias's path item may hold others.
  const own = parameters ?? [];
  const inherited = structuredClone(originalItem.parameters ?? []);
  return {
    operationId: alias.operationId,
    'x-handler': typeof original['x-handler'] === 'string' ? original['x-handler'] : original.operationId,
    summary: `${summary ?? original.operationId} (alias of ${originalRoute})`,
    description: `Alias of \`${originalRoute}\` (\`${original.operationId}\`): the same operation, with the same parameters, body and responses.${note}\n\n${description ?? ''}`.trimEnd(),
    ...rest,
    ...(own.length + inherited.length > 0 ? { parameters: [...inherited, ...own] } : {}),
  };
}

function expandOperationAliases(doc: OpenAPIV3.Document): string[] {
  const problems: string[] = [];
  const source = Object.entries(doc.paths ?? {}) as Array<[string, OpenAPIV3.PathItemObject & { 'x-aliases'?: unknown }]>;
  const paths = new Map(source);
  const operationIds = new Set<string>();
  for (const [, item] of source) for (const method of HTTP_METHODS) if (item[method]?.operationId) operationIds.add(item[method]?.operationId ?? '');

  // Each new path item goes right after the path of its original, so that the document reads in that order.
  const added = new Map<string, Array<[string, OpenAPIV3.PathItemObject]>>();
  for (const [path, item] of source) {
    if (item['x-aliases'] !== undefined) problems.push(`${path}: x-aliases belongs on an operation (each alias needs its own operationId), not on the path item`);
    for (const method of HTTP_METHODS) {
      const operation: Operation | undefined = item[method];
      if (!operation) continue;
      const route = `${method.toUpperCase()} ${path}`;
      const aliases = operationAliases(operation, method, route, problems);
      delete operation['x-aliases'];
      for (const alias of aliases) {
        const aliasRoute = `${alias.method.toUpperCase()} ${alias.path}`;
        const before = problems.length;
        if (operationIds.has(alias.operationId)) problems.push(`${route}: alias operationId '${alias.operationId}' is already used`);
        if (paths.get(alias.path)?.[alias.method]) problems.push(`${route}: alias ${aliasRoute} is already an operation`);
        if (templateNames(alias.path).join() !== templateNames(path).join()) {
          problems.push(`${route}: alias ${aliasRoute} must have the same path parameters as ${path} (${templateNames(path).join(', ') || 'none'})`);
        }
        if (problems.length > before) continue;
        operationIds.add(alias.operationId);
        let target = paths.get(alias.path);
        if (!target) {
          target = {};
          paths.set(alias.path, target);
          added.set(path, [...(added.get(path) ?? []), [alias.path, target]]);
        }
        target[alias.method] = aliasOperation(operation, route, item, alias);
      }
      if (aliases.length > 0) {
        const list = aliases.map((alias) => `\`${alias.method.toUpperCase()} ${alias.path}\` (\`${alias.operationId}\`)`).join(', ');
        operation.description = `${operation.description ?? ''}`.trimEnd() + `\n\nAlso served, the same in every respect, at ${list}.`;
      }
    }
  }
  doc.paths = Object.fromEntries(source.flatMap(([path, item]) => [[path, item], ...(added.get(path) ?? [])]));
  return problems;
}
