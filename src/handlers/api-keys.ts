import type { ApiKeySummary, NewApiKey } from '../domain/api-keys/service.js';
import { invalid } from '../domain/errors.js';
import type { Handler } from './types.js';
import { callerId } from './trading.js';

/** API keys of the caller's account: the dispatcher lets only a session token reach these (never a key). */

const presentKey = (key: ApiKeySummary) => ({
  id: key.id,
  name: key.name,
  kind: key.kind,
  scopes: key.scopes,
  address: key.address,
  created_at: key.createdAt.toISOString(),
  last_used_at: key.lastUsedAt?.toISOString() ?? null,
});

export const listApiKeys: Handler<'listApiKeys'> = async ({ account }, { services }) => ({
  status: 200,
  body: { api_keys: (await services.apiKeys.list(callerId(account))).map(presentKey) },
});

export const createApiKey: Handler<'createApiKey'> = async ({ body, account }, { services }) => {
  const input: NewApiKey =
    body.kind === 'rsa'
      ? { name: body.name, kind: 'rsa', scopes: body.scopes, ...(body.public_key !== undefined && { publicKey: body.public_key }) }
      : { name: body.name, kind: 'hmac', scopes: body.scopes, address: requireAddress(body.address) };
  if (body.kind === 'hmac' && body.public_key !== undefined) throw invalid('public_key is for rsa keys only', [{ location: 'body', path: 'public_key', message: 'rsa keys only' }]);
  if (body.kind === 'rsa' && body.address !== undefined) throw invalid('address is for hmac keys only', [{ location: 'body', path: 'address', message: 'hmac keys only' }]);
  const created = await services.apiKeys.create(callerId(account), input);
  return {
    status: 201,
    body: {
      api_key: presentKey(created.key),
      ...(created.privateKey !== undefined && { private_key: created.privateKey }),
      ...(created.credentials && { credentials: created.credentials }),
    },
  };
};

export const deleteApiKey: Handler<'deleteApiKey'> = async ({ params, account }, { services }) => {
  await services.apiKeys.revoke(callerId(account), params.id);
  return { status: 200, body: { id: params.id, revoked: true } };
};

function requireAddress(address: string | undefined): string {
  if (address === undefined) throw invalid('address is required for hmac keys (the address the client signer returns)', [{ location: 'body', path: 'address', message: 'required for hmac keys' }]);
  return address;
}
