import { join } from "node:path";
import { defineConfig } from "vitest/config";

const TESTS = ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"];
// The browser tests need Chromium and run on their own: npm run test:browser.
const NOT_HERE = ["test/browser/**", "**/node_modules/**"];
/**
 * The files that need a module graph of their own, each for a process-wide thing it sets up
 * first: the process's OpenTelemetry providers with the test's own exporter or reader (they are
 * installed once per process), a module replaced with vi.mock before the module that registers
 * functions is imported, or an app's registrations loaded into @azure/functions-core.
 */
const OWN_MODULES = [
  "test/functions/http.test.ts",
  "test/functions/change-feeds-and-durable.test.ts",
  "test/e2e/telemetry.test.ts",
  "test/e2e/telemetry-failures.test.ts",
  "test/e2e/azure-monitor.test.ts",
  "test/local/ops.test.ts",
  "packages/local-host/test/durable/tracing.test.ts",
  "packages/local-host/test/worker/function-app.test.ts",
];

export default defineConfig({
  // The local host from its source, as the app's own code is: vitest then loads the app it
  // serves (functions/index.ts) through its own TypeScript loader, and tests and the package's
  // own tests share one copy of it.
  resolve: { alias: { "local-host": join(import.meta.dirname, "packages/local-host/src/index.ts") } },
  test: {
    // Vitest's default is one worker fewer than the machine's cores: one on a 2-core machine, where
    // the suite then used about one core, waiting on child processes, change feeds and timers more than
    // it computes. Three files at a time keep both cores busy.
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report is what .ci/run counts; the default reporter is for people.
    reporters: ["default", ["json", { outputFile: "dist/test-results.json" }]],
    projects: [
      {
        // The files of one worker share their modules: each file importing the app, the SDK and
        // the local runtime anew was a fifth of the suite's time. Every test here builds what it
        // uses (a system, a server, a container) and stops it, so nothing passes from file to file.
        extends: true,
        test: { name: "shared", include: TESTS, exclude: [...NOT_HERE, ...OWN_MODULES], isolate: false },
      },
      { extends: true, test: { name: "own modules", include: OWN_MODULES, exclude: NOT_HERE } },
    ],
  },
});
