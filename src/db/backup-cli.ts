/**
 * `npm run backup -- FILE` and `npm run restore -- FILE` (src/db/backup.ts), on `DATABASE_URL`, or else on
 * the embedded PostgreSQL of `DATA_DIR`: the one the running service started. A restore with no service
 * running there starts that PostgreSQL itself for its duration (creating the cluster in a new DATA_DIR),
 * so that a database can be restored before the service first starts on it.
 * Exit codes: 0 done, 1 refused or failed (nothing changed), 2 wrong usage or settings.
 */
import { ConfigError, loadConfig } from '../config.js';
import { backupDatabase, restoreDatabase, type BackupSummary } from './backup.js';
import { EmbeddedDatabaseError, runningEmbeddedUrl, startEmbeddedPostgres, type EmbeddedDatabase } from './embedded.js';

const USAGE = 'usage: npm run backup -- FILE   or   npm run restore -- FILE';

function describe(summary: BackupSummary): string {
  const megabytes = (summary.bytes / 1024 / 1024).toFixed(1);
  return `${summary.tables} tables, ${summary.rows.toLocaleString('en')} rows, ${megabytes} MiB, in ${summary.seconds.toFixed(1)} s`;
}

async function main(): Promise<number> {
  const [command, file, ...extra] = process.argv.slice(2);
  if ((command !== 'backup' && command !== 'restore') || !file || extra.length > 0) {
    console.error(USAGE);
    return 2;
  }
  let embedded: EmbeddedDatabase | undefined;
  try {
    const config = loadConfig();
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      try {
        databaseUrl = await runningEmbeddedUrl(config.dataDir);
      } catch (error) {
        if (command === 'backup' || !(error instanceof EmbeddedDatabaseError)) throw error;
        embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, stageDir: config.embeddedPgDir });
        databaseUrl = embedded.url;
      }
    }
    if (command === 'backup') {
      console.log(`backup: wrote ${file}: ${describe(await backupDatabase(databaseUrl, file))}`);
    } else {
      console.log(`restore: loaded ${file}: ${describe(await restoreDatabase(databaseUrl, file))}`);
    }
    return 0;
  } catch (error) {
    console.error(`${command} failed: ${error instanceof Error ? error.message : String(error)}`);
    return error instanceof ConfigError ? 2 : 1;
  } finally {
    await embedded?.stop();
  }
}

process.exitCode = await main();
