import knexFactory, { type Knex } from 'knex';

export type Db = Knex;
/** A connection or an open transaction: every repository function takes one. */
export type Queryable = Knex | Knex.Transaction;

export function createDb(connectionString: string, poolMax = 10): Db {
  return knexFactory({
    client: 'pg',
    connection: { connectionString },
    pool: { min: 0, max: poolMax },
  });
}

/** Runs `work` in one database transaction: all of it commits, or none of it. */
export function inTransaction<T>(db: Db, work: (tx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(work);
}
