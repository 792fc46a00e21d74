/**
 * The database of `npm run bench:catalogue`: an embedded PostgreSQL kept under `.data/bench-catalogue`
 * (git-ignored, so a second run reuses the seeded catalogue), or BENCH_DATABASE_URL when set. In the
 * embedded cluster each catalogue size has its own database (`catalogue_<events>`), so that a quick run at
 * a small size never costs the large catalogue. Migrated, then seeded with the scale generator
 * (src/db/seed/generator.ts, as `npm run seed:scale` does) when empty.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.js';
import { createDb } from '../src/db/knex.js';
import { migrateLatest } from '../src/db/migrate.js';
import { isCatalogueEmpty } from '../src/db/repositories/seed.js';
import { generateCatalogue } from '../src/db/seed/generator.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BENCH_DATA_DIR = path.join(root, '.data/bench-catalogue');

export interface BenchDatabase {
  url: string;
  /** How the catalogue came to be: seeded now (with the time it took) or found. */
  seeded: { seconds: number } | undefined;
  migrations: string[];
  /** The embedded PostgreSQL's postmaster.pid (undefined on BENCH_DATABASE_URL). */
  postmasterPidFile: string | undefined;
  stop(): Promise<void>;
}

/** The same generator options as `npm run seed:scale`: about 3 markets per event, 50 events per series. */
const GENERATOR = { eventsPerSeries: 50, marketsPerEvent: 3, creatorIds: [] as string[] };

function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function ensureDatabase(serverUrl: string, database: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) await admin.query(`create database ${database}`);
  } finally {
    await admin.end();
  }
}

export async function prepareDatabase(options: { events: number; log: (line: string) => void }): Promise<BenchDatabase> {
  let embedded: EmbeddedDatabase | undefined;
  let url = process.env.BENCH_DATABASE_URL?.trim() || undefined;
  if (!url) {
    options.log(`starting the embedded PostgreSQL in ${path.relative(process.cwd(), BENCH_DATA_DIR) || BENCH_DATA_DIR}`);
    embedded = await startEmbeddedPostgres({ dataDir: BENCH_DATA_DIR });
    const database = `catalogue_${options.events}`;
    try {
      await ensureDatabase(embedded.url, database);
    } catch (error) {
      await embedded.stop();
      throw error;
    }
    url = withDatabase(embedded.url, database);
  }
  const db = createDb(url, 4);
  try {
    const migrations = await migrateLatest(db);
    if (migrations.length > 0) options.log(`migrations applied: ${migrations.join(', ')}`);
    let seeded: BenchDatabase['seeded'];
    if (await isCatalogueEmpty(db)) {
      options.log(`seeding ${options.events} events (about ${options.events * GENERATOR.marketsPerEvent} markets); this takes a while once`);
      const started = Date.now();
      const counts = await generateCatalogue(db, { events: options.events, ...GENERATOR });
      // Not only statistics: rows just loaded have no hint bits and their pages are not marked all-visible, so
      // the first reads of every page would write it (and index-only scans visit the heap). VACUUM does that
      // once, so that the run that seeds measures what later runs measure.
      await db.raw('vacuum (analyze)');
      seeded = { seconds: (Date.now() - started) / 1000 };
      options.log(`seeded ${counts.series} series, ${counts.events} events, ${counts.markets} markets in ${seeded.seconds.toFixed(1)} s`);
    } else {
      const { rows } = await db.raw('select count(*)::int as n from events');
      const found = rows[0].n as number;
      if (found !== options.events) {
        throw new Error(
          `the database holds ${found} events, not ${options.events}: ` +
            (embedded ? `remove ${BENCH_DATA_DIR} to reseed` : 'point BENCH_DATABASE_URL at an empty database or one seeded at this size'),
        );
      }
      // New indexes (a migration applied just now) need fresh statistics for their expressions.
      if (migrations.length > 0) await db.raw('analyze');
      options.log(`reusing the seeded catalogue of ${found} events`);
    }
    const postmasterPidFile = embedded ? path.join(BENCH_DATA_DIR, 'pg', 'postmaster.pid') : undefined;
    return { url, seeded, migrations, postmasterPidFile, stop: async () => embedded?.stop() };
  } catch (error) {
    await embedded?.stop();
    throw error;
  } finally {
    await db.destroy();
  }
}

/** The market whose price history and order book are measured, and the end of its history (Unix seconds). */
export interface BusyMarket {
  id: string;
  ticker: string;
  series: string;
  end: number;
}

const MINUTES_A_YEAR = 365 * 24 * 60;

/**
 * A busy market: the catalogue's first, given a year of candles (a trade every minute, up to the minute the
 * history was seeded: 525,600 minute rows by generate_series, then the 8,760 hours and 366 days summed from
 * them, each a bulk insert) and a
 * book of 500 resting orders (250 YES bids, 250 NO bids, 10 contracts each, one account made for them),
 * unless it has them already.
 */
export async function seedBusyMarket(url: string, log: (line: string) => void): Promise<BusyMarket> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const market = (
      await client.query<{ id: string; ticker: string; series: string }>(
        `select m.id::text, m.ticker, s.ticker as series from markets m join events e on e.id = m.event_id join series s on s.id = e.series_id order by m.id limit 1`,
      )
    ).rows[0]!;
    const held = (await client.query<{ n: number; days: number }>(`select count(*)::int as n, count(*) filter (where period = 1440)::int as days from market_candles where market_id = $1`, [market.id])).rows[0]!;
    if (held.n < MINUTES_A_YEAR || held.days === 0) {
      log(`seeding a year of minute candles and a book of 500 orders for ${market.ticker}`);
      await client.query('begin');
      await client.query('delete from market_candles where market_id = $1', [market.id]);
      // Prices wander between 0.05 and 0.95; open interest grows by the minute's volume.
      await client.query(
        `insert into market_candles (market_id, period, start_ts, open, high, low, close, price_volume, volume, open_interest,
                                     yes_bid, yes_bid_low, yes_bid_high, yes_ask, yes_ask_low, yes_ask_high)
         select $1, 1, m.start_ts, p.open, greatest(p.open, p.close) + 0.01, least(p.open, p.close) - 0.01, p.close, p.close * 10, 10, 10 * m.n,
                p.close - 0.01, p.close - 0.02, p.close, p.close + 0.01, p.close, p.close + 0.02
           from (select n, date_trunc('minute', now()) - make_interval(mins => $2::int - n) as start_ts from generate_series(1, $2::int) as n) as m
           cross join lateral (select round((0.5 + 0.4 * sin(m.n / 500.0))::numeric, 2) as open, round((0.5 + 0.4 * sin((m.n + 1) / 500.0))::numeric, 2) as close) as p`,
        [market.id, MINUTES_A_YEAR],
      );
      await client.query(
        `insert into market_candles (market_id, period, start_ts, open, high, low, close, price_volume, volume, open_interest,
                                     yes_bid, yes_bid_low, yes_bid_high, yes_ask, yes_ask_low, yes_ask_high)
         select market_id, p.period, date_bin(make_interval(mins => p.period), start_ts, timestamptz 'epoch'), (array_agg(open order by start_ts))[1], max(high), min(low),
                (array_agg(close order by start_ts desc))[1], sum(price_volume), sum(volume), max(open_interest),
                (array_agg(yes_bid order by start_ts desc))[1], min(yes_bid_low), max(yes_bid_high),
                (array_agg(yes_ask order by start_ts desc))[1], min(yes_ask_low), max(yes_ask_high)
           from market_candles cross join (values (60), (1440)) as p (period)
          where market_id = $1 and market_candles.period = 1
          group by 1, 2, 3`,
        [market.id],
      );
      await client.query(`insert into users (email, username, password_hash) select 'bench-book@bench.local', 'bench-book', '-' where not exists (select 1 from users where email = 'bench-book@bench.local')`);
      await client.query(
        `insert into orders (id, account_id, market_id, side, action, price, count, remaining, status, time_in_force, client_order_id, builder_code, sequence)
         select gen_random_uuid(), u.id, $1, case when n % 2 = 0 then 'yes' else 'no' end, 'buy', 0.01 + (n / 2) % 49 * 0.01, 10, 10, 'OPEN', 'GTC',
                'bench-book-' || n, '0x' || repeat('0', 64), nextval('order_sequence')
           from generate_series(0, 499) as n, users u
          where u.email = 'bench-book@bench.local'
            and not exists (select 1 from orders o where o.client_order_id = 'bench-book-' || n and o.account_id = u.id)`,
        [market.id],
      );
      await client.query('commit');
      await client.query('analyze market_candles');
    }
    const end = (await client.query<{ end: number }>(`select extract(epoch from max(start_ts))::int + 60 as end from market_candles where market_id = $1 and period = 1`, [market.id])).rows[0]!.end;
    return { ...market, end };
  } finally {
    await client.end();
  }
}
