import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report is what .ci/run counts; the default reporter is for people.
    reporters: ["default", ["json", { outputFile: "dist/test-results.json" }]],
  },
});
