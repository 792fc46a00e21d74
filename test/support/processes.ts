import { spawn, type ChildProcess } from 'node:child_process';
import { ApiClient, UNLIMITED } from './service.js';


export interface StartedService {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/**
 * Spawns the compiled service (`dist/main.js`, kept current by the integration setup) with the given
 * environment, as `npm start` runs it but without npm between a signal and the service.
 */
export function spawnMain(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['dist/main.js'], { env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', SEED: 'none', ...UNLIMITED, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs `dist/main.js` as `npm start` does and waits for its "listening" line. */
export function startMain(env: Record<string, string>): Promise<StartedService> {
  return listening(spawnMain(env));
}

/** Resolves once the service `child` runs says it listens (on its stdout or stderr); rejects if it exits first. */
export function listening(child: ChildProcess): Promise<StartedService> {
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)".*"msg":"Dots Exchange is listening"/.exec(output);
      if (match) resolve({ child, url: match[1]!, output: () => output });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${output}`)));
  });
}

/** The HTTP workers (by cluster id) whose access log lines a service's output holds. */
export function workersThatServed(output: string): Set<number> {
  return new Set([...output.matchAll(/"worker":(\d+)[^\n]*"msg":"request"/g)].map((match) => Number(match[1])));
}

export function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
}

/**
 * Real service processes on one fresh test database (see createTestDatabase): started on demand, killed
 * if a test leaves them running. `db` reads that database directly.
 *
 * With `workers` > 1, one service of that many HTTP workers (WEB_CONCURRENCY) stands for every process a
 * test starts while it runs: the test's "processes" are then workers behind one port, and its concurrent
 * requests, on separate connections, are spread over them.
 */
export class ProcessCluster {
  private readonly started: StartedService[] = [];

  constructor(
    readonly databaseUrl: string,
    private readonly env: Record<string, string>,
    readonly workers = 1,
  ) {}

  async start(env: Record<string, string> = {}): Promise<{ process: StartedService; api: ApiClient }> {
    const running = this.started.at(-1);
    if (this.workers > 1 && running && running.child.exitCode === null && running.child.signalCode === null) {
      return { process: running, api: new ApiClient(running.url) };
    }
    const started = await startMain({ DATABASE_URL: this.databaseUrl, WEB_CONCURRENCY: String(this.workers), ...this.env, ...env });
    this.started.push(started);
    return { process: started, api: new ApiClient(started.url) };
  }

  /** SIGTERM to each process still running; resolves with their exit codes (a process named twice, twice). */
  async stop(...processes: StartedService[]): Promise<Array<number | null>> {
    for (const { child } of new Set(processes)) child.kill('SIGTERM');
    return Promise.all(processes.map(({ child }) => exitOf(child)));
  }

  killAll(): void {
    for (const { child } of this.started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
