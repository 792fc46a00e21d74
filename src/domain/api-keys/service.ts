import { createPublicKey, generateKeyPair, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { RateLimiterMemory, type RateLimiterRes } from 'rate-limiter-flexible';
import type { RateBudget } from '../../config.js';
import { inTransaction, type Db, type Queryable } from '../../db/knex.js';
import * as keys from '../../db/repositories/api-keys.js';
import type { ApiKeySummaryRecord } from '../../db/repositories/api-keys.js';
import type { ApiKeyKind, ApiKeyScope } from '../../db/tables.js';
import type { Account, AccountService } from '../accounts/service.js';
import { SessionCache } from '../accounts/session-cache.js';
import { conflict, invalid, notFound, rateLimited, unavailable } from '../errors.js';
import { ReplayGuard } from './replay-guard.js';
import type { SecretBox } from './secret-box.js';
import { hmacRequestPaths, hmacSignature, hmacSigningString, matchesDigest, replayDigest, rsaSignatureBytes, rsaSigningString, sameText, sha256, verifyRsaSignature } from './signatures.js';

/** At most this many keys per account. */
export const MAX_KEYS_PER_ACCOUNT = 20;
/** RSA keys accepted: a verification's cost grows with the modulus and the public exponent, so both are bounded. */
const RSA_MIN_BITS = 2048;
const RSA_MAX_BITS = 4096;
const RSA_EXPONENT = 65537n;
/** How long a looked-up key is trusted without asking again (changes reach the cache by notification). */
const KEY_CACHE_TTL_MS = 60_000;
const KEY_CACHE_MAX_ENTRIES = 20_000;
/** `last_used_at` is written at most once per this long per key and process. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** Key generations waiting for the one under way (each takes about 130 ms of CPU); one more is refused (429). */
const MAX_WAITING_GENERATIONS = 4;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ApiKeySettings {
  /** A signature's timestamp must be within this many seconds of the server's clock, either way. */
  windowSecs: number;
  /** Seals order-book secrets; a string: why order-book credentials cannot be issued or used here. */
  secrets: SecretBox | string;
  /** RSA key pairs each account may have generated per window; unset: no budget (RATE_LIMITS=off). */
  generationBudget?: RateBudget;
}

export interface ApiKeySummary {
  id: string;
  name: string;
  kind: ApiKeyKind;
  scopes: ApiKeyScope[];
  address: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export type NewApiKey =
  | { name: string; kind: 'rsa'; scopes: ApiKeyScope[]; publicKey?: string }
  | { name: string; kind: 'hmac'; scopes: ApiKeyScope[]; address: string };

export interface CreatedApiKey {
  key: ApiKeySummary;
  /** A generated RSA key's private key (PKCS#8 PEM), shown this once. */
  privateKey?: string;
  /** Order-book credentials, shown this once. */
  credentials?: { key: string; secret: string; passphrase: string };
}

/** What a verified signature stands for. */
export interface KeyPrincipal {
  account: Account;
  keyId: string;
  scopes: readonly ApiKeyScope[];
  /** The address an order-book key is bound to (lower case). */
  address?: string;
}

interface CachedKey {
  id: string;
  account: Account;
  kind: ApiKeyKind;
  scopes: ApiKeyScope[];
  publicKey?: KeyObject;
  secret?: Buffer;
  passphraseHash?: Buffer;
  address?: string;
}

/** A signed request's outcome: the key's principal, or why it is refused (401). */
export type SignatureCheck = { principal: KeyPrincipal; replayDigest: Buffer; expiresAt: Date } | { refused: string };

/** An order-book request whose key, passphrase, address and timestamp passed: its signature needs the body. */
export interface PendingHmacCheck {
  principal: KeyPrincipal;
  /** Checks the signature over the body as received (`''` when there is none). */
  verify(body: string): SignatureCheck;
}

const summary = (row: ApiKeySummaryRecord): ApiKeySummary => ({
  id: row.id,
  name: row.name,
  kind: row.kind,
  scopes: row.scopes,
  address: row.address,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

const generateRsaKeyPair = promisify(generateKeyPair);

/**
 * API keys of accounts (creation, listing, revocation) and the signed requests made with them. Keys looked
 * up are kept in memory like sessions (SessionCache): forgotten when the database announces a change to
 * the key or its account (`key:<id>`, `user:<id>`), in every process, through AccountService's listener.
 */
export class ApiKeyService {
  readonly #cache = new SessionCache<CachedKey>({ ttlMs: KEY_CACHE_TTL_MS, maxEntries: KEY_CACHE_MAX_ENTRIES, kind: 'key' });
  readonly #touched = new Map<string, number>();
  readonly #replays: ReplayGuard;
  /** One key pair generated at a time in this process: each generation waits for the one before it. */
  #lastGeneration: Promise<unknown> = Promise.resolve();
  /** Generations asked for and not started yet. */
  #waitingGenerations = 0;
  readonly #generationBudget: RateLimiterMemory | undefined;
  /** RSA signatures verified and key pairs generated by this process (the work a request can make it do). */
  verifications = 0;
  generations = 0;

  constructor(
    private readonly db: Db,
    accounts: AccountService,
    private readonly settings: ApiKeySettings,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    accounts.attachCache(this.#cache);
    this.#replays = new ReplayGuard(db, onError);
    const budget = settings.generationBudget;
    this.#generationBudget = budget && new RateLimiterMemory({ points: budget.points, duration: budget.durationSecs, keyPrefix: 'api-key-generation' });
  }

  get windowSecs(): number {
    return this.settings.windowSecs;
  }

  /** Starts deleting expired signature digests (every window). */
  start(): void {
    this.#replays.startSweep(this.settings.windowSecs * 1000);
  }

  stop(): void {
    this.#replays.stop();
  }

  async create(accountId: string, input: NewApiKey): Promise<CreatedApiKey> {
    const id = randomUUID();
    let publicKey: string | null = null;
    let privateKey: string | undefined;
    let hmac: { secret: Buffer; passphrase: string; sealed: Buffer; address: string } | undefined;
    // Checked before any work the key asks for, and again under the account's lock when it is inserted.
    await this.#belowKeyLimit(this.db, accountId);
    if (input.kind === 'rsa') {
      if (input.publicKey === undefined) {
        const pair = await this.#generate(accountId);
        publicKey = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
        privateKey = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      } else {
        publicKey = rsaPublicKey(input.publicKey).export({ type: 'spki', format: 'pem' }).toString();
      }
    } else {
      const box = this.settings.secrets;
      if (typeof box === 'string') throw unavailable(box);
      const secret = randomBytes(32);
      hmac = { secret, passphrase: randomBytes(32).toString('hex'), sealed: box.seal(secret, id), address: input.address.toLowerCase() };
    }
    const row = await inTransaction(this.db, async (tx) => {
      await keys.lockAccountKeys(tx, accountId);
      await this.#belowKeyLimit(tx, accountId);
      return keys.insertKey(tx, {
        id,
        user_id: accountId,
        name: input.name,
        kind: input.kind,
        scopes: [...new Set(input.scopes)].sort(),
        public_key: publicKey,
        address: hmac?.address ?? null,
        passphrase_hash: hmac ? sha256(hmac.passphrase) : null,
        secret_sealed: hmac?.sealed ?? null,
      });
    });
    return {
      key: summary(row),
      ...(privateKey && { privateKey }),
      ...(hmac && { credentials: { key: id, secret: hmac.secret.toString('base64'), passphrase: hmac.passphrase } }),
    };
  }

  async #belowKeyLimit(db: Queryable, accountId: string): Promise<void> {
    if ((await keys.countKeys(db, accountId)) >= MAX_KEYS_PER_ACCOUNT) {
      throw conflict(`an account has at most ${MAX_KEYS_PER_ACCOUNT} API keys: revoke one first`);
    }
  }

  /** A new RSA key pair, taken from the account's generation budget, generated one at a time. */
  async #generate(accountId: string): ReturnType<typeof generateRsaKeyPair> {
    if (this.#generationBudget) {
      try {
        await this.#generationBudget.consume(accountId);
      } catch (refused) {
        if (refused instanceof Error) throw refused;
        const retry = (refused as RateLimiterRes).msBeforeNext / 1000;
        throw rateLimited(`too many generated API keys: at most ${this.#generationBudget.points} per ${this.#generationBudget.duration} s per account (send a public_key to skip generation); retry in ${Math.max(1, Math.ceil(retry))} s`, retry);
      }
    }
    if (this.#waitingGenerations >= MAX_WAITING_GENERATIONS) throw rateLimited('too many API keys being generated: retry in a moment', 1);
    this.#waitingGenerations += 1;
    const pair = this.#lastGeneration.then(() => {
      this.#waitingGenerations -= 1;
      this.generations += 1;
      return generateRsaKeyPair('rsa', { modulusLength: RSA_MIN_BITS, publicExponent: Number(RSA_EXPONENT) });
    });
    this.#lastGeneration = pair.catch(() => undefined);
    return pair;
  }

  async list(accountId: string): Promise<ApiKeySummary[]> {
    return (await keys.listKeys(this.db, accountId)).map(summary);
  }

  /** Revokes (deletes) the account's key: every process refuses it from the moment it hears of it. */
  async revoke(accountId: string, id: string): Promise<void> {
    if (!UUID.test(id) || !(await keys.deleteKey(this.db, accountId, id))) throw notFound('no such API key');
    // At once here; every process (this one included) also hears of it from the database.
    this.#cache.changed(`key:${id}`);
  }

  /** The account of a live key, for a connection that authenticated with it and checks it again. */
  async accountOf(keyId: string): Promise<Account | undefined> {
    return (await this.#key(keyId))?.account;
  }

  /** A request signed with an RSA key (KALSHI-ACCESS-* headers), `path` as sent without its query. */
  async checkRsa(headers: { key: string; timestamp: string; signature: string }, method: string, path: string): Promise<SignatureCheck> {
    const key = await this.#key(headers.key);
    if (!key) return { refused: 'unknown or revoked API key' };
    if (key.kind !== 'rsa' || !key.publicKey) return { refused: 'this API key signs with POLY_* headers (order-book credentials), not KALSHI-ACCESS-*' };
    const problem = rsaKeyProblem(key.publicKey);
    if (problem) return { refused: `this API key's public key is no longer accepted (${problem}): create another key` };
    const issuedAt = this.#timestamp(headers.timestamp, 1);
    if (issuedAt === undefined) return { refused: `KALSHI-ACCESS-TIMESTAMP must be the time of signing in milliseconds since the epoch, within ${this.settings.windowSecs} s of the server's clock` };
    const modulusBytes = Math.ceil(key.publicKey.asymmetricKeyDetails!.modulusLength! / 8);
    const signature = rsaSignatureBytes(headers.signature, modulusBytes);
    if (!signature) return { refused: `invalid KALSHI-ACCESS-SIGNATURE: standard base64 with its padding of the ${modulusBytes}-byte signature, nothing else` };
    this.verifications += 1;
    if (!(await verifyRsaSignature(key.publicKey, rsaSigningString(headers.timestamp, method, path), signature))) {
      return { refused: 'invalid KALSHI-ACCESS-SIGNATURE: sign timestamp + METHOD + path (without the query) with RSA-PSS SHA-256' };
    }
    return this.#accepted(key, replayDigest(signature, ['rsa', key.id, headers.timestamp, method, path]), issuedAt);
  }

  /**
   * A request with order-book credentials (POLY_* headers): the key, its passphrase, the address it is
   * bound to and the timestamp are checked here; the signature, over the body, by the returned check.
   * `query`: the request's query string, as sent.
   */
  async checkHmac(
    headers: { key: string; passphrase: string; address: string; timestamp: string; signature: string },
    method: string,
    path: string,
    query: string,
  ): Promise<PendingHmacCheck | { refused: string }> {
    const key = await this.#key(headers.key);
    if (!key) return { refused: 'unknown or revoked API key' };
    if (key.kind !== 'hmac' || !key.secret || !key.passphraseHash) return { refused: 'this API key signs with KALSHI-ACCESS-* headers, not POLY_*' };
    // Both checked whatever the first one gives, so that the time taken says nothing about either.
    const passphraseMatches = matchesDigest(headers.passphrase, key.passphraseHash);
    const addressMatches = sameText(headers.address.toLowerCase(), key.address ?? '');
    if (!passphraseMatches || !addressMatches) return { refused: 'POLY_PASSPHRASE or POLY_ADDRESS does not match the API key' };
    const issuedAt = this.#timestamp(headers.timestamp, 1000);
    if (issuedAt === undefined) return { refused: `POLY_TIMESTAMP must be the time of signing in seconds since the epoch, within ${this.settings.windowSecs} s of the server's clock` };
    const secret = key.secret;
    // The signature covers no query string and is deterministic: two reads that differ only in their query
    // within one second carry the same signature, and are told apart by their query. Elsewhere the
    // signature alone identifies the request, so that it cannot be replayed under another query.
    const replayParts = (requestPath: string) => ['hmac', key.id, headers.timestamp, method, requestPath, ...(method === 'GET' || method === 'HEAD' ? [query] : [])];
    return {
      principal: { account: key.account, keyId: key.id, scopes: key.scopes, address: key.address },
      verify: (body) => {
        // Compared as text with the one spelling a client sends (URL-safe, padded); remembered under the
        // request path it was signed for, the same whichever path (relative or full) the request reached.
        let signedPath: string | undefined;
        let signature: string | undefined;
        for (const requestPath of hmacRequestPaths(path)) {
          const expected = hmacSignature(secret, hmacSigningString(headers.timestamp, method, requestPath, body));
          if (sameText(expected, headers.signature) && signedPath === undefined) [signedPath, signature] = [requestPath, expected];
        }
        if (signedPath === undefined) return { refused: 'invalid POLY_SIGNATURE: sign timestamp + METHOD + requestPath + body with HMAC-SHA256 under the base64-decoded secret' };
        return this.#accepted(key, replayDigest(Buffer.from(signature!, 'base64url'), replayParts(signedPath)), issuedAt);
      },
    };
  }

  /** Whether a verified signature is used for the first time (in any process): a replay is refused. */
  async firstUse(check: { replayDigest: Buffer; expiresAt: Date }): Promise<boolean> {
    return this.#replays.check(check.replayDigest, check.expiresAt);
  }

  #accepted(key: CachedKey, digest: Buffer, issuedAtMs: number): SignatureCheck {
    this.#touch(key.id);
    return {
      principal: { account: key.account, keyId: key.id, scopes: key.scopes, address: key.address },
      replayDigest: digest,
      // A signature is refused as stale once its timestamp leaves the window: it need not be remembered longer.
      expiresAt: new Date(issuedAtMs + this.settings.windowSecs * 1000 + 1000),
    };
  }

  /** A timestamp (in units of `unitMs`) within the window, in ms; undefined when malformed or outside. */
  #timestamp(text: string, unitMs: number): number | undefined {
    if (!/^\d{1,16}$/.test(text)) return undefined;
    const ms = Number(text) * unitMs;
    return Math.abs(Date.now() - ms) <= this.settings.windowSecs * 1000 ? ms : undefined;
  }

  #touch(keyId: string): void {
    const now = Date.now();
    if (now - (this.#touched.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.#touched.set(keyId, now);
    if (this.#touched.size > KEY_CACHE_MAX_ENTRIES) this.#touched.delete(this.#touched.keys().next().value!);
    keys.touchKeys(this.db, [keyId]).catch(this.onError);
  }

  async #key(id: string): Promise<CachedKey | undefined> {
    if (!UUID.test(id)) return undefined;
    const cached = this.#cache.get(id, Date.now());
    if (cached) return cached;
    const generation = this.#cache.generation;
    const row = await keys.findKeyWithUser(this.db, id);
    if (!row) return undefined;
    const key: CachedKey = {
      id: row.id,
      account: row.user,
      kind: row.kind,
      scopes: row.scopes,
      ...(row.public_key && { publicKey: createPublicKey(row.public_key) }),
    };
    if (row.kind === 'hmac' && row.secret_sealed && row.passphrase_hash) {
      const box = this.settings.secrets;
      const secret = typeof box === 'string' ? undefined : box.open(row.secret_sealed, row.id);
      // Sealed under another key (API_KEY_ENCRYPTION_KEY changed): the credentials cannot be checked.
      if (!secret) return undefined;
      Object.assign(key, { secret, passphraseHash: row.passphrase_hash, address: row.address ?? undefined });
    }
    this.#cache.store(id, { account: key, userId: row.user_id, expiresAt: new Date(8.64e15) }, generation, Date.now());
    return key;
  }
}

/** Why an RSA public key is not accepted (another type, its size, its exponent); undefined when it is. */
function rsaKeyProblem(key: KeyObject): string | undefined {
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (key.asymmetricKeyType !== 'rsa') return 'not an RSA key';
  if (bits < RSA_MIN_BITS || bits > RSA_MAX_BITS) return `a modulus of ${bits} bits, not ${RSA_MIN_BITS} to ${RSA_MAX_BITS}`;
  if (key.asymmetricKeyDetails?.publicExponent !== RSA_EXPONENT) return `public exponent ${key.asymmetricKeyDetails?.publicExponent}, not ${RSA_EXPONENT}`;
  return undefined;
}

/** A PEM public key of RSA with 2048 to 4096 bits and exponent 65537, or 400. */
function rsaPublicKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw invalid('public_key is not a PEM public key (-----BEGIN PUBLIC KEY----- or -----BEGIN RSA PUBLIC KEY-----)', [{ location: 'body', path: 'public_key', message: 'not a PEM public key' }]);
  }
  const problem = rsaKeyProblem(key);
  if (problem) {
    throw invalid(`public_key must be an RSA key of ${RSA_MIN_BITS} to ${RSA_MAX_BITS} bits with public exponent ${RSA_EXPONENT}: this one is ${problem}`, [
      { location: 'body', path: 'public_key', message: problem },
    ]);
  }
  return key;
}
