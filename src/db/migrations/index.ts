import type { Knex } from 'knex';
import * as m0001 from './0001_create_accounts.js';
import * as m0002 from './0002_create_catalogue.js';

/**
 * Every migration, in order. A static list (not a folder scan) so that it works the same under tsx,
 * vitest and a compiled build. Migrations are never edited once they have landed: add a new one.
 */
export const migrations: ReadonlyArray<{ name: string; migration: Knex.Migration }> = [
  { name: '0001_create_accounts', migration: m0001 },
  { name: '0002_create_catalogue', migration: m0002 },
];
