import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { dirname, join, resolve } from "node:path";
import { startCosmos, type RunningCosmos } from "embedded-cosmos";
import { BINDING_SETTING_DEFAULTS, loadSettings } from "../src/config";
import { createCosmosClient } from "../src/store/client";
import { provision } from "../src/store/provision";

/**
 * `npm run func`: the app under the real Functions host (Core Tools' `func start`) on a laptop
 * with no Azure account. It starts what the host needs and writes the settings it reads:
 * Azurite for AzureWebJobsStorage (the durable task hub), the embedded Cosmos DB server unless
 * an account is named, the containers and scripts, and `dist/deploy/local.settings.json`; then
 * runs `func start` there and stops everything when it exits.
 */
const root = join(__dirname, "../..");
/** The deployable folder `func start` runs in (FUNC_APP_DIR: another one, as the tests use). */
const deploy = process.env.FUNC_APP_DIR ?? join(root, "dist/deploy");
const dataDir = resolve(root, process.env.FUNC_DATA_DIR ?? ".data/func");
/** Azurite's ports, as UseDevelopmentStorage=true names them. */
const AZURITE_PORTS = { blob: 10000, queue: 10001, table: 10002 };

const CORE_TOOLS_HELP = `Azure Functions Core Tools (func) is not installed, or not on PATH. Install version 4:
  npm:     npm install -g azure-functions-core-tools@4
  macOS:   brew tap azure/functions && brew install azure-functions-core-tools@4
  Windows: winget install Microsoft.Azure.FunctionsCoreTools
  Linux:   see "Install the Azure Functions Core Tools" in the Azure Functions docs (apt packages)
Then run npm run func again.`;

/** The Core Tools version, or undefined if `func` cannot be run. */
function coreToolsVersion(): string | undefined {
  const probe = spawnSync("func", ["--version"], { encoding: "utf8", shell: process.platform === "win32" });
  return probe.status === 0 ? probe.stdout.trim() : undefined;
}

/** Whether something listens on `port` on loopback. */
export const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

/** Azurite from the project's own dependency, unless one already listens on its ports (then that one is used). */
async function startAzurite(): Promise<ChildProcess | undefined> {
  if (await portOpen(AZURITE_PORTS.blob)) {
    console.log(`  Azurite: something already listens on ${AZURITE_PORTS.blob}; using it`);
    return undefined;
  }
  const bin = join(dirname(require.resolve("azurite/package.json")), "dist/src/azurite.js");
  const location = join(dataDir, "azurite");
  mkdirSync(location, { recursive: true });
  const child = spawn(
    process.execPath,
    [
      bin,
      "--silent",
      "--skipApiVersionCheck",
      "--disableTelemetry",
      "--location",
      location,
      "--blobPort",
      `${AZURITE_PORTS.blob}`,
      "--queuePort",
      `${AZURITE_PORTS.queue}`,
      "--tablePort",
      `${AZURITE_PORTS.table}`,
    ],
    { stdio: "ignore" },
  );
  for (let waited = 0; !(await portOpen(AZURITE_PORTS.blob)); waited += 100) {
    if (child.exitCode !== null || waited > 30_000) throw new Error(`Azurite did not start (data in ${location})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  console.log(`  Azurite: blob ${AZURITE_PORTS.blob}, queue ${AZURITE_PORTS.queue}, table ${AZURITE_PORTS.table} (data in ${location})`);
  return child;
}

/** The embedded server on its usual port, or any free one if that is taken (npm start, an emulator). */
async function startEmbedded(): Promise<RunningCosmos> {
  const options = { dataDir: join(dataDir, "cosmos") };
  try {
    return await startCosmos({ ...options, port: Number(process.env.EMBEDDED_COSMOS_PORT ?? 8081) });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    return startCosmos({ ...options, port: 0 });
  }
}

/**
 * Stops a child as it asks (SIGTERM), and for good if it has not exited within `graceMs`:
 * Azurite, once it has served a request, can wait for ever in its SIGTERM handler.
 */
async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** A dev-token secret of this data directory's own: the app refuses the one published with the code outside npm start. */
function devSecret(): string {
  const file = join(dataDir, "dev-secret");
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600 });
  }
  return readFileSync(file, "utf8").trim();
}

/** The user's own local.settings.json Values (at the root), which win over what this writes. */
function userValues(): Record<string, string> {
  const file = join(root, "local.settings.json");
  if (!existsSync(file)) return {};
  return (JSON.parse(readFileSync(file, "utf8")) as { Values?: Record<string, string> }).Values ?? {};
}

/** What the Functions host reads (local.settings.json Values become the app's environment). */
export function hostSettings(cosmos: { endpoint: string; key?: string }, secret: string, own: Record<string, string>): Record<string, string> {
  return {
    FUNCTIONS_WORKER_RUNTIME: "node",
    AzureWebJobsStorage: "UseDevelopmentStorage=true",
    // The trigger's connection: a connection string with the key, or the endpoint alone (Entra ID, `az login`).
    ...(cosmos.key ? { COSMOS: `AccountEndpoint=${cosmos.endpoint};AccountKey=${cosmos.key};` } : { COSMOS__accountEndpoint: cosmos.endpoint }),
    ...Object.fromEntries(Object.entries(BINDING_SETTING_DEFAULTS).map(([name, value]) => [name, process.env[name] ?? value])),
    // The Cosmos DB extension in Gateway mode: one HTTP endpoint, as the embedded server and emulators serve.
    AzureFunctionsJobHost__extensions__cosmosDB__connectionMode: "Gateway",
    AUTH_DEV_SECRET: secret,
    ...own,
  };
}

const USAGE = `Runs the app under Azure Functions Core Tools (func start) with no Azure account: Azurite, the embedded Cosmos DB server (or COSMOS_ENDPOINT / COSMOS), the containers and scripts, and dist/deploy/local.settings.json; Ctrl-C stops it all.

usage: npm run func -- [flags of func start]

Every flag is passed to func start (func start --help lists them).
FUNC_APP_DIR: another deployable folder (default dist/deploy); FUNC_DATA_DIR: where Azurite and the embedded server keep their data (default .data/func).

examples:
  npm run func
  npm run func -- --port 7072 --verbose`;

async function main(): Promise<void> {
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    console.log(USAGE);
    return;
  }
  const version = coreToolsVersion();
  if (!version) throw new Error(CORE_TOOLS_HELP);
  console.log(`Core Tools ${version}`);
  if (!existsSync(join(deploy, "package.json"))) throw new Error("dist/deploy is missing: npm run func builds it first (npm run build)");

  const own = userValues();
  const named = process.env.COSMOS_ENDPOINT ?? process.env.COSMOS ?? process.env.COSMOS__accountEndpoint ?? own.COSMOS ?? own.COSMOS__accountEndpoint;
  let embedded: RunningCosmos | undefined;
  let azurite: ChildProcess | undefined;
  let host: ChildProcess | undefined;
  const stop = async () => {
    host?.kill("SIGINT");
    await Promise.all([azurite && stopChild(azurite), embedded?.stop()]);
  };
  try {
    azurite = await startAzurite();
    const cosmos = named ? loadSettings({ ...own, ...process.env }).cosmos : (embedded = await startEmbedded());
    console.log(`  Cosmos DB: ${cosmos.endpoint}${embedded ? " (the embedded server)" : ""}`);
    const secret = devSecret();
    const values = hostSettings(cosmos, secret, own);
    if (cosmos.key) {
      const client = createCosmosClient({ endpoint: cosmos.endpoint, key: cosmos.key, databaseName: values.COSMOS_DATABASE, maxRetryWaitSeconds: 10 });
      await provision(client, values.COSMOS_DATABASE, (line) => console.log(`  ${line}`));
      client.dispose();
    }
    writeFileSync(join(deploy, "local.settings.json"), JSON.stringify({ IsEncrypted: false, Values: values }, null, 2));
    console.log(`  wrote ${join(deploy, "local.settings.json")}; dev tokens: AUTH_DEV_SECRET=${secret} npm run token -- alice`);
    console.log(`Starting func start in ${deploy} (Ctrl-C stops it and what this started)`);
    host = spawn("func", ["start", ...process.argv.slice(2)], { cwd: deploy, stdio: "inherit", shell: process.platform === "win32" });
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => host?.kill(signal));
    const code = await new Promise<number>((resolve) => host!.once("exit", (exitCode) => resolve(exitCode ?? 1)));
    await stop();
    process.exit(code);
  } catch (error) {
    await stop();
    throw error;
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(`npm run func: ${(error as Error).message}`);
    process.exit(1);
  });
}
