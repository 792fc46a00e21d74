import { inTransaction, type Db, type Queryable } from '../../db/knex.js';
import * as admin from '../../db/repositories/catalogue-admin.js';
import * as catalogue from '../../db/repositories/catalogue.js';
import type { EventRecord, MarketRecord, SeriesRecord, TagRecord } from '../../db/repositories/catalogue.js';
import type { MarketResult } from '../../db/tables.js';
import { conflict, invalid, notFound } from '../errors.js';
import { settleClosedMarket, settleResolvedMarket } from '../trading/commands/settle.js';
import type { TradingTransactions } from '../trading/transaction.js';

const UNIQUE_VIOLATION = '23505';

/** Turns a unique-index violation into a 409 naming what is taken. */
function taken(what: string) {
  return (error: Error & { code?: string }) => {
    if (error.code === UNIQUE_VIOLATION) throw conflict(`${what} is already taken`);
    throw error;
  };
}

const titleCase = (slug: string) => slug.split('-').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');

/**
 * Catalogue administration: tags, series, events and markets, closing and resolving markets. Closing and
 * resolving run in a trading transaction (`trading`), so that settling the market's orders and positions
 * commits with the status change, and what trading does after a commit follows it.
 */
export class CatalogueAdminService {
  constructor(
    private readonly db: Db,
    private readonly trading: TradingTransactions,
  ) {}

  async createTag(input: { slug: string; label: string }): Promise<TagRecord> {
    const row = await admin.insertTag(this.db, input).catch(taken(`tag slug '${input.slug}'`));
    return (await catalogue.findTagRecord(this.db, { id: row.id }))!;
  }

  async createSeries(input: { ticker: string; title: string; slug?: string; category: string; frequency: string; description?: string; tags?: string[] }): Promise<SeriesRecord> {
    const id = await inTransaction(this.db, async (tx) => {
      const tagIds = await this.tagIds(tx, input.tags);
      const category = await admin.upsertCategory(tx, input.category, titleCase(input.category));
      const row = await admin
        .insertSeries(tx, {
          ticker: input.ticker,
          slug: input.slug ?? input.ticker.toLowerCase(),
          title: input.title,
          category_id: category.id,
          frequency: input.frequency,
          description: input.description ?? '',
        })
        .catch(taken(`series ticker '${input.ticker}' or slug`));
      await admin.linkTags(tx, 'series_tags', 'series_id', row.id, tagIds);
      return row.id;
    });
    return (await catalogue.findSeriesRecord(this.db, { id }))!;
  }

  async createEvent(
    input: { event_ticker: string; series_ticker: string; title: string; slug?: string; description?: string; mutually_exclusive?: boolean; strike_date: string; start_date?: string; tags?: string[] },
    creatorId: string,
  ): Promise<EventRecord> {
    const startDate = input.start_date ? new Date(input.start_date) : new Date();
    const strikeDate = new Date(input.strike_date);
    if (strikeDate < startDate) throw invalid('strike_date must not be before start_date');
    const id = await inTransaction(this.db, async (tx) => {
      const series = await admin.findSeriesByTicker(tx, input.series_ticker);
      if (!series) throw invalid(`series_ticker '${input.series_ticker}' names no series`);
      const tagIds = await this.tagIds(tx, input.tags);
      const row = await admin
        .insertEvent(tx, {
          ticker: input.event_ticker,
          slug: input.slug ?? input.event_ticker.toLowerCase(),
          series_id: series.id,
          title: input.title,
          description: input.description ?? '',
          mutually_exclusive: input.mutually_exclusive ?? false,
          creator_id: creatorId,
          start_date: startDate,
          strike_date: strikeDate,
        })
        .catch(taken(`event ticker '${input.event_ticker}' or slug`));
      await admin.linkTags(tx, 'event_tags', 'event_id', row.id, tagIds);
      return row.id;
    });
    return (await catalogue.findEventRecord(this.db, { id }))!;
  }

  async createMarket(input: { ticker: string; event_ticker: string; title: string; tags?: string[]; rewards_min_size?: string; rewards_max_spread?: string }): Promise<MarketRecord> {
    const id = await inTransaction(this.db, async (tx) => {
      const event = await admin.lockEventByTicker(tx, input.event_ticker);
      if (!event) throw invalid(`event_ticker '${input.event_ticker}' names no event`);
      if (event.status === 'RESOLVED') throw conflict(`event '${event.ticker}' is resolved`);
      const tagIds = await this.tagIds(tx, input.tags);
      const row = await admin
        .insertMarket(tx, {
          ticker: input.ticker,
          event_id: event.id,
          title: input.title,
          rewards_min_size: input.rewards_min_size ?? null,
          rewards_max_spread: input.rewards_max_spread ?? null,
        })
        .catch(taken(`market ticker '${input.ticker}'`));
      await admin.linkTags(tx, 'market_tags', 'market_id', row.id, tagIds);
      await admin.refreshEvent(tx, event.id);
      return row.id;
    });
    return (await catalogue.findMarketRecord(this.db, { id }))!;
  }

  async closeMarket(ticker: string): Promise<MarketRecord> {
    await this.trading.run(async (transaction) => {
      const { tx } = transaction;
      const market = await this.lockMarket(tx, ticker);
      if (market.status !== 'ACTIVE') throw conflict(`market '${ticker}' is ${market.status}, not ACTIVE`);
      await admin.closeMarket(tx, market.id);
      await settleClosedMarket(transaction, market.id);
      await admin.refreshEvent(tx, market.event_id);
    });
    return (await catalogue.findMarketRecord(this.db, { ticker }))!;
  }

  async resolveMarket(ticker: string, result: MarketResult): Promise<MarketRecord> {
    await this.trading.run(async (transaction) => {
      const { tx } = transaction;
      const market = await this.lockMarket(tx, ticker);
      if (market.status === 'RESOLVED') throw conflict(`market '${ticker}' is already resolved`);
      const event = (await admin.lockEventById(tx, market.event_id))!;
      if (result === 'yes' && event.mutually_exclusive && (await admin.countMarketsResolvedYes(tx, event.id)) > 0) {
        throw conflict(`event '${event.ticker}' is mutually exclusive and another market already resolved yes`);
      }
      await admin.resolveMarket(tx, market.id, result);
      await settleResolvedMarket(transaction, market.id, result);
      await admin.refreshEvent(tx, event.id);
    });
    return (await catalogue.findMarketRecord(this.db, { ticker }))!;
  }

  /** Locks the market's event first (always event, then market) so concurrent resolutions serialise. */
  private async lockMarket(tx: Queryable, ticker: string) {
    const market = await admin.findMarketByTicker(tx, ticker);
    if (!market) throw notFound(`no market '${ticker}'`);
    await admin.lockEventById(tx, market.event_id);
    return (await admin.findMarketByTicker(tx, ticker))!;
  }

  private async tagIds(tx: Queryable, slugs: string[] | undefined): Promise<string[]> {
    const wanted = [...new Set(slugs ?? [])];
    const found = await admin.findTagIdsBySlug(tx, wanted);
    const missing = wanted.filter((slug) => !found.has(slug));
    if (missing.length > 0) throw invalid(`unknown tag${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
    return wanted.map((slug) => found.get(slug)!);
  }
}
