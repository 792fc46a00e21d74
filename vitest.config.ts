import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The integration files that take longest, longest first (measured on two cores; the contract run and the
 * browser file's Chromium install, when it is missing, mostly wait). They start first, so that none of them
 * is left running alone at the end; vitest's own order (the previous run's durations, else file size) follows.
 */
const LONGEST_FIRST = [
  'contract-run',
  'browser',
  'deployment',
  'trading-processes',
  'generated-clients',
  'order-sessions',
  'order-sessions-processes',
  'fuzz',
  'trading-service',
  'compat-events',
  'orders-api',
  'realtime-processes',
].map((name) => `/test/integration/${name}.test.ts`);

const rank = (spec: TestSpecification) => {
  const index = LONGEST_FIRST.findIndex((file) => spec.moduleId.endsWith(file));
  return index === -1 ? LONGEST_FIRST.length : index;
};

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

/**
 * unit: pure tests next to the code (src/, codegen/).
 * integration: the real service on a real PostgreSQL (embedded, or TEST_DATABASE_URL), every response
 * validated against the bundled OpenAPI document.
 */
export default defineConfig({
  test: {
    sequence: { sequencer: LongestFirst },
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
          // Two cores, but much of an integration file's time is spent waiting (on sleeps of the service's
          // timers, child processes, the network): a third worker fills it. Runs after the unit tests.
          maxWorkers: 3,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
