import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box.js';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));
  const secret = randomBytes(32);

  it('opens what it sealed, for the same key id only', () => {
    const sealed = box.seal(secret, 'key-1');
    expect(sealed.includes(secret)).toBe(false);
    expect(box.open(sealed, 'key-1')).toEqual(secret);
    expect(box.open(sealed, 'key-2')).toBeUndefined();
  });

  it('opens nothing sealed under another key, altered or truncated', () => {
    const sealed = box.seal(secret, 'key-1');
    expect(new SecretBox(randomBytes(32)).open(sealed, 'key-1')).toBeUndefined();
    const altered = Buffer.from(sealed);
    altered[20]! ^= 1;
    expect(box.open(altered, 'key-1')).toBeUndefined();
    expect(box.open(sealed.subarray(0, 20), 'key-1')).toBeUndefined();
  });

  it('needs a 32-byte key', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});
