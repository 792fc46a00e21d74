import { randomBytes } from 'node:crypto';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from './config.js';
import { SecretBox } from './domain/api-keys/secret-box.js';

/** With the embedded database and no API_KEY_ENCRYPTION_KEY: the key, generated once, in DATA_DIR (mode 0600). */
export const ENCRYPTION_KEY_FILE = 'api-key-encryption-key';

export const NO_ENCRYPTION_KEY =
  'order-book (hmac) credentials need API_KEY_ENCRYPTION_KEY when DATABASE_URL is set: set it to 32 random bytes (openssl rand -hex 32), the same on every instance';

/**
 * The key that seals order-book secrets: API_KEY_ENCRYPTION_KEY, else (with the embedded database, whose
 * files the service holds) the one in DATA_DIR, generated on first use beside `postgres-password`; else
 * none: with DATABASE_URL the service has no private place of its own to keep one.
 */
export async function apiKeyEncryptionKey(config: Config, embedded: boolean): Promise<Buffer | undefined> {
  if (config.apiKeys.encryptionKey) return config.apiKeys.encryptionKey;
  if (!embedded) return undefined;
  const file = path.join(config.dataDir, ENCRYPTION_KEY_FILE);
  const read = async () => {
    const text = (await readFile(file, 'utf8').catch(() => '')).trim();
    return /^[0-9a-f]{64}$/.test(text) ? Buffer.from(text, 'hex') : undefined;
  };
  const stored = await read();
  if (stored) return stored;
  const key = randomBytes(32);
  // Written aside, then linked into place: the file appears whole, and of two processes creating it at
  // once the second (EEXIST) reads the first one's.
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, `${key.toString('hex')}\n`, { mode: 0o600 });
  const written = await link(temp, file)
    .then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
        return false;
      },
    )
    .finally(() => rm(temp, { force: true }));
  if (written) return key;
  const other = await read();
  if (!other) throw new Error(`${file} holds no key (64 hexadecimal digits): remove it to have a new one made (order-book credentials issued under the old one stop working)`);
  return other;
}

/** What ApiKeyService seals secrets with, or why it cannot. */
export function secretsOf(key: Buffer | undefined): SecretBox | string {
  return key ? new SecretBox(key) : NO_ENCRYPTION_KEY;
}
