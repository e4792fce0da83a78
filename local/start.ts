import { join } from "node:path";
import { commandLine, defineCommand } from "./command-line";
import { loadIssuerSettings, loadSettings, loadTuning } from "../src/config";
import { commaList, parseFaultSpec } from "embedded-cosmos";
import { localDevSecret } from "./dev-auth";
import { emitLog, localTelemetry } from "local-host";
import { startLocalSystem } from "./system";

/** Entra ID sign-in for the front end, when all three of its settings are given (as the azd hook reads them). */
function webSignIn(env: NodeJS.ProcessEnv = process.env): { clientId: string; authority: string; scope: string; protocol?: "oidc" } | undefined {
  const [clientId, authority, scope] = [env.WEB_AUTH_CLIENT_ID, env.WEB_AUTH_AUTHORITY, env.WEB_API_SCOPE].map((value) => value?.trim());
  // WEB_AUTH_PROTOCOL=oidc: an OpenID Connect provider other than Entra ID as the authority (MSAL's OIDC mode).
  const protocol = env.WEB_AUTH_PROTOCOL?.trim().toLowerCase() === "oidc" ? ("oidc" as const) : undefined;
  return clientId && authority && scope ? { clientId, authority, scope, ...(protocol ? { protocol } : {}) } : undefined;
}

const COMMAND = defineCommand({
  name: "npm start",
  summary:
    "Runs the whole system on this machine until Ctrl-C: the API on http://localhost:7071/api (PORT), the web front end at /, the embedded Cosmos DB server (or COSMOS_ENDPOINT), the change feed consumers and orchestrations.",
  flags: {
    "in-memory": { type: "boolean", default: false, description: "keep no data across restarts" },
    "data-dir": { type: "string", default: ".data", value: "dir", description: "where the data is kept across restarts" },
    faults: { type: "string", value: "spec", description: "inject faults into the embedded server, e.g. 429:0.05@write,latency=200:0.1@read" },
    "source-maps": { type: "boolean", default: false, description: "serve the front end's source maps" },
    "recover-data": { type: "boolean", default: false, description: "load a damaged data directory up to the damage, keeping the rest aside" },
  },
  examples: ["npm start", "npm start -- --in-memory", "PORT=8080 npm start -- --faults 429:0.05@write"],
});

/** `npm start`: the whole system on this machine, until Ctrl-C. */
async function main(): Promise<void> {
  const { values: flags } = commandLine(COMMAND);
  const port = Number(process.env.PORT ?? 7071);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be 0-65535, got '${process.env.PORT}'`);
  const external = process.env.COSMOS_ENDPOINT ?? process.env.COSMOS__accountEndpoint;
  const settings = external ? loadSettings() : undefined;
  // Checked as the app checks them in Azure, and honoured alike with or without an account.
  const tuning = loadTuning();
  // The built-in secret is for the embedded server only: against an account, dev tokens need a secret of your own.
  const devSecret = settings ? settings.auth.devSecret : localDevSecret();
  if (settings && !devSecret && !(settings.auth.issuer && settings.auth.audience)) {
    throw new Error(
      `with COSMOS_ENDPOINT set, set AUTH_DEV_SECRET (at least 32 random characters) to accept dev tokens, or AUTH_ISSUER and AUTH_AUDIENCE for real ones; the built-in local secret is only accepted with the embedded server`,
    );
  }
  const cosmosPort = Number(process.env.EMBEDDED_COSMOS_PORT ?? 8081);
  if (flags.faults !== undefined && external) throw new Error("--faults needs the embedded Cosmos DB server: unset COSMOS_ENDPOINT");
  const faults = flags.faults === undefined ? undefined : parseFaultSpec(flags.faults);
  // Data (the embedded server's, and the orchestrations' state) survives restarts unless asked not to.
  const dataDir = flags["in-memory"] ? undefined : flags["data-dir"];

  console.log(external ? `Using Cosmos DB at ${external}` : `Starting the embedded Cosmos DB server (${dataDir ? `data in ${dataDir}/` : "in memory"})...`);
  if (flags.faults !== undefined) console.log(`  injecting faults: ${flags.faults}`);
  const start = (embeddedPort: number) =>
    startLocalSystem({
      port,
      cosmos: settings?.cosmos,
      cosmosPort: embeddedPort,
      databaseName: tuning.databaseName,
      // The issuer settings count with the embedded server too, beside dev tokens: Entra sign-in can be tried locally.
      auth: { ...(settings?.auth ?? loadIssuerSettings()), devSecret },
      webSignIn: webSignIn(),
      softDeleteTtlSeconds: tuning.softDeleteTtlSeconds,
      maxRetryWaitSeconds: tuning.maxRetryWaitSeconds,
      feedRefreshSeconds: tuning.feedRefreshSeconds,
      feedCacheMs: tuning.feedCacheMs,
      likeBatchMax: tuning.likeBatchMax,
      dataDir,
      recoverDamagedData: flags["recover-data"],
      // The database apart from the app's event loop, as Cosmos DB is in Azure (docs/local-host.md).
      cosmosThread: true,
      faults,
      webDir: join(__dirname, "../web"),
      corsAllowedOrigins: commaList(process.env.CORS_ALLOWED_ORIGINS),
      allowedHosts: commaList(process.env.LOCAL_ALLOWED_HOSTS),
      devSignIn: external ? process.env.LOCAL_DEV_SIGN_IN?.trim().toLowerCase() === "true" : true,
      sourceMapsDir: flags["source-maps"] ? join(__dirname, "../web-sourcemaps") : undefined,
      // LOG_REQUESTS=false drops the line per request only: what the host reports about itself stays.
      logRequests: process.env.LOG_REQUESTS !== "false",
      // Several hosts on one account (as Azure scales out) need a name each on the change feed leases.
      leaseOwner: process.env.LOCAL_INSTANCE_NAME?.trim() || undefined,
      // Each line to the terminal, and as a log record (with the trace it was written in) to OTLP when exported.
      log: (line) => {
        console.log(`  ${line}`);
        emitLog(line);
      },
    });
  let system;
  try {
    system = await start(cosmosPort);
  } catch (error) {
    const { code, port: busy } = error as { code?: string; port?: number };
    if (code !== "EADDRINUSE") throw error;
    if (busy !== cosmosPort || external) throw new Error(`port ${busy} is in use: set PORT to another port`, { cause: error });
    // The embedded server only needs some port; the banner prints the one it got.
    console.log(`  port ${cosmosPort} is in use (an emulator?): the embedded Cosmos DB server takes a free port instead`);
    system = await start(0);
  }

  console.log(`
Blog API ready on ${system.url}
  Web app:     ${system.url.replace(/\/api$/, "/")}
  Cosmos DB:   COSMOS_ENDPOINT=${system.cosmosEndpoint}${external ? "" : ` COSMOS_KEY=${system.cosmosKey}`}
  Dev token:   ${devSecret ? `npm run token -- alice${process.env.AUTH_DEV_SECRET?.trim() ? "" : "   (signed with the local default secret)"}` : "(dev tokens are off: AUTH_DEV_SECRET is not set)"}
  Try it:
    TOKEN=$(npm run --silent token -- alice)
    curl -s -X POST ${system.url}/users -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" -d '{"username":"alice"}'
    curl -s ${system.url}/users/alice
  Sample data: npm run seed -- --users 20${system.url === "http://localhost:7071/api" ? "" : ` --url ${system.url}`}
  Rebuild Q3/Q6 copies: COSMOS_ENDPOINT=${system.cosmosEndpoint}${external ? "" : ` COSMOS_KEY=${system.cosmosKey}`} npm run rebuild-copies
Press Ctrl-C to stop.
`);

  stopOnSignals(system);
}

/** How long a Ctrl-C may take to drain (answer in-flight requests, write checkpoints) before the process exits anyway. */
const DRAIN_DEADLINE_MS = 5000;

/**
 * Signals this close together are one Ctrl-C: the terminal sends SIGINT to the whole foreground
 * process group, and npm passes its own on to the host as well, so the host gets two at once.
 */
const ONE_CTRL_C_MS = 1000;

/**
 * First Ctrl-C (or SIGTERM): drain within 5 s; whatever is unfinished then stays resumable
 * (change feed checkpoints, orchestration history). A second Ctrl-C, a moment later, exits at
 * once. If the parent (npm) dies without passing a signal on, the host stops too, leaving no orphan.
 */
function stopOnSignals(system: { stop(): Promise<void> }): void {
  let stopping = false;
  let firstSignalAt = 0;
  // If the parent (npm) goes away, so does the host.
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid !== parent) shutdown("parent exited");
  }, 500).unref();
  const shutdown = (signal: string) => {
    clearInterval(watch);
    if (stopping) {
      if (performance.now() - firstSignalAt < ONE_CTRL_C_MS) return;
      console.log(`${signal} again: exiting now`);
      process.exit(130);
    }
    stopping = true;
    firstSignalAt = performance.now();
    console.log(`\nStopping (${signal})...`);
    // Once the signals of this Ctrl-C are past, another one is the user's: say what it does.
    setTimeout(() => console.log("  still draining: Ctrl-C again to exit at once"), ONE_CTRL_C_MS).unref();
    const deadline = setTimeout(() => {
      console.log(`still stopping after ${DRAIN_DEADLINE_MS / 1000} s: exiting; unfinished work resumes on the next start`);
      process.exit(1);
    }, DRAIN_DEADLINE_MS);
    system
      .stop()
      // Whatever telemetry is pending goes out before the process does.
      .then(() => localTelemetry().shutdown())
      .then(
        () => {
          clearTimeout(deadline);
          console.log("Stopped: drained cleanly.");
          process.exit(0);
        },
        (error: unknown) => {
          console.error(error);
          process.exit(1);
        },
      );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGHUP", () => shutdown("SIGHUP"));
  // With the parent gone, stdout may be a closed pipe: losing log lines must not crash the drain.
  process.stdout.on("error", () => {});
}

main().catch((error: unknown) => {
  console.error(`npm start failed: ${(error as Error).message}`);
  process.exit(1);
});
