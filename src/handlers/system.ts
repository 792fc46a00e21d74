import type { Handler } from './types.js';

export const getHealth: Handler<'getHealth'> = async (_request, { services }) =>
  (await services.system.isDatabaseUp())
    ? { status: 200, body: { status: 'ok', database: 'ok' } }
    : { status: 503, body: { error: { code: 'unavailable', message: 'database unavailable' } } };

/** Health answers are never cached: each probe must reach the process. */
const NO_STORE = { 'Cache-Control': 'no-store' };

export const getLiveness: Handler<'getLiveness'> = (_request, { services }) =>
  Promise.resolve(
    services.system.live
      ? { status: 200, body: { status: 'ok' }, headers: NO_STORE }
      : { status: 503, body: { error: { code: 'unavailable', message: 'the embedded database is gone and could not be started again' } }, headers: NO_STORE },
  );

export const getReadiness: Handler<'getReadiness'> = async (_request, { services }) => {
  const readiness = await services.system.readiness();
  return readiness.ready
    ? { status: 200, body: { status: 'ready', database: 'ok' }, headers: NO_STORE }
    : { status: 503, body: { error: { code: 'unavailable', message: readiness.reason } }, headers: NO_STORE };
};

export const getOpenApiDocument: Handler<'getOpenApiDocument'> = (_request, { services }) =>
  Promise.resolve({ status: 200, body: services.document as { openapi: string; info: Record<string, never>; paths: Record<string, never> } });

export const getAsyncApiDocument: Handler<'getAsyncApiDocument'> = (_request, { services }) =>
  Promise.resolve({
    status: 200,
    body: services.asyncapi as { asyncapi: string; info: Record<string, never>; channels: Record<string, never>; operations: Record<string, never> },
  });

/** Swagger UI, its assets served by the service itself from the swagger-ui-dist package. */
const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Dots Exchange API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/docs-init.js"></script>
</body>
</html>
`;

export const getApiDocs: Handler<'getApiDocs'> = () => Promise.resolve({
  status: 200,
  body: DOCS_PAGE,
  headers: { 'Content-Type': 'text/html' },
});
