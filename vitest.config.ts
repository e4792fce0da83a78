import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // The app's tests, and each local runtime package's tests beside it.
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    // The browser tests need Chromium and run on their own: npm run test:browser.
    exclude: ["test/browser/**", "**/node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report is what .ci/run counts; the default reporter is for people.
    reporters: ["default", ["json", { outputFile: "dist/test-results.json" }]],
  },
});
