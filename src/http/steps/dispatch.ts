import type { ClientAddressing } from '../../config.js';
import type { Services } from '../../domain/services.js';
import { sendJson } from '../errors.js';
import { clampQuery } from '../query.js';
import { clientAddress } from '../../admission/client-address.js';
import type { ApiRequest } from '../../handlers/types.js';
import type { Step } from './call.js';

/** An object or array Koa would send as JSON (not a Buffer, stream, Blob or Response). */
function isJsonValue(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (Array.isArray(body) || Object.getPrototypeOf(body) === Object.prototype);
}

/** The last step: the operation's handler, with the request as validated, and its reply as the answer. */
export function dispatch(services: Services, clients: ClientAddressing): Step {
  return async ({ koa, route, caller, request, query, params }) => {
    const handed = {
      operationId: route.operationId,
      // Already percent-decoded once by the path parser (as openapi-backend's bath-es5); not decoded again.
      params,
      query: clampQuery(query, route.clampMaxima),
      body: request.body as unknown,
      account: caller.account,
      apiKey: caller.key,
      token: caller.token,
      requestId: (koa.state.requestId as string | undefined) ?? '',
      clientAddress: route.limitClass === 'login' || route.limitClass === 'registration' ? clientAddress(koa.req, clients) : undefined,
    } as unknown as ApiRequest<never>;
    const reply = await route.implementation(handed, { services, koa });
    // ctx.response, not Koa's ctx.* shortcuts (see requestLifecycle)
    koa.response.status = Number(reply.status);
    if (reply.headers) koa.response.set(reply.headers);
    if (isJsonValue(reply.body)) sendJson(koa, reply.body as object);
    else koa.response.body = reply.body;
    return true;
  };
}
