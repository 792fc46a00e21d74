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
