import { defineConfig } from 'vitest/config';

/**
 * unit: pure tests next to the code (src/, codegen/).
 * integration: the real service on a real PostgreSQL (embedded, or TEST_DATABASE_URL), every response
 * validated against the bundled OpenAPI document.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'codegen/**/*.test.ts', 'test/support/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
          // Two cores: more workers only fight over the CPU the database needs; runs after the unit tests.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
