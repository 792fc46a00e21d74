import type { HandlerRegistry } from '../http/types.js';
import * as admin from './admin.js';
import * as auth from './auth.js';
import * as system from './system.js';

/** Every operation implementation, by the name the document's operationId or `x-handler` gives it. */
export const handlers: HandlerRegistry = {
  getHealth: system.getHealth,
  getOpenApiDocument: system.getOpenApiDocument,
  getApiDocs: system.getApiDocs,
  registerAccount: auth.registerAccount,
  loginAccount: auth.loginAccount,
  getCurrentAccount: auth.getCurrentAccount,
  logoutAccount: auth.logoutAccount,
  listAdminAccounts: admin.listAdminAccounts,
};
