import type { Queryable } from '../knex.js';
import type { CategoriesRow, EventsRow, MarketResult, MarketsRow, SeriesRow, TagsRow } from '../tables.js';

/** Writes of catalogue administration, and the look-ups they need. */

export async function insertTag(db: Queryable, tag: { slug: string; label: string }): Promise<TagsRow> {
  const [row] = await db<TagsRow>('tags').insert(tag).returning('*');
  return row as TagsRow;
}

/** The ids of these tag slugs; slugs that name no tag are missing from the map. */
export async function findTagIdsBySlug(db: Queryable, slugs: readonly string[]): Promise<Map<string, string>> {
  if (slugs.length === 0) return new Map();
  const rows = await db<TagsRow>('tags').whereIn('slug', slugs).select('id', 'slug');
  return new Map(rows.map((r) => [r.slug, r.id]));
}

export async function linkTags(db: Queryable, table: 'series_tags' | 'event_tags' | 'market_tags', ownerColumn: string, ownerId: string, tagIds: string[]): Promise<void> {
  if (tagIds.length === 0) return;
  await db(table).insert(tagIds.map((tagId) => ({ [ownerColumn]: ownerId, tag_id: tagId }))).onConflict().ignore();
}

export async function upsertCategory(db: Queryable, slug: string, name: string): Promise<CategoriesRow> {
  const [row] = await db<CategoriesRow>('categories').insert({ slug, name }).onConflict('slug').merge({ slug }).returning(['id', 'slug', 'name']);
  return row as CategoriesRow;
}

export async function insertSeries(
  db: Queryable,
  series: Pick<SeriesRow, 'ticker' | 'slug' | 'title' | 'category_id' | 'frequency' | 'description'>,
): Promise<SeriesRow> {
  const [row] = await db<SeriesRow>('series').insert(series).returning('*');
  return row as SeriesRow;
}

export async function findSeriesByTicker(db: Queryable, ticker: string): Promise<SeriesRow | undefined> {
  return db<SeriesRow>('series').where({ ticker }).first();
}

export async function insertEvent(
  db: Queryable,
  event: Pick<EventsRow, 'ticker' | 'slug' | 'series_id' | 'title' | 'description' | 'mutually_exclusive' | 'creator_id' | 'start_date' | 'strike_date'>,
): Promise<EventsRow> {
  const [row] = await db<EventsRow>('events').insert(event).returning('*');
  return row as EventsRow;
}

/** The event, locked until the transaction ends: serialises changes to its markets' outcomes. */
export async function lockEventByTicker(db: Queryable, ticker: string): Promise<EventsRow | undefined> {
  return db<EventsRow>('events').where({ ticker }).forUpdate().first();
}

export async function lockEventById(db: Queryable, id: string): Promise<EventsRow | undefined> {
  return db<EventsRow>('events').where({ id }).forUpdate().first();
}

export async function insertMarket(
  db: Queryable,
  market: Pick<MarketsRow, 'ticker' | 'event_id' | 'title' | 'rewards_min_size' | 'rewards_max_spread'>,
): Promise<MarketsRow> {
  const [row] = await db<MarketsRow>('markets').insert(market).returning('*');
  return row as MarketsRow;
}

export async function findMarketByTicker(db: Queryable, ticker: string): Promise<MarketsRow | undefined> {
  return db<MarketsRow>('markets').where({ ticker }).first();
}

export async function closeMarket(db: Queryable, id: string): Promise<MarketsRow> {
  const [row] = await db<MarketsRow>('markets')
    .where({ id })
    .update({ status: 'CLOSED', closed_at: db.fn.now(), updated_at: db.fn.now() } as never)
    .returning('*');
  return row as MarketsRow;
}

export async function resolveMarket(db: Queryable, id: string, result: MarketResult): Promise<MarketsRow> {
  const [row] = await db<MarketsRow>('markets')
    .where({ id })
    .update({ status: 'RESOLVED', result, resolved_at: db.fn.now(), closed_at: db.raw('coalesce(closed_at, now())'), updated_at: db.fn.now() } as never)
    .returning('*');
  return row as MarketsRow;
}

export async function countMarketsResolvedYes(db: Queryable, eventId: string): Promise<number> {
  const row = await db('markets').where({ event_id: eventId, status: 'RESOLVED', result: 'yes' }).count<{ count: string }>('* as count').first();
  return Number(row?.count ?? 0);
}

/**
 * An event's status follows its markets: ACTIVE while any is ACTIVE (or it has none), RESOLVED when all
 * are resolved, CLOSED otherwise. Its volume, liquidity and open interest are its markets' sums.
 */
export async function refreshEvent(db: Queryable, eventId: string): Promise<void> {
  await db.raw(
    `update events e set
       status = s.status,
       closed_time = case when s.status = 'ACTIVE' then null else coalesce(e.closed_time, now()) end,
       volume = s.volume, liquidity = s.liquidity, open_interest = s.open_interest,
       updated_at = now()
     from (
       select
         case
           when count(m.id) = 0 or bool_or(m.status = 'ACTIVE') then 'ACTIVE'
           when bool_and(m.status = 'RESOLVED') then 'RESOLVED'
           else 'CLOSED'
         end as status,
         coalesce(sum(m.volume), 0) as volume,
         coalesce(sum(m.liquidity), 0) as liquidity,
         coalesce(sum(m.open_interest), 0) as open_interest
       from markets m where m.event_id = ?
     ) s
     where e.id = ?`,
    [eventId, eventId],
  );
}
