import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, NamedStatement, type Db } from '../../src/db/knex.js';
import { createTestDatabase } from '../support/service.js';

/**
 * Named statements send flat arrays as PostgreSQL array literals they write themselves (src/db/knex.ts
 * arrayLiteral): PostgreSQL must read back exactly the values given, whatever text they hold.
 */

let db: Db;

beforeAll(async () => {
  db = createDb(await createTestDatabase({ empty: true }), 2);
});
afterAll(async () => {
  await db?.destroy();
});

const TEXTS = ['', ' padded ', 'a,b', '{a}', '"quoted"', 'back\\slash', 'null', 'NULL', 'é', "it's", 'tab\there', 'NUL-free \u2028', 'plain_1'];
const ECHO = new NamedStatement<{ texts: string[]; numbers: string[]; ids: string[]; flags: boolean[]; counts: string[] }>(
  'dots_test_array_parameters',
  `select :texts::text[] as texts, :numbers::numeric[]::text[] as numbers, :ids::uuid[]::text[] as ids, :flags::boolean[] as flags, :counts::bigint[]::text[] as counts`,
);
const VALUES = {
  texts: [...TEXTS, null],
  numbers: ['0.45', '-12.50000000', 3, null, '1e+3'],
  ids: ['c0ffee00-0000-4000-8000-000000000001', null],
  flags: [true, false, null],
  counts: [1n, '9007199254740993', null],
};
const EXPECTED = {
  texts: [...TEXTS, null],
  numbers: ['0.45', '-12.50000000', '3', null, '1000'],
  ids: ['c0ffee00-0000-4000-8000-000000000001', null],
  flags: [true, false, null],
  counts: ['1', '9007199254740993', null],
};

describe('array parameters of named statements', () => {
  it('reach PostgreSQL as the values given, from a pool', async () => {
    expect((await ECHO.run(db, VALUES)).rows[0]).toEqual(EXPECTED);
  });

  it('reach PostgreSQL as the values given, in a transaction', async () => {
    const row = await db.transaction(async (tx) => (await ECHO.run(tx, VALUES)).rows[0]);
    expect(row).toEqual(EXPECTED);
  });
});
