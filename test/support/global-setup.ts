import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { createDb } from '../../src/db/knex.js';
import { migrateLatest } from '../../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Server URL (database part ignored) and the migrated template each test file copies. */
    testDatabase: { serverUrl: string; template: string };
  }
}

const TEMPLATE = 'dots_test_template';

/**
 * Once per run: dist/ brought up to date (the service processes the tests spawn run it, as `npm start`
 * does; nothing to do after `npm run build`), and a PostgreSQL (embedded in a temp dir, or
 * TEST_DATABASE_URL) with a migrated template database. Each test file then gets its own copy
 * (`create database ... template`), so files never see each other's rows.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  execFileSync(process.execPath, ['codegen/build.mjs', '--if-stale'], { stdio: 'inherit' });
  let embedded: EmbeddedDatabase | undefined;
  let dataDir: string | undefined;
  let serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    dataDir = await mkdtemp(path.join(tmpdir(), 'dots-test-'));
    await chmod(dataDir, 0o755);
    embedded = await startEmbeddedPostgres({ dataDir });
    serverUrl = embedded.url;
  }
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${TEMPLATE}`);
  await admin.query(`create database ${TEMPLATE}`);
  await admin.end();

  const templateUrl = new URL(serverUrl);
  templateUrl.pathname = `/${TEMPLATE}`;
  const db = createDb(templateUrl.toString(), 2);
  await migrateLatest(db);
  await db.destroy();

  project.provide('testDatabase', { serverUrl, template: TEMPLATE });
  return async () => {
    await embedded?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  };
}
