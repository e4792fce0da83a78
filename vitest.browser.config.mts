import { defineConfig } from "vitest/config";

/** `npm run test:browser`: the web front end in a real Chromium against `npm start` (see README, Testing). */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    // One file at a time: the chaos run's workload would starve the other file's browser session on a small machine.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ["default", ["json", { outputFile: "dist/browser-test-results.json" }]],
  },
});
