import type { HandlerRegistry } from '../http/types.js';
import * as admin from './admin.js';
import * as auth from './auth.js';
import * as catalogueAdmin from './catalogue-admin.js';
import * as system from './system.js';
// --- catalogue imports ---

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
  createAdminTag: catalogueAdmin.createAdminTag,
  createAdminSeries: catalogueAdmin.createAdminSeries,
  createAdminEvent: catalogueAdmin.createAdminEvent,
  createAdminMarket: catalogueAdmin.createAdminMarket,
  closeAdminMarket: catalogueAdmin.closeAdminMarket,
  resolveAdminMarket: catalogueAdmin.resolveAdminMarket,
  // --- native catalogue ---
  // --- compatibility events ---
  // --- compatibility series, tags and search ---
};
