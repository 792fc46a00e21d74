import { constants, createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacRequestPaths, hmacSignature, hmacSigningString, matchesDigest, replayDigest, rsaSignatureBytes, rsaSigningString, sameText, sha256, verifyRsaSignature } from './signatures.js';

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

describe('RSA signatures (KALSHI-ACCESS-*)', () => {
  const message = rsaSigningString('1767225600000', 'GET', '/api/portfolio/balance');
  const pssSign = (saltLength: number) => sign('sha256', Buffer.from(message), { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength });

  it('signs timestamp + METHOD + path', () => {
    expect(message).toBe('1767225600000GET/api/portfolio/balance');
  });

  it('accepts RSA-PSS SHA-256 with the digest-length salt, or the longest one', async () => {
    for (const saltLength of [constants.RSA_PSS_SALTLEN_DIGEST, constants.RSA_PSS_SALTLEN_MAX_SIGN]) {
      expect(await verifyRsaSignature(publicKey, message, pssSign(saltLength))).toBe(true);
    }
  });

  it('refuses PKCS#1 v1.5, another message and another key', async () => {
    const pss = pssSign(32);
    expect(await verifyRsaSignature(publicKey, `${message}x`, pss)).toBe(false);
    expect(await verifyRsaSignature(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey, message, pss)).toBe(false);
    expect(await verifyRsaSignature(publicKey, message, sign('sha256', Buffer.from(message), privateKey))).toBe(false);
  });

  it('reads a signature in its one canonical spelling only: standard base64, padded, of the modulus length', () => {
    const bytes = pssSign(32);
    const canonical = bytes.toString('base64');
    expect(canonical).toMatch(/==$/);
    expect(rsaSignatureBytes(canonical, 256)).toEqual(bytes);
    // The last character before the padding carries 2 bits of the signature and 4 unused ones.
    const last = canonical.length - 3;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const sameBits = alphabet[alphabet.indexOf(canonical[last]!) ^ 0b0001]!;
    const respelled = [
      canonical.replace(/=+$/, ''),
      `${canonical.replace(/=+$/, '')}=`,
      bytes.toString('base64url'),
      `${bytes.toString('base64url')}==`,
      `${canonical.slice(0, last)}${sameBits}==`,
      ` ${canonical}`,
      `${canonical.slice(0, 4)}\n${canonical.slice(4)}`,
    ];
    for (const text of respelled) {
      expect(Buffer.from(text.replaceAll('-', '+').replaceAll('_', '/'), 'base64')).toEqual(bytes);
      expect(rsaSignatureBytes(text, 256)).toBeUndefined();
    }
    // The same bytes with a leading zero byte dropped or added, or for another key size.
    expect(rsaSignatureBytes(Buffer.concat([Buffer.alloc(1), bytes]).toString('base64'), 256)).toBeUndefined();
    expect(rsaSignatureBytes(canonical, 512)).toBeUndefined();
    for (const garbage of ['', '%%%', 'a'.repeat(5000), 'AAAA', '='.repeat(344)]) expect(rsaSignatureBytes(garbage, 256)).toBeUndefined();
  });

  it('remembers a signature by its bytes and what it was accepted for', () => {
    const bytes = pssSign(32);
    const parts = ['rsa', 'key', '1767225600000', 'GET', '/api/portfolio/balance'];
    expect(replayDigest(bytes, parts)).toEqual(replayDigest(Buffer.from(bytes), [...parts]));
    expect(replayDigest(bytes, parts)).not.toEqual(replayDigest(pssSign(32), parts));
    for (let i = 0; i < parts.length; i += 1) expect(replayDigest(bytes, parts.map((part, j) => (j === i ? `${part}x` : part)))).not.toEqual(replayDigest(bytes, parts));
    // Parts are delimited: moving text from one to the next changes the digest.
    expect(replayDigest(bytes, ['ab', 'c'])).not.toEqual(replayDigest(bytes, ['a', 'bc']));
  });
});

describe('order-book signatures (POLY_*)', () => {
  const secret = Buffer.from('c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I=', 'base64');

  it('is URL-safe base64 of HMAC-SHA256 over timestamp + METHOD + requestPath + body, padding kept', () => {
    const message = hmacSigningString('1767225600', 'POST', '/v1/heartbeats', '{"heartbeat_id":null}');
    expect(message).toBe('1767225600POST/v1/heartbeats{"heartbeat_id":null}');
    const standard = createHmac('sha256', secret).update(message).digest('base64');
    expect(hmacSignature(secret, message)).toBe(standard.replaceAll('+', '-').replaceAll('/', '_'));
    expect(hmacSignature(secret, message)).toMatch(/=$/);
  });

  it('reads the request path relative to the order-book bases', () => {
    expect(hmacRequestPaths('/api/clob/v1/heartbeats')).toEqual(['/v1/heartbeats', '/api/clob/v1/heartbeats']);
    expect(hmacRequestPaths('/api/heartbeats')).toEqual(['/heartbeats', '/api/heartbeats']);
    expect(hmacRequestPaths('/v1/heartbeats')).toEqual(['/v1/heartbeats']);
  });
});

describe('comparisons', () => {
  it('compares texts and digests', () => {
    expect(sameText('abc', 'abc')).toBe(true);
    expect(sameText('abc', 'abd')).toBe(false);
    expect(sameText('abc', 'abcd')).toBe(false);
    expect(matchesDigest('passphrase', sha256('passphrase'))).toBe(true);
    expect(matchesDigest('passphrasf', sha256('passphrase'))).toBe(false);
  });
});
