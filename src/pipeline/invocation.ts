import type { InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { ensureStarted } from "./orchestrations";
import type { PipelinePolicy } from "./policy";
import { recordOrchestration } from "../telemetry";
import type { PipelineServices } from "./services";

/**
 * What one change feed invocation may use, taken from its context alone, so both hosts run the
 * same code: orchestrations start through `df.getClient(context)` (the durable client binding the
 * host supplies) and reports go to the invocation's log.
 */
export function invocationServices(context: InvocationContext, policy?: Partial<PipelinePolicy>, lease?: string): PipelineServices {
  return {
    lease,
    orchestrations: {
      async ensureStarted(name, instanceId, input) {
        const outcome = await ensureStarted(df.getClient(context), name, instanceId, input);
        if (outcome !== "exists") {
          context.log(`orchestration ${instanceId} ${outcome}`);
          recordOrchestration(name, outcome);
        }
        return outcome;
      },
    },
    policy,
    log: (message) => context.warn(message),
  };
}
