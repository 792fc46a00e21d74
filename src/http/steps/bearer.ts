import type { Services } from '../../domain/services.js';
import type { AuthScheme } from './authenticate.js';

function bearerToken(header: unknown): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+([A-Za-z0-9._~+/=-]{1,512})\s*$/i.exec(header);
  return match?.[1];
}

/** `Authorization: Bearer <session token>`: the session's account, or none for a missing or unknown token. */
export function bearer(accounts: Services['accounts']): AuthScheme {
  return {
    sent: (headers) => headers.authorization !== undefined,
    async callerOf({ headers }) {
      const token = bearerToken(headers.authorization);
      const account = token ? await accounts.authenticate(token) : undefined;
      return account ? { account, token } : {};
    },
  };
}
