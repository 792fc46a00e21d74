import { constants, createHash, createHmac, timingSafeEqual, verify, type KeyObject } from 'node:crypto';

/**
 * The two request-signing schemes bots use (README, "API keys"), as pure functions. Each signature has one
 * accepted spelling, so that a replay cannot pass for a new signature.
 *
 * - RSA (Kalshi's convention): `KALSHI-ACCESS-SIGNATURE` = standard base64, padded, of RSA-PSS with SHA-256
 *   (MGF1 SHA-256) over `<KALSHI-ACCESS-TIMESTAMP, ms><METHOD><path>`, the path as sent without its query
 *   string. Neither the body nor the query is signed.
 * - HMAC (Polymarket's order-book L2 convention): `POLY_SIGNATURE` = URL-safe base64 (`+` -> `-`,
 *   `/` -> `_`, padding kept) of HMAC-SHA256, keyed with the base64-decoded secret, over
 *   `<POLY_TIMESTAMP, s><METHOD><requestPath><body>`, the body exactly as sent (nothing when there is none).
 */

/** `timestamp + METHOD + path`: what an RSA key signs. */
export function rsaSigningString(timestamp: string, method: string, path: string): string {
  return `${timestamp}${method}${path}`;
}

/**
 * The bytes of an RSA signature for a key of `modulusBytes` bytes, sent as base64 in its one canonical
 * spelling: the standard alphabet, its padding, exactly as many bytes as the modulus, no unused bits set.
 * Undefined for any other text, so that one signature cannot be respelled into another that is accepted.
 */
export function rsaSignatureBytes(text: string, modulusBytes: number): Buffer | undefined {
  if (text.length !== 4 * Math.ceil(modulusBytes / 3)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === modulusBytes && bytes.toString('base64') === text ? bytes : undefined;
}

/**
 * Whether `signature` is an RSA-PSS SHA-256 signature of `message` by `publicKey`; any salt length is
 * accepted. Verified on libuv's thread pool (tens of µs of CPU per 2048-bit key), off the event loop.
 */
export function verifyRsaSignature(publicKey: KeyObject, message: string, signature: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      verify('sha256', Buffer.from(message, 'utf8'), { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO }, signature, (error, valid) => resolve(!error && valid));
    } catch {
      resolve(false);
    }
  });
}

/**
 * What the replay guard remembers of an accepted signature: the digest of its bytes together with what it
 * was accepted for (scheme, key, timestamp, method, signed path, and any further part such as a query), so
 * that it is refused the second time whatever its spelling.
 */
export function replayDigest(signature: Buffer, parts: readonly string[]): Buffer {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part.length}:${part}`, 'utf8');
  return hash.update(signature).digest();
}

/** The order-book client's signature (URL-safe base64 with its padding) of `message` under `secret` (the decoded bytes). */
export function hmacSignature(secret: Buffer, message: string): string {
  return createHmac('sha256', secret).update(message, 'utf8').digest('base64').replaceAll('+', '-').replaceAll('/', '_');
}

/** `timestamp + METHOD + requestPath + body`: what an order-book client signs. */
export function hmacSigningString(timestamp: string, method: string, requestPath: string, body: string): string {
  return `${timestamp}${method}${requestPath}${body}`;
}

/** Compares two strings in time that depends only on their lengths. */
export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  // Equal lengths for timingSafeEqual; a length mismatch still compares (against itself) and fails.
  return timingSafeEqual(left.length === right.length ? left : right, right) && left.length === right.length;
}

/** Compares a text with the SHA-256 digest stored for it, in constant time. */
export function matchesDigest(text: string, digest: Buffer): boolean {
  const actual = sha256(text);
  return actual.length === digest.length && timingSafeEqual(actual, digest);
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * The request paths an order-book client may have signed: it signs the path relative to the base URL it
 * was given, so a request to `/api/clob/v1/heartbeats` was signed as `/v1/heartbeats` by a client given
 * `http://host/api/clob`, and a request to `/api/heartbeats` as `/heartbeats` by one given `http://host/api`.
 * The full path is always one of them.
 */
export function hmacRequestPaths(path: string): string[] {
  if (path.startsWith('/api/clob/')) return [path.slice('/api/clob'.length), path];
  if (path.startsWith('/api/')) return [path.slice('/api'.length), path];
  return [path];
}
