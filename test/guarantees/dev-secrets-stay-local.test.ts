import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startCosmos } from "embedded-cosmos";
import { LOCAL_DEV_SECRET } from "../../local/dev-auth";
import { loadSettings } from "../../src/config";

/**
 * Security by default: no usable development secret ships with the project, and the local
 * host's built-in one is never accepted by a system that talks to a real account.
 */
const root = join(__dirname, "../..");

/** Runs `npm start`'s compiled entry point until it is ready or exits; returns what it printed. */
function start(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [join(root, "dist/local/start.js"), "--in-memory"], {
    env: { ...process.env, PORT: "0", LOG_REQUESTS: "false", AUTH_DEV_SECRET: "", AUTH_ISSUER: "", AUTH_AUDIENCE: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/Blog API ready/.test(output)) {
        child.kill("SIGKILL");
        resolve({ code: null, output });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => resolve({ code, output }));
  });
}

describe("development secrets stay local", () => {
  it("local.settings.sample.json ships no usable AUTH_DEV_SECRET", () => {
    const sample = JSON.parse(readFileSync(join(root, "local.settings.sample.json"), "utf8")) as { Values: Record<string, string> };
    expect(sample.Values.AUTH_DEV_SECRET ?? "").toBe("");
    expect(loadSettings({ ...sample.Values, COSMOS_ENDPOINT: "https://x.documents.azure.com:443/" }).auth.devSecret).toBeUndefined();
  });

  it("npm start against an account refuses to run on the built-in dev secret", async () => {
    const cosmos = await startCosmos();
    try {
      const { code, output } = await start({ COSMOS_ENDPOINT: cosmos.endpoint, COSMOS_KEY: cosmos.key });
      expect(code).toBe(1);
      expect(output).toContain("AUTH_DEV_SECRET");
    } finally {
      await cosmos.stop();
    }
  }, 30_000);

  it("npm start against an account refuses the built-in dev secret even when AUTH_DEV_SECRET spells it out, naming the setting", async () => {
    const cosmos = await startCosmos();
    try {
      const { code, output } = await start({ COSMOS_ENDPOINT: cosmos.endpoint, COSMOS_KEY: cosmos.key, AUTH_DEV_SECRET: LOCAL_DEV_SECRET });
      expect(code).toBe(1);
      expect(output).toMatch(/AUTH_DEV_SECRET.*published/);
    } finally {
      await cosmos.stop();
    }
  }, 30_000);

  it("the app's settings (Azure, func start) refuse the built-in dev secret", () => {
    expect(() => loadSettings({ COSMOS_ENDPOINT: "https://x.documents.azure.com:443/", AUTH_DEV_SECRET: LOCAL_DEV_SECRET })).toThrow(/AUTH_DEV_SECRET/);
  });
});
