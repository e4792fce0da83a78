import { readFileSync } from "node:fs";
import { join } from "node:path";
import vm from "node:vm";

/**
 * What a run answers, as JSON text: `{result: {requestBody, responseBody, logs}}`, or
 * `{error: {message, number?}}` for what the script threw, or `{timeout: true}` (the server's,
 * for a run it stopped).
 */
export type RunOutput = string;

/** The host's side of a run: the run's input, and its collection calls, as JSON text both ways. */
export interface Host {
  input: string;
  call(op: string, args: string): string;
}

// The runtime lives in a plain .js file so it is evaluated inside the sandbox, never in Node's realm.
const runtime = new vm.Script(readFileSync(join(__dirname, "sandbox-runtime.js"), "utf8"), { filename: "sandbox-runtime.js" });
const invoke = new vm.Script("__run()");

/**
 * A script's own context, made once and reused (a fresh context per call costs milliseconds and
 * megabytes). `host` is what the current run may ask for; between runs, nothing.
 */
interface Sandbox {
  context: vm.Context;
  host?: Host & { inputGiven?: boolean; unclean?: boolean };
}

const sandboxes = new Map<string, Sandbox>();
const MAX_SANDBOXES = 200;

function sandboxFor(body: string): Sandbox {
  let sandbox = sandboxes.get(body);
  if (sandbox) {
    // Most recently used last, so the least recently used goes first when the cache is full.
    sandboxes.delete(body);
  } else {
    sandbox = newSandbox();
    if (sandboxes.size >= MAX_SANDBOXES) sandboxes.delete(sandboxes.keys().next().value as string);
  }
  sandboxes.set(body, sandbox);
  return sandbox;
}

/**
 * A context with the runtime set up in it. Its global object is its own (DONT_CONTEXTIFY): a
 * global made from a host object leads, through `this.constructor`, to the host's `Function`.
 * Promise callbacks run before the run ends ("afterEvaluate"), so within its time limit. The
 * runtime installs `__run`, a global no script can replace.
 */
function newSandbox(): Sandbox {
  const context = vm.createContext(vm.constants.DONT_CONTEXTIFY, { codeGeneration: { strings: true, wasm: false }, microtaskMode: "afterEvaluate" });
  const sandbox: Sandbox = { context };
  const setup = runtime.runInContext(context) as (bridge: (op: unknown, args: unknown) => string) => void;
  setup((op, args) => bridge(sandbox, op, args));
  return sandbox;
}

const NOT_ACCEPTED = JSON.stringify({ accepted: false });

/** The one function of this realm a script's runtime can call: strings in, a string out, never a throw. */
function bridge(sandbox: Sandbox, op: unknown, args: unknown): string {
  const host = sandbox.host;
  if (!host || typeof op !== "string" || typeof args !== "string") return NOT_ACCEPTED;
  if (op === "input") {
    // Given once: a promise callback calling the runtime again would run the script twice.
    if (host.inputGiven) return "null";
    host.inputGiven = true;
    return host.input;
  }
  if (op === "unclean") {
    host.unclean = true;
    return "{}";
  }
  try {
    return host.call(op, args);
  } catch {
    return JSON.stringify({ accepted: true, error: { number: 500, message: "The collection call failed in the server." } });
  }
}

/**
 * Runs a stored procedure or trigger body in its sandbox; never throws. No time limit here: the
 * server ends this thread when a run outlasts its limit (a node:vm timeout would start a
 * watchdog thread for every run).
 */
export function runInSandbox(body: string, host: Host): RunOutput {
  const sandbox = sandboxFor(body);
  sandbox.host = host;
  try {
    const output = invoke.runInContext(sandbox.context) as unknown;
    if (sandbox.host.unclean) sandboxes.delete(body);
    return typeof output === "string" ? output : JSON.stringify({ error: { message: "The script's runtime answered nothing." } });
  } catch {
    sandboxes.delete(body); // stopped midway: its runtime's state is not to be trusted
    return JSON.stringify({ error: { message: "The script could not be run." } });
  } finally {
    sandbox.host = undefined;
  }
}
