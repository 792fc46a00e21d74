import type { Knex } from 'knex';

/**
 * What the native catalogue reads (`/api/markets`, `/api/series`, `/api/tags/{slug}`, `/api/search`) need
 * to stay fast on a large catalogue.
 *
 * Indexes:
 * - markets by (status, created_at, id) and series by (category_id, created_at, id): the filtered lists,
 *   newest first, read in index order;
 * - markets by ticker and by lower-cased title in byte order (`collate "C"`), with id: prefix matches of the
 *   search, read in index order and cut at the page size, whatever the database's collation (the events'
 *   counterparts come with migration 0004);
 * - series by trigrams of their title and ticker, like events and markets (migration 0002): the search's
 *   "anywhere" and similarity matches.
 *
 * Counters kept by triggers, so that reads never count hundreds of thousands of rows:
 * - `market_status_counts`: markets per status (the `total` of `/api/markets` in page mode). Statement-level
 *   triggers with transition tables on insert and delete (one aggregated statement per statement, so bulk
 *   inserts stay fast), a row trigger that fires only when a market's status changes, a reset on truncate.
 * - `tag_market_pairs`: for each ordered pair of tags, the markets carrying both; the pair of a tag with
 *   itself is the number of markets carrying it. Kept from `market_tags` by statement-level triggers (the
 *   upserts run in key order, so concurrent writers lock pairs in the same order); an update or truncate
 *   of `market_tags` (nothing does either) recomputes it. Rows that drop to 0 stay, with 0.
 */
const INDEXES = [
  ['markets_status_created_at_id', 'markets (status, created_at, id)'],
  ['series_category_created_at_id', 'series (category_id, created_at, id)'],
  ['markets_ticker_c_id', 'markets ((ticker collate "C"), id)'],
  ['markets_title_c_id', 'markets ((lower(title) collate "C"), id)'],
  ['series_search_trgm', `series using gin ((lower(title) || ' ' || lower(ticker)) gin_trgm_ops)`],
] as const;

const PAIRS_FROM_SCRATCH = `
  insert into tag_market_pairs (tag_id, other_tag_id, markets)
  select a.tag_id, b.tag_id, count(*) from market_tags a join market_tags b on b.market_id = a.market_id
  group by a.tag_id, b.tag_id order by a.tag_id, b.tag_id`;

export async function up(knex: Knex): Promise<void> {
  for (const [name, on] of INDEXES) await knex.raw(`create index if not exists ${name} on ${on}`);

  // --- markets per status
  await knex.raw(`create table market_status_counts (status text primary key, markets bigint not null default 0)`);
  await knex.raw(`
    create function markets_count_inserted() returns trigger language plpgsql as $$
    begin
      insert into market_status_counts (status, markets)
      select status, count(*) from added group by status order by status
      on conflict (status) do update set markets = market_status_counts.markets + excluded.markets;
      return null;
    end $$`);
  await knex.raw(`
    create function markets_count_deleted() returns trigger language plpgsql as $$
    begin
      update market_status_counts c set markets = c.markets - r.n
      from (select status, count(*) as n from removed group by status) r where c.status = r.status;
      return null;
    end $$`);
  await knex.raw(`
    create function markets_count_status_changed() returns trigger language plpgsql as $$
    begin
      insert into market_status_counts (status, markets)
      select s, n from (values (old.status, -1), (new.status, 1)) v (s, n) order by s
      on conflict (status) do update set markets = market_status_counts.markets + excluded.markets;
      return null;
    end $$`);
  await knex.raw(`
    create function markets_count_truncated() returns trigger language plpgsql as $$
    begin
      update market_status_counts set markets = 0 where markets <> 0;
      return null;
    end $$`);
  await knex.raw(`create trigger markets_count_inserted after insert on markets referencing new table as added
    for each statement execute function markets_count_inserted()`);
  await knex.raw(`create trigger markets_count_deleted after delete on markets referencing old table as removed
    for each statement execute function markets_count_deleted()`);
  await knex.raw(`create trigger markets_count_status_changed after update of status on markets
    for each row when (old.status is distinct from new.status) execute function markets_count_status_changed()`);
  await knex.raw(`create trigger markets_count_truncated after truncate on markets
    for each statement execute function markets_count_truncated()`);
  await knex.raw(`insert into market_status_counts (status, markets) select status, count(*) from markets group by status`);

  // --- markets shared by each pair of tags
  await knex.raw(`
    create table tag_market_pairs (
      tag_id bigint not null,
      other_tag_id bigint not null,
      markets integer not null,
      primary key (tag_id, other_tag_id)
    )`);
  await knex.raw(`
    create function market_tags_pairs_inserted() returns trigger language plpgsql as $$
    begin
      -- new pairs of a market: (added, any tag it now carries) and (tag it already carried, added)
      insert into tag_market_pairs (tag_id, other_tag_id, markets)
      select x.a, x.b, count(*) from (
        select a.tag_id as a, mt.tag_id as b from added a join market_tags mt on mt.market_id = a.market_id
        union all
        select mt.tag_id, a.tag_id from added a join market_tags mt on mt.market_id = a.market_id
         where not exists (select 1 from added n where n.market_id = mt.market_id and n.tag_id = mt.tag_id)
      ) x group by x.a, x.b order by x.a, x.b
      on conflict (tag_id, other_tag_id) do update set markets = tag_market_pairs.markets + excluded.markets;
      return null;
    end $$`);
  await knex.raw(`
    create function market_tags_pairs_deleted() returns trigger language plpgsql as $$
    begin
      -- lost pairs of a market: (removed, removed), (removed, still carried) and (still carried, removed)
      update tag_market_pairs p set markets = p.markets - l.n
      from (
        select x.a, x.b, count(*) as n from (
          select r.tag_id as a, r2.tag_id as b from removed r join removed r2 on r2.market_id = r.market_id
          union all
          select r.tag_id, mt.tag_id from removed r join market_tags mt on mt.market_id = r.market_id
          union all
          select mt.tag_id, r.tag_id from removed r join market_tags mt on mt.market_id = r.market_id
        ) x group by x.a, x.b order by x.a, x.b
      ) l
      where p.tag_id = l.a and p.other_tag_id = l.b;
      return null;
    end $$`);
  await knex.raw(`
    create function market_tags_pairs_recomputed() returns trigger language plpgsql as $$
    begin
      delete from tag_market_pairs;
      ${PAIRS_FROM_SCRATCH};
      return null;
    end $$`);
  await knex.raw(`create trigger market_tags_pairs_inserted after insert on market_tags referencing new table as added
    for each statement execute function market_tags_pairs_inserted()`);
  await knex.raw(`create trigger market_tags_pairs_deleted after delete on market_tags referencing old table as removed
    for each statement execute function market_tags_pairs_deleted()`);
  await knex.raw(`create trigger market_tags_pairs_updated after update on market_tags
    for each statement execute function market_tags_pairs_recomputed()`);
  await knex.raw(`create trigger market_tags_pairs_truncated after truncate on market_tags
    for each statement execute function market_tags_pairs_recomputed()`);
  await knex.raw(PAIRS_FROM_SCRATCH);
}

export async function down(knex: Knex): Promise<void> {
  for (const t of ['truncated', 'updated', 'deleted', 'inserted']) await knex.raw(`drop trigger if exists market_tags_pairs_${t} on market_tags`);
  for (const t of ['truncated', 'status_changed', 'deleted', 'inserted']) await knex.raw(`drop trigger if exists markets_count_${t} on markets`);
  for (const f of ['market_tags_pairs_recomputed', 'market_tags_pairs_deleted', 'market_tags_pairs_inserted']) await knex.raw(`drop function if exists ${f}()`);
  for (const f of ['markets_count_truncated', 'markets_count_status_changed', 'markets_count_deleted', 'markets_count_inserted']) await knex.raw(`drop function if exists ${f}()`);
  await knex.raw('drop table if exists tag_market_pairs');
  await knex.raw('drop table if exists market_status_counts');
  for (const [name] of INDEXES) await knex.raw(`drop index if exists ${name}`);
}
