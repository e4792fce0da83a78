import type { InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { ensureStarted } from "./orchestrations";
import { configuredPolicy, type PipelinePolicy } from "./policy";
import { recordOrchestration } from "../telemetry";
import type { PipelineServices } from "./services";

/**
 * What one change feed invocation may use, taken from its context alone, so every host runs the
 * same code: orchestrations start through `df.getClient(context)` (the durable client binding the
 * host supplies) and reports go to the invocation's log.
 */
export function invocationServices(context: InvocationContext, policy: Partial<PipelinePolicy> | undefined = configuredPolicy()): PipelineServices {
  return {
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
