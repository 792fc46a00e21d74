/** `npm run migrate`: brings the configured (or embedded) database's schema up to date, then exits. */
import { ConfigError, loadConfig } from '../config.js';
import { startEmbeddedPostgres } from './embedded.js';
import { createDb } from './knex.js';
import { migrateLatest } from './migrate.js';

try {
  const config = loadConfig();
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ dataDir: config.dataDir, stageDir: config.embeddedPgDir });
  const db = createDb(config.databaseUrl ?? embedded!.url, 2);
  try {
    const applied = await migrateLatest(db);
    console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'schema is up to date');
  } finally {
    await db.destroy();
    await embedded?.stop();
  }
} catch (error) {
  console.error(`migrate failed: ${error instanceof ConfigError ? error.message : String(error)}`);
  process.exitCode = 1;
}
