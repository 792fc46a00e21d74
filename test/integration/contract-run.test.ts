import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * `npm run test:contract` (Dredd against a service of its own, on its own embedded PostgreSQL), run here so
 * that its hundreds of sequential requests overlap the other integration files. Its summary is printed; the
 * run's whole output is shown when it fails.
 */
describe('the contract tests (contract-tests/run.ts)', () => {
  it('pass: every documented status of every operation passed, or skipped with a reason', async () => {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = execFile(process.execPath, ['--import', 'tsx', 'contract-tests/run.ts'], { maxBuffer: 64 * 1024 * 1024 }, (_error, stdout, stderr) =>
        resolve({ code: child.exitCode, output: `${stdout}${stderr}` }),
      );
    });
    const summary = output.indexOf('Contract test summary');
    console.log(summary >= 0 ? output.slice(summary) : output);
    expect(code, output).toBe(0);
  }, 900_000);
});
