// The import rules of docs/architecture.md ("Layers"), checked by `npm run lint:deps`.

/** The layers of src/, top to bottom: a module imports from its own layer or the ones below it. */
const LAYERS = [
  ['entry', '^src/(main|server|app|services|api-key-secrets)[.]ts$|^src/process/'],
  ['transport', '^src/(http|realtime|observability)/'],
  ['handlers', '^src/handlers/'],
  ['presenters', '^src/presenters/'],
  ['domain', '^src/domain/'],
  ['db', '^src/db/'],
  ['base', '^src/(config|logger)[.]ts$|^src/admission/'],
];

const upward = LAYERS.slice(1).map(([name, path], index) => ({
  name: `${name}-imports-down-only`,
  comment: `${name} (${path}) imports only from its own layer and those below it (docs/architecture.md, Layers)`,
  severity: 'error',
  from: { path },
  to: { path: LAYERS.slice(0, index + 1).map(([, above]) => above) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no import cycles: a module and what it imports are never imported back by them',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'transports-apart',
      comment: 'http/, realtime/ and observability/ do not import one another: what they share lives in a layer below',
      severity: 'error',
      from: { path: '^src/(http|realtime|observability)/' },
      to: { path: '^src/(http|realtime|observability)/', pathNot: '^src/$1/' },
    },
    {
      name: 'generated-for-http',
      comment: 'the types and validators generated from the OpenAPI document are for the HTTP side, not the domain or the database',
      severity: 'error',
      from: { path: '^src/(domain|db)/|^src/(config|logger)[.]ts$' },
      to: { path: '^src/generated/' },
    },
    {
      name: 'bench-public-entry-points',
      comment: 'bench/ uses the service through its public entry points only; a baseline carries its own SQL',
      severity: 'error',
      from: { path: '^bench/' },
      to: {
        path: '^src/',
        pathNot: [
          '^src/(server|services|config|logger)[.]ts$',
          '^src/db/(embedded|knex|migrate)[.]ts$',
          '^src/db/seed/',
          '^src/generated/',
        ],
      },
    },
    {
      name: 'src-not-to-tools',
      comment: 'the service does not import its tests, benchmarks or build tools',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|codegen|contract-tests)/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'every import resolves to a file or an installed package (Dredd gives its hook files their `hooks` module)',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true, pathNot: '^hooks$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/request-validators[.]cjs$' },
    // type-only imports are imports too: they make cycles and cross layers like any other
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
