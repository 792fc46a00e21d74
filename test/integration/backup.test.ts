import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupDatabase, BackupError, FORMAT, FORMAT_VERSION, frame, restoreDatabase } from '../../src/db/backup.js';
import { createDb } from '../../src/db/knex.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { checkTradingInvariants } from '../support/invariants.js';
import { MarketFactory } from '../support/markets.js';
import { createTestDatabase, TestService } from '../support/service.js';

/**
 * Backup and restore (src/db/backup.ts) on a service with a catalogue, accounts, resting orders, trades and
 * a settlement: the restored database holds the same rows, and a service started on it answers the same.
 */

const ADMIN = { email: 'backup-admin@dots.local', password: 'backup-password' };

let source: TestService;
let factory: MarketFactory;
let dir: string;
let backupFile: string;
const tokens: string[] = [];
const tickers: string[] = [];

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Every row of every table of the public schema (as text, sorted), applied migrations, sequence positions; but
 * the search's change log, whose transaction ids belong to their cluster (a backup leaves it out).
 */
function contents(url: string): Promise<Record<string, string[]>> {
  return withClient(url, async (client) => {
    const tables = (
      await client.query<{ name: string }>(`select table_name::text as name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE' and table_name <> 'search_changes' order by 1`)
    ).rows.map((r) => r.name);
    const out: Record<string, string[]> = {};
    for (const table of tables) {
      const column = table.startsWith('knex_migrations') ? (table === 'knex_migrations' ? 'name' : 'is_locked') : `t::text`;
      out[table] = (await client.query<{ row: string }>(`select ${column}::text as row from "${table}" t order by 1`)).rows.map((r) => r.row);
    }
    out['(sequences)'] = (await client.query<{ row: string }>(`select sequencename || '=' || coalesce(last_value::text, 'unused') as row from pg_sequences where schemaname = 'public' order by 1`)).rows.map((r) => r.row);
    return out;
  });
}

/** Indexes, constraints and triggers (with whether they are enabled) of the public schema. */
function schema(url: string): Promise<string[]> {
  return withClient(url, async (client) =>
    (
      await client.query<{ item: string }>(`
        select 'index ' || pg_get_indexdef(i.indexrelid) as item
          from pg_index i join pg_class c on c.oid = i.indrelid where c.relnamespace = 'public'::regnamespace
        union all
        select 'constraint ' || conrelid::regclass::text || ' ' || conname::text || ' ' || pg_get_constraintdef(oid) || ' validated ' || convalidated::text
          from pg_constraint where connamespace = 'public'::regnamespace
        union all
        select 'trigger ' || tgrelid::regclass::text || ' ' || tgname::text || ' ' || tgenabled::text
          from pg_trigger t join pg_class c on c.oid = t.tgrelid where c.relnamespace = 'public'::regnamespace and not t.tgisinternal
        order by 1`)
    ).rows.map((r) => r.item),
  );
}

/** Rows a backup holds: the migrations' bookkeeping (knex's tables, db_functions) is made again by migrating. */
const rowCount = (all: Record<string, string[]>) =>
  Object.entries(all)
    .filter(([name]) => !name.startsWith('knex_') && name !== 'db_functions' && !name.startsWith('('))
    .reduce((sum, [, rows]) => sum + rows.length, 0);

async function order(api: TestService, token: string, body: Record<string, unknown>): Promise<any> {
  const response = await api.post('/api/portfolio/orders', body, { token });
  if (response.status !== 201) throw new Error(`placing ${JSON.stringify(body)}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.order;
}

/** What each account sees of its own money, orders, positions, fills and settlements; the books and markets. */
async function answers(api: TestService): Promise<unknown> {
  const accounts = [];
  for (const token of tokens) {
    accounts.push({
      me: await api.read('/api/auth/me', token),
      balance: await api.read('/api/portfolio/balance', token),
      orders: (await api.walk('/api/portfolio/orders?limit=2', 'orders', token)).items,
      positions: (await api.walk('/api/portfolio/positions', 'positions', token)).items,
      fills: (await api.walk('/api/portfolio/fills', 'fills', token)).items,
      settlements: (await api.walk('/api/portfolio/settlements', 'settlements', token)).items,
    });
  }
  const markets = [];
  for (const ticker of tickers) {
    markets.push({
      market: await api.read(`/api/markets/${ticker}`),
      book: await api.read(`/api/markets/${ticker}/orderbook`),
      trades: (await api.walk(`/api/markets/trades?ticker=${ticker}`, 'trades')).items,
    });
  }
  return { accounts, markets, events: await api.read('/api/events?limit=100') };
}

/** Runs `npm run backup` / `npm run restore` as npm does (the compiled build), with the given environment. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['dist/db/backup-cli.js', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

async function refusal(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'expected the restore to be refused').toBeInstanceOf(BackupError);
  return error as Error;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'dots-backup-test-'));
  backupFile = path.join(dir, 'dots.backup');
  source = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
  factory = await MarketFactory.create(source, ADMIN, 'BKP');
  tokens.push(factory.adminToken);
  for (let i = 0; i < 3; i += 1) tokens.push((await source.register()).token);
  const [, a, b, c] = tokens as [string, string, string, string];
  const [open, settled] = await factory.newTickers(2);
  tickers.push(open!, settled!);

  // A partly filled bid that stays in the book, a resting NO bid and a resting sell of held shares.
  await order(source, a, { ticker: open, side: 'yes', count: '10', price: '0.60' });
  await order(source, b, { ticker: open, side: 'no', count: '4', price: '0.45' });
  await order(source, c, { ticker: open, side: 'no', count: '2.5', price: '0.30' });
  await order(source, b, { ticker: open, side: 'no', action: 'sell', count: '1', price: '0.70' });
  // A market traded, then resolved: settlements.
  await order(source, a, { ticker: settled, side: 'yes', count: '5', price: '0.50' });
  await order(source, c, { ticker: settled, side: 'no', count: '5', price: '0.50' });
  await factory.resolve(settled!, 'yes');
  // What the background refresh writes after trading (events' figures, candles) written now, not after the
  // backup: the source must hold what the backup holds.
  await source.service.services.trading.flushRollups();

  const summary = await backupDatabase(source.databaseUrl, backupFile);
  expect(summary.tables).toBeGreaterThan(15);
  expect(summary.bytes).toBeGreaterThan(0);
});

afterAll(async () => {
  await source?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('backup and restore', () => {
  it('restores every row into an empty database, and a service on it answers as the original does', async () => {
    const target = await createTestDatabase({ empty: true });
    const summary = await restoreDatabase(target, backupFile);
    const before = await contents(source.databaseUrl);
    expect(summary.rows).toBe(rowCount(before));
    expect(before.settlements!.length).toBe(2);
    expect(before.orders!.length).toBe(6);
    expect(await contents(target)).toEqual(before);
    // The indexes and foreign keys the load dropped are back, and the triggers it disabled enabled again.
    const objects = await schema(source.databaseUrl);
    expect(objects.filter((o) => o.startsWith('trigger ')).length).toBeGreaterThan(10);
    expect(objects.filter((o) => / FOREIGN KEY .* validated true$/.test(o)).length).toBeGreaterThan(20);
    expect(await schema(target)).toEqual(objects);

    const restored = await TestService.start({}, target);
    try {
      expect(await answers(restored)).toEqual(await answers(source));
      // Trading goes on: the sequences continue past the restored rows (a new trade, fill and order number).
      const [, a, , c] = tokens as [string, string, string, string];
      const taker = await order(restored, c, { ticker: tickers[0], side: 'no', count: '1', price: '0.40' });
      expect(taker).toMatchObject({ status: 'FILLED', fill_count: '1' });
      const fills = (await restored.read(`/api/portfolio/fills?ticker=${tickers[0]}`, a)).fills;
      expect(fills).toHaveLength(2);
      expect(new Set(fills.map((f: any) => f.fill_id)).size).toBe(2);
    } finally {
      await restored.stop();
    }
  });

  it('refuses a database that is not empty, and leaves it as it was', async () => {
    const before = await contents(source.databaseUrl);
    const error = await refusal(restoreDatabase(source.databaseUrl, backupFile));
    expect(error.message).toMatch(/the database is not empty \(rows in .*users.*\): restore into a new, empty database/);
    expect(await contents(source.databaseUrl)).toEqual(before);
  });

  it('refuses a truncated or damaged file and leaves the target without rows', async () => {
    const whole = await readFile(backupFile);
    const truncated = path.join(dir, 'truncated.backup');
    await writeFile(truncated, whole.subarray(0, Math.floor(whole.length * 0.8)));
    const damaged = path.join(dir, 'damaged.backup');
    const flipped = Buffer.from(whole);
    flipped[Math.floor(flipped.length / 2)]! ^= 0xff;
    await writeFile(damaged, flipped);
    const text = path.join(dir, 'notes.txt');
    await writeFile(text, 'not a backup\n');

    for (const [file, message] of [
      [truncated, /truncated/],
      [damaged, /damaged/],
      [text, /not a Dots Exchange backup/],
      [path.join(dir, 'missing.backup'), /no backup file/],
    ] as const) {
      const target = await createTestDatabase({ empty: true });
      expect((await refusal(restoreDatabase(target, file))).message).toMatch(message);
      // The file is checked whole before the database is touched: not even migrated.
      expect(await contents(target), file).toEqual({ '(sequences)': [] });
    }
  });

  it('rolls back every table loaded when the rows do not fit together, leaving the target without rows', async () => {
    const header = {
      format: FORMAT,
      version: FORMAT_VERSION,
      createdAt: new Date().toISOString(),
      serverVersion: '18',
      // A backup of the schema as of migration 0016, whose series columns these are.
      migrations: migrations.slice(0, 16).map((m) => m.name),
      tables: [
        { name: 'categories', columns: ['id', 'slug', 'name', 'created_at'], rows: 1 },
        { name: 'series', columns: ['id', 'ticker', 'slug', 'title', 'category_id', 'frequency', 'series_type', 'description', 'created_at', 'updated_at'], rows: 1 },
      ],
      sequences: [],
    };
    const end = Buffer.alloc(4);
    const file = path.join(dir, 'unfit.backup');
    await writeFile(
      file,
      gzipSync(
        Buffer.concat([
          Buffer.from('DOTS-EXCHANGE-BACKUP\n'),
          ...frame(Buffer.from(JSON.stringify(header))),
          ...frame(Buffer.from('1\tsports\tSports\t2026-01-01 00:00:00+00\n')),
          end,
          // A series of a category the backup does not hold: its foreign key refuses it.
          ...frame(Buffer.from('1\tS\ts\tS\t99\tdaily\tsingle\t\t2026-01-01 00:00:00+00\t2026-01-01 00:00:00+00\n')),
          end,
        ]),
      ),
    );
    const target = await createTestDatabase({ empty: true });
    expect((await refusal(restoreDatabase(target, file))).message).toMatch(
      /the rows of the backup do not fit together \(.*table "series" violates foreign key constraint.*\); nothing was restored/,
    );
    const after = await contents(target);
    expect(after.categories).toEqual([]);
    expect(rowCount(after)).toBe(0);
  });

  it('refuses a backup whose fills name an order it does not hold (a reference no foreign key checks), leaving the target without rows', async () => {
    // A copy of the source with one filled order deleted: its fills and trade still name it.
    const damaged = await createTestDatabase({ empty: true });
    await restoreDatabase(damaged, backupFile);
    const orderId = await withClient(damaged, async (client) => {
      const { rows } = await client.query<{ order_id: string }>('select order_id from fills order by id limit 1');
      await client.query('delete from orders where id = $1', [rows[0]!.order_id]);
      return rows[0]!.order_id;
    });
    const file = path.join(dir, 'dangling.backup');
    await backupDatabase(damaged, file);

    const target = await createTestDatabase({ empty: true });
    expect((await refusal(restoreDatabase(target, file))).message).toMatch(
      new RegExp(`the rows of the backup do not fit together \\(trades\\.(maker|taker)_order_id names ${orderId}, which orders does not hold\\); nothing was restored`),
    );
    expect(rowCount(await contents(target))).toBe(0);
  });

  it('refuses a backup of a newer schema than this version knows, before changing anything', async () => {
    const header = {
      format: FORMAT,
      version: FORMAT_VERSION,
      createdAt: new Date().toISOString(),
      serverVersion: '18',
      migrations: [...migrations.map((m) => m.name), '9999_from_the_future'],
      tables: [],
      sequences: [],
    };
    const file = path.join(dir, 'future.backup');
    await writeFile(file, gzipSync(Buffer.concat([Buffer.from('DOTS-EXCHANGE-BACKUP\n'), ...frame(Buffer.from(JSON.stringify(header)))])));
    const target = await createTestDatabase({ empty: true });
    expect((await refusal(restoreDatabase(target, file))).message).toMatch(/newer schema: migrations 9999_from_the_future are not known to this version/);
    expect(await contents(target)).toEqual({ '(sequences)': [] });
  });

  /**
   * Restores, into a new empty database, the backup of a database migrated up to migration `level` and
   * given `statements`; returns the restore's row count and the target's contents.
   */
  async function restoreOlder(level: number, name: string, statements: string[]): Promise<{ rows: number; after: Record<string, string[]> }> {
    const older = await createTestDatabase({ empty: true });
    const db = createDb(older, 2);
    try {
      await migrateLatest(db, level);
      for (const statement of statements) await db.raw(statement);
    } finally {
      await db.destroy();
    }
    const file = path.join(dir, `${name}.backup`);
    await backupDatabase(older, file);
    const target = await createTestDatabase({ empty: true });
    const { rows } = await restoreDatabase(target, file);
    return { rows, after: await contents(target) };
  }

  const ACCOUNT = `insert into users (email, username, password_hash) values ('old@example.com', 'old', 'x')`;

  it('restores a backup of an older schema at its own migrations, then applies the later ones', async () => {
    const { rows, after } = await restoreOlder(9, 'older', [ACCOUNT, `insert into balances (user_id, cash) select id, 12.5 from users`]);
    expect(rows).toBe(2);
    expect(after.knex_migrations).toEqual(migrations.map((m) => m.name).sort());
    expect(after.balances).toEqual([expect.stringMatching(/,12\.50000000,0\.00000000\)$/)]);
  });

  it('restores a backup from before trading, whose ledger entries have no market yet, without checking what it lacks', async () => {
    // Migration 0007: the accounts' ledger exists, its market column (0008) does not.
    const { rows, after } = await restoreOlder(7, 'before-trading', [
      ACCOUNT,
      `insert into balances (user_id, cash) select id, 3 from users`,
      `insert into ledger_entries (user_id, amount, kind, reference) select id, 3, 'grant', 'opening balance' from users`,
    ]);
    expect(rows).toBe(3);
    expect(after.knex_migrations).toEqual(migrations.map((m) => m.name).sort());
    expect(after.ledger_entries).toEqual([expect.stringContaining(',grant,"opening balance",')]);
  });

  it('takes a consistent snapshot while orders are placed: the restored database keeps every trading invariant', async () => {
    const { ticker } = await factory.newMarket();
    const traders = [(await source.register()).token, (await source.register()).token];
    let placing = true;
    let placed = 0;
    const trading = (async () => {
      for (let i = 0; placing; i += 1) {
        // Alternate buyers of YES and NO around 0.50: many cross, some rest.
        const price = (0.45 + (i % 10) / 100).toFixed(2);
        await order(source, traders[i % 2]!, { ticker, side: i % 2 === 0 ? 'yes' : 'no', count: '1', price });
        placed += 1;
      }
    })();
    const file = path.join(dir, 'during-trading.backup');
    let summary;
    let placedDuring: number;
    try {
      while (placed < 5) await new Promise((resolve) => setTimeout(resolve, 20));
      summary = await backupDatabase(source.databaseUrl, file);
      placedDuring = placed;
    } finally {
      placing = false;
      await trading;
    }
    expect(placed).toBeGreaterThan(5);

    const target = await createTestDatabase({ empty: true });
    expect((await restoreDatabase(target, file)).rows).toBe(summary.rows);
    const db = createDb(target, 2);
    try {
      await checkTradingInvariants(db);
      const orders = Number((await db.raw('select count(*) as n from orders o join markets m on m.id = o.market_id where m.ticker = ?', [ticker])).rows[0].n);
      expect(orders).toBeGreaterThanOrEqual(5);
      expect(orders).toBeLessThanOrEqual(placedDuring + 1);
    } finally {
      await db.destroy();
    }
  });

  it('runs as npm run backup and npm run restore: exit 0 with a summary, 1 with the reason refused, 2 on wrong usage', async () => {
    const file = path.join(dir, 'cli.backup');
    const backup = await cli(['backup', file], { DATABASE_URL: source.databaseUrl });
    expect(backup).toMatchObject({ code: 0, stdout: expect.stringMatching(/^backup: wrote .*cli\.backup: \d+ tables, [\d,]+ rows, [\d.]+ MiB, in [\d.]+ s\n$/) });

    const target = await createTestDatabase({ empty: true });
    const restore = await cli(['restore', file], { DATABASE_URL: target });
    expect(restore).toMatchObject({ code: 0, stdout: expect.stringMatching(/^restore: loaded .*cli\.backup: \d+ tables/) });

    const again = await cli(['restore', file], { DATABASE_URL: target });
    expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/^restore failed: the database is not empty/) });
    expect(await cli(['restore'], { DATABASE_URL: target })).toMatchObject({ code: 2, stderr: expect.stringMatching(/^usage: npm run backup -- FILE/) });
  });
});
