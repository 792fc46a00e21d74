import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startService } from './server.js';

/** `npm start`: the service on the configured (or embedded) PostgreSQL until SIGTERM or SIGINT. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`dots-exchange: configuration refused: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  const service = await startService(config, logger);
  logger.info({ url: service.url, docs: `${service.url}/docs` }, 'Dots Exchange is listening');

  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    service.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  console.error('dots-exchange: failed to start:', error);
  process.exit(1);
});
