import { parseArgs } from "node:util";
import { loadSettings, loadTuning } from "../../src/config";
import { localDevSecret } from "./dev-auth";
import { startLocalSystem } from "./system";

/** CORS_ALLOWED_ORIGINS as the app setting has it: comma-separated origins, or `*`. */
const corsOrigins = (value: string | undefined) => (value ?? "").split(",").map((origin) => origin.trim()).filter(Boolean);

/** `npm start`: the whole system on this machine, until Ctrl-C. */
async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 7071);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be 0-65535, got '${process.env.PORT}'`);
  const external = process.env.COSMOS_ENDPOINT ?? process.env.COSMOS__accountEndpoint;
  const settings = external ? loadSettings() : undefined;
  // Checked as the app checks them in Azure, with or without an account.
  const tuning = loadTuning();
  // The built-in secret is for the embedded server only: against an account, dev tokens need a secret of your own.
  const devSecret = settings ? settings.auth.devSecret : localDevSecret();
  if (settings && !devSecret && !(settings.auth.issuer && settings.auth.audience)) {
    throw new Error(
      `with COSMOS_ENDPOINT set, set AUTH_DEV_SECRET (at least 32 random characters) to accept dev tokens, or AUTH_ISSUER and AUTH_AUDIENCE for real ones; the built-in local secret is only accepted with the embedded server`,
    );
  }
  const quiet = process.env.LOG_REQUESTS === "false";
  const cosmosPort = Number(process.env.EMBEDDED_COSMOS_PORT ?? 8081);
  const { values: flags } = parseArgs({ options: { "in-memory": { type: "boolean", default: false }, "data-dir": { type: "string", default: ".data" } } });
  // Data (the embedded server's, and the orchestrations' state) survives restarts unless asked not to.
  const dataDir = flags["in-memory"] ? undefined : flags["data-dir"];

  console.log(external ? `Using Cosmos DB at ${external}` : `Starting the embedded Cosmos DB server (${dataDir ? `data in ${dataDir}/` : "in memory"})...`);
  const start = (embeddedPort: number) =>
    startLocalSystem({
      port,
      cosmos: settings?.cosmos,
      cosmosPort: embeddedPort,
      databaseName: settings?.cosmos.databaseName,
      auth: { ...settings?.auth, devSecret },
      softDeleteTtlSeconds: settings?.softDeleteTtlSeconds,
      feedRefreshSeconds: tuning.feedRefreshSeconds,
      feedCacheMs: tuning.feedCacheMs,
      dataDir,
      corsAllowedOrigins: corsOrigins(process.env.CORS_ALLOWED_ORIGINS),
      log: (line) => {
        if (!quiet) console.log(`  ${line}`);
      },
    });
  let system;
  try {
    system = await start(cosmosPort);
  } catch (error) {
    const { code, port: busy } = error as { code?: string; port?: number };
    if (code !== "EADDRINUSE") throw error;
    if (busy !== cosmosPort || external) throw new Error(`port ${busy} is in use: set PORT to another port`);
    // The embedded server only needs some port; the banner prints the one it got.
    console.log(`  port ${cosmosPort} is in use (an emulator?): the embedded Cosmos DB server takes a free port instead`);
    system = await start(0);
  }

  console.log(`
Blog API ready on ${system.url}
  Cosmos DB:   COSMOS_ENDPOINT=${system.cosmosEndpoint}${external ? "" : ` COSMOS_KEY=${system.cosmosKey}`}
  Dev token:   ${devSecret ? `npm run token -- alice${process.env.AUTH_DEV_SECRET?.trim() ? "" : "   (signed with the local default secret)"}` : "(dev tokens are off: AUTH_DEV_SECRET is not set)"}
  Try it:
    TOKEN=$(npm run --silent token -- alice)
    curl -s -X POST ${system.url}/users -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" -d '{"username":"alice"}'
    curl -s ${system.url}/users/alice
  Sample data: npm run seed -- --users 20${system.url === "http://localhost:7071/api" ? "" : ` --url ${system.url}`}
  Rebuild Q3/Q6 copies: COSMOS_ENDPOINT=${system.cosmosEndpoint}${external ? "" : ` COSMOS_KEY=${system.cosmosKey}`} npm run rebuild-views
Press Ctrl-C to stop.
`);

  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    console.log("\nStopping...");
    system.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}

main().catch((error: unknown) => {
  console.error(`npm start failed: ${(error as Error).message}`);
  process.exit(1);
});

