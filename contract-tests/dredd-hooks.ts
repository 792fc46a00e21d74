/**
 * Dredd hooks of the contract tests. Dredd makes one transaction per documented status of every operation, all from
 * the document's examples: these hooks make each a request that really produces its status, and give Dredd the
 * documented JSON Schema of the expected body to check. The bundled document, dereferenced, says what an operation
 * needs (security, `x-required-role`, `x-rate-limit`, `x-api-key-scope`): STATUS_RULES make most statuses, TWEAKS
 * adjust the operations that need more, SKIPS say why a status cannot be produced; a non-2xx status without a rule
 * fails. The admin is the account the service was started with (ADMIN_EMAIL, ADMIN_PASSWORD). Fixture requests go
 * through the integration tests' client, which checks every answer against the document too.
 */
import crypto from 'node:crypto';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIV3 } from 'openapi-types';
import { listOperations, type OperationInfo } from '../codegen/operations.js';
import { ApiClient } from '../test/support/service.js';
import { kalshiHeaders } from '../test/support/signing.js';
import {
  closedMarket, clobFixture, createApiKey, example, exampleMarket, examples, expiredSession, fail, fillPath, freshMarket, fullAccount, heartbeatAccount,
  keepStrikeDateAhead, keyPair, missingTicker, otherAccount, placeExampleOrder, publicPem, registerAccount, request, scopedKey, scoringIds, send, signedOrder, state,
  tradingFixture, unique, UNKNOWN_TOKEN, type Json,
} from './fixtures.js';

/** The parts of Dredd's transactions and hooks object used here (dredd ships no types). */
interface Transaction {
  id: string; fullPath: string; origin: { resourceName: string; exampleName: string }; skip?: boolean; fail?: string;
  request: { method: string; uri: string; headers: Record<string, string>; body: string };
  expected: { statusCode: string | number; headers?: Record<string, string>; body?: string; bodySchema?: unknown };
}
type Hook<T> = (data: T, done: () => void) => void;
type DreddHooks = { configuration: { endpoint: string; path: string[] }; beforeAll(hook: Hook<Transaction[]>): void; beforeEach(hook: Hook<Transaction>): void; log(message: string): void };
/**
 * A transaction's request as the rules shape it, written into Dredd's by applyContext: `rawBody` is sent instead of
 * `body` when set, a null `token` sends none, `sendFirst` sends the finished request once before Dredd does, and
 * `address` is the client's (X-Forwarded-For), one per transaction, so that no address budget runs out by accident.
 */
interface Ctx {
  op: OperationInfo; status: string; parameters: OpenAPIV3.ParameterObject[]; requestSchema?: OpenAPIV3.SchemaObject; requiresAuth: boolean;
  body?: Json; rawBody?: string; pathParams: Record<string, string>; query: URLSearchParams; token: string | null; headers: Record<string, string>; address: string; sendFirst?: boolean;
}
/** Shapes a transaction's request; what it returns is awaited and ignored. */
type Rule = (ctx: Ctx) => unknown;
/** Request budgets of the service under test (RATE_LIMIT_*=this/10 s, TRUST_PROXY naming 127.0.0.1, where Dredd connects from). */
export const CONTRACT_BUDGET = 400;
const BODY_LIMIT_BYTES = 512 * 1024; // the service's body limit (src/app.ts, the 413 responses)
const NO_OIDC = 'needs an OpenID Connect provider: the contract run starts the service without OIDC_ISSUER, so that it contacts none (this operation answers 404 there); test/integration/oidc.test.ts produces it against an in-process provider';
/** Statuses that cannot be produced against a healthy service, by "<operationId or x-handler> <status>"; 408 of every operation. */
const SKIPS: Record<string, string> = {
  'getHealth 503': 'needs the database to be unreachable while the service keeps answering; stopping the shared embedded PostgreSQL mid-run would break every later transaction',
  ...Object.fromEntries([200, 401, 409, 422, 503].map((status) => [`loginWithOidc ${status}`, NO_OIDC])),
  'createApiKey 503': 'needs DATABASE_URL without API_KEY_ENCRYPTION_KEY, while the contract run uses the embedded database and its generated key; test/integration/api-keys.test.ts produces it',
  'getReadiness 503': 'needs a process that is starting, draining after SIGTERM or without its database, while the contract run needs the service up; test/integration/health.test.ts produces all three',
};
/** Statuses no Dredd request can produce on any operation. */
const STATUS_SKIPS: Record<string, string> = {
  408: 'needs a request body sent slower than the body timeout (30 s here), which Dredd cannot do; test/integration/abuse-http.test.ts sends one with a 1 s timeout',
  503: 'needs the database out of reach while the service keeps answering; stopping the shared PostgreSQL mid-run would break every later transaction; test/integration/database-outage.test.ts produces it',
};
type Named = Pick<OperationInfo, 'operationId' | 'handler'>;
/** A table's entry for the operation: by operationId, else by `x-handler` (the aliases of an implementation share it). */
const entryFor = <T>(table: Record<string, T>, op: Named, suffix = ''): T | undefined =>
  table[[op.operationId, op.handler].map((name) => `${name}${suffix}`).find((name) => Object.hasOwn(table, name)) ?? ''];
/** Why a documented status of an operation is skipped, if it is. */
export const skipReason = (op: Named, status: string): string | undefined => entryFor(SKIPS, op, ` ${status}`) ?? STATUS_SKIPS[status];
// A dedicated account's heartbeats (a session of the contract USER would expire and cancel its orders); 409: an expired session.
const heartbeat: Record<string, Rule> = { request: async (c) => Object.assign(c, { token: (await heartbeatAccount()).token, body: { heartbeat_id: null } }), 409: async (c) => Object.assign(c, await expiredSession()) };
const ownOrder: Rule = async (c) => (c.pathParams.order_id = (await placeExampleOrder()).order_id);
const othersOrder: Rule = async (c) => (c.pathParams.order_id = (await placeExampleOrder(await otherAccount())).order_id);
const fixtureTicker = (which: 'traded' | 'settled'): Rule => async (c) => c.query.set('ticker', (await tradingFixture())[which]);
const freshMarketParam: Rule = async (c) => (c.pathParams.ticker = await freshMarket());
const assignBody = (c: Ctx, values: Json) => Object.assign(c.body ?? {}, values);
const freshSlug = (c: Ctx) => (c.body?.slug ? { slug: unique.slug(c.body.slug) } : {});
// The order-book client's market data: by one outcome token (query) or a list of them (body); 404: a token no market has.
const clobToken: Rule = async (c) => c.query.set('token_id', (await clobFixture()).yesTokenId);
const clobTokens: Rule = async (c) => (c.rawBody = JSON.stringify(await clobFixture().then((m) => [{ token_id: m.yesTokenId, side: 'BUY' }, { token_id: m.noTokenId, side: 'SELL' }])));
const clobMarketData: Record<string, Rule> = { request: clobToken, 404: (c) => c.query.set('token_id', UNKNOWN_TOKEN) };
const clobMarketDataList: Record<string, Rule> = { request: clobTokens, 404: (c) => (c.rawBody = JSON.stringify([{ token_id: UNKNOWN_TOKEN, side: 'BUY' }])) };
const recentCandles = (c: Ctx) => {
  const now = Math.floor(Date.now() / 1000);
  c.query.set('start_ts', String(now - 86_400));
  c.query.set('end_ts', String(now + 3_600));
  return c;
};
const uuids = (n: number) => Array.from({ length: n }, () => crypto.randomUUID());

/** Per-operation tweaks: `request` runs for every status, before the status's rule; a status key replaces that rule. */
const TWEAKS: Record<string, Record<string, Rule>> = {
  // A fresh email makes 201 possible, and 409 a real repeat of a successful registration.
  registerAccount: { request: (c) => assignBody(c, { email: unique.email(), ...(c.body && 'username' in c.body ? { username: unique.username() } : {}) }) },
  // The example's account may not exist: the contract USER signs in; the operation is public, so 401 is a wrong password.
  loginAccount: { request: (c) => assignBody(c, { email: state.user.email, password: state.user.password }), 401: (c) => assignBody(c, { password: `wrong-${state.user.password}` }) },
  loginWithOidc: { 404: () => undefined }, // without OIDC_ISSUER the example itself gets the documented 404
  // A well-formed token never issued, so that the token lookup is exercised (elsewhere 401 sends no token).
  getCurrentAccount: { 401: (c) => (c.token = `dots_${crypto.randomBytes(32).toString('base64url')}`) },
  // An RSA key, as bots send it (Dredd's body has every property, the hmac-only `address` among them); 409: 20 keys already.
  createApiKey: { request: (c) => (c.body = { name: 'contract bot', kind: 'rsa', scopes: ['read', 'trade'], public_key: publicPem() }), 409: async (c) => (c.token = (await fullAccount()).token) },
  deleteApiKey: { request: async (c) => (c.pathParams.id = (await createApiKey(state.user, ['read'])).id) },
  logoutAccount: { 200: async (c) => (c.token = (await registerAccount()).token) }, // it revokes the token it is sent with
  // Fresh identifiers make 201 possible (beforeAll created the examples' own records) and 409 a real duplicate.
  createAdminTag: { request: (c) => assignBody(c, { slug: unique.slug(c.body?.slug) }) },
  createAdminSeries: { request: (c) => assignBody(c, { ticker: unique.ticker(c.body?.ticker), ...freshSlug(c) }) },
  createAdminEvent: { request: (c) => keepStrikeDateAhead(assignBody(c, { event_ticker: unique.ticker(c.body?.event_ticker), ...freshSlug(c) })) },
  createAdminMarket: { request: (c) => assignBody(c, { ticker: unique.ticker(c.body?.ticker) }) },
  // Closing or resolving changes a market for good: a fresh one each, so that the example market stays ACTIVE.
  closeAdminMarket: { request: freshMarketParam },
  resolveAdminMarket: { request: freshMarketParam },
  getEventCreator: { request: (c) => (c.pathParams.id = state.admin.id ?? '') }, // the admin created the example event
  listCompatEventsKeyset: { 422: (c) => c.query.set('offset', '20') }, // the keyset list refuses offset pagination
  // Trading: the contract USER's resting buys of YES at 0.45 on the example market, which never cross one another.
  placeOrder: { request: (c) => assignBody(c, { client_order_id: unique.slug('order') }), 404: (c) => assignBody(c, { ticker: missingTicker() }) },
  // 409: a market no longer ACTIVE (a preview changes nothing, so a repeat would not conflict).
  previewOrder: { 404: (c) => assignBody(c, { ticker: missingTicker() }), 409: async (c) => assignBody(c, { ticker: await closedMarket() }) },
  // The examples filter on the example market's ticker and id and the live statuses: one live order there. 400: each
  // value of the set is checked.
  listOrders: { request: async (c) => c.query.set('market', await placeExampleOrder().then(exampleMarket).then((m) => m.id)), 400: (c) => c.query.set('status', 'OPEN,NOT_A_STATUS') },
  getOrder: { request: ownOrder, 404: othersOrder }, // another account's order: 404, as an unknown id
  cancelOrder: { request: ownOrder, 404: othersOrder }, // 409 (STATUS_RULES): cancelled once before Dredd cancels it
  // The example order has count 10 and the example asks for a remainder of 5; 400: not smaller; 409: no longer live.
  decreaseOrder: { request: ownOrder, 400: (c) => (c.body = { count: '10' }), 404: othersOrder, 409: (c) => send('cancelOrder', { token: state.user.token, params: c.pathParams }, 200) },
  // The examples name the example market both ways: named once, the caller's orders there are cancelled; 400: both.
  cancelAllOrders: { request: async (c) => placeExampleOrder().then(() => c.query.delete('ticker')), 400: (c) => c.query.set('ticker', String(example('createAdminMarket').ticker)), 404: (c) => c.query.set('market', missingTicker()) },
  // Two resting buys of the placeOrder example with fresh client_order_ids; 400: none (1 to 20 are allowed).
  placeOrderBatch: { request: (c) => (c.body = { orders: [0, 1].map(() => ({ ...example('placeOrder'), client_order_id: unique.slug('batch') })) }), 400: (c) => (c.body = { orders: [] }) },
  // Also its aliases: a live order of the caller, one of another account and an unknown id (both item shapes); 400: over 1,000.
  cancelOrderBatch: { request: async (c) => (c.body = { order_ids: [(await placeExampleOrder()).order_id, (await placeExampleOrder(await otherAccount())).order_id, crypto.randomUUID()] }), 400: (c) => (c.body = { order_ids: uuids(1001) }) },
  // The fixture's records; the order book has resting bids on both outcomes.
  listPositions: { request: fixtureTicker('traded') },
  listFills: { request: fixtureTicker('traded') },
  listTrades: { request: fixtureTicker('traded') },
  listSettlements: { request: fixtureTicker('settled') },
  getMarketOrderbook: { request: async (c) => (c.pathParams.ticker = (await tradingFixture()).traded) },
  sendHeartbeat: heartbeat,
  sendClobHeartbeat: heartbeat, // and its aliases
  getOrderScoringStatus: { request: async (c) => (c.token = (await heartbeatAccount()).token) }, // its latest session fills `heartbeat`
  // The contract USER's orders on a rewarded market (one scoring, one not) and an unknown id; 400: over 1,000 ids.
  checkOrderScoring: { request: async (c) => (c.query = new URLSearchParams({ order_id: String((await scoringIds())[0]) })) }, // its only query parameter, in one of three spellings
  checkOrderScoringLegacy: { request: async (c) => (c.body = { order_ids: await scoringIds() }) },
  checkOrdersScoring: { request: async (c) => c.query.set('order_ids', (await scoringIds()).join(',')), 400: (c) => c.query.set('order_ids', uuids(1001).join(',')) },
  checkOrdersScoringList: { request: async (c) => (c.rawBody = JSON.stringify(await scoringIds())) },
  ...Object.fromEntries(['Book', 'Midpoint', 'Price', 'Spread', 'LastTradePrice', 'TickSize', 'NegRisk', 'FeeRate'].map((name) => [`getClob${name}`, clobMarketData])),
  ...Object.fromEntries(['Books', 'Midpoints', 'Prices', 'Spreads', 'LastTradesPrices'].map((name) => [`getClob${name}`, clobMarketDataList])),
  // The examples name both an interval and a time range, which is refused: the interval alone.
  getClobPricesHistory: {
    request: async (c) => {
      for (const name of ['startTs', 'endTs']) c.query.delete(name);
      c.query.set('market', (await clobFixture()).yesTokenId);
    },
    404: (c) => c.query.set('market', UNKNOWN_TOKEN),
  },
  getClobMarket: { request: async (c) => (c.pathParams.condition_id = (await clobFixture()).conditionId) },
  getClobOrder: { request: async (c) => (c.pathParams.id = (await placeExampleOrder()).order_id) },
  // The example market's orders of the contract USER; 404: a token no market has.
  cancelClobMarketOrders: { request: async (c) => (c.body = { market: await placeExampleOrder().then(exampleMarket).then((m) => m.conditionId) }), 404: (c) => (c.body = { asset_id: UNKNOWN_TOKEN }) },
  // Orders signed by the wallet of the contract USER's order-book key; 409 (STATUS_RULES): the same signed order twice.
  placeClobOrder: { request: async (c) => (c.body = await signedOrder()), 404: async (c) => (c.body = await signedOrder(UNKNOWN_TOKEN)) },
  placeClobOrders: { request: async (c) => (c.rawBody = JSON.stringify([await signedOrder(), await signedOrder()])) },
  // The order-book fixture's market, which traded, in the hour in progress and the day before it; 404: a ticker unknown.
  getMarketCandlesticks: { request: async (c) => Object.assign(recentCandles(c).pathParams, { series_ticker: String(example('createAdminEvent').series_ticker), ticker: (await clobFixture()).ticker }) },
  getMarketsCandlesticks: { request: async (c) => recentCandles(c).query.set('market_tickers', (await clobFixture()).ticker), 404: (c) => c.query.set('market_tickers', missingTicker()) },
};

/** How to make a documented status happen for any operation. */
const STATUS_RULES: Record<string, Rule> = {
  400: (c) => invalidInput(c),
  401: (c) => needs(c.requiresAuth, c, 'the operation is public') && (c.token = null),
  // A token lacking the `x-required-role`; with an `x-api-key-scope`, a request signed with a key of the USER lacking it.
  403: async (c) => {
    if (!c.op.apiKeyScope) return needs(c.op.requiredRole && c.op.requiredRole !== 'USER', c, 'no x-required-role above USER') && (c.token = state.user.token);
    const key = await scopedKey(c.op.apiKeyScope === 'read' ? 'trade' : 'read');
    c.token = null;
    Object.assign(c.headers, kalshiHeaders(key.id, keyPair().privateKey, c.op.method.toUpperCase(), fillPath(c.op.path, c.pathParams)));
  },
  // Path parameters naming nothing.
  404: (c) => needs(Object.keys(c.pathParams).length > 0, c, 'no path parameter') && Object.keys(c.pathParams).forEach((name) => (c.pathParams[name] = missingValue(c.parameters.find((p) => p.in === 'path' && p.name === name)))),
  409: (c) => (c.sendFirst = true), // the same successful request twice
  413: (c) => needs(c.requestSchema, c, 'no JSON body') && (c.rawBody = JSON.stringify({ padding: 'x'.repeat(BODY_LIMIT_BYTES + 1024) })), // just over the limit
  415: (c) => needs(c.requestSchema, c, 'no JSON body') && Object.assign(c, { rawBody: 'not json', headers: { ...c.headers, 'Content-Type': 'text/plain' } }),
  429: (c) => exhaustBudget(c),
  431: (c) => (c.headers['X-Padding'] = 'x'.repeat(70 * 1024)), // a header block over 64 KiB
  304: (c) => (c.headers['If-None-Match'] = '*'), // any current representation (RFC 9110): unchanged
};
/** A generic rule's precondition: it holds, or the operation needs a tweak for the status. */
const needs = (condition: unknown, c: Ctx, what: string): true => Boolean(condition) || fail(`${what}: add a ${c.status} tweak to TWEAKS for ${c.op.operationId}`);

/** A value for a parameter that names nothing, within its schema's type. */
function missingValue(parameter?: OpenAPIV3.ParameterObject): string {
  const schema = (parameter?.schema ?? {}) as OpenAPIV3.SchemaObject;
  if (schema.type === 'integer' || schema.type === 'number') return String(2_000_000_000 + unique.number());
  return schema.format === 'uuid' ? crypto.randomUUID() : missingTicker();
}
/** A value that breaks the parameter's schema, if one is obvious. */
function invalidValue(parameter: OpenAPIV3.ParameterObject): string | undefined {
  const { type, enum: values, maxLength, minLength } = (parameter.schema ?? {}) as OpenAPIV3.SchemaObject;
  if (type === 'integer' || type === 'number') return 'not-a-number';
  if (type === 'boolean') return 'not-a-boolean';
  if (Array.isArray(values)) return 'NOT_ONE_OF_THE_ALLOWED_VALUES';
  if (maxLength !== undefined) return 'x'.repeat(maxLength + 1);
  return minLength !== undefined && minLength > 1 ? 'x' : undefined;
}
/** 400: a body that breaks its schema (a required property missing, an unknown one, a wrong type), else a parameter. */
function invalidInput(c: Ctx): void {
  const schema = c.requestSchema;
  const body = c.body && typeof c.body === 'object' ? c.body : {};
  if (schema?.required?.length && !Array.isArray(body)) c.body = Object.fromEntries(Object.entries(body).filter(([name]) => name !== schema.required?.[0]));
  else if (schema?.additionalProperties === false && !Array.isArray(body)) c.body = { ...body, contract_unexpected_property: true };
  else if (schema) c.rawBody = schema.type === 'array' ? JSON.stringify({ not: 'an array' }) : '{"malformed JSON'; // malformed JSON is documented as 400 too
  if (schema) return;
  // Else the first query or path parameter with an obviously invalid value, or text the database cannot store in the first path or query one.
  const invalid = ['query', 'path'].flatMap((at) => c.parameters.filter((p) => p.in === at)).find((p) => invalidValue(p) !== undefined);
  const parameter = invalid ?? c.parameters.find((p) => p.in === 'path') ?? c.parameters.find((p) => p.in === 'query') ?? fail(`no body or parameter to make invalid: add a 400 tweak to TWEAKS for ${c.op.operationId}`);
  const value = invalid ? String(invalidValue(invalid)) : 'x\u0000';
  if (parameter.in === 'path') c.pathParams[parameter.name] = value;
  else c.query.set(parameter.name, value);
}

/** Cheap requests of each budget's class that change nothing (writes with a body the validators refuse), with their bodies. */
const PROBES: Record<string, [operationId: string, body?: string]> = { 'public-reads': ['getHealth'], 'private-reads': ['getCurrentAccount'], 'order-writes': ['placeOrder', '{}'], login: ['loginAccount', '{}'], registration: ['registerAccount', '{}'] };
/** 429: the request's client (a fresh account with a token, else the transaction's own address) spends its budget first. */
async function exhaustBudget(c: Ctx): Promise<void> {
  if (c.requiresAuth) c.token = (await registerAccount()).token;
  const [operationId = '', rawBody] = PROBES[c.op.rateLimit ?? ''] ?? [];
  const probe = state.operations.get(operationId) ?? fail(`unknown x-rate-limit '${c.op.rateLimit}'`);
  const options = { token: c.token ?? undefined, rawBody, headers: { 'x-forwarded-for': c.address } };
  // A client's window opens at its first request: should it end before the budget is spent, the next one is spent whole.
  for (let sent = 0; sent < 2 * CONTRACT_BUDGET; sent += 50) {
    const batch = await Promise.all(Array.from({ length: 50 }, () => request(probe.method.toUpperCase(), probe.path, options)));
    if (batch.some((response) => response.status === 429)) return;
  }
  fail(`the ${c.op.rateLimit} budget did not run out after ${2 * CONTRACT_BUDGET} requests`);
}
/** Formats OpenAPI defines that Ajv 6 refuses as unknown; the type still checks such a value. */
const OPENAPI_FORMATS = new Set(['int32', 'int64', 'float', 'double']);
/**
 * An OpenAPI 3.0 schema as JSON Schema, what Dredd checks bodies with (Gavel, Ajv 6): `nullable` becomes a null type,
 * and OpenAPI's own numeric formats are dropped.
 */
function jsonSchema(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object') return schema;
  const { nullable, ...rest } = schema as Json;
  if (OPENAPI_FORMATS.has(String(rest.format))) delete rest.format;
  const out: Json = {};
  for (const [keyword, value] of Object.entries(rest)) {
    if (keyword === 'properties') out[keyword] = Object.fromEntries(Object.entries(value as Json).map(([name, sub]) => [name, jsonSchema(sub)]));
    else if (['allOf', 'anyOf', 'oneOf'].includes(keyword)) out[keyword] = (value as unknown[]).map(jsonSchema);
    else out[keyword] = ['items', 'additionalProperties', 'not'].includes(keyword) ? jsonSchema(value) : value;
  }
  if (nullable !== true) return out;
  if (out.type === undefined) return { anyOf: [out, { type: 'null' }] };
  return { ...out, type: [out.type, 'null'].flat(), ...(Array.isArray(out.enum) ? { enum: [...new Set([...(out.enum as unknown[]), null])] } : {}) };
}
const isJson = (mediaType: string) => /^application\/(.+\+)?json$/i.test(mediaType);
const operationOf = (t: Transaction) => state.operations.get(`${t.request.method.toLowerCase()} ${t.origin.resourceName}`);
function contextOf(t: Transaction): Ctx {
  const op = operationOf(t) ?? fail(`no operation ${t.request.method} ${t.origin.resourceName} in the document`);
  const url = new URL(t.fullPath, 'http://placeholder');
  // The path parameters of Dredd's request, read back with the path template.
  const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? '');
  const values = new RegExp(`^${op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '([^/]*)')}$`).exec(url.pathname)?.slice(1) ?? [];
  const parameters = [...(op.pathItem.parameters ?? []), ...(op.operation.parameters ?? [])] as OpenAPIV3.ParameterObject[];
  const content = (op.operation.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content ?? {};
  const jsonType = Object.keys(content).find(isJson);
  const security = op.operation.security ?? state.doc.security ?? [];
  const requiresAuth = security.length > 0 && !security.some((requirement) => Object.keys(requirement).length === 0);
  const token = requiresAuth ? (op.requiredRole === 'ADMIN' ? state.admin.token : state.user.token) : null;
  const requestSchema = jsonType ? ((content[jsonType]?.schema ?? {}) as OpenAPIV3.SchemaObject) : undefined;
  // The operation's parameters win over the path's. Request bodies are all JSON.
  return {
    op, status: String(t.expected.statusCode), parameters: [...new Map(parameters.map((p) => [`${p.in}:${p.name}`, p])).values()], requestSchema, requiresAuth, token,
    body: t.request.body ? (JSON.parse(t.request.body) as Json) : undefined, pathParams: Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(values[i] ?? '')])), query: url.searchParams,
    headers: {}, address: unique.address(),
  };
}
function setHeader(headers: Record<string, string>, name: string, value: string | undefined): void {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name.toLowerCase()) delete headers[key];
  if (value !== undefined) headers[name] = value;
}
/** Writes the request into Dredd's transaction, and the documented JSON Schema of the expected body. */
function applyContext(c: Ctx, t: Transaction): void {
  const search = c.query.toString();
  t.fullPath = t.request.uri = `${fillPath(c.op.path, c.pathParams)}${search ? `?${search}` : ''}`;
  t.id = `${t.request.method} (${c.status}) ${t.fullPath}`; // Dredd's report titles show the request really sent
  if (c.rawBody !== undefined || c.body !== undefined) t.request.body = c.rawBody ?? JSON.stringify(c.body);
  // If-None-Match only where a rule sets it: Dredd may have put the parameter's example in every transaction.
  const headers = { Authorization: c.token ? `Bearer ${c.token}` : undefined, 'If-None-Match': undefined, 'X-Forwarded-For': c.address, ...(t.request.body ? { 'Content-Type': 'application/json' } : {}) };
  for (const [name, value] of Object.entries({ ...headers, ...c.headers })) setHeader(t.request.headers, name, value);
  const response = (c.op.operation.responses[c.status] as OpenAPIV3.ResponseObject | undefined) ?? fail(`status ${c.status} is not documented for ${c.op.operationId}`);
  // The media type Dredd expects, as its transaction names it ("... > 200 > application/json").
  const mediaType = Object.entries(t.expected.headers ?? {}).find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? t.origin.exampleName.split(' > ')[1] ?? '';
  const schema = isJson(mediaType) ? response.content?.[mediaType]?.schema : undefined;
  if (!schema) return;
  t.expected.bodySchema = { $schema: 'http://json-schema.org/draft-07/schema#', ...(jsonSchema(schema) as Json) };
  delete t.expected.body; // Gavel ignores the example body once there is a schema
}
let setupError: string | undefined;
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
/** An async hook on Dredd's callback API: a failure fails the transaction (in beforeAll, every transaction). */
const asyncHook = <T>(fn: (data: T) => Promise<unknown>): Hook<T> => (data, done) =>
  void fn(data).catch((error: unknown) => (Array.isArray(data) ? (setupError = messageOf(error)) : ((data as Transaction).fail = messageOf(error)))).finally(done);

export function installHooks(hooks: DreddHooks): void {
  hooks.beforeAll(
    asyncHook(async (transactions) => {
      state.api = new ApiClient(hooks.configuration.endpoint);
      state.doc = (await SwaggerParser.dereference(String(hooks.configuration.path[0]))) as OpenAPIV3.Document;
      for (const op of listOperations(state.doc)) state.operations.set(`${op.method} ${op.path}`, op).set(op.operationId, op);
      for (const t of transactions.filter((t) => String(t.expected.statusCode).startsWith('2') && t.request.body)) examples[operationOf(t)?.operationId ?? ''] ??= JSON.parse(t.request.body) as Json;
      state.user = await registerAccount();
      expiredSession().catch(() => undefined); // its timeout runs meanwhile; the heartbeat 409 transactions await it
      const [email, password] = [process.env.ADMIN_EMAIL, process.env.ADMIN_PASSWORD];
      if (!email || !password) fail('set ADMIN_EMAIL and ADMIN_PASSWORD to the admin account the service was started with');
      const session = await send<{ token: string; user: { id: string; role: string } }>('loginAccount', { body: { email, password } }, 200);
      if (session.user.role !== 'ADMIN') fail(`${email} has role ${session.user.role}, not ADMIN`);
      state.admin = { email, password, token: session.token, id: session.user.id };
      // The records the examples name, in this order (409: already there).
      for (const operationId of ['createAdminTag', 'createAdminSeries', 'createAdminEvent', 'createAdminMarket']) {
        await send(operationId, { token: state.admin.token, body: keepStrikeDateAhead({ ...example(operationId) }) }, 201, 409);
      }
    }),
  );
  hooks.beforeEach(
    asyncHook(async (t) => {
      if (setupError) fail(`setup failed: ${setupError}`);
      const c = contextOf(t);
      const reason = skipReason(c.op, c.status);
      if (reason) {
        t.skip = true;
        return hooks.log(`skip ${c.op.operationId} ${c.status}: ${reason}`);
      }
      const tweaks = entryFor(TWEAKS, c.op) ?? {};
      await tweaks.request?.(c);
      const rule = tweaks[c.status] ?? STATUS_RULES[c.status];
      if (rule) await rule(c);
      else if (!c.status.startsWith('2')) fail(`no rule produces ${c.status} for ${c.op.operationId}: add one to TWEAKS, or a reasoned entry to SKIPS`);
      applyContext(c, t);
      if (!c.sendFirst) return;
      const headers = { ...t.request.headers };
      setHeader(headers, 'Content-Length', undefined);
      const first = await state.api.request(t.request.method, t.fullPath, { headers, rawBody: t.request.body || undefined });
      if (first.status < 200 || first.status >= 300) fail(`the first of two identical requests should succeed, got ${first.status} ${JSON.stringify(first.body)}`);
    }),
  );
}
