import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The postprovision hook writes local.settings.json from the azd environment, so that func start
 * runs against the account just provisioned. Here `azd` on PATH is a script that prints what
 * `azd env get-values` prints, in a project folder of the test's own.
 */
const hookFile = join(__dirname, "../../scripts/write-local-settings.mjs");
const compiled = JSON.parse(readFileSync(join(__dirname, "../../infra/compiled/main.json"), "utf8")) as { outputs: Record<string, unknown> };

function runHook(
  printed: string,
  existing?: object,
): Promise<{ settings: { IsEncrypted: boolean; Values: Record<string, string> } | undefined; output: string }> {
  const project = mkdtempSync(join(tmpdir(), "azd-project-"));
  const bin = mkdtempSync(join(tmpdir(), "azd-bin-"));
  writeFileSync(join(bin, "printed"), printed);
  writeFileSync(join(bin, "azd"), `#!/bin/sh\n[ "$1 $2 $3 $4" = "env get-values --output json" ] || exit 2\ncat "${join(bin, "printed")}"\n`);
  chmodSync(join(bin, "azd"), 0o755);
  if (existing) writeFileSync(join(project, "local.settings.json"), JSON.stringify(existing));
  return new Promise((resolve) =>
    execFile(process.execPath, [hookFile], { cwd: project, env: { PATH: `${bin}${delimiter}${process.env.PATH}` } }, (_error, stdout, stderr) => {
      let settings;
      try {
        settings = JSON.parse(readFileSync(join(project, "local.settings.json"), "utf8"));
      } catch {
        settings = undefined;
      }
      resolve({ settings, output: stdout + stderr });
    }),
  );
}

const provisioned = {
  AZURE_ENV_NAME: "dev",
  COSMOS_ENDPOINT: "https://cosmos-abc.documents.azure.com:443/",
  COSMOS_DATABASE: "blog",
  AUTH_ISSUER: "https://login.microsoftonline.com/tenant-1/v2.0",
  AUTH_AUDIENCE: "api://client-1",
};

describe("the postprovision hook that writes local.settings.json", () => {
  it("names the provisioned account and the token settings, with Azurite for the host's storage", async () => {
    const { settings, output } = await runHook(JSON.stringify(provisioned));
    expect(settings).toEqual({
      IsEncrypted: false,
      Values: {
        FUNCTIONS_WORKER_RUNTIME: "node",
        AzureWebJobsStorage: "UseDevelopmentStorage=true",
        COSMOS__accountEndpoint: provisioned.COSMOS_ENDPOINT,
        COSMOS_DATABASE: "blog",
        AUTH_ISSUER: provisioned.AUTH_ISSUER,
        AUTH_AUDIENCE: provisioned.AUTH_AUDIENCE,
      },
    });
    // Keyless: the endpoint alone, so the app signs in as the developer.
    expect(JSON.stringify(settings)).not.toMatch(/AccountKey/);
    expect(output).toContain(provisioned.COSMOS_ENDPOINT);
    // What it reads from provisioning is the template's output.
    for (const name of ["COSMOS_ENDPOINT", "COSMOS_DATABASE"]) expect(Object.keys(compiled.outputs)).toContain(name);
  });

  it("keeps the developer's own values and replaces only what provisioning decides; reads azd's dotenv lines too", async () => {
    const existing = {
      IsEncrypted: false,
      Values: { COSMOS__accountEndpoint: "https://old.documents.azure.com:443/", AUTH_DEV_SECRET: "mine", FEED_CACHE_MS: "500" },
    };
    const dotenv = Object.entries(provisioned)
      .map(([name, value]) => `${name}="${value}"`)
      .join("\n");
    const { settings } = await runHook(dotenv, existing);
    expect(settings?.Values).toMatchObject({ COSMOS__accountEndpoint: provisioned.COSMOS_ENDPOINT, AUTH_DEV_SECRET: "mine", FEED_CACHE_MS: "500" });
  });

  it("writes nothing, and does not fail provisioning, when the environment names no account", async () => {
    const { settings, output } = await runHook(JSON.stringify({ AZURE_ENV_NAME: "dev" }));
    expect(settings).toBeUndefined();
    expect(output).toMatch(/was not written \(the azd environment has no COSMOS_ENDPOINT/);
  });
});
