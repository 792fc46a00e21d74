import { inTransaction, type Db } from '../../db/knex.js';
import * as accounts from '../../db/repositories/accounts.js';
import type { Role, UserRow } from '../../db/rows.js';
import { conflict, unauthorized } from '../errors.js';
import { decodeCursor, encodeCursor, splitPage } from '../pagination/cursor.js';
import { decoyHash, hashPassword, verifyPassword } from './passwords.js';
import { generateToken, hashToken } from './tokens.js';

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
}

const toAccount = (row: UserRow): Account => ({
  id: row.id,
  email: row.email,
  name: row.name,
  username: row.username,
  role: row.role,
});

const UNIQUE_VIOLATION = '23505';
const WRONG_CREDENTIALS = 'email or password is incorrect';

/** Accounts, passwords and session tokens. */
export class AccountService {
  constructor(
    private readonly db: Db,
    private readonly settings: AccountSettings,
  ) {}

  async register(input: { email: string; password: string; name?: string; username?: string }): Promise<{ token: string; account: Account }> {
    const username = input.username ?? (await this.freeUsernameFrom(input.email));
    const passwordHash = await hashPassword(input.password);
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

  /** The same answer for an unknown email and a wrong password, in about the same time. */
  async login(email: string, password: string): Promise<{ token: string; account: Account }> {
    const user = await accounts.findUserByEmail(this.db, email);
    const matches = await verifyPassword(password, user?.password_hash ?? (await decoyHash()));
    if (!user || !matches) throw unauthorized(WRONG_CREDENTIALS);
    return { token: await this.openSession(user.id), account: toAccount(user) };
  }

  /** The account of a live token, or undefined for an unknown, expired or revoked one. */
  async authenticate(token: string): Promise<Account | undefined> {
    const user = await accounts.findUserBySessionToken(this.db, hashToken(token));
    return user ? toAccount(user) : undefined;
  }

  async logout(token: string): Promise<void> {
    if (!(await accounts.revokeSession(this.db, hashToken(token)))) throw unauthorized();
  }

  /** Makes sure the operator's account exists with this password and role ADMIN (run at start). */
  async ensureAdmin(email: string, password: string): Promise<Account> {
    const passwordHash = await hashPassword(password);
    return inTransaction(this.db, async (tx) => {
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
