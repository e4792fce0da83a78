import type { Container } from "../engine/container";
import { badRequest, CosmosError, entityTooLarge, requestTimeout } from "../wire/errors";
import type { Json, JsonObject } from "../wire/json";
import { ScriptCollection, type ScriptLimits } from "./script-collection";
import { ScriptThread } from "./script-thread";

export type { ScriptLimits } from "./script-collection";

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

type Output = { result: Omit<ScriptResult, "operations"> } | { error: { number?: number; message: string } } | { timeout: true };

/** The most a script may send the server in one call or in its answer (a document is at most 2 MB). */
const MAX_TEXT = 4 * 1024 * 1024;

function scriptError(error: { number?: number; message: string }): CosmosError {
  if (typeof error.number === "number" && error.number >= 400 && error.number < 600) {
    return new CosmosError(error.number, "ScriptError", error.message);
  }
  return badRequest(`Encountered exception while executing Javascript. Exception = Error: ${error.message}`);
}

/** Runs stored procedures and triggers on the server's script thread (see ScriptThread). */
export class ScriptRunner {
  private readonly thread = new ScriptThread();

  constructor(private readonly limits: ScriptLimits) {}

  /**
   * Runs a stored procedure or trigger body against one logical partition. The caller wraps this
   * in `container.transaction`, so a throw here rolls back every write the script made.
   */
  run(container: Container, pk: string, links: { self: string; alt: string }, run: ScriptRun): ScriptResult {
    const collection = new ScriptCollection(container, pk, this.limits);
    const input = JSON.stringify({
      body: run.body,
      params: run.params ?? [],
      requestBody: run.requestBody,
      responseBody: run.responseBody,
      selfLink: links.self,
      altLink: links.alt,
    });
    let fault: unknown;
    const output = this.thread.run(run.body, input, this.limits.timeoutMs, (op, args) => {
      if (args.length > MAX_TEXT) return JSON.stringify({ accepted: true, error: { number: 413, message: "The call's arguments are too large." } });
      try {
        return JSON.stringify(collection.handle(op, JSON.parse(args) as Json[]));
      } catch (error) {
        // The server's own failure: the script is told, and the request fails with it after the run.
        fault ??= error;
        return JSON.stringify({ accepted: true, error: { number: 500, message: "The collection call failed in the server." } });
      }
    });
    if (fault !== undefined) throw fault;
    if (output.length > MAX_TEXT) throw entityTooLarge("The script's response is too large.");
    const outcome = JSON.parse(output) as Output;
    if ("timeout" in outcome) throw requestTimeout("The script did not complete within the allotted time and was stopped; its writes were rolled back.");
    if ("error" in outcome) throw scriptError(outcome.error);
    return { ...outcome.result, operations: collection.operations };
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}
