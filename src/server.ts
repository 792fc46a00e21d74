import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp } from './app.js';
import type { Config } from './config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { createDb, type Db } from './db/knex.js';
import { migrateLatest } from './db/migrate.js';
import type { Logger } from './logger.js';
import { seedDemo } from './domain/demo/seed.js';
import { startExpirySweep } from './domain/trading/sweep.js';
import { createServices, type Services } from './services.js';

export const DOCUMENT_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../openapi/dist/openapi.json');

const EXPIRY_SWEEP_INTERVAL_MS = 1000;

export interface RunningService {
  server: Server;
  url: string;
  db: Db;
  services: Services;
  /** Stops accepting, finishes in-flight requests, closes the pool, stops the embedded database. */
  stop(): Promise<void>;
}

/** Everything `npm start` does, as a function: tests and benchmarks start the same service. */
export async function startService(config: Config, logger: Logger): Promise<RunningService> {
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    logger.info({ dataDir: config.dataDir }, 'starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, onLog: (line) => logger.debug({ postgres: line }) });
    databaseUrl = embedded.url;
  }
  const db = createDb(databaseUrl);
  try {
    const applied = await migrateLatest(db);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
    const document = JSON.parse(await readFile(DOCUMENT_PATH, 'utf8')) as object;
    const services = createServices(db, config, document);
    if (config.seed === 'demo' && (await seedDemo(db, services.accounts))) logger.info('demo catalogue and accounts seeded');
    if (config.admin) await services.accounts.ensureAdmin(config.admin.email, config.admin.password);
    const app = await createApp({ services, logger });
    const server = app.listen(config.port, config.host);
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    // Orders past their expiration_ts are cancelled within about a second (placements in their market
    // also cancel them on the spot).
    const expirySweep = startExpirySweep(services.trading, EXPIRY_SWEEP_INTERVAL_MS, (error) => logger.error({ err: error }, 'order expiry sweep failed'));

    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        await expirySweep.stop();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await db.destroy();
        await embedded?.stop();
      })();
      return stopping;
    };
    return { server, url, db, services, stop };
  } catch (error) {
    await db.destroy();
    await embedded?.stop();
    throw error;
  }
}
