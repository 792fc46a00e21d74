import type { Config } from './config.js';
import type { Db } from './db/knex.js';
import { AccountService } from './domain/accounts/service.js';
import { CatalogueAdminService } from './domain/catalogue/admin.js';
import { SystemService } from './domain/system/service.js';
// --- catalogue service imports ---

/** The domain services handlers call; one set per process. */
export interface Services {
  accounts: AccountService;
  system: SystemService;
  catalogueAdmin: CatalogueAdminService;
  // --- catalogue read services ---
  /** The bundled OpenAPI document, served at /openapi.json. */
  document: object;
}

export function createServices(db: Db, config: Config, document: object): Services {
  return {
    accounts: new AccountService(db, { startingBalance: config.startingBalance, tokenTtlSecs: config.tokenTtlSecs }),
    system: new SystemService(db),
    catalogueAdmin: new CatalogueAdminService(db),
    // --- catalogue read services ---
    document,
  };
}
