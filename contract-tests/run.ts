/**
 * `npm run test:contract`: Dredd 14.1 against the real service.
 *
 * Starts the service in-process (startService) on a fresh embedded PostgreSQL in a new temp directory,
 * runs Dredd with the hooks of dredd-hooks.ts against the bundled document, stops the service and removes
 * the directory. Fails (exit 1) when Dredd reports a failure or an error, when a documented status of an
 * operation was neither passed nor skipped with a reason written in the hooks (SKIPS), when an
 * operation has no passing transaction, or when no response body was checked against its schema.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { rmSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenAPIV3 } from 'openapi-types';
import { listOperations } from '../codegen/operations.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { DOCUMENT_PATH, startService, type RunningService } from '../src/server.js';
import type { installHooks, skipReason } from './dredd-hooks.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Dredd requires hook files (CommonJS only); this one installs the hooks of dredd-hooks.ts, loaded here. */
const HOOKS_PATH = path.join(ROOT, 'contract-tests', 'hooks.cjs');
declare global {
  var installContractHooks: typeof installHooks;
}

/** The parts of Dredd's JS API used here (dredd ships no types). */
type DreddStats = { tests: number; failures: number; errors: number; passes: number; skipped: number };
interface DreddTest {
  message?: string;
  origin?: { resourceName?: string };
  request?: { method?: string };
  expected?: { statusCode?: string | number; bodySchema?: unknown };
}
type DreddConstructor = new (config: Record<string, unknown>) => { run(callback: (error: Error | null, stats: DreddStats) => void): void };

type Outcome = 'pass' | 'fail' | 'error' | 'skip';
type SkipReason = typeof skipReason;

function runDredd(config: Record<string, unknown>): Promise<DreddStats> {
  const require = createRequire(import.meta.url);
  const Dredd = require('dredd') as DreddConstructor;
  return new Promise((resolve, reject) => {
    new Dredd(config).run((error, stats) => (error ? reject(error) : resolve(stats)));
  });
}

/** An operation of the document, its method upper-cased, with its documented statuses. */
type DocumentedOperation = Omit<ReturnType<typeof listOperations>[number], 'method'> & { method: string; statuses: string[] };

/**
 * An isolated service: only what the contract needs from the environment, never DATABASE_URL. Request
 * budgets on, as the hooks expect (CONTRACT_BUDGET): every request comes from its own X-Forwarded-For
 * address, and 429 is produced by spending a fresh client's budget.
 */
function contractConfig(dataDir: string, admin: { email: string; password: string }, perClient: number) {
  const budget = `${perClient}/10`;
  return loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    SEED: 'demo',
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    LOG_LEVEL: 'warn',
    TRUST_PROXY: '127.0.0.1',
    RATE_LIMIT_PUBLIC_READS: budget,
    RATE_LIMIT_PRIVATE_READS: budget,
    RATE_LIMIT_ORDER_WRITES: budget,
    RATE_LIMIT_LOGIN: budget,
    RATE_LIMIT_REGISTRATION: budget,
    // The hooks register and sign in several accounts at once (fixtures run concurrently): they wait for
    // the hashing slot instead of being refused.
    PASSWORD_HASH_QUEUE: '100',
  });
}

/** Every documented status passed or skipped with a reason, every operation passed once: adds what is not so to `problems`; returns the reasoned skips. */
function checkCoverage(operations: DocumentedOperation[], outcomes: Map<string, Outcome[]>, skipReason: SkipReason, problems: string[]): string[] {
  const skipsWithReason: string[] = [];
  for (const op of operations) {
    let passed = false;
    let allSkippedWithReason = op.statuses.length > 0;
    for (const status of op.statuses) {
      const key = `${op.operationId} ${status}`;
      const seen = outcomes.get(key) ?? [];
      const reason = skipReason(op, status);
      if (seen.includes('pass')) passed = true;
      if (!(seen.length > 0 && seen.every((o) => o === 'skip') && reason)) allSkippedWithReason = false;
      if (seen.length === 0) problems.push(`${key} (${op.method} ${op.path}): documented, but no Dredd transaction ran for it`);
      for (const outcome of seen.filter((o) => o === 'skip')) {
        if (reason) skipsWithReason.push(`${key} (${op.method} ${op.path}): ${reason}`);
        else problems.push(`${key} (${op.method} ${op.path}): ${outcome}ped without a reason in contract-tests/dredd-hooks.ts SKIPS`);
      }
    }
    if (!passed && !allSkippedWithReason) problems.push(`${op.operationId} (${op.method} ${op.path}): no passing transaction`);
  }
  for (const key of outcomes.keys()) {
    if (!operations.some((op) => op.statuses.some((status) => `${op.operationId} ${status}` === key))) {
      problems.push(`${key}: a transaction that matches no documented operation and status`);
    }
  }
  return skipsWithReason;
}

function printSummary(run: {
  operations: DocumentedOperation[];
  outcomes: Map<string, Outcome[]>;
  stats: DreddStats;
  counts: Record<Outcome, number>;
  bodiesChecked: number;
  skipsWithReason: string[];
  failures: string[];
  problems: string[];
}): void {
  const { operations, outcomes, stats, counts, bodiesChecked, skipsWithReason, failures, problems } = run;
  const passedOperations = operations.filter((op) => op.statuses.some((s) => outcomes.get(`${op.operationId} ${s}`)?.includes('pass'))).length;
  console.log('');
  console.log('Contract test summary');
  console.log(`  document:     ${path.relative(ROOT, DOCUMENT_PATH)}: ${operations.length} operations, ${operations.reduce((n, op) => n + op.statuses.length, 0)} documented statuses`);
  console.log(`  operations:   ${passedOperations} of ${operations.length} with a passing transaction`);
  console.log(`  transactions: ${stats.tests} run by Dredd: ${counts.pass} passed, ${counts.fail} failed, ${counts.error} errors, ${counts.skip} skipped`);
  console.log(`  bodies:       ${bodiesChecked} responses checked against their documented JSON Schema`);
  if (skipsWithReason.length > 0) {
    console.log('  skipped with a reason:');
    for (const line of skipsWithReason) console.log(`    - ${line}`);
  }
  if (failures.length > 0) {
    console.log('  failed transactions:');
    for (const line of failures) console.log(`    - ${line}`);
  }
  if (problems.length > 0) {
    console.log('  coverage problems:');
    for (const line of problems) console.log(`    - ${line}`);
  }
}

async function main(): Promise<number> {
  let documentText: string;
  try {
    documentText = await readFile(DOCUMENT_PATH, 'utf8');
  } catch {
    console.error(`contract tests: ${path.relative(ROOT, DOCUMENT_PATH)} is missing; run npm run codegen first`);
    return 1;
  }
  // Imported once the document is there: the hooks' client reads it as it loads.
  const { CONTRACT_BUDGET, installHooks, skipReason } = await import('./dredd-hooks.js');
  // Every operation of the bundled document with its documented statuses.
  const operations = listOperations(JSON.parse(documentText) as OpenAPIV3.Document).map((op) => ({
    ...op,
    method: op.method.toUpperCase(),
    statuses: Object.keys(op.operation.responses),
  }));

  // The postgres OS user (when run as root) must reach the data directory: os.tmpdir(), never /root.
  const dataDir = await mkdtemp(path.join(tmpdir(), 'dots-contract-'));
  await chmod(dataDir, 0o755);
  const admin = { email: 'contract-admin@example.com', password: randomBytes(16).toString('hex') };
  // The hooks run in this process and read these.
  process.env.ADMIN_EMAIL = admin.email;
  process.env.ADMIN_PASSWORD = admin.password;
  globalThis.installContractHooks = installHooks;

  let service: RunningService | undefined;
  let cleanedUp: Promise<void> | undefined;
  const cleanup = () =>
    (cleanedUp ??= (async () => {
      await service?.stop().catch((error: unknown) => console.error('contract tests: stopping the service failed:', error));
      await rm(dataDir, { recursive: true, force: true });
    })());
  // The directory is removed on exit whatever the path, an interrupted cleanup included.
  process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  const interrupted = (signal: NodeJS.Signals) => {
    console.error(`contract tests: ${signal}, cleaning up`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);

  const outcomes = new Map<string, Outcome[]>(); // "<operationId> <status>" -> outcomes of its transactions
  const failures: string[] = [];
  const problems: string[] = [];
  let counts = { pass: 0, fail: 0, error: 0, skip: 0 };
  let bodiesChecked = 0; // transactions whose response body Dredd checked against its schema
  let dreddFailures = 0; // Dredd's own count of failures and errors, in case an event was missed
  const byRoute = new Map(operations.map((op) => [`${op.method} ${op.path}`, op]));

  try {
    const config = contractConfig(dataDir, admin, CONTRACT_BUDGET);
    const started = Date.now();
    service = await startService(config, createLogger(config.logLevel));
    await service.ready;
    console.log(`contract tests: service at ${service.url} (embedded PostgreSQL in ${dataDir}, started in ${Date.now() - started} ms)`);

    const keyOf = (test: DreddTest) => {
      const op = byRoute.get(`${(test.request?.method ?? '').toUpperCase()} ${test.origin?.resourceName ?? ''}`);
      const status = String(test.expected?.statusCode ?? '?');
      return { key: `${op?.operationId ?? `${test.request?.method} ${test.origin?.resourceName}`} ${status}`, label: `${test.request?.method} ${test.origin?.resourceName} -> ${status}` };
    };
    const record = (outcome: Outcome, test: DreddTest, detail?: string) => {
      counts = { ...counts, [outcome]: counts[outcome] + 1 };
      if (outcome !== 'skip' && test.expected?.bodySchema) bodiesChecked += 1;
      const { key, label } = keyOf(test);
      outcomes.set(key, [...(outcomes.get(key) ?? []), outcome]);
      if (outcome === 'fail' || outcome === 'error') {
        // Gavel lists header, then body, then status code errors: a wrong status explains the rest, so it goes first.
        const lines = (detail ?? test.message ?? '').trim().split('\n').filter(Boolean);
        const ordered = [...lines.filter((l) => l.startsWith('statusCode:')), ...lines.filter((l) => !l.startsWith('statusCode:'))];
        failures.push(`${outcome === 'fail' ? 'FAIL ' : 'ERROR'} ${key} (${label}): ${ordered.slice(0, 3).join('; ')}${ordered.length > 3 ? '; ...' : ''}`);
      }
    };
    const emitter = new EventEmitter();
    emitter.on('test pass', (test: DreddTest) => record('pass', test));
    emitter.on('test fail', (test: DreddTest) => record('fail', test));
    emitter.on('test skip', (test: DreddTest) => record('skip', test));
    emitter.on('test error', (error: Error, test: DreddTest) => record('error', test, error?.message));

    const stats = await runDredd({
      endpoint: service.url,
      path: [DOCUMENT_PATH],
      hookfiles: [HOOKS_PATH],
      // Dredd's OpenAPI 3 parser warns about every keyword it does not use (tags, formats, lengths...).
      loglevel: process.env.DREDD_LOGLEVEL ?? 'error',
      // DREDD_DETAILS=1 prints request and response of passing transactions too.
      details: process.env.DREDD_DETAILS === '1',
      emitter,
      custom: { cwd: ROOT },
    });
    dreddFailures = stats.failures + stats.errors;
    const reported = counts.pass + counts.fail + counts.error + counts.skip;
    if (reported < stats.tests) problems.push(`Dredd ran ${stats.tests} transactions but reported an outcome for ${reported}`);

    if (bodiesChecked === 0) problems.push('no response body was checked against its schema: the hooks did not load (Dredd skips a hook file it cannot require)');

    const skipsWithReason = checkCoverage(operations, outcomes, skipReason, problems);
    printSummary({ operations, outcomes, stats, counts, bodiesChecked, skipsWithReason, failures, problems });
  } catch (error) {
    problems.push(`the run did not complete: ${error instanceof Error ? error.message : String(error)}`);
    console.error('contract tests:', error);
  } finally {
    await cleanup();
  }

  // Failed: Dredd's failures and errors, plus each coverage problem.
  const failed = Math.max(counts.fail + counts.error, dreddFailures) + problems.length;
  console.log(`${counts.pass} passed, ${failed} failed, ${counts.skip} skipped`);
  return failed > 0 ? 1 : 0;
}

// Exit explicitly, with the run's verdict, whatever handles are still open.
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('contract tests:', error);
    process.exit(1);
  },
);
