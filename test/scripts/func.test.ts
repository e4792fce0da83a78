import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { portOpen } from "../../scripts/func";
import { runToExit } from "../support/process";

/**
 * `npm run func` (scripts/func.ts): everything of the local loop under the real Functions host
 * but the host itself, which cannot be installed here. In its place on PATH, a `func` that
 * checks, from inside the loop, what the host would use: the settings file it reads, Azurite
 * answering as AzureWebJobsStorage, and the Cosmos DB account of the COSMOS connection
 * provisioned (through @azure/cosmos, as an app would).
 */
const root = join(__dirname, "../..");
const launcher = join(root, "dist/scripts/func.js");

/** A directory holding an executable `func` that answers --version and, for `start`, checks the loop and writes what it found. */
function fakeCoreTools(report: string): string {
  const dir = mkdtempSync(join(tmpdir(), "core-tools-"));
  const script = `#!${process.execPath}
const { readFileSync, writeFileSync } = require("node:fs");
if (process.argv[2] === "--version") { console.log("4.0.7030"); process.exit(0); }
(async () => {
  const { Values } = JSON.parse(readFileSync("local.settings.json", "utf8"));
  const storage = await fetch("http://127.0.0.1:10000/devstoreaccount1?comp=list").then((r) => r.status, () => 0);
  const { CosmosClient } = require(${JSON.stringify(join(root, "node_modules/@azure/cosmos"))});
  const connection = Object.fromEntries(Values.COSMOS.split(";").filter(Boolean).map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]));
  const client = new CosmosClient({ endpoint: connection.AccountEndpoint, key: connection.AccountKey, connectionPolicy: { enableEndpointDiscovery: false } });
  const db = client.database(Values.COSMOS_DATABASE);
  const { resources: containers } = await db.containers.readAll().fetchAll();
  const { resources: sprocs } = await db.container("posts").scripts.storedProcedures.readAll().fetchAll();
  writeFileSync(${JSON.stringify(report)}, JSON.stringify({ cwd: process.cwd(), args: process.argv.slice(2), values: Values, storage, containers: containers.map((c) => c.id), sprocs: sprocs.map((s) => s.id) }));
  client.dispose();
})().catch((error) => { console.error(error); process.exit(3); });
`;
  writeFileSync(join(dir, "func"), script);
  chmodSync(join(dir, "func"), 0o755);
  return dir;
}

const run = (env: Record<string, string>) => runToExit(process.execPath, [launcher, "--verbose"], { cwd: root, env: { ...process.env, ...env } });

describe("npm run func", () => {
  it("starts Azurite and the embedded server, provisions, writes the host's settings and runs func start in the app's folder", async () => {
    const report = join(mkdtempSync(join(tmpdir(), "func-report-")), "report.json");
    const app = mkdtempSync(join(tmpdir(), "func-app-"));
    writeFileSync(join(app, "package.json"), JSON.stringify({ main: "index.js" }));
    const { code, output } = await run({
      PATH: `${fakeCoreTools(report)}${delimiter}${process.env.PATH}`,
      FUNC_APP_DIR: app,
      FUNC_DATA_DIR: mkdtempSync(join(tmpdir(), "func-data-")),
      EMBEDDED_COSMOS_PORT: "0",
      COSMOS_ENDPOINT: "",
      COSMOS: "",
      COSMOS__accountEndpoint: "",
    });
    expect(code, output).toBe(0);
    const found = JSON.parse(readFileSync(report, "utf8")) as Record<string, unknown> & { values: Record<string, string> };
    expect(found.cwd).toBe(app);
    expect(found.args).toEqual(["start", "--verbose"]);
    expect(found.values).toMatchObject({
      FUNCTIONS_WORKER_RUNTIME: "node",
      AzureWebJobsStorage: "UseDevelopmentStorage=true",
      AzureFunctionsJobHost__extensions__cosmosDB__connectionMode: "Gateway",
      COSMOS_DATABASE: "blog",
    });
    expect(found.values.COSMOS).toMatch(/^AccountEndpoint=http:\/\/127\.0\.0\.1:\d+\/;AccountKey=.+;$/);
    // The app refuses the dev secret published with the code outside npm start: the loop makes one of its own.
    expect(found.values.AUTH_DEV_SECRET.length).toBeGreaterThanOrEqual(32);
    expect(found.storage).toBeGreaterThan(0); // Azurite answered (any HTTP status)
    expect(found.containers).toEqual(expect.arrayContaining(["users", "posts", "feed", "leases"]));
    expect(found.sprocs).toEqual(expect.arrayContaining(["createComment", "changeLikes", "updateUsernames"]));
    expect(output).toMatch(/Core Tools 4\.0\.7030/);
    // When func start exits, what the loop started is gone: Azurite no longer listens.
    expect(await portOpen(10000)).toBe(false);
  }, 60_000);

  it("says how to install Core Tools when func is not on PATH, and starts nothing", async () => {
    const empty = mkdtempSync(join(tmpdir(), "no-func-"));
    const { code, output } = await run({ PATH: `${empty}${delimiter}${join(process.execPath, "..")}` });
    expect(code).toBe(1);
    expect(output).toMatch(/Core Tools \(func\) is not installed/);
    expect(output).toMatch(/npm install -g azure-functions-core-tools@4/);
    expect(output).not.toMatch(/Azurite/);
  });
});
