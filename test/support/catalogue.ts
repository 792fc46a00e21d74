import { readFileSync } from 'node:fs';
import type { Knex } from 'knex';
import { DOCUMENT_PATH } from '../../src/server.js';

/**
 * Shared by the catalogue tests: the catalogue's operations as the bundled document lists them (so that a
 * table over "every parameter of every endpoint" grows with the document), and a small hand-made catalogue.
 */

type Json = Record<string, any>;

const document = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8')) as Json;

export interface DocumentedParameter {
  name: string;
  in: 'query' | 'path';
  required: boolean;
  /** `string`, `integer`, `boolean`, `number` or `array` (of strings). */
  type: string;
  enum?: string[];
  maxLength?: number;
  itemMaxLength?: number;
  clampMaximum?: number;
  default?: unknown;
  /** `x-scan-window` of an offset. */
  scanWindow?: number;
}

export interface CatalogueOperation {
  operationId: string;
  path: string;
  /** The implementation shared by a path and its aliases. */
  handler: string;
  parameters: DocumentedParameter[];
}

const resolve = (node: Json): Json => (node.$ref ? (node.$ref as string).slice(2).split('/').reduce<Json>((n, k) => n[k], document) : node);

/** The document's tags of the public catalogue's operations (native and compatibility shapes). */
const CATALOGUE_TAGS = new Set(['catalogue', 'compat']);

export const catalogueOperations: CatalogueOperation[] = Object.entries(document.paths as Json)
  .filter(([, item]) => ((item.get?.tags ?? []) as string[]).some((tag) => CATALOGUE_TAGS.has(tag)))
  .map(([path, item]) => {
    const get = item.get as Json;
    const parameters = ((get.parameters ?? []) as Json[]).map(resolve).map((p): DocumentedParameter => ({
      name: p.name,
      in: p.in,
      required: Boolean(p.required),
      type: p.schema?.type ?? 'string',
      enum: p.schema?.enum,
      maxLength: p.schema?.maxLength,
      itemMaxLength: p.schema?.items?.maxLength,
      clampMaximum: p['x-clamp-maximum'],
      default: p.schema?.default,
      scanWindow: p['x-scan-window'],
    }));
    return { operationId: get.operationId, path, handler: get['x-handler'] ?? get.operationId, parameters };
  });

/** The paths (canonical first, then aliases) served by one implementation. */
export function pathsOf(handler: string): string[] {
  return catalogueOperations.filter((o) => o.handler === handler).map((o) => o.path);
}

export interface SmallCatalogue {
  tags: Record<string, string>;
  series: Record<string, string>;
  events: Record<string, string>;
  markets: Record<string, string>;
  users: Record<string, string>;
}

/**
 * A small catalogue whose names hold no SQL or LIKE metacharacter: category `sc-cat`, tags `sc-red`,
 * `sc-blue`, series SCA (weekly) and SCB (daily), events SCA-1..3 (ACTIVE), SCB-1 (CLOSED), SCB-2
 * (RESOLVED), one market each, a creator `sccreator`, a comment.
 */
export async function insertSmallCatalogue(db: Knex): Promise<SmallCatalogue> {
  const out: SmallCatalogue = { tags: {}, series: {}, events: {}, markets: {}, users: {} };
  const id = (row: { id: unknown }) => String(row.id);
  const [user] = await db('users').insert({ email: 'sccreator@example.com', username: 'sccreator', name: 'Small Creator', password_hash: 'x' }).returning('id');
  out.users.sccreator = id(user);
  const [category] = await db('categories').insert({ slug: 'sc-cat', name: 'Small Category' }).returning('id');
  for (const slug of ['sc-red', 'sc-blue']) out.tags[slug] = id((await db('tags').insert({ slug, label: slug.replace('sc-', 'Small ') }).returning('id'))[0]);
  for (const [ticker, frequency] of [['SCA', 'weekly'], ['SCB', 'daily']] as const) {
    const [row] = await db('series').insert({ ticker, slug: ticker.toLowerCase(), title: `Small series ${ticker}`, category_id: category.id, frequency }).returning('id');
    out.series[ticker] = id(row);
    await db('series_tags').insert({ series_id: row.id, tag_id: out.tags['sc-red'] });
  }
  const events: Array<[string, string, string, string]> = [
    ['SCA-1', 'SCA', 'ACTIVE', 'sc-red'],
    ['SCA-2', 'SCA', 'ACTIVE', 'sc-blue'],
    ['SCA-3', 'SCA', 'ACTIVE', 'sc-red'],
    ['SCB-1', 'SCB', 'CLOSED', 'sc-blue'],
    ['SCB-2', 'SCB', 'RESOLVED', 'sc-red'],
  ];
  for (const [i, [ticker, series, status, tag]] of events.entries()) {
    const [row] = await db('events')
      .insert({
        ticker, slug: ticker.toLowerCase(), series_id: out.series[series], title: `Small event ${ticker}`, status, creator_id: out.users.sccreator,
        start_date: new Date(Date.UTC(2024, 0, 1 + i)), strike_date: new Date(Date.UTC(2099, 0, 1 + i)),
        closed_time: status === 'ACTIVE' ? null : new Date(Date.UTC(2024, 5, 1 + i)), volume: String(10 * (i + 1)), liquidity: String(i),
        created_at: new Date(Date.UTC(2023, 0, 1 + i)), updated_at: new Date(Date.UTC(2023, 1, 1 + i)),
      })
      .returning('id');
    out.events[ticker] = id(row);
    await db('event_tags').insert({ event_id: row.id, tag_id: out.tags[tag] });
    const resolved = status === 'RESOLVED';
    const [market] = await db('markets')
      .insert({ ticker: `${ticker}-M`, event_id: row.id, title: `Small market ${ticker}`, status, result: resolved ? 'yes' : null, volume: '1', liquidity: '1' })
      .returning('id');
    out.markets[`${ticker}-M`] = id(market);
    await db('market_tags').insert({ market_id: market.id, tag_id: out.tags[tag] });
  }
  await db('comments').insert({ market_id: out.markets['SCA-1-M'], author_id: out.users.sccreator, body: 'hello' });
  return out;
}
