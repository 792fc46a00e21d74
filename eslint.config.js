// ESLint (`npm run lint`): typescript-eslint's type-aware recommended rules, and the house limits on size.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'src/generated/', 'openapi/dist/', 'coverage/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: { allowDefaultProject: ['*.js', '*.ts', 'codegen/*.mjs'] }, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true }],
      // A longer file says why at its top, with its own limit.
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The build bootstrap runs on plain Node before any TypeScript tooling.
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    // Dredd's hook file: one line of CommonJS, given Dredd's hooks as the module 'hooks' (outside the TypeScript project).
    files: ['**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', globalThis: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The integration tests read responses as the wire JSON (test/support/service.ts types bodies `any`), and
    // every response is validated against the OpenAPI document at run time, which checks more than a
    // compile-time type would: the rules against using `any` would only ask for casts there.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // A test file is a list of cases in describe blocks; a migration is never edited once it has landed.
    files: ['**/*.test.ts', 'src/db/migrations/*.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
);
