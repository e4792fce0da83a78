import type { Account, ContainerState } from "../engine/account";
import { badRequest, CosmosError } from "../wire/errors";
import { isObject, type Json, type JsonObject } from "../wire/json";
import { cost } from "../limits/request-units";
import { ScriptRunner, type ScriptLimits } from "./script-runner";

/** What a write names: which triggers to run and which ETag to require. */
export interface WriteOptions {
  ifMatch?: string;
  preTriggers?: string[];
  postTriggers?: string[];
}

export type WriteKind = "Create" | "Replace" | "Upsert" | "Delete";

/**
 * Server-side scripts in transactions: an item write with its pre- and post-triggers, or a
 * stored procedure, each all or nothing. Shared by REST calls and batches.
 */
export class ScriptedTransactions {
  private readonly scripts: ScriptRunner;

  constructor(
    private readonly account: Account,
    limits: ScriptLimits,
  ) {
    this.scripts = new ScriptRunner(limits);
  }

  /** Ends the scripts' thread. */
  close(): Promise<void> {
    return this.scripts.close();
  }

  /**
   * Runs pre-triggers on the body, the write itself, then post-triggers, all in one
   * transaction: a throw from any of them rolls the whole write back.
   */
  write(
    dbId: string,
    collId: string,
    pk: string,
    kind: WriteKind,
    options: WriteOptions,
    perform: (body: JsonObject | undefined) => { doc: JsonObject; status: number },
    body?: JsonObject,
  ): { doc: JsonObject; status: number } {
    const state = this.account.container(dbId, collId);
    const triggers = (names: string[] | undefined, type: "Pre" | "Post") => (names ?? []).map((name) => this.trigger(state, dbId, collId, name, type, kind));
    const pre = triggers(options.preTriggers, "Pre");
    const post = triggers(options.postTriggers, "Post");
    return state.data.transaction(() => {
      let input = body;
      for (const trigger of pre) {
        const result = this.scripts.run(state.data, pk, this.links(state, dbId, collId), { body: trigger.body as string, requestBody: input });
        if (input !== undefined) {
          if (!isObject(result.requestBody as Json)) throw badRequest("A pre-trigger must leave the request body an object.");
          input = result.requestBody as JsonObject;
        }
      }
      const written = perform(input);
      for (const trigger of post) {
        this.scripts.run(state.data, pk, this.links(state, dbId, collId), { body: trigger.body as string, requestBody: input, responseBody: written.doc });
      }
      return written;
    });
  }

  /** Runs a stored procedure in one transaction; `failAfterWork` rolls its finished work back and is thrown (an injected timeout). */
  executeProcedure(
    dbId: string,
    collId: string,
    sprocId: string,
    pk: string,
    params: Json[],
    logging: boolean,
    failAfterWork?: CosmosError,
  ): { body: Json | undefined; logs: string[]; operations: number } {
    const state = this.account.container(dbId, collId);
    const sproc = this.account.script(dbId, collId, "sprocs", sprocId);
    cost.script();
    const result = state.data.transaction(() => {
      const outcome = this.scripts.run(state.data, pk, this.links(state, dbId, collId), { body: sproc.body as string, params });
      if (failAfterWork) throw failAfterWork;
      return outcome;
    });
    return { body: result.responseBody, logs: logging ? result.logs : [], operations: result.operations };
  }

  private links(state: ContainerState, dbId: string, collId: string) {
    return { self: state.data.resource._self as string, alt: `dbs/${dbId}/colls/${collId}` };
  }

  private trigger(state: ContainerState, dbId: string, collId: string, name: string, type: "Pre" | "Post", kind: WriteKind): JsonObject {
    const trigger = state.scripts.triggers.get(name);
    if (!trigger) throw new CosmosError(404, "NotFound", `Trigger '${name}' does not exist in container '${collId}' of database '${dbId}'.`);
    if (String(trigger.triggerType).toLowerCase() !== type.toLowerCase()) {
      throw badRequest(`Trigger '${name}' is a ${String(trigger.triggerType)}-trigger, not a ${type}-trigger.`);
    }
    const operation = String(trigger.triggerOperation).toLowerCase();
    const applies = operation === "all" || operation === kind.toLowerCase() || (operation === "update" && kind === "Replace");
    if (!applies) throw badRequest(`Trigger '${name}' does not apply to ${kind} operations.`);
    return trigger;
  }
}
