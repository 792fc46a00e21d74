/* eslint max-lines: ["error", { "max": 420, "skipBlankLines": true, "skipComments": true }] -- the writer and the reader of the backup format below must agree byte for byte, and are read side by side */
/**
 * Backup and restore of the service's database (`npm run backup`, `npm run restore`), on the pg driver alone:
 * the embedded PostgreSQL ships no pg_dump, and an older system pg_dump refuses a newer server.
 *
 * A backup is one gzip file holding, in order:
 * - the line `DOTS-EXCHANGE-BACKUP`;
 * - a header (a 4-byte big-endian length, then JSON): format version, the applied migrations, every
 *   application table with its columns and row count, and every sequence's position;
 * - each table's rows as `COPY ... TO STDOUT` text, in frames (a 4-byte length, then at most 1 MiB of data),
 *   closed by a frame of length 0.
 * Everything is read in one REPEATABLE READ, READ ONLY transaction: one snapshot, taken while the service
 * runs. The tables are found in the catalogue (the public schema, less knex's own migration tables, which
 * the migrations make), so a table added by a later migration is never forgotten.
 *
 * A restore checks the whole file first (gzip checksum, frames, row counts), refuses a database with rows,
 * runs the project's migrations up to exactly the backup's list, then loads every table in one transaction,
 * so that a failed restore leaves the database with no rows:
 * - The tables' own triggers are disabled (`ALTER TABLE ... DISABLE TRIGGER USER`, undone before the
 *   commit): the counters they keep (market_status_counts, event_status_counts, tag_market_pairs, tag_active_event_counts) are
 *   tables of the backup like any other, copied from the same snapshot, which the triggers would count a
 *   second time; the session-change NOTIFY triggers have nothing to announce in a database no process has
 *   read yet. The real-time feed's outbox (feed_events, feed_sequences) is restored as it was: each market's
 *   records keep numbering on from the last one, and the feed service prunes the old ones as usual.
 * - As pg_restore does, foreign keys and the indexes no constraint owns are dropped before the load and made
 *   again after it: an index built once over the rows is several times faster than one grown row by row
 *   (the trigram indexes most), and a foreign key added back checks every row in one query where a checked
 *   COPY looks each one up; the rows are still refused when they do not fit together. The references no
 *   foreign key holds (tables.ts UNKEYED_REFERENCES: trades, fills, ledger entries) are checked the same way.
 * All of it needs only the ownership of the tables the migrations gave the restoring role, where
 * `session_replication_role = replica` (triggers and foreign-key checks off without dropping anything) needs
 * a superuser, which many hosted PostgreSQL services grant nobody, and commits rows nothing checked.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { createDb } from './knex.js';
import { migrateLatest } from './migrate.js';
import { migrations } from './migrations/index.js';
import { UNKEYED_REFERENCES } from './tables.js';

export const FORMAT = 'dots-exchange-backup';
export const FORMAT_VERSION = 1;
const MAGIC = Buffer.from('DOTS-EXCHANGE-BACKUP\n');
/** Frames are at most this long, so that a damaged length cannot make a restore buffer the whole file. */
export const MAX_FRAME = 1024 * 1024;
const MAX_HEADER = 64 * 1024 * 1024;
/**
 * Tables of the migrations' bookkeeping (knex's, and the SQL functions' checksums): the migrations make them,
 * and a restore fills them by migrating. Also the search's change log: its transaction ids mean nothing in
 * another cluster, and each process reads the catalogue whole when it starts.
 */
const BOOKKEEPING_TABLE = /^(knex_migrations|db_functions$|search_changes$)/;
/**
 * The same text for every value on both sides, whatever the server's defaults: ISO dates with their offset,
 * floats that read back exactly, UTF-8.
 */
const SESSION_SETTINGS = `set datestyle = 'ISO, YMD'; set intervalstyle = 'postgres'; set timezone = 'UTC';
  set extra_float_digits = 3; set client_encoding = 'UTF8'`;

export interface TableEntry {
  name: string;
  /** Stored columns, in table order (generated columns are computed again on load). */
  columns: string[];
  rows: number;
}

export interface SequenceEntry {
  name: string;
  lastValue: string;
  isCalled: boolean;
}

export interface BackupHeader {
  format: typeof FORMAT;
  version: number;
  createdAt: string;
  serverVersion: string;
  /** Applied migrations, in the order they were applied. */
  migrations: string[];
  /** In name order (the load drops the foreign keys, so any order loads). */
  tables: TableEntry[];
  sequences: SequenceEntry[];
}

export interface BackupSummary {
  tables: number;
  rows: number;
  /** Size of the backup file. */
  bytes: number;
  seconds: number;
}

/** A refusal whose message says what is wrong and what to do (the commands print it as it is). */
export class BackupError extends Error {}

const ident = (name: string) => pg.escapeIdentifier(name);
const columnList = (table: TableEntry) => table.columns.map(ident).join(', ');

/** One frame of table data: its length, then the bytes. */
export function frame(data: Buffer): Buffer[] {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  return [length, data];
}

const END_OF_TABLE = Buffer.alloc(4);

/** Reads exact byte counts from a stream of chunks. */
export class ChunkReader {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly source: AsyncIterator<Buffer>) {}

  private async fill(n: number): Promise<boolean> {
    while (this.size < n) {
      const next = await this.source.next();
      if (next.done) return false;
      this.chunks.push(next.value);
      this.size += next.value.length;
    }
    return true;
  }

  /** Exactly `n` bytes; the file ending first is a truncated backup. */
  async take(n: number): Promise<Buffer> {
    if (!(await this.fill(n))) throw new BackupError('the backup ends in the middle of its data: the file is truncated');
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      const all = Buffer.concat(this.chunks);
      out = all.subarray(0, n);
      this.chunks = all.length > n ? [all.subarray(n)] : [];
    }
    this.size -= n;
    return out;
  }

  async uint32(): Promise<number> {
    return (await this.take(4)).readUInt32BE(0);
  }

  /** True when nothing is left (the stream has ended, and with it the gzip checks). */
  async atEnd(): Promise<boolean> {
    return this.size === 0 && !(await this.fill(1));
  }

  /** The data frames of one table, up to its closing empty frame. */
  async *table(): AsyncGenerator<Buffer> {
    for (;;) {
      const length = await this.uint32();
      if (length === 0) return;
      if (length > MAX_FRAME) throw new BackupError(`the backup is damaged: a frame of ${length} bytes (at most ${MAX_FRAME})`);
      yield await this.take(length);
    }
  }
}

/** Checks the shape of a header read from a file. */
export function parseHeader(text: string): BackupHeader {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BackupError('the backup is damaged: its header is not JSON');
  }
  const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;
  const value = isObject(parsed) ? parsed : {};
  if (value.format !== FORMAT) throw new BackupError('not a Dots Exchange backup');
  if (value.version !== FORMAT_VERSION) {
    throw new BackupError(`backup format version ${String(value.version)} is not known to this version (it reads version ${FORMAT_VERSION}): restore it with the version that made it, or a newer one`);
  }
  const strings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string' && s.length > 0);
  const ok =
    strings(value.migrations) &&
    Array.isArray(value.tables) &&
    value.tables.every((t) => isObject(t) && typeof t.name === 'string' && strings(t.columns) && t.columns.length > 0 && typeof t.rows === 'number' && Number.isSafeInteger(t.rows) && t.rows >= 0) &&
    Array.isArray(value.sequences) &&
    value.sequences.every((s) => isObject(s) && typeof s.name === 'string' && typeof s.lastValue === 'string' && /^-?\d{1,19}$/.test(s.lastValue) && typeof s.isCalled === 'boolean');
  if (!ok) throw new BackupError('the backup is damaged: its header lacks migrations, tables or sequences');
  return value as unknown as BackupHeader;
}

export type MigrationPlan = { refuse: string } | MigrationSteps;
export interface MigrationSteps {
  upTo: string[];
  complete: boolean;
}

/**
 * What a restore migrates to: exactly the backup's migrations, which must be the first of those this
 * version knows (a backup of a newer schema is refused); a database already migrated must be at one of
 * the backup's steps. `complete`: the backup's list is every migration known, else the rest run after the
 * load, on the restored rows, as they would have on the original database.
 */
export function migrationPlan(backup: readonly string[], known: readonly string[], applied: readonly string[]): MigrationPlan {
  const unknown = backup.filter((name, i) => known[i] !== name);
  if (unknown.length > 0) {
    return { refuse: `the backup was made by a newer schema: migrations ${unknown.join(', ')} are not known to this version; restore it with the version that made it, or a newer one` };
  }
  if (applied.some((name, i) => backup[i] !== name)) {
    return { refuse: `the database's schema (migrations up to ${applied.at(-1)}) is not one the backup's schema (up to ${backup.at(-1) ?? 'none'}) passes through: restore into a new, empty database` };
  }
  return { upTo: [...backup], complete: backup.length === known.length };
}

async function connect(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(SESSION_SETTINGS);
  return client;
}

/** The application's tables: ordinary tables of the public schema, less knex's and extensions' own. */
async function applicationTables(client: pg.Client): Promise<Array<{ name: string; columns: string[] }>> {
  const { rows } = await client.query<{ name: string; columns: string[] }>(`
    select c.relname::text as name,
           array(select a.attname::text from pg_attribute a
                  where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
                  order by a.attnum) as columns
      from pg_class c
     where c.relnamespace = 'public'::regnamespace and c.relkind = 'r'
       and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
     order by c.relname`);
  return rows.filter((row) => !BOOKKEEPING_TABLE.test(row.name));
}

async function appliedMigrations(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ exists: boolean }>(`select to_regclass('public.knex_migrations') is not null as exists`);
  if (!rows[0]?.exists) return [];
  return (await client.query<{ name: string }>('select name from knex_migrations order by id')).rows.map((row) => row.name);
}

/** Tables among `names` holding at least one row. */
async function tablesWithRows(client: pg.Client, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const probes = names.map((name, i) => `select $${i + 1}::text as name where exists (select 1 from ${ident(name)})`);
  return (await client.query<{ name: string }>(probes.join(' union all '), [...names])).rows.map((row) => row.name);
}

async function readHeader(client: pg.Client): Promise<BackupHeader> {
  const applied = await appliedMigrations(client);
  if (applied.length === 0) throw new BackupError('the database has no migrations applied: it is not a Dots Exchange database');
  const entries: TableEntry[] = [];
  for (const { name, columns } of await applicationTables(client)) {
    const { rows } = await client.query<{ n: string }>(`select count(*)::text as n from ${ident(name)}`);
    entries.push({ name, columns, rows: Number(rows[0]!.n) });
  }
  const sequenceNames = (
    await client.query<{ name: string }>(`select relname::text as name from pg_class where relnamespace = 'public'::regnamespace and relkind = 'S' order by relname`)
  ).rows
    .map((row) => row.name)
    .filter((name) => !BOOKKEEPING_TABLE.test(name));
  const sequences: SequenceEntry[] = [];
  for (const name of sequenceNames) {
    // A sequence is outside the snapshot: this is its position now, at or past every value the snapshot's rows took.
    const { rows } = await client.query<{ last_value: string; is_called: boolean }>(`select last_value::text, is_called from ${ident(name)}`);
    sequences.push({ name, lastValue: rows[0]!.last_value, isCalled: rows[0]!.is_called });
  }
  const version = (await client.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
  return { format: FORMAT, version: FORMAT_VERSION, createdAt: new Date().toISOString(), serverVersion: version, migrations: applied, tables: entries, sequences };
}

function countRows(chunk: Buffer): number {
  // COPY text writes one line per row (newlines inside values are escaped).
  let n = 0;
  for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n += 1;
  return n;
}

async function* backupContent(client: pg.Client, header: BackupHeader): AsyncGenerator<Buffer> {
  const json = Buffer.from(JSON.stringify(header));
  yield MAGIC;
  yield* frame(json);
  for (const table of header.tables) {
    let rows = 0;
    for await (const chunk of client.query(copyTo(`copy ${ident(table.name)} (${columnList(table)}) to stdout`)) as AsyncIterable<Buffer>) {
      rows += countRows(chunk);
      for (let at = 0; at < chunk.length; at += MAX_FRAME) yield* frame(chunk.subarray(at, at + MAX_FRAME));
    }
    yield END_OF_TABLE;
    if (rows !== table.rows) throw new Error(`table ${table.name}: counted ${table.rows} rows, copied ${rows} in the same snapshot`);
  }
}

/** Writes `content` gzipped to `file` through a temporary file beside it: `file` is whole, or not there. */
async function writeAtomically(file: string, content: AsyncIterable<Buffer>): Promise<number> {
  const target = path.resolve(file);
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await pipeline(Readable.from(content), createGzip(), createWriteStream(temporary, { flags: 'wx', mode: 0o600 }));
    const handle = await open(temporary, 'r');
    await handle.sync().finally(() => handle.close());
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  const directory = await open(path.dirname(target), 'r');
  await directory.sync().finally(() => directory.close());
  return (await stat(target)).size;
}

const elapsed = (started: number) => Math.round((performance.now() - started) / 10) / 100;

/** Writes a consistent snapshot of the database at `databaseUrl` to `file` (replaced whole, or left as it was). */
export async function backupDatabase(databaseUrl: string, file: string): Promise<BackupSummary> {
  const started = performance.now();
  const client = await connect(databaseUrl);
  try {
    await client.query('begin isolation level repeatable read, read only');
    const header = await readHeader(client);
    const bytes = await writeAtomically(file, backupContent(client, header));
    await client.query('commit');
    return { tables: header.tables.length, rows: header.tables.reduce((sum, t) => sum + t.rows, 0), bytes, seconds: elapsed(started) };
  } finally {
    await client.end().catch(() => {});
  }
}

async function readBackupHeader(reader: ChunkReader): Promise<BackupHeader> {
  const magic = await reader.take(MAGIC.length).catch((error: unknown) => {
    if (error instanceof BackupError) return Buffer.alloc(0);
    throw error;
  });
  if (!magic.equals(MAGIC)) throw new BackupError('not a Dots Exchange backup');
  const length = await reader.uint32();
  if (length > MAX_HEADER) throw new BackupError('the backup is damaged: its header is too long');
  return parseHeader((await reader.take(length)).toString('utf8'));
}

/** Refuses a database with rows, or whose schema the backup cannot be restored on. */
async function checkTarget(client: pg.Client, header: BackupHeader): Promise<MigrationSteps> {
  const filled = await tablesWithRows(
    client,
    (await applicationTables(client)).map((t) => t.name),
  );
  if (filled.length > 0) {
    throw new BackupError(`the database is not empty (rows in ${filled.join(', ')}): restore into a new, empty database`);
  }
  const plan = migrationPlan(
    header.migrations,
    migrations.map((m) => m.name),
    await appliedMigrations(client),
  );
  if ('refuse' in plan) throw new BackupError(plan.refuse);
  return plan;
}

/** The migrated schema has the backup's tables, with the same stored columns. */
async function checkSchema(client: pg.Client, header: BackupHeader): Promise<void> {
  const tables = new Map((await applicationTables(client)).map((t) => [t.name, t.columns]));
  for (const table of header.tables) {
    const columns = tables.get(table.name);
    if (!columns) throw new BackupError(`table ${table.name} of the backup is not made by its migrations here: the backup's database had a table of its own`);
    const same = columns.length === table.columns.length && table.columns.every((c) => columns.includes(c));
    if (!same) throw new BackupError(`table ${table.name} has columns (${columns.join(', ')}) here and (${table.columns.join(', ')}) in the backup`);
  }
}

/** The foreign keys of these tables, as `alter table ... add constraint` takes them. */
async function foreignKeys(client: pg.Client, tables: readonly string[]): Promise<Array<{ table: string; name: string; definition: string }>> {
  const { rows } = await client.query<{ table: string; name: string; definition: string }>(
    `select k.conrelid::regclass::text as table, quote_ident(k.conname) as name, pg_get_constraintdef(k.oid) as definition
       from pg_constraint k join pg_class t on t.oid = k.conrelid
      where k.contype = 'f' and t.relnamespace = 'public'::regnamespace and t.relname = any($1::text[])
      order by 1, 2`,
    [[...tables]],
  );
  return rows;
}

/** Indexes of these tables that no constraint owns (a primary key, unique or exclusion constraint keeps its own). */
async function secondaryIndexes(client: pg.Client, tables: readonly string[]): Promise<Array<{ name: string; definition: string }>> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as definition
       from pg_index i join pg_class t on t.oid = i.indrelid
      where t.relnamespace = 'public'::regnamespace and t.relname = any($1::text[])
        and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)
      order by 1`,
    [[...tables]],
  );
  return rows;
}

/**
 * The first reference without a foreign key (UNKEYED_REFERENCES) that names a row the loaded tables do not
 * hold, described; undefined when every one holds. A reference whose table or column the backup's schema
 * does not have is skipped (a backup of a schema older than those tables).
 */
async function danglingReference(client: pg.Client, tables: BackupHeader['tables']): Promise<string | undefined> {
  for (const { table, column, references } of UNKEYED_REFERENCES) {
    if (!tables.find((t) => t.name === table)?.columns.includes(column) || !tables.some((t) => t.name === references)) continue;
    const { rows } = await client.query<{ value: string }>(
      `select x.${ident(column)}::text as value from ${ident(table)} x
        where x.${ident(column)} is not null and not exists (select 1 from ${ident(references)} r where r.id = x.${ident(column)})
        limit 1`,
    );
    if (rows[0]) return `${table}.${column} names ${rows[0].value}, which ${references} does not hold`;
  }
  return undefined;
}

async function load(client: pg.Client, reader: ChunkReader, header: BackupHeader): Promise<number> {
  const names = header.tables.map((t) => t.name);
  await client.query('begin');
  try {
    for (const name of names) await client.query(`alter table ${ident(name)} disable trigger user`);
    // Under the tables' locks: nothing was written since the first check.
    const filled = await tablesWithRows(client, names);
    if (filled.length > 0) throw new BackupError(`the database is not empty (rows in ${filled.join(', ')}): restore into a new, empty database`);
    // Dropped now and made again after the load (see the module comment); all of it undone by a rollback.
    const keys = await foreignKeys(client, names);
    for (const key of keys) await client.query(`alter table ${key.table} drop constraint ${key.name}`);
    const indexes = await secondaryIndexes(client, names);
    for (const index of indexes) await client.query(`drop index ${index.name}`);
    let rows = 0;
    for (const table of header.tables) {
      const copy = client.query(copyFrom(`copy ${ident(table.name)} (${columnList(table)}) from stdin`));
      await pipeline(Readable.from(reader.table()), copy).catch((error: unknown) => {
        if (error instanceof BackupError || !(error instanceof pg.DatabaseError)) throw error;
        throw new BackupError(`table ${table.name} of the backup does not load here (${error.message}); nothing was restored`);
      });
      if (copy.rowCount !== table.rows) throw new BackupError(`the backup is damaged: table ${table.name} holds ${copy.rowCount} rows, its header says ${table.rows}`);
      rows += copy.rowCount;
    }
    await client.query(`set local maintenance_work_mem = '256MB'`);
    for (const index of indexes) await client.query(index.definition);
    for (const key of keys) {
      // Checks every loaded row against the table it references, in one query.
      await client.query(`alter table ${key.table} add constraint ${key.name} ${key.definition}`).catch((error: unknown) => {
        if (!(error instanceof pg.DatabaseError)) throw error;
        throw new BackupError(`the rows of the backup do not fit together (${error.message}); nothing was restored`);
      });
    }
    const dangling = await danglingReference(client, header.tables);
    if (dangling) throw new BackupError(`the rows of the backup do not fit together (${dangling}); nothing was restored`);
    for (const sequence of header.sequences) {
      const found = await client.query<{ found: boolean }>(`select to_regclass($1) is not null as found`, [`public.${ident(sequence.name)}`]);
      if (!found.rows[0]!.found) throw new BackupError(`sequence ${sequence.name} of the backup is not made by its migrations here`);
      await client.query('select setval($1::regclass, $2::bigint, $3)', [`public.${ident(sequence.name)}`, sequence.lastValue, sequence.isCalled]);
    }
    for (const name of names) await client.query(`alter table ${ident(name)} enable trigger user`);
    // The whole file is read, and its gzip checksum verified, before anything is committed.
    if (!(await reader.atEnd())) throw new BackupError('the backup is damaged: data follows its last table');
    await client.query('commit');
    return rows;
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  }
}

function readable(error: unknown, file: string): unknown {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT') return new BackupError(`no backup file ${file}`);
  if (code === 'Z_DATA_ERROR' && /incorrect header check/.test((error as Error).message)) return new BackupError(`${file} is not a Dots Exchange backup (not gzip data)`);
  if (typeof code === 'string' && code.startsWith('Z_')) {
    return new BackupError(`${file} is damaged or truncated, or not a backup (${(error as Error).message}); nothing was restored`);
  }
  return error;
}

/** Runs `work` on the decompressed content of the backup `file`. */
async function withBackup<T>(file: string, work: (reader: ChunkReader) => Promise<T>): Promise<T> {
  const input = createReadStream(file);
  const gunzip = createGunzip();
  input.on('error', (error) => gunzip.destroy(error));
  input.pipe(gunzip);
  try {
    return await work(new ChunkReader(gunzip[Symbol.asyncIterator]()));
  } catch (error) {
    throw readable(error, file);
  } finally {
    input.destroy();
    gunzip.destroy();
  }
}

/**
 * Reads the whole backup once: its gzip checksum, its frames and every table's row count. A damaged or
 * truncated file is refused before the target database is touched.
 */
export function verifyBackup(file: string): Promise<BackupHeader> {
  return withBackup(file, async (reader) => {
    const header = await readBackupHeader(reader);
    for (const table of header.tables) {
      let rows = 0;
      for await (const chunk of reader.table()) rows += countRows(chunk);
      if (rows !== table.rows) throw new BackupError(`the backup is damaged: table ${table.name} holds ${rows} rows, its header says ${table.rows}`);
    }
    if (!(await reader.atEnd())) throw new BackupError('the backup is damaged: data follows its last table');
    return header;
  });
}

/**
 * Loads the backup `file` into the empty database at `databaseUrl`: the file is checked whole first, then
 * migrations up to the backup's, every row and sequence in one transaction, and the remaining migrations of
 * this version.
 */
export async function restoreDatabase(databaseUrl: string, file: string): Promise<BackupSummary> {
  const started = performance.now();
  const bytes = (
    await stat(file).catch((error: unknown) => {
      throw readable(error, file);
    })
  ).size;
  const checked = await verifyBackup(file);
  const client = await connect(databaseUrl);
  try {
    const plan = await checkTarget(client, checked);
    const db = createDb(databaseUrl, 2);
    try {
      await migrateLatest(db, plan.upTo.length);
      await checkSchema(client, checked);
      const rows = await withBackup(file, async (reader) => {
        const header = await readBackupHeader(reader);
        // The file read a second time is the one checked (the same tables, rows and sequences).
        if (JSON.stringify(header) !== JSON.stringify(checked)) throw new BackupError(`${file} changed while it was restored`);
        return load(client, reader, header);
      });
      if (!plan.complete) await migrateLatest(db);
      await client.query('analyze');
      return { tables: checked.tables.length, rows, bytes, seconds: elapsed(started) };
    } finally {
      await db.destroy();
    }
  } finally {
    await client.end().catch(() => {});
  }
}
