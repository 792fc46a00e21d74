import { inTransaction, type Db } from '../../db/knex.js';
import { Listener } from '../../db/listener.js';
import * as accounts from '../../db/repositories/accounts.js';
import * as identities from '../../db/repositories/identities.js';
import type { Role, UsersRow } from '../../db/tables.js';
import { conflict, notFound, rateLimited, unauthorized, unprocessable } from '../errors.js';
import { LoginGuard, type LoginGuardSettings } from './login-guard.js';
import { PasswordQueue, type PasswordQueueSettings } from './password-queue.js';
import { decodeCursor, encodeCursor, splitPage } from '../pagination/cursor.js';
import type { OidcProvider, ProviderIdentity, ProviderProof } from './oidc.js';
import { decoyHash, hashPassword, verifyPassword } from './passwords.js';
import { SessionCache } from './session-cache.js';
import { generateToken, hashToken } from './tokens.js';

/** A session change the database announced: one token, one API key, every session and key of an account, or any. */
export type SessionChange = { kind: 'token'; tokenHash: string } | { kind: 'key'; keyId: string } | { kind: 'account'; accountId: string } | { kind: 'all' };

export interface Account {
  id: string;
  email: string;
  name: string;
  username: string;
  role: Role;
}

export interface AccountWithBalance extends Account {
  balance: string;
  reserved: string;
  createdAt: Date;
}

export interface AccountSettings {
  startingBalance: string;
  tokenTtlSecs: number;
  /** Sign-in through an OpenID Connect provider; undefined: not configured. */
  identityProvider?: OidcProvider | undefined;
  /** Back-off after failed sign-ins (default: 5 free failures, 1 s doubling, at most 15 min). */
  login?: LoginGuardSettings;
  /** Password hashing at once and waiting (default 1 and 8). */
  passwordHashing?: PasswordQueueSettings;
}

/** The channel of session and account changes (migration 0015). */
const SESSION_CHANNEL = 'dots_sessions';
/**
 * How long a looked-up session is trusted without asking the database again. Changes reach the cache by
 * notification (SessionCache), so this only bounds how long an entry lives.
 */
const SESSION_CACHE_TTL_MS = 60_000;
/** Sessions kept at most (a few hundred bytes each); a session pushed out is looked up again when next used. */
const SESSION_CACHE_MAX_ENTRIES = 20_000;

const toAccount = (row: UsersRow): Account => ({
  id: row.id,
  email: row.email,
  name: row.name,
  username: row.username,
  role: row.role,
});

const UNIQUE_VIOLATION = '23505';
/** Attempts at creating a provider's account when a concurrent registration takes the username chosen. */
const USERNAME_ATTEMPTS = 3;
const WRONG_CREDENTIALS = 'email or password is incorrect';

/**
 * Accounts, passwords and session tokens. Once started (`start`), sessions looked up are kept in memory
 * (SessionCache) and forgotten when the database announces a change to them, in any process.
 */
export class AccountService {
  readonly #sessions = new SessionCache<Account>({ ttlMs: SESSION_CACHE_TTL_MS, maxEntries: SESSION_CACHE_MAX_ENTRIES });
  #listener: Listener | undefined;
  readonly #guard: LoginGuard;
  readonly #hashing: PasswordQueue;
  readonly #changeListeners: Array<(change: SessionChange) => void> = [];
  /** Other caches of credentials (API keys) told of the same changes, and trusted only while the listener is up. */
  readonly #caches: Array<SessionCache<unknown>> = [];

  constructor(
    private readonly db: Db,
    private readonly settings: AccountSettings,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    this.#guard = new LoginGuard(settings.login ?? { freeFailures: 5, backoffBaseMs: 1000, backoffMaxSecs: 900 });
    this.#hashing = new PasswordQueue(settings.passwordHashing ?? { concurrency: 1, queue: 8 });
  }

  /** Calls `listener` on every session change this process hears of (logout, revocation, account change). */
  onSessionChange(listener: (change: SessionChange) => void): void {
    this.#changeListeners.push(listener);
  }

  /** Keeps `cache` (of another credential) in step with the session changes, as the session cache is. */
  attachCache<A>(cache: SessionCache<A>): void {
    this.#caches.push(cache);
    if (this.#listener) cache.open();
  }

  #changed(payload: string): void {
    this.#sessions.changed(payload);
    for (const cache of this.#caches) cache.changed(payload);
    const change: SessionChange = payload.startsWith('token:')
      ? { kind: 'token', tokenHash: payload.slice('token:'.length) }
      : payload.startsWith('key:')
        ? { kind: 'key', keyId: payload.slice('key:'.length) }
        : payload.startsWith('user:')
          ? { kind: 'account', accountId: payload.slice('user:'.length) }
          : { kind: 'all' };
    for (const listener of this.#changeListeners) listener(change);
  }

  /** LISTENs for session changes on a dedicated connection; the session cache serves while it is connected. */
  async start(connectionString: string): Promise<void> {
    const listener = new Listener(
      connectionString,
      SESSION_CHANNEL,
      {
        notify: (payload) => this.#changed(payload),
        connected: () => {
          this.#sessions.open();
          for (const cache of this.#caches) cache.open();
          // Changes made while the listener was down were not heard: every session is checked again.
          for (const listener of this.#changeListeners) listener({ kind: 'all' });
          return Promise.resolve();
        },
        lost: () => {
          this.#sessions.close();
          for (const cache of this.#caches) cache.close();
        },
        error: (error) => this.onError(error),
      },
      'dots-session-listener',
    );
    await listener.start();
    this.#listener = listener;
  }

  async stop(): Promise<void> {
    this.#sessions.close();
    for (const cache of this.#caches) cache.close();
    await this.#listener?.stop();
  }

  async register(input: { email: string; password: string; name?: string; username?: string }, address = 'unknown'): Promise<{ token: string; account: Account }> {
    const username = input.username ?? (await this.freeUsernameFrom(input.email));
    const passwordHash = await this.#hashing.run(address, () => hashPassword(input.password));
    const user = await inTransaction(this.db, async (tx) => {
      if (await accounts.findUserByEmail(tx, input.email)) throw conflict('email is already registered');
      if (await accounts.isUsernameTaken(tx, username)) throw conflict('username is taken');
      const row = await accounts
        .insertUser(tx, { email: input.email, username, name: input.name ?? '', passwordHash, role: 'USER' })
        .catch((error: { code?: string; constraint?: string }) => {
          // Two registrations racing past the checks above: the unique indexes decide.
          if (error.code === UNIQUE_VIOLATION) {
            throw conflict(error.constraint === 'users_username_unique' ? 'username is taken' : 'email is already registered');
          }
          throw error;
        });
      await accounts.grantOpeningBalance(tx, row.id, this.settings.startingBalance);
      return row;
    });
    return { token: await this.openSession(user.id), account: toAccount(user) };
  }

  /**
   * The same answer for an unknown email and a wrong password, in about the same time. After repeated
   * failures for this email or from this address, 429 until the back-off ends (LoginGuard), before any
   * password is checked; 429 at once too when every hashing place is taken (PasswordQueue).
   */
  async login(email: string, password: string, address = 'unknown'): Promise<{ token: string; account: Account }> {
    const user = await this.#checkPassword(email, password, address);
    return { token: await this.openSession(user.id), account: toAccount(user) };
  }

  /** The account of this email and password (login's checks, back-off and queue included), or 401/429. */
  async #checkPassword(email: string, password: string, address: string): Promise<UsersRow> {
    const wait = await this.#guard.retryAfter(email, address);
    if (wait !== undefined) throw rateLimited(`too many failed sign-ins for this email or from this address: retry in ${Math.ceil(wait)} s`, wait);
    // The lookup takes its place in the queue too: a refused sign-in costs no database work either.
    const { user, matches } = await this.#hashing.run(address, async () => {
      const found = await accounts.findUserByEmail(this.db, email);
      return { user: found, matches: await verifyPassword(password, found?.password_hash ?? (await decoyHash())) };
    });
    if (!user || !matches) {
      await this.#guard.failed(email, address);
      throw unauthorized(WRONG_CREDENTIALS);
    }
    await this.#guard.succeeded(email, address);
    return user;
  }

  /**
   * Sign-in with a proof from the configured OpenID Connect provider (an ID token, or a code to redeem). The
   * account linked to the provider's (issuer, subject) is signed in. On the first sign-in, with no account
   * of the provider's verified email, a USER account without a password is created with that email and the
   * starting balance. An existing account of that email is never linked on the email alone (anyone may
   * have registered it, and registration verifies no email): only with its password sent as
   * `link_password` (checked as a sign-in is), and the link then revokes its other sessions and its API
   * keys; otherwise 409. 404 when no provider is configured (and nothing is fetched), 401 for a proof that
   * fails a check, 503 when the provider cannot be reached.
   */
  async signInWithProvider(proof: ProviderProof, address = 'unknown'): Promise<{ token: string; account: Account }> {
    const provider = this.settings.identityProvider;
    if (!provider) throw notFound('sign-in through an identity provider is not configured on this service');
    const identity = await provider.identify(proof);
    const linked = await identities.findIdentityUser(this.db, identity.issuer, identity.subject);
    if (linked) {
      await identities.touchIdentity(this.db, linked.identity_id, identity.email);
      return { token: await this.openSession(linked.id), account: toAccount(linked) };
    }
    if (!identity.email || !identity.emailVerified) {
      throw unprocessable('the identity provider sent no verified email for this account; an account is created only with one (ask for the email scope)');
    }
    // Checked before the transaction: hashing takes a while, and may wait its turn.
    const proven = proof.link_password === undefined ? undefined : (await this.#checkPassword(identity.email, proof.link_password, address)).id;
    const user = await this.linkOrCreate(identity, identity.email, proven);
    return { token: await this.openSession(user.id), account: toAccount(user) };
  }

  private async linkOrCreate(identity: ProviderIdentity, email: string, proven: string | undefined, attempt = 1): Promise<UsersRow> {
    const { issuer, subject } = identity;
    const username = await this.freeUsernameFrom(identity.preferredUsername ?? email);
    try {
      return await inTransaction(this.db, async (tx) => {
        await identities.lockIdentity(tx, issuer, subject);
        const linked = await identities.findIdentityUser(tx, issuer, subject);
        if (linked) return linked;
        const existing = await accounts.findUserByEmail(tx, email);
        if (existing) {
          if (await identities.hasIdentityAt(tx, existing.id, issuer)) throw conflict('the account with this email is linked to another identity at this provider');
          if (existing.id !== proven) {
            throw conflict('an account with this email exists already: to link it to this identity, send its password as link_password (its other sessions and API keys are then revoked)');
          }
          await identities.insertIdentity(tx, { userId: existing.id, issuer, subject, email });
          // Whoever held the account before the link (a session, a bot's key) must sign in again.
          await accounts.revokeCredentials(tx, existing.id);
          return existing;
        }
        const row = await accounts.insertUser(tx, { email, username, name: identity.name ?? '', passwordHash: null, role: 'USER' });
        await accounts.grantOpeningBalance(tx, row.id, this.settings.startingBalance);
        await identities.insertIdentity(tx, { userId: row.id, issuer, subject, email });
        return row;
      });
    } catch (error) {
      const violation = error as { code?: string; constraint?: string };
      if (violation.code !== UNIQUE_VIOLATION) throw error;
      // Another sign-in or registration took the username (try another) or the email (that account now exists: link it or refuse).
      if (attempt < USERNAME_ATTEMPTS) return this.linkOrCreate(identity, email, proven, attempt + 1);
      throw conflict(violation.constraint === 'users_username_unique' ? 'no free username could be derived; try again' : 'email is already registered');
    }
  }

  /** The account of a live token, or undefined for an unknown, expired or revoked one. */
  async authenticate(token: string): Promise<Account | undefined> {
    const tokenHash = hashToken(token);
    const key = tokenHash.toString('hex');
    const cached = this.#sessions.get(key, Date.now());
    if (cached) return cached;
    const generation = this.#sessions.generation;
    const user = await accounts.findSessionUser(this.db, tokenHash);
    if (!user) return undefined;
    const account = toAccount(user);
    this.#sessions.store(key, { account, userId: user.id, expiresAt: user.session_expires_at }, generation, Date.now());
    return account;
  }

  async logout(token: string): Promise<void> {
    const tokenHash = hashToken(token);
    const revoked = await accounts.revokeSession(this.db, tokenHash);
    // At once here; every process (this one included) also hears of it from the database.
    this.#changed(`token:${tokenHash.toString('hex')}`);
    if (!revoked) throw unauthorized();
  }

  /** Makes sure the operator's account exists with this password and role ADMIN (run at start). */
  async ensureAdmin(email: string, password: string): Promise<Account> {
    const passwordHash = await hashPassword(password);
    return inTransaction(this.db, async (tx) => {
      await accounts.lockOperatorAccount(tx);
      const existing = await accounts.findUserByEmail(tx, email);
      if (existing) return toAccount(await accounts.updateUserCredentials(tx, existing.id, { passwordHash, role: 'ADMIN' }));
      const username = await this.freeUsernameFrom(email);
      const row = await accounts.insertUser(tx, { email, username, name: 'Administrator', passwordHash, role: 'ADMIN' });
      await accounts.grantOpeningBalance(tx, row.id, this.settings.startingBalance);
      return toAccount(row);
    });
  }

  async listAccounts(query: { limit: number; cursor?: string; role?: Role }): Promise<{ accounts: AccountWithBalance[]; cursor: string | null }> {
    const after = query.cursor ? decodeCursor('accounts', query.cursor, ['timestamp', 'uuid']) : undefined;
    const rows = await accounts.listUsersWithBalances(this.db, {
      limit: query.limit + 1,
      role: query.role,
      after: after ? { createdAt: String(after[0]), id: String(after[1]) } : undefined,
    });
    const page = splitPage(rows, query.limit);
    const last = page.items.at(-1);
    return {
      accounts: page.items.map((row) => ({ ...toAccount(row), balance: row.cash, reserved: row.reserved, createdAt: row.created_at })),
      cursor: page.hasMore && last ? encodeCursor('accounts', [last.position_created_at, last.id]) : null,
    };
  }

  private async openSession(userId: string): Promise<string> {
    const token = generateToken();
    const expiresAt = new Date(Date.now() + this.settings.tokenTtlSecs * 1000);
    await accounts.insertSession(this.db, { userId, tokenHash: hashToken(token), expiresAt });
    return token;
  }

  /** `ada.lovelace+x@example.com` -> `ada_lovelace_x`, with a numeric suffix while taken. */
  private async freeUsernameFrom(email: string): Promise<string> {
    const base = (email.split('@')[0] ?? '').replace(/[^A-Za-z0-9_]/g, '_').slice(0, 24).padEnd(3, '_');
    for (let attempt = 0; ; attempt += 1) {
      const candidate = attempt === 0 ? base : `${base}_${attempt + 1}`;
      if (!(await accounts.isUsernameTaken(this.db, candidate))) return candidate;
    }
  }
}
