import { readFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import vm from "node:vm";
import type { Container } from "../engine/container";
import { badRequest, CosmosError, notFound, requestTimeout } from "../wire/errors";
import { isObject, type Json, type JsonObject } from "../wire/json";
import { cost, uncharged } from "../limits/request-units";
import { prepareQuery } from "../query/sql-support";

export interface ScriptLimits {
  /** Collection calls a script may make before they start returning `false` (isAccepted). */
  operationLimit: number;
  /** Wall-clock budget; a script still running then is stopped and rolled back with 408. */
  timeoutMs: number;
}

export interface ScriptRun {
  body: string;
  params?: Json[];
  requestBody?: JsonObject;
  responseBody?: JsonObject;
}

export interface ScriptResult {
  requestBody?: Json;
  responseBody?: Json;
  logs: string[];
  /** Collection calls the script made (what its request is charged). */
  operations: number;
}

// The runtime lives in a plain .js file so it is evaluated inside the sandbox, never in Node's realm.
const runtime = new vm.Script(readFileSync(join(__dirname, "sandbox-runtime.js"), "utf8"), { filename: "sandbox-runtime.js" });
const invoke = new vm.Script("(function (input) { delete globalThis.__input; return __runtime(input); })(globalThis.__input)");
// Inside the context (deleting through the host's view of it does not reach the real global):
// remember the global names after setup, and remove whatever a run adds.
const installReset = new vm.Script(
  "Object.defineProperty(globalThis, '__reset', { value: (function () { var keep = Object.getOwnPropertyNames(globalThis).concat(['__reset']);" +
    " return function () { Object.getOwnPropertyNames(globalThis).forEach(function (name) { if (keep.indexOf(name) < 0) delete globalThis[name]; }); }; })() })",
);
const resetGlobals = new vm.Script("__reset()");

/** A script's own context, made once and reset after every run (a fresh context per call costs milliseconds and megabytes). */
interface Sandbox {
  context: vm.Context;
}

const sandboxes = new Map<string, Sandbox>();
const MAX_SANDBOXES = 200;

function sandboxFor(body: string): Sandbox {
  let sandbox = sandboxes.get(body);
  if (sandbox) {
    // Most recently used last, so the least recently used goes first when the cache is full.
    sandboxes.delete(body);
  } else {
    const context = vm.createContext({}, { codeGeneration: { strings: true, wasm: false } });
    Object.defineProperty(context, "__runtime", { value: runtime.runInContext(context), enumerable: false, writable: false, configurable: false });
    installReset.runInContext(context);
    sandbox = { context };
    if (sandboxes.size >= MAX_SANDBOXES) sandboxes.delete(sandboxes.keys().next().value as string);
  }
  sandboxes.set(body, sandbox);
  return sandbox;
}

/** Removes whatever a run left on the context's global object, so the next run starts clean. */
function reset(sandbox: Sandbox): void {
  resetGlobals.runInContext(sandbox.context, { timeout: 1000 });
}

/** The document id a link like `dbs/x/colls/y/docs/<id>` (or a `_self` link) names. */
function documentRef(link: unknown): string {
  const match = typeof link === "string" ? /\/docs\/([^/]+)\/?$/.exec(link) : null;
  if (!match) throw badRequest(`Invalid document link '${String(link)}'.`);
  return decodeURIComponent(match[1]);
}

/**
 * Collection operations as a script sees them: always scoped to the partition the request named.
 * Writes go through the container, inside the transaction the caller opened.
 */
class ScriptCollection {
  operations = 0;

  constructor(
    private readonly container: Container,
    private readonly pk: string,
    private readonly limits: ScriptLimits,
  ) {}

  handle(op: string, args: Json[]): { accepted: boolean; resource?: Json; options?: JsonObject; error?: { number: number; message: string } } {
    if (this.operations >= this.limits.operationLimit) return { accepted: false };
    this.operations += 1;
    try {
      return { accepted: true, ...this.run(op, args) };
    } catch (error) {
      if (!(error instanceof CosmosError)) throw error;
      return { accepted: true, error: { number: error.status, message: error.message } };
    }
  }

  private run(op: string, args: Json[]): { resource?: Json; options?: JsonObject } {
    const options = (isObject(args[args.length - 1]) ? args[args.length - 1] : {}) as JsonObject;
    const etag = typeof options.etag === "string" ? options.etag : undefined;
    switch (op) {
      case "read": {
        let found: JsonObject | undefined;
        try {
          found = this.find(documentRef(args[0]));
          return { resource: found };
        } finally {
          cost.read(found ? JSON.stringify(found).length : 0); // a miss is charged too
        }
      }
      case "query":
        return this.query(args[1], options);
      case "create": {
        const doc = this.document(args[1]);
        if (doc.id === undefined && options.disableAutomaticIdGeneration !== true) doc.id = randomUUID();
        return { resource: this.container.create(this.pk, doc) };
      }
      case "replace": {
        const doc = this.document(args[1]);
        const current = this.find(documentRef(args[0]));
        return { resource: this.container.replace(this.pk, current.id as string, doc, etag) };
      }
      case "upsert":
        return { resource: this.container.upsert(this.pk, this.document(args[1]), etag).doc };
      case "delete": {
        const current = this.find(documentRef(args[0]));
        this.container.delete(this.pk, current.id as string, etag);
        return {};
      }
      default:
        throw badRequest(`Unknown script operation '${op}'.`);
    }
  }

  private document(value: Json): JsonObject {
    if (!isObject(value)) throw badRequest("The document must be an object.");
    return value;
  }

  /**
   * A document of this partition by id or by `_rid` (scripts often pass `doc._self`). Uncharged:
   * Azure resolves a link as part of the operation that names it; a read charges itself.
   */
  private find(ref: string): JsonObject {
    return uncharged(() => {
      const byId = this.container.read(this.pk, ref);
      if (byId) return byId;
      const page = this.container.query(
        { pk: this.pk },
        prepareQuery({ query: "SELECT * FROM c WHERE c._rid = @rid", parameters: [{ name: "@rid", value: ref }] }),
      );
      if (page.items.length === 0) throw notFound();
      return page.items[0] as JsonObject;
    });
  }

  private query(spec: Json, options: JsonObject): { resource: Json; options: JsonObject } {
    const querySpec = typeof spec === "string" ? { query: spec } : isObject(spec) && typeof spec.query === "string" ? spec : undefined;
    if (!querySpec) throw badRequest("Invalid query.");
    const page = this.container.query(
      { pk: this.pk },
      prepareQuery({ query: querySpec.query as string, parameters: (querySpec.parameters ?? []) as { name: string; value: Json }[] }),
      typeof options.continuation === "string" ? options.continuation : undefined,
      typeof options.pageSize === "number" && options.pageSize > 0 ? options.pageSize : 100,
    );
    return { resource: page.items, options: page.continuation ? { continuation: page.continuation } : {} };
  }
}

function scriptError(error: unknown): CosmosError {
  if (error instanceof CosmosError) return error;
  const thrown = error as { code?: string; number?: unknown; message?: unknown } | undefined;
  if (thrown?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT") {
    return requestTimeout("The script did not complete within the allotted time and was stopped; its writes were rolled back.");
  }
  const message = typeof thrown?.message === "string" ? thrown.message : String(error);
  if (typeof thrown?.number === "number" && thrown.number >= 400 && thrown.number < 600) {
    return new CosmosError(thrown.number, "ScriptError", message);
  }
  return badRequest(`Encountered exception while executing Javascript. Exception = Error: ${message}`);
}

/**
 * Runs a stored procedure or trigger body against one logical partition. The caller wraps this
 * in `container.transaction`, so a throw here rolls back every write the script made.
 */
export function runScript(container: Container, pk: string, links: { self: string; alt: string }, run: ScriptRun, limits: ScriptLimits): ScriptResult {
  const collection = new ScriptCollection(container, pk, limits);
  const sandbox = sandboxFor(run.body);
  sandbox.context.__input = {
    bridge: (op: string, args: string) => JSON.stringify(collection.handle(op, JSON.parse(args) as Json[])),
    body: run.body,
    params: JSON.stringify(run.params ?? []),
    requestBody: run.requestBody === undefined ? undefined : JSON.stringify(run.requestBody),
    responseBody: run.responseBody === undefined ? undefined : JSON.stringify(run.responseBody),
    selfLink: links.self,
    altLink: links.alt,
  };
  try {
    const output = invoke.runInContext(sandbox.context, { timeout: limits.timeoutMs }) as string;
    return { ...(JSON.parse(output) as Omit<ScriptResult, "operations">), operations: collection.operations };
  } catch (error) {
    throw scriptError(error);
  } finally {
    reset(sandbox);
  }
}
