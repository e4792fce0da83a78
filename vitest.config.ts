import { join } from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // The local host from its source, as the app's own code is: vitest then loads the app it
  // serves (functions/index.ts) through its own TypeScript loader, and tests and the package's
  // own tests share one copy of it.
  resolve: { alias: { "local-host": join(__dirname, "packages/local-host/src/index.ts") } },
  test: {
    // The app's tests, and each local runtime package's tests beside it.
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    // The browser tests need Chromium and run on their own: npm run test:browser.
    exclude: ["test/browser/**", "**/node_modules/**"],
    // Vitest's default is one worker fewer than the machine's cores: one on a 2-core machine, where
    // the suite then used about one core, waiting on child processes, change feeds and timers more than
    // it computes. Three files at a time keep both cores busy.
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report is what .ci/run counts; the default reporter is for people.
    reporters: ["default", ["json", { outputFile: "dist/test-results.json" }]],
  },
});
