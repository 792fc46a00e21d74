import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from './passwords.js';
import { generateToken, hashToken } from './tokens.js';

describe('passwords', () => {
  it('verifies the right password and refuses others', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horsE', hash)).toBe(false);
    expect(await verifyPassword('correct horse', 'bcrypt$whatever')).toBe(false);
  });

  it('salts every hash', async () => {
    expect(await hashPassword('same')).not.toBe(await hashPassword('same'));
  });
});

describe('tokens', () => {
  it('are random and hashed to 32 bytes', () => {
    const a = generateToken();
    expect(a).toMatch(/^dots_[A-Za-z0-9_-]{43}$/);
    expect(generateToken()).not.toBe(a);
    expect(hashToken(a)).toHaveLength(32);
    expect(hashToken(a).equals(hashToken(a))).toBe(true);
  });
});
