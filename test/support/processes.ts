import { spawn, type ChildProcess } from 'node:child_process';


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
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', SEED: 'none', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
