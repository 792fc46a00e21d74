import { createHash, randomBytes } from 'node:crypto';

/** Session tokens are 256 random bits; only their SHA-256 is stored, so a database leak reveals none. */
export function generateToken(): string {
  return `dots_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
