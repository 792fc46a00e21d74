import type { Db } from '../../db/knex.js';
import { pingDatabase } from '../../db/repositories/system.js';

/** Where the process is in its life: readiness answers 503 unless 'ready'. */
export type Phase = 'starting' | 'ready' | 'draining';

export type Readiness = { ready: true } | { ready: false; reason: 'starting' | 'draining' | 'database unavailable' };

/** A readiness probe waits this long for the database, then calls it unavailable (probes have short timeouts of their own). */
const READINESS_PING_TIMEOUT_MS = 2_000;

/** Liveness and readiness of the service and its database. */
export class SystemService {
  private current: Phase = 'starting';
  #databaseLost = false;

  constructor(private readonly db: Db) {}

  /** Liveness: false once the embedded database is gone for good (the process is then restarted whole). */
  get live(): boolean {
    return !this.#databaseLost;
  }

  /** The embedded database stopped and could not be started again. */
  markDatabaseLost(): void {
    this.#databaseLost = true;
  }

  get phase(): Phase {
    return this.current;
  }

  /** Started: readiness follows the database from now on. */
  markReady(): void {
    if (this.current === 'starting') this.current = 'ready';
  }

  /** A stop began: readiness is 503 for good. */
  markDraining(): void {
    this.current = 'draining';
  }

  async isDatabaseUp(): Promise<boolean> {
    return pingDatabase(this.db).then(
      () => true,
      () => false,
    );
  }

  async readiness(): Promise<Readiness> {
    if (this.current !== 'ready') return { ready: false, reason: this.current };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), READINESS_PING_TIMEOUT_MS)));
    const up = await Promise.race([this.isDatabaseUp(), timedOut]).finally(() => clearTimeout(timer));
    if (!up) return { ready: false, reason: 'database unavailable' };
    // a stop may have begun while the database answered
    return this.current === 'ready' ? { ready: true } : { ready: false, reason: this.current };
  }
}
