import type { Knex } from 'knex';
import { Decimal } from 'decimal.js';

/**
 * Generates a realistic catalogue (categories, tags, series, events, markets, tag links, comments) from a
 * seeded PRNG, so the same options always give the same data. Used by the demo seed and, at larger
 * sizes, by `npm run seed:scale` for benchmarks. Rows are inserted in batches inside one transaction.
 */
export interface GeneratorOptions {
  events: number;
  /** Events per series, on average. */
  eventsPerSeries: number;
  marketsPerEvent: number;
  /** Account ids that appear as event creators (and comment authors). */
  creatorIds: string[];
  commentsPerMarket?: number;
  seed?: number;
  now?: Date;
}

const CATEGORIES = [
  ['politics', 'Politics'], ['economics', 'Economics'], ['sports', 'Sports'], ['crypto', 'Crypto'],
  ['weather', 'Weather'], ['science', 'Science'], ['culture', 'Culture'], ['technology', 'Technology'],
] as const;

const TOPICS: Record<string, string[]> = {
  politics: ['Senate vote', 'Approval rating', 'Election turnout', 'Cabinet nomination', 'Bill passage', 'Governor race'],
  economics: ['Fed rate', 'CPI print', 'Unemployment rate', 'GDP growth', 'Treasury yield', 'Retail sales'],
  sports: ['Championship winner', 'Match result', 'Top scorer', 'Grand Prix winner', 'Tournament final', 'MVP award'],
  crypto: ['Bitcoin price', 'Ether price', 'Solana price', 'Stablecoin supply', 'ETF inflows', 'Hash rate'],
  weather: ['NYC high temperature', 'Chicago snowfall', 'Hurricane landfall', 'LA rainfall', 'Heat index', 'Wind speed'],
  science: ['Launch success', 'Asteroid approach', 'Fusion milestone', 'Vaccine approval', 'Telescope discovery', 'Arctic ice extent'],
  culture: ['Box office opening', 'Album chart', 'Award show winner', 'Streaming top title', 'Book bestseller', 'Festival headliner'],
  technology: ['Phone launch', 'AI benchmark', 'Chip shipments', 'App store ranking', 'Outage duration', 'Product recall'],
};

const FREQUENCIES = [
  ['5m', 5 * 60_000], ['hourly', 3_600_000], ['daily', 86_400_000], ['weekly', 7 * 86_400_000], ['monthly', 30 * 86_400_000], ['annual', 365 * 86_400_000],
] as const;

const TAGS = [
  'elections', 'us-politics', 'fed', 'inflation', 'jobs', 'rates', 'bitcoin', 'ethereum', 'defi', 'football', 'basketball',
  'tennis', 'formula-1', 'temperature', 'storms', 'space', 'health', 'climate', 'movies', 'music', 'awards', 'ai', 'hardware',
  'apps', 'markets', 'daily', 'trending', 'new', 'global', 'europe', 'asia', 'america',
];

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const label = (slug: string) => slug.split('-').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');

async function insertReturningIds(tx: Knex.Transaction, table: string, rows: object[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < rows.length; i += 1000) {
    const inserted = await tx(table).insert(rows.slice(i, i + 1000)).returning('id');
    ids.push(...inserted.map((r: { id: string }) => String(r.id)));
  }
  return ids;
}

async function insertAll(tx: Knex.Transaction, table: string, rows: object[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 2000) await tx(table).insert(rows.slice(i, i + 2000));
}

/** The seeded PRNG's draws: a number in [0, 1), or one of some items. */
interface Draw {
  random: () => number;
  pick: <T>(items: readonly T[]) => T;
}

interface SeriesPlan {
  row: { ticker: string; slug: string; title: string; category_id: string; frequency: string; series_type: string; description: string };
  topic: string;
  period: number;
}

interface EventPlan {
  row: Record<string, unknown>;
  markets: number;
  tags: string[];
}

function planSeries({ random, pick }: Draw, count: number, categoryIds: readonly string[]): SeriesPlan[] {
  return Array.from({ length: count }, (_, i) => {
    const c = Math.floor(random() * CATEGORIES.length);
    const [categorySlug] = CATEGORIES[c]!;
    const topic = pick(TOPICS[categorySlug]!);
    const [frequency, period] = pick(FREQUENCIES);
    const ticker = `KX${topic.replace(/[^A-Za-z]/g, '').toUpperCase().slice(0, 10)}${i}`;
    return { row: { ticker, slug: ticker.toLowerCase(), title: `${topic} (${frequency})`, category_id: categoryIds[c]!, frequency, series_type: 'recurring', description: `${topic}, settled ${frequency}.` }, topic, period };
  });
}

/** Events: each series gets a run of consecutive occurrences around now. */
function planEvents(
  { random, pick }: Draw,
  options: GeneratorOptions,
  now: number,
  series: readonly SeriesPlan[],
  seriesIds: readonly string[],
  seriesTags: ReadonlyArray<{ tags: string[] }>,
  tagIds: readonly string[],
): EventPlan[] {
  const events: EventPlan[] = [];
  for (let e = 0; e < options.events; e += 1) {
    const s = e % series.length;
    const occurrence = Math.floor(e / series.length);
    const { row: seriesRow, topic, period } = series[s]!;
    const start = now - period * (Math.floor(options.eventsPerSeries / 2) - occurrence) - Math.floor(random() * 3_600_000);
    const strike = start + period;
    const ticker = `${seriesRow.ticker}-${occurrence + 1}`;
    const markets = 1 + Math.floor(random() * (options.marketsPerEvent * 2 - 1));
    const extraTag = random() < 0.3 ? [pick(tagIds)] : [];
    // Listed a day before it opens or, when that is still to come, shortly before `now` (a second apart in
    // the order generated): nothing in the catalogue was created in the future.
    const created = new Date(Math.min(start - 86_400_000, now - (options.events - e) * 1000));
    events.push({
      row: {
        ticker,
        slug: ticker.toLowerCase(),
        series_id: seriesIds[s]!,
        title: `${topic} #${occurrence + 1}`,
        description: `Resolves on the official ${topic.toLowerCase()} figure published after ${new Date(strike).toISOString().slice(0, 10)}.`,
        mutually_exclusive: markets > 1 && random() < 0.6,
        creator_id: options.creatorIds.length > 0 ? pick(options.creatorIds) : null,
        start_date: new Date(start),
        strike_date: new Date(strike),
        created_at: created,
        updated_at: created,
      },
      markets,
      tags: [...new Set([...seriesTags[s]!.tags, ...extraTag])],
    });
  }
  return events;
}

/**
 * The markets of every event, by its state (resolved a day after its strike, closed since it, else active),
 * with their figures; each event's row gets its state and its markets' figures summed.
 */
function planMarkets({ random }: Draw, events: readonly EventPlan[], now: number): { rows: Array<Record<string, unknown>>; tags: Array<{ index: number; tags: string[] }> } {
  const rows: Array<Record<string, unknown>> = [];
  const tags: Array<{ index: number; tags: string[] }> = [];
  for (const [eventIndex, event] of events.entries()) {
    const strike = (event.row.strike_date as Date).getTime();
    const state = strike < now - 86_400_000 ? 'RESOLVED' : strike < now ? 'CLOSED' : 'ACTIVE';
    const winner = Math.floor(random() * event.markets);
    let volume = new Decimal(0);
    let liquidity = new Decimal(0);
    let openInterest = new Decimal(0);
    for (let m = 0; m < event.markets; m += 1) {
      const yes = new Decimal(Math.floor(random() * 99) + 1).div(100);
      const marketVolume = new Decimal(Math.floor(random() * 500_000)).div(100);
      const marketLiquidity = state === 'ACTIVE' ? new Decimal(Math.floor(random() * 200_000)).div(100) : new Decimal(0);
      const marketOpenInterest = new Decimal(Math.floor(random() * 100_000)).div(100);
      volume = volume.plus(marketVolume);
      liquidity = liquidity.plus(marketLiquidity);
      openInterest = openInterest.plus(marketOpenInterest);
      const result = state !== 'RESOLVED' ? null : event.row.mutually_exclusive ? (m === winner ? 'yes' : 'no') : random() < 0.05 ? 'invalid' : random() < 0.5 ? 'yes' : 'no';
      const rewards = state === 'ACTIVE' && random() < 0.4;
      tags.push({ index: rows.length, tags: event.tags });
      rows.push({
        ticker: `${String(event.row.ticker)}-M${m + 1}`,
        event_index: eventIndex,
        title: `${String(event.row.title)}: outcome ${m + 1}`,
        status: state,
        result,
        last_yes_price: yes.toFixed(2),
        last_no_price: new Decimal(1).minus(yes).toFixed(2),
        volume: marketVolume.toFixed(),
        liquidity: marketLiquidity.toFixed(),
        open_interest: marketOpenInterest.toFixed(),
        rewards_min_size: rewards ? '10' : null,
        rewards_max_spread: rewards ? '0.03' : null,
        closed_at: state === 'ACTIVE' ? null : new Date(strike),
        resolved_at: state === 'RESOLVED' ? new Date(strike + 3_600_000) : null,
        created_at: event.row.created_at,
        updated_at: event.row.updated_at,
      });
    }
    Object.assign(event.row, {
      status: state,
      closed_time: state === 'ACTIVE' ? null : new Date(strike),
      volume: volume.toFixed(),
      liquidity: liquidity.toFixed(),
      open_interest: openInterest.toFixed(),
    });
  }
  return { rows, tags };
}

function planComments({ random, pick }: Draw, marketIds: readonly string[], commentsPerMarket: number, authorIds: readonly string[]): object[] {
  return marketIds.flatMap((market_id) =>
    Array.from({ length: Math.floor(random() * (commentsPerMarket * 2 + 1)) }, () => ({
      market_id,
      author_id: pick(authorIds),
      body: pick(['Priced too high.', 'Easy yes.', 'Waiting for the data.', 'Book is thin here.', 'Great market.']),
      hidden: random() < 0.1,
    })),
  );
}

export async function generateCatalogue(db: Knex, options: GeneratorOptions): Promise<{ series: number; events: number; markets: number }> {
  const random = mulberry32(options.seed ?? 20261122);
  const draw: Draw = { random, pick: (items) => items[Math.floor(random() * items.length)]! };
  const now = (options.now ?? new Date()).getTime();
  const seriesCount = Math.max(1, Math.round(options.events / options.eventsPerSeries));

  // Planned and inserted in this order: the PRNG's draws, and so the data, depend on it.
  return db.transaction(async (tx) => {
    const categoryIds = await insertReturningIds(tx, 'categories', CATEGORIES.map(([slug, name]) => ({ slug, name })));
    const tagIds = await insertReturningIds(tx, 'tags', TAGS.map((slug) => ({ slug, label: label(slug), is_carousel: random() < 0.1 })));

    const series = planSeries(draw, seriesCount, categoryIds);
    const seriesIds = await insertReturningIds(tx, 'series', series.map((s) => s.row));
    const seriesTags = seriesIds.map((id) => ({ id, tags: [...new Set([draw.pick(tagIds), draw.pick(tagIds)])] }));
    await insertAll(tx, 'series_tags', seriesTags.flatMap(({ id, tags }) => tags.map((tag_id) => ({ series_id: id, tag_id }))));

    const events = planEvents(draw, options, now, series, seriesIds, seriesTags, tagIds);
    const markets = planMarkets(draw, events, now);
    const eventIds = await insertReturningIds(tx, 'events', events.map((e) => e.row));
    await insertAll(tx, 'event_tags', events.flatMap((e, i) => e.tags.map((tag_id) => ({ event_id: eventIds[i]!, tag_id }))));
    const marketIds = await insertReturningIds(
      tx,
      'markets',
      markets.rows.map(({ event_index, ...row }) => ({ ...row, event_id: eventIds[event_index as number]! })),
    );
    await insertAll(tx, 'market_tags', markets.tags.flatMap(({ index, tags }) => tags.map((tag_id) => ({ market_id: marketIds[index]!, tag_id }))));

    const commentsPerMarket = options.commentsPerMarket ?? 0;
    if (commentsPerMarket > 0 && options.creatorIds.length > 0) await insertAll(tx, 'comments', planComments(draw, marketIds, commentsPerMarket, options.creatorIds));
    return { series: seriesIds.length, events: eventIds.length, markets: marketIds.length };
  });
}
