import type { Services } from '../../domain/services.js';
import { headerOf, type AuthScheme } from './authenticate.js';

/**
 * An order-book API key's HMAC (the POLY_* headers): key, passphrase, address and timestamp are checked
 * here, the signature once the body it covers has arrived.
 */
export function hmac(apiKeys: Services['apiKeys']): AuthScheme {
  return {
    sent: (headers) => headerOf(headers, 'poly_api_key') !== undefined,
    async callerOf({ headers, method, path, querystring }) {
      const pending = await apiKeys.checkHmac(
        {
          key: headerOf(headers, 'poly_api_key')!,
          passphrase: headerOf(headers, 'poly_passphrase') ?? '',
          address: headerOf(headers, 'poly_address') ?? '',
          timestamp: headerOf(headers, 'poly_timestamp') ?? '',
          signature: headerOf(headers, 'poly_signature') ?? '',
        },
        method,
        path,
        querystring,
      );
      return 'refused' in pending ? { refused: pending.refused } : { account: pending.principal.account, key: pending.principal, signature: (body) => pending.verify(body) };
    },
  };
}
