import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/** The commands a person runs, as npm runs them (compiled by `tsc -b`, which npm test runs first). */
const ROOT = join(__dirname, "../..");
const COMMANDS: Record<string, string> = {
  "npm run token": "dist/scripts/token.js",
  "npm run seed": "dist/scripts/seed.js",
  "npm run dead-letters": "dist/scripts/dead-letters.js",
  "npm run bench": "dist/bench/run.js",
  "npm run chaos": "dist/chaos/run.js",
  "npm run cosmos": "packages/embedded-cosmos/dist/cli.js",
  "npm run smoke": "dist/scripts/smoke.js",
  "npm run rebuild-copies": "dist/scripts/rebuild-copies.js",
  "npm run map-stack": "dist/scripts/map-stack.js",
  "npm start": "dist/local/start.js",
  "npm run calibrate": "dist/bench/calibrate.js",
  "npm run capacity": "dist/bench/capacity.js",
  "npm run provision": "dist/scripts/provision.js",
  "npm run flows": "dist/scripts/flows.js",
};

const run = (script: string, args: string[]) =>
  spawnSync(process.execPath, [join(ROOT, script), ...args], {
    encoding: "utf8",
    timeout: 20_000,
    env: { ...process.env, COSMOS_ENDPOINT: "", COSMOS_KEY: "" },
  });

describe("every command a person runs", () => {
  it.each(Object.entries(COMMANDS))("%s answers --help with its usage, flags, defaults and examples", (name, script) => {
    const help = run(script, ["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain(`usage: ${name}`);
    expect(help.stdout).toMatch(/\n {2}--help {2,}this text\n/);
    expect(help.stdout).toMatch(/examples:\n {2}(\S+=\S+ )*npm (run|start)/);
  });

  it.each(Object.entries(COMMANDS))("%s refuses an unknown flag with that usage: exit 2, no stack trace", (name, script) => {
    const refused = run(script, ["--no-such-flag"]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(`${name}: Unknown option '--no-such-flag'`);
    expect(refused.stderr).toContain(`usage: ${name}`);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(refused.stdout).toBe("");
  });

  it("npm run func answers --help with its own usage (its other flags go to func start)", () => {
    const help = run("dist/scripts/func.js", ["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("usage: npm run func");
    expect(help.stdout).toMatch(/examples:\n {2}npm run func/);
  });

  it("npm run token signs no token for a flag it does not know (it signed one for a user named --help)", () => {
    expect(run("dist/scripts/token.js", ["--help"]).stdout).not.toMatch(/^ey/);
    expect(run("dist/scripts/token.js", ["--user"]).status).toBe(2);
  });
});
