import { readFileSync } from "node:fs";
import { join } from "node:path";
import vm from "node:vm";
import { badRequest } from "../wire/errors";
import type { Json } from "../wire/json";
import { keptOrMade } from "./kept";

// User-defined functions run on the query thread (query-thread-main.ts), never the server's,
// each body in a node:vm context of its own made as the stored procedures' are
// (src/scripts/sandbox.ts): a global object of its own (DONT_CONTEXTIFY), no WebAssembly, only
// strings crossing. No time limit per call (a node:vm timeout starts a watchdog thread for
// every call, and a query calls once per item): the server ends the thread when the query
// outlasts a script's time.

// The runtime lives in a plain .js file so it is evaluated inside the sandbox, never in Node's realm.
const runtime = new vm.Script(readFileSync(join(__dirname, "udf-runtime.js"), "utf8"), { filename: "udf-runtime.js" });
const invoke = new vm.Script("__call()");

/** A function as the SQL engine calls it: values in, a value out. */
export type SandboxedFunction = (...args: Json[]) => Json | undefined;

/** `body` in a context of its own, callable; a throw in it is a 400 naming the function, as Azure answers. */
function sandboxed(name: string, body: string): SandboxedFunction {
  const context = vm.createContext(vm.constants.DONT_CONTEXTIFY, { codeGeneration: { strings: true, wasm: false }, microtaskMode: "afterEvaluate" });
  let argumentsText = "[]";
  const setup = runtime.runInContext(context) as (argumentsText: () => string, body: string) => void;
  setup(() => argumentsText, body);
  return (...args) => {
    argumentsText = JSON.stringify(args);
    const output = invoke.runInContext(context) as unknown;
    const answer = JSON.parse(typeof output === "string" ? output : "{}") as { value?: Json; error?: string };
    if (answer.error !== undefined) throw badRequest(`Encountered exception while executing function udf.${name}: ${answer.error}`);
    return answer.value;
  };
}

/** Sandboxed functions, kept by name and body (a context costs a millisecond to make). */
const made = new Map<string, SandboxedFunction>();
const MAX_MADE = 100;

/** The container's functions a query calls, each sandboxed, by name. */
export function sandboxedFunctions(bodies: Record<string, string>): Record<string, SandboxedFunction> {
  return Object.fromEntries(
    Object.entries(bodies).map(([name, body]) => [name, keptOrMade(made, MAX_MADE, JSON.stringify([name, body]), () => sandboxed(name, body))]),
  );
}
