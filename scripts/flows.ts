import { AsyncLocalStorage } from "node:async_hooks";
import { commandLine, defineCommand } from "../local/command-line";
import Module from "node:module";
import { join, relative, sep } from "node:path";

/**
 * `npm run flows`: three flows through the app's own files as they run, the way a reader
 * follows them: a post created (POST /posts), the posts change feed batch it causes, and a
 * rename (PUT /users/{userId}). Each app function a flow calls across files is recorded; the
 * report gives, per flow, the files it passed through and how often it called into a file it
 * had already been in and left (a return to the caller is not counted: that is what a call
 * does). Fewer of both is a flow easier to follow.
 *
 * Only the app is traced (src/ and functions/, as Azure runs them), not the SDKs or the local
 * runtime; a flow starts at the handler of the route or consumer table entry that both hosts
 * register.
 */

const root = join(__dirname, "..");
const traced = [join(root, "src") + sep, join(root, "functions") + sep];

interface Flow {
  name: string;
  /** The files in the order the flow was in them, each change of file once. */
  path: string[];
  /** Calls into a file the flow had already been in and left. */
  comebacks: number;
}
const current = new AsyncLocalStorage<Flow>();
const flows: Flow[] = [];

/** The flow moves into `file`: a call into it, or a return to it. */
function moveTo(file: string, by: "call" | "return"): void {
  const flow = current.getStore();
  if (!flow || flow.path[flow.path.length - 1] === file) return;
  if (by === "call" && flow.path.includes(file)) flow.comebacks++;
  flow.path.push(file);
}

type AnyFunction = (...args: unknown[]) => unknown;

/** `fn` that records the move into `file` when called, and back to the caller's file when done. */
function traceCalls(fn: AnyFunction, file: string): AnyFunction {
  return function (this: unknown, ...args: unknown[]) {
    const flow = current.getStore();
    const caller = flow?.path[flow.path.length - 1];
    moveTo(file, "call");
    const back = () => caller !== undefined && moveTo(caller, "return");
    let result: unknown;
    try {
      result = fn.apply(this, args);
    } catch (error) {
      back(); // a throw returns to the caller too
      throw error;
    }
    if (result instanceof Promise) return result.finally(back);
    back();
    return result;
  };
}

const isClass = (value: AnyFunction) => /^class\b/.test(Function.prototype.toString.call(value));

/** Wraps a module's exported functions, the methods of its exported classes and the functions of its exported plain objects. */
function traceModule(exports: Record<string, unknown>, file: string): void {
  for (const [name, value] of Object.entries(exports)) {
    if (typeof value !== "function") continue;
    const fn = value as AnyFunction;
    if (isClass(fn)) {
      for (const method of Object.getOwnPropertyNames(fn.prototype)) {
        const descriptor = Object.getOwnPropertyDescriptor(fn.prototype, method)!;
        if (method !== "constructor" && typeof descriptor.value === "function")
          Object.defineProperty(fn.prototype, method, { ...descriptor, value: traceCalls(descriptor.value as AnyFunction, file) });
      }
      continue;
    }
    const descriptor = Object.getOwnPropertyDescriptor(exports, name);
    if (descriptor?.writable) exports[name] = traceCalls(fn, file);
  }
  // An exported plain object's functions are the file's too (an endpoint's handler).
  for (const value of Object.values(exports)) {
    if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) continue;
    const object = value as Record<string, unknown>;
    for (const [name, member] of Object.entries(object))
      if (typeof member === "function" && !isClass(member as AnyFunction)) object[name] = traceCalls(member as AnyFunction, file);
  }
}

/** Runs `handler` as a new flow named `name`. */
function startsFlow(name: string, handler: AnyFunction): AnyFunction {
  return (...args: unknown[]) => {
    const flow: Flow = { name, path: [], comebacks: 0 };
    flows.push(flow);
    return current.run(flow, () => handler(...args));
  };
}

/** Where flows start: the handlers of the app's route table and change feed consumer table, which both hosts register. */
const ENTRIES: Record<string, (exports: Record<string, unknown>) => void> = {
  "src/api/routes.ts": ({ routes }) => {
    for (const route of routes as { name: string; handler: AnyFunction }[]) route.handler = startsFlow(route.name, route.handler);
  },
  "src/pipeline/change-feed-triggers.ts": ({ changeFeedTriggers }) => {
    for (const trigger of changeFeedTriggers as { name: string; handler: AnyFunction }[]) trigger.handler = startsFlow(trigger.name, trigger.handler);
  },
};

/** Every app module is traced as it loads, and the entries' handlers start flows. */
function installTracing(): void {
  const loader = Module as unknown as { _load: (request: string, parent: unknown, isMain: boolean) => unknown };
  const load = loader._load;
  const seen = new Set<unknown>();
  loader._load = function (request, parent, isMain) {
    const loaded = load.call(this, request, parent, isMain);
    const filename = (() => {
      try {
        return Module.createRequire((parent as { filename?: string } | null)?.filename ?? join(root, "x")).resolve(request);
      } catch {
        return undefined;
      }
    })();
    if (filename && traced.some((dir) => filename.startsWith(dir)) && !seen.has(loaded)) {
      seen.add(loaded);
      const file = relative(root, filename).replace(/\.js$/, ".ts");
      traceModule(loaded as Record<string, unknown>, file);
      ENTRIES[file]?.(loaded as Record<string, unknown>);
    }
    return loaded;
  };
}

const COMMAND = defineCommand({
  name: "npm run flows",
  summary:
    "Follows three flows through the app's files (POST /posts, a posts change feed batch, a rename) and prints which files each crosses, and how often it comes back to one.",
  flags: {},
  examples: ["npm run flows"],
});

async function main(): Promise<void> {
  commandLine(COMMAND);
  installTracing();
  // Loaded after the tracing is in place, so the app's modules are loaded through it.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { startLocalSystem } = require("../local/system") as typeof import("../local/system");
  const { devToken, LOCAL_DEV_SECRET } = require("../local/dev-auth") as typeof import("../local/dev-auth");
  /* eslint-enable @typescript-eslint/no-require-imports */
  const system = await startLocalSystem({ port: 0, pollMs: 100, feedCacheMs: 0 });
  const call = async (method: string, path: string, userId: string, body: unknown) => {
    const headers = { authorization: `Bearer ${await devToken(userId, LOCAL_DEV_SECRET)}`, "content-type": "application/json" };
    const response = await fetch(`${system.url}${path}`, { method, headers, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1500));
  try {
    await call("POST", "/users", "flow-author", { username: "flow-author" });
    await settle();
    const marks = flows.length;
    await call("POST", "/posts", "flow-author", { title: "A flow", content: "followed through the code" });
    await settle();
    await call("PUT", "/users/flow-author", "flow-author", { username: "flow-author-2" });
    await settle();
    const report = (name: string, label: string) => {
      const flow = flows.slice(marks).find((f) => f.name === name && f.path.length > 0);
      if (!flow) throw new Error(`no ${name} flow was seen`);
      console.log(`${label}: ${new Set(flow.path).size} files, ${flow.comebacks} calls into a file it had left`);
      console.log(`  ${flow.path.join(" > ")}`);
    };
    report("createPost", "POST /posts");
    report("postsChangeFeed", "posts change feed batch");
    report("updateUser", "PUT /users/{userId} (rename)");
  } finally {
    await system.stop();
  }
}

if (require.main === module)
  main().catch((error: unknown) => {
    console.error(`flows failed: ${(error as Error).message}`);
    process.exitCode = 1;
  });
