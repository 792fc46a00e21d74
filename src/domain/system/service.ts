import type { Db } from '../../db/knex.js';
import { pingDatabase } from '../../db/repositories/system.js';

/** Liveness of the service and its database. */
export class SystemService {
  constructor(private readonly db: Db) {}

  async isDatabaseUp(): Promise<boolean> {
    return pingDatabase(this.db).then(
      () => true,
      () => false,
    );
  }
}
