import { CosmosClient, type Container, type Database } from "@azure/cosmos";
import { createDefaultHttpClient } from "@azure/core-rest-pipeline";
import { resolveSettings, type Settings, type SettingsInput } from "../config";
import { CONTAINERS } from "./definitions";
import { tracedHttpClient } from "../telemetry";
import { measuredHttpClient } from "./metering";
import { prioritizedHttpClient } from "./priority";

/** The containers of one database, reached through a single CosmosClient. */
export class BlogStore {
  readonly database: Database;
  readonly users: Container;
  readonly posts: Container;
  readonly feed: Container;
  readonly leases: Container;
  /** Change feed documents no consumer can process, set aside with their reason. */
  readonly deadLetters: Container;

  constructor(
    readonly client: CosmosClient,
    readonly settings: Settings,
    /** Milliseconds on a monotonic clock, for what the store keeps in memory (the feed micro-cache); tests bring their own. */
    readonly now: () => number = () => performance.now(),
  ) {
    this.database = client.database(settings.cosmos.databaseName);
    this.users = this.database.container(CONTAINERS.users);
    this.posts = this.database.container(CONTAINERS.posts);
    this.feed = this.database.container(CONTAINERS.feed);
    this.leases = this.database.container(CONTAINERS.leases);
    this.deadLetters = this.database.container(CONTAINERS.deadLetters);
  }

  dispose(): void {
    this.client.dispose();
  }
}

/**
 * State a store module keeps for each store (a queue, a micro-cache): made on the store's first
 * use, and gone with the store, so two stores in one process never share it.
 */
export function perStore<T>(make: () => T): (store: BlogStore) => T {
  const states = new WeakMap<BlogStore, T>();
  return (store) => {
    let state = states.get(store);
    if (!state) states.set(store, (state = make()));
    return state;
  };
}

/**
 * A key (emulator, embedded server) or, in Azure, Entra ID through DefaultAzureCredential
 * (managed identity; AZURE_CLIENT_ID picks the user-assigned one).
 */
export function createCosmosClient(settings: Settings["cosmos"]): CosmosClient {
  const local = settings.endpoint.startsWith("http://");
  return new CosmosClient({
    endpoint: settings.endpoint,
    ...(settings.key ? { key: settings.key } : { aadCredentials: entraIdCredential() }),
    // A plain-HTTP endpoint is a local server: there are no regions to discover.
    connectionPolicy: {
      enableEndpointDiscovery: !local,
      retryOptions: {
        maxRetryAttemptCount: 9,
        fixedRetryIntervalInMilliseconds: 0,
        maxWaitTimeInSeconds: settings.maxRetryWaitSeconds,
      },
    },
    // Each request a span and metrics (telemetry), counted for the measurement it runs in, and
    // low priority when the background sends it (priority.ts).
    httpClient: tracedHttpClient(measuredHttpClient(prioritizedHttpClient(createDefaultHttpClient()))),
    userAgentSuffix: "blog-cosmos-functions",
  });
}

/**
 * DefaultAzureCredential, loaded on first use (from a file of its own in the deployment package,
 * lazy/splits.ts): MSAL and friends are a large part of what a cold start would otherwise load,
 * and a key-based client never needs them.
 */
function entraIdCredential() {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { DefaultAzureCredential } = require("@azure/identity") as typeof import("@azure/identity");
  return new DefaultAzureCredential();
}

/** A store for the account `input` names, with every setting resolved (defaults for what it leaves out). */
export function createStore(input: SettingsInput, options: { now?: () => number } = {}): BlogStore {
  const resolved = resolveSettings(input);
  return new BlogStore(createCosmosClient(resolved.cosmos), resolved, options.now);
}
