import type { Account } from '../domain/accounts/service.js';
import type { components } from '../generated/api-types.js';
import type { Handler } from './types.js';

/** The account as the API shows it to its owner. */
export const presentUser = (account: Account): components['schemas']['User'] => ({
  id: account.id,
  email: account.email,
  name: account.name,
  username: account.username,
  role: account.role,
});

export const registerAccount: Handler<'registerAccount'> = async ({ body, clientAddress }, { services }) => {
  const { token, account } = await services.accounts.register(body, clientAddress);
  return { status: 201, body: { token, user: presentUser(account) } };
};

export const loginAccount: Handler<'loginAccount'> = async ({ body, clientAddress }, { services }) => {
  const { token, account } = await services.accounts.login(body.email, body.password, clientAddress);
  return { status: 200, body: { token, user: presentUser(account) } };
};

export const getCurrentAccount: Handler<'getCurrentAccount'> = ({ account }) => Promise.resolve({ status: 200, body: { user: presentUser(account!) } });

export const logoutAccount: Handler<'logoutAccount'> = async ({ token }, { services }) => {
  await services.accounts.logout(token!);
  return { status: 200, body: { status: 'logged_out' } };
};

/** Same answer as loginAccount, for a proof of sign-in at the configured OpenID Connect provider. */
export const loginWithOidc: Handler<'loginWithOidc'> = async ({ body, clientAddress }, { services }) => {
  const { token, account } = await services.accounts.signInWithProvider(body, clientAddress);
  return { status: 200, body: { token, user: presentUser(account) } };
};
