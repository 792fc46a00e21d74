import { forbidden } from '../../domain/errors.js';
import type { Step } from './call.js';

/** 403 when an API key lacks the operation's scope or the account its role: a caller refused here never learns the schema. */
export const role: Step = ({ route, caller: { account, key } }) => {
  if (key && !key.scopes.includes(route.entry.apiKeyScope!)) throw forbidden(`this API key lacks the '${route.entry.apiKeyScope}' scope`);
  if (route.entry.requiredRole && account?.role !== route.entry.requiredRole) throw forbidden(`requires role ${route.entry.requiredRole}`);
  return true;
};
