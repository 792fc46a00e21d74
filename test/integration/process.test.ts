import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exitOf, spawnMain, startMain } from '../support/processes.js';

function postgresProcessesFor(dataDir: string): string[] {
  const lines = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n');
  return lines.filter((line) => line.includes(dataDir));
}

describe('the service process', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('refuses to start with a non-zero fee setting, naming it', async () => {
    const child = spawnMain({ PLATFORM_TAKER_FEE_BPS: '5' });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await exitOf(child);
    expect(code).not.toBe(0);
    expect(stderr).toContain('PLATFORM_TAKER_FEE_BPS=5 is refused');
  });

  it('runs on the embedded database, keeps its data across restarts, and stops cleanly on SIGTERM', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'dots-process-'));
    await chmod(dataDir, 0o755);
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir };

    const first = await startMain(env);
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    const register = await fetch(`${first.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'durable@example.com', password: 'still-here-123' }),
    });
    expect(register.status).toBe(201);
    expect(postgresProcessesFor(dataDir).length).toBeGreaterThan(0);
    first.child.kill('SIGTERM');
    expect(await exitOf(first.child)).toBe(0);
    expect(first.output()).not.toContain('still-here-123');
    expect(postgresProcessesFor(dataDir)).toEqual([]);

    const second = await startMain(env);
    const login = await fetch(`${second.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'durable@example.com', password: 'still-here-123' }),
    });
    expect(login.status).toBe(200);
    second.child.kill('SIGINT');
    expect(await exitOf(second.child)).toBe(0);
    expect(postgresProcessesFor(dataDir)).toEqual([]);
  }, 90_000);
});
