import { constants, createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacRequestPaths, hmacSignature, hmacSigningString, matchesDigest, rsaSigningString, sameText, sha256, verifyRsaSignature } from './signatures.js';

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

describe('RSA signatures (KALSHI-ACCESS-*)', () => {
  const message = rsaSigningString('1767225600000', 'GET', '/api/portfolio/balance');

  it('signs timestamp + METHOD + path', () => {
    expect(message).toBe('1767225600000GET/api/portfolio/balance');
  });

  it('accepts RSA-PSS SHA-256 with the digest-length salt, or the longest one, in base64 or URL-safe base64', async () => {
    for (const saltLength of [constants.RSA_PSS_SALTLEN_DIGEST, constants.RSA_PSS_SALTLEN_MAX_SIGN]) {
      const signature = sign('sha256', Buffer.from(message), { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength });
      expect(await verifyRsaSignature(publicKey, message, signature.toString('base64'))).toBe(true);
      expect(await verifyRsaSignature(publicKey, message, signature.toString('base64url'))).toBe(true);
    }
  });

  it('refuses PKCS#1 v1.5, another message, another key and garbage', async () => {
    const pss = sign('sha256', Buffer.from(message), { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }).toString('base64');
    expect(await verifyRsaSignature(publicKey, `${message}x`, pss)).toBe(false);
    expect(await verifyRsaSignature(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey, message, pss)).toBe(false);
    expect(await verifyRsaSignature(publicKey, message, sign('sha256', Buffer.from(message), privateKey).toString('base64'))).toBe(false);
    for (const garbage of ['', '%%%', 'a'.repeat(5000), 'AAAA']) expect(await verifyRsaSignature(publicKey, message, garbage)).toBe(false);
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
