import { constants, createHmac, createPrivateKey, sign, type KeyObject } from 'node:crypto';

/**
 * Request signing as bots do it, for the tests: Kalshi's RSA-PSS signer (as `kalshi-typescript` signs:
 * timestamp in ms + METHOD + path without query, RSA-PSS SHA-256 with salt length = digest length, base64)
 * and the order-book client's L2 HMAC.
 */
export function kalshiHeaders(keyId: string, privateKey: KeyObject | string, method: string, path: string, timestampMs = Date.now()): Record<string, string> {
  const timestamp = String(timestampMs);
  const message = timestamp + method + path.split('?')[0];
  const signature = sign('sha256', Buffer.from(message), { key: typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST });
  return { 'KALSHI-ACCESS-KEY': keyId, 'KALSHI-ACCESS-TIMESTAMP': timestamp, 'KALSHI-ACCESS-SIGNATURE': signature.toString('base64') };
}

export interface OrderBookCredentials {
  key: string;
  secret: string;
  passphrase: string;
}

export function polyHeaders(
  creds: OrderBookCredentials,
  address: string,
  method: string,
  requestPath: string,
  body = '',
  timestampSecs = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const signature = createHmac('sha256', Buffer.from(creds.secret, 'base64'))
    .update(`${timestampSecs}${method}${requestPath}${body}`)
    .digest('base64')
    .replaceAll('+', '-')
    .replaceAll('/', '_');
  return { POLY_ADDRESS: address, POLY_API_KEY: creds.key, POLY_PASSPHRASE: creds.passphrase, POLY_TIMESTAMP: String(timestampSecs), POLY_SIGNATURE: signature };
}
