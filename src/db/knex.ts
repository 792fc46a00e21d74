import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

export type Db = Knex;
/** A connection or an open transaction: every repository function takes one. */
export type Queryable = Knex | Knex.Transaction;

/** What the service reads of Knex's client, which Knex declares as `any`: its pool and its query events. */
interface KnexClient {
  emit(event: string, ...args: unknown[]): boolean;
  acquireConnection(): Promise<pg.Client>;
  releaseConnection(connection: pg.Client): Promise<void>;
}

const clientOf = (db: Queryable) => db.client as KnexClient;

/** Runs `work` on one connection of the pool while it holds the advisory lock `key`. */
export async function withAdvisoryLock<T>(db: Knex, key: number, work: (connection: pg.Client) => Promise<T>): Promise<T> {
  const client = clientOf(db);
  const connection = await client.acquireConnection();
  try {
    await connection.query('select pg_advisory_lock($1)', [key]);
    try {
      return await work(connection);
    } finally {
      await connection.query('select pg_advisory_unlock($1)', [key]);
    }
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * The service's connections run without parallel query: its statements are short, and many read lazily and
 * stop early (the searches, keyset pages); a parallel plan would start worker processes for a few
 * milliseconds of work and take cores from concurrent requests.
 */
const SESSION_SETTINGS = { max_parallel_workers_per_gather: '0' };
/**
 * On a pool made with `genericPlans`, every statement is planned without its values, so that a named one is
 * planned once per connection: for statements written to be served by their indexes whatever the values,
 * whose planning costs more than their running. The setting holds for unnamed statements too (planned anew
 * on each call all the same), which is why it is not that of every connection.
 */
const GENERIC_PLANS = { plan_cache_mode: 'force_generic_plan' };
/**
 * On a pool made with `indexScansOnly`, sequential scans are a last resort: for statements whose every read
 * is meant to be an index scan, where the planner would otherwise pick a scan of every row: from its fixed
 * estimates (the trigram operators') when nothing matches, or for a generic plan made while the tables were
 * small (a new catalogue), which the connection then keeps as they grow.
 */
const INDEX_SCANS_ONLY = { enable_seqscan: 'off' };

export interface PoolOptions {
  genericPlans?: boolean;
  indexScansOnly?: boolean;
}

/** The session settings of a pool's connections, by name. */
export function sessionSettings(options: PoolOptions = {}): Readonly<Record<string, string>> {
  return { ...SESSION_SETTINGS, ...(options.genericPlans && GENERIC_PLANS), ...(options.indexScansOnly && INDEX_SCANS_ONLY) };
}

export function createDb(connectionString: string, poolMax = 10, options: PoolOptions = {}): Db {
  const settings = Object.entries(sessionSettings(options))
    .map(([name, value]) => `set ${name} = ${value}`)
    .join('; ');
  return knexFactory({
    client: 'pg',
    connection: { connectionString },
    pool: {
      min: 0,
      max: poolMax,
      afterCreate: (connection: { query(sql: string, done: (error: Error | null) => void): void }, done: (error: Error | null, connection: unknown) => void) => {
        connection.query(settings, (error) => done(error, connection));
      },
    },
  });
}

/** Knex without a connection: it only turns statements into PostgreSQL's text here. */
const sqlWriter = knexFactory({ client: 'pg' });

/**
 * A named (prepared) statement written with Knex's named bindings (`:name`), turned into PostgreSQL's
 * positional form (`$1`, `$2`, ...) at its first run, then run with its values handed to the driver as they
 * are. Knex would otherwise substitute the bindings on every run, a scan of the whole text: about 70 µs a run
 * on the statements of several kilobytes that the searches and placements run on every request.
 *
 * It goes to the driver without Knex's query path (its runner, query object and option merging: about 60 µs
 * a statement, a tenth of a search request's main-thread time), on the connection Knex's client hands out: one
 * of the pool's, or in a transaction the transaction's own. Knex's `query` and `query-response` listeners
 * are still told of it, as Knex tells them of its own statements.
 */
/** Runs of named statements so far, numbering their `query` events as Knex numbers its own. */
let statementRuns = 0;

export class NamedStatement<Row = unknown> {
  #compiled: { keys: string; text: string; order: readonly string[] } | undefined;

  constructor(
    readonly name: string,
    readonly sql: string,
  ) {}

  async run(db: Queryable, bindings: Readonly<Record<string, unknown>>): Promise<{ rows: Row[] }> {
    const { text, values } = this.positional(bindings);
    const client = clientOf(db);
    // Told on every run, as Knex tells of its own statements: a Knex client always listens (it hands its
    // events on to the Knex object, and a transaction's to its parent's), so there is nothing to skip.
    const event = { sql: text, bindings: values, options: { name: this.name }, __knexQueryUid: `${this.name}-${++statementRuns}` };
    client.emit('query', event);
    const connection = await client.acquireConnection();
    try {
      const result = (await connection.query({ name: this.name, text, values })) as unknown as { rows: Row[] };
      client.emit('query-response', result, event);
      return result;
    } finally {
      await client.releaseConnection(connection);
    }
  }

  /**
   * The positional text and its values in order, as the driver takes them. A binding given as `undefined`
   * is sent as NULL (Knex itself would refuse it).
   */
  positional(bindings: Readonly<Record<string, unknown>>): { text: string; values: unknown[] } {
    const { text, order } = this.#compile(bindings);
    return { text, values: order.map((key) => arrayLiteral(bindings[key])) };
  }

  /** The positional text, and which binding each `$n` takes; made again if the bindings' names change. */
  #compile(bindings: Readonly<Record<string, unknown>>): { text: string; order: readonly string[] } {
    const keys = Object.keys(bindings).join(',');
    if (this.#compiled?.keys === keys) return this.#compiled;
    // Knex's own substitution places and numbers the bindings; each is given as a marker naming it.
    const markers = Object.fromEntries(Object.keys(bindings).map((key) => [key, { binding: key }]));
    const native = sqlWriter.raw(this.sql, markers).toSQL().toNative();
    // Knex's conversion takes a `?` for a placeholder of its own (and turns an escaped one into a bare `?`): refused, as ambiguous.
    if (native.sql.includes('?')) throw new Error(`statement ${this.name}: a '?' in its text would be taken for a placeholder`);
    const order = native.bindings.map((marker) => (marker as unknown as { binding: string }).binding);
    this.#compiled = { keys, text: native.sql, order };
    return this.#compiled;
  }
}

/** Array elements written as they are in an array literal: no quote, backslash, brace, comma or space. */
const PLAIN_ELEMENT = /^[0-9A-Za-z_.:+-]+$/;

/**
 * A one-dimensional array of text, numbers, booleans and nulls as PostgreSQL's array literal (`{1,2,NULL}`),
 * anything else as it is. The driver would quote and escape every element, with two regular expressions each:
 * for the arrays of ids, prices and counts that the searches and placements bind on every request, about a
 * quarter of what the search's statement cost this process. Elements that need it are quoted and escaped as
 * the driver does; `NULL` as text is quoted so that it stays text.
 */
export function arrayLiteral(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  let literal = '{';
  for (let i = 0; i < value.length; i++) {
    const element: unknown = value[i];
    if (i > 0) literal += ',';
    if (element === null || element === undefined) {
      literal += 'NULL';
      continue;
    }
    if (typeof element !== 'string' && typeof element !== 'number' && typeof element !== 'bigint' && typeof element !== 'boolean') return value;
    const text = String(element);
    const plain = PLAIN_ELEMENT.test(text) && (text.length !== 4 || text.toLowerCase() !== 'null');
    literal += plain ? text : `"${text.replace(/[\\"]/g, '\\$&')}"`;
  }
  return `${literal}}`;
}

/** Runs `work` in one database transaction: all of it commits, or none of it. */
export function inTransaction<T>(db: Db, work: (tx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(work);
}

/** How long a start waits for an external PostgreSQL to answer. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Connects once to the PostgreSQL of `url`, so that a start on one that is unreachable or refuses the
 * credentials fails with one line saying so (the password left out), not with a driver's stack trace.
 */
export async function checkConnection(url: string, setting = 'DATABASE_URL'): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    const where = new URL(url);
    throw new Error(
      `cannot use the PostgreSQL of ${setting} (${where.hostname}:${where.port || 5432}${where.pathname}): ${(error as Error).message || String(error)}: ` +
        'check that it runs, that it is reachable from here, and the user, password and database in the URL',
      { cause: error },
    );
  } finally {
    await client.end().catch(() => {});
  }
}
