import Module from "node:module";

/**
 * `@azure/functions-core`: the module the Azure Functions Node.js language worker gives an app
 * (never installed from npm; `require` answers it inside the worker). `@azure/functions` and
 * durable-functions register every function, hook and their programming model through it. This
 * host answers it the same way, so it serves what the app registers, as Azure reads it, and
 * nothing of the app's own tables. The shapes below are the parts of its interface
 * (types-core in the azure-functions-nodejs-library repository) that a host needs.
 */

/** One binding of a function, as the app's `toCoreFunctionMetadata` writes it (options spread in). */
export interface RpcBindingInfo {
  type: string;
  direction: "in" | "out" | "inout";
  [option: string]: unknown;
}

export interface FunctionMetadata {
  name: string;
  bindings: Record<string, RpcBindingInfo>;
  retryOptions?: {
    retryStrategy?: string;
    maxRetryCount?: number;
    minimumInterval?: { seconds?: number };
    maximumInterval?: { seconds?: number };
    delayInterval?: { seconds?: number };
  };
}

/** Data crossing between host and worker: exactly one member is set. */
export interface RpcTypedData {
  string?: string;
  json?: string;
  bytes?: Uint8Array;
  int?: number;
  double?: number;
  http?: RpcHttpData;
}

export interface RpcHttpData {
  method?: string;
  url?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  params?: Record<string, string>;
  body?: RpcTypedData;
  statusCode?: string;
  cookies?: { name: string; value: string; [attribute: string]: unknown }[];
}

export type FunctionCallback = (...args: unknown[]) => unknown;

/** What the programming model makes of one invocation request (InvocationModel). */
export interface InvocationModel {
  getArguments(): Promise<{ context: unknown; inputs: unknown[] }>;
  invokeFunction(context: unknown, inputs: unknown[], callback: FunctionCallback): Promise<unknown>;
  getResponse(context: unknown, result: unknown): Promise<{ returnValue?: RpcTypedData | null; outputData?: { name: string; data: RpcTypedData }[] }>;
}

export interface CoreInvocationContext {
  invocationId: string;
  metadata: FunctionMetadata;
  request: { inputData: { name: string; data: RpcTypedData }[]; triggerMetadata: Record<string, RpcTypedData> };
  state?: string;
  log(level: string, category: string, message: string): void;
}

export interface ProgrammingModel {
  name: string;
  version: string;
  getInvocationModel(context: CoreInvocationContext): InvocationModel;
  getCapabilities(capabilities: Record<string, string>): Promise<Record<string, string>>;
}

export type HookName = "preInvocation" | "postInvocation" | "appStart" | "appTerminate" | "log";
type HookCallback = (context: Record<string, unknown>) => unknown;

export interface RegisteredFunction {
  metadata: FunctionMetadata;
  callback: FunctionCallback;
}

/** What the app registered through the module: its functions, hooks and programming model. */
export interface Registrations {
  functions: RegisteredFunction[];
  hooks: Map<HookName, HookCallback[]>;
  programmingModel?: ProgrammingModel;
  /** What the app's hooks share for as long as it runs (appHookData), process-wide like the rest. */
  appHookData: Record<string, unknown>;
  /** Whether `require` answers the module yet. */
  installed: boolean;
}

class Disposable {
  constructor(private readonly onDispose: () => void) {}
  static from(...items: { dispose(): void }[]) {
    return new Disposable(() => items.forEach((item) => item.dispose()));
  }
  dispose(): void {
    this.onDispose();
  }
}

/**
 * Process-wide, as in the worker: an app registers once, when it is loaded, and a module is
 * loaded once per process. Kept on globalThis so two copies of this file (a test runner's and
 * Node's) share one registry.
 */
const REGISTRY = Symbol.for("blog.local-host.functions-core");

function registry(): Registrations {
  const global = globalThis as { [REGISTRY]?: Registrations };
  return (global[REGISTRY] ??= { functions: [], hooks: new Map(), appHookData: {}, installed: false });
}

/** The module's API, as the worker's (version numbers of today's worker and host). */
function coreApi(registrations: Registrations) {
  return {
    version: "3.10.1",
    hostVersion: "4.1040.0",
    setProgrammingModel(model: ProgrammingModel) {
      registrations.programmingModel = model;
    },
    getProgrammingModel: () => registrations.programmingModel,
    registerFunction(metadata: FunctionMetadata, callback: FunctionCallback) {
      if (registrations.functions.some((f) => f.metadata.name.toLowerCase() === metadata.name.toLowerCase()))
        throw new Error(`A function can only be registered once: '${metadata.name}' already is.`);
      // As the worker sends it to the host: JSON, so nothing of the app's objects leaks through.
      const entry = { metadata: JSON.parse(JSON.stringify(metadata)) as FunctionMetadata, callback };
      registrations.functions.push(entry);
      return new Disposable(() => registrations.functions.splice(registrations.functions.indexOf(entry), 1));
    },
    registerHook(name: HookName, callback: HookCallback) {
      const list = registrations.hooks.get(name) ?? [];
      registrations.hooks.set(name, [...list, callback]);
      return new Disposable(() =>
        registrations.hooks.set(
          name,
          (registrations.hooks.get(name) ?? []).filter((c) => c !== callback),
        ),
      );
    },
    // The library's own lines outside an invocation (its capabilities, setup warnings): this host does not print them.
    log: () => {},
    Disposable,
  };
}

/**
 * Makes `require("@azure/functions-core")` answer this host's module, as the worker does, and
 * returns what the app registers through it. Call before the app is loaded: `@azure/functions`
 * looks the module up once and stays in "test mode" if it is missing.
 */
export function installFunctionsCore(): Registrations {
  const registrations = registry();
  if (registrations.installed) return registrations;
  registrations.installed = true;
  const api = coreApi(registrations);
  const moduleWithLoad = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
  const load = moduleWithLoad._load;
  moduleWithLoad._load = function (request: string, ...rest: unknown[]) {
    return request === "@azure/functions-core" ? api : load.call(this, request, ...rest);
  };
  return registrations;
}
