import type { HandlerRegistry } from '../http/types.js';
import * as admin from './admin.js';
import * as apiKeys from './api-keys.js';
import * as auth from './auth.js';
import * as catalogueAdmin from './catalogue-admin.js';
import * as system from './system.js';
import * as catalogue from './catalogue.js';
import * as compatEvents from './compat-events.js';
import * as compatCatalogue from './compat-catalogue.js';
import * as portfolio from './portfolio.js';
import * as trading from './trading.js';
import * as sessions from './sessions.js';

/** Every operation implementation, by the name the document's operationId or `x-handler` gives it. */
export const handlers: HandlerRegistry = {
  getHealth: system.getHealth,
  getLiveness: system.getLiveness,
  getReadiness: system.getReadiness,
  getOpenApiDocument: system.getOpenApiDocument,
  getAsyncApiDocument: system.getAsyncApiDocument,
  getApiDocs: system.getApiDocs,
  registerAccount: auth.registerAccount,
  loginAccount: auth.loginAccount,
  loginWithOidc: auth.loginWithOidc,
  getCurrentAccount: auth.getCurrentAccount,
  logoutAccount: auth.logoutAccount,
  listApiKeys: apiKeys.listApiKeys,
  createApiKey: apiKeys.createApiKey,
  deleteApiKey: apiKeys.deleteApiKey,
  listAdminAccounts: admin.listAdminAccounts,
  createAdminTag: catalogueAdmin.createAdminTag,
  createAdminSeries: catalogueAdmin.createAdminSeries,
  createAdminEvent: catalogueAdmin.createAdminEvent,
  createAdminMarket: catalogueAdmin.createAdminMarket,
  closeAdminMarket: catalogueAdmin.closeAdminMarket,
  resolveAdminMarket: catalogueAdmin.resolveAdminMarket,
  // --- native catalogue ---
  listEvents: catalogue.listEvents,
  getEvent: catalogue.getEvent,
  listSeries: catalogue.listSeries,
  getSeries: catalogue.getSeries,
  getTag: catalogue.getTag,
  listMarkets: catalogue.listMarkets,
  getMarket: catalogue.getMarket,
  searchCatalogue: catalogue.searchCatalogue,
  // --- compatibility events ---
  listCompatEvents: compatEvents.listCompatEvents,
  listCompatEventsKeyset: compatEvents.listCompatEventsKeyset,
  listCompatEventsPaginated: compatEvents.listCompatEventsPaginated,
  listCompatEventResults: compatEvents.listCompatEventResults,
  getCompatEvent: compatEvents.getCompatEvent,
  getCompatEventBySlug: compatEvents.getCompatEventBySlug,
  listCompatEventTags: compatEvents.listCompatEventTags,
  getCompatEventTweetCount: compatEvents.getCompatEventTweetCount,
  countCompatEventComments: compatEvents.countCompatEventComments,
  listEventCreators: compatEvents.listEventCreators,
  getEventCreator: compatEvents.getEventCreator,
  // --- compatibility series, tags and search ---
  listCompatSeries: compatCatalogue.listCompatSeries,
  getCompatSeries: compatCatalogue.getCompatSeries,
  countCompatSeriesComments: compatCatalogue.countCompatSeriesComments,
  getCompatSeriesSummary: compatCatalogue.getCompatSeriesSummary,
  getCompatSeriesSummaryBySlug: compatCatalogue.getCompatSeriesSummaryBySlug,
  getCompatTag: compatCatalogue.getCompatTag,
  getCompatTagBySlug: compatCatalogue.getCompatTagBySlug,
  searchPublic: compatCatalogue.searchPublic,
  // --- trading: orders, portfolio, market data ---
  placeOrder: trading.placeOrder,
  placeOrderBatch: trading.placeOrderBatch,
  previewOrder: trading.previewOrder,
  listOrders: trading.listOrders,
  getOrder: trading.getOrder,
  cancelOrder: trading.cancelOrder,
  cancelAllOrders: trading.cancelAllOrders,
  decreaseOrder: trading.decreaseOrder,
  cancelOrderBatch: trading.cancelOrderBatch,
  cancelClobOrder: trading.cancelClobOrder,
  getBalance: portfolio.getBalance,
  listPositions: portfolio.listPositions,
  listFills: portfolio.listFills,
  listSettlements: portfolio.listSettlements,
  listTrades: trading.listTrades,
  getMarketOrderbook: trading.getMarketOrderbook,
  getMarketCandlesticks: trading.getMarketCandlesticks,
  getMarketsCandlesticks: trading.getMarketsCandlesticks,
  // --- order sessions: heartbeat and order scoring ---
  sendHeartbeat: sessions.sendHeartbeat,
  sendClobHeartbeat: sessions.sendClobHeartbeat,
  getOrderScoringStatus: sessions.getOrderScoringStatus,
  checkOrderScoring: sessions.checkOrderScoring,
  checkOrderScoringLegacy: sessions.checkOrderScoringLegacy,
  checkOrdersScoring: sessions.checkOrdersScoring,
  checkOrdersScoringList: sessions.checkOrdersScoringList,
};
