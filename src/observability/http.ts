import type { HttpExtras } from '../app.js';
import type { ObservabilityConfig } from '../config.js';
import { cors } from '../http/cors.js';
import { httpCaching } from '../http/conditional.js';
import type { Services } from '../services.js';

/** The service's layers around the dispatcher: CORS when CORS_ORIGINS is set, HTTP caching always. */
export function observedHttp(services: Services, config: ObservabilityConfig): HttpExtras {
  const caching = httpCaching(services.document, config.catalogueMaxAgeSecs);
  return {
    before: config.corsOrigins.length > 0 ? [cors(services.document, config.corsOrigins)] : [],
    finish: (ctx) => {
      caching(ctx);
    },
  };
}
