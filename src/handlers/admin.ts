import type { Handler } from './types.js';

export const listAdminAccounts: Handler<'listAdminAccounts'> = async ({ query }, { services }) => {
  const page = await services.accounts.listAccounts({ limit: query.limit ?? 20, cursor: query.cursor || undefined, role: query.role });
  return {
    status: 200,
    body: {
      cursor: page.cursor,
      accounts: page.accounts.map((a) => ({
        id: a.id,
        email: a.email,
        name: a.name,
        username: a.username,
        role: a.role,
        balance: a.balance,
        reserved: a.reserved,
        created_at: a.createdAt.toISOString(),
      })),
    },
  };
};
