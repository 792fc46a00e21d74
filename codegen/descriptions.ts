import type { OpenAPIV3 } from 'openapi-types';
import { HTTP_METHODS } from './operations.js';

const PLACES = ['x-description-before', 'x-description-after'] as const;
type Operation = OpenAPIV3.OperationObject & Partial<Record<(typeof PLACES)[number], unknown>>;

/**
 * Prose that several operations state is written once, in a Markdown file under
 * `openapi/components/descriptions/`, and an operation takes it with `x-description-before` or
 * `x-description-after` (a `$ref` to the file, which the bundler reads as text):
 *
 *     description: |
 *       What this operation alone does.
 *     x-description-after:
 *       $ref: ../components/descriptions/OrderScoring.md
 *
 * When the document is bundled, each becomes a paragraph of the operation's description, before or after its
 * own text, and the extension is removed. Returns one readable line per problem.
 */
export function joinDescriptions(doc: OpenAPIV3.Document): string[] {
  const problems: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const operation: Operation | undefined = item?.[method];
      if (!operation || PLACES.every((place) => operation[place] === undefined)) continue;
      const [before, after] = PLACES.map((place) => operation[place]);
      for (const place of PLACES) delete operation[place];
      if ([before, after].some((part) => part !== undefined && typeof part !== 'string')) {
        problems.push(`${method.toUpperCase()} ${path}: ${PLACES.join(' and ')} must be text (a $ref to a Markdown file)`);
        continue;
      }
      const parts = [before, operation.description, after].filter((part): part is string => typeof part === 'string' && part.trim() !== '');
      // Paragraphs are separated by one blank line; the last keeps its own ending.
      operation.description = parts.map((part, index) => (index < parts.length - 1 ? part.trimEnd() : part)).join('\n\n');
    }
  }
  return problems;
}
