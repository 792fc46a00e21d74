import { readJsonBodyAndText, type BodyOptions } from '../body.js';
import type { Step } from './call.js';

/** The JSON body of an operation that takes one (415, 408, 413, 400), read only once the caller's checks have passed. */
export function body(options: BodyOptions): Step {
  return async (call) => {
    if (call.route.readsBody) ({ value: call.request.body, text: call.bodyText } = await readJsonBodyAndText(call.koa, options));
    return true;
  };
}
