import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundle } from "../../scripts/bundle";
import { routes } from "../../src/api/routes";
import { activities, orchestrations } from "../../src/pipeline/orchestrations";
import { changeFeedTriggers } from "../../src/pipeline/triggers";

const root = join(__dirname, "../..");

/** A stand-in for the Functions worker's own module: records what the app registers. */
const FAKE_WORKER = `
const registered = [];
module.exports = {
  setProgrammingModel() {},
  registerHook() { return { dispose() {} }; },
  log() {},
  registerFunction(metadata) { registered.push(metadata.name); return { dispose() {} }; },
};
process.on("exit", () => console.log(JSON.stringify(registered)));
`;

describe("the deployment package", () => {
  it("is one bundle that registers every function with the Functions worker, with no node_modules beside it", () => {
    // Only the bundle, as the function app receives it, with the worker's module where the worker provides it.
    const site = mkdtempSync(join(tmpdir(), "site-"));
    const { bytes } = bundle(root, join(site, "dist/app/index.js"));
    expect(bytes).toBeGreaterThan(100_000);
    mkdirSync(join(site, "node_modules/@azure/functions-core"), { recursive: true });
    writeFileSync(join(site, "node_modules/@azure/functions-core/index.js"), FAKE_WORKER);
    const run = spawnSync(process.execPath, ["-e", "require('./dist/app/index.js')"], { cwd: site, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const registered = JSON.parse(run.stdout.trim().split("\n").pop()!) as string[];
    const expected = [...routes.map((r) => r.name), ...changeFeedTriggers.map((t) => t.name), ...Object.keys(orchestrations), ...Object.keys(activities)];
    expect(registered.sort()).toEqual(expected.sort());
  }, 60_000);

  it("is what package.json names, what .funcignore ships, and what azd builds locally", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { main: string; scripts: Record<string, string> };
    expect(pkg.main).toBe("dist/app/index.js");
    expect(pkg.scripts.build).toContain("dist/scripts/bundle.js");
    const funcignore = readFileSync(join(root, ".funcignore"), "utf8").split("\n").filter((line) => line && !line.startsWith("#"));
    expect(funcignore).toEqual(["*", "!host.json", "!package.json", "!dist/", "dist/*", "!dist/app/"]);
    const azure = readFileSync(join(root, "azure.yaml"), "utf8");
    expect(azure).toMatch(/remoteBuild:\s*false/);
    expect(azure).toMatch(/azd 1\.23\.12 or later/);
  });
});
