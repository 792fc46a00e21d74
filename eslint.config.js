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
    // A test file is a list of cases in describe blocks; a migration is never edited once it has landed.
    files: ['**/*.test.ts', 'src/db/migrations/*.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
);
