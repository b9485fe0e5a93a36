import { defineConfig } from 'vitest/config';
import SlowFirst from './test/support/slow-first.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration and e2e tests start their own embedded store, simulator and local host.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Both cores: by default Vitest keeps one for itself, and the suite then ran one file at a
    // time (265 s against 180 to 198 s here, every test passing in both).
    maxWorkers: 2,
    // The slowest files first, so that none of them runs alone at the end (test/support/slow-first.ts).
    sequence: { sequencer: SlowFirst },
    setupFiles: ['test/support/setup.ts'],
    env: {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  },
});
