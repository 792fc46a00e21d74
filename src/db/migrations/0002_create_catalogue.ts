import type { Knex } from 'knex';

/**
 * The catalogue: categories, tags, series, events, markets, their tag links and comments.
 * Ids are bigint identities (the API shows them as strings). Event volume, liquidity and open interest are
 * kept as columns, maintained from their markets, so that filters and orderings over them use indexes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists pg_trgm');
  await knex.schema.alterTable('users', (t) => {
    t.text('avatar_url');
  });

  await knex.schema.createTable('categories', (t) => {
    t.bigIncrements('id');
    t.text('slug').notNullable().unique();
    t.text('name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('tags', (t) => {
    t.bigIncrements('id');
    t.text('slug').notNullable().unique();
    t.text('label').notNullable();
    t.boolean('force_show').notNullable().defaultTo(false);
    t.boolean('force_hide').notNullable().defaultTo(false);
    t.boolean('is_carousel').notNullable().defaultTo(false);
    t.integer('created_by');
    t.integer('updated_by');
    t.timestamp('published_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create index tags_label_trgm on tags using gin (lower(label) gin_trgm_ops)');

  await knex.schema.createTable('series', (t) => {
    t.bigIncrements('id');
    t.text('ticker').notNullable().unique();
    t.text('slug').notNullable().unique();
    t.text('title').notNullable();
    t.bigInteger('category_id').notNullable().references('categories.id');
    t.text('frequency').notNullable();
    t.text('series_type').notNullable().defaultTo('single');
    t.text('description').notNullable().defaultTo('');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['category_id']);
    t.index(['frequency']);
    t.index(['created_at', 'id']);
  });
  await knex.raw('create index series_title_trgm on series using gin (lower(title) gin_trgm_ops)');

  await knex.schema.createTable('events', (t) => {
    t.bigIncrements('id');
    t.text('ticker').notNullable().unique();
    t.text('slug').notNullable().unique();
    t.bigInteger('series_id').notNullable().references('series.id');
    t.text('title').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.boolean('mutually_exclusive').notNullable().defaultTo(false);
    t.text('status').notNullable().defaultTo('ACTIVE');
    t.uuid('creator_id').references('users.id');
    t.timestamp('start_date', { useTz: true }).notNullable();
    t.timestamp('strike_date', { useTz: true }).notNullable();
    t.timestamp('closed_time', { useTz: true });
    t.decimal('volume', 28, 8).notNullable().defaultTo(0);
    t.decimal('liquidity', 28, 8).notNullable().defaultTo(0);
    t.decimal('open_interest', 28, 8).notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("status in ('ACTIVE', 'CLOSED', 'RESOLVED')", [], 'events_status_check');
    t.check('strike_date >= start_date', [], 'events_dates_check');
  });
  for (const columns of [
    'series_id, created_at, id',
    'status, created_at, id',
    'created_at, id',
    'updated_at, id',
    'start_date, id',
    'strike_date, id',
    'volume, id',
    'liquidity, id',
    'open_interest, id',
    'title, id',
    'creator_id',
    "((start_date at time zone 'UTC')::date)",
  ]) {
    await knex.raw(`create index on events (${columns})`);
  }
  await knex.raw('create index events_search_trgm on events using gin ((lower(title) || \' \' || lower(ticker)) gin_trgm_ops)');

  await knex.schema.createTable('markets', (t) => {
    t.bigIncrements('id');
    t.text('ticker').notNullable().unique();
    t.bigInteger('event_id').notNullable().references('events.id');
    t.text('title').notNullable();
    t.text('status').notNullable().defaultTo('ACTIVE');
    t.text('result');
    t.decimal('last_yes_price', 10, 4);
    t.decimal('last_no_price', 10, 4);
    t.decimal('volume', 28, 8).notNullable().defaultTo(0);
    t.decimal('liquidity', 28, 8).notNullable().defaultTo(0);
    t.decimal('open_interest', 28, 8).notNullable().defaultTo(0);
    t.decimal('rewards_min_size', 28, 8);
    t.decimal('rewards_max_spread', 10, 4);
    t.timestamp('closed_at', { useTz: true });
    t.timestamp('resolved_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("status in ('ACTIVE', 'CLOSED', 'RESOLVED')", [], 'markets_status_check');
    t.check("result is null or result in ('yes', 'no', 'invalid')", [], 'markets_result_check');
    t.check("(status = 'RESOLVED') = (result is not null)", [], 'markets_resolved_has_result');
    t.index(['event_id', 'id']);
    t.index(['created_at', 'id']);
    t.index(['status']);
  });
  await knex.raw('create index markets_search_trgm on markets using gin ((lower(title) || \' \' || lower(ticker)) gin_trgm_ops)');
  // One YES per mutually exclusive event is enforced in the service under the event's row lock.

  for (const [table, owner, ownerTable] of [
    ['series_tags', 'series_id', 'series'],
    ['event_tags', 'event_id', 'events'],
    ['market_tags', 'market_id', 'markets'],
  ] as const) {
    await knex.schema.createTable(table, (t) => {
      t.bigInteger(owner).notNullable().references(`${ownerTable}.id`).onDelete('CASCADE');
      t.bigInteger('tag_id').notNullable().references('tags.id').onDelete('CASCADE');
      t.primary([owner, 'tag_id']);
      t.index(['tag_id', owner]);
    });
  }

  await knex.schema.createTable('comments', (t) => {
    t.bigIncrements('id');
    t.bigInteger('market_id').notNullable().references('markets.id').onDelete('CASCADE');
    t.uuid('author_id').notNullable().references('users.id');
    t.text('body').notNullable();
    t.boolean('hidden').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['market_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['comments', 'market_tags', 'event_tags', 'series_tags', 'markets', 'events', 'series', 'tags', 'categories']) {
    await knex.schema.dropTable(table);
  }
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('avatar_url');
  });
}
