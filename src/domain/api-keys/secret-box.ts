import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals the HMAC secrets of order-book credentials with AES-256-GCM under a key the database never holds
 * (API_KEY_ENCRYPTION_KEY, or the embedded database's generated key file): a copy of the database alone
 * reveals no secret. Sealed form: 12-byte nonce, ciphertext, 16-byte tag; the key id is bound as
 * additional data, so a sealed secret cannot be moved to another key's row.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the API key encryption key must be 32 bytes');
  }

  seal(secret: Buffer, keyId: string): Buffer {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(keyId, 'utf8'));
    const body = Buffer.concat([cipher.update(secret), cipher.final()]);
    return Buffer.concat([nonce, body, cipher.getAuthTag()]);
  }

  /** The secret, or undefined when it was sealed under another key (or altered). */
  open(sealed: Buffer, keyId: string): Buffer | undefined {
    if (sealed.length < NONCE_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, NONCE_BYTES));
      decipher.setAAD(Buffer.from(keyId, 'utf8'));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
    } catch {
      return undefined;
    }
  }
}
