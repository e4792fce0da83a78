import type { Server } from "node:http";
import { join } from "node:path";
import { startCosmos, startCosmosThread, type FaultSpec, type RunningCosmos } from "embedded-cosmos";
import { cosmosUsageOf } from "../src/api/instrumented";
import { BINDING_SETTING_DEFAULTS, type Settings } from "../src/config";
import { invocationServices } from "../src/pipeline/invocation-services";
import type { PipelinePolicy } from "../src/pipeline/policy";
import type { PipelineServices } from "../src/pipeline/pipeline-services";
import { createStore, type BlogStore } from "../src/store/client";
import type { AppServices } from "../src/app-services";
import type { CosmosUsage } from "../src/store/metering";
import { provision } from "../src/store/provision";
import { pseudonymOf, traceId } from "../src/telemetry";
import {
  announceHostName,
  ChangeFeedPump,
  clientBindingData,
  createHttpServer,
  DEFAULT_LEASE_TIMING,
  drainHttp,
  DurableHost,
  durableInvocation,
  fileInstanceStore,
  localTelemetry,
  systemClock,
  TimerHost,
  type TaskHubTiming,
  type InstanceSpanNaming,
  type LeaseTiming,
} from "local-host";
import { LIMITS } from "../src/model/limits";
import { ATTRIBUTES, SCOPE } from "../src/telemetry/names";
import { devToken, LOCAL_DEV_SECRET } from "./dev-auth";
import { observeLocalRuntime, opsReader } from "./observed-runtime";
import { loadApp } from "./app-entry";

/** The app's names on an orchestration instance's span (instance ids are made of user ids: hashed). */
const SPAN_NAMING: InstanceSpanNaming = {
  scope: SCOPE,
  attributes: (name, instanceId) => ({ [ATTRIBUTES.orchestration]: name, [ATTRIBUTES.instanceId]: pseudonymOf(instanceId) }),
  outcome: ATTRIBUTES.outcome,
};

/**
 * Binding settings npm start sets apart from Azure's: the backlog timer runs every 30 s (Azure:
 * each minute), so the operations page's lag follows within half a minute; more often would
 * cost an idle host more than its change feeds do (docs/benchmark.md, idle).
 */
const LOCAL_BINDING_SETTINGS: Readonly<Record<string, string>> = { BACKLOG_SCHEDULE: "*/30 * * * * *" };

/** Dev sign-in with the app's rule for user ids. */
const devSignIn = (secret: string) => ({
  check: (userId: string) => (LIMITS.idPattern.test(userId) ? undefined : "userId must be 1-128 of A-Z, a-z, 0-9, '_', '.', '@', '|', '-'."),
  sign: (userId: string) => devToken(userId, secret),
});

/** What a request cost in Cosmos DB, measured once by the route's wrapper (src/api/instrumented.ts), for its log line. */
function costLine(usage: CosmosUsage | undefined): string | undefined {
  if (!usage) return undefined;
  const requests = usage.requests.length;
  return `${requests} Cosmos DB request${requests === 1 ? "" : "s"} · ${usage.requestCharge.toFixed(2)} RU`;
}

const traceSuffix = () => {
  const id = traceId();
  return id ? ` (trace ${id})` : "";
};

export interface LocalSystemOptions {
  /** HTTP port; 0 picks a free one. */
  port?: number;
  /** Use this Cosmos DB account or emulator instead of the embedded server. */
  cosmos?: { endpoint: string; key?: string };
  /** Port of the embedded Cosmos DB server (0, the default, picks a free one). */
  cosmosPort?: number;
  databaseName?: string;
  auth?: Settings["auth"];
  softDeleteTtlSeconds?: number;
  /** How long the Cosmos DB client retries a throttled request (COSMOS_MAX_RETRY_WAIT_SECONDS, default 10). */
  maxRetryWaitSeconds?: number;
  /** How often a counter-only change may rewrite a post's feed copy (FEED_REFRESH_SECONDS, default 5). */
  feedRefreshSeconds?: number;
  /** How long Q6 is served from the instance's micro-cache (FEED_CACHE_MS, default 1000; 0 turns it off). */
  feedCacheMs?: number;
  /** Likes and unlikes of one post per stored procedure call at most (LIKE_BATCH_MAX, default 50). */
  likeBatchMax?: number;
  /** How often an idle change feed is polled (default: each trigger's feedPollDelay, as registered). */
  pollMs?: number;
  /** This host's name on its change feed leases (default `local-host`); two hosts on one store need two names. */
  leaseOwner?: string;
  /** Lease expiration, renewal and acquire intervals (the trigger's defaults: 60 s, 17 s, 13 s). */
  leaseTiming?: Partial<LeaseTiming>;
  /** With a lease owner on a shared account, the durable task hub's lease and message timing (DEFAULT_HUB_TIMING). */
  taskHubTiming?: Partial<TaskHubTiming>;
  /** Pacing of the background orchestrations (retries, backoff, page size); tests make it quick. */
  policy?: Partial<PipelinePolicy>;
  /** Origins a browser may call the API from (`*` for any), as CORS_ALLOWED_ORIGINS / siteConfig.cors in Azure. */
  corsAllowedOrigins?: string[];
  /** Azure's failures, injected by the embedded Cosmos DB server (`--faults`); none when absent. */
  faults?: FaultSpec;
  /** Serve the built web front end (dist/web) at `/`, with dev sign-in when a dev secret is set. */
  webDir?: string;
  /** Serve the front end's source maps from here (`npm start -- --source-maps`); never when absent. */
  sourceMapsDir?: string;
  /**
   * Dev sign-in (`POST /local/dev-token`): on by default with the embedded server, off against
   * a real account (`cosmos`) unless this turns it on (LOCAL_DEV_SIGN_IN=true).
   */
  devSignIn?: boolean;
  /** Host names answered besides loopback ones (LOCAL_ALLOWED_HOSTS; `*` any). */
  allowedHosts?: string[];
  /** A log line per HTTP request (LOG_REQUESTS=false turns it off; everything else is still logged). */
  logRequests?: boolean;
  /** The front end signs in with Entra ID instead of dev tokens (WEB_AUTH_CLIENT_ID, WEB_AUTH_AUTHORITY, WEB_API_SCOPE). */
  webSignIn?: { clientId: string; authority: string; scope: string; protocol?: "oidc" };
  /** Where the embedded Cosmos DB server's data and the durable orchestration state are kept across restarts; in memory when absent. */
  dataDir?: string;
  /** Start even when a data file is damaged: set it aside and load what is sound (`--recover-data`). */
  recoverDamagedData?: boolean;
  /**
   * The embedded server on a thread of its own (npm start), so the host's event loop carries only
   * what a Functions worker's carries; in this thread when absent (tests that start many systems).
   */
  cosmosThread?: boolean;
  log?: (line: string) => void;
}

export interface LocalSystem {
  /** Base URL of the API, e.g. http://localhost:7071/api */
  url: string;
  store: BlogStore;
  durable: DurableHost;
  /** What the change feed handlers are given (tests deliver batches through it directly). */
  services: PipelineServices;
  cosmosEndpoint: string;
  cosmosKey?: string;
  stop(): Promise<void>;
}

/** How long the account may take to answer the first request before the host gives up on it. */
const REACHABLE_TIMEOUT_MS = 10_000;

/**
 * One request to the account before anything starts, so a wrong or unreachable endpoint fails
 * at once with its name, instead of a host that says "ready" and then fails every request.
 */
async function checkReachable(store: BlogStore, endpoint: string): Promise<void> {
  try {
    await store.client.getDatabaseAccount({ abortSignal: AbortSignal.timeout(REACHABLE_TIMEOUT_MS) });
  } catch (error) {
    const reason = (error as { name?: string }).name === "AbortError" ? `no answer within ${REACHABLE_TIMEOUT_MS / 1000} s` : (error as Error).message;
    throw new Error(`Cosmos DB at ${endpoint} is unreachable: ${reason}`, { cause: error });
  }
}

/**
 * The whole system in one process: Cosmos DB (embedded unless one is given), provisioning,
 * the HTTP routes, the change feed consumers and the username orchestration — the same
 * handlers the Functions host runs, registered from the same tables.
 */
export async function startLocalSystem(options: LocalSystemOptions = {}): Promise<LocalSystem> {
  const log = options.log ?? (() => {});
  let embedded: RunningCosmos | undefined;
  const cosmos =
    options.cosmos ??
    (embedded = await (options.cosmosThread ? startCosmosThread : startCosmos)({
      port: options.cosmosPort ?? 0,
      dataDir: options.dataDir && join(options.dataDir, "cosmos"),
      faults: options.faults,
      recoverDamagedData: options.recoverDamagedData,
      allowedHosts: options.allowedHosts,
    }));
  const store = createStore({
    cosmos: { endpoint: cosmos.endpoint, key: cosmos.key, databaseName: options.databaseName, maxRetryWaitSeconds: options.maxRetryWaitSeconds },
    auth: options.auth ?? { devSecret: LOCAL_DEV_SECRET },
    softDeleteTtlSeconds: options.softDeleteTtlSeconds,
    feedRefreshSeconds: options.feedRefreshSeconds,
    feedCacheMs: options.feedCacheMs,
    likeBatchMax: options.likeBatchMax,
  });
  const { settings } = store;
  await checkReachable(store, cosmos.endpoint).catch(async (error: unknown) => {
    store.dispose();
    await embedded?.stop();
    throw error;
  });
  if (cosmos.key) await provision(store.client, settings.cosmos.databaseName, log);
  // With Entra ID the data plane cannot create containers or scripts: Bicep has provisioned them.
  else log(`using the provisioned database ${settings.cosmos.databaseName} (Entra ID: no provisioning from here)`);

  // This host's composition root: the app's services, as app settings make them in Azure; every
  // invocation of this system runs with them (another system in the process runs with its own).
  const services: AppServices = { store, policy: options.policy };
  // Each invocation gets a durable client binding for this host's Durable Functions HTTP API
  // (once it listens), so df.getClient(context) gives the package's client, as in Azure.
  let origin: string | undefined;
  const originOf = () => {
    if (!origin) throw new Error("the durable client is not ready: the host does not listen yet");
    return origin;
  };
  const app = await loadApp(services, {
    settings: (name) =>
      name === "COSMOS_DATABASE" ? settings.cosmos.databaseName : (process.env[name] ?? LOCAL_BINDING_SETTINGS[name] ?? BINDING_SETTING_DEFAULTS[name]),
    durableClient: () => clientBindingData(originOf()),
    // A function logs inside its invocation's span: the line carries the trace id, as in Application Insights.
    log: (name, level, message) => log(`[${name}] ${level}: ${message}${traceSuffix()}`),
  });

  for (const fn of app.unserved) log(`not served here: ${fn}; this host runs HTTP, Cosmos DB, timer and durable triggers`);

  const durable = new DurableHost({
    functions: app.durable,
    store: options.dataDir
      ? fileInstanceStore(join(options.dataDir, "durable"), (file, reason) =>
          log(`orchestration state ${file} is damaged (${reason}): set aside as ${file}.damaged; that instance is not resumed`),
        )
      : undefined,
    log,
    spanNaming: SPAN_NAMING,
    // Several hosts on one account (each with its name on the leases) share one task hub in it, as Azure's instances share one in Storage.
    hub:
      options.leaseOwner && cosmos.key
        ? { database: store.client.database(settings.cosmos.databaseName), owner: options.leaseOwner, timing: options.taskHubTiming }
        : undefined,
  });
  await durable.resume();
  // Telemetry: the process's providers (npm start's exporters), the orchestration instances as
  // observed metrics, and the operations page's figures from them (the lag gauges come from the
  // app's own estimator, a timer function).
  const telemetry = localTelemetry();
  // The triggers' connection (COSMOS) is the account the store uses; its host name is part of the lease ids.
  const accountHost = new URL(cosmos.endpoint).hostname;
  const containers = (trigger: { databaseName: string; containerName: string; leaseContainerName: string }) => ({
    monitored: store.client.database(trigger.databaseName).container(trigger.containerName),
    leases: store.client.database(trigger.databaseName).container(trigger.leaseContainerName),
    accountHost,
  });
  const unobserve = observeLocalRuntime(durable);
  const timers = new TimerHost(app.timers, systemClock, log);
  const ops = opsReader(telemetry, durable);
  const pumps = app.cosmosDBTriggers.map((trigger) => {
    const { monitored, leases } = containers(trigger);
    return new ChangeFeedPump(monitored, leases, trigger, {
      pollMs: options.pollMs ?? trigger.feedPollDelayMs,
      // The embedded server runs here: a drained lease waits for a write to its container instead of polling.
      changes: embedded
        ? (notify: () => void) =>
            embedded!.watchItems((change) => change.database === trigger.databaseName && change.container === trigger.containerName && notify())
        : undefined,
      maxItems: 100,
      owner: options.leaseOwner ?? "local-host",
      accountHost,
      leases: { ...DEFAULT_LEASE_TIMING, ...trigger.leaseTiming, ...options.leaseTiming },
      log,
    });
  });

  const devSecret = (options.devSignIn ?? !options.cosmos) ? settings.auth.devSecret : undefined;
  const web = options.webDir
    ? {
        dir: options.webDir,
        sourceMapsDir: options.sourceMapsDir,
        config: { apiBase: "/api", auth: options.webSignIn ? { mode: "entra" as const, ...options.webSignIn } : { mode: "dev" as const } },
        devSignIn: devSecret ? devSignIn(devSecret) : undefined,
      }
    : undefined;
  const server: Server = createHttpServer(app.http, {
    describeRequest: (request) => costLine(cosmosUsageOf(request as never)),
    log,
    corsAllowedOrigins: options.corsAllowedOrigins,
    web,
    allowedHosts: options.allowedHosts,
    logRequests: options.logRequests,
    durable,
    ops: () => ops.read(),
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 7071, "127.0.0.1", resolve);
  });
  const { port } = server.address() as { port: number };
  origin = `http://127.0.0.1:${port}`;
  announceHostName(port);
  // The consumers start once the durable client can reach the host.
  await app.start();
  pumps.forEach((pump) => pump.start());
  timers.start();

  return {
    url: `http://localhost:${port}/api`,
    store,
    durable,
    services: invocationServices(
      durableInvocation("localInvocation", originOf(), (_level, ...args) => log(args.join(" "))),
      services,
    ),
    cosmosEndpoint: cosmos.endpoint,
    cosmosKey: cosmos.key,
    async stop() {
      // In-flight requests are answered, then the consumers checkpoint and the orchestrations pause, resumable.
      await drainHttp(server, 2000);
      await timers.stop();
      await Promise.all(pumps.map((pump) => pump.stop()));
      await durable.stop();
      await app.stop();
      unobserve();
      ops.stop();
      store.dispose();
      await embedded?.stop();
    },
  };
}
