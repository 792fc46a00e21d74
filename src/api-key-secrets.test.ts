import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { apiKeyEncryptionKey, ENCRYPTION_KEY_FILE, NO_ENCRYPTION_KEY, secretsOf } from './api-key-secrets.js';
import { loadConfig } from './config.js';
import { SecretBox } from './domain/api-keys/secret-box.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'dots-keys-'));
  dirs.push(dir);
  return dir;
}

describe('the API key encryption key', () => {
  it('is API_KEY_ENCRYPTION_KEY when set', async () => {
    const config = loadConfig({ API_KEY_ENCRYPTION_KEY: 'ab'.repeat(32), DATABASE_URL: 'postgres://db/x' });
    expect(await apiKeyEncryptionKey(config, false)).toEqual(Buffer.from('ab'.repeat(32), 'hex'));
  });

  it('is generated once into DATA_DIR (mode 0600) with the embedded database, and read back', async () => {
    const config = loadConfig({ DATA_DIR: await dataDir() });
    const first = await apiKeyEncryptionKey(config, true);
    const file = path.join(config.dataDir, ENCRYPTION_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).trim()).toBe(first!.toString('hex'));
    expect(await apiKeyEncryptionKey(config, true)).toEqual(first);
    const fresh = loadConfig({ DATA_DIR: await dataDir() });
    const together = await Promise.all([1, 2, 3, 4].map(() => apiKeyEncryptionKey(fresh, true)));
    expect(new Set(together.map((key) => key!.toString('hex'))).size).toBe(1);
  });

  it('is refused clearly when the key file is damaged, and absent with DATABASE_URL alone', async () => {
    const config = loadConfig({ DATA_DIR: await dataDir() });
    await writeFile(path.join(config.dataDir, ENCRYPTION_KEY_FILE), 'garbage');
    await expect(apiKeyEncryptionKey(config, true)).rejects.toThrow(/holds no key/);
    expect(await apiKeyEncryptionKey(loadConfig({ DATABASE_URL: 'postgres://db/x' }), false)).toBeUndefined();
    expect(secretsOf(undefined)).toBe(NO_ENCRYPTION_KEY);
    expect(secretsOf(Buffer.alloc(32))).toBeInstanceOf(SecretBox);
  });
});
