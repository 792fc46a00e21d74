/**
 * npm run build: the service compiled to dist/ (JavaScript that plain `node` runs, generated code included),
 * stamped with a hash of everything it was made from.
 *
 * `--if-stale` (npm start, npm install): nothing to do when dist/ was made from exactly the present sources,
 * so that a production install (devDependencies omitted) starts a built tree as it is. Plain JavaScript:
 * it must run where TypeScript and tsx are not installed.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const stamp = path.join(dist, '.inputs-sha256');
/** What dist/ is made from. src/generated is made from the rest (codegen), tests are not built. */
const INPUTS = ['src', 'openapi/openapi.yaml', 'openapi/paths', 'openapi/components', 'codegen', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
/** @param {string} file */
const isInput = (file) => !file.startsWith(`src${path.sep}generated${path.sep}`) && !file.endsWith('.test.ts');

/**
 * @param {string} relative
 * @returns {string[]}
 */
function filesUnder(relative) {
  const absolute = path.join(root, relative);
  if (!existsSync(absolute)) return [];
  if (!statSync(absolute).isDirectory()) return [relative];
  return readdirSync(absolute, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

function inputsHash() {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap(filesUnder).filter(isInput).sort()) hash.update(`${file}\0`).update(readFileSync(path.join(root, file))).update('\0');
  return hash.digest('hex');
}

/**
 * Runs a step of the build; a SIGTERM or SIGINT meanwhile (npm start stopped while it builds) is passed to
 * the step, and the build ends with it, so that no compiler is left running.
 *
 * @param {string} command
 * @param {string[]} args
 * @returns {Promise<void>}
 */
function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit' });
    const forward = (/** @type {NodeJS.Signals} */ signal) => child.kill(signal);
    process.on('SIGTERM', forward).on('SIGINT', forward);
    child.once('exit', (code, signal) => {
      process.off('SIGTERM', forward).off('SIGINT', forward);
      if (code !== 0) process.exit(code ?? 128 + (constants.signals[/** @type {NodeJS.Signals} */ (signal)] ?? 1));
      resolve();
    });
  });
}

const hash = inputsHash();
if (process.argv.includes('--if-stale') && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === hash) process.exit(0);

const bin = (/** @type {string} */ name) => path.join(root, 'node_modules', '.bin', name);
if (!existsSync(bin('tsc')) || !existsSync(bin('tsx'))) {
  console.error(
    'dots-exchange: dist/ is missing or older than the sources, and building it needs the devDependencies, which are not installed:\n' +
      'run `npm install` (or `npm ci`) with them, then `npm run build`; a production install (--omit=dev) starts a tree built beforehand.',
  );
  process.exit(1);
}
await run(bin('tsx'), ['codegen/index.ts', '--if-stale']);
// Built beside dist/ and swapped in, so that dist/ is never a half-written tree.
const next = `${dist}.next`;
rmSync(next, { recursive: true, force: true });
await run(bin('tsc'), ['-p', 'tsconfig.build.json', '--outDir', next]);
// tsc copies no JavaScript: the precompiled request validators go beside the modules that require them.
copyFileSync(path.join(root, 'src/generated/request-validators.cjs'), path.join(next, 'generated/request-validators.cjs'));
// Nor SQL: the SQL functions' bodies, read at startup by src/db/sql-functions.ts from the folder beside it.
cpSync(path.join(root, 'src/db/functions'), path.join(next, 'db/functions'), { recursive: true });
writeFileSync(path.join(next, path.basename(stamp)), `${hash}\n`);
rmSync(dist, { recursive: true, force: true });
renameSync(next, dist);
console.log('build: dist/ is up to date');
