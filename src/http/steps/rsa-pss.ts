import type { Services } from '../../domain/services.js';
import { headerOf, type AuthScheme } from './authenticate.js';

/** An API key's RSA-PSS signature of the timestamp, method and path (the KALSHI-ACCESS-* headers). */
export function rsaPss(apiKeys: Services['apiKeys']): AuthScheme {
  return {
    sent: (headers) => headerOf(headers, 'kalshi-access-key') !== undefined,
    async callerOf({ headers, method, path }) {
      const check = await apiKeys.checkRsa(
        { key: headerOf(headers, 'kalshi-access-key')!, timestamp: headerOf(headers, 'kalshi-access-timestamp') ?? '', signature: headerOf(headers, 'kalshi-access-signature') ?? '' },
        method,
        path,
      );
      return 'refused' in check ? { refused: check.refused } : { account: check.principal.account, key: check.principal, signature: () => check };
    },
  };
}
