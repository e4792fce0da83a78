import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localSystem, within, type Client } from "../support/system";

/** `npm run smoke` is what a user runs after deploying; here it checks `npm start`'s host. */
let app: Client;
beforeAll(async () => (app = await localSystem({ webDir: join(__dirname, "../../dist/web") })));
afterAll(() => app.stop());

const run = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    // Asynchronously: the host it checks runs in this very process.
    execFile(process.execPath, [join(__dirname, "../../dist/scripts/smoke.js"), ...args], (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

describe("npm run smoke", () => {
  it("passes every step against npm start, prints a table with timings, and cleans up", async () => {
    const { code, stdout, stderr } = await run("--url", app.system.url);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    for (const step of ["C1 create", "Q1", "C2", "C3", "C4", "Q2", "Q4", "Q5", "Q3 the change feed", "Q6 the change feed", "C1 rename", "clean up"])
      expect(stdout).toMatch(new RegExp(`pass  ${step}`));
    expect(stdout).toMatch(/smoke: 12 passed, 0 failed/);
    expect(stdout).toMatch(/pass {2}Q2 \S.* +\d+ ms/);
    // The deleted post leaves the feed once the change feed has carried the delete.
    await within(20_000, async () => (await app.call("GET", "/feed?limit=100")).body.items.every((p: { title: string }) => !p.title.startsWith("Smoke test")));
  }, 120_000);

  it("fails, saying why, without a token where there is no dev sign-in", async () => {
    const { code, stderr } = await run("--url", "http://127.0.0.1:9/api");
    expect(code).toBe(1);
    expect(stderr).toMatch(/--token/);
  });
});
