import { spawn, type ChildProcess } from 'node:child_process';
import { ApiClient, UNLIMITED } from './service.js';


export interface StartedService {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/**
 * Spawns `src/main.ts` with the given environment, as `npm start` runs it but in one process (node with
 * tsx's loader, not the tsx CLI, which would put a second process between a signal and the service).
 */
export function spawnMain(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', SEED: 'none', ...UNLIMITED, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs `src/main.ts` as `npm start` does and waits for its "listening" line. */
export function startMain(env: Record<string, string>): Promise<StartedService> {
  const child = spawnMain(env);
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

export function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
}

/**
 * Real service processes on one fresh test database (see createTestDatabase): started on demand, killed
 * if a test leaves them running. `db` reads that database directly.
 */
export class ProcessCluster {
  private readonly started: StartedService[] = [];

  constructor(
    readonly databaseUrl: string,
    private readonly env: Record<string, string>,
  ) {}

  async start(env: Record<string, string> = {}): Promise<{ process: StartedService; api: ApiClient }> {
    const started = await startMain({ DATABASE_URL: this.databaseUrl, ...this.env, ...env });
    this.started.push(started);
    return { process: started, api: new ApiClient(started.url) };
  }

  /** SIGTERM to each process still running; resolves with their exit codes. */
  async stop(...processes: StartedService[]): Promise<Array<number | null>> {
    for (const { child } of processes) child.kill('SIGTERM');
    return Promise.all(processes.map(({ child }) => exitOf(child)));
  }

  killAll(): void {
    for (const { child } of this.started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
