/**
 * `npm run seed:scale -- --events 100000 [--database-url URL | --data-dir DIR]`: fills an empty database
 * with a generated catalogue of that size (about 3 markets per event) for benchmarks.
 */
import { parseArgs } from 'node:util';
import { startEmbeddedPostgres } from '../embedded.js';
import { createDb } from '../knex.js';
import { migrateLatest } from '../migrate.js';
import { isCatalogueEmpty } from '../repositories/seed.js';
import { generateCatalogue } from './generator.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    'database-url': { type: 'string' },
    'data-dir': { type: 'string', default: process.env.DATA_DIR ?? './.data' },
  },
});
const events = Number(values.events);
if (!Number.isSafeInteger(events) || events < 1) {
  console.error('--events must be a positive whole number');
  process.exit(2);
}
const databaseUrl = values['database-url'] ?? process.env.DATABASE_URL;
const embedded = databaseUrl ? undefined : await startEmbeddedPostgres({ dataDir: values['data-dir'] });
const db = createDb(databaseUrl ?? embedded!.url, 4);
try {
  await migrateLatest(db);
  if (!(await isCatalogueEmpty(db))) throw new Error('the catalogue is not empty; seed:scale fills only an empty database');
  const started = Date.now();
  const counts = await generateCatalogue(db, { events, eventsPerSeries: 50, marketsPerEvent: 3, creatorIds: [] });
  await db.raw('analyze');
  console.log(`seeded ${counts.series} series, ${counts.events} events, ${counts.markets} markets in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (error) {
  console.error(`seed:scale failed: ${String(error)}`);
  process.exitCode = 1;
} finally {
  await db.destroy();
  await embedded?.stop();
}
