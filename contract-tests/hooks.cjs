'use strict';
/**
 * Dredd hooks for the Dots Exchange contract tests (run by contract-tests/run.ts).
 *
 * This file must stay CommonJS (.cjs): the package is ESM, and Dredd silently skips hook files it cannot
 * require. Dredd builds one transaction per documented status code of every operation, all from the
 * same examples; these hooks turn each one into a request that really produces that status, and make
 * Dredd check the response body against the documented schema (by default it only checks that the keys
 * of the example exist).
 *
 * Everything is driven by the bundled document: the operation (found by path and method), its status,
 * its security requirement and its `x-required-role`. Generic rules per status code cover most
 * transactions (STATUS_RULES); the few operations that need more have an entry in TWEAKS; statuses that
 * cannot be produced are in SKIPS, with the reason. A non-2xx status without a rule fails, so that an
 * operation added later is never "covered" by accident.
 *
 * Environment: ADMIN_EMAIL and ADMIN_PASSWORD (the operator account the service was started with);
 * DOTS_CONTRACT_DOCUMENT (the bundled document; default openapi/dist/openapi.json); DOTS_CONTRACT_REPORT
 * (where to write the skips and their reasons for run.ts; optional).
 */
const hooks = require('hooks');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const DOCUMENT_PATH = process.env.DOTS_CONTRACT_DOCUMENT || path.resolve(__dirname, '../openapi/dist/openapi.json');
const REPORT_PATH = process.env.DOTS_CONTRACT_REPORT;
const document = JSON.parse(fs.readFileSync(DOCUMENT_PATH, 'utf8'));

/** The body limit of the service (src/app.ts BODY_LIMIT, and the document's 413 responses). */
const BODY_LIMIT_BYTES = 512 * 1024;

// ---------------------------------------------------------------------------------------------------
// Statuses that cannot be produced against a healthy service. run.ts accepts a skipped transaction only
// when it is listed here (key: "<operationId or x-handler> <status>") with a reason.
// ---------------------------------------------------------------------------------------------------
const SKIPS = {
  'getHealth 503':
    'needs the database to be unreachable while the service keeps answering; stopping the shared embedded PostgreSQL mid-run would break every later transaction',
  ...Object.fromEntries(
    [200, 401, 409, 422, 503].map((status) => [
      `loginWithOidc ${status}`,
      'needs an OpenID Connect provider: the contract run starts the service without OIDC_ISSUER, so that it contacts none (this operation answers 404 there); test/integration/oidc.test.ts produces it against an in-process provider',
    ]),
  ),
  'createApiKey 503':
    'needs DATABASE_URL without API_KEY_ENCRYPTION_KEY, while the contract run uses the embedded database and its generated key; test/integration/api-keys.test.ts produces it',
  'getReadiness 503':
    'needs a process that is starting, draining after SIGTERM or without its database, while the contract run needs the service up; test/integration/health.test.ts produces all three',
};
/** Statuses skipped for every operation that documents them, with the reason. */
const STATUS_SKIPS = {
  408:
    'needs a request body sent slower than the body timeout (30 s here), which Dredd cannot do; test/integration/abuse-http.test.ts sends one with a 1 s timeout',
};

/**
 * Request budgets of the service under contract test (run.ts starts it with RATE_LIMIT_*=this and
 * TRUST_PROXY on). Every request of a transaction or fixture comes from its own X-Forwarded-For address,
 * so address budgets never run out by accident; account budgets are large enough for the contract USER.
 */
const CONTRACT_BUDGET = Number(process.env.DOTS_CONTRACT_BUDGET || 400);

// ---------------------------------------------------------------------------------------------------
// Per-operation request tweaks, by operationId (or x-handler). `request` runs for every status of the operation, before
// the generic rule of the status; a status key (e.g. 401) replaces the generic rule for that status.
// Each receives the request context (see makeContext): body, path and query parameters, token.
// ---------------------------------------------------------------------------------------------------
const TWEAKS = {
  registerAccount: {
    // Dredd sends the same example body every time: a fresh email (and username) makes 201 possible, and
    // makes 409 a real repeat of a successful registration (STATUS_RULES[409]).
    request: (ctx) => {
      ctx.body.email = unique.email();
      if ('username' in ctx.body) ctx.body.username = unique.username();
    },
  },
  loginAccount: {
    // The example names an account that may not exist; sign in as the contract USER instead.
    request: (ctx) => {
      ctx.body.email = state.user.email;
      ctx.body.password = state.user.password;
    },
    // The operation is public: 401 is a wrong password for an existing email.
    401: (ctx) => {
      ctx.body.password = `wrong-${state.user.password}`;
    },
  },
  loginWithOidc: {
    // The contract run's service has no OIDC_ISSUER: the example itself gets the documented 404.
    404: () => undefined,
  },
  getCurrentAccount: {
    // A well-formed token that was never issued, so the token lookup is exercised (the generic 401 rule,
    // no Authorization header at all, covers every other operation).
    401: (ctx) => {
      ctx.token = `dots_${crypto.randomBytes(32).toString('base64url')}`;
    },
  },
  createApiKey: {
    // Dredd builds the body from every property of the schema, `address` (hmac only) among them: an RSA
    // key with a public key, as bots send it.
    request: (ctx) => {
      ctx.body = { name: 'contract bot', kind: 'rsa', scopes: ['read', 'trade'], public_key: apiKeyPair().publicPem };
    },
    // More than 20 keys: an account that already has 20.
    409: async (ctx) => {
      const account = await registerAccount();
      const { template, method } = pathOf('createApiKey');
      for (let i = 0; i < 20; i += 1) {
        expectStatus('create an API key', await call(method, template, { token: account.token, body: { name: `key ${i}`, kind: 'rsa', scopes: ['read'], public_key: apiKeyPair().publicPem } }), 201);
      }
      ctx.token = account.token;
    },
  },
  deleteApiKey: {
    // A key of the caller to revoke.
    request: async (ctx) => {
      ctx.pathParams.id = (await createApiKey(state.user, ['read'])).id;
    },
  },
  logoutAccount: {
    // Logging out revokes the token it is sent with: use a throwaway session, never the shared one.
    200: async (ctx) => {
      ctx.token = (await registerAccount()).token;
    },
  },
  // Catalogue creation: fresh identifiers make 201 possible (the examples themselves exist: beforeAll
  // created them) and make 409 a real duplicate.
  createAdminTag: {
    request: (ctx) => {
      ctx.body.slug = unique.slug(ctx.body.slug);
    },
  },
  createAdminSeries: {
    request: (ctx) => {
      ctx.body.ticker = unique.ticker(ctx.body.ticker);
      if (ctx.body.slug) ctx.body.slug = unique.slug(ctx.body.slug);
    },
  },
  createAdminEvent: {
    request: (ctx) => {
      ctx.body.event_ticker = unique.ticker(ctx.body.event_ticker);
      if (ctx.body.slug) ctx.body.slug = unique.slug(ctx.body.slug);
      keepStrikeDateAhead(ctx.body);
    },
  },
  createAdminMarket: {
    request: (ctx) => {
      ctx.body.ticker = unique.ticker(ctx.body.ticker);
    },
  },
  // Closing or resolving changes the market for good: each transaction gets its own fresh market, so the
  // example market stays ACTIVE for every other transaction (and 409 is a real repeat).
  closeAdminMarket: {
    request: async (ctx) => {
      ctx.pathParams.ticker = await freshMarket();
    },
  },
  resolveAdminMarket: {
    request: async (ctx) => {
      ctx.pathParams.ticker = await freshMarket();
    },
  },
  // The admin created the example event (beforeAll), so it is an event creator.
  getEventCreator: {
    request: (ctx) => {
      ctx.pathParams.id = state.admin.id;
    },
  },
  // The keyset list refuses offset pagination: after_cursor is its mechanism.
  listCompatEventsKeyset: {
    422: (ctx) => {
      ctx.query.set('offset', '20');
    },
  },

  // --- trading. Orders are the contract USER's, on the example market (resting buys of YES at 0.45 that
  // never cross one another); fills, positions, trades and settlements come from tradingFixture().
  placeOrder: {
    // A fresh client_order_id makes 201 possible, and makes 409 (STATUS_RULES) a real duplicate of it.
    request: (ctx) => {
      ctx.body.client_order_id = unique.slug('order');
    },
    404: (ctx) => {
      ctx.body.ticker = missingTicker();
    },
  },
  previewOrder: {
    404: (ctx) => {
      ctx.body.ticker = missingTicker();
    },
    // A market that is no longer ACTIVE (a preview changes nothing, so a repeat would not conflict).
    409: async (ctx) => {
      ctx.body.ticker = await freshMarket();
      const { template, method } = pathOf('closeAdminMarket');
      const url = template.replace('{ticker}', encodeURIComponent(ctx.body.ticker));
      expectStatus('close a market', await call(method, url, { token: state.admin.token }), 200);
    },
  },
  listOrders: {
    // The examples filter on the example market's ticker and id, and the live statuses: one live order there.
    request: async (ctx) => {
      await placeExampleOrder();
      ctx.query.set('market', await exampleMarketId());
    },
    // An unknown status among valid ones (each value of the set is checked).
    400: (ctx) => {
      ctx.query.set('status', 'OPEN,NOT_A_STATUS');
    },
  },
  getOrder: {
    request: async (ctx) => {
      ctx.pathParams.order_id = (await placeExampleOrder()).order_id;
    },
    // Another account's order: 404, exactly like an unknown id.
    404: async (ctx) => {
      ctx.pathParams.order_id = (await placeExampleOrder(await otherAccount())).order_id;
    },
  },
  cancelOrder: {
    // A live order of the caller; 409 (STATUS_RULES) cancels it once before Dredd's repeat.
    request: async (ctx) => {
      ctx.pathParams.order_id = (await placeExampleOrder()).order_id;
    },
    404: async (ctx) => {
      ctx.pathParams.order_id = (await placeExampleOrder(await otherAccount())).order_id;
    },
  },
  decreaseOrder: {
    // The example order has count 10, the example body asks for a remainder of 5.
    request: async (ctx) => {
      ctx.pathParams.order_id = (await placeExampleOrder()).order_id;
    },
    // Not smaller than the current remainder.
    400: (ctx) => {
      ctx.body = { count: '10' };
    },
    404: async (ctx) => {
      ctx.pathParams.order_id = (await placeExampleOrder(await otherAccount())).order_id;
    },
    // An order that is no longer live.
    409: async (ctx) => {
      const { template, method } = pathOf('cancelOrder');
      const url = template.replace('{order_id}', encodeURIComponent(ctx.pathParams.order_id));
      expectStatus('cancel the order to decrease', await call(method, url, { token: state.user.token }), 200);
    },
  },
  cancelAllOrders: {
    // The examples name the example market both ways; naming it once cancels the caller's orders there.
    request: async (ctx) => {
      await placeExampleOrder();
      ctx.query.delete('ticker');
    },
    // `market` and `ticker` together.
    400: (ctx) => {
      ctx.query.set('ticker', state.exampleBodies.createAdminMarket.ticker);
    },
    404: (ctx) => {
      ctx.query.set('market', missingTicker());
    },
  },
  // Also the aliases (POST /api/portfolio/orders/cancel, DELETE /api/clob/orders): one live order of the
  // caller, one of another account and an unknown id, so that both item shapes are checked.
  // Two resting buys of the placeOrder example (never crossing the contract USER's other orders), with fresh client_order_ids.
  placeOrderBatch: {
    request: (ctx) => {
      const example = state.exampleBodies.placeOrder;
      if (!example) throw new Error('no example body for placeOrder to place a batch from');
      ctx.body = { orders: [0, 1].map(() => ({ ...example, client_order_id: unique.slug('batch') })) };
    },
    // No orders at all (1 to 20 are allowed).
    400: (ctx) => {
      ctx.body = { orders: [] };
    },
  },
  cancelOrderBatch: {
    request: async (ctx) => {
      const own = await placeExampleOrder();
      const others = await placeExampleOrder(await otherAccount());
      ctx.body = { order_ids: [own.order_id, others.order_id, crypto.randomUUID()] };
    },
    // Over the limit of 1,000 ids.
    400: (ctx) => {
      ctx.body = { order_ids: Array.from({ length: 1001 }, () => crypto.randomUUID()) };
    },
  },
  // The collections list the records of the fixture's markets (the examples name the example market).
  listPositions: {
    request: async (ctx) => {
      ctx.query.set('ticker', (await tradingFixture()).traded);
    },
  },
  listFills: {
    request: async (ctx) => {
      ctx.query.set('ticker', (await tradingFixture()).traded);
    },
  },
  listTrades: {
    request: async (ctx) => {
      ctx.query.set('ticker', (await tradingFixture()).traded);
    },
  },
  listSettlements: {
    request: async (ctx) => {
      ctx.query.set('ticker', (await tradingFixture()).settled);
    },
  },
  getMarketOrderbook: {
    // Resting bids on both outcomes.
    request: async (ctx) => {
      ctx.pathParams.ticker = (await tradingFixture()).traded;
    },
  },
  // The fixture's traded market, in the example event's series (the examples' range, in the past, answers no
  // candlesticks); 404 (STATUS_RULES): both path parameters naming nothing.
  getMarketCandlesticks: {
    request: async (ctx) => {
      ctx.pathParams.ticker = (await tradingFixture()).traded;
      const event = state.exampleBodies.createAdminMarket.event_ticker;
      ctx.pathParams.series_ticker = expectStatus('read the example event', await call('GET', `/api/events/${encodeURIComponent(event)}`), 200).event.seriesTicker;
    },
  },
  getMarketsCandlesticks: {
    request: async (ctx) => {
      ctx.query.set('market_tickers', (await tradingFixture()).traded);
    },
    404: (ctx) => {
      ctx.query.set('market_tickers', missingTicker());
    },
  },

  // --- order sessions. Heartbeats are sent as a dedicated account: a session of the contract USER would
  // expire during the run and cancel the resting orders other transactions rely on.
  sendHeartbeat: heartbeatTweaks(),
  // Also its four aliases (/heartbeats, /api/heartbeats, /api/clob/heartbeats, /api/clob/v1/heartbeats).
  sendClobHeartbeat: heartbeatTweaks(),
  // The heartbeat account: its latest session fills the `heartbeat` object (null for an account without one).
  getOrderScoringStatus: {
    request: async (ctx) => {
      ctx.token = (await heartbeatAccount()).token;
    },
  },
  // Scoring checks name the contract USER's orders on a rewarded market (one scoring, one not) and an
  // unknown id. 400 (STATUS_RULES): an id over 128 characters, a body missing `order_ids`, a body that is
  // not an array.
  checkOrderScoring: {
    request: async (ctx) => {
      for (const name of ['orderId', 'orderID']) ctx.query.delete(name);
      ctx.query.set('order_id', (await scoringFixture()).scoring);
    },
  },
  checkOrderScoringLegacy: {
    request: async (ctx) => {
      const { scoring, notScoring } = await scoringFixture();
      ctx.body = { order_ids: [scoring, notScoring, crypto.randomUUID()] };
    },
  },
  checkOrdersScoring: {
    request: async (ctx) => {
      const { scoring, notScoring } = await scoringFixture();
      ctx.query.set('order_ids', [scoring, notScoring, crypto.randomUUID()].join(','));
    },
    // Over the limit of 1,000 ids.
    400: (ctx) => {
      ctx.query.set('order_ids', Array.from({ length: 1001 }, () => crypto.randomUUID()).join(','));
    },
  },
  checkOrdersScoringList: {
    request: async (ctx) => {
      const { scoring, notScoring } = await scoringFixture();
      ctx.body = [scoring, notScoring, crypto.randomUUID()];
    },
  },
};

/** Heartbeat transactions: the heartbeat account starts or renews its session; 409 names an expired one. */
function heartbeatTweaks() {
  return {
    request: async (ctx) => {
      ctx.token = (await heartbeatAccount()).token;
      ctx.body = { heartbeat_id: null };
    },
    // The id of one of the caller's expired sessions (the repeat rule of STATUS_RULES would just renew).
    409: async (ctx) => {
      const expired = await expiredSession();
      ctx.token = expired.token;
      ctx.body = { heartbeat_id: expired.heartbeatId };
    },
  };
}

/**
 * Operations whose example request bodies create the records the other examples refer to (tag
 * `elections`, series `KXFEDRATE`, event `KXFEDRATE-26DEC`, market `KXFEDRATE-26DEC-T4.50`). beforeAll
 * sends them, in this order, as the admin, so that the document's examples name real records.
 */
const EXAMPLE_FIXTURES = ['createAdminTag', 'createAdminSeries', 'createAdminEvent', 'createAdminMarket'];

// ---------------------------------------------------------------------------------------------------
// Generic rules: how to make a documented status happen for any operation.
// ---------------------------------------------------------------------------------------------------
const STATUS_RULES = {
  // Invalid input: break the body against its schema, else a query or path parameter.
  400: (ctx) => invalidInput(ctx),
  // No credentials at all. (Public operations documenting 401 need a tweak, e.g. loginAccount.)
  401: (ctx) => {
    if (!ctx.requiresAuth) throw new Error('the operation is public: add a 401 tweak to TWEAKS');
    ctx.token = null;
  },
  // A valid token of an account lacking the role named by `x-required-role`; or, on an operation that
  // takes API keys, a request signed with a key of the USER lacking the operation's `x-api-key-scope`.
  403: async (ctx) => {
    const scope = ctx.operation['x-api-key-scope'];
    if (scope) {
      ctx.token = null;
      ctx.signWith = await scopedKey(scope === 'read' ? 'trade' : 'read');
      return;
    }
    if (!ctx.requiredRole || ctx.requiredRole === 'USER') throw new Error('no x-required-role above USER: add a 403 tweak to TWEAKS');
    ctx.token = state.user.token;
  },
  // Path parameters naming nothing.
  404: (ctx) => {
    const names = Object.keys(ctx.pathParams);
    if (names.length === 0) throw new Error('no path parameter to point at a missing resource: add a 404 tweak to TWEAKS');
    for (const name of names) ctx.pathParams[name] = missingValue(ctx.parameter('path', name));
  },
  // The same successful request twice: the hook sends it once, then Dredd repeats it.
  409: (ctx) => {
    ctx.sendFirst = true;
  },
  // A body of another media type.
  415: (ctx) => {
    if (!ctx.hasJsonBody) throw new Error('the operation takes no JSON body: add a 415 tweak to TWEAKS');
    ctx.rawBody = 'not json';
    ctx.contentType = 'text/plain';
  },
  // The client's budget spent beforehand (a fresh account, or a fresh address for a public operation).
  429: async (ctx) => exhaustBudget(ctx),
  // A header block over 64 KiB.
  431: (ctx) => {
    ctx.extraHeaders['X-Padding'] = 'x'.repeat(70 * 1024);
  },
  // A conditional read naming any current representation (RFC 9110 `*`): the answer is unchanged, 304.
  304: (ctx) => {
    ctx.ifNoneMatch = '*';
  },
  // A well-formed JSON body just over the limit.
  413: (ctx) => {
    if (!ctx.hasJsonBody) throw new Error('the operation takes no JSON body: add a 413 tweak to TWEAKS');
    ctx.rawBody = JSON.stringify({ padding: 'x'.repeat(BODY_LIMIT_BYTES + 1024) });
  },
};

// ---------------------------------------------------------------------------------------------------
// State shared by the hooks.
// ---------------------------------------------------------------------------------------------------
const state = {
  baseUrl: '',
  /** The contract USER: { email, password, token }. */
  user: undefined,
  /** The admin: { email, password, token, id }. */
  admin: undefined,
  /** Parsed request body of each operation's first 2xx transaction (what Dredd would send). */
  exampleBodies: {},
  /** Set when beforeAll failed: every transaction then fails with this message. */
  setupError: undefined,
  report: { hooksLoaded: true, skipped: [] },
};

const RUN = crypto.randomBytes(3).toString('hex');
let counter = 0;
/** Identifiers no other run or transaction uses, each kept within the document's pattern and length. */
const unique = {
  suffix: () => `${RUN}${(counter += 1)}`,
  email: () => `contract-${unique.suffix()}@example.com`,
  username: () => `c_${unique.suffix()}`,
  ticker: (base) => {
    const suffix = `-C${unique.suffix().toUpperCase()}`;
    return `${String(base || 'CONTRACT').slice(0, 64 - suffix.length)}${suffix}`;
  },
  /** A client address of its own (the benchmarking range 198.18.0.0/15), one per request. */
  address: () => {
    const n = (counter += 1);
    return `198.${18 + ((n >> 16) & 1)}.${(n >> 8) & 255}.${n & 255}`;
  },
  slug: (base) => {
    const suffix = `-c${unique.suffix()}`;
    return `${String(base || 'contract').slice(0, 100 - suffix.length)}${suffix}`;
  },
};

function writeReport() {
  if (REPORT_PATH) fs.writeFileSync(REPORT_PATH, JSON.stringify(state.report, null, 2));
}
writeReport();

// ---------------------------------------------------------------------------------------------------
// The document: operations, parameters, responses, and response schemas as JSON Schema.
// ---------------------------------------------------------------------------------------------------
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Follows a local `$ref` ("#/components/...") in the document; other values are returned as they are. */
function deref(node) {
  let current = node;
  for (let depth = 0; current && typeof current.$ref === 'string'; depth += 1) {
    if (depth > 20) throw new Error(`$ref loop at ${node.$ref}`);
    current = pointer(current.$ref);
  }
  return current;
}

function pointer(ref) {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, got '${ref}'`);
  return ref
    .slice(2)
    .split('/')
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node, key) => {
      if (node === undefined || !(key in node)) throw new Error(`unresolvable $ref '${ref}'`);
      return node[key];
    }, document);
}

/** The operation a Dredd transaction belongs to: its path template (origin.resourceName) and method. */
function operationOf(transaction) {
  const template = transaction.origin.resourceName;
  const method = transaction.request.method.toLowerCase();
  const pathItem = document.paths[template];
  const operation = pathItem && METHODS.includes(method) ? pathItem[method] : undefined;
  if (!operation) throw new Error(`no operation ${method.toUpperCase()} ${template} in ${DOCUMENT_PATH}`);
  return { template, method, pathItem, operation, operationId: operation.operationId };
}

/** Path-item and operation parameters, resolved; the operation's win (by name and location). */
function parametersOf(pathItem, operation) {
  const byKey = new Map();
  for (const parameter of [...(pathItem.parameters || []), ...(operation.parameters || [])]) {
    const resolved = deref(parameter);
    byKey.set(`${resolved.in}:${resolved.name}`, resolved);
  }
  return [...byKey.values()];
}

/** Whether the operation needs a token: a security requirement without an empty (anonymous) alternative. */
function requiresAuth(operation) {
  const security = operation.security || document.security || [];
  return security.length > 0 && !security.some((requirement) => Object.keys(requirement).length === 0);
}

const isJsonMediaType = (mediaType) => /^application\/(.+\+)?json$/i.test(mediaType || '');

function jsonRequestSchema(operation) {
  const body = operation.requestBody && deref(operation.requestBody);
  if (!body || !body.content) return undefined;
  const mediaType = Object.keys(body.content).find(isJsonMediaType);
  return mediaType ? { schema: body.content[mediaType].schema } : undefined;
}

// OpenAPI 3.0 schema objects are not JSON Schema: `nullable` must become a null type, OpenAPI-only
// keywords go, and `$ref`s to components become `definitions` of the one schema given to Dredd (Gavel
// validates with Ajv 6, which knows draft-07).
const JSON_SCHEMA_DRAFT = 'http://json-schema.org/draft-07/schema#';
const OPENAPI_ONLY_KEYWORDS = new Set(['nullable', 'discriminator', 'readOnly', 'writeOnly', 'xml', 'externalDocs', 'example', 'deprecated']);
/** Formats Ajv 6 knows; any other would make it throw instead of validating, so it is dropped. */
const AJV6_FORMATS = new Set([
  'date', 'time', 'date-time', 'uri', 'uri-reference', 'uri-template', 'url', 'email', 'hostname', 'ipv4', 'ipv6',
  'regex', 'uuid', 'json-pointer', 'json-pointer-uri-fragment', 'relative-json-pointer',
]);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties']);
const SCHEMA_VALUES = new Set(['items', 'additionalProperties', 'not']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);
const COMPONENT_SCHEMA = '#/components/schemas/';

/** The full JSON Schema of a documented body: the schema plus every component schema it reaches. */
function toBodySchema(openApiSchema) {
  const wanted = [];
  const convert = (schema, depth = 0) => {
    if (depth > 64) throw new Error('schema nested too deeply (a $ref cycle outside components?)');
    if (Array.isArray(schema)) return schema.map((item) => convert(item, depth + 1));
    if (!schema || typeof schema !== 'object') return schema;
    if (typeof schema.$ref === 'string') {
      // OpenAPI 3.0 ignores the siblings of a $ref; so does this.
      if (schema.$ref.startsWith(COMPONENT_SCHEMA)) {
        const name = schema.$ref.slice(COMPONENT_SCHEMA.length);
        if (!wanted.includes(name)) wanted.push(name);
        return { $ref: `#/definitions/${name}` };
      }
      return convert(pointer(schema.$ref), depth + 1);
    }
    const out = {};
    for (const [keyword, value] of Object.entries(schema)) {
      if (OPENAPI_ONLY_KEYWORDS.has(keyword) || keyword.startsWith('x-')) continue;
      if (keyword === 'format' && !AJV6_FORMATS.has(value)) continue;
      if (SCHEMA_MAPS.has(keyword)) {
        out[keyword] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, convert(sub, depth + 1)]));
      } else if (SCHEMA_VALUES.has(keyword) && value && typeof value === 'object') {
        out[keyword] = convert(value, depth + 1);
      } else if (SCHEMA_LISTS.has(keyword)) {
        out[keyword] = value.map((sub) => convert(sub, depth + 1));
      } else {
        out[keyword] = value;
      }
    }
    if (schema.nullable !== true) return out;
    // nullable: null is allowed besides what the schema allows.
    if (out.allOf || out.anyOf || out.oneOf) return { anyOf: [out, { type: 'null' }] };
    if (out.type !== undefined) out.type = [...new Set([...[].concat(out.type), 'null'])];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  };

  let root = convert(openApiSchema);
  if (root && root.$ref) root = { allOf: [root] }; // keywords beside a root $ref would be ignored
  const definitions = {};
  for (let i = 0; i < wanted.length; i += 1) {
    const name = wanted[i];
    definitions[name] = convert(pointer(`${COMPONENT_SCHEMA}${name}`));
  }
  return { $schema: JSON_SCHEMA_DRAFT, ...root, ...(wanted.length > 0 ? { definitions } : {}) };
}

// ---------------------------------------------------------------------------------------------------
// HTTP helpers for fixtures (the hooks' own requests, not Dredd's).
// ---------------------------------------------------------------------------------------------------
async function call(method, urlPath, { token, body, headers } = {}) {
  // Headers are case-insensitive: later values (the caller's) replace defaults whatever their case.
  const merged = new Headers({ accept: 'application/json', 'x-forwarded-for': unique.address() });
  if (body !== undefined) merged.set('content-type', 'application/json');
  if (token) merged.set('authorization', `Bearer ${token}`);
  for (const [name, value] of Object.entries(headers || {})) merged.set(name, value);
  const response = await fetch(`${state.baseUrl}${urlPath}`, {
    method,
    headers: merged,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text for the error message
  }
  return { status: response.status, body: parsed };
}

/** Path of the operation with this operationId (fixtures use the document's paths, not hard-coded ones). */
function pathOf(operationId) {
  for (const [template, pathItem] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      if (pathItem[method] && pathItem[method].operationId === operationId) return { template, method: method.toUpperCase() };
    }
  }
  throw new Error(`no operation '${operationId}' in the document`);
}

function expectStatus(what, response, ...statuses) {
  if (!statuses.includes(response.status)) {
    throw new Error(`${what}: expected ${statuses.join(' or ')}, got ${response.status} ${JSON.stringify(response.body)}`);
  }
  return response.body;
}

/** Registers a fresh USER account; returns { email, password, token }. */
async function registerAccount() {
  const { template, method } = pathOf('registerAccount');
  const email = unique.email();
  const password = crypto.randomBytes(12).toString('hex');
  const body = expectStatus('register', await call(method, template, { body: { email, password, name: 'Contract Tests' } }), 201);
  return { email, password, token: body.token };
}

let keyPair;
/** One RSA key pair for every API key the hooks create (the service keeps only public keys). */
function apiKeyPair() {
  if (!keyPair) {
    const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    keyPair = { publicPem: publicKey.export({ type: 'spki', format: 'pem' }), privateKey };
  }
  return keyPair;
}

/** An RSA API key of `account` with these scopes: { id }. */
async function createApiKey(account, scopes) {
  const { template, method } = pathOf('createApiKey');
  const created = expectStatus('create an API key', await call(method, template, { token: account.token, body: { name: 'contract', kind: 'rsa', scopes, public_key: apiKeyPair().publicPem } }), 201);
  return { id: created.api_key.id };
}

const scopedKeys = {};
/** The USER's API key with this one scope (created once). */
async function scopedKey(scope) {
  scopedKeys[scope] ??= createApiKey(state.user, [scope]);
  return scopedKeys[scope];
}

/** KALSHI-ACCESS-* headers of `key` for `method` and `pathname`, as a Kalshi client signs them. */
function signedHeaders(key, method, pathname) {
  const timestamp = String(Date.now());
  const signature = crypto.sign('sha256', Buffer.from(timestamp + method + pathname), { key: apiKeyPair().privateKey, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
  return { 'KALSHI-ACCESS-KEY': key.id, 'KALSHI-ACCESS-TIMESTAMP': timestamp, 'KALSHI-ACCESS-SIGNATURE': signature.toString('base64') };
}

/** A new ACTIVE market in the example event, for transactions that close or resolve one. */
async function freshMarket() {
  const { template, method } = pathOf('createAdminMarket');
  const example = state.exampleBodies.createAdminMarket;
  if (!example) throw new Error('no example body for createAdminMarket to create a market from');
  const body = { ...example, ticker: unique.ticker(example.ticker) };
  const created = expectStatus('create a market', await call(method, template, { token: state.admin.token, body }), 201);
  return created.market.ticker;
}

/** A ticker within the document's pattern that names no market. */
function missingTicker() {
  return `NO-SUCH-${RUN.toUpperCase()}`;
}

/** A second USER account, for another account's orders (404 to the contract USER). */
let otherAccountPromise;
function otherAccount() {
  otherAccountPromise ??= registerAccount();
  return otherAccountPromise;
}

/** Places the placeOrder example (a resting buy) with a fresh client_order_id; returns the order record. */
async function placeExampleOrder(account = state.user, overrides = {}) {
  const { template, method } = pathOf('placeOrder');
  const example = state.exampleBodies.placeOrder;
  if (!example) throw new Error('no example body for placeOrder to place an order from');
  const body = { ...example, client_order_id: unique.slug('fixture'), ...overrides };
  return expectStatus('place an order', await call(method, template, { token: account.token, body }), 201).order;
}

/** The id of the market the examples name (the admin created it in beforeAll). */
let exampleMarketIdPromise;
function exampleMarketId() {
  exampleMarketIdPromise ??= (async () => {
    const { template, method } = pathOf('getMarket');
    const url = template.replace('{ticker}', encodeURIComponent(state.exampleBodies.createAdminMarket.ticker));
    return expectStatus('read the example market', await call(method, url), 200).market.id;
  })();
  return exampleMarketIdPromise;
}

/** The account heartbeat transactions use (never the contract USER: see sendHeartbeat in TWEAKS). */
let heartbeatAccountPromise;
function heartbeatAccount() {
  heartbeatAccountPromise ??= registerAccount();
  return heartbeatAccountPromise;
}

/**
 * An account whose order session has expired: started in beforeAll, so that its timeout
 * (ORDER_HEARTBEAT_TIMEOUT_SECS, 15 s by default) passes while other transactions run; resolves once the
 * session's `expires_at` is behind. Returns { token, heartbeatId }.
 */
let expiredSessionPromise;
function expiredSession() {
  expiredSessionPromise ??= (async () => {
    const account = await registerAccount();
    const { template, method } = pathOf('sendHeartbeat');
    const session = expectStatus('start a session to expire', await call(method, template, { token: account.token, body: {} }), 200);
    const wait = Date.parse(session.expires_at) - Date.now() + 250;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return { token: account.token, heartbeatId: session.heartbeat_id };
  })();
  return expiredSessionPromise;
}

/**
 * Orders for the scoring checks, made once: a fresh market with maker rewards (minimum 1 contract, spread
 * 0.05) where another account rests a YES bid at 0.49 and a YES ask at 0.51 (midpoint 0.50); the contract
 * USER rests a YES bid at 0.48 (scoring) and one at 0.30 (outside the spread: not scoring).
 */
let scoringFixturePromise;
function scoringFixture() {
  scoringFixturePromise ??= (async () => {
    const { template, method } = pathOf('createAdminMarket');
    const example = state.exampleBodies.createAdminMarket;
    const body = { ...example, ticker: unique.ticker(example.ticker), rewards_min_size: '1', rewards_max_spread: '0.05' };
    const ticker = expectStatus('create a rewarded market', await call(method, template, { token: state.admin.token, body }), 201).market.ticker;
    const other = await otherAccount();
    await placeExampleOrder(other, { ticker, side: 'yes', action: 'buy', count: '5', price: '0.49' });
    await placeExampleOrder(other, { ticker, side: 'no', action: 'buy', count: '5', price: '0.49' });
    const scoring = (await placeExampleOrder(state.user, { ticker, side: 'yes', action: 'buy', count: '5', price: '0.48' })).order_id;
    const notScoring = (await placeExampleOrder(state.user, { ticker, side: 'yes', action: 'buy', count: '5', price: '0.30' })).order_id;
    return { scoring, notScoring };
  })();
  return scoringFixturePromise;
}

/**
 * Records for the portfolio and market-data collections, made once: on a fresh market the contract USER
 * buys YES and another account buys NO at complementary prices (a mint: fills, positions, a trade), and
 * both leave a bid resting (an order book with both outcomes); on a second fresh market they trade the same
 * way and the admin resolves it `yes` (settlements).
 */
let tradingFixturePromise;
function tradingFixture() {
  tradingFixturePromise ??= (async () => {
    const other = await otherAccount();
    const cross = async (ticker) => {
      await placeExampleOrder(state.user, { ticker, side: 'yes', action: 'buy', count: '2', price: '0.60' });
      const taker = await placeExampleOrder(other, { ticker, side: 'no', action: 'buy', count: '2', price: '0.40' });
      if (taker.status !== 'FILLED') throw new Error(`the fixture orders should have crossed, got ${JSON.stringify(taker)}`);
    };
    const traded = await freshMarket();
    await cross(traded);
    await placeExampleOrder(state.user, { ticker: traded, side: 'yes', action: 'buy', count: '1', price: '0.30' });
    await placeExampleOrder(other, { ticker: traded, side: 'no', action: 'buy', count: '1', price: '0.50' });

    const settled = await freshMarket();
    await cross(settled);
    const { template, method } = pathOf('resolveAdminMarket');
    const url = template.replace('{ticker}', encodeURIComponent(settled));
    expectStatus('resolve the fixture market', await call(method, url, { token: state.admin.token, body: { result: 'yes' } }), 200);
    return { traded, settled };
  })();
  return tradingFixturePromise;
}

/**
 * The event example has a fixed strike date, and the service rejects one before the start date (now
 * by default): move a past date a year ahead so the example keeps working as time passes.
 */
function keepStrikeDateAhead(body) {
  if (typeof body.strike_date === 'string' && Date.parse(body.strike_date) <= Date.now() && !body.start_date) {
    body.strike_date = new Date(Date.now() + 365 * 86_400_000).toISOString();
  }
}

// ---------------------------------------------------------------------------------------------------
// Building each transaction's request.
// ---------------------------------------------------------------------------------------------------

/** A value for a parameter that names nothing, within its schema's type. */
function missingValue(parameter) {
  const schema = deref((parameter && parameter.schema) || {});
  if (schema.type === 'integer' || schema.type === 'number') return String(2_000_000_000 + counter++);
  if (schema.format === 'uuid') return crypto.randomUUID();
  return `NO-SUCH-${RUN.toUpperCase()}`;
}

/** A value that violates the parameter's schema, or undefined if none is obvious. */
function invalidParameterValue(parameter) {
  const schema = deref(parameter.schema || {});
  if (schema.type === 'integer' || schema.type === 'number') return 'not-a-number';
  if (schema.type === 'boolean') return 'not-a-boolean';
  if (Array.isArray(schema.enum)) return 'NOT_ONE_OF_THE_ALLOWED_VALUES';
  if (typeof schema.maxLength === 'number') return 'x'.repeat(schema.maxLength + 1);
  if (typeof schema.minLength === 'number' && schema.minLength > 1) return 'x';
  return undefined;
}

/** 400: a body that breaks its schema (a required property missing, an unknown one, a wrong type), else a bad parameter. */
function invalidInput(ctx) {
  const request = jsonRequestSchema(ctx.operation);
  if (request) {
    const schema = deref(request.schema || {});
    const body = ctx.body && typeof ctx.body === 'object' ? ctx.body : {};
    if (Array.isArray(schema.required) && schema.required.length > 0 && !Array.isArray(body)) {
      delete body[schema.required[0]];
      ctx.body = body;
    } else if (schema.additionalProperties === false && !Array.isArray(body)) {
      ctx.body = { ...body, contract_unexpected_property: true };
    } else if (schema.type === 'array') {
      ctx.body = { not: 'an array' };
    } else {
      ctx.rawBody = '{"malformed JSON'; // the service documents malformed JSON as 400 too
    }
    return;
  }
  for (const location of ['query', 'path']) {
    for (const parameter of ctx.parameters.filter((p) => p.in === location)) {
      const value = invalidParameterValue(parameter);
      if (value === undefined) continue;
      if (location === 'query') ctx.query.set(parameter.name, value);
      else ctx.pathParams[parameter.name] = value;
      return;
    }
  }
  // Text the database cannot store, in the first path or query parameter.
  const parameter = ctx.parameters.find((p) => p.in === 'path') || ctx.parameters.find((p) => p.in === 'query');
  if (parameter) {
    if (parameter.in === 'path') ctx.pathParams[parameter.name] = 'x\u0000';
    else ctx.query.set(parameter.name, 'x\u0000');
    return;
  }
  throw new Error('no body or parameter to make invalid: add a 400 tweak to TWEAKS');
}

/**
 * 429: the request's client spends its budget first. The client is the account of a token (a fresh
 * account, so no other transaction's budget is touched) or, without one, the transaction's own address.
 * The budget is spent with harmless requests of the operation's own class: `GET` of the operation itself,
 * or another operation of the class that changes nothing for that client.
 */
async function exhaustBudget(ctx) {
  const limitClass = ctx.operation['x-rate-limit'];
  if (ctx.requiresAuth) {
    const account = await registerAccount();
    ctx.token = account.token;
  }
  const probes = {
    'public-reads': () => ({ method: 'GET', url: pathOf('getHealth').template }),
    'private-reads': () => ({ method: 'GET', url: pathOf('getCurrentAccount').template }),
    'order-writes': () => ({ ...pathOf('cancelAllOrders'), url: pathOf('cancelAllOrders').template }),
    login: () => ({ ...pathOf('loginAccount'), url: pathOf('loginAccount').template, body: '{}' }),
    registration: () => ({ ...pathOf('registerAccount'), url: pathOf('registerAccount').template, body: '{}' }),
  };
  if (!probes[limitClass]) throw new Error(`unknown x-rate-limit '${limitClass}'`);
  const probe = probes[limitClass]();
  const headers = { 'x-forwarded-for': ctx.address };
  let refused = false;
  for (let sent = 0; sent < CONTRACT_BUDGET + 25 && !refused; sent += 25) {
    const batch = await Promise.all(
      Array.from({ length: 25 }, () => call(probe.method, probe.url, { token: ctx.token || undefined, headers, body: probe.body })),
    );
    refused = batch.some((response) => response.status === 429);
  }
  if (!refused) throw new Error(`the ${limitClass} budget did not run out after ${CONTRACT_BUDGET + 25} requests`);
}

/** Path parameter values of the request Dredd built, read back with the path template. */
function readPathParams(template, fullPath) {
  const names = [];
  const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (_, name) => {
    names.push(name);
    return '([^/]*)';
  });
  const match = new RegExp(`^${pattern}$`).exec(fullPath.split('?')[0]);
  const values = {};
  names.forEach((name, i) => {
    values[name] = match ? decodeURIComponent(match[i + 1]) : '';
  });
  return values;
}

function makeContext(transaction) {
  const found = operationOf(transaction);
  const { template, operation, pathItem } = found;
  const url = new URL(transaction.fullPath, 'http://placeholder');
  let body;
  if (transaction.request.body) {
    try {
      body = JSON.parse(transaction.request.body);
    } catch {
      body = undefined;
    }
  }
  const parameters = parametersOf(pathItem, operation);
  const requiredRole = operation['x-required-role'];
  return {
    ...found,
    transaction,
    status: String(transaction.expected.statusCode),
    parameters,
    parameter: (location, name) => parameters.find((p) => p.in === location && p.name === name),
    requiresAuth: requiresAuth(operation),
    requiredRole,
    hasJsonBody: Boolean(jsonRequestSchema(operation)),
    body,
    /** Sent instead of `body` when set (malformed or oversized bodies). */
    rawBody: undefined,
    pathParams: readPathParams(template, url.pathname),
    query: url.searchParams,
    /** The Bearer token to send; null for none. ADMIN operations get the admin's, the rest the USER's. */
    token: requiresAuth(operation) ? (requiredRole === 'ADMIN' ? state.admin.token : state.user.token) : null,
    /** 409: send the finished request once before Dredd does. */
    sendFirst: false,
    /** Sent instead of application/json with a body (415). */
    contentType: undefined,
    /** Further request headers (431). */
    extraHeaders: {},
    /** The client address the request comes from (X-Forwarded-For): one per transaction. */
    address: unique.address(),
    /** 304: the If-None-Match header to send; none otherwise. */
    ifNoneMatch: undefined,
    /** An API key ({ id }) to sign the request with, instead of the token (403 of a missing scope). */
    signWith: undefined,
  };
}

function setHeader(headers, name, value) {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name.toLowerCase()) delete headers[key];
  if (value !== undefined) headers[name] = value;
}

/** Writes the context back into Dredd's transaction (path, query, headers, body). */
function applyContext(ctx) {
  const { transaction } = ctx;
  const pathname = ctx.template.replace(/\{([^}]+)\}/g, (_, name) => encodeURIComponent(ctx.pathParams[name]));
  const search = ctx.query.toString();
  transaction.fullPath = `${pathname}${search ? `?${search}` : ''}`;
  transaction.request.uri = transaction.fullPath;
  // Dredd titles its report lines with the id it computed before the hooks ran; show the real request.
  transaction.id = `${transaction.request.method} (${ctx.status}) ${transaction.fullPath}`;
  const headers = transaction.request.headers;
  setHeader(headers, 'Authorization', ctx.token ? `Bearer ${ctx.token}` : undefined);
  // only the 304 transactions are conditional (Dredd may have put the parameter's example in every one)
  setHeader(headers, 'If-None-Match', ctx.ifNoneMatch);
  if (ctx.rawBody !== undefined) transaction.request.body = ctx.rawBody;
  else if (ctx.body !== undefined) transaction.request.body = JSON.stringify(ctx.body);
  if (transaction.request.body) setHeader(headers, 'Content-Type', ctx.contentType || 'application/json');
  setHeader(headers, 'X-Forwarded-For', ctx.address);
  for (const [name, value] of Object.entries(ctx.extraHeaders)) setHeader(headers, name, value);
  if (ctx.signWith) for (const [name, value] of Object.entries(signedHeaders(ctx.signWith, transaction.request.method, pathname))) setHeader(headers, name, value);
}

/** The response Dredd must see: the documented body schema for this status, as full JSON Schema. */
function setExpectedBody(ctx) {
  const { transaction, operation, status } = ctx;
  const response = operation.responses && operation.responses[status] && deref(operation.responses[status]);
  if (!response) throw new Error(`status ${status} is not documented for ${ctx.operationId}`);
  // Dredd expects the media type named in the transaction ("... > 200 > application/json").
  const contentType = Object.entries(transaction.expected.headers || {}).find(([name]) => name.toLowerCase() === 'content-type');
  const mediaType = contentType ? contentType[1] : transaction.origin.exampleName.split(' > ')[1];
  const content = response.content && mediaType ? response.content[mediaType] : undefined;
  if (content && content.schema && isJsonMediaType(mediaType)) {
    transaction.expected.bodySchema = toBodySchema(content.schema);
    // With a schema Gavel ignores the example body; dropping it keeps the reports readable.
    delete transaction.expected.body;
  }
}

function skipKey(ctx) {
  return `${ctx.operationId} ${ctx.status}`;
}

/**
 * An entry of TWEAKS or SKIPS for the operation: by operationId, else by its `x-handler` (aliases of one
 * implementation share their entries, so a new alias path needs none of its own).
 */
function entryFor(table, ctx, suffix = '') {
  for (const name of [ctx.operationId, ctx.operation['x-handler']]) {
    if (name && Object.hasOwn(table, `${name}${suffix}`)) return table[`${name}${suffix}`];
  }
  return undefined;
}

/** Wraps an async hook for Dredd's callback API; a failure fails the transaction instead of hanging. */
function asyncHook(fn) {
  return (data, done) => {
    Promise.resolve()
      .then(() => fn(data))
      .catch((error) => {
        const message = error && error.message ? error.message : String(error);
        if (Array.isArray(data)) state.setupError = message;
        else data.fail = message;
      })
      .then(() => done());
  };
}

// ---------------------------------------------------------------------------------------------------
// The hooks.
// ---------------------------------------------------------------------------------------------------
hooks.beforeAll(
  asyncHook(async (transactions) => {
    if (transactions.length === 0) return;
    const first = transactions[0];
    state.baseUrl = `${first.protocol}//${first.host}:${first.port}`;

    for (const transaction of transactions) {
      if (!String(transaction.expected.statusCode).startsWith('2') || !transaction.request.body) continue;
      const { operationId } = operationOf(transaction);
      if (!(operationId in state.exampleBodies)) state.exampleBodies[operationId] = JSON.parse(transaction.request.body);
    }

    // A fresh USER account for every operation that needs a token and no role.
    state.user = await registerAccount();
    // Its timeout runs while the other transactions do (awaited by the heartbeat 409 transactions).
    expiredSession().catch(() => undefined);

    // The operator account the service was started with (ADMIN_EMAIL / ADMIN_PASSWORD).
    const email = process.env.ADMIN_EMAIL;
    const password = process.env.ADMIN_PASSWORD;
    if (!email || !password) throw new Error('set ADMIN_EMAIL and ADMIN_PASSWORD to the admin account the service was started with');
    const login = pathOf('loginAccount');
    const session = expectStatus('admin login', await call(login.method, login.template, { body: { email, password } }), 200);
    if (session.user.role !== 'ADMIN') throw new Error(`${email} has role ${session.user.role}, not ADMIN`);
    state.admin = { email, password, token: session.token, id: session.user.id };

    // The records the examples name (409: already there, e.g. from the demo data or an earlier run).
    for (const operationId of EXAMPLE_FIXTURES) {
      const body = state.exampleBodies[operationId];
      if (!body) continue;
      const fixture = { ...body };
      keepStrikeDateAhead(fixture);
      const { template, method } = pathOf(operationId);
      expectStatus(`example fixture ${operationId}`, await call(method, template, { token: state.admin.token, body: fixture }), 201, 409);
    }
  }),
);

hooks.beforeEach(
  asyncHook(async (transaction) => {
    if (state.setupError) throw new Error(`setup failed: ${state.setupError}`);
    const ctx = makeContext(transaction);

    const reason = entryFor(SKIPS, ctx, ` ${ctx.status}`) || STATUS_SKIPS[ctx.status];
    if (reason) {
      transaction.skip = true;
      state.report.skipped.push({ name: transaction.name, operationId: ctx.operationId, status: ctx.status, reason });
      writeReport();
      hooks.log(`skip ${skipKey(ctx)}: ${reason}`);
      return;
    }

    const tweaks = entryFor(TWEAKS, ctx) || {};
    if (tweaks.request) await tweaks.request(ctx);
    const rule = tweaks[ctx.status] || STATUS_RULES[ctx.status];
    if (rule) await rule(ctx);
    else if (!ctx.status.startsWith('2')) {
      throw new Error(`no rule produces ${ctx.status} for ${ctx.operationId}: add one to TWEAKS, or a reasoned entry to SKIPS`);
    }
    applyContext(ctx);
    setExpectedBody(ctx);

    if (ctx.sendFirst) {
      const { request } = transaction;
      const headers = { ...request.headers };
      setHeader(headers, 'Content-Length', undefined);
      const first = await call(request.method, transaction.fullPath, { headers, body: request.body || undefined });
      if (first.status < 200 || first.status >= 300) {
        throw new Error(`the first of two identical requests should succeed, got ${first.status} ${JSON.stringify(first.body)}`);
      }
    }
  }),
);
