import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The postprovision hook waits for new role assignments to propagate before the first deploy.
 * Here it talks to a Resource Manager on loopback, with an `azd` on PATH that hands out a token.
 */
let arm: Server;
let endpoint: string;
let createdOn = new Date().toISOString();
const seen: string[] = [];

beforeAll(async () => {
  arm = createServer((req, res) => {
    seen.push(`${req.headers.authorization} ${decodeURIComponent(req.url ?? "")}`);
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ value: [{ properties: { createdOn, principalId: "app-principal" } }] }));
  });
  await new Promise<void>((resolve) => arm.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(arm.address() as { port: number }).port}`;
});
afterAll(() => arm.close());

function hook(env: Record<string, string>): Promise<{ ms: number; stdout: string; stderr: string }> {
  const bin = mkdtempSync(join(tmpdir(), "azd-"));
  writeFileSync(join(bin, "azd"), '#!/bin/sh\necho \'{"token":"arm-token","expiresOn":"2099-01-01T00:00:00Z"}\'\n');
  chmodSync(join(bin, "azd"), 0o755);
  const started = Date.now();
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [join(__dirname, "../../scripts/wait-for-roles.mjs")],
      {
        env: {
          PATH: `${bin}${delimiter}${process.env.PATH}`,
          AZURE_RESOURCE_MANAGER_ENDPOINT: endpoint,
          AZURE_SUBSCRIPTION_ID: "sub-1",
          AZURE_RESOURCE_GROUP: "rg-blog",
          API_PRINCIPAL_ID: "app-principal",
          ...env,
        },
      },
      (_error, stdout, stderr) => resolve({ ms: Date.now() - started, stdout, stderr }),
    ),
  );
}

describe("the postprovision hook", () => {
  it("waits out the propagation time from the newest role assignment, asking Resource Manager with azd's token", async () => {
    createdOn = new Date().toISOString();
    const { ms, stdout } = await hook({ ROLE_PROPAGATION_SECONDS: "2" });
    expect(stdout).toMatch(/waiting \d s for them to propagate/);
    expect(ms).toBeGreaterThanOrEqual(1500);
    expect(seen.at(-1)).toBe(
      "Bearer arm-token /subscriptions/sub-1/resourceGroups/rg-blog/providers/Microsoft.Authorization/roleAssignments?api-version=2022-04-01&$filter=assignedTo('app-principal')",
    );
  });

  it("does not wait for role assignments old enough, and never fails provisioning", async () => {
    createdOn = new Date(Date.now() - 600_000).toISOString();
    expect((await hook({})).stdout).toMatch(/old enough/);
    const broken = await hook({ AZURE_RESOURCE_MANAGER_ENDPOINT: "http://127.0.0.1:9" });
    expect(broken.stderr).toMatch(/could not check the role assignments/);
  });
});
