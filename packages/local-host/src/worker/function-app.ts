import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { installFunctionsCore, type RegisteredFunction, type Registrations, type RpcBindingInfo, type RpcHttpData, type RpcTypedData } from "./functions-core";
import { invoke, jsonOf, runHooks } from "./invocation";

/** An HTTP trigger as registered: its route template (under the host's prefix), methods and auth level. */
export interface HttpFunction {
  name: string;
  route: string;
  methods: string[];
  authLevel: string;
  /** Runs the function on a request; answers the response and the HttpRequest the function was given. */
  invoke(request: RpcHttpData): Promise<{ response: RpcHttpData; request: unknown }>;
}

/** A change feed trigger as registered, its settings resolved (`%NAME%`). */
export interface CosmosDBTriggerFunction {
  name: string;
  connection: string;
  databaseName: string;
  containerName: string;
  leaseContainerName: string;
  leaseContainerPrefix: string;
  startFromBeginning: boolean;
  /** Between polls of a drained range (feedPollDelay; the extension's default is 5 s). */
  feedPollDelayMs: number;
  /** The function's retry policy (exponential backoff; the trigger retries forever with maxRetryCount -1). */
  retry: { minimumIntervalMs: number; maximumIntervalMs: number; maxRetryCount: number };
  /** The lease intervals it registered (leaseExpirationInterval, leaseRenewInterval, leaseAcquireInterval, ms); the trigger's defaults where absent. */
  leaseTiming: { expirationMs?: number; renewMs?: number; acquireMs?: number };
  /** Delivers one batch; rejects if the function failed. */
  invoke(documents: unknown[]): Promise<void>;
}

/** A timer trigger as registered, its schedule resolved (`%NAME%`). */
export interface TimerFunction {
  name: string;
  /** An NCRONTAB expression: `{second} {minute} {hour} {day} {month} {day-of-week}`. */
  schedule: string;
  runOnStartup: boolean;
  /** Runs it once; `timer` is what the host hands a timer function (Schedule, ScheduleStatus, IsPastDue). */
  invoke(timer: TimerInfo): Promise<void>;
}

/** The timer trigger's payload, as the Functions host sends it (the programming model camel-cases it). */
export interface TimerInfo {
  Schedule: { AdjustForDST: boolean };
  ScheduleStatus: { Last: string; Next: string; LastUpdated: string } | null;
  IsPastDue: boolean;
}

/** A durable function: called with its trigger's payload, answering JSON (the orchestrator's state, an activity's result). */
export type TriggeredFunction = (trigger: unknown) => Promise<string>;

export interface DurableFunctions {
  orchestrations: Map<string, TriggeredFunction>;
  activities: Map<string, TriggeredFunction>;
  entities: Map<string, TriggeredFunction>;
}

/** What a host serves of an app: what it registered, each runnable as the worker runs it. */
export interface FunctionApp {
  http: HttpFunction[];
  cosmosDBTriggers: CosmosDBTriggerFunction[];
  timers: TimerFunction[];
  durable: DurableFunctions;
  /** Functions of trigger types this host does not run ("name (type)"), to say so at start. */
  unserved: string[];
  /** Runs the app's appStart hooks (once it is served) and appTerminate hooks (when it stops). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface FunctionAppOptions {
  /** App settings, for `%NAME%` in binding properties (as local.settings.json's Values). */
  settings: (name: string) => string | undefined;
  /** The durable client binding's data, given to every function with a `durableClient` input. */
  durableClient: () => unknown;
  log: (functionName: string, level: string, message: string) => void;
  /**
   * Runs each invocation (the app's code and all it awaits): where a host serving several apps
   * from one module, each with its own services, puts an invocation in its app's scope.
   */
  invocationScope?: <T>(invocation: () => Promise<T>) => Promise<T>;
}

const SETTING = /%([^%]+)%/g;

/** The trigger types this host runs. */
const SERVED = ["httpTrigger", "cosmosDBTrigger", "timerTrigger", "orchestrationTrigger", "activityTrigger", "entityTrigger"];

/** Binding properties with their `%NAME%` app settings replaced, as the host resolves them at start. */
function resolved(binding: RpcBindingInfo, fn: string, settings: FunctionAppOptions["settings"]): RpcBindingInfo {
  const entries = Object.entries(binding).map(([key, value]) => [
    key,
    typeof value === "string"
      ? value.replace(SETTING, (_, name: string) => {
          const setting = settings(name);
          if (setting === undefined) throw new Error(`${fn}: '%${name}%' does not resolve to a value (no app setting ${name})`);
          return setting;
        })
      : value,
  ]);
  return Object.fromEntries(entries) as RpcBindingInfo;
}

const triggerOf = (fn: RegisteredFunction) => Object.entries(fn.metadata.bindings).find(([, binding]) => /trigger$/i.test(binding.type))!;

/**
 * Loads the app's entry as the worker loads it (`main` of its package.json), with
 * `@azure/functions-core` answered by this host, and returns what it registered. A module loads
 * once per process: a second load of the same entry returns the same registrations.
 */
export async function loadFunctionApp(entry: string, options: FunctionAppOptions): Promise<FunctionApp> {
  const registrations = installFunctionsCore();
  // Compiled, the entry is JavaScript; under a test runner that compiles TypeScript itself, its source.
  const file = [".js", ".ts"].map((extension) => `${entry}${extension}`).find((candidate) => existsSync(candidate));
  if (!file) throw new Error(`the app's entry ${entry}(.js|.ts) does not exist: build it first (tsc -b)`);
  await import(file.endsWith(".ts") ? file : pathToFileURL(file).href);
  // An app loaded before the module was answered (imported by something else first) registered nothing here.
  if (registrations.functions.length === 0) throw new Error(`${file} registered no functions (was it loaded before this host?)`);
  await registrations.programmingModel?.getCapabilities({});
  return functionApp(registrations, options);
}

function functionApp(registrations: Registrations, options: FunctionAppOptions): FunctionApp {
  /** How one function is invoked: its trigger's and durable clients' binding names, read once from its metadata. */
  const runner = (fn: RegisteredFunction) => {
    const [triggerName] = triggerOf(fn);
    const clients = Object.entries(fn.metadata.bindings)
      .filter(([, binding]) => binding.type === "durableClient" && binding.direction === "in")
      .map(([name]) => name);
    const log = (level: string, message: string) => options.log(fn.metadata.name, level, message);
    const scope = options.invocationScope ?? ((invocation) => invocation());
    return (data: RpcTypedData) => {
      const inputData = [{ name: triggerName, data }, ...clients.map((name) => ({ name, data: { string: JSON.stringify(options.durableClient()) } }))];
      return scope(() => invoke(registrations, fn, { inputData }, log));
    };
  };
  const ofType = (type: string) => registrations.functions.filter((fn) => triggerOf(fn)[1].type.toLowerCase() === type.toLowerCase());
  const durable = (type: string) =>
    new Map(
      ofType(type).map((fn): [string, TriggeredFunction] => {
        const run = runner(fn);
        return [fn.metadata.name, async (trigger) => jsonOf((await run({ string: JSON.stringify(trigger) })).returnValue)];
      }),
    );
  return {
    http: ofType("httpTrigger").map((fn) => {
      const trigger = triggerOf(fn)[1];
      const run = runner(fn);
      return {
        name: fn.metadata.name,
        route: typeof trigger.route === "string" ? trigger.route : fn.metadata.name,
        methods: ((trigger.methods as string[] | undefined) ?? ["GET", "POST"]).map((method) => method.toUpperCase()),
        authLevel: String(trigger.authLevel ?? "function"),
        async invoke(http) {
          const { returnValue, inputs } = await run({ http });
          return { response: returnValue?.http ?? { statusCode: "204" }, request: inputs[0] };
        },
      };
    }),
    cosmosDBTriggers: ofType("cosmosDBTrigger").map((fn) => {
      const trigger = resolved(triggerOf(fn)[1], fn.metadata.name, options.settings);
      const retry = fn.metadata.retryOptions;
      const run = runner(fn);
      return {
        name: fn.metadata.name,
        connection: String(trigger.connection),
        databaseName: String(trigger.databaseName),
        containerName: String(trigger.containerName),
        leaseContainerName: String(trigger.leaseContainerName ?? "leases"),
        leaseContainerPrefix: String(trigger.leaseContainerPrefix ?? ""),
        startFromBeginning: trigger.startFromBeginning === true,
        feedPollDelayMs: typeof trigger.feedPollDelay === "number" ? trigger.feedPollDelay : 5000,
        // A function registered without a policy gets this host's: 1 s doubling to 60 s, until the batch succeeds.
        retry: {
          minimumIntervalMs: (retry?.minimumInterval?.seconds ?? retry?.delayInterval?.seconds ?? 1) * 1000,
          maximumIntervalMs: (retry?.maximumInterval?.seconds ?? retry?.delayInterval?.seconds ?? 60) * 1000,
          maxRetryCount: retry?.maxRetryCount ?? -1,
        },
        leaseTiming: {
          ...(typeof trigger.leaseExpirationInterval === "number" ? { expirationMs: trigger.leaseExpirationInterval } : {}),
          ...(typeof trigger.leaseRenewInterval === "number" ? { renewMs: trigger.leaseRenewInterval } : {}),
          ...(typeof trigger.leaseAcquireInterval === "number" ? { acquireMs: trigger.leaseAcquireInterval } : {}),
        },
        async invoke(documents) {
          await run({ json: JSON.stringify(documents) });
        },
      };
    }),
    timers: ofType("timerTrigger").map((fn) => {
      const trigger = resolved(triggerOf(fn)[1], fn.metadata.name, options.settings);
      const run = runner(fn);
      return {
        name: fn.metadata.name,
        schedule: String(trigger.schedule),
        runOnStartup: trigger.runOnStartup === true,
        async invoke(timer) {
          await run({ json: JSON.stringify(timer) });
        },
      };
    }),
    durable: { orchestrations: durable("orchestrationTrigger"), activities: durable("activityTrigger"), entities: durable("entityTrigger") },
    unserved: registrations.functions
      .filter((fn) => !SERVED.some((type) => type.toLowerCase() === triggerOf(fn)[1].type.toLowerCase()))
      .map((fn) => `${fn.metadata.name} (${triggerOf(fn)[1].type})`),
    start: () =>
      runHooks(registrations, "appStart", { hookData: registrations.appHookData, appHookData: registrations.appHookData, functionAppDirectory: process.cwd() }),
    stop: () => runHooks(registrations, "appTerminate", { hookData: registrations.appHookData, appHookData: registrations.appHookData }),
  };
}
